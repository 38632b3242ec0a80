"""DisentangledTMR (encoders, MixFormer branch, factorized decoder), checkpoints and the Anonymizer.

Baselines live in `dtmr.models.baselines`, recognizers in `dtmr.models.recognizers`. The names below load
on first use (PEP 562), so that importing a torch-free submodule (`config`, `checkpoint_header`, `pairing`)
does not import torch.
"""

from importlib import import_module

#: public name -> the submodule that defines it
_EXPORTS = {
    "DTMRConfig": "config",
    "Retargeter": "interface", "blend_release": "interface",
    "CheckpointHeader": "checkpoint_header", "read_checkpoint_header": "checkpoint_header",
    "build_model_from_checkpoint": "checkpoint", "load_checkpoint": "checkpoint", "register_method": "checkpoint",
    "registered_methods": "checkpoint", "save_checkpoint": "checkpoint",
    "DisentangledTMR": "dtmr",
    "Anonymizer": "anonymizer",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{_EXPORTS[name]}", __name__), name)
    globals()[name] = value
    return value
