"""`dtmr train` (DisentangledTMR, DMR, PMR) and `dtmr train-recognizer` (SGN evaluators).

Progress goes to `OUT/events.jsonl` always, and either to stderr as a progress bar or, with `--events -`,
to stdout as JSON lines (what the Studio's trainer tab reads). `torchrun --nproc_per_node N -m dtmr train
...` trains DisentangledTMR on N processes.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from pathlib import Path

from ..argtypes import parse_loss_weight
from ..methods import DTMR
from ..models.precision import PRECISIONS
from ..train.presets import (
    BASELINE,
    BETAS,
    DEFAULT_BETA,
    DEFAULT_PRESET,
    DEFAULT_SEED,
    MAX_BATCH,
    MAX_DEFAULT_QUADRUPLETS,
    MAX_QUADRUPLETS,
    PRESETS,
    TRAINABLE_METHODS,
)

EVENTS_FILE = "events.jsonl"


def _ints(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None
    if any(v < 0 for v in values):
        raise argparse.ArgumentTypeError("epochs cannot be negative")
    return values


def _bounded_int(maximum: int):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if not 1 <= value <= maximum:
            raise argparse.ArgumentTypeError(f"must be 1 to {maximum:,}, got {value:,}")
        return value

    return parse


def _model_option(text: str) -> tuple[str, object]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    try:
        return key, json.loads(value)
    except json.JSONDecodeError:
        return key, value


def _common(p: argparse.ArgumentParser, batch_help: str, lr_help: str) -> None:
    p.add_argument("--data", required=True, help="an .h5 library, .npz data set, .skeleton file or folder")
    p.add_argument("--split", required=True, help="named split (nwucla, uiprmd, ntu_cv, ntu_cs, synthetic)")
    p.add_argument("--batch", type=_bounded_int(MAX_BATCH), help=f"{batch_help}; at most {MAX_BATCH}")
    p.add_argument("--lr", type=float, help=lr_help)
    p.add_argument("--device", help="cpu, cuda or cuda:N (default: CUDA when available)")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"(default {DEFAULT_SEED})")
    p.add_argument("--resume", action="store_true", help="continue the run in --out from its last epoch")
    p.add_argument("--overwrite", action="store_true",
                   help="train into --out even if it holds files that are not a training run's")
    p.add_argument("--events", choices=["-"], help="'-': write progress events to stdout as JSON lines")


def register(sub: argparse._SubParsersAction) -> None:
    by_preset = "; ".join(f"{p.name} {','.join(map(str, p.epochs))} epochs at {p.base_lr:g}, batch {p.batch}"
                          for p in PRESETS.values())
    p = sub.add_parser("train", help="train DisentangledTMR (or the DMR/PMR baselines) on a split")
    _common(p, f"quadruplets per step (DisentangledTMR; default: the preset's) or clips per step (DMR/PMR; "
               f"default {BASELINE.batch})",
            f"base learning rate (default: the preset's for DisentangledTMR, {BASELINE.lr:g} for DMR/PMR)")
    p.add_argument("--out", required=True, help="output folder (model.pt, train_state.pt, events.jsonl)")
    p.add_argument("--method", choices=TRAINABLE_METHODS, default=TRAINABLE_METHODS[0])
    p.add_argument("--preset", choices=list(PRESETS), default=DEFAULT_PRESET,
                   help=f"DisentangledTMR's sizes and schedule (default {DEFAULT_PRESET}): {by_preset}")
    p.add_argument("--beta", type=float, default=DEFAULT_BETA,
                   help=f"partial-retargeting ratio, fixed for the model (default {DEFAULT_BETA:g}; "
                        f"the project trains {', '.join(f'{b:g}' for b in BETAS)})")
    p.add_argument("--epochs", type=_ints,
                   help="epochs per stage, e.g. 20,15,20 (default: the preset's; DMR 4 and PMR 6 stages, "
                        "default: their public schedule)")
    p.add_argument("--quadruplets", type=_bounded_int(MAX_QUADRUPLETS),
                   help=f"quadruplets per epoch (DisentangledTMR default: 2x the training clips, at most "
                        f"{MAX_DEFAULT_QUADRUPLETS:,}; DMR/PMR: the training clips); at most {MAX_QUADRUPLETS:,}")
    p.add_argument("--topology", help="train on this joint set (ntu25 maps other sets to it)")
    p.add_argument("--init", metavar="CHECKPOINT",
                   help="start from this checkpoint's weights (fine-tuning): one of --method's and the data's "
                        "topology, with the same preset and model options; everything else is this run's own")
    p.add_argument("--model-option", type=_model_option, action="append", default=[], metavar="KEY=VALUE",
                   help="override a DTMRConfig field of the preset, e.g. decoder_layers=2 (JSON values)")
    p.add_argument("--loss-weight", type=parse_loss_weight, action="append", default=[], metavar="TERM=W",
                   help="replace a loss term's published weight in every stage that uses it, "
                        "e.g. output_identity_adversary=2 (DisentangledTMR; terms: docs/losses.md)")
    p.add_argument("--output-adversary-lr", type=float, metavar="X",
                   help="learning rate of the output identity adversary in stage 3 (and stage 2 with "
                        "--warm-output-critics); default: the stage's (DisentangledTMR)")
    p.add_argument("--warm-output-critics", action="store_true",
                   help="also train the output action classifier, output identity adversary and sequence "
                        "discriminator in stage 2, so they are not at chance when stage 3 starts (DisentangledTMR)")
    p.add_argument("--precision", choices=PRECISIONS, default="fp32",
                   help="bf16: the forward passes and losses run under bfloat16 autocast on the run's device, the "
                        "weights stay float32; for a GPU (CUDA). The CPU's autocast works too (what the tests "
                        "check); keep fp32 there (default fp32; DisentangledTMR; docs/training.md)")
    p.add_argument("--stage1-cache", metavar="DIR",
                   help="keep the state at the end of stage 1 in DIR, and start from it when a training of the "
                        "same seed, data and settings but β and the residual stored it there: stage 1 reads "
                        "neither, so the model is the same, sooner (DisentangledTMR)")
    p.set_defaults(func=run_train)

    r = sub.add_parser("train-recognizer", help="train an SGN action or subject recognizer on a split")
    _common(r, "clips per step", "learning rate")
    r.add_argument("--task", choices=["action", "subject"], required=True)
    r.add_argument("--out", required=True, help="output folder (<task>.pt, train_state.pt, events.jsonl)")
    r.add_argument("--epochs", type=int, help="epochs (default 60)")
    r.set_defaults(func=run_train_recognizer)


def _events(out: Path, to_stdout: bool):
    from ..train.progress import EventWriter, ProgressBar

    class _CliEvents(EventWriter):
        """The log file, plus stdout JSON lines or a progress bar on stderr."""

        def __init__(self) -> None:
            super().__init__(out / EVENTS_FILE)
            self.stdout = EventWriter(sys.stdout) if to_stdout else None
            self.bar = None if to_stdout else ProgressBar(sys.stderr)

        def write(self, event) -> None:
            super().write(event)
            if self.stdout is not None:
                self.stdout.write(event)
            else:
                self.bar.handle(event)

    out.mkdir(parents=True, exist_ok=True)
    return _CliEvents()


@contextlib.contextmanager
def _training_session(args: argparse.Namespace):
    """The process group (under torchrun) and, on the main process, the event writers; both closed after."""
    from ..train.distributed import init_distributed, shutdown_distributed

    ctx = init_distributed(args.device)
    events = None
    try:
        if ctx.is_main:
            events = _events(Path(args.out), args.events == "-")
        yield ctx, events
    finally:
        if events is not None:
            events.close()
        shutdown_distributed()
    if ctx.is_main and args.events != "-":
        print(f"wrote {args.out}")
    if ctx.world_size > 1:
        _leave_without_teardown()


def _leave_without_teardown() -> None:
    """End a `torchrun` process once everything is written, without freeing the trainer.

    Freeing a DistributedDataParallel model frees its gloo process group, whose destructor joins the
    group's worker thread while holding the GIL; if that thread is still releasing a finished collective
    whose tensors Python created (the loss all-reduce, the global BatchNorm), it waits for the GIL, and
    neither moves again (seen on 2026-12-01: rank 0 of the two-process test alive 15 minutes after its
    "done" event). Nothing is left to free that matters once the checkpoint and the events are on disk."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _check_out(args: argparse.Namespace) -> None:
    """Before any work: --out is a new or empty folder or a training run's, and holds none of the data."""
    from ..io.outputs import check_output

    init = [args.init] if getattr(args, "init", None) else []  # `dtmr train --init`: never written over either
    check_output(args.out, kind="training-run", folder=True, inputs=[args.data, *init], overwrite=args.overwrite)


def run_train(args: argparse.Namespace) -> int:
    from ..errors import DtmrError
    from ..train.data import load_training_data

    _check_out(args)
    if args.init and (args.resume or args.stage1_cache):
        raise DtmrError("--init starts a new run from a checkpoint's weights; it cannot be combined with --resume "
                        "(which continues a run) or --stage1-cache (whose stored stage 1 would replace them)")
    with _training_session(args) as (ctx, events):
        data = load_training_data(args.data, args.split, args.topology)
        if args.method == DTMR.name:
            from ..train.dtmr_trainer import DTMRTrainer, TrainConfig

            if args.epochs is not None and len(args.epochs) != 3:
                raise DtmrError("DisentangledTMR has 3 stages: give --epochs a,b,c")
            config = TrainConfig(data=str(args.data), split=args.split, out=str(args.out), preset=args.preset,
                                 beta=args.beta, epochs=args.epochs, batch=args.batch or PRESETS[args.preset].batch,
                                 lr=args.lr, device=args.device, seed=args.seed, quadruplets_per_epoch=args.quadruplets,
                                 topology=args.topology, model_overrides=dict(args.model_option),
                                 loss_weights=dict(args.loss_weight),
                                 output_adversary_lr=args.output_adversary_lr,
                                 warm_output_critics=args.warm_output_critics, precision=args.precision)
            trainer = DTMRTrainer(config, data, ctx, events, resume=args.resume, stage1_cache_dir=args.stage1_cache)
        else:
            from ..train.baseline_trainer import BaselineTrainer

            if args.loss_weight or args.output_adversary_lr is not None or args.warm_output_critics \
                    or args.stage1_cache or args.precision != "fp32":
                raise DtmrError("--loss-weight, --output-adversary-lr, --warm-output-critics, --stage1-cache and "
                                "--precision apply to DisentangledTMR (--method dtmr) only")

            trainer = BaselineTrainer(args.method, data, args.out, ctx, epochs=args.epochs,
                                      batch=args.batch or BASELINE.batch, lr=args.lr or BASELINE.lr, seed=args.seed,
                                      quadruplets_per_epoch=args.quadruplets, events=events, resume=args.resume)
        if args.init:
            from ..train.init_weights import load_initial_weights

            copied = load_initial_weights(trainer.model, args.init, args.method, data.topology)
            trainer.initialized_from = Path(args.init).name
            if ctx.is_main and args.events != "-":
                print(f"starting from the weights of {args.init} ({copied} tensors)", file=sys.stderr, flush=True)
        trainer.run()
    return 0


def run_train_recognizer(args: argparse.Namespace) -> int:
    from ..train.data import load_training_data
    from ..train.recognizer_trainer import DEFAULT_BATCH, DEFAULT_EPOCHS, DEFAULT_LR, train_recognizer

    _check_out(args)
    with _training_session(args) as (ctx, events):
        data = load_training_data(args.data, args.split)
        labels = data.subject_labels if args.task == "subject" else data.action_labels
        names = [f"subject {s}" for s in labels] if args.task == "subject" else data.action_class_names()
        clips = data.train.clips
        targets = [c.subject if args.task == "subject" else c.action for c in clips]
        train_recognizer(args.task, clips, targets, labels, names, data.topology, args.out, ctx=ctx,
                         epochs=args.epochs or DEFAULT_EPOCHS, batch=args.batch or DEFAULT_BATCH,
                         lr=args.lr or DEFAULT_LR, seed=args.seed, events=events, resume=args.resume,
                         data_description=data.describe())
    return 0
