"""A setting's numbers over its trainings: the rows of one evaluation whose models differ only in their
training seed, as mean ± std over the trainings (with each training's mean), printed as Markdown.

    python scripts/summarize_trainings.py RESULTS_DIR [--min-trainings N]

RESULTS_DIR is a `dtmr evaluate` output folder (its results.json). Settings trained fewer than N times
(default 1: all) are left out.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dtmr.errors import InputError
from dtmr.eval.row import read_rows
from dtmr.eval.trainings import over_trainings, trainings_table


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results_dir", type=Path)
    parser.add_argument("--min-trainings", type=int, default=1)
    args = parser.parse_args(argv)
    try:
        rows = read_rows(args.results_dir / "results.json")
    except InputError as error:
        print(error, file=sys.stderr)
        return 1
    summaries = [s for s in over_trainings(rows) if s["trainings"] >= args.min_trainings]
    print(trainings_table(summaries))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
