"""Agreement between annotators' verdicts.

Two annotators: Cohen's κ (Cohen 1960, "A coefficient of agreement for nominal scales", Educational and
Psychological Measurement 20(1)) on the clips both gave a verdict: κ = (p_o − p_e) / (1 − p_e), with p_o the
observed agreement and p_e = Σ_k p₁(k)·p₂(k) the agreement expected from each annotator's own verdict rates.
Three or more: Fleiss' κ (Fleiss 1971, "Measuring nominal scale agreement among many raters", Psychological
Bulletin 76(5)) on the clips every annotator gave a verdict, plus Cohen's κ for every pair. κ is undefined (None)
when there is no clip to compare or when chance agreement is already 1 (everyone gave one and the same verdict).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np

from ..errors import DtmrError
from .frames import to_numbers
from .sidecar import VERDICTS, Review


def cohen_kappa(a: list[str], b: list[str], categories=VERDICTS) -> float | None:
    """Cohen's κ of two equally long lists of labels (None when undefined)."""
    if len(a) != len(b):
        raise ValueError("Cohen's kappa needs two ratings per item")
    if not a:
        return None
    index = {c: i for i, c in enumerate(categories)}
    table = np.zeros((len(categories), len(categories)))
    for x, y in zip(a, b):
        table[index[x], index[y]] += 1
    table /= table.sum()
    observed = float(np.trace(table))
    expected = float(table.sum(axis=1) @ table.sum(axis=0))
    if np.isclose(expected, 1.0):
        return None
    return (observed - expected) / (1.0 - expected)


def fleiss_kappa(counts) -> float | None:
    """Fleiss' κ of an (items, categories) table of how many raters put each item in each category; every
    item must have the same number of raters (at least two). None when undefined."""
    counts = np.asarray(counts, dtype=np.float64)
    if counts.ndim != 2 or counts.shape[0] == 0:
        return None
    raters = counts.sum(axis=1)
    if not np.all(raters == raters[0]) or raters[0] < 2:
        raise ValueError("Fleiss' kappa needs the same number (>= 2) of raters for every item")
    n = raters[0]
    p_items = ((counts * (counts - 1)).sum(axis=1)) / (n * (n - 1))
    p_categories = counts.sum(axis=0) / counts.sum()
    observed, expected = float(p_items.mean()), float((p_categories**2).sum())
    if np.isclose(expected, 1.0):
        return None
    return (observed - expected) / (1.0 - expected)


@dataclass(frozen=True)
class PairAgreement:
    first: str
    second: str
    clips: int
    kappa: float | None


@dataclass(frozen=True)
class Agreement:
    annotators: tuple[str, ...]
    pairs: tuple[PairAgreement, ...]
    #: Fleiss' κ on the clips every annotator gave a verdict (three or more annotators only)
    fleiss: float | None
    fleiss_clips: int

    def lines(self) -> list[str]:
        """What `dtmr review merge` prints."""
        out = [f"Cohen's kappa {p.first} vs {p.second}: {_kappa_text(p.kappa)} on {p.clips} clips both reviewed"
               for p in self.pairs]
        if len(self.annotators) > 2:
            out.append(f"Fleiss' kappa, {len(self.annotators)} annotators: {_kappa_text(self.fleiss)} "
                       f"on {self.fleiss_clips} clips all reviewed")
        return out

    def as_json(self) -> dict:
        return {"pairs": [{"annotators": [p.first, p.second], "clips": p.clips, "cohen_kappa": p.kappa}
                          for p in self.pairs],
                "fleiss_kappa": self.fleiss, "fleiss_clips": self.fleiss_clips}


def _kappa_text(kappa: float | None) -> str:
    return "undefined" if kappa is None else f"{kappa:.3f}"


def merge_reviews(reviews: list[Review]) -> tuple[dict[str, dict[str, dict]], Agreement]:
    """Several annotators' reviews of one library: clip key -> annotator -> that annotator's review (as
    JSON, flags 1-based), and their agreement. Raises DtmrError for reviews of different libraries or a repeated annotator."""
    if len(reviews) < 2:
        raise DtmrError("merging needs at least two reviews")
    first = reviews[0].library
    for r in reviews[1:]:
        if r.library != first:
            differs = [what for what, a, b in (("name", first.name, r.library.name),
                                               ("clip count", first.clips, r.library.clips),
                                               ("clip names", first.names_crc32, r.library.names_crc32)) if a != b]
            raise DtmrError(f"the reviews ({reviews[0].annotator}, {r.annotator}) are of different libraries: "
                            f"{first.name} ({first.clips} clips) and {r.library.name} ({r.library.clips} clips) "
                            f"differ in their {' and '.join(differs)}")
    names = [r.annotator for r in reviews]
    if len(set(names)) != len(names):
        raise DtmrError(f"the same annotator appears twice: {', '.join(names)}")
    merged: dict[str, dict[str, dict]] = {}
    for r in reviews:
        for key, c in r.clips.items():
            if not c.empty:
                merged.setdefault(key, {})[r.annotator] = {"verdict": c.verdict, "flags": [list(to_numbers(f)) for f in c.flags],
                                                           "note": c.note, "tags": list(c.tags), "time": c.time}
    verdicts = [{k: c.verdict for k, c in r.clips.items() if c.verdict is not None} for r in reviews]
    pairs = []
    for (i, a), (j, b) in combinations(enumerate(names), 2):
        common = sorted(verdicts[i].keys() & verdicts[j].keys())
        kappa = cohen_kappa([verdicts[i][k] for k in common], [verdicts[j][k] for k in common])
        pairs.append(PairAgreement(a, b, len(common), kappa))
    fleiss, fleiss_clips = None, 0
    if len(reviews) > 2:
        common = sorted(set.intersection(*(set(v) for v in verdicts)))
        counts = [[sum(v[k] == verdict for v in verdicts) for verdict in VERDICTS] for k in common]
        fleiss, fleiss_clips = fleiss_kappa(counts), len(common)
    return merged, Agreement(tuple(names), tuple(pairs), fleiss, fleiss_clips)
