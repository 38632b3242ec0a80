"""Plausibility (`dtmr.eval.plausibility`) of clip libraries side by side, printed as Markdown.

    python scripts/plausibility_table.py LIB.h5 [LIB.h5 ...] [--labels "raw,DMR,..."] [--against NAIVE.h5]

Each row is one library: the mean and the 95th percentile over its clips of every component and of the
score. A release with its key beside it (`LIB.key.json`) is scored against the body it claims: the
mean-pose bone lengths of each clip's reference, read from the key's reference file; a library without a
key (a raw one) is scored against each clip's own mean bone lengths.

With `--against` (a release with its key, typically the naive retarget's, whose clips are the sources' motion
on the references' bodies) two more columns: the MPJPE of each clip against that release's clip of the same
source (matched through both keys; the same `--seed` draws the same reference for a source, so the two share
the body), and the smoothness (mean acceleration, `dtmr.eval.metrics`), both in metres.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from dtmr.errors import DtmrError, InputError
from dtmr.eval.metrics import mpjpe, smoothness
from dtmr.eval.plausibility import COMPONENTS, THRESHOLDS, clip_plausibility
from dtmr.io.sources import open_clip_source
from dtmr.release.key import key_path_for, read_key
from dtmr.skeleton import mean_pose_bone_lengths

UNITS = {"bone_error": "m", "joint_angle": "°", "self_intersection": "m", "foot_sliding": "m/s",
         "ground_penetration": "m", "jerk": "m/s³", "mpjpe": "m, against --against", "smoothness": "m/frame²"}
#: the columns `--against` adds
EXTRA = ("mpjpe", "smoothness")


def _bodies(path: Path, count: int) -> list[np.ndarray | None]:
    """Per clip, the reference's bone lengths when `path` has a key, else None (the clip's own)."""
    key_path = key_path_for(path)
    if not key_path.exists():
        return [None] * count
    key = read_key(key_path)
    if len(key) != count:
        raise InputError(key_path, f"the key lists {len(key)} clips, the release holds {count}")
    references = open_clip_source(key.reference_file)
    try:
        cache: dict[int, np.ndarray] = {}
        bodies = []
        for entry in key.entries:
            if entry.reference_index < 0:
                bodies.append(None)
                continue
            if entry.reference_index not in cache:
                ref = references.read(entry.reference_index)
                cache[entry.reference_index] = mean_pose_bone_lengths(ref.joints, ref.topology)
            bodies.append(cache[entry.reference_index])
        return bodies
    finally:
        references.close()


def _by_source(path: Path) -> dict[int, int]:
    """Source index -> release position, from the key beside `path` (an InputError without one)."""
    key_path = key_path_for(path)
    if not key_path.exists():
        raise InputError(path, "--against needs every release's key beside it")
    return {entry.source_index: position for position, entry in enumerate(read_key(key_path).entries)}


def library_rows(path: Path, against: Path | None = None) -> dict[str, np.ndarray]:
    """(N,) values of every component and of the score over the clips of `path`; with `against`, also the
    MPJPE against its clip of the same source and the smoothness (m)."""
    source = open_clip_source(path)
    try:
        bodies = _bodies(path, len(source))
        clips = [source.read(i) for i in range(len(source))]
    finally:
        source.close()
    scores = [clip_plausibility(clip, body).as_dict() for clip, body in zip(clips, bodies, strict=True)]
    rows = {k: np.array([s[k] for s in scores]) for k in (*COMPONENTS, "score")}
    if against is not None:
        mine, theirs = _by_source(path), _by_source(against)
        if set(mine) != set(theirs):
            raise InputError(against, f"releases a different set of sources than {path}")
        other = open_clip_source(against)
        try:
            order = sorted(mine)
            targets = [other.read(theirs[s]).joints for s in order]
        finally:
            other.close()
        joints = [clips[mine[s]].joints for s in order]
        rows["mpjpe"] = mpjpe(joints, targets)
        rows["smoothness"] = smoothness(joints)
    return rows


def markdown(rows: list[tuple[str, dict[str, np.ndarray]]]) -> str:
    names = (*COMPONENTS, "score", *(n for n in EXTRA if n in rows[0][1]))
    head = ["library", "clips"] + [f"{n.replace('_', ' ')} ({UNITS.get(n, '0 = plausible')})" for n in names]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for label, values in rows:
        cells = [label, str(len(values["score"]))]
        for n in names:
            v = values[n][np.isfinite(values[n])]
            cells.append(f"{v.mean():.3g} / {np.percentile(v, 95):.3g}" if v.size else "–")
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("Each cell: mean / 95th percentile over the clips. Score thresholds: "
                 + ", ".join(f"{n.replace('_', ' ')} {THRESHOLDS[n]:g} {UNITS[n]}" for n in COMPONENTS) + ".")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("libraries", type=Path, nargs="+")
    parser.add_argument("--labels", help="comma-separated row labels, one per library")
    parser.add_argument("--against", type=Path, help="a release (with its key) to measure MPJPE against")
    args = parser.parse_args(argv)
    labels = [s.strip() for s in args.labels.split(",")] if args.labels else [p.name for p in args.libraries]
    if len(labels) != len(args.libraries):
        print(f"--labels: {len(labels)} labels for {len(args.libraries)} libraries", file=sys.stderr)
        return 1
    try:
        rows = [(label, library_rows(path, args.against)) for label, path in zip(labels, args.libraries)]
    except DtmrError as error:
        print(error, file=sys.stderr)
        return 1
    print(markdown(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
