"""DTMR Studio's library: privacy-preserving skeleton motion retargeting (DisentangledTMR)."""

__version__ = "0.1.0"

from .data.clip import Clip  # noqa: E402
from .errors import CheckpointError, DtmrError, InputError  # noqa: E402

__all__ = ["Anonymizer", "CheckpointError", "Clip", "DtmrError", "InputError", "__version__"]


def __getattr__(name: str):
    # `dtmr.Anonymizer` imports torch, so it is loaded on first use only.
    if name == "Anonymizer":
        from .models.anonymizer import Anonymizer

        return Anonymizer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
