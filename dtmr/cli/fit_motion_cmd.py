"""`dtmr fit-motion-model --data LIB --split S --method retime|retime-naive|ksame -o FILE.pt`: fit a motion
anonymizer (docs/motion_anonymizers.md) on the training half of a split.

The file is a checkpoint like a trained model's (method, settings, data set, metrics; the action templates and,
for k-same, the pool instead of weights): `dtmr anonymize --model`, `dtmr evaluate --model` and the Studio load it
as they load any retargeter. The metrics record how often the nearest template names the action of a test clip:
the action an unlabelled source is treated as.
"""

from __future__ import annotations

import argparse

from ..argtypes import positive_int
from ..methods import names

#: the methods fitted on a split in seconds (dtmr.methods, kind "fitted")
METHODS = names("fitted")
#: k-same's partner choices (dtmr.models.motion.ksame.PARTNERS; named here so that parsing imports no torch)
PARTNERS = ("nearest", "cluster", "cluster-mean")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("fit-motion-model", help="fit a re-timing or k-same motion anonymizer on a split",
                       description="Fit a motion anonymizer on the training half of --split: the medoid template of "
                                   "every action (re-timing), and for k-same also the pool of training clips.")
    p.add_argument("--data", required=True, help="the clips (any clip source: .h5 library, .npz, folder)")
    p.add_argument("--split", required=True, help="a named split (dtmr/data/splits.py); its training half is used")
    p.add_argument("--method", choices=METHODS, required=True,
                   help="retime: the source's poses on its action's template timing; retime-naive: the same on "
                        "the reference's bone lengths; ksame: the time-aligned mean of the source and k-1 clips "
                        "of other subjects, on the reference's bone lengths")
    p.add_argument("--k", type=positive_int, default=2, help="k-same: clips per average (default 2; the issue "
                                                             "measures 2, 3, 5, 8)")
    p.add_argument("--timing", choices=("source", "template"), default="source",
                   help="k-same: align the k clips onto the source's timing (default) or the action template's")
    p.add_argument("--partners", choices=PARTNERS, default="nearest",
                   help="k-same: the partners' subjects are the nearest to the source (default), or the other members "
                        "of its fixed cluster of k subjects (k-Same's clusters: every release of a cluster averages "
                        "the same people), or (cluster-mean, with --timing template) the whole cluster in place of "
                        "the source: every release of a cluster and action is the same mean of its members' clips")
    p.add_argument("--embedder", metavar="RECOGNIZER.pt",
                   help="k-same: an action recognizer (`dtmr train-recognizer --task action` on the same split) "
                        "whose embedding chooses the partners and the action of sources without a known action "
                        "label (default: the nearest action template); its weights go into the file")
    p.add_argument("--topology", help="fit for this joint set (ntu25 maps other sets to it)")
    p.add_argument("-o", "--out", required=True, help="the file to write (.pt)")
    p.add_argument("--overwrite", action="store_true",
                   help="replace OUT even if it is a model or another file a user keeps (never an input)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import sys
    from pathlib import Path

    from ..train.motion_fit import MotionFitSettings, fit_motion_checkpoint

    settings = MotionFitSettings(args.method, k=args.k, timing=args.timing, partners=args.partners,
                                 embedder=None if args.embedder is None else Path(args.embedder),
                                 topology=args.topology)
    fit = fit_motion_checkpoint(args.data, args.split, settings, args.out, overwrite=args.overwrite,
                                log=lambda line: print(line, file=sys.stderr, flush=True))
    print(f"wrote {fit.path}: {fit.summary}")
    return 0
