"""Training the DMR and PMR baselines on their own schedules (SPEC_NOTES §2.5).

PMR runs six stages (paired warm-up, unpaired reconstruction, critics only on paired then unpaired
batches, then adversarial unpaired and paired: 295 epochs); DMR is the same pipeline without critics.
The per-stage work is `dtmr.models.baselines.pmr_training.training_step`; this trainer feeds it batches:
quadruplets from the same view for paired stages, shuffled single clips for unpaired ones. `epochs`
replaces the schedule's epoch counts (one per stage), which a CPU needs: the public schedule takes about
6.5 GPU-hours on NTU60. The baselines train in one process (`torchrun` is for DisentangledTMR).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import torch

from .. import methods
from ..data.label_set import record_label_set
from ..data.quadruplets import QuadrupletSampler
from ..errors import DtmrError
from ..models.baselines.pmr import DMR, PMR
from ..models.baselines.pmr_losses import QuadrupletBatch, UnpairedBatch
from ..models.baselines.pmr_training import build_optimizers, schedule_for, training_step
from ..models.checkpoints.checkpoint import save_checkpoint
from .data import TrainingData
from .distributed import DistributedContext
from .loop import EpochTrainer, epoch_rng
from .presets import BASELINE
from .progress import EventWriter

#: the defaults of `--method dmr|pmr` (why 1e-4: dtmr/train/presets.py)
DEFAULT_LR, DEFAULT_BATCH = BASELINE.lr, BASELINE.batch


class BaselineTrainer(EpochTrainer):
    def __init__(self, method: str, data: TrainingData, out_dir: str | Path, ctx: DistributedContext, *,
                 epochs: tuple[int, ...] | None = None, batch: int = DEFAULT_BATCH, lr: float = DEFAULT_LR,
                 seed: int = 0, quadruplets_per_epoch: int | None = None, events: EventWriter | None = None,
                 resume: bool = False):
        super().__init__(out_dir, ctx, seed, events, resume)
        if ctx.distributed:
            raise DtmrError("DMR and PMR train in one process; run them without torchrun")
        self.method = method
        self.schedule = schedule_for(method)
        if epochs is not None:
            if len(epochs) != len(self.schedule):
                raise DtmrError(f"{method} has {len(self.schedule)} stages; --epochs gave {len(epochs)} numbers")
            for stage, n in zip(self.schedule, epochs):
                stage["epochs"] = int(n)
        torch.manual_seed(seed)
        if method == methods.PMR.name:
            self.model = PMR(data.topology, len(data.subject_labels), len(data.action_labels))
        else:
            self.model = DMR(data.topology)
        self.model.to(ctx.device)
        self.data = data
        self.batch, self.lr = int(batch), float(lr)
        self.x = torch.from_numpy(data.train.joints)
        self.subjects = torch.from_numpy(data.subject_classes(data.train.subjects))
        self.actions = torch.from_numpy(data.action_classes(data.train.actions))
        self.quadruplets = quadruplets_per_epoch or len(data.train)
        self.metadata = data.train.sampler_metadata()
        self.optimizers = build_optimizers(self.model, lr=self.lr, critic_lr=self.lr)

    def run_config(self) -> dict:
        return {"method": self.method, "epochs": [s["epochs"] for s in self.schedule], "batch": self.batch,
                "lr": self.lr, "seed": self.seed, "quadruplets": self.quadruplets, "split": self.data.split,
                "data": Path(self.data.path).name}

    def stage_plan(self) -> list[tuple[int, str, int]]:
        return [(i + 1, s["name"], s["epochs"]) for i, s in enumerate(self.schedule)]

    def steps_per_epoch(self, stage: int) -> int:
        items = self.quadruplets if self.schedule[stage - 1]["paired"] else len(self.data.train)
        return math.ceil(items / self.batch)

    def start_stage(self, stage: int) -> None:
        """The public code keeps one optimizer per network for the whole run."""

    def epoch_steps(self, stage: int, epoch: int) -> Iterator[tuple[dict[str, float], int]]:
        spec = self.schedule[stage - 1]
        rng = epoch_rng(self.seed, stage, epoch)
        device = self.ctx.device
        if spec["paired"]:
            sampler = QuadrupletSampler(self.metadata, seed=int(rng.integers(2**63)))
            quads = torch.from_numpy(sampler.sample(self.steps_per_epoch(stage) * self.batch))
            for q in quads.split(self.batch):
                batch = QuadrupletBatch(self.x[q].to(device), self.subjects[q[:, [0, 3]]].to(device),
                                        self.actions[q[:, [0, 3]]].to(device))
                yield training_step(self.model, self.optimizers, batch, spec), 4 * len(q)
        else:
            order = torch.from_numpy(rng.permutation(len(self.data.train)))
            for idx in order.split(self.batch):
                batch = UnpairedBatch(self.x[idx].to(device), self.subjects[idx].to(device),
                                      self.actions[idx].to(device))
                yield training_step(self.model, self.optimizers, batch, spec), len(idx)

    def trainer_state(self) -> dict:
        return {"model": self.model.state_dict(),
                "optimizers": {k: o.state_dict() for k, o in self.optimizers.items()}}

    def load_trainer_state(self, state: dict, optimizers: bool) -> None:
        self.model.load_state_dict(state["model"])
        for name, opt in self.optimizers.items():  # one set of optimizers for the whole run
            opt.load_state_dict(state["optimizers"][name])

    def save_release(self, metrics: dict) -> Path:
        return save_checkpoint(self.out_dir / "model.pt", self.model, data=record_label_set(self.data.describe()),
                               metrics={**metrics, "history": self.history},
                               extra={"training": self.training_record()})
