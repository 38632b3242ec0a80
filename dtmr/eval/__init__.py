"""Evaluation: geometric metrics (`dtmr.eval.metrics`), attacks, the β sweep and reports."""

from .metrics import bone_length_error, foot_sliding, mpjpe, mse, smoothness, summarize, velocity_error

__all__ = ["bone_length_error", "foot_sliding", "mpjpe", "mse", "smoothness", "summarize", "velocity_error"]
