"""Timing shapes of the synthetic performances: smooth ramps, keyframe tracks and band-limited noise.

Every function takes the normalized phase `p` of a performance (0 at the start of the movement, 1 at
its end) as a (T,) array and returns per-frame values, so an action is a handful of array operations
whatever its length. `sharpness` is a performer's style: above 1 a movement starts slowly and ends
abruptly, below 1 it starts briskly (the easing is applied to x ** sharpness).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np


def ease(x: np.ndarray, sharpness: float = 1.0) -> np.ndarray:
    """0 -> 1 with zero velocity and acceleration at both ends (quintic smootherstep of x ** sharpness)."""
    x = np.clip(x, 0.0, 1.0) ** sharpness
    return x * x * x * (x * (6.0 * x - 15.0) + 10.0)


def ramp(p: np.ndarray, start: float, end: float, sharpness: float = 1.0) -> np.ndarray:
    """0 before `start`, 1 after `end`, eased in between."""
    return ease((p - start) / (end - start), sharpness)


def pulse(p: np.ndarray, rise: tuple[float, float], fall: tuple[float, float], sharpness: float = 1.0) -> np.ndarray:
    """Rises over the `rise` interval, holds 1, falls back to 0 over the `fall` interval."""
    return ramp(p, *rise, sharpness) * (1.0 - ramp(p, *fall, sharpness))


def keyframes(p: np.ndarray, times, values, sharpness: float = 1.0) -> np.ndarray:
    """Eased interpolation through keys: times (K,) increasing, values (K, ...) -> (T, ...).

    Before the first key the first value holds, after the last the last value holds.
    """
    times = np.asarray(times, dtype=np.float64)
    values = np.asarray(values, dtype=np.float64)
    seg = np.clip(np.searchsorted(times, p, side="right") - 1, 0, len(times) - 2)
    x = (p - times[seg]) / (times[seg + 1] - times[seg])
    w = ease(x, sharpness).reshape((-1,) + (1,) * (values.ndim - 1))
    return values[seg] + w * (values[seg + 1] - values[seg])


@lru_cache(maxsize=16)
def _gaussian_taps(correlation_frames: float) -> np.ndarray:
    """Unit-energy Gaussian FIR taps over +-4 sd (so filtered unit-variance noise keeps unit variance)."""
    half = int(np.ceil(4.0 * correlation_frames))
    taps = np.exp(-0.5 * (np.arange(-half, half + 1) / correlation_frames) ** 2)
    taps /= np.sqrt(np.sum(taps**2))
    taps.flags.writeable = False
    return taps


def smooth_noise(rng: np.random.Generator, frames: int, channels: int, correlation_frames: float) -> np.ndarray:
    """(frames, channels) Gaussian noise of unit variance, low-passed by a Gaussian of `correlation_frames`."""
    taps = _gaussian_taps(float(correlation_frames))
    white = rng.standard_normal((frames + taps.size - 1, channels))
    windows = np.lib.stride_tricks.sliding_window_view(white, taps.size, axis=0)  # (frames, channels, taps)
    return np.einsum("fct,t->fc", windows, taps)
