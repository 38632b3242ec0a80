"""The models, in three places:

- the paper's DisentangledTMR, one module per component, here: `config`, `features`, `action_encoder` (with
  `mixformer`), `identity_encoder`, `decoder` (with `kinematic_head`), `dtmr`; the baselines in `baselines/`,
  the motion anonymizers in `motion/`, the recognizers in `recognizers/`; `anonymizer` runs any of them on clips;
- inference serving in `serving/`: `prepare_for_inference` (the CPU speed paths, same function), the batch
  runner and the CUDA graph;
- checkpoints in `checkpoints/`: the file format, its header read without weights, the method builders.

The names below load on first use (PEP 562), so that importing a torch-free submodule (`config`,
`checkpoints.header`, `pairing`) does not import torch.
"""

from importlib import import_module

#: public name -> the submodule that defines it
_EXPORTS = {
    "DTMRConfig": "config",
    "Retargeter": "interface", "blend_release": "blend", "ReleaseParts": "blend",
    "CheckpointHeader": "checkpoints.header", "read_checkpoint_header": "checkpoints.header",
    "build_model_from_checkpoint": "checkpoints.checkpoint", "load_checkpoint": "checkpoints.checkpoint",
    "register_method": "checkpoints.checkpoint", "registered_methods": "checkpoints.checkpoint",
    "save_checkpoint": "checkpoints.checkpoint",
    "prepare_for_inference": "serving.prepare",
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
