"""Train the COCO-17 2-D -> 3-D lifter on the synthetic set and write its checkpoint.

    OMP_NUM_THREADS=1 nice -n 10 python scripts/train_lifter.py -o resources/models/lifters/lifter_coco17.pt

The 3-D clips are the project's redistributable synthetic set: generated in process
(`dtmr.data.generate_clips(subjects, actions=12, repetitions, seed, noise=0)`: clean motion), or read from a
library written by `dtmr data synth` (`--library`). Each step projects fresh windows through random
pinhole cameras (docs/models.md, "Lifter"). At the end the lifter is measured on a held-out synthetic
set (other performers: generator seed `--seed + 1`), and the numbers go into the checkpoint.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

from dtmr.data import generate_clips
from dtmr.errors import DtmrError
from dtmr.io.sources import load_clips
from dtmr.lift.checkpoint import save_lifter
from dtmr.lift.data import coco17_clip_joints
from dtmr.lift.metrics import measure
from dtmr.lift.model import LifterConfig
from dtmr.lift.train import TrainSettings, train_lifter


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-o", "--output", type=Path, required=True)
    parser.add_argument("--library", type=Path, help="a synthetic library (dtmr data synth) instead of generating")
    parser.add_argument("--subjects", type=int, default=40)
    parser.add_argument("--repetitions", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--steps", type=int, default=TrainSettings.steps)
    parser.add_argument("--batch", type=int, default=TrainSettings.batch)
    parser.add_argument("--hidden", type=int, default=LifterConfig.hidden)
    parser.add_argument("--window", type=int, default=LifterConfig.window)
    parser.add_argument("--held-out-subjects", type=int, default=8)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    started = time.monotonic()
    try:
        if args.library:
            clips = load_clips(args.library)
            data = {"source": str(args.library.name), "clips": len(clips)}
        else:
            clips = generate_clips(subjects=args.subjects, repetitions=args.repetitions, seed=args.seed, noise=0.0)
            data = {"source": "dtmr.data.generate_clips", "subjects": args.subjects, "actions": 12,
                    "repetitions": args.repetitions, "seed": args.seed, "noise": 0.0, "clips": len(clips)}
    except DtmrError as exc:
        print(exc, file=sys.stderr)
        return 2
    joints = [coco17_clip_joints(c.joints, c.topology) for c in clips]
    config = LifterConfig(window=args.window, hidden=args.hidden)
    settings = TrainSettings(steps=args.steps, batch=args.batch, seed=args.seed)
    print(f"{len(joints)} clips, {sum(map(len, joints))} frames; {settings.steps} steps of {settings.batch}",
          flush=True)
    net, history = train_lifter(joints, config, settings, log=lambda s, loss, sec: print(
        f"step {s:5d}  loss {loss * 1000:6.1f} mm  {sec:5.0f} s", flush=True))
    held_out = generate_clips(subjects=args.held_out_subjects, repetitions=1, seed=args.seed + 1, noise=0.0)
    metrics = {f"synthetic_held_out_{k}": v for k, v in
               measure([coco17_clip_joints(c.joints, c.topology) for c in held_out], net, seed=0).items()}
    metrics["train_seconds"] = round(time.monotonic() - started, 1)
    metrics["final_train_loss_mm"] = round(history[-1] * 1000, 1)
    data.update({"steps": settings.steps, "batch": settings.batch,
                 "held_out": f"generate_clips(subjects={args.held_out_subjects}, repetitions=1, "
                             f"seed={args.seed + 1}, noise=0)"})
    save_lifter(args.output, net, data=data, metrics=metrics)
    size = args.output.stat().st_size
    print(f"wrote {args.output} ({size / 1e6:.2f} MB); held-out synthetic MPJPE "
          f"{metrics['synthetic_held_out_mpjpe_mm']:.1f} mm, PA-MPJPE {metrics['synthetic_held_out_pa_mpjpe_mm']:.1f} mm")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
