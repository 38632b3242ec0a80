"""A copy of a `dtmr audit` folder fit to publish beside results: the per-clip rows keep their risk but lose
the release id and the subject (an audit folder maps every released clip to its performer, as the key
does), and the attacker files are left behind; the reports are made again from that copy.

    python scripts/publish_audit.py AUDIT_DIR OUT_DIR
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from dtmr.audit.audit_json import read_audit_json
from dtmr.audit.report import write_reports
from dtmr.errors import DtmrError


def publishable(audit: dict) -> dict:
    """`audit` without what links a released clip to its performer."""
    shared = {k: v for k, v in audit.items() if k != "attacker_files"}
    shared["clips"] = [{"id": "", "subject": "", "risk": c["risk"], "correct": c["correct"]}
                       for c in audit.get("clips", [])]
    return shared


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("audit_dir", type=Path)
    parser.add_argument("out_dir", type=Path)
    args = parser.parse_args(argv)
    try:
        audit = read_audit_json(args.audit_dir)
    except DtmrError as error:
        print(error, file=sys.stderr)
        return 1
    shared = publishable(audit)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    (args.out_dir / "audit.json").write_text(json.dumps(shared, indent=1) + "\n")
    write_reports(shared, args.out_dir)
    print(f"wrote {args.out_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
