"""The privacy/utility frontier of several audits of one data set (dtmr/audit/frontier.py): writes the PNG and
prints the frontier table as Markdown (docs/notebook/experiments.md, issue 19).

    python scripts/plot_frontier.py AUDIT_DIR [AUDIT_DIR ...] --labels "raw,naive retarget,..." \
        --title "N-UCLA" --out results/frontier_nwucla.png

Each AUDIT_DIR is a `dtmr audit` folder (its audit.json); one must be of the raw release, and the naive
retarget's (method `naive`) is the yardstick.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dtmr.audit.frontier import frontier_points, frontier_table, plot_frontier
from dtmr.audit.result import AuditResult
from dtmr.errors import DtmrError


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("audits", type=Path, nargs="+")
    parser.add_argument("--labels", required=True, help="comma-separated labels, one per audit")
    parser.add_argument("--title", required=True)
    parser.add_argument("--out", type=Path, required=True, help="the PNG to write")
    args = parser.parse_args(argv)
    labels = [s.strip() for s in args.labels.split(",")]
    if len(labels) != len(args.audits):
        print(f"--labels: {len(labels)} labels for {len(args.audits)} audits", file=sys.stderr)
        return 1
    try:
        points = frontier_points([AuditResult.read(folder) for folder in args.audits], labels)
        plot_frontier(args.out, points, args.title)
    except DtmrError as error:
        print(error, file=sys.stderr)
        return 1
    print(frontier_table(points))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
