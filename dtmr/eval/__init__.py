"""Evaluation: geometric metrics (`dtmr.eval.metrics`), plausibility (`dtmr.eval.plausibility`), attacks, the β sweep and reports."""

from .metrics import bone_length_error, foot_sliding, mpjpe, mse, smoothness, summarize, velocity_error
from .plausibility import PlausibilityScore, clip_plausibility, joints_plausibility

__all__ = [
    "PlausibilityScore", "bone_length_error", "clip_plausibility", "foot_sliding", "joints_plausibility", "mpjpe",
    "mse", "smoothness", "summarize", "velocity_error",
]
