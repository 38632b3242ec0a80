"""The temporal-convolution attacker: a ~0.47M-parameter 1-D CNN on positions + velocities of 64-frame
normalized clips (DESIGN §5 calibrates one at 55-63 % raw N-UCLA re-ID, against SGN's 44.7 %).

Input: each clip is normalized as the project's model input is (DESIGN §2.3: first-frame pelvis at the
origin, first-frame hip line turned onto +x about the vertical), missing joints become 0, and the clip is
resampled to 64 frames. Training sees light augmentation that leaves a body's proportions alone: a random
temporal crop (80-100 % of the clip, resampled to 64 frames) and a random rotation about the vertical axis
(±15°). Small data sets (N-UCLA: ~1000 training clips) overfit a network this size in a few epochs, so it
trains with dropout, AdamW weight decay, label smoothing and a one-cycle learning rate.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ...data.clip import Clip
from ...skeleton import get_topology
from ...skeleton.normalize import MODEL_FRAMES, canonical_transform
from .base import class_targets, read_attacker_file, save_attacker

INFERENCE_BATCH = 256


@dataclass
class TCNConfig:
    width: int = 128
    dropout: float = 0.1
    head_dropout: float = 0.3
    frames: int = MODEL_FRAMES
    epochs: int = 30
    batch: int = 32
    lr: float = 2e-3
    weight_decay: float = 0.05
    label_smoothing: float = 0.1
    min_crop: float = 0.8  # shortest random crop, as a fraction of the clip
    yaw_degrees: float = 15.0  # random rotation about the vertical, ±


class TemporalConvNet(nn.Module):
    """(B, T, J, 3) -> positions and frame differences (B, 6J, T) -> BN -> four conv blocks (two with
    stride 2; width, width, 2 width, 2 width channels) -> mean and max over time (B, 4 width) -> (B, C)."""

    def __init__(self, num_joints: int, num_classes: int, config: TCNConfig):
        super().__init__()
        w, c_in = config.width, 6 * num_joints

        def block(a: int, b: int, k: int, stride: int) -> list[nn.Module]:
            return [nn.Conv1d(a, b, k, stride=stride, padding=k // 2, bias=False), nn.BatchNorm1d(b), nn.GELU(),
                    nn.Dropout(config.dropout)]

        self.input_norm = nn.BatchNorm1d(c_in)
        self.net = nn.Sequential(*block(c_in, w, 5, 1), *block(w, w, 5, 2), *block(w, 2 * w, 3, 2),
                                 *block(2 * w, 2 * w, 3, 1))
        self.head_dropout = nn.Dropout(config.head_dropout)
        self.fc = nn.Linear(4 * w, num_classes)

    def features(self, joints: torch.Tensor) -> torch.Tensor:
        b, t = joints.shape[:2]
        pos = joints.reshape(b, t, -1)  # (B, T, 3J)
        vel = torch.diff(pos, dim=1, prepend=pos[:, :1])
        h = self.net(self.input_norm(torch.cat([pos, vel], dim=-1).transpose(1, 2)))  # (B, 2w, T/4)
        return torch.cat([h.mean(dim=-1), h.amax(dim=-1)], dim=-1)  # (B, 4w)

    def forward(self, joints: torch.Tensor) -> torch.Tensor:
        return self.fc(self.head_dropout(self.features(joints)))


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


def _yaw(angles: np.ndarray) -> np.ndarray:
    """(B, 3, 3) rotations about +y."""
    c, s = np.cos(angles), np.sin(angles)
    out = np.zeros((len(angles), 3, 3), dtype=np.float32)
    out[:, 0, 0], out[:, 0, 2], out[:, 1, 1], out[:, 2, 0], out[:, 2, 2] = c, s, 1.0, -s, c
    return out


class TCNAttacker:
    name = "tcn"
    family = "temporal conv (positions + velocities)"

    def __init__(self, config: TCNConfig | None = None, device: str | torch.device = "cpu"):
        self.config = config or TCNConfig()
        self.device = torch.device(device)
        self.classes: list[int] = []
        self.topology: str | None = None
        self.model: TemporalConvNet | None = None

    def _build(self, topology: str, classes: Sequence[int]) -> None:
        self.topology = get_topology(topology).name
        self.classes = [int(c) for c in classes]
        self.model = TemporalConvNet(get_topology(topology).num_joints, len(self.classes), self.config)
        self.model.to(self.device)

    def _batch(self, prepared: Sequence[np.ndarray], rng: np.random.Generator | None) -> torch.Tensor:
        """(B, frames, J, 3): whole clips, or with `rng` random crops rotated about the vertical."""
        frames = self.config.frames
        if rng is None:
            return torch.from_numpy(np.stack([crop_resample(s, frames) for s in prepared]))
        fraction = rng.uniform(self.config.min_crop, 1.0, len(prepared))
        start = rng.uniform(0.0, 1.0, len(prepared)) * (1.0 - fraction)
        x = np.stack([crop_resample(s, frames, a, f) for s, a, f in zip(prepared, start, fraction)])
        rotation = _yaw(np.deg2rad(rng.uniform(-self.config.yaw_degrees, self.config.yaw_degrees, len(prepared))))
        return torch.from_numpy(np.einsum("btjc,bdc->btjd", x, rotation).astype(np.float32))

    def fit(self, clips: Sequence[Clip], labels: Sequence[int], seed: int) -> None:
        classes, targets = class_targets(labels, clips)
        torch.manual_seed(seed)
        self._build(clips[0].topology, classes)
        rng = np.random.default_rng(np.random.SeedSequence([seed, 0x7C1]))
        prepared = [prepare(c) for c in clips]
        cfg = self.config
        steps = math.ceil(len(prepared) / cfg.batch)
        optimizer = torch.optim.AdamW(self.model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
        schedule = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=cfg.lr, total_steps=cfg.epochs * steps,
                                                       pct_start=0.2)
        self.model.train()
        for _ in range(cfg.epochs):
            order = rng.permutation(len(prepared))
            for start in range(0, len(order), cfg.batch):
                chosen = order[start:start + cfg.batch]
                if len(chosen) < 2:  # BatchNorm needs two samples; the clip is seen in the next epoch
                    continue
                x = self._batch([prepared[i] for i in chosen], rng).to(self.device)
                loss = F.cross_entropy(self.model(x), targets[chosen].to(self.device),
                                       label_smoothing=cfg.label_smoothing)
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                optimizer.step()
                schedule.step()
        self.model.eval()

    def _run(self, clips: Sequence[Clip], head: bool) -> np.ndarray:
        if self.model is None:
            raise RuntimeError("the attacker is not trained")
        self.model.eval()
        outs = []
        with torch.inference_mode():
            for start in range(0, len(clips), INFERENCE_BATCH):
                x = self._batch([prepare(c) for c in clips[start:start + INFERENCE_BATCH]], None).to(self.device)
                out = self.model(x) if head else self.model.features(x)
                outs.append(out.float().cpu())
        return torch.cat(outs).numpy() if outs else np.zeros((0, len(self.classes)), dtype=np.float32)

    def predict_proba(self, clips: Sequence[Clip]) -> np.ndarray:
        """(N, C) softmax probabilities, columns = `classes`."""
        logits = self._run(clips, head=True)
        return torch.softmax(torch.from_numpy(logits), dim=-1).numpy()

    def embed(self, clips: Sequence[Clip]) -> np.ndarray:
        """(N, 4 width) pooled features (the classifier's input), for the linkage attack."""
        return self._run(clips, head=False)

    def save(self, path: str | Path) -> Path:
        return save_attacker(path, self.name, self.classes, {"tcn": asdict(self.config), "topology": self.topology},
                             self.model.state_dict())

    @classmethod
    def load(cls, path: str | Path, device: str | torch.device = "cpu") -> "TCNAttacker":
        payload = read_attacker_file(path, cls.name)
        attacker = cls(TCNConfig(**payload["config"]["tcn"]), device)
        attacker._build(payload["config"]["topology"], payload["classes"])
        attacker.model.load_state_dict(payload["state"])
        attacker.model.eval()
        return attacker

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.model.parameters()) if self.model is not None else 0
