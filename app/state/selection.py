"""What the user compares: the open library, the source clip and the reference clip.

The reference is drawn from `dtmr.data.ReferencePool` (the one reference rule of the project) with a
visible seed ("Random" moves to the next seed) or pinned by the user. A pinned reference survives a change
of source while it is still a valid candidate; otherwise it is unpinned and a new one is drawn with the
current seed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from dtmr.data.reference_pool import ReferencePool

from .events import Signal

if TYPE_CHECKING:
    import numpy as np

    from dtmr.io.clip_source import ClipSource


@dataclass(frozen=True)
class ReferenceChoice:
    index: int
    seed: int
    pinned: bool


class Selection:
    """Signals: `library_changed(library)`, `source_changed(index | None)`,
    `reference_changed(ReferenceChoice | None)`, and `pair_changed()` once per user action that changes
    the (source, reference) pair, after both are settled (what inference listens to)."""

    def __init__(self) -> None:
        self.library: ClipSource | None = None
        self.pool: ReferencePool | None = None
        self.source_index: int | None = None
        self.reference: ReferenceChoice | None = None
        self.seed = 0
        self.library_changed = Signal()
        self.source_changed = Signal()
        self.reference_changed = Signal()
        self.pair_changed = Signal()

    def set_library(self, library: ClipSource | None, subjects: np.ndarray | None = None) -> None:
        """A newly opened clip source (with its subject column, when already read); selects nothing."""
        self.library = library
        if library is not None and subjects is None:
            subjects = library.metadata_table()["subject"]
        self.pool = None if library is None else ReferencePool(subjects)
        self.source_index = None
        self.reference = None
        self.library_changed.emit(library)
        self.source_changed.emit(None)
        self.reference_changed.emit(None)
        self.pair_changed.emit()

    def select_source(self, index: int | None) -> None:
        if index == self.source_index:
            return
        if index is not None and not (self.library is not None and 0 <= index < len(self.library)):
            raise IndexError(f"no clip {index} in the open library")
        before = self.pair
        self.source_index = index
        self.source_changed.emit(index)
        keep = (
            index is not None
            and self.reference is not None
            and self.reference.pinned
            and self.pool is not None
            and self.pool.is_candidate(index, self.reference.index)
        )
        if not keep:
            self._draw()
        self._announce(before)

    def random_reference(self) -> None:
        """Draw with the next seed (the "Random" button)."""
        self.set_seed(self.seed + 1)

    def set_seed(self, seed: int) -> None:
        before = self.pair
        self.seed = int(seed)
        self._draw()
        self._announce(before)

    def pin(self, index: int) -> None:
        """Use clip `index` as the reference until unpinned."""
        if self.source_index is None or self.pool is None or not self.pool.is_candidate(self.source_index, index):
            raise ValueError(f"clip {index} cannot be the reference: it is the source or has the source's subject")
        before = self.pair
        self._set_reference(ReferenceChoice(index, self.seed, pinned=True))
        self._announce(before)

    def unpin(self) -> None:
        if self.reference is not None and self.reference.pinned:
            self._set_reference(ReferenceChoice(self.reference.index, self.seed, pinned=False))

    @property
    def pair(self) -> tuple[int | None, int | None]:
        return self.source_index, None if self.reference is None else self.reference.index

    def _announce(self, before: tuple[int | None, int | None]) -> None:
        if self.pair != before:
            self.pair_changed.emit()

    def _draw(self) -> None:
        index = None
        if self.source_index is not None and self.pool is not None:
            index = self.pool.draw(self.source_index, self.seed)
        self._set_reference(None if index is None else ReferenceChoice(index, self.seed, pinned=False))

    def _set_reference(self, choice: ReferenceChoice | None) -> None:
        if choice != self.reference:
            self.reference = choice
            self.reference_changed.emit(choice)
