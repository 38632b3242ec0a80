"""The plausibility job: score every clip of the open library (`dtmr.eval.plausibility`) off the GUI thread.

The job fills a `PlausibilityColumn` that the controller created and handed to it, one clip at a time,
and reports progress after each stretch of clips; the clip table reads the rows scored so far when the
progress reaches the GUI thread, so the column fills while the job runs. A clip that cannot be scored
(unreadable, or without a single finite joint) gets NaN and a one-line reason instead of stopping the job.

Every clip is scored against its own mean bone lengths (`clip_plausibility(clip, body=None)`): a release
opened with its key knows each clip's source subject, but not that subject's body.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass

import numpy as np

from dtmr.io.clip_source import ClipSource

from .cancel import CancelToken, ProgressFn

#: seconds between progress reports (each makes the table update and, when sorted by the column, re-sort)
REPORT_EVERY = 0.2


class PlausibilityColumn:
    """Each clip's score (NaN until scored, or when it failed), whether it was scored, and why it failed."""

    def __init__(self, size: int) -> None:
        self.values = np.full(size, np.nan)
        self.scored = np.zeros(size, dtype=bool)
        self.reasons = [""] * size

    def __len__(self) -> int:
        return len(self.values)


@dataclass(frozen=True)
class PlausibilityRequest:
    source: ClipSource
    column: PlausibilityColumn


def score_clip(source: ClipSource, index: int) -> tuple[float, str]:
    """(score, "") for clip `index`, or (NaN, the one-line reason it could not be scored)."""
    from dtmr.eval.plausibility import clip_plausibility

    try:
        clip = source.read(index)
        if not np.isfinite(clip.joints).any():
            return np.nan, "no finite joint coordinates in any frame"
        with warnings.catch_warnings():  # frames or joints without a value are left out by design
            warnings.simplefilter("ignore", RuntimeWarning)
            return clip_plausibility(clip).score, ""
    except Exception as exc:  # noqa: BLE001 -- one bad clip gets its reason; the others are still scored
        text = str(exc).strip().splitlines()
        return np.nan, f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def score_library(request: PlausibilityRequest, token: CancelToken, progress: ProgressFn) -> PlausibilityColumn:
    """The job: score every clip into `request.column`, checking `token` between clips."""
    column = request.column
    total = len(column)
    progress(0, total, "scoring plausibility")
    last = time.monotonic()
    for i in range(total):
        token.check()
        column.values[i], column.reasons[i] = score_clip(request.source, i)
        column.scored[i] = True
        if time.monotonic() - last >= REPORT_EVERY:
            progress(i + 1, total, "scoring plausibility")
            last = time.monotonic()
    progress(total, total, "scoring plausibility")
    return column
