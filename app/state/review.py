"""The plausibility review of the open library: verdicts, frame-range flags, notes and tags per clip.

Qt-free and evented. Clips are addressed by their index in the library; the sidecar keys them with
`dtmr.review.clip_keys` (the sample name, or `#index` when names repeat). Every change is written at once,
atomically, to the annotator's sidecar (`dtmr.review.sidecar_path`: beside the library, or in the user's
data folder for a bundled or read-only library; a review that an earlier version wrote beside such a library
is read from there once). A sidecar that cannot be read does not stop the review: `message` says so, and the
first save renames the damaged file to `<name>.damaged-<UTC time>` (kept, never overwritten) and starts a
new sidecar under the usual name.

Every change (verdict, flag, note, tags) can be undone, the last first (`undo`), while the library and the
annotator stay the same. Flags are 0-based frame indices here, like the playback clock's frames.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime, timezone
from pathlib import Path

from dtmr.errors import InputError
from dtmr.review import (
    VERDICTS,
    ClipReview,
    LibraryFingerprint,
    Review,
    clip_keys,
    read_review,
    sidecar_beside,
    sidecar_path,
    write_review,
)
from dtmr.review.sidecar import now_iso

from .events import Signal

#: what an undo entry names: the field that changed
CHANGE_NAMES = {"verdict": "verdict", "flags": "flag", "note": "note", "tags": "tags"}


@dataclasses.dataclass(frozen=True)
class UndoEntry:
    """One review change: clip `index` was `before` (None: it had no review) before `what` changed."""

    index: int
    before: ClipReview | None
    what: str


class ReviewState:
    """Signals: `reset()` (another library or annotator: everything changed), `clip_changed(index)`,
    `message(str)` (what the user should know: a damaged or foreign sidecar, a failed save)."""

    def __init__(self, data_dir: str | Path | None = None) -> None:
        #: the user's data folder for the sidecars of bundled or read-only libraries (None: dtmr's default)
        self.data_dir = None if data_dir is None else Path(data_dir)
        self.library_path: Path | None = None
        self.keys: list[str] = []
        self.fingerprint: LibraryFingerprint | None = None
        self.annotator = ""
        self.review: Review | None = None
        self.path: Path | None = None
        #: a sidecar that could not be read: renamed away before the first save
        self.damaged: Path | None = None
        #: the `[` mark waiting for its `]`: (clip index, start frame)
        self.pending_start: tuple[int, int] | None = None
        #: reviews of clips the library no longer has: kept in the sidecar all the same
        self._foreign: dict[str, ClipReview] = {}
        #: the changes made since the library or the annotator changed, the last one last
        self.undo_stack: list[UndoEntry] = []
        self.reset = Signal()
        self.clip_changed = Signal()
        self.message = Signal()

    # --- library and annotator -------------------------------------------------------------------
    def open_library(self, path: str | Path | None, sample_names=()) -> None:
        self.library_path = None if path is None else Path(path)
        names = [str(n) for n in sample_names]
        self.keys = clip_keys(names)
        self.fingerprint = None if path is None else LibraryFingerprint.of(path, names)
        self._load()

    def set_annotator(self, name: str) -> None:
        name = name.strip()
        if name != self.annotator:
            self.annotator = name
            self._load()

    @property
    def active(self) -> bool:
        """A library is open and the annotator is known: reviews can be given."""
        return self.review is not None

    def _load(self) -> None:
        self.review, self.path, self.damaged, self.pending_start, self._foreign = None, None, None, None, {}
        self.undo_stack = []
        if self.library_path is not None and self.annotator and self.fingerprint is not None:
            self.path = sidecar_path(self.library_path, self.annotator, self.data_dir)
            self.review = Review(self.fingerprint, self.annotator)
            earlier = sidecar_beside(self.library_path, self.annotator)
            if self.path.exists():
                self._read_existing(self.path)
            elif earlier != self.path and earlier.exists():
                self._read_existing(earlier, moved=True)
        self.reset.emit()

    @property
    def in_data_folder(self) -> bool:
        """Whether the sidecar is kept in the user's data folder (the library is bundled or read-only)."""
        return self.path is not None and self.library_path is not None and \
            self.path.parent != self.library_path.absolute().parent

    def _read_existing(self, path: Path, moved: bool = False) -> None:
        assert self.path is not None and self.review is not None and self.fingerprint is not None
        try:
            stored = read_review(path)
        except InputError as exc:
            if moved:  # never renamed in the installation: the new sidecar starts empty
                self.message.emit(f"{exc} — a new review starts in {self.path}")
                return
            self.damaged = path
            self.message.emit(f"{exc} — a new review starts; the damaged file is kept as "
                              f"{path.name}.damaged-<time>")
            return
        if moved:
            self.message.emit(f"{path.name}: read from beside {self.fingerprint.name}; the review is saved in "
                              f"{self.path.parent} from now on (the library's folder is not the place for it)")
        if stored.library != self.fingerprint:
            self.message.emit(f"{path.name}: reviewed another version of {self.fingerprint.name} "
                              f"({stored.library.clips} clips, now {self.fingerprint.clips}); "
                              "the verdicts of clips that are still there are kept")
        known = set(self.keys)
        self.review.clips = {k: c for k, c in stored.clips.items() if k in known}
        self._foreign = {k: c for k, c in stored.clips.items() if k not in known}

    # --- reading ---------------------------------------------------------------------------------
    def clip(self, index: int) -> ClipReview:
        if self.review is None or not 0 <= index < len(self.keys):
            return ClipReview()
        return self.review.clips.get(self.keys[index], ClipReview())

    def verdicts(self) -> list[str]:
        """Each clip's verdict, "" where none."""
        return [self.clip(i).verdict or "" for i in range(len(self.keys))]

    @property
    def reviewed(self) -> int:
        return sum(1 for v in self.verdicts() if v)

    @property
    def total(self) -> int:
        return len(self.keys)

    def next_unreviewed(self, order: list[int], current: int | None, step: int = 1) -> int | None:
        """The next (step 1) or previous (step -1) clip without a verdict after `current` in `order` (the
        table's order), wrapping around; None when every clip in `order` is reviewed."""
        if not order:
            return None
        start = order.index(current) if current in order else (-1 if step > 0 else 0)
        for offset in range(1, len(order) + 1):
            index = order[(start + step * offset) % len(order)]
            if not self.clip(index).reviewed:
                return index
        return None

    # --- changes (each one saved) ----------------------------------------------------------------
    def set_verdict(self, index: int, verdict: str | None) -> None:
        """Give `verdict` (None clears it); the verdict the clip already has changes nothing."""
        if verdict is not None and verdict not in VERDICTS:
            raise ValueError(f"unknown verdict {verdict!r}")
        if verdict != self.clip(index).verdict:
            self._change(index, verdict=verdict)

    def mark_start(self, index: int, frame: int) -> None:
        """`[`: a flag starts at `frame` of clip `index`; `mark_end` closes it."""
        if self.active:
            self.pending_start = (index, int(frame))
            self.clip_changed.emit(index)

    def mark_end(self, index: int, frame: int) -> None:
        """`]`: flag from the pending start to `frame` (both inclusive; `frame` alone without a start)."""
        start = self.pending_start[1] if self.pending_start and self.pending_start[0] == index else int(frame)
        self.pending_start = None
        low, high = sorted((start, int(frame)))
        flags = tuple(sorted({*self.clip(index).flags, (low, high)}))
        self._change(index, flags=flags)

    def remove_flag(self, index: int, flag: tuple[int, int]) -> None:
        flags = tuple(f for f in self.clip(index).flags if f != tuple(flag))
        if flags != self.clip(index).flags:
            self._change(index, flags=flags)

    def set_note(self, index: int, note: str) -> None:
        if note != self.clip(index).note:
            self._change(index, note=note)

    def set_tags(self, index: int, tags: list[str]) -> None:
        tags_tuple = tuple(dict.fromkeys(t.strip() for t in tags if t.strip()))
        if tags_tuple != self.clip(index).tags:
            self._change(index, tags=tags_tuple)

    def _change(self, index: int, **changes) -> None:
        if self.review is None or not 0 <= index < len(self.keys):
            return
        key = self.keys[index]
        what = next(CHANGE_NAMES[name] for name in changes)
        self.undo_stack.append(UndoEntry(index, self.review.clips.get(key), what))
        self.review.clips[key] = dataclasses.replace(self.clip(index), **changes, time=now_iso())
        self._save()
        self.clip_changed.emit(index)

    @property
    def can_undo(self) -> bool:
        return bool(self.undo_stack) and self.review is not None

    def undo(self) -> UndoEntry | None:
        """Take back the last change (saved at once, like every change); None when there is none."""
        if not self.can_undo:
            return None
        assert self.review is not None
        entry = self.undo_stack.pop()
        key = self.keys[entry.index]
        if entry.before is None:
            self.review.clips.pop(key, None)
        else:
            self.review.clips[key] = entry.before
        self._save()
        self.clip_changed.emit(entry.index)
        return entry

    def _save(self) -> None:
        assert self.review is not None and self.path is not None
        review = Review(self.review.library, self.review.annotator,
                        {**self._foreign, **self.review.clips})
        try:
            if self.damaged is not None and self.damaged.exists():
                stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
                self.damaged.rename(self.damaged.with_name(f"{self.damaged.name}.damaged-{stamp}"))
            self.damaged = None
            self.path.parent.mkdir(parents=True, exist_ok=True)  # the user's data folder, the first time
            write_review(self.path, review)
        except OSError as exc:
            self.message.emit(f"{self.path}: the review could not be saved: {exc.strerror or exc}")
