"""`lift_keypoints`: COCO-17 2-D keypoints (pixels) of one person -> COCO-17 3-D joints (metres).

The output is a `coco17` 3-D clip in the project's convention: metres, y up, the hip midpoint at the
origin in every frame, x/z the camera's level frame (the performer facing the camera faces -z). It is
mapped to NTU-25 like any 3-D COCO-17 source (`dtmr.skeleton.to_ntu25(out, "coco17")`), so the rule of
which NTU joints are synthesized has one home (dtmr/skeleton/mapping.py), not two.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np
import torch

from ..errors import InputError
from ..resources import resource_path
from .checkpoint import load_lifter
from .keypoints import normalise
from .model import NUM_JOINTS, LifterNet

#: the shipped lifter, relative to the resources folder
DEFAULT_LIFTER = ("models", "lifters", "lifter_coco17.pt")
#: keypoints whose detector score is below this are treated as missing
MIN_SCORE = 0.3
_BATCH = 4096


@lru_cache(maxsize=4)
def _cached(path: str) -> LifterNet:
    return load_lifter(path)


def default_lifter() -> LifterNet:
    """The shipped lifter (loaded once)."""
    return _cached(str(resource_path(*DEFAULT_LIFTER)))


def windows(features: np.ndarray, window: int) -> np.ndarray:
    """(T, W, 17, 3) windows centred on each frame, the first/last frame repeated beyond the ends."""
    half = window // 2
    idx = np.clip(np.arange(len(features))[:, None] + np.arange(-half, half + 1), 0, len(features) - 1)
    return features[idx]


def lift_keypoints(keypoints_2d: np.ndarray, scores: np.ndarray | None = None, *,
                   lifter: LifterNet | str | Path | None = None, min_score: float = MIN_SCORE,
                   source: str | Path | None = None) -> np.ndarray:
    """(T, 17, 3) float32 metres of (T, 17, 2) COCO-17 pixel keypoints of one person.

    A joint is missing where its coordinates are NaN/inf or its score (`scores` (T, 17), optional) is
    below `min_score`; the lifter predicts it from the others (it was trained with joints dropped), so the
    output is finite except in frames with no joint at all, which are NaN. The clip needs one frame that
    shows both hips and one that shows both shoulders and both hips: otherwise an InputError naming
    `source`. `lifter`: a loaded network or a checkpoint path; the shipped one by default.
    """
    xy = np.asarray(keypoints_2d, dtype=np.float64)
    if xy.ndim != 3 or xy.shape[1:] != (NUM_JOINTS, 2):
        raise InputError(source, f"2-D keypoints must be (frames, 17, 2) COCO-17 pixels, got {xy.shape}")
    if len(xy) == 0:
        raise InputError(source, "no frames to lift")
    mask = np.isfinite(xy).all(axis=-1)
    if scores is not None:
        scores = np.asarray(scores, dtype=np.float64)
        if scores.shape != mask.shape:
            raise InputError(source, f"keypoint scores must be {mask.shape}, got {scores.shape}")
        mask &= np.nan_to_num(scores, nan=-np.inf) >= min_score
    features, ok = normalise(np.where(mask[..., None], xy, 0.0), mask)
    if not ok:
        raise InputError(source, "cannot lift to 3-D: no frame shows both hips and both shoulders "
                                 f"(with a score of at least {min_score})")
    net = lifter if isinstance(lifter, LifterNet) else (default_lifter() if lifter is None else _cached(str(lifter)))
    inputs = windows(features, net.config.window)
    with torch.no_grad():
        out = np.concatenate([net(torch.from_numpy(inputs[i:i + _BATCH])).numpy()
                              for i in range(0, len(inputs), _BATCH)])
    out[~mask.any(axis=1)] = np.nan
    return out.astype(np.float32)
