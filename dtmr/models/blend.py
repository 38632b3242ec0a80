"""The release blend, torch-free: what a released clip is made of, so that it can be blended again at another β.

A released clip is `blend_release(full, residual, β)`: β·D + (1 − β)·residual, where D is the model's full
retarget mapped back to the source's space and the residual the source (or, for some methods, the source on
the reference's bones, or a residual the model computes; see `dtmr.models.anonymizer`). `ReleaseParts` keeps
both terms of one clip, so the Studio's β slider re-blends the released view without running the model again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

import numpy as np

ArrayOrTensor = TypeVar("ArrayOrTensor")


def blend_release(full: ArrayOrTensor, src: ArrayOrTensor, beta: float) -> ArrayOrTensor:
    """Partial retargeting: β·full + (1 − β)·src (tensors or arrays). β = 0 returns `src` exactly."""
    return full * beta + src * (1.0 - beta)


@dataclass(frozen=True)
class ReleaseParts:
    """The two terms of one released clip, (T, J, 3) each in the source's space and length, and the β the
    checkpoint releases with."""

    full: np.ndarray
    residual: np.ndarray
    beta: float

    def joints(self, beta: float | None = None) -> np.ndarray:
        """The released joints at `beta` (the checkpoint's β when None), float32 like the Anonymizer's."""
        if beta is not None and not 0.0 <= beta <= 1.0:
            raise ValueError(f"β must lie in [0, 1], got {beta}")
        return blend_release(self.full, self.residual, self.beta if beta is None else float(beta)).astype(np.float32)
