"""Training: losses (`dtmr.train.losses`, needs torch), stage schedules and progress events.

Only the stdlib/numpy parts are imported here, so that reading progress events (the Studio's trainer tab)
does not import torch; import the losses as `from dtmr.train import losses`.
"""

from .progress import EventStreamParser, EventWriter, EtaEstimator, ProgressBar, ProgressEvent, read_events
from .schedules import StageSpec, TeacherForcingSchedule, dtmr_stages, per_batch_teacher_forcing

__all__ = [
    "EtaEstimator", "EventStreamParser", "EventWriter", "ProgressBar", "ProgressEvent", "StageSpec",
    "TeacherForcingSchedule", "dtmr_stages", "per_batch_teacher_forcing", "read_events",
]
