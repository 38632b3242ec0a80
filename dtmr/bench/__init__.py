"""Performance measurements, one module per `dtmr bench <what>`.

Each module defines `register(subparsers)`, adding its sub-command with `set_defaults(func=...)`;
`dtmr/cli/bench_cmd.py` discovers them. Modules import heavy dependencies (torch, h5py) inside their
handlers, since every module is imported whenever the `dtmr` parser is built. The Studio's benchmark is the
app's (`python -m app.bench`); `dtmr bench studio` only hands over to it (`dtmr/cli/bench_cmd.py`).
"""
