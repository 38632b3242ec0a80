"""Clips, data sets, splits, the quadruplet sampler and the synthetic motion generator."""

from .clip import Clip

__all__ = ["Clip"]
