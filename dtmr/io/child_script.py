"""How to start one of `dtmr.io`'s child scripts (the HDF5 probe, the C3D reader) in its own process.

The module's file is run as a script, not as `-m dtmr.io.NAME`: importing the `dtmr` package would add about
0.1 s to every start. The working folder is taken off `sys.path` first (`run_path` never puts the script's own
folder there). A frozen build has no script files: its executable runs the module (packaging/*_entry.py).
"""

from __future__ import annotations

import sys
from pathlib import Path


def child_command(name: str) -> list[str]:
    """The command line that runs `dtmr/io/NAME.py` as `__main__` (arguments to be appended)."""
    if getattr(sys, "frozen", False):
        return [sys.executable, "-m", f"dtmr.io.{name}"]
    script = str(Path(__file__).with_name(f"{name}.py"))
    run = f"import runpy, sys; sys.path.pop(0); runpy.run_path({script!r}, run_name='__main__')"
    return [sys.executable, "-c", run]
