"""`dtmr anonymize INPUT (--model CKPT | --method raw|noise|naive) -o OUT.h5`: a clip file or a whole library
into a release and its key `OUT.key.json`, resumable (see dtmr/release/anonymize.py); `--workers N` or `torchrun`
for several processes (dtmr/release/distributed.py, docs/scale.md)."""

from __future__ import annotations

import argparse
import contextlib

from ..argtypes import attacker_epochs, positive_int
from ..methods import names
from ..models.precision import PRECISIONS
from ..terminal import Progress


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("anonymize", help="anonymize a clip file or library into a release and its key (resumable)",
                       description="Writes the release OUT.h5 (no subject, source name or path, shuffled, opaque "
                                   "ids R000001...) and its key OUT.key.json (mode 0600: it re-identifies every "
                                   "clip; keep it, never publish it).")
    p.add_argument("input", help=".skeleton file or folder, .npz data set or .h5 library")
    how = p.add_mutually_exclusive_group(required=True)
    how.add_argument("--model", help="checkpoint (DisentangledTMR, DMR, PMR, ...)")
    how.add_argument("--method", choices=names("parameter-free"),
                     help="a parameter-free method instead of a checkpoint (raw: the clips unchanged)")
    p.add_argument("--references", help="where references are drawn from (default: INPUT itself)")
    p.add_argument("--seed", type=int, default=0, help="seed of the reference draws (not of the clip order)")
    p.add_argument("--keep", default="", metavar="view,repetition",
                   help="identifying columns to leave in the release (default: none)")
    p.add_argument("--length", default=None, metavar="N|keep",
                   help="resample every released clip to N frames (default: the model's 64); 'keep' leaves each "
                        "clip its source's frame count, which links it to its source (the audit fails it)")
    p.add_argument("--keep-placement", action="store_true",
                   help="leave the clips where their sources stood in camera space (default: level floor at y = 0, "
                        "first frame's root above the origin, facing a fixed way); the position in the room links "
                        "clips to their source and session, and the audit fails such a release")
    p.add_argument("--keep-missing", action="store_true",
                   help="leave the source's missing joints as NaN (default: filled by interpolation in time); the "
                        "pattern links clips to their source, and the audit fails such a release")
    p.add_argument("--max-risk", metavar="2x|15%",
                   help="release at the most useful setting whose full audit (dtmr audit, INPUT as the raw clips) "
                        "re-identifies at most this multiple of chance or rate: a k-same file's k, then larger k; "
                        "no release when none does (docs/privacy.md; minutes per setting: docs/audit.md)")
    p.add_argument("--audit-split", metavar="NAME",
                   help="with --max-risk: audit each setting on this named split, one fold (default: 3 folds "
                        "by repetition, view or subject, three times the cost)")
    p.add_argument("--audit-epochs", type=attacker_epochs, metavar="N|NAME=N,...",
                   help="with --max-risk: the audit's neural attackers' epochs (as dtmr audit --epochs)")
    p.add_argument("--with-provenance", action="store_true",
                   help="write the internal, un-scrubbed library (source order, names, subjects, provenance), "
                        "marked as such; never publish it")
    p.add_argument("--overwrite", action="store_true",
                   help="replace an existing release and key, or another file a user keeps (never an input)")
    p.add_argument("--device", help="cpu or cuda (default: CUDA when available)")
    p.add_argument("--workers", type=positive_int, default=1, metavar="N",
                   help="processes on this machine, one torch thread each (default 1); under torchrun leave it "
                        "out: every rank takes part (docs/scale.md)")
    p.add_argument("--chunk", type=positive_int, default=None, metavar="N",
                   help="clips per part, the unit of work and of resuming (default 64; on a GPU, thousands, so "
                        "that model batches can be large)")
    p.add_argument("--batch", default="auto", metavar="auto|N",
                   help="clips per model batch, at most a chunk (default auto: 32 on the CPU, what fits in a "
                        "GPU's free memory)")
    p.add_argument("--precision", choices=PRECISIONS, default="fp32",
                   help="bf16: the model under bf16 autocast, on a CUDA device only (default fp32)")
    p.add_argument("--cuda-graph", action="store_true",
                   help="replay a DisentangledTMR's 64-step decode from a CUDA graph (CUDA only)")
    p.add_argument("-o", "--output", required=True, help="output .h5 release")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..errors import DtmrError
    from ..release.anonymize import anonymize_source
    from ..release.distributed import is_main_process
    from ..release.key import key_path_for
    from ..release.options import ReleaseOptions, parse_batch, parse_keep, parse_length

    options = ReleaseOptions(keep=parse_keep(args.keep), length=parse_length(args.length),
                             with_provenance=args.with_provenance, keep_placement=args.keep_placement,
                             keep_missing=args.keep_missing)
    batch = parse_batch(args.batch)
    if args.max_risk is None and (args.audit_split or args.audit_epochs):
        raise DtmrError("--audit-split and --audit-epochs choose the audits of --max-risk: give --max-risk too")
    if args.max_risk is not None:
        return _run_to_risk(args, options, batch)
    main = is_main_process()  # under torchrun, rank 0 draws the one bar and reports
    with Progress("anonymizing") if main else contextlib.nullcontext() as progress:
        out = anonymize_source(args.input, args.output, model=args.model, method=args.method,
                               references=args.references, seed=args.seed, device=args.device, options=options,
                               overwrite=args.overwrite, progress=progress, chunk=args.chunk,
                               workers=args.workers, batch=batch, precision=args.precision,
                               cuda_graph=args.cuda_graph)
    if not main:
        return 0
    what = "internal library WITH PROVENANCE (not for publication)" if args.with_provenance else "release"
    print(f"wrote {what} {out}")
    print(f"wrote its key {key_path_for(out)} (private: it re-identifies every clip; do not publish it)")
    return 0


def _run_to_risk(args: argparse.Namespace, options, batch) -> int:
    """`--max-risk`: the ladder of settings, each released and audited (dtmr/audit/risk_target.py)."""
    import sys

    from ..audit.risk_target import RiskTarget, anonymize_to_risk
    from ..audit.suite import AuditSettings
    from ..errors import DtmrError
    from ..parallel import Workers, worker_devices
    from ..release.distributed import torchrun_world_size
    from ..release.key import key_path_for
    from ..train.distributed import pick_device

    target = RiskTarget.parse(args.max_risk)
    if torchrun_world_size() > 1:
        raise DtmrError("--max-risk audits each setting in this process: run it without torchrun")
    if args.with_provenance:
        raise DtmrError("--max-risk makes a release: --with-provenance is for internal libraries")

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    device = pick_device(args.device)
    settings = AuditSettings(device=str(device), split=args.audit_split, epochs=args.audit_epochs)
    audit_workers = Workers(args.workers, 1, tuple(worker_devices(args.device, device, args.workers)))
    outcome = anonymize_to_risk(args.input, args.output, target, model=args.model, method=args.method,
                                audit_settings=settings, audit_workers=audit_workers, log=log, references=args.references, seed=args.seed,
                                device=args.device, options=options, chunk=args.chunk, workers=args.workers,
                                batch=batch, precision=args.precision, cuda_graph=args.cuda_graph)
    print(f"wrote release {args.output} at {outcome['setting']}, the first setting whose audit meets {target}")
    for row in outcome["tried"]:
        print(f"  {row['setting']}: worst case {row['worst']}, {row['figure']:.2f}"
              f"{'x chance' if target.unit == 'x' else ' %'}; {row['utility']}")
    print(f"wrote its key {key_path_for(args.output)} (private: it re-identifies every clip; do not publish it)")
    print(f"wrote its audit {outcome['audit']}")
    return 0

