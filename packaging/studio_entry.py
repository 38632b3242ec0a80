"""Entry point of the frozen `dtmr-studio` executable (packaging/dtmr_studio.spec).

`dtmr-studio [PATH]` is `app.main:main`. The Studio's Trainer tab starts a run as
`sys.executable -m dtmr train ...`, or `sys.executable -m torch.distributed.run ... -m dtmr train ...` on
several GPUs, whose workers are started as `sys.executable -u -m dtmr ...`; every library open starts the
HDF5 probe as `sys.executable -m dtmr.io.hdf5_probe`, and every C3D file is read by `sys.executable -m
dtmr.io.c3d_child` (dtmr/io/c3d_file.py). In a frozen build
`sys.executable` is this program, so it also serves exactly those `python [-u] -m MODULE ARGS` calls.
"""

from __future__ import annotations

import multiprocessing
import runpy
import sys

#: the modules this program runs the way `python -m MODULE` does (the HDF5 probe: dtmr/io/hdf5_watchdog.py; the
#: C3D reader's child: dtmr/io/c3d_file.py)
RUNNABLE_MODULES = ("dtmr", "torch.distributed.run", "dtmr.io.hdf5_probe", "dtmr.io.c3d_child")


def module_invocation(argv: list[str]) -> tuple[str, list[str], bool] | None:
    """(module, its arguments, unbuffered) when `argv` (without the program) is `[-u] -m MODULE ARGS` for
    one of RUNNABLE_MODULES, else None (the Studio's own command line)."""
    unbuffered = argv[:1] == ["-u"]
    args = argv[1:] if unbuffered else argv
    if len(args) >= 2 and args[0] == "-m" and args[1] in RUNNABLE_MODULES:
        return args[1], args[2:], unbuffered
    return None


def main() -> int:
    invocation = module_invocation(sys.argv[1:])
    if invocation is None:
        from app.main import main as studio_main

        return studio_main()
    module, arguments, unbuffered = invocation
    if unbuffered:
        sys.stdout.reconfigure(write_through=True)
        sys.stderr.reconfigure(write_through=True)
    sys.argv = [sys.argv[0], *arguments]
    runpy.run_module(module, run_name="__main__", alter_sys=True)
    return 0


if __name__ == "__main__":
    multiprocessing.freeze_support()  # the Studio's model jobs run in spawned children (app/workers/process_job.py)
    sys.exit(main())
