"""DisentangledTMR (encoders, MixFormer branch, factorized decoder), checkpoints and the Anonymizer.

Baselines live in `dtmr.models.baselines`, recognizers in `dtmr.models.recognizers`.
"""

from .config import DTMRConfig
from .interface import Retargeter, blend_release
from .checkpoint import (
    build_model_from_checkpoint,
    load_checkpoint,
    register_method,
    registered_methods,
    save_checkpoint,
)
from .dtmr import DisentangledTMR
from .anonymizer import Anonymizer

__all__ = [
    "Anonymizer", "DTMRConfig", "DisentangledTMR", "Retargeter", "blend_release", "build_model_from_checkpoint",
    "load_checkpoint", "register_method", "registered_methods", "save_checkpoint",
]
