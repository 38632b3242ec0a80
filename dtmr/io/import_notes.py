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
    """(notes, warnings) of a source read into memory, each once: a line every clip shares as it is, another
    prefixed with its clip's name; ([], []) for a library (its clips were imported before)."""
    clips = getattr(source, "clips", None)
    if not clips:
        return [], []
    found: tuple[list[str], list[str]] = ([], [])
    for key, out in ((NOTE, found[0]), (WARNING, found[1])):
        texts = [clip.extra.get(key) for clip in clips]
        if texts[0] and all(text == texts[0] for text in texts):
            out.append(texts[0])
            continue
        for clip, text in zip(clips, texts):
            line = f"{clip.name}: {text}"
            if text and line not in out:
                out.append(line)
    return found
