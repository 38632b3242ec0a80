"""Training SGN recognizers (SPEC_NOTES §3): the evaluators of the privacy/utility protocol.

SGN's recipe, scaled to the epochs asked for: Adam (lr 1e-3, weight decay 1e-4), label-smoothing
cross-entropy (ε 0.1), batch 64, the learning rate divided by 10 at 50 %, 75 % and 92 % of the epochs
(upstream: 60/90/110 of 120), one random frame per segment in every batch (the sampling the evaluator uses
at test time, where 5 draws are averaged). Inputs go through the recognizer's own preprocessing
(`dtmr.models.recognizers.preprocessing`), prepared once per clip. The last epoch's weights are kept:
there is no validation split to select on (the test split is for evaluation only). After the last epoch
the BatchNorm statistics are re-estimated on the training clips (a cumulative average over one pass), so a
short run's running statistics do not lag behind its weights.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from ..data.clip import Clip
from ..data.label_set import record_label_set
from ..errors import DtmrError
from ..models.recognizers import Recognizer
from ..models.recognizers.preprocessing import prepare_sequence, sample_segments
from .distributed import DistributedContext
from .loop import EpochTrainer, epoch_rng
from .progress import EventWriter

DEFAULT_EPOCHS = 60
DEFAULT_BATCH = 64
DEFAULT_LR = 1e-3
WEIGHT_DECAY = 1e-4
LABEL_SMOOTHING = 0.1
LR_MILESTONES = (0.5, 0.75, 0.92)


class RecognizerTrainer(EpochTrainer):
    def __init__(self, recognizer: Recognizer, clips: Sequence[Clip], labels: Sequence[int], out_dir: str | Path,
                 ctx: DistributedContext, *, epochs: int = DEFAULT_EPOCHS, batch: int = DEFAULT_BATCH,
                 lr: float = DEFAULT_LR, seed: int = 0, events: EventWriter | None = None, resume: bool = False,
                 data_description: dict | None = None):
        super().__init__(out_dir, ctx, seed, events, resume)
        if len(clips) != len(labels) or not clips:
            raise DtmrError("a recognizer needs one label per clip and at least one clip")
        classes = [recognizer.class_index(label) for label in labels]
        if any(c is None for c in classes):
            missing = sorted({int(lbl) for lbl, c in zip(labels, classes) if c is None})
            raise DtmrError(f"labels {missing} are not classes of the {recognizer.task} recognizer")
        torch.manual_seed(seed)
        self.recognizer = ctx.synchronize_batch_norm(recognizer.to(ctx.device))
        self.prepared = [prepare_sequence(c, recognizer.topology) for c in clips]
        self.targets = torch.tensor(classes, dtype=torch.int64)
        self.epochs, self.batch, self.lr = int(epochs), int(batch), float(lr)
        self.data_description = data_description or {}
        self.optimizer: torch.optim.Optimizer | None = None
        self.scheduler = None
        self.network = None

    def run_config(self) -> dict:
        return {"task": self.recognizer.task, "labels": list(self.recognizer.labels), "clips": len(self.prepared),
                "epochs": self.epochs, "batch": self.batch, "lr": self.lr, "seed": self.seed}

    def stage_plan(self) -> list[tuple[int, str, int]]:
        return [(1, f"SGN {self.recognizer.task}", self.epochs)]

    def steps_per_epoch(self, stage: int) -> int:
        return math.ceil(len(self.prepared) / self.batch)

    def start_stage(self, stage: int) -> None:
        self.optimizer = torch.optim.Adam(self.recognizer.model.parameters(), lr=self.lr, weight_decay=WEIGHT_DECAY)
        milestones = sorted({max(1, round(f * self.epochs)) for f in LR_MILESTONES})
        self.scheduler = torch.optim.lr_scheduler.MultiStepLR(self.optimizer, milestones, gamma=0.1)
        self.network = self.ctx.wrap(self.recognizer.model)

    def epoch_steps(self, stage: int, epoch: int) -> Iterator[tuple[dict[str, float], int]]:
        rng = epoch_rng(self.seed, stage, epoch)
        order = rng.permutation(len(self.prepared))
        share = self.ctx.share(self.batch) if self.ctx.distributed else slice(None)
        self.recognizer.model.train()
        for start in range(0, len(order), self.batch):
            chosen = order[start:start + self.batch]
            if self.ctx.distributed and len(chosen) < self.batch:  # equal shares on every process
                chosen = np.resize(chosen, self.batch)
            x = sample_segments([self.prepared[i] for i in chosen], self.recognizer.seg, rng)[share]
            y = self.targets[chosen][share]
            logits = self.network(x.to(self.ctx.device))
            loss = F.cross_entropy(logits, y.to(self.ctx.device), label_smoothing=LABEL_SMOOTHING)
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            self.optimizer.step()
            accuracy = (logits.argmax(dim=1).cpu() == y).float().mean()
            yield {"loss": float(loss.detach()), "accuracy": float(accuracy)}, len(y)
        self.scheduler.step()
        if epoch + 1 == self.epochs:
            self.recalibrate_batchnorm()

    def trainer_state(self) -> dict:
        return {"model": self.recognizer.state_dict(), "optimizer": self.optimizer.state_dict(),
                "scheduler": self.scheduler.state_dict()}

    def load_trainer_state(self, state: dict, optimizers: bool) -> None:
        self.recognizer.load_state_dict(state["model"])
        if optimizers:
            self.optimizer.load_state_dict(state["optimizer"])
            self.scheduler.load_state_dict(state["scheduler"])

    def recalibrate_batchnorm(self) -> None:
        norms = [m for m in self.recognizer.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
        if not norms:
            return
        momenta = [m.momentum for m in norms]
        rng = np.random.default_rng(self.seed)
        self.recognizer.model.train()
        with torch.no_grad():
            for m in norms:
                m.reset_running_stats()
                m.momentum = None  # cumulative average
            for start in range(0, len(self.prepared), self.batch):
                chunk = self.prepared[start:start + self.batch]
                self.recognizer.model(sample_segments(chunk, self.recognizer.seg, rng).to(self.ctx.device))
        for m, momentum in zip(norms, momenta):
            m.momentum = momentum
        self.recognizer.model.eval()

    def save_release(self, metrics: dict) -> Path:
        final = self.history[-1] if self.history else {}
        return self.recognizer.save(self.out_dir / f"{self.recognizer.task}.pt",
                                    data=record_label_set(self.data_description),
                                    metrics={"train_loss": final.get("loss"), "train_accuracy": final.get("accuracy"),
                                             "epochs": self.epochs})


def train_recognizer(task: str, clips: Sequence[Clip], labels: Sequence[int], class_labels: Sequence[int],
                     class_names: Sequence[str] | None, topology: str, out_dir: str | Path, *,
                     ctx: DistributedContext | None = None, **options) -> Recognizer:
    """Train an SGN `task` recognizer on `clips` (labelled with data-set labels) and return it.

    `class_labels` fixes the classes (and their order); the checkpoint is `out_dir/<task>.pt`.
    """
    recognizer = Recognizer.create(task, [int(c) for c in class_labels], class_names, topology)
    trainer = RecognizerTrainer(recognizer, clips, labels, out_dir, ctx or DistributedContext(), **options)
    trainer.run()
    recognizer.eval()
    return recognizer
