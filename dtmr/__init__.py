"""DTMR Studio's library: privacy-preserving skeleton motion retargeting (DisentangledTMR)."""

__version__ = "0.1.0"

from .data.clip import Clip  # noqa: E402
from .errors import CheckpointError, DtmrError, InputError  # noqa: E402

__all__ = ["CheckpointError", "Clip", "DtmrError", "InputError", "__version__"]
