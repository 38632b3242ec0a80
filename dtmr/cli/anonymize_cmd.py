"""`dtmr anonymize INPUT --model CKPT [--references LIB] [--seed S] -o OUT.h5`: a clip file or a whole library,
resumable (see dtmr/anonymize_library.py)."""

from __future__ import annotations

import argparse
import sys


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("anonymize", help="anonymize a clip file or library with a checkpoint (resumable)")
    p.add_argument("input", help=".skeleton file or folder, .npz data set or .h5 library")
    p.add_argument("--model", required=True, help="checkpoint (DisentangledTMR, DMR, PMR, ...)")
    p.add_argument("--references", help="where references are drawn from (default: INPUT itself)")
    p.add_argument("--seed", type=int, default=0, help="seed of the reference draws")
    p.add_argument("--device", help="cpu or cuda (default: CUDA when available)")
    p.add_argument("-o", "--output", required=True, help="output .h5 library")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..anonymize_library import anonymize_source

    tty = sys.stderr.isatty()

    def progress(done: int, total: int) -> None:
        if tty:
            width = 30
            filled = width * done // total
            print(f"\ranonymizing [{'#' * filled}{'.' * (width - filled)}] {done}/{total}", end="",
                  file=sys.stderr, flush=True)

    out = anonymize_source(args.input, args.model, args.output, references=args.references, seed=args.seed,
                           device=args.device, progress=progress)
    if tty:
        print(file=sys.stderr)
    print(f"wrote {out}")
    return 0
