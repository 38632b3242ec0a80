"""A setting's numbers over its trainings: the rows of one evaluation whose models differ only in their
training seed, as mean ± std over the trainings (with each training's mean), printed as Markdown.

    python scripts/summarize_trainings.py RESULTS_DIR [--min-trainings N]

RESULTS_DIR is a `dtmr evaluate` output folder (its results.json). Settings trained fewer than N times
(default 1: all) are left out.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from dtmr.eval.trainings import over_trainings, trainings_table


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results_dir", type=Path)
    parser.add_argument("--min-trainings", type=int, default=1)
    args = parser.parse_args(argv)
    path = args.results_dir / "results.json"
    try:
        rows = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        print(f"{path}: cannot read the results ({error})", file=sys.stderr)
        return 1
    try:
        summaries = over_trainings(rows)
    except (KeyError, TypeError) as error:
        print(f"{path}: not the rows of a `dtmr evaluate` run ({error!r})", file=sys.stderr)
        return 1
    summaries = [s for s in summaries if s["trainings"] >= args.min_trainings]
    print(trainings_table(summaries))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
