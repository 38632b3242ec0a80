"""MPJPE of the COCO-17 lifter on 3-D clips projected through random cameras, as a Markdown table.

    OMP_NUM_THREADS=1 nice -n 10 python scripts/measure_lifter.py \
        [--lifter resources/models/lifters/lifter_coco17.pt] [--data ../shared/data] [--max-clips N]

Rows: the held-out synthetic set (performers the lifter never saw: generator seed 1), N-UCLA
(`nwucla.npz`) and UI-PRMD (`uiprmd_kinect.npz`) when `--data` has them. Every clip is seen by one random
camera (the training ranges), the lifter gets its 2-D, and the 12 limb joints are scored (docs/models.md).
"face hidden" rows give the lifter no face points, as for a source whose face is missing. The real data
sets are research-only: they are only measured here, never trained on.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

from dtmr.data import generate_clips
from dtmr.errors import DtmrError
from dtmr.io.sources import open_clip_source
from dtmr.lift.apply import DEFAULT_LIFTER
from dtmr.lift.checkpoint import load_lifter
from dtmr.lift.data import coco17_clip_joints
from dtmr.lift.metrics import measure
from dtmr.resources import resource_path

REAL_SETS = (("N-UCLA (Kinect v1)", "nwucla.npz"), ("UI-PRMD (Kinect v2)", "uiprmd_kinect.npz"))


def _evenly(n: int, limit: int | None) -> list[int]:
    """`limit` indices spread over range(n) (all of them without a limit)."""
    if not limit or limit >= n:
        return list(range(n))
    return sorted({round(i * (n - 1) / max(limit - 1, 1)) for i in range(limit)})


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lifter", type=Path, default=resource_path(*DEFAULT_LIFTER))
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[1].parent / "shared" / "data")
    parser.add_argument("--max-clips", type=int, default=None, help="per data set, spread evenly")
    parser.add_argument("--seed", type=int, default=0, help="of the random cameras")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    try:
        net = load_lifter(args.lifter)
        sets = [("synthetic held-out (seed 1, 8 performers)",
                 [coco17_clip_joints(c.joints, c.topology)
                  for c in generate_clips(subjects=8, repetitions=1, seed=1, noise=0.0)])]
        for name, file in REAL_SETS:
            path = args.data / file
            if not path.is_file():
                print(f"{path}: not found, row skipped", file=sys.stderr)
                continue
            source = open_clip_source(path)
            read = [source.read(i) for i in _evenly(len(source), args.max_clips)]
            sets.append((name, [coco17_clip_joints(c.joints, c.topology) for c in read]))
    except DtmrError as exc:
        print(exc, file=sys.stderr)
        return 2
    print("| data | face | clips | frames | MPJPE mm (median) | PA-MPJPE mm (median) |")
    print("|---|---|---|---|---|---|")
    for name, clips in sets:
        if args.max_clips:
            clips = [clips[i] for i in _evenly(len(clips), args.max_clips)]
        for hidden in (False, True):
            m = measure(clips, net, seed=args.seed, drop_face=hidden)
            print(f"| {name} | {'hidden' if hidden else 'synthesized'} | {m['clips']} | {m['frames']} | "
                  f"{m['mpjpe_mm']:.1f} ({m['mpjpe_median_mm']:.1f}) | "
                  f"{m['pa_mpjpe_mm']:.1f} ({m['pa_mpjpe_median_mm']:.1f}) |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
