"""The reference pool: which clips may lend their body to a source clip, and the seeded draws.

DESIGN §3: the reference is drawn uniformly from the clips whose subject differs from the source's. The
rule for clips of unknown subject (label -1), decided once here (docs/ARCHITECTURE.md, "Reference pool"):

- a source of known subject takes its reference only among clips of *other known* subjects: a clip of
  unknown subject might be the source's own performer;
- a source of unknown subject takes any other clip (never itself).

`candidate_mask` is the only place the rule is written. Each caller keeps its own seeding scheme, one
draw method each, so its results stay what they were:

- `draw`: the Studio and `dtmr export --seed N` (through `dtmr.render.pick_reference`), which must pick
  the same clip for the same seed;
- `draw_keyed`: `dtmr anonymize`, one generator per source clip keyed by (seed, source index), so a clip's
  reference does not depend on the order clips are processed in;
- `draw_all`: the evaluation protocol, one vectorized draw per subject group from a shared generator.
"""

from __future__ import annotations

import numpy as np
import numpy.random  # noqa: F401 - numpy imports it at the first np.random use (0.1-0.2 s): here, not at a first draw

from ..errors import DtmrError


class ReferencePool:
    """The clips references are drawn from, given by their subject labels (negative = unknown)."""

    def __init__(self, subjects) -> None:
        self.subjects = np.asarray(subjects, dtype=np.int64).reshape(-1)

    def __len__(self) -> int:
        return len(self.subjects)

    def candidate_mask(self, subject: int | None, own: int | None = None) -> np.ndarray:
        """(N,) bool: the pool clips that may be the reference of a source of `subject` (None or negative:
        unknown); `own` is the source's own index when the source is a clip of this pool."""
        if subject is not None and subject >= 0:
            mask = (self.subjects >= 0) & (self.subjects != subject)
        else:
            mask = np.ones(len(self.subjects), dtype=bool)
        if own is not None:
            mask[own] = False
        return mask

    def candidates_for(self, subject: int | None, own: int | None = None) -> np.ndarray:
        """Indices of the candidates of a source of `subject` (see `candidate_mask`)."""
        return np.flatnonzero(self.candidate_mask(subject, own))

    def candidates(self, source_index: int) -> np.ndarray:
        """Indices of the candidates of the pool's own clip `source_index`."""
        return self.candidates_for(int(self.subjects[source_index]), own=source_index)

    def is_candidate(self, source_index: int, reference_index: int) -> bool:
        if not 0 <= reference_index < len(self.subjects):
            return False
        return bool(self.candidate_mask(int(self.subjects[source_index]), own=source_index)[reference_index])

    def draw(self, source_index: int, seed: int) -> int | None:
        """A uniform draw among the candidates of clip `source_index`, the same for the same seed; None when
        there is none. The Studio and `dtmr export --seed N` both use it."""
        candidates = self.candidates(source_index)
        if candidates.size == 0:
            return None
        return int(np.random.default_rng(seed).choice(candidates))

    def draw_keyed(self, seed: int, key: int, subject: int | None, own: int | None = None) -> int | None:
        """A uniform draw for a source of `subject` from a generator seeded by `SeedSequence([seed, key])`;
        None when there is no candidate. `dtmr anonymize` keys it by the source clip's index."""
        candidates = self.candidates_for(subject, own)
        if candidates.size == 0:
            return None
        rng = np.random.default_rng(np.random.SeedSequence([seed, key]))
        return int(candidates[rng.integers(candidates.size)])

    def draw_all(self, rng: np.random.Generator) -> np.ndarray:
        """(N,) a reference for every clip of the pool, drawn from `rng` one subject group at a time (in
        ascending subject order), one vectorized draw per group.

        Within a group the candidate set is the same for every clip, except that a clip of unknown subject
        is itself in its group's set and must skip its own position there.
        """
        out = np.empty(len(self.subjects), dtype=np.int64)
        for subject in np.unique(self.subjects):
            rows = np.flatnonzero(self.subjects == subject)
            mask = self.candidate_mask(int(subject))
            candidates = np.flatnonzero(mask)
            if mask[rows[0]]:  # unknown subject: every clip of the group is in the set; skip the clip itself
                positions = np.searchsorted(candidates, rows)
                if candidates.size < 2:
                    raise DtmrError(f"no reference for clip {rows[0]}: the pool holds no other clip")
                drawn = rng.integers(candidates.size - 1, size=rows.size)
                out[rows] = candidates[drawn + (drawn >= positions)]
            else:
                if candidates.size == 0:
                    raise DtmrError(f"no reference for subject {subject}: no pool clip of another known subject")
                out[rows] = candidates[rng.integers(candidates.size, size=rows.size)]
        return out
