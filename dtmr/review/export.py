"""Reviews as flat rows (one per annotator and clip), written as CSV or JSON."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from ..io.atomic import atomic_write
from ..io.outputs import register_output_kind
from .frames import to_numbers
from .sidecar import Review

COLUMNS = ("library", "annotator", "clip", "verdict", "flags", "note", "tags", "time")


def review_rows(reviews: list[Review]) -> list[dict]:
    """Every clip with a verdict, flag, note or tag; flags as 1-based frame numbers (`[[13, 31]]`, in CSV
    `13-31;41-42`), tags joined by `;` in CSV."""
    rows = []
    for r in reviews:
        for key, c in sorted(r.clips.items()):
            if not c.empty:
                rows.append({"library": r.library.name, "annotator": r.annotator, "clip": key,
                             "verdict": c.verdict or "", "flags": [list(to_numbers(f)) for f in c.flags], "note": c.note,
                             "tags": list(c.tags), "time": c.time})
    return rows


def write_csv(path: str | Path, reviews: list[Review]) -> int:
    """Write the rows as CSV (atomically); returns how many rows."""
    rows = review_rows(reviews)
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({**row, "flags": ";".join(f"{a}-{b}" for a, b in row["flags"]), "tags": ";".join(row["tags"])})
    with atomic_write(path, ".csv.tmp") as tmp:
        tmp.write_text(text.getvalue(), encoding="utf-8")
    return len(rows)


def write_json(path: str | Path, reviews: list[Review]) -> int:
    """Write the rows as a JSON list (atomically); returns how many rows."""
    rows = review_rows(reviews)
    with atomic_write(path, ".json.tmp") as tmp:
        tmp.write_text(json.dumps(rows, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return len(rows)


def is_review_rows(path: Path) -> bool:
    """A file `write_csv` or `write_json` wrote: CSV under COLUMNS, or a JSON list of rows (the output guard's
    test of kind "review-rows")."""
    header = ",".join(COLUMNS)
    try:
        with open(path, encoding="utf-8") as fh:
            if fh.readline(len(header) + 2).rstrip("\r\n") == header:
                return True
        if Path(path).stat().st_size > 512 * 1024 * 1024:
            return False
        rows = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(rows, list) and all(isinstance(r, dict) and {"annotator", "clip"} <= set(r) for r in rows[:1])


register_output_kind("review-rows", "review export (CSV or JSON rows)", is_review_rows)
