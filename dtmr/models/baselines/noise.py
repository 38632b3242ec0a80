"""Gaussian joint noise: the simplest anonymization baseline (DESIGN §5).

Every coordinate of every joint gets independent N(0, sigma^2) noise, sigma in metres (default 5 cm).
The library's normalization is rigid (a translation and a rotation, no scaling), so sigma means the
same in a clip's own space and in the normalized model space. The reference is ignored. Missing
(NaN) joints stay missing.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from ...data.clip import Clip
from ...data.provenance import Provenance
from ...methods import NOISE
from ...skeleton import Topology, get_topology
from .retarget_inputs import check_retarget_inputs

DEFAULT_SIGMA = 0.05


def add_joint_noise(joints: np.ndarray, sigma: float = DEFAULT_SIGMA,
                    rng: np.random.Generator | int | None = 0) -> np.ndarray:
    """`joints` plus N(0, sigma^2) noise per coordinate; `rng` a Generator or a seed."""
    if sigma < 0:
        raise ValueError(f"noise sigma must be >= 0, got {sigma}")
    joints = np.asarray(joints, dtype=np.float32)
    rng = np.random.default_rng(rng)
    return (joints + sigma * rng.standard_normal(joints.shape)).astype(np.float32)


def noisy_clip(clip: Clip, sigma: float = DEFAULT_SIGMA, seed: int = 0) -> Clip:
    """A copy of `clip` with joint noise, provenance in `extra`."""
    made = Provenance(method=NOISE.name, beta=1.0, sigma=sigma, source_clip=clip.name)
    return made.stamp(clip, joints=add_joint_noise(clip.joints, sigma, seed))


class GaussianNoise(nn.Module):
    """Joint noise as a retargeter (docs/ARCHITECTURE.md); `retarget` ignores `ref`.

    The noise comes from a generator seeded at construction (and by `reseed`), so a run of calls is
    reproducible while successive batches still get independent noise.
    """

    method = NOISE.name

    def __init__(self, topology: str | Topology, sigma: float = DEFAULT_SIGMA, seed: int = 0):
        super().__init__()
        if sigma < 0:
            raise ValueError(f"noise sigma must be >= 0, got {sigma}")
        self.topology = get_topology(topology)
        self.beta = 1.0
        self.sigma = float(sigma)
        self.seed = int(seed)
        self.generator = torch.Generator().manual_seed(self.seed)

    def config_dict(self) -> dict:
        return {"sigma": self.sigma, "seed": self.seed}

    def reseed(self, seed: int) -> None:
        self.seed = int(seed)
        self.generator.manual_seed(self.seed)

    def forward(self, src: torch.Tensor, ref: torch.Tensor | None = None) -> torch.Tensor:
        noise = torch.randn(src.shape, generator=self.generator, dtype=src.dtype)
        return src + self.sigma * noise.to(src.device)

    def retarget(self, src: torch.Tensor, ref: torch.Tensor) -> torch.Tensor:
        """(B, 64, J, 3) -> the same with joint noise."""
        check_retarget_inputs(src, ref, self.topology)
        return self(src, ref)
