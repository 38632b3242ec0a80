"""A release read together with its key: the release's clips, each with its source subject from the key.

A release stores subject -1 for every clip (docs/privacy.md). With the key the data owner knows who each
released clip shows; the Studio then fills the subject column, draws references from other subjects, and
names the true subject in the identity track and the Privacy panel. The clips' joints and ids are the
release's own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from dtmr import Clip

if TYPE_CHECKING:
    from dtmr.io.library import ClipLibrary
    from dtmr.release.key import ReleaseKey


class KeyedRelease:
    """The `ClipSource` interface over a release `ClipLibrary` and its `ReleaseKey` (same clip order)."""

    def __init__(self, library: ClipLibrary, key: ReleaseKey) -> None:
        self.library = library
        self.key = key
        self._subjects = key.subjects()
        self._source_clips = [e.source_clip for e in key.entries]

    @property
    def path(self) -> str:
        return self.library.path

    @property
    def format(self) -> str:
        return self.library.format

    @property
    def topology(self) -> str:
        return self.library.topology

    @property
    def action_names(self) -> list[str] | None:
        return self.library.action_names

    def __len__(self) -> int:
        return len(self.library)

    def subject(self, i: int) -> int | None:
        value = int(self._subjects[i])
        return None if value < 0 else value

    def source_clip(self, i: int) -> str:
        return self._source_clips[i]

    def metadata(self, i: int) -> dict:
        meta = self.library.metadata(i)
        meta["subject"] = self.subject(i)
        return meta

    def metadata_table(self) -> dict[str, np.ndarray]:
        table = dict(self.library.metadata_table())
        table["subject"] = self._subjects.copy()
        return table

    def read(self, i: int) -> Clip:
        return self.library.read(i).replace(subject=self.subject(i))

    def close(self) -> None:
        self.library.close()
