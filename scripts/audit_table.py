"""Several audits of one data set side by side, printed as Markdown (docs/notebook/experiments.md's audit tables).

    python scripts/audit_table.py AUDIT_DIR [AUDIT_DIR ...] [--labels "raw,naive retarget,..."] [--partners | --channels | --suite]

Each AUDIT_DIR is a `dtmr audit` output folder (its audit.json). "AR kept" is against the first audit of a
raw release among them. `--partners`: the partners' exposure of k-same audits made with `--partners` instead;
`--channels`: each side channel's figures; `--suite`: the full suite's summary (worst case, strongest learned,
ensemble, side channel and raw-known attacker, calibration, action and motion kept).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dtmr.audit.audit_json import read_audit_json
from dtmr.audit.table import audit_table, channel_table, partner_table, suite_table
from dtmr.errors import DtmrError


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("audits", type=Path, nargs="+")
    parser.add_argument("--labels", help="comma-separated row labels, one per audit")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--partners", action="store_true", help="the partners' exposure table")
    which.add_argument("--channels", action="store_true", help="the side channels' table")
    which.add_argument("--suite", action="store_true", help="the full suite's summary table")
    args = parser.parse_args(argv)
    labels = [s.strip() for s in args.labels.split(",")] if args.labels else None
    if labels is not None and len(labels) != len(args.audits):
        print(f"--labels: {len(labels)} labels for {len(args.audits)} audits", file=sys.stderr)
        return 1
    audits = []
    for folder in args.audits:
        try:
            audit = read_audit_json(folder)
        except DtmrError as error:
            print(error, file=sys.stderr)
            return 1
        audits.append(audit)
    table = (partner_table if args.partners else channel_table if args.channels else suite_table if args.suite
             else audit_table)
    print(table(audits, labels))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
