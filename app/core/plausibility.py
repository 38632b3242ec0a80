"""The plausibility job: score every clip of the open library (`dtmr.eval.plausibility`) off the GUI thread.

The job fills a `PlausibilityColumn` that the controller created and handed to it, `CHUNK` clips at a time,
and reports progress after each stretch of clips; the clip table reads the rows scored so far when the
progress reaches the GUI thread, so the column fills while the job runs. A clip that cannot be scored
(unreadable, or without a single finite joint) gets NaN and a one-line reason instead of stopping the job.

The worker thread only reads the clips; the scoring (NumPy on small arrays: the GIL held between calls)
runs in `score` — in the Studio a `ProcessJob` child, so that it never holds the GUI thread's GIL (issue 42:
in a thread, scoring N-UCLA's 1,484 clips held it 3.8 s and stalled the window up to 0.9 s at a time).

Every clip is scored against its own mean bone lengths (`clip_plausibility(clip, body=None)`): a release
opened with its key knows each clip's source subject, but not that subject's body.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass

import numpy as np

from dtmr.data.clip import Clip
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


#: clips read, sent and scored per round trip to `score` (about 0.1 s of scoring: the cancel latency)
CHUNK = 48


def read_clip(source: ClipSource, index: int) -> Clip | str:
    """Clip `index`, or the one-line reason it cannot be scored."""
    try:
        clip = source.read(index)
    except Exception as exc:  # noqa: BLE001 -- one bad clip gets its reason; the others are still scored
        return _reason(exc)
    if not np.isfinite(clip.joints).any():
        return "no finite joint coordinates in any frame"
    return clip


def score_clip(clip: Clip) -> tuple[float, str]:
    """(score, "") for `clip`, or (NaN, the one-line reason it could not be scored)."""
    from dtmr.eval.plausibility import clip_plausibility

    try:
        with warnings.catch_warnings():  # frames or joints without a value are left out by design
            warnings.simplefilter("ignore", RuntimeWarning)
            return clip_plausibility(clip).score, ""
    except Exception as exc:  # noqa: BLE001 -- one bad clip gets its reason; the others are still scored
        return np.nan, _reason(exc)


def _reason(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


class ChunkScorer:
    """The scoring job, ``(clips, token, progress) -> [(score, reason), ...]``: what `PlausibilityJob` sends
    to its `score` (a `ProcessJob(ChunkScorer, ...)` in the Studio: it is built in the child)."""

    def __call__(self, clips: list[Clip], token: CancelToken, progress: ProgressFn) -> list[tuple[float, str]]:
        return [score_clip(clip) for clip in clips]


class PlausibilityJob:
    """The job: score every clip into `request.column`, checking the token between chunks.

    `score` is a job scoring a list of clips (`ChunkScorer`, in-process, or a `ProcessJob` of it); a
    `close()` of this job closes it (`JobThread.stop` calls it)."""

    def __init__(self, score=None) -> None:
        self.score = score if score is not None else ChunkScorer()

    def __call__(self, request: PlausibilityRequest, token: CancelToken, progress: ProgressFn) -> PlausibilityColumn:
        column = request.column
        total = len(column)
        progress(0, total, "scoring plausibility")
        last = time.monotonic()
        for start in range(0, total, CHUNK):
            token.check()
            rows = range(start, min(start + CHUNK, total))
            read = [read_clip(request.source, i) for i in rows]
            clips = [clip for clip in read if not isinstance(clip, str)]
            scores = iter(self.score(clips, token, _no_progress) if clips else [])
            for i, clip in zip(rows, read):
                column.values[i], column.reasons[i] = (np.nan, clip) if isinstance(clip, str) else next(scores)
            column.scored[rows.start:rows.stop] = True
            if time.monotonic() - last >= REPORT_EVERY:
                progress(rows.stop, total, "scoring plausibility")
                last = time.monotonic()
        progress(total, total, "scoring plausibility")
        return column

    def close(self) -> None:
        close = getattr(self.score, "close", None)
        if close is not None:
            close()


def _no_progress(_done: int, _total: int, _message: str = "") -> None:
    """The scorer's progress is not reported: the column's own is, per chunk."""
