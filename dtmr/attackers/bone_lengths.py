"""The bone-length attacker: multinomial logistic regression on a clip's mean bone lengths.

Features: per bone, the mean over frames of its per-frame length (missing frames ignored; a bone never
seen takes the training mean), standardized with the training clips' mean and std. The model is fit by
full-batch L-BFGS on the cross-entropy plus an L2 penalty on the weights (not the biases), so it needs no
learning-rate schedule and a fit is a deterministic function of the clips (the seed is accepted for the
common interface; nothing in the fit is random).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from ..data.clip import Clip
from ..skeleton.geometry import bone_lengths
from .base import class_targets, read_attacker_file, save_attacker


@dataclass
class BoneLengthConfig:
    l2: float = 1e-3  # penalty on the squared weights, per clip
    iterations: int = 300


def mean_bone_lengths(clips: Sequence[Clip]) -> np.ndarray:
    """(N, J-1) mean per-frame bone lengths (NaN where a bone is missing in every frame)."""
    rows = []
    for clip in clips:
        lengths = bone_lengths(clip.joints, clip.topology)  # (T, J-1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN bones: handled by the caller
            rows.append(np.nanmean(lengths, axis=0))
    return np.stack(rows).astype(np.float64)


class BoneLengthAttacker:
    name = "bone-lengths"
    family = "logistic regression on bone lengths"

    def __init__(self, config: BoneLengthConfig | None = None, device: str | torch.device = "cpu"):
        self.config = config or BoneLengthConfig()
        self.classes: list[int] = []
        self.mean = self.std = self.weight = self.bias = None

    def _features(self, clips: Sequence[Clip]) -> torch.Tensor:
        x = mean_bone_lengths(clips)
        x = np.where(np.isfinite(x), x, self.mean.numpy())
        return (torch.from_numpy(x) - self.mean) / self.std

    def fit(self, clips: Sequence[Clip], labels: Sequence[int], seed: int) -> None:
        classes, targets = class_targets(labels, clips)
        x = mean_bone_lengths(clips)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN bones: handled by the caller
            mean = np.nan_to_num(np.nanmean(x, axis=0))
            std = np.nan_to_num(np.nanstd(np.where(np.isfinite(x), x, mean), axis=0))
        self.classes = classes
        self.mean, self.std = torch.from_numpy(mean), torch.from_numpy(np.maximum(std, 1e-6))
        features = self._features(clips)
        weight = torch.zeros(features.shape[1], len(classes), dtype=torch.float64, requires_grad=True)
        bias = torch.zeros(len(classes), dtype=torch.float64, requires_grad=True)
        optimizer = torch.optim.LBFGS([weight, bias], max_iter=self.config.iterations, tolerance_grad=1e-9,
                                      tolerance_change=1e-12, history_size=20, line_search_fn="strong_wolfe")

        def closure():
            optimizer.zero_grad()
            loss = F.cross_entropy(features @ weight + bias, targets) + self.config.l2 * (weight ** 2).sum()
            loss.backward()
            return loss

        optimizer.step(closure)
        self.weight, self.bias = weight.detach(), bias.detach()

    def predict_proba(self, clips: Sequence[Clip]) -> np.ndarray:
        if self.weight is None:
            raise RuntimeError("the attacker is not trained")
        if not clips:
            return np.zeros((0, len(self.classes)), dtype=np.float32)
        return torch.softmax(self._features(clips) @ self.weight + self.bias, dim=-1).numpy().astype(np.float32)

    def save(self, path: str | Path) -> Path:
        state = {"mean": self.mean, "std": self.std, "weight": self.weight, "bias": self.bias}
        return save_attacker(path, self.name, self.classes, {"bone_lengths": asdict(self.config)}, state)

    @classmethod
    def load(cls, path: str | Path, device: str | torch.device = "cpu") -> "BoneLengthAttacker":
        payload = read_attacker_file(path, cls.name)
        attacker = cls(BoneLengthConfig(**payload["config"]["bone_lengths"]))
        attacker.classes = list(payload["classes"])
        state = payload["state"]
        attacker.mean, attacker.std, attacker.weight, attacker.bias = (state[k] for k in ("mean", "std", "weight",
                                                                                           "bias"))
        return attacker
