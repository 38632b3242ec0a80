"""Entry point of the frozen `dtmr` command-line executable, built next to `dtmr-studio`.

Every library open starts the HDF5 probe as `sys.executable -m dtmr.io.hdf5_probe`
(dtmr/io/hdf5_watchdog.py), and every C3D file is read by `sys.executable -m dtmr.io.c3d_child`
(dtmr/io/c3d_file.py); in a frozen build `sys.executable` is this program, so it serves those calls too.
"""

import runpy
import sys

from dtmr.cli import main

PROBE = "dtmr.io.hdf5_probe"
#: the child processes dtmr starts with `sys.executable -m MODULE`
CHILDREN = (PROBE, "dtmr.io.c3d_child")

if __name__ == "__main__":
    if sys.argv[1:2] == ["-m"] and sys.argv[2:3] and sys.argv[2] in CHILDREN:
        module = sys.argv[2]
        sys.argv = [sys.argv[0], *sys.argv[3:]]
        runpy.run_module(module, run_name="__main__", alter_sys=True)
        sys.exit(0)
    sys.exit(main())
