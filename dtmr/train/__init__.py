"""Training: losses (`dtmr.train.losses`, needs torch), presets, stage schedules and progress events.

Only the stdlib/numpy parts are imported here, so that reading progress events and the presets (the Studio's
trainer tab) does not import torch; import the losses as `from dtmr.train import losses`.
"""

from .presets import BASELINE, BETAS, DEFAULT_BETA, DEFAULT_PRESET, DEFAULT_SEED, PRESETS, TrainingPreset
from .progress import EventStreamParser, EventWriter, EtaEstimator, ProgressBar, ProgressEvent, read_events
from .schedules import StageSpec, TeacherForcingSchedule, dtmr_stages, per_batch_teacher_forcing

__all__ = [
    "BASELINE", "BETAS", "DEFAULT_BETA", "DEFAULT_PRESET", "DEFAULT_SEED", "PRESETS", "TrainingPreset",
    "EtaEstimator", "EventStreamParser", "EventWriter", "ProgressBar", "ProgressEvent", "StageSpec",
    "TeacherForcingSchedule", "dtmr_stages", "per_batch_teacher_forcing", "read_events",
]
