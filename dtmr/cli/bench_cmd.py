"""`dtmr bench <what>`: performance measurements; every module of `dtmr.bench` adds one <what>.

`dtmr bench studio` is the exception: it measures the Studio, which belongs to the app, and the library
never imports the app. The sub-command only hands over to the app's own program, `python -m app.bench`,
in a child process, when the app is installed beside the library (a source checkout or the wheel); that
program owns the measurement, its options' defaults and the virtual display it needs (docs/studio.md).
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import subprocess
import sys
from pathlib import Path

from .. import bench
from ..errors import DtmrError

#: the folder holding the dtmr package; the app, when installed, is its sibling package `app`
PACKAGES = Path(__file__).resolve().parents[2]


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "bench", help="measure performance", description="Measure performance; see docs/ for reported figures."
    )
    whats = parser.add_subparsers(dest="bench_command", metavar="WHAT", required=True)
    for info in sorted(pkgutil.iter_modules(bench.__path__), key=lambda m: m.name):
        if not info.name.startswith("_"):
            importlib.import_module(f"{bench.__name__}.{info.name}").register(whats)
    _register_studio(whats)


def _register_studio(whats) -> None:
    parser = whats.add_parser(
        "studio", help="Studio: time to update the three 3-D views for one frame; longest UI stall during inference "
                       "and while a library opens",
        description="Runs the Studio's benchmark, python -m app.bench (see its --help for the defaults).",
    )
    parser.add_argument("--json", action="store_true", help="print the results as one JSON object")
    parser.add_argument("--frames", type=int, metavar="N", help="frames timed")
    parser.add_argument("--seconds", type=float, metavar="S", help="seconds of inference for the stall measurement")
    parser.add_argument("--runs", type=int, metavar="N", help="inference runs to complete for the stall measurement")
    parser.add_argument("--open", metavar="PATH", help="the library the opening stall is measured on")
    parser.add_argument("--open-clips", type=int, metavar="N", help="clips of the synthetic library opened without --open")
    parser.set_defaults(func=run_studio)


def studio_arguments(args) -> list[str]:
    """The options given to `dtmr bench studio`, as `python -m app.bench` takes them."""
    out = ["--json"] if args.json else []
    for name in ("frames", "seconds", "runs", "open", "open_clips"):
        value = getattr(args, name)
        if value is not None:
            out += [f"--{name.replace('_', '-')}", str(value)]
    return out


def run_studio(args) -> int:
    if not (PACKAGES / "app" / "bench.py").is_file():
        raise DtmrError(f"dtmr bench studio measures the Studio, and the Studio (package app) is not installed "
                        f"beside the library in {PACKAGES}")
    environment = dict(os.environ)
    environment["PYTHONPATH"] = os.pathsep.join(p for p in (str(PACKAGES), environment.get("PYTHONPATH", "")) if p)
    sys.stdout.flush()
    command = [sys.executable, "-m", "app.bench", *studio_arguments(args)]
    return subprocess.run(command, env=environment, check=False).returncode
