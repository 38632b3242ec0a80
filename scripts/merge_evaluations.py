"""Join evaluations that ran side by side, one folder each, into one table in OUT.

    python scripts/merge_evaluations.py [--append] OUT PART [PART ...]

Each PART is the --out folder of one `dtmr evaluate` run (same data, settings and evaluators; parts
without a results.json, e.g. one stopped at a time limit, are skipped and named). The result is what
running the parts one after another into OUT with `--append` gives, and its recorded command says so:
each part's command with `--out OUT`, `--append` from the second on. Every method's numbers depend only
on its own seeds, not on the other methods of a run, so the order does not change them.
With --append the evaluation already in OUT is kept and the parts are added to it (a part's row replaces
OUT's row of the same method, beta and checkpoint), e.g. a CPU run of one more model next to a GPU table.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from dtmr.errors import DtmrError
from dtmr.eval.report import merge_runs, write_reports
from dtmr.eval.row import read_rows

REPORT_FILES = ("results.json", "run.json", "results.md", "tradeoff.png")


def canonical_command(command: str, part: Path, out: Path, append: bool) -> str:
    """`command` as if it had written into `out` (with --append when a part before it did)."""
    words = shlex.split(command)
    index = words.index("--out")
    if Path(words[index + 1]) != part:
        raise ValueError(f"{part}: its command wrote to {words[index + 1]}")
    words[index + 1] = str(out)
    if append and "--append" not in words:
        words.append("--append")
    return " ".join(shlex.quote(w) for w in words)


def merge(out: Path, parts: list[Path], append: bool = False) -> list[Path]:
    """Write the joined table into `out` (replacing what is there, or adding to it with `append`);
    returns the parts used. Every part is read before `out` changes: a damaged one (`InputError` naming its
    results.json) leaves `out` as it was."""
    done = [p for p in parts if (p / "results.json").is_file() and (p / "run.json").is_file()]
    read = [(part, read_rows(part / "results.json"), json.loads((part / "run.json").read_text())) for part in done]
    if not append:
        for name in REPORT_FILES:
            (out / name).unlink(missing_ok=True)
    for part, rows, run in read:
        run["command"] = canonical_command(run["command"], part, out, append=(out / "results.json").is_file())
        rows, run = merge_runs(out, rows, run)
        write_reports(out, rows, run)
    return done


def main(argv: list[str]) -> int:
    append = argv[:1] == ["--append"]
    argv = argv[1:] if append else argv
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    out, parts = Path(argv[0]), [Path(p) for p in argv[1:]]
    out.mkdir(parents=True, exist_ok=True)
    try:
        done = merge(out, parts, append)
    except DtmrError as error:
        print(error, file=sys.stderr)
        return 1
    for part in parts:
        print(f"{part}: {'merged' if part in done else 'no results (skipped)'}", file=sys.stderr)
    return 0 if done else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
