"""Anonymizers of how a person moves (issue 19; docs/motion_anonymizers.md): re-timing onto an action's canonical
tempo ("retime", "retime-naive") and k-same motion ("ksame"), both fitted on a training split by
`dtmr fit-motion-model`, plus the dynamic time warping they share (`dtw`)."""

from . import checkpoints as _checkpoints  # noqa: F401  (registers the checkpoint builders)
from .fit import MOTION_METHODS, describe_motion_model, fit_motion_model
from .ksame import KSAME_KS, TIMINGS, KSameMotion, nearest_embedding_accuracy
from .retime import RETIME_METHODS, Retimer
from .templates import TemplateBank, nearest_template_accuracy

__all__ = [
    "KSAME_KS", "MOTION_METHODS", "RETIME_METHODS", "TIMINGS", "KSameMotion", "Retimer", "TemplateBank",
    "describe_motion_model", "fit_motion_model", "nearest_embedding_accuracy", "nearest_template_accuracy",
]
