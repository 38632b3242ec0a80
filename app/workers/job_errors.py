"""How a failed background job is described to the user: one line, whether it failed here or in a child."""

from __future__ import annotations

from dtmr.errors import DtmrError


class ChildJobError(Exception):
    """A job failed in its child process; the message is already the one-line description."""


def one_line_error(exc: BaseException) -> str:
    """``"ValueError: first line of the message"``; a `ChildJobError`'s message as it is, and a `DtmrError`'s
    first line as it is (the library's errors are written for users: "FILE: what is wrong", no class name)."""
    if isinstance(exc, ChildJobError):
        return str(exc)
    text = str(exc).strip().splitlines()
    if isinstance(exc, DtmrError) and text:
        return text[0]
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
