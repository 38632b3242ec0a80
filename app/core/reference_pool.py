"""The reference pool: which clips may lend their body to a source clip, and the seeded draw.

DESIGN §3: the reference is drawn uniformly from the clips whose subject differs from the source's.
A clip whose subject is unknown (-1) might be the source's performer, so it joins the pool only when
the source's own subject is unknown too (then every other clip is a candidate). The draw is
`dtmr.render.pick_reference`, the one `dtmr export --seed N` uses, so seed N picks the same reference
in the Studio and on the command line.
"""

from __future__ import annotations

import numpy as np

from dtmr.render.comparison import pick_reference


class ReferencePool:
    def __init__(self, subjects: np.ndarray) -> None:
        self.subjects = np.asarray(subjects, dtype=np.int64).reshape(-1)

    def candidates(self, source_index: int) -> np.ndarray:
        """Indices of the clips that may serve as the reference of `source_index`."""
        subject = self.subjects[source_index]
        if subject < 0:
            mask = np.ones(len(self.subjects), dtype=bool)
        else:
            mask = (self.subjects != subject) & (self.subjects >= 0)
        mask[source_index] = False
        return np.flatnonzero(mask)

    def is_candidate(self, source_index: int, reference_index: int) -> bool:
        if reference_index == source_index or not 0 <= reference_index < len(self.subjects):
            return False
        subject = self.subjects[source_index]
        other = self.subjects[reference_index]
        return bool(subject < 0 or (other >= 0 and other != subject))

    def draw(self, source_index: int, seed: int) -> int | None:
        """A uniform draw from `candidates`, the same for the same (seed, source); None when empty."""
        return pick_reference(self.subjects, source_index, seed)
