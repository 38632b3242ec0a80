"""`dtmr bench train`: seconds per optimizer step of every training stage, and what a schedule costs.

For planning runs (a GPU lease is minutes long; a CPU run can be a day): each method's trainer is built
exactly as `dtmr train` builds it, on the given data, and a few optimizer steps of each stage are timed
after one warm-up step. The projection is seconds per step × steps per epoch × the stage's epochs, for
the published schedules (DisentangledTMR's by preset, docs/training.md "Presets"; DMR 225 and PMR 295
epochs); the per-step figures scale to any other schedule.

DisentangledTMR's stages 2 and 3 draw teacher forcing per batch, and a teacher-forced batch decodes all
64 frames in one pass while a free-running one decodes them one by one, so the two are timed apart and
weighted by the schedule's mean probability (linear schedules: the mean of the start and end values).
"""

from __future__ import annotations

import argparse
import itertools
import json
import tempfile
import time

from ..argtypes import positive_int
from ..methods import DTMR, display_name
from ..models.precision import PRECISIONS
from ..train.presets import PRESETS, TRAINABLE_METHODS

METHODS = TRAINABLE_METHODS


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "train", help="training: seconds per step of each stage and the projected time of a schedule",
    )
    parser.add_argument("--data", required=True, metavar="LIB.h5", help="the clip library to train on")
    parser.add_argument("--split", required=True, metavar="NAME")
    parser.add_argument("--methods", default=",".join(METHODS), metavar="LIST",
                        help="comma-separated, of dtmr, dmr, pmr (default: all three)")
    parser.add_argument("--preset", default="paper", choices=list(PRESETS), help="DisentangledTMR preset")
    parser.add_argument("--batch", type=positive_int, default=None,
                        help="batch of every method: quadruplets per step, clips in DMR/PMR's unpaired stages "
                             "(default: each trainer's, 32)")
    parser.add_argument("--quadruplets", type=positive_int, default=None, metavar="N",
                        help="quadruplets per epoch (default: each trainer's)")
    parser.add_argument("--steps", type=positive_int, default=3, metavar="N", help="timed steps per stage")
    parser.add_argument("--device", default=None, help="cpu, cuda, cuda:1 (default: CUDA when available)")
    parser.add_argument("--precision", default="fp32", choices=PRECISIONS,
                        help="DisentangledTMR only: train under bfloat16 autocast, as dtmr train --precision "
                             "(default fp32)")
    parser.add_argument("--threads", type=positive_int, default=None, metavar="N", help="torch intra-op threads")
    parser.add_argument("--json", action="store_true", help="print the results as one JSON object")
    parser.set_defaults(func=run)


def _chained_steps(trainer, stage: int):
    """The stage's steps over as many epochs as asked for (an epoch can be shorter than the timing)."""
    return itertools.chain.from_iterable(trainer.epoch_steps(stage, epoch) for epoch in itertools.count())


def seconds_per_step(trainer, stage: int, steps: int) -> float:
    """Mean wall time of `steps` optimizer steps of `stage`, after one warm-up step."""
    import torch

    device = trainer.ctx.device
    sync = (lambda: torch.cuda.synchronize(device)) if device.type == "cuda" else (lambda: None)
    step_iter = _chained_steps(trainer, stage)
    next(step_iter)
    sync()
    start = time.perf_counter()
    for _ in range(steps):
        next(step_iter)
    sync()
    return (time.perf_counter() - start) / steps


def _dtmr_trainer(data, ctx, out: str, preset: str, batch: int | None, quadruplets: int | None,
                  epochs: tuple[int, ...] | None, model_overrides: dict | None, precision: str = "fp32"):
    from ..train.dtmr_trainer import DTMRTrainer, TrainConfig

    sized = {} if batch is None else {"batch": batch}  # else TrainConfig's default, as `dtmr train`
    config = TrainConfig(data=str(data.path), split=data.split, out=out, preset=preset, epochs=epochs,
                         device=str(ctx.device), quadruplets_per_epoch=quadruplets,
                         model_overrides=dict(model_overrides or {}), precision=precision, **sized)
    return DTMRTrainer(config, data, ctx)


def _measure_dtmr_stage(trainer, stage: int, steps: int) -> dict:
    from ..train.schedules import TeacherForcingSchedule

    trainer.start_stage(stage)
    schedule = trainer.teacher_forcing
    if schedule is None:
        return {"seconds_per_step": seconds_per_step(trainer, stage, steps)}
    timed = {}
    for mode, prob in (("teacher_forced", 1.0), ("free_running", 0.0)):
        trainer.teacher_forcing = TeacherForcingSchedule(prob, prob)
        timed[mode] = seconds_per_step(trainer, stage, steps)
    forcing = (schedule.start + schedule.end) / 2
    return {"seconds_per_step": forcing * timed["teacher_forced"] + (1 - forcing) * timed["free_running"],
            "seconds_per_step_teacher_forced": timed["teacher_forced"],
            "seconds_per_step_free_running": timed["free_running"], "teacher_forcing_mean": forcing}


def measure_training(data, method: str, *, preset: str = "paper", batch: int | None = None,
                     quadruplets: int | None = None, epochs: tuple[int, ...] | None = None, steps: int = 3,
                     device: str | None = None, model_overrides: dict | None = None, precision: str = "fp32") -> dict:
    """Per stage of `method` (one of METHODS) on `data` (a `TrainingData`): seconds per step, steps
    per epoch, epochs and the projected seconds; plus their total. `model_overrides` (DTMRConfig fields)
    is for tests' tiny models; `precision` "bf16" (DisentangledTMR only) times bfloat16 autocast training."""
    from ..errors import DtmrError
    from ..train.distributed import DistributedContext, pick_device

    if method not in METHODS:
        raise DtmrError(f"unknown method {method!r} (known: {', '.join(METHODS)})")
    if precision != "fp32" and method != DTMR.name:
        raise DtmrError(f"--precision {precision} trains DisentangledTMR only, not {display_name(method)}")
    ctx = DistributedContext(device=pick_device(device))
    with tempfile.TemporaryDirectory(prefix="dtmr-bench-train-") as out:
        if method == DTMR.name:
            trainer = _dtmr_trainer(data, ctx, out, preset, batch, quadruplets, epochs, model_overrides, precision)
            measure = _measure_dtmr_stage
        else:
            from ..train.baseline_trainer import DEFAULT_BATCH, BaselineTrainer

            trainer = BaselineTrainer(method, data, out, ctx, epochs=epochs, batch=batch or DEFAULT_BATCH,
                                      quadruplets_per_epoch=quadruplets)

            def measure(trainer, stage: int, steps: int) -> dict:
                trainer.start_stage(stage)
                return {"seconds_per_step": seconds_per_step(trainer, stage, steps)}

        stages = []
        for stage, name, n_epochs in trainer.stage_plan():
            timing = measure(trainer, stage, steps)
            per_epoch = trainer.steps_per_epoch(stage)
            stages.append({"stage": stage, "name": name, "epochs": n_epochs, "steps_per_epoch": per_epoch,
                           **timing, "projected_s": timing["seconds_per_step"] * per_epoch * n_epochs})
        size = trainer.batch if method != DTMR.name else trainer.config.batch
    result = {"method": method, "device": str(ctx.device), "batch": size, "timed_steps": steps,
              "stages": stages, "projected_s": sum(s["projected_s"] for s in stages)}
    if method == DTMR.name:
        result["preset"], result["precision"] = preset, precision
    return result


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 2 * 3600:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def _print_report(results: list[dict], threads: int) -> None:
    for result in results:
        title = display_name(result["method"]) + (f" {result.get('preset')}, {result.get('precision', 'fp32')}"
                                                  if result["method"] == DTMR.name else "")
        print(f"{title} on {result['device']} ({threads} threads), batch {result['batch']}, "
              f"mean of {result['timed_steps']} steps per stage after a warm-up step")
        for s in result["stages"]:
            line = (f"  stage {s['stage']} {s['name']:<24} {s['seconds_per_step']:8.3f} s/step "
                    f"x {s['steps_per_epoch']:>4} steps x {s['epochs']:>3} epochs = {_duration(s['projected_s']):>9}")
            if "teacher_forcing_mean" in s:
                line += (f"   (teacher-forced {s['seconds_per_step_teacher_forced']:.3f}, free-running "
                         f"{s['seconds_per_step_free_running']:.3f} s/step; forcing {s['teacher_forcing_mean']:.2f})")
            print(line)
        print(f"  schedule: {_duration(result['projected_s'])}")


def run(args: argparse.Namespace) -> int:
    import torch

    from ..errors import DtmrError
    from ..train.data import load_training_data

    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    unknown = sorted(set(methods) - set(METHODS))
    if not methods or unknown:
        raise DtmrError(f"--methods takes a comma-separated list of {', '.join(METHODS)}; got {args.methods!r}")
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    data = load_training_data(args.data, args.split)
    results = [measure_training(data, m, preset=args.preset, batch=args.batch, quadruplets=args.quadruplets,
                                steps=args.steps, device=args.device, precision=args.precision) for m in methods]
    if args.json:
        print(json.dumps({"threads": torch.get_num_threads(), "data": str(args.data), "split": args.split,
                          "results": results}))
    else:
        _print_report(results, torch.get_num_threads())
    return 0
