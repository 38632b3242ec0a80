"""The `dtmr` command.

Every `dtmr/cli/<name>_cmd.py` module adds one sub-command through `register(subparsers)`; the command's
work is imported lazily inside its handler so that `dtmr data info` does not pay for importing torch.
Errors the library raises on purpose (`DtmrError`) and file-system errors become one line on stderr and
exit status 2, never a traceback. A reader that stops early (`dtmr data info X --json | head -c 10`) ends
the command quietly with status 141 (128 + SIGPIPE), what a shell reports for any Unix tool killed by a
closed pipe, so `set -o pipefail` scripts see it as they see the others: stdout is pointed at os.devnull,
as the Python documentation advises, so that the interpreter's last flush does not fail again.
"""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import sys

from .. import __version__
from ..errors import DtmrError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dtmr", description="DTMR Studio: privacy-preserving skeleton motion retargeting.")
    parser.add_argument("--version", action="version", version=f"dtmr {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.endswith("_cmd"):
            importlib.import_module(f"{__name__}.{info.name}").register(sub)
    return parser


#: the exit status after a closed stdout pipe: 128 + SIGPIPE, as a shell reports a tool killed by the signal
EXIT_BROKEN_PIPE = 141


def main(argv: list[str] | None = None) -> int:
    try:
        return _run(argv)
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE


def _run(argv: list[str] | None) -> int:
    try:
        args = build_parser().parse_args(argv)
    except SystemExit:
        sys.stdout.flush()  # --help / --version: a closed pipe shows here, not in the interpreter's last flush
        raise
    try:
        status = int(args.func(args) or 0)
        sys.stdout.flush()
        return status
    except BrokenPipeError:
        raise
    except DtmrError as exc:
        print(f"dtmr: error: {exc}", file=sys.stderr)
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"dtmr: error: {where}{exc.strerror or exc}", file=sys.stderr)
    except KeyboardInterrupt:
        print("dtmr: interrupted", file=sys.stderr)
        return 130
    return 2
