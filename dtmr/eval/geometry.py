"""The geometric metrics of the protocol (DESIGN §5), per anonymized clip.

MSE, MPJPE and velocity error compare the output with its paired target (the reference's subject
performing the source's action in the source's view) where the data set has one, else with the source;
both sides are compared in the model's normalized space (64 frames, first-frame pelvis at the origin,
canonical heading), because different clips are filmed from different places. Bone-length error is
against the reference's mean-pose bone lengths; smoothness (mean acceleration magnitude, m/frame²) and
foot sliding (m/s on contact frames) are of the output in its own space and frame rate.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..data.clip import Clip
from ..skeleton import normalize
from . import metrics

GEOMETRY_KEYS = ("mse", "mpjpe", "velocity_error", "bone_error", "smoothness", "foot_sliding", "paired_fraction")


def _normalized(clips: Sequence[Clip]) -> np.ndarray:
    return np.stack([normalize(c.joints, c.topology)[0] for c in clips])


def geometry_metrics(outputs: Sequence[Clip], sources: Sequence[Clip], references: Sequence[Clip],
                     targets: Sequence[Clip | None]) -> dict[str, float]:
    """Means over the clips (NaN-free metrics ignore missing joints)."""
    compare = [t if t is not None else s for t, s in zip(targets, sources)]
    out_n, cmp_n = _normalized(outputs), _normalized(compare)
    topology = outputs[0].topology
    return {
        "mse": float(np.nanmean(metrics.mse(out_n, cmp_n))),
        "mpjpe": float(np.nanmean(metrics.mpjpe(out_n, cmp_n))),
        "velocity_error": float(np.nanmean(metrics.velocity_error(out_n, cmp_n))),
        "bone_error": float(np.nanmean(metrics.bone_length_error([c.joints for c in outputs],
                                                                 [r.joints for r in references], topology))),
        "smoothness": float(np.nanmean(metrics.smoothness([c.joints for c in outputs]))),
        "foot_sliding": float(np.nanmean(metrics.foot_sliding([c.joints for c in outputs], topology,
                                                              [c.fps for c in outputs]))),
        "paired_fraction": float(np.mean([t is not None for t in targets])),
    }
