"""How the audit's learned attackers (the TCN, the ST-GCN) are trained: until a held-out part stops improving;
and `TrainedAttacker`, the attacker around such a network (fit, predict, embed, save, load) that both share.

A fixed short schedule under-trains them: the audit then reports less re-identification than somebody with a
laptop finds (issue 40). So an attacker holds out a seeded part of its training clips, stratified by label,
and trains for up to `epochs` epochs. After each epoch it scores a moving average of its weights on that part
(accuracy; equal accuracies go to the higher mean probability of the true label). When the score has not
improved for `patience` epochs the learning rate decays (`lr_decays` times, by `lr_decay`); when it has not
improved for `patience` epochs at the lowest rate, training stops, and the best epoch's weights are kept.

Why this schedule: on N-UCLA a held-out part is small (~150 clips) and, while the rate is high, its accuracy
jumps by several points from epoch to epoch, so stopping at the first plateau stopped a k-same attacker at
13 % where training on reached 21 %. A plateau therefore first lowers the rate (which is where these networks
gain most), and the hold-out reads the weights' moving average (`ema`), whose curve is smooth. With too few
clips to hold any out (< `min_holdout`), training runs all `epochs` epochs with the decays evenly spaced.

Inputs: every clip is normalized as the project's model input is (DESIGN §2.3: first-frame pelvis at the
origin, first-frame hip line turned onto +x about the vertical), missing joints become 0, and the clip is
resampled to `frames` frames. Training batches are augmented in ways that keep a body's proportions: a random
temporal crop (`min_crop`-100 % of the clip), a random rotation about the vertical (±`yaw_degrees`) and a
random global scale (1 ± `scale`; off by default: body size identifies people, and ±10 % cost the TCN several
points of raw N-UCLA re-identification).

Everything is drawn from the seed (the hold-out, the clip order, the augmentation; torch's generator for
weights and dropout), so the same seed gives the same attacker.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ..data.clip import Clip
from ..skeleton import get_topology
from ..skeleton.normalize import MODEL_FRAMES, canonical_transform
from ..skeleton.topology import Topology
from .base import class_targets, read_attacker_file, save_attacker

EVAL_BATCH = 256


@dataclass
class TrainingConfig:
    epochs: int = 80  # at most: training stops when the held-out part stops improving at the lowest rate
    patience: int = 5  # epochs without a better held-out score before the rate decays, or training stops
    holdout: float = 0.15  # fraction of each label's training clips held out (labels with >= 2 clips)
    min_holdout: int = 20  # fewer held-out clips than this: no hold-out, all `epochs` epochs
    batch: int = 32
    lr: float = 2e-3
    warmup: int = 2  # epochs of linear warmup
    lr_decay: float = 0.2  # the rate's factor at each decay
    lr_decays: int = 2  # decays before training can stop (without a hold-out: evenly spaced over `epochs`)
    weight_decay: float = 0.05
    label_smoothing: float = 0.1
    frames: int = MODEL_FRAMES
    min_crop: float = 0.8  # shortest random crop, as a fraction of the clip
    yaw_degrees: float = 15.0  # random rotation about the vertical, ±
    scale: float = 0.0  # random global scale 1 ± scale
    ema: float = 0.99  # per-step decay of the weights' moving average, which the hold-out reads and is kept


@dataclass
class TrainingRecord:
    """What a training did, for the audit's report."""

    epochs_trained: int  # epochs run, the ones after the best included
    best_epoch: int  # the epoch whose weights were kept (1-based; = epochs_trained without a hold-out)
    holdout_clips: int  # 0: no hold-out
    decayed_after: list[int] = field(default_factory=list)  # epochs after which the learning rate decayed
    holdout_accuracy: list[float] = field(default_factory=list)  # per epoch, %


def prepare(clip: Clip) -> np.ndarray:
    """(T, J, 3) float32: spatially normalized on the first frame (DESIGN §2.3), NaN -> 0."""
    spatial = canonical_transform(clip.joints, clip.topology).apply_spatial(clip.joints)
    return np.nan_to_num(spatial, nan=0.0)


def crop_resample(seq: np.ndarray, frames: int, start: float = 0.0, fraction: float = 1.0) -> np.ndarray:
    """`frames` frames linearly interpolated over the part [start, start + fraction] (fractions of the clip)."""
    last = seq.shape[0] - 1
    pos = (start + np.linspace(0.0, fraction, frames)) * last
    lo = np.minimum(np.floor(pos).astype(np.int64), max(last - 1, 0))
    hi = np.minimum(lo + 1, last)
    w = (pos - lo).astype(np.float32)[:, None, None]
    return (1.0 - w) * seq[lo] + w * seq[hi]


def whole_clips(prepared: Sequence[np.ndarray], frames: int) -> torch.Tensor:
    """(B, frames, J, 3): each prepared clip resampled whole, as the attackers see clips at test time."""
    return torch.from_numpy(np.stack([crop_resample(s, frames) for s in prepared]))


def _yaw(angles: np.ndarray) -> np.ndarray:
    """(B, 3, 3) rotations about +y."""
    c, s = np.cos(angles), np.sin(angles)
    out = np.zeros((len(angles), 3, 3), dtype=np.float32)
    out[:, 0, 0], out[:, 0, 2], out[:, 1, 1], out[:, 2, 0], out[:, 2, 2] = c, s, 1.0, -s, c
    return out


def augmented(prepared: Sequence[np.ndarray], config: TrainingConfig, rng: np.random.Generator) -> torch.Tensor:
    """(B, frames, J, 3): random crops, rotated about the vertical and scaled about the first-frame pelvis."""
    n = len(prepared)
    fraction = rng.uniform(config.min_crop, 1.0, n)
    start = rng.uniform(0.0, 1.0, n) * (1.0 - fraction)
    x = np.stack([crop_resample(s, config.frames, a, f) for s, a, f in zip(prepared, start, fraction)])
    rotation = _yaw(np.deg2rad(rng.uniform(-config.yaw_degrees, config.yaw_degrees, n)))
    rotation *= rng.uniform(1.0 - config.scale, 1.0 + config.scale, n).astype(np.float32)[:, None, None]
    return torch.from_numpy(np.einsum("btjc,bdc->btjd", x, rotation).astype(np.float32))


def holdout_split(targets: np.ndarray, fraction: float, min_holdout: int,
                  rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(indices to fit on, held-out indices), both sorted: round(fraction * n) of each label's n clips, at least
    one and at most n - 1, held out for labels with n >= 2; no hold-out when that makes < `min_holdout` clips."""
    everything = np.arange(len(targets))
    held = []
    for label in np.unique(targets):
        members = np.flatnonzero(targets == label)
        if len(members) >= 2:
            take = min(max(1, round(fraction * len(members))), len(members) - 1)
            held.append(rng.permutation(members)[:take])
    held = np.sort(np.concatenate(held)) if held else np.zeros(0, dtype=np.int64)
    if fraction <= 0 or len(held) < min_holdout:
        return everything, np.zeros(0, dtype=np.int64)
    return np.setdiff1d(everything, held), held


def fixed_decays(config: TrainingConfig) -> list[int]:
    """Without a hold-out: the epochs after which the rate decays, evenly spaced over `epochs`."""
    return [round(config.epochs * (i + 1) / (config.lr_decays + 1)) for i in range(config.lr_decays)]


def evaluate(model: nn.Module, inputs: torch.Tensor, targets: torch.Tensor,
             device: torch.device) -> tuple[float, float]:
    """(top-1 %, mean probability of the true class) of `model` (in eval mode) on (B, frames, J, 3) `inputs`."""
    model.eval()
    correct, true_p = 0, 0.0
    with torch.inference_mode():
        for start in range(0, len(inputs), EVAL_BATCH):
            logits = model(inputs[start:start + EVAL_BATCH].to(device)).float().cpu()
            truth = targets[start:start + EVAL_BATCH]
            correct += int((logits.argmax(dim=-1) == truth).sum())
            true_p += float(torch.softmax(logits, dim=-1).gather(1, truth[:, None]).sum())
    return 100.0 * correct / max(len(inputs), 1), true_p / max(len(inputs), 1)


def _follow(averaged: nn.Module, model: nn.Module, decay: float) -> None:
    """Move `averaged`'s weights towards `model`'s (an exponential moving average; integer buffers copied)."""
    with torch.no_grad():
        for mine, theirs in zip(averaged.state_dict().values(), model.state_dict().values()):
            if mine.is_floating_point():
                mine.lerp_(theirs, 1.0 - decay)
            else:
                mine.copy_(theirs)


def train_classifier(model: nn.Module, prepared: Sequence[np.ndarray], targets: torch.Tensor,
                     config: TrainingConfig, seed: int, device: torch.device) -> TrainingRecord:
    """Train `model` ((B, frames, J, 3) -> (B, C) logits; built by the caller after torch.manual_seed) on the
    prepared clips and their (N,) class indices; leaves it in eval mode with the best held-out epoch's averaged
    weights (better: a higher held-out accuracy, or the same and a higher mean probability of the true label)."""
    fit, held = holdout_split(targets.numpy(), config.holdout, config.min_holdout,
                              np.random.default_rng(np.random.SeedSequence([seed, 0x40D])))
    rng = np.random.default_rng(np.random.SeedSequence([seed, 0x7C1]))
    held_inputs = whole_clips([prepared[i] for i in held], config.frames) if len(held) else None
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    averaged = copy.deepcopy(model)
    steps, updates = math.ceil(len(fit) / config.batch), 0
    record = TrainingRecord(0, 0, len(held))
    best, best_state, waited, rate = (-1.0, -1.0), None, 0, config.lr
    for epoch in range(config.epochs):
        model.train()
        order = fit[rng.permutation(len(fit))]
        for step, start in enumerate(range(0, len(order), config.batch)):
            chosen = order[start:start + config.batch]
            if len(chosen) < 2:  # BatchNorm needs two samples; the clip is seen in the next epoch
                continue
            for group in optimizer.param_groups:  # linear warmup, then `rate`
                group["lr"] = rate * min(1.0, (epoch + (step + 1) / steps) / max(config.warmup, 1e-9))
            x = augmented([prepared[i] for i in chosen], config, rng).to(device)
            loss = F.cross_entropy(model(x), targets[chosen].to(device), label_smoothing=config.label_smoothing)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            updates += 1  # the average's decay grows from 0.1 to `ema`, so the first steps do not weigh the init
            _follow(averaged, model, min(config.ema, (1 + updates) / (10 + updates)))
        record.epochs_trained = epoch + 1
        if held_inputs is None:
            plateau = epoch + 1 in fixed_decays(config)
        else:
            score = evaluate(averaged, held_inputs, targets[held], device)
            record.holdout_accuracy.append(round(score[0], 2))
            if score > best:
                best, record.best_epoch, waited = score, epoch + 1, 0
                best_state = {k: v.clone() for k, v in averaged.state_dict().items()}
            else:
                waited += 1
            plateau = waited >= config.patience
        if not plateau:
            continue
        if len(record.decayed_after) == config.lr_decays:
            break  # no better epoch for `patience` epochs at the lowest rate
        rate *= config.lr_decay
        record.decayed_after.append(epoch + 1)
        waited = 0
    model.load_state_dict(best_state if best_state is not None else averaged.state_dict())
    record.best_epoch = record.best_epoch or record.epochs_trained
    model.eval()
    return record


class TrainedAttacker:
    """An attacker around a network ((B, frames, J, 3) -> (B, C) logits, with `features` -> (B, D)) trained by
    `train_classifier`. Subclasses name it and build the network; the file's config is
    {name: asdict(config), "topology", "training": asdict(record)}."""

    name: str
    family: str
    config_class: type[TrainingConfig]

    def __init__(self, config: TrainingConfig | None = None, device: str | torch.device = "cpu"):
        self.config = config or self.config_class()
        self.device = torch.device(device)
        self.classes: list[int] = []
        self.topology: str | None = None
        self.model: nn.Module | None = None
        self.record: TrainingRecord | None = None

    def build_network(self, topology: Topology, num_classes: int) -> nn.Module:
        raise NotImplementedError

    @property
    def epochs_trained(self) -> int | None:
        """Epochs the last training ran (None before one, or for a file saved without its record)."""
        return self.record.epochs_trained if self.record is not None else None

    def _build(self, topology: str, classes: Sequence[int]) -> None:
        self.topology = get_topology(topology).name
        self.classes = [int(c) for c in classes]
        self.model = self.build_network(get_topology(topology), len(self.classes)).to(self.device)

    def fit(self, clips: Sequence[Clip], labels: Sequence[int], seed: int) -> None:
        classes, targets = class_targets(labels, clips)
        torch.manual_seed(seed)
        self._build(clips[0].topology, classes)
        self.record = train_classifier(self.model, [prepare(c) for c in clips], targets, self.config, seed,
                                       self.device)

    def _run(self, clips: Sequence[Clip], head: bool) -> np.ndarray:
        if self.model is None:
            raise RuntimeError("the attacker is not trained")
        self.model.eval()
        outs = []
        with torch.inference_mode():
            for start in range(0, len(clips), EVAL_BATCH):
                x = whole_clips([prepare(c) for c in clips[start:start + EVAL_BATCH]], self.config.frames)
                x = x.to(self.device)
                outs.append((self.model(x) if head else self.model.features(x)).float().cpu())
        return torch.cat(outs).numpy() if outs else np.zeros((0, len(self.classes)), dtype=np.float32)

    def predict_proba(self, clips: Sequence[Clip]) -> np.ndarray:
        """(N, C) softmax probabilities, columns = `classes`."""
        logits = self._run(clips, head=True)
        return torch.softmax(torch.from_numpy(logits), dim=-1).numpy()

    def embed(self, clips: Sequence[Clip]) -> np.ndarray:
        """(N, D) pooled features (the classifier's input), for the linkage attack."""
        return self._run(clips, head=False)

    def save(self, path: str | Path) -> Path:
        record = asdict(self.record) if self.record is not None else None
        return save_attacker(path, self.name, self.classes,
                             {self.name: asdict(self.config), "topology": self.topology, "training": record},
                             self.model.state_dict())

    @classmethod
    def load(cls, path: str | Path, device: str | torch.device = "cpu") -> "TrainedAttacker":
        payload = read_attacker_file(path, cls.name)
        config = payload["config"]
        attacker = cls(cls.config_class(**config[cls.name]), device)
        attacker._build(config["topology"], payload["classes"])
        attacker.model.load_state_dict(payload["state"])
        attacker.model.eval()
        if config.get("training") is not None:
            attacker.record = TrainingRecord(**config["training"])
        return attacker

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.model.parameters()) if self.model is not None else 0
