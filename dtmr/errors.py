"""Errors that reach users: one line, naming the file (and the line for text formats)."""

from __future__ import annotations

from pathlib import Path


class DtmrError(Exception):
    """Base class of every error the library raises on purpose; its message is shown as is."""


class InputError(DtmrError):
    """A file (or an in-memory array standing for one) is malformed, truncated or inconsistent."""

    def __init__(self, path: str | Path | None, message: str, line: int | None = None):
        self.path = None if path is None else str(path)
        self.line = line
        self.reason = message
        where = self.path or "<input>"
        if line is not None:
            where = f"{where}:{line}"
        super().__init__(f"{where}: {message}")


class NeedsLiftingError(InputError):
    """The file holds 2-D keypoints: they become clips only once lifted to 3-D (`dtmr.lift.sources.open_lifted`,
    `dtmr data import --lift`; the Studio lifts them when it opens the file)."""


class CheckpointError(InputError):
    """A checkpoint that cannot be loaded safely or does not describe a model we know."""
