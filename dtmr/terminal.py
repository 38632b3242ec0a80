"""Progress on a terminal: one line redrawn in place, with the same look in every `dtmr` command.

`TerminalLine` owns that line. On a terminal, `redraw(text)` rewrites it (cut to the terminal's width and
padded, so a shorter text hides a longer one), `write_line` blanks it before printing a line of its own,
and `clear` blanks it for good. On a stream that is not a terminal (a log file, a pipe, a test's capture)
redraws are dropped and lines are written as they come, so logs stay line-based and an error stays one
line. `Progress(label)` is the done/total counter of `dtmr anonymize`, `dtmr data import|info` and
`dtmr export`: ``label | [#####...............] 5/20``, redrawn at most every `REDRAW_INTERVAL_S` (and on
the last step), erased when the command's work ends. Training draws its step events on a `TerminalLine`
with the same `bar` (`dtmr.train.progress.ProgressBar`). Stdlib only: `dtmr data info` stays light.
"""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Callable
from typing import TextIO

BAR_CELLS = 20
REDRAW_INTERVAL_S = 0.2
SEPARATOR = " | "


def bar(done: int, total: int, cells: int = BAR_CELLS) -> str:
    """`[######..............] 3/10`."""
    fraction = min(max(done / total, 0.0), 1.0) if total > 0 else 0.0
    filled = int(round(cells * fraction))
    return f"[{'#' * filled}{'.' * (cells - filled)}] {done}/{total}"


class TerminalLine:
    """One line of `stream` (stderr by default) rewritten in place when the stream is a terminal."""

    def __init__(self, stream: TextIO | None = None, width: int | None = None):
        self.stream = sys.stderr if stream is None else stream
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._columns = width
        self.shown = False

    @property
    def width(self) -> int:
        """Characters per drawn line: one less than the terminal's columns, so the cursor never wraps."""
        return max((self._columns or shutil.get_terminal_size().columns) - 1, 1)

    def redraw(self, text: str) -> None:
        if not self.tty:
            return
        width = self.width
        self.stream.write("\r" + text[:width].ljust(width))
        self.stream.flush()
        self.shown = True

    def write_line(self, text: str) -> None:
        self.clear()
        self.stream.write(text + "\n")
        self.stream.flush()

    def clear(self) -> None:
        if self.shown:
            self.stream.write("\r" + " " * self.width + "\r")
            self.stream.flush()
            self.shown = False


class Progress:
    """A done/total counter, a `progress(done, total)` callback: ``with Progress("rendering") as progress:``.

    Quiet on a stream that is not a terminal and for work of a single step.
    """

    def __init__(self, label: str, stream: TextIO | None = None, clock: Callable[[], float] = time.monotonic):
        self.label = label
        self.line = TerminalLine(stream)
        self._clock = clock
        self._drawn_at: float | None = None

    def __call__(self, done: int, total: int) -> None:
        if not self.line.tty or total < 2:
            return
        now = self._clock()
        if self._drawn_at is not None and now - self._drawn_at < REDRAW_INTERVAL_S and done < total:
            return
        self._drawn_at = now
        self.line.redraw(self.text(done, total, self.line.width))

    def text(self, done: int, total: int, width: int) -> str:
        """The label and the bar in `width` characters: a long label (a path) loses its beginning."""
        counter = bar(done, total)
        room = width - len(counter) - len(SEPARATOR)
        label = self.label if len(self.label) <= room else "..." + self.label[len(self.label) - room + 3:]
        return f"{label}{SEPARATOR}{counter}" if room > 3 else counter

    def close(self) -> None:
        self.line.clear()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
