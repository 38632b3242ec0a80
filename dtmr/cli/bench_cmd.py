"""`dtmr bench <what>`: performance measurements; every module of `dtmr.bench` adds one <what>."""

from __future__ import annotations

import importlib
import pkgutil

from .. import bench


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "bench", help="measure performance", description="Measure performance; see docs/ for reported figures."
    )
    whats = parser.add_subparsers(dest="bench_command", metavar="WHAT", required=True)
    for info in sorted(pkgutil.iter_modules(bench.__path__), key=lambda m: m.name):
        if not info.name.startswith("_"):
            importlib.import_module(f"{bench.__name__}.{info.name}").register(whats)
