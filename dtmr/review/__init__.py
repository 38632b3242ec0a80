"""Plausibility review of a clip library: per-clip verdicts, frame-range flags, notes and tags.

A review lives in a sidecar beside the library (`sidecar`, format in docs/review.md), one file per
annotator; `agreement` merges several annotators' sidecars and reports Cohen's / Fleiss' κ; `export`
writes the reviewed clips as CSV or JSON rows. A review is never part of a release.
"""

from .agreement import Agreement, cohen_kappa, fleiss_kappa, merge_reviews
from .export import review_rows, write_csv, write_json
from .sidecar import (
    VERDICTS,
    ClipReview,
    LibraryFingerprint,
    Review,
    clip_keys,
    find_sidecars,
    read_review,
    sidecar_path,
    write_review,
)

__all__ = [
    "VERDICTS", "Agreement", "ClipReview", "LibraryFingerprint", "Review", "clip_keys", "cohen_kappa",
    "find_sidecars", "fleiss_kappa", "merge_reviews", "read_review", "review_rows", "sidecar_path", "write_csv",
    "write_json", "write_review",
]
