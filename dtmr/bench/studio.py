"""`dtmr bench studio`: the Studio's frame update time and longest event-loop stall while a model runs.

The library never imports Qt: the measurement runs in a child process, `python -m app.bench`, and this
command prints what it prints. Without a display (no DISPLAY or WAYLAND_DISPLAY) the child runs under
`xvfb-run` when that exists. Figures are for the machine that runs them; docs/studio.md keeps the
measured ones with the command.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from ..errors import DtmrError

XVFB_SCREEN = "-screen 0 1920x1080x24"


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "studio", help="Studio: time to update the three 3-D views for one frame; longest UI stall during inference",
    )
    parser.add_argument("--json", action="store_true", help="print the results as one JSON object")
    parser.add_argument("--frames", type=int, default=150, metavar="N", help="frames timed (default 150)")
    parser.add_argument("--seconds", type=float, default=5.0, metavar="S",
                        help="seconds of inference for the stall measurement (default 5)")
    parser.set_defaults(func=run)


def bench_command(args, environment: dict[str, str]) -> list[str]:
    """The child's command line: `python -m app.bench ...`, under xvfb-run when there is no display."""
    command = [sys.executable, "-m", "app.bench", "--frames", str(args.frames), "--seconds", str(args.seconds)]
    if args.json:
        command.append("--json")
    has_display = environment.get("DISPLAY") or environment.get("WAYLAND_DISPLAY")
    if not has_display:
        xvfb = shutil.which("xvfb-run")
        if xvfb is None:
            raise DtmrError("dtmr bench studio needs a display, or xvfb-run to make one (apt install xvfb)")
        command = [xvfb, "-a", "-s", XVFB_SCREEN, *command]
    return command


def run(args) -> int:
    root = str(Path(__file__).resolve().parents[2])  # the folder holding the dtmr and app packages
    environment = dict(os.environ)
    environment["PYTHONPATH"] = os.pathsep.join(p for p in (root, environment.get("PYTHONPATH", "")) if p)
    completed = subprocess.run(bench_command(args, environment), env=environment, stdout=subprocess.PIPE,
                               text=True, check=False)
    sys.stdout.write(completed.stdout)
    if completed.returncode != 0:
        raise DtmrError(f"the Studio benchmark (python -m app.bench) failed with exit status {completed.returncode}")
    return 0
