"""Frames as a person reads them: 1-based frame numbers, the way the Studio's frame counter counts.

A review keeps its flags in memory as 0-based frame indices (`ClipReview.flags`, the indices of the clip's
arrays and of the Studio's playback clock). Everything a person reads shows them as 1-based frame numbers:
the review sidecar from version 2 on (docs/review.md), `dtmr review export` and `merge`, and the Studio's
review panel. These helpers are the one place the two meet.
"""

from __future__ import annotations

#: a sidecar of version 1 stored 0-based frame indices, version 2 stores 1-based frame numbers
FIRST_FRAME_NUMBER = 1


def to_numbers(flag: tuple[int, int]) -> tuple[int, int]:
    """A flag's (start, end) as 1-based frame numbers."""
    return flag[0] + FIRST_FRAME_NUMBER, flag[1] + FIRST_FRAME_NUMBER


def flag_text(flag: tuple[int, int]) -> str:
    """"frames 5–12" or "frame 5", 1-based."""
    start, end = to_numbers(flag)
    return f"frames {start}–{end}" if end > start else f"frame {start}"

