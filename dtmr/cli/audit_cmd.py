"""`dtmr audit RELEASE --key KEY --raw RAW`: how re-identifiable one release is (docs/audit.md).

Writes DIR/audit.json, DIR/audit.md and DIR/audit.html (DIR: --out, default RELEASE without its suffix +
`.audit/`); per-fold results go to DIR/parts/ (a rerun resumes), raw-trained attackers to a cache shared by
the audits of one data set (DIR/../.audit-cache/ or --cache). `--workers N` computes the cells in N processes.
"""

from __future__ import annotations

import argparse
import shlex
import sys

from ..argtypes import attacker_epochs, positive_int
from ..attacker_names import ATTACKER_NAMES


def _attackers(text: str) -> tuple[str, ...]:
    names = tuple(dict.fromkeys(n.strip() for n in text.split(",") if n.strip()))
    bad = [n for n in names if n not in ATTACKER_NAMES]
    if bad or not names:
        raise argparse.ArgumentTypeError(f"unknown attacker(s) {', '.join(bad) or '(none)'} "
                                         f"(known: {', '.join(ATTACKER_NAMES)})")
    return names


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "audit", help="attack a release with a suite of re-identification attackers (worst case counts)",
        description="Audit RELEASE: a metadata scan, then SGN, a temporal-conv network, bone-length "
                    "logistic regression and nearest neighbours on each side channel of the file (placement, "
                    "length, dropouts, amplitude and speed), each trained on raw clips, on released clips "
                    "labelled through the key (adaptive) and on every raw clip (raw-known: the raw data set is "
                    "public), their ensemble, linkage of released clips to their raw sources, and each "
                    "attacker's figure on the raw clips (calibration). SGN trains 3 epochs; the TCN and the ST-GCN "
                    "train until a held-out part stops improving (at most 80 epochs); the cost per data set is "
                    "in docs/audit.md.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("release", metavar="RELEASE", help="the released clip library (.h5)")
    p.add_argument("--key", required=True, help="the release's key (RELEASE.key.json)")
    p.add_argument("--raw", required=True, help="the raw clips the release was made from (any clip source)")
    how = p.add_mutually_exclusive_group()
    how.add_argument("--split", metavar="NAME", help="one fold: a named train/test split (dtmr/data/splits.py)")
    how.add_argument("--folds", type=positive_int, metavar="K",
                     help="K folds (default 3): by repetition or view when the key has them, else by subject")
    p.add_argument("--out", metavar="DIR", help="output folder (default: RELEASE without suffix + .audit)")
    p.add_argument("--attackers", type=_attackers, default=ATTACKER_NAMES, metavar="LIST",
                   help="comma-separated, of " + ",".join(ATTACKER_NAMES))
    p.add_argument("--epochs", type=attacker_epochs, metavar="N|NAME=N,...",
                   help="epochs of the neural attackers, one number or per attacker (sgn=5,tcn=30); "
                        "default: SGN 3; TCN and ST-GCN at most 80, stopping earlier on a held-out part")
    p.add_argument("--seed", type=int, default=0, help="seed of the folds and of every attacker's training")
    p.add_argument("--no-utility", action="store_true",
                   help="leave out the action recognizers of the utility figures (a quicker privacy screen)")
    p.add_argument("--reference", type=float, metavar="PCT",
                   help="the best re-identification of the raw clips known for this data (docs/audit.md: N-UCLA, "
                        "UI-PRMD): the audit warns when its best attacker stays below it (default: 3 x chance)")
    p.add_argument("--device", help="cpu, cuda or cuda:N (default: CUDA when available)")
    p.add_argument("--cache", metavar="DIR", help="where raw-trained attackers are cached "
                                                  "(default: DIR/../.audit-cache)")
    p.add_argument("--partners", metavar="MODEL",
                   help="the release's k-same model file (`dtmr fit-motion-model --method ksame`, or a "
                        "DisentangledTMR with the k-same residual): also measure how often the raw-trained "
                        "attacker names, and linkage finds, the other people averaged into each clip")
    p.add_argument("--workers", type=positive_int, default=1, metavar="N",
                   help="compute the (attacker, form, fold) cells in N processes; audit.json equals a "
                        "one-process run's (docs/audit.md, Parallel runs)")
    p.add_argument("--threads-per-worker", type=positive_int, default=1, metavar="T",
                   help="torch threads of each worker process (with --workers)")
    p.add_argument("--publish", metavar="DIR",
                   help="also write a copy fit to publish to DIR: every figure and each clip's risk, not who is "
                        "who (no release ids, subjects or attacker files; dtmr/audit/publish.py)")
    p.set_defaults(func=run)

    pub = sub.add_parser("publish-audit", help="a copy of an audit folder fit to publish (no one's identity)",
                         description="Write the copy of AUDIT_DIR fit to publish beside results: every figure "
                                     "and each clip's risk, without the release ids, the subjects or the "
                                     "attacker files, and its reports made again from it.")
    pub.add_argument("audit_dir", metavar="AUDIT_DIR", help="a `dtmr audit` output folder")
    pub.add_argument("-o", "--output", required=True, metavar="DIR", help="the folder of the published copy")
    pub.set_defaults(func=run_publish)


def _command(args: argparse.Namespace) -> str:
    argv = [args.release, "--key", args.key, "--raw", args.raw]
    for name in ("split", "folds", "out", "epochs", "device", "cache", "partners", "reference"):
        value = getattr(args, name)
        if isinstance(value, dict):
            value = ",".join(f"{k}={v}" for k, v in value.items())
        if value is not None:
            argv += [f"--{name}", str(value)]
    argv += ["--attackers", ",".join(args.attackers), "--seed", str(args.seed)]
    if args.no_utility:
        argv.append("--no-utility")
    if args.workers > 1:
        argv += ["--workers", str(args.workers), "--threads-per-worker", str(args.threads_per_worker)]
    return "dtmr audit " + " ".join(shlex.quote(a) for a in argv)


def run(args: argparse.Namespace) -> int:
    from ..audit.audit_json import default_out
    from ..audit.result import AuditResult
    from ..audit.suite import AuditSettings, run_audit
    from ..parallel import Workers, worker_devices
    from ..train.distributed import pick_device

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    device = str(pick_device(args.device))
    settings = AuditSettings(attackers=tuple(args.attackers), epochs=args.epochs, seed=args.seed,
                             device=device, split=args.split, folds=args.folds, cache=args.cache,
                             reference=args.reference, utility=not args.no_utility)
    workers = Workers(args.workers, args.threads_per_worker, tuple(worker_devices(args.device, device, args.workers)))
    out = args.out or default_out(args.release)
    audit = run_audit(args.release, args.key, args.raw, out, settings, _command(args), log, workers, args.partners)
    result = AuditResult.from_audit(audit, out)
    summary = f"worst attacker {result.worst_name} ({result.worst_form}): {result.worst_accuracy:.1f} % " \
              f"re-identified, {result.worst_times_chance:.1f} x chance ({result.chance:.1f} %)"
    partners = result.partners
    if partners is not None:
        summary += (f"; a partner named in {partners.named_accuracy:.1f} % ({partners.named_times_chance:.1f} x "
                    f"chance), a partner's clip linked in {partners.linked_accuracy:.1f} %")
    if result.metadata_failures:  # whatever the motion attackers say, the release identifies people through these
        summary = f"FAILED: identifying metadata ({', '.join(result.metadata_failures)}); {summary}"
    if result.calibration_warning:
        print(f"WARNING: {result.calibration_warning}")
    print(f"{out}: {summary}")
    if args.publish:
        from ..audit.publish import publish_audit

        print(f"wrote the copy to publish {publish_audit(out, args.publish)}")
    return 0


def run_publish(args: argparse.Namespace) -> int:
    from ..audit.publish import publish_audit

    print(f"wrote {publish_audit(args.audit_dir, args.output)}")
    return 0
