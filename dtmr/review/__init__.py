"""Plausibility review of a clip library: per-clip verdicts, frame-range flags, notes and tags.

A review lives in a sidecar beside the library, or in the user's data folder for a bundled or read-only
library (`location`; `sidecar`, format in docs/review.md), one file per annotator; flags are 0-based in
memory and 1-based wherever a person reads them (`frames`); `agreement` merges several annotators'
sidecars and reports Cohen's / Fleiss' κ; `export` writes the reviewed clips as CSV or JSON rows. A review
is never part of a release.
"""

from .agreement import Agreement, cohen_kappa, fleiss_kappa, merge_reviews
from .export import review_rows, write_csv, write_json
from .frames import flag_text, to_numbers
from .location import review_folder, user_data_dir
from .sidecar import (
    VERDICTS,
    ClipReview,
    LibraryFingerprint,
    Review,
    clip_keys,
    find_sidecars,
    read_review,
    sidecar_beside,
    sidecar_path,
    write_review,
)

__all__ = [
    "VERDICTS", "Agreement", "ClipReview", "LibraryFingerprint", "Review", "clip_keys", "cohen_kappa",
    "find_sidecars", "flag_text", "fleiss_kappa", "merge_reviews", "read_review", "review_folder", "review_rows",
    "sidecar_beside", "sidecar_path", "to_numbers", "user_data_dir", "write_csv", "write_json", "write_review",
]
