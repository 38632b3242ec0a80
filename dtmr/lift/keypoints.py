"""Input normalisation of COCO-17 2-D keypoints: pixels and camera do not matter to the lifter.

Each frame is centred on its hip midpoint and divided by a 2-D torso size, so translating or scaling the
pixel coordinates (another image size, crop or focal length) gives the same features. The torso size of a
frame is the RMS distance of the four torso joints (both shoulders, both hips) from their mean; the scale
of frame t is the median of that size over frames t-15..t+15 (one second at 30 fps), which follows a
person walking towards the camera but not a bow, whose shortened torso the lifter must see.

Missing joints (NaN, or a score below the threshold) are masked: their features are 0 and their mask 0.
A frame without both hips takes its centre by linear interpolation in time between the nearest frames
that have them (held at the ends); a frame whose whole scale window lacks the torso takes the clip's
median torso size. A clip with no frame showing both hips, or none showing the whole torso, cannot be
lifted (ValueError).
"""

from __future__ import annotations

import numpy as np

#: COCO-17 indices used by the normalisation
LEFT_SHOULDER, RIGHT_SHOULDER, LEFT_HIP, RIGHT_HIP = 5, 6, 11, 12
TORSO = (LEFT_SHOULDER, RIGHT_SHOULDER, LEFT_HIP, RIGHT_HIP)
#: frames on each side of t whose torso sizes give the scale of frame t
SCALE_HALF_WINDOW = 15
#: normalised coordinates are clipped to this magnitude (a wild detection cannot dominate the input)
FEATURE_LIMIT = 8.0


def _interpolate_missing(values: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """values (..., T, C) with rows where `valid` (..., T) is False replaced by linear interpolation in time
    between the nearest valid rows (the nearest one at the ends). Every series needs one valid row."""
    t = np.arange(valid.shape[-1])
    prev = np.maximum.accumulate(np.where(valid, t, -1), axis=-1)
    nxt = np.flip(np.minimum.accumulate(np.flip(np.where(valid, t, valid.shape[-1]), -1), axis=-1), -1)
    prev_c = np.where(prev < 0, nxt, prev)
    nxt_c = np.where(nxt >= valid.shape[-1], prev_c, nxt)
    span = np.maximum(nxt_c - prev_c, 1)
    w = np.where(nxt_c > prev_c, (t - prev_c) / span, 0.0)[..., None]
    a = np.take_along_axis(values, prev_c[..., None], axis=-2)
    b = np.take_along_axis(values, nxt_c[..., None], axis=-2)
    return (1.0 - w) * a + w * b


def torso_sizes(xy: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """(..., T) RMS distance of the four torso joints from their mean; NaN where one of them is missing."""
    torso = xy[..., TORSO, :]
    size = np.sqrt(np.mean(np.sum((torso - torso.mean(axis=-2, keepdims=True)) ** 2, axis=-1), axis=-1))
    complete = mask[..., TORSO].all(axis=-1) & (size > 0)
    return np.where(complete, size, np.nan)


def _nanmedian(values: np.ndarray) -> np.ndarray:
    """Median over the last axis ignoring NaN (NaN where all are); np.nanmedian is ~10x slower here."""
    ordered = np.sort(values, axis=-1)  # NaN sorts last
    n = np.isfinite(ordered).sum(axis=-1, keepdims=True)
    lo = np.take_along_axis(ordered, np.maximum(n - 1, 0) // 2, axis=-1)
    hi = np.take_along_axis(ordered, n // 2, axis=-1)  # n // 2 <= n - 1: a valid value when n > 0
    return np.where(n > 0, 0.5 * (lo + hi), np.nan)[..., 0]


def running_scale(sizes: np.ndarray, half_window: int = SCALE_HALF_WINDOW) -> np.ndarray:
    """(..., T) median torso size over frames t-half..t+half; the series median where a window has none."""
    padded = np.pad(sizes, [(0, 0)] * (sizes.ndim - 1) + [(half_window, half_window)], constant_values=np.nan)
    windows = np.lib.stride_tricks.sliding_window_view(padded, 2 * half_window + 1, axis=-1)
    local = _nanmedian(windows)
    overall = _nanmedian(sizes)[..., None]
    return np.where(np.isfinite(local), local, overall)


def normalise(xy: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Features (..., T, 17, 3) = (x, y, mask) of centred, scaled keypoints, and whether each series could
    be normalised (..., ) bool: it needs one frame with both hips and one with the whole torso.

    `xy` (..., T, 17, 2) pixels; `mask` (..., T, 17) bool, True where a joint is present. Series that
    cannot be normalised get all-zero features.
    """
    xy = np.where(mask[..., None], xy, 0.0).astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):  # absurd pixels overflow to inf: not ok below
        return _normalise(xy, mask)


def _normalise(xy: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    hips_seen = mask[..., LEFT_HIP] & mask[..., RIGHT_HIP]
    ok = hips_seen.any(axis=-1)
    centre = 0.5 * (xy[..., LEFT_HIP, :] + xy[..., RIGHT_HIP, :])
    centre = _interpolate_missing(centre, np.where(ok[..., None], hips_seen, True))
    scale = running_scale(torso_sizes(xy, mask))
    ok &= np.isfinite(scale).all(axis=-1)
    scale = np.where(np.isfinite(scale) & (scale > 0), scale, 1.0)
    coords = (xy - centre[..., None, :]) / scale[..., None, None]
    coords = np.clip(np.where(mask[..., None], coords, 0.0), -FEATURE_LIMIT, FEATURE_LIMIT)
    features = np.concatenate([coords, mask[..., None].astype(np.float64)], axis=-1)
    features = np.where(ok[..., None, None, None], features, 0.0)
    return features.astype(np.float32), ok
