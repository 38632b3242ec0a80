"""Entry point of the frozen `dtmr` command-line executable, built next to `dtmr-studio`.

Every library open starts the HDF5 probe as `sys.executable -m dtmr.io.hdf5_probe`
(dtmr/io/hdf5_watchdog.py); in a frozen build `sys.executable` is this program, so it serves that call too.
"""

import runpy
import sys

from dtmr.cli import main

PROBE = "dtmr.io.hdf5_probe"

if __name__ == "__main__":
    if sys.argv[1:3] == ["-m", PROBE]:
        sys.argv = [sys.argv[0], *sys.argv[3:]]
        runpy.run_module(PROBE, run_name="__main__", alter_sys=True)
        sys.exit(0)
    sys.exit(main())
