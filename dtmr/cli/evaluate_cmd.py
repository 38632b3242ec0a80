"""`dtmr evaluate`: the privacy/utility protocol of DESIGN §5 on a split, for checkpoints and baselines.

Writes OUT/results.json (a list of rows), OUT/results.md, OUT/tradeoff.png and OUT/run.json; with --append
the new rows join those already in OUT (same data, settings and evaluators). Evaluators
come from --recognizers DIR (action.pt, subject.pt) or are trained into OUT/recognizers/. DMR and PMR rows
use a --model checkpoint of that method, or are trained into OUT/models/<method>/ on a CPU-sized schedule
(--baseline-epochs).
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from ..argtypes import positive_int
from ..methods import DMR, PMR, names

#: the baselines trained here when no checkpoint of theirs is given
TRAINED_BASELINES = (DMR.name, PMR.name)
BASELINES = (*names("parameter-free"), *TRAINED_BASELINES)
#: a tenth of the public schedules (PMR 295 epochs, DMR 225), enough to converge on the small data sets here
CPU_BASELINE_EPOCHS = {PMR.name: (1, 2, 2, 5, 10, 10), DMR.name: (1, 2, 10, 10)}


def _baselines(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    bad = [n for n in names if n not in BASELINES]
    if bad:
        raise argparse.ArgumentTypeError(f"unknown baseline(s) {', '.join(bad)} (known: {', '.join(BASELINES)})")
    return names


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("evaluate", help="privacy/utility evaluation of models and baselines on a split")
    p.add_argument("--data", required=True)
    p.add_argument("--split", required=True)
    p.add_argument("--model", action="append", default=[], help="a checkpoint (repeat for several)")
    p.add_argument("--baselines", type=_baselines, default=list(names("parameter-free")),
                   help=f"comma-separated: {','.join(BASELINES)} (default {','.join(names('parameter-free'))})")
    p.add_argument("--recognizers", help="folder with the raw-trained action.pt and subject.pt evaluators")
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--out", required=True)
    p.add_argument("--recognizer-epochs", type=int, default=60, help="epochs of the evaluators when trained here")
    p.add_argument("--retrain-epochs", type=int, default=30,
                   help="epochs of the retrained AR model and of the adaptive attacker")
    p.add_argument("--no-retrain", action="store_true", help="skip retrained AR and the adaptive attacker")
    p.add_argument("--retrain-per-seed", action="store_true",
                   help="retrain those two models for every seed (default: once per method, on seed 0's references)")
    p.add_argument("--baseline-epochs", action="append", default=[], metavar="METHOD=E1,E2,...",
                   help="epochs per stage when DMR/PMR are trained here (default: a tenth of the public schedule)")
    p.add_argument("--device", help="cpu, cuda or cuda:N for the models, the evaluators and the retraining "
                                    "(default: CUDA when available)")
    p.add_argument("--workers", type=positive_int, default=1, metavar="N",
                   help="compute the methods' cells (a method and the seeds that share its retrained models) in "
                        "N processes; the results equal a one-process run's (docs/evaluation.md, Parallel runs)")
    p.add_argument("--threads-per-worker", type=positive_int, default=1, metavar="T",
                   help="torch threads of each worker process (with --workers)")
    p.add_argument("--append", action="store_true",
                   help="add these rows to the evaluation in --out, if there is one (same data, settings and "
                        "evaluators); a row of the same method, beta and checkpoint is replaced")
    p.set_defaults(func=run)


def _baseline_epochs(items: list[str]) -> dict[str, tuple[int, ...]]:
    from ..errors import DtmrError

    out = dict(CPU_BASELINE_EPOCHS)
    for item in items:
        method, _, values = item.partition("=")
        if method not in out:
            raise DtmrError(f"--baseline-epochs: unknown method {method!r} ({' or '.join(TRAINED_BASELINES)})")
        try:
            out[method] = tuple(int(v) for v in values.split(","))
        except ValueError:
            raise DtmrError(f"--baseline-epochs: expected {method}=E1,E2,..., got {item!r}") from None
    return out


def run(args: argparse.Namespace) -> int:
    import torch

    from ..errors import DtmrError
    from ..eval.cells import EvalJob, evaluate
    from ..eval.methods import EvalMethod, checkpoint_method
    from ..eval.protocol import EvalSettings, chance_levels, ensure_evaluators
    from ..eval.report import merge_runs, write_reports
    from ..methods import order
    from ..parallel import Workers, worker_devices
    from ..train.baseline_trainer import BaselineTrainer
    from ..train.data import load_training_data
    from ..train.distributed import DistributedContext, pick_device

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    if args.seeds < 1:
        raise DtmrError("--seeds must be at least 1")
    torch.manual_seed(0)
    out = Path(args.out)
    device = pick_device(args.device)
    data = load_training_data(args.data, args.split)
    log(f"{args.data}: {len(data.train)} train / {len(data.test)} test clips ({data.topology})")
    recognizers = Path(args.recognizers) if args.recognizers else out / "recognizers"
    evaluators = ensure_evaluators(data, recognizers, args.recognizer_epochs, log, device)
    checkpoints = [checkpoint_method(path, device) for path in args.model]
    free = names("parameter-free")
    methods = [EvalMethod(name) for name in args.baselines if name in free]
    epochs = _baseline_epochs(args.baseline_epochs)
    for name in TRAINED_BASELINES:
        if name in args.baselines and not any(m.method == name for m in checkpoints):
            folder = out / "models" / name
            log(f"training {name.upper()} on {args.split} ({sum(epochs[name])} epochs) -> {folder}")
            path = BaselineTrainer(name, data, folder, DistributedContext(device=device), epochs=epochs[name]).run()
            checkpoints.append(checkpoint_method(path, device))
    methods = sorted(methods + checkpoints, key=lambda m: (order(m.method), m.beta or 0.0))
    if not methods:
        raise DtmrError("nothing to evaluate: give --model and/or --baselines")
    for m in methods:
        if m.method not in free and m.anonymizer.topology.name != data.topology:
            raise DtmrError(f"{m.checkpoint}: a {m.anonymizer.topology.name} model cannot anonymize "
                            f"{data.topology} clips of {args.data}")
    settings = EvalSettings(seeds=args.seeds, recognizer_epochs=args.recognizer_epochs,
                            retrain_epochs=args.retrain_epochs, retrain=not args.no_retrain,
                            retrain_per_seed=args.retrain_per_seed)
    run_info = {
        "command": "dtmr evaluate " + " ".join(shlex.quote(a) for a in _argv_of(args)),
        "settings": vars(settings),
        "evaluator_epochs": {e.task: e.training_epochs for e in evaluators},
        "evaluator_weights": {e.task: e.weights_fingerprint() for e in evaluators},
        "data": data.describe(),
        "chance": chance_levels(data),
        "device": str(device),
    }
    if args.append:
        merge_runs(out, [], run_info)  # a mismatch fails now rather than after hours of evaluation
    job = EvalJob(args.data, args.split, str(recognizers), tuple((m.method, m.checkpoint) for m in methods), settings)
    workers = Workers(args.workers, args.threads_per_worker,
                      tuple(worker_devices(args.device, str(device), args.workers)))
    rows = evaluate(data, methods, evaluators, settings, log, str(device), workers, job)
    if args.append:
        rows, run_info = merge_runs(out, rows, run_info)
    write_reports(out, rows, run_info)
    log(f"wrote {out / 'results.json'}, {out / 'results.md'} and {out / 'tradeoff.png'}")
    return 0


def _argv_of(args: argparse.Namespace) -> list[str]:
    """The options of `args` as a command line that reproduces the run."""
    argv = ["--data", args.data, "--split", args.split]
    for m in args.model:
        argv += ["--model", m]
    argv += ["--baselines", ",".join(args.baselines), "--seeds", str(args.seeds), "--out", args.out]
    if args.recognizers:
        argv += ["--recognizers", args.recognizers]
    else:
        argv += ["--recognizer-epochs", str(args.recognizer_epochs)]
    argv += ["--retrain-epochs", str(args.retrain_epochs)]
    if args.no_retrain:
        argv.append("--no-retrain")
    if args.retrain_per_seed:
        argv.append("--retrain-per-seed")
    argv += [f"--baseline-epochs={item}" for item in args.baseline_epochs]
    if args.device:
        argv += ["--device", args.device]
    if args.workers > 1:
        argv += ["--workers", str(args.workers), "--threads-per-worker", str(args.threads_per_worker)]
    if args.append:
        argv.append("--append")
    return argv
