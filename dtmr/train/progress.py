"""Training progress as JSON lines: one `ProgressEvent` per line, flushed as it happens.

The trainer writes events with `EventWriter` (to stdout, to a log file, or both); the CLI turns them into
one updating terminal line with `ProgressBar` (drawn by `dtmr.terminal`, like every `dtmr` progress line); the Studio's trainer tab reads the same lines from the
training subprocess' stdout with `EventStreamParser`. Stdlib only, so the Studio can parse events without
importing torch.

Field conventions: `stage` is 1..3, `epoch` is 1-based (the epoch in progress) out of `epochs`, `step` is
the number of steps done in that epoch out of `steps`; `time` is wall-clock seconds since the Unix epoch.
A loss that is not finite (a diverged run) is written as JSON ``null`` (strict JSON has no NaN) and read
back as NaN. Lines that are not event objects (a library printing to stdout, a line cut short by a crash
or still being written) are skipped by the readers.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TextIO

from ..terminal import TerminalLine, bar

EVENT_KINDS = ("start", "step", "epoch", "stage", "checkpoint", "done", "error")
_INT_FIELDS = ("stage", "epoch", "epochs", "step", "steps")
_FLOAT_FIELDS = ("samples_per_s", "eta_s")


@dataclass
class ProgressEvent:
    kind: str
    stage: int | None = None
    epoch: int | None = None
    epochs: int | None = None
    step: int | None = None
    steps: int | None = None
    losses: dict[str, float] = field(default_factory=dict)
    samples_per_s: float | None = None
    eta_s: float | None = None
    message: str = ""
    time: float = field(default_factory=time.time)

    def __post_init__(self) -> None:
        if self.kind not in EVENT_KINDS:
            raise ValueError(f"unknown progress event kind {self.kind!r} (known: {', '.join(EVENT_KINDS)})")

    def to_json(self) -> str:
        """One line of strict JSON (no newline inside); non-finite numbers become null."""
        record = {k: _finite_or_none(v) for k, v in asdict(self).items()}
        record["losses"] = {str(k): _finite_or_none(float(v)) for k, v in self.losses.items()}
        return json.dumps(record, separators=(",", ":"), ensure_ascii=True, allow_nan=False)

    @classmethod
    def from_dict(cls, record: dict) -> ProgressEvent:
        """Build from a decoded JSON object; unknown keys are ignored (newer writers may add fields)."""
        if not isinstance(record, dict) or "kind" not in record:
            raise ValueError("a progress event is a JSON object with a 'kind'")
        values: dict = {"kind": str(record["kind"])}
        for name in _INT_FIELDS:
            if record.get(name) is not None:
                values[name] = int(record[name])
        for name in _FLOAT_FIELDS:
            if record.get(name) is not None:
                values[name] = float(record[name])
        losses = record.get("losses") or {}
        if not isinstance(losses, dict):
            raise ValueError("'losses' must be an object")
        values["losses"] = {str(k): math.nan if v is None else float(v) for k, v in losses.items()}
        values["message"] = str(record.get("message") or "")
        if record.get("time") is not None:
            values["time"] = float(record["time"])
        return cls(**values)


def _finite_or_none(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def parse_event_line(line: str) -> ProgressEvent | None:
    """The event on one line, or None when the line is not a (complete) event."""
    text = line.strip()
    if not text.startswith("{"):
        return None
    try:
        return ProgressEvent.from_dict(json.loads(text))
    except (ValueError, TypeError):
        return None


def read_events(lines: Iterable[str]) -> list[ProgressEvent]:
    """Every event in `lines` (e.g. an open log file), skipping non-event lines and a partial last line."""
    return [event for event in map(parse_event_line, lines) if event is not None]


class EventStreamParser:
    """Incremental reader for a stream arriving in arbitrary chunks (a subprocess' stdout).

    `feed` returns the events completed by the chunk; a trailing partial line waits for its newline.
    """

    def __init__(self) -> None:
        self._pending = ""

    def feed(self, chunk: str) -> list[ProgressEvent]:
        *complete, self._pending = (self._pending + chunk).split("\n")
        return read_events(complete)

    def finish(self) -> list[ProgressEvent]:
        """The event on a last line that ended without a newline (at end of stream), if it is complete."""
        rest, self._pending = self._pending, ""
        return read_events([rest])


class EventWriter:
    """Writes events as JSON lines to a text stream or appends them to a file, flushing every line.

    A log file is appended to, not written atomically: it is a record that grows while training runs, and a
    crash leaves at most one partial last line, which the readers skip.
    """

    def __init__(self, target: TextIO | str | Path):
        self._owns = isinstance(target, (str, Path))
        self._path = str(target) if self._owns else None
        self._failed = False
        self._stream: TextIO = open(target, "a", encoding="utf-8") if self._owns else target

    def write(self, event: ProgressEvent) -> None:
        try:
            self._stream.write(event.to_json() + "\n")
            self._stream.flush()
        except OSError as exc:  # a full disk: a stream's error names no file, the CLI's line should
            self._failed = True
            if self._path is None or exc.filename is not None:
                raise
            raise OSError(exc.errno, exc.strerror, self._path) from None

    def emit(self, kind: str, **fields) -> ProgressEvent:
        """Build an event stamped with the current time, write it and return it."""
        event = ProgressEvent(kind, **fields)
        self.write(event)
        return event

    def close(self) -> None:
        if self._owns and not self._stream.closed:
            try:
                self._stream.close()  # closed even when its last flush fails
            except OSError as exc:
                if not self._failed:  # else the write that failed has raised it already
                    raise OSError(exc.errno, exc.strerror, self._path) from None

    def __enter__(self) -> EventWriter:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class EtaEstimator:
    """Remaining time from an exponential moving average of the seconds per step.

    `update(done)` is called with the number of steps done so far (of `total`, e.g. over all stages); the
    first call only starts the clock. Steps done in bursts are fine: the average is per step.
    """

    def __init__(self, total: int, smoothing: float = 0.3, clock: Callable[[], float] = time.monotonic):
        if total < 0:
            raise ValueError(f"total steps must be >= 0, got {total}")
        if not 0.0 < smoothing <= 1.0:
            raise ValueError(f"smoothing must lie in (0, 1], got {smoothing}")
        self.total = total
        self.smoothing = smoothing
        self._clock = clock
        self._last: tuple[float, int] | None = None
        self._seconds_per_step: float | None = None

    @property
    def steps_per_s(self) -> float | None:
        if not self._seconds_per_step:
            return None
        return 1.0 / self._seconds_per_step

    def update(self, done: int) -> float | None:
        """Seconds left after `done` steps, or None until a rate has been measured.

        A call with the same `done` as the last one keeps the older time stamp, so the next step is timed
        from when the previous step finished; a smaller `done` (a restart) restarts the clock.
        """
        now = self._clock()
        if self._last is None or done < self._last[1]:
            self._last = (now, done)
        elif done > self._last[1]:
            last_time, last_done = self._last
            sample = max(now - last_time, 0.0) / (done - last_done)
            previous = self._seconds_per_step
            self._seconds_per_step = sample if previous is None else previous + self.smoothing * (sample - previous)
            self._last = (now, done)
        if done >= self.total:
            return 0.0
        if self._seconds_per_step is None:
            return None
        return (self.total - done) * self._seconds_per_step


def format_duration(seconds: float | None) -> str:
    """`1:02:03`, `2:03`, or `--:--` when unknown."""
    if seconds is None or not math.isfinite(seconds):
        return "--:--"
    total = int(round(max(seconds, 0.0)))
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def _format_losses(losses: dict[str, float]) -> str:
    names = sorted(losses, key=lambda name: (name != "total", name))
    return " ".join(f"{name} {losses[name]:.4g}" for name in names)


def _position(event: ProgressEvent) -> str:
    parts = []
    if event.stage is not None:
        parts.append(f"stage {event.stage}")
    if event.epoch is not None:
        parts.append(f"epoch {event.epoch}" + (f"/{event.epochs}" if event.epochs is not None else ""))
    return " ".join(parts)


def format_event(event: ProgressEvent, width: int = 100) -> str:
    """One line, at most `width` characters, describing the event (a bar for "step" events)."""
    if event.kind == "step":
        counter = bar(event.step, event.steps) if event.step is not None and event.steps else ""
        fields = [_position(event), counter, _format_losses(event.losses)]
        if event.samples_per_s is not None:
            fields.append(f"{event.samples_per_s:.1f} samples/s")
        fields.append(f"ETA {format_duration(event.eta_s)}")
        line = " | ".join(f for f in fields if f)
    else:
        position = _position(event)
        if event.kind == "stage":
            head = position or "stage"
        elif event.kind == "epoch":
            head = f"{position} done" if position else "epoch done"
        else:
            head = f"{event.kind} ({position})" if position else event.kind
        tail = " ".join(f for f in (event.message, _format_losses(event.losses)) if f)
        line = f"{head}: {tail}" if tail else head
    return line if len(line) <= width else line[: max(width - 3, 0)] + "..."


class ProgressBar:
    """Renders events on a terminal: "step" events redraw one line in place, others print a line each.

    On a stream that is not a terminal (a log, a pipe) step events are dropped so the log stays readable.
    """

    def __init__(self, stream: TextIO, width: int | None = None):
        self._line = TerminalLine(stream, width)

    def handle(self, event: ProgressEvent) -> None:
        text = format_event(event, self._line.width)
        if event.kind == "step":
            self._line.redraw(text)
        else:
            self._line.write_line(text)
