"""The `dtmr` command.

Every `dtmr/cli/<name>_cmd.py` module adds one sub-command through `register(subparsers)`; the command's
work is imported lazily inside its handler so that `dtmr data info` does not pay for importing torch.
Errors the library raises on purpose (`DtmrError`) and file-system errors become one line on stderr and
exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
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


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except DtmrError as exc:
        print(f"dtmr: error: {exc}", file=sys.stderr)
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"dtmr: error: {where}{exc.strerror or exc}", file=sys.stderr)
    except KeyboardInterrupt:
        print("dtmr: interrupted", file=sys.stderr)
        return 130
    return 2
