"""The synthetic motion generator: procedural NTU-25 clips of performers with their own bodies and
styles (docs/synthetic.md). `generate_clips` is the entry point."""

from .actions import SYNTHETIC_ACTION_NAMES
from .generator import generate_clips

__all__ = ["SYNTHETIC_ACTION_NAMES", "generate_clips"]
