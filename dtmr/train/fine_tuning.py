"""What a fine-tuning run (`dtmr train --init CHECKPOINT`) takes from its checkpoint, read from the header alone.

`dtmr.train.init_weights` copies the weights and refuses a network of another shape; this module says, without
torch, which settings make the shapes match: the checkpoint's method, and for DisentangledTMR its preset and the
model options (`DTMRConfig` fields) in which its config differs from that preset's. Everything else (β, data,
split, epochs, learning rate, output folder) is the new run's own. The Studio's Trainer tab fills its form with
these when the user picks a model to start from.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import DtmrError
from ..methods import DTMR, display_name, is_method
from ..models.checkpoints.header import CheckpointHeader
from .presets import TRAINABLE_METHODS

#: config fields that are not model options (the preset and the topology come from --preset and the data)
NOT_OPTIONS = ("topology", "preset_name")


@dataclass(frozen=True)
class FineTuning:
    """The settings a run started from `path` must have."""

    path: Path
    method: str
    #: DisentangledTMR's preset (None for DMR / PMR, which have none)
    preset: str | None
    #: the checkpoint's β: a default for the new run, not a requirement
    beta: float | None
    #: `--model-option KEY=VALUE` pairs: the config's fields that differ from the preset's
    model_options: tuple[tuple[str, object], ...] = ()


def fine_tuning(header: CheckpointHeader) -> FineTuning:
    """The settings of a run that starts from `header`'s checkpoint; DtmrError naming the file when it holds no
    trained network (a fitted motion model, a recognizer) or a DisentangledTMR config without a preset."""
    from ..models.config import DTMRConfig

    method = header.method.lower()
    if method not in TRAINABLE_METHODS:
        name = display_name(method) if is_method(method) else header.method
        raise DtmrError(f"{header.path}: a {name} model is not trained by `dtmr train`, so no run can start from it "
                        f"(trained: {', '.join(display_name(m) for m in TRAINABLE_METHODS)})")
    if method != DTMR.name:
        return FineTuning(header.path, method, None, header.beta)
    config = dict(header.config)
    preset = config.get("preset_name")
    try:
        defaults = DTMRConfig.preset(str(preset), header.topology).to_dict()
    except (TypeError, ValueError, KeyError) as exc:
        raise DtmrError(f"{header.path}: its config names no preset a run can use ({exc})") from None
    options = tuple(sorted((k, v) for k, v in config.items() if k not in NOT_OPTIONS and defaults.get(k) != v))
    return FineTuning(header.path, method, str(preset), header.beta, options)
