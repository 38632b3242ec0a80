"""What an importer decided about a clip (its rig, unit, up axis) and what it warns of, kept in `Clip.extra`.

Readers that guess (BVH rigs, pose arrays) write one line under `NOTE` and, when the result is doubtful (a body
that stays lying down, a size given by hand that is no person's), one under `WARNING`. Kept in the clip, they
travel into the library with it; `dtmr data import` prints them on stderr and the Studio shows them when the
file opens.
"""

from __future__ import annotations

NOTE = "import_note"
WARNING = "import_warning"


def notes(note: str, *warnings: str) -> dict[str, str]:
    """The `extra` entries of a clip: the note, and the non-empty warnings joined by "; "."""
    extra = {NOTE: note}
    warning = "; ".join(w for w in warnings if w)
    if warning:
        extra[WARNING] = warning
    return extra


def source_notes(source) -> tuple[list[str], list[str]]:
    """(notes, warnings) of a source read into memory, each once, prefixed with the clip's name when it holds
    several clips; ([], []) for a library (its clips were imported before)."""
    clips = getattr(source, "clips", None)
    if not clips:
        return [], []
    found: tuple[list[str], list[str]] = ([], [])
    for clip in clips:
        for key, out in ((NOTE, found[0]), (WARNING, found[1])):
            text = clip.extra.get(key)
            if text:
                line = text if len(clips) == 1 else f"{clip.name}: {text}"
                if line not in out:
                    out.append(line)
    return found
