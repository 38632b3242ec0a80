"""Hostile inputs for scripts/fuzz_readers.py (issue 43): files built to exhaust a reader, not damaged at random.

Each family writes one variant per call, its sizes drawn from the run's seeded generator: `build(folder, i,
rng, clip) -> (path, what)`. The path may be a FIFO, a symbolic link to a device or a sparse file; the run
removes it after use (`remove`). Every family must end in a one-line error: a hang (a reader blocked on a
FIFO, a walk of a self-sharing tree, `math.prod` of huge integers), a traceback (OverflowError,
RecursionError, MemoryError) or an allocation out of proportion to the file is what the run looks for.

| family | what |
|---|---|
| `pkl-self-sharing` | PYSKL pickle whose nested lists share themselves 40-64 levels deep (2^64 nodes when walked) |
| `pkl-shared-keypoints` | one keypoint array shared by 2,000-20,000 annotations (GBs once copied per annotation) |
| `pkl-huge-shape` | an array whose shape is 32 copies of one integer of 64 bits to 1 MB |
| `pkl-big-label` | a `label` of 2^63 or more (or below -2^63) |
| `json-deep` | JSON nested 1,000-1,000,000 levels (a list, a COCO-looking dict, MMPose's layout) |
| `sidecar-deep` | a review sidecar nested deeply or holding an integer of 5,000+ digits (`dtmr review merge`) |
| `bvh-nonfinite` | BVH `Frames:` nan / inf / huge / negative, `Frame Time:` 1e-320 / nan / inf / 0 / negative |
| `fifo` | a FIFO named `.json`, `.bvh`, `.npy`, `.npz`, `.pkl`, `.skeleton`, `.h5`, or a folder holding one |
| `skeleton-device` | a `.skeleton` that is `/dev/zero` or `/dev/urandom` (a link), or a 5 GB sparse file |
| `h5-uint64-labels` | a library whose uint64 subject/action/view/repetition is 2^63 or more, checksum fixed |
| `mmpose-empty-frames` | MMPose 3-D results with 200,001-300,000 frames, all (or all but a few) empty |
"""

from __future__ import annotations

import json
import os
import pickle
import random
import shutil
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np


@dataclass(frozen=True)
class Family:
    build: Callable[[Path, int, random.Random, object], tuple[Path, str]]
    #: the command line run on the variant, `{path}` replaced: `dtmr data info` unless the family says
    command: tuple[str, ...] = ("data", "info", "{path}", "--json")


def remove(path: Path) -> None:
    """Remove a variant: a file, a FIFO, a link (never what it points to) or a folder."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()


# -- pickles ------------------------------------------------------------------------------------------------
def _annotation(keypoint, label=0, name: str = "x", frames: int | None = None) -> dict:
    frames = frames if frames is not None else (keypoint.shape[1] if isinstance(keypoint, np.ndarray) else 1)
    return {"frame_dir": name, "label": label, "keypoint": keypoint, "total_frames": frames}


def _pyskl(annotations: list, split=None) -> dict:
    return {"split": split if split is not None else {"all": [a["frame_dir"] for a in annotations]},
            "annotations": annotations}


def _keypoints(clip) -> np.ndarray:
    return np.ascontiguousarray(clip.joints[None], dtype=np.float32)


def pkl_self_sharing(folder: Path, i: int, rng: random.Random, clip) -> tuple[Path, str]:
    depth = rng.randint(40, 64)
    node: list = [0.0]
    for _ in range(depth):
        node = [node, node]
    where = rng.choice(["keypoint", "annotations", "split", "extra field"])
    good = _annotation(_keypoints(clip))
    if where == "keypoint":
        document = _pyskl([_annotation(node, frames=1)])
    elif where == "annotations":
        document = {"split": {"all": ["x"]}, "annotations": node}
    elif where == "split":
        document = _pyskl([good], split={"all": node})
    else:
        document = _pyskl([{**good, "extra": node}])
    path = folder / f"self-sharing-{i:04d}.pkl"
    path.write_bytes(pickle.dumps(document, protocol=rng.choice([2, 4, 5])))
    return path, f"lists sharing themselves {depth} levels deep, in {where}"


def pkl_shared_keypoints(folder: Path, i: int, rng: random.Random, clip) -> tuple[Path, str]:
    count = rng.randint(2_000, 20_000)
    frames = rng.randint(100, 300)
    keypoint = np.resize(_keypoints(clip), (1, frames, 25, 3)).astype(np.float32)
    annotations = [_annotation(keypoint, name=f"s{k}") for k in range(count)]
    path = folder / f"shared-keypoints-{i:04d}.pkl"
    path.write_bytes(pickle.dumps(_pyskl(annotations), protocol=rng.choice([2, 4, 5])))
    return path, f"one {frames}-frame keypoint array shared by {count} annotations"


class _ArrayOfShape:
    """Pickles as NumPy pickles an array (`_reconstruct`, then BUILD with the state), with any shape."""

    def __init__(self, shape: tuple):
        self.shape = shape

    def __reduce__(self):
        reconstruct = np.zeros(1).__reduce__()[0]
        return reconstruct, (np.ndarray, (0,), b"b"), (1, self.shape, np.dtype("<f4"), False, b"")


def pkl_huge_shape(folder: Path, i: int, rng: random.Random, clip) -> tuple[Path, str]:
    bits = rng.choice([64, 100, 10_000, 1_000_000, 8_000_000])
    huge = (1 << bits) - rng.randint(0, 7)
    path = folder / f"huge-shape-{i:04d}.pkl"
    path.write_bytes(pickle.dumps(_pyskl([_annotation(_ArrayOfShape((huge,) * 32), frames=1)]),
                                  protocol=rng.choice([4, 5])))  # 2 pickles the empty data as a call of bytes
    return path, f"an array of shape 32 x a {bits}-bit integer"


def pkl_big_label(folder: Path, i: int, rng: random.Random, clip) -> tuple[Path, str]:
    label = rng.choice([2**63, 2**63 + rng.randint(1, 1000), 2**64, 2**64 + 5, -(2**63) - 1, 10**30])
    path = folder / f"big-label-{i:04d}.pkl"
    path.write_bytes(pickle.dumps(_pyskl([_annotation(_keypoints(clip), label=label)]),
                                  protocol=rng.choice([2, 4, 5])))
    return path, f"label {label}"


# -- JSON and sidecars ---------------------------------------------------------------------------------------
def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def json_deep(folder: Path, i: int, rng: random.Random, clip) -> tuple[Path, str]:
    depth = rng.choice([1_000, 10_000, 100_000, 1_000_000])
    layout = rng.choice(["list", "coco", "mmpose"])
    if layout == "list":
        text = _nested(depth)
    elif layout == "coco":
        text = '{"images": [], "annotations": ' + _nested(depth) + "}"
    else:
        text = ('{"meta_info": {"dataset_name": "h36m"}, "instance_info": [{"frame_id": 0, "instances": '
                + _nested(depth) + "}]}")
    path = folder / f"deep-{i:04d}.json"
    path.write_text(text)
    return path, f"{layout} nested {depth} levels"


def sidecar_deep(folder: Path, i: int, rng: random.Random, clip) -> tuple[Path, str]:
    kind = rng.choice(["nested", "digits"])
    if kind == "nested":
        depth = rng.choice([1_000, 100_000])
        text = '{"format": "dtmr-review", "version": 1, "reviews": ' + _nested(depth) + "}"
        what = f"a sidecar nested {depth} levels"
    else:
        digits = rng.choice([5_000, 50_000])
        text = '{"format": "dtmr-review", "version": 1' + ', "clips": ' + "9" * digits + "}"
        what = f"a sidecar holding a {digits}-digit integer"
    path = folder / f"lib{i:04d}.review.fuzz.json"
    path.write_text(text)
    return path, what


# -- BVH --------------------------------------------------------------------------------------------------------
def bvh_nonfinite(folder: Path, i: int, rng: random.Random, clip) -> tuple[Path, str]:
    from dtmr.io.bvh_writer import write_bvh

    path = folder / f"nonfinite-{i:04d}.bvh"
    write_bvh(path, clip)
    lines = path.read_text().splitlines()
    if rng.random() < 0.5:
        field, value = "Frames:", rng.choice(["nan", "inf", "-inf", "1e400", "1e30", "-3", "2.5"])
    else:
        field, value = "Frame Time:", rng.choice(["1e-320", "nan", "inf", "0", "-0.033", "1e300"])
    lines = [f"{field} {value}" if line.strip().startswith(field) else line for line in lines]
    path.write_text("\n".join(lines) + "\n")
    return path, f"{field} {value}"


# -- special files ---------------------------------------------------------------------------------------------
FIFO_SUFFIXES = (".json", ".bvh", ".npy", ".npz", ".pkl", ".pickle", ".skeleton", ".h5")


def fifo(folder: Path, i: int, rng: random.Random, clip) -> tuple[Path, str]:
    suffix = rng.choice(FIFO_SUFFIXES)
    if rng.random() < 0.2:  # a folder of .skeleton files holding a FIFO
        path = folder / f"fifo-folder-{i:04d}"
        path.mkdir()
        os.mkfifo(path / "S001C001P001R001A001.skeleton")
        return path, "a folder holding a FIFO .skeleton"
    path = folder / f"fifo-{i:04d}{suffix}"
    os.mkfifo(path)
    return path, f"a FIFO named {suffix}"


def skeleton_device(folder: Path, i: int, rng: random.Random, clip) -> tuple[Path, str]:
    path = folder / f"device-{i:04d}.skeleton"
    kind = rng.choice(["/dev/zero", "/dev/urandom", "sparse"])
    if kind == "sparse":
        with open(path, "wb") as fh:
            fh.truncate(5 << 30)
        return path, "a 5 GB sparse .skeleton"
    path.symlink_to(kind)
    return path, f"a .skeleton linked to {kind}"


# -- HDF5 and MMPose --------------------------------------------------------------------------------------------
def h5_uint64_labels(folder: Path, i: int, rng: random.Random, clip) -> tuple[Path, str]:
    import h5py

    from dtmr.io.library import ClipLibrary

    path = folder / f"uint64-{i:04d}.h5"
    ClipLibrary.write(path, [clip, clip.replace(sample_name="second")])
    column = rng.choice(["subject", "action", "view", "repetition"])
    value = rng.choice([2**63, 2**63 + 1, 2**64 - 1])
    with h5py.File(path, "r+") as h5:
        group = h5["clips"]
        values = np.full(len(group[column]), value, dtype=np.uint64)
        del group[column]
        dataset = group.create_dataset(column, data=values)
        dataset.attrs["crc32"] = zlib.crc32(values.tobytes())
    return path, f"uint64 {column} {value}, checksum fixed"


def mmpose_empty_frames(folder: Path, i: int, rng: random.Random, clip) -> tuple[Path, str]:
    frames = rng.randint(200_001, 300_000)
    real = rng.choice([0, 3])
    keypoints = json.dumps([[0.1 * j, 1.0, 0.2] for j in range(17)])
    body = ",".join('{"frame_id":%d,"instances":[%s]}' % (t, '{"keypoints":%s}' % keypoints if t < real else "")
                    for t in range(frames))
    path = folder / f"mmpose-empty-{i:04d}.json"
    path.write_text('{"meta_info":{"dataset_name":"h36m"},"instance_info":[' + body + "]}")
    return path, f"{frames} frames, {real} with a person"


FAMILIES = {
    "pkl-self-sharing": Family(pkl_self_sharing),
    "pkl-shared-keypoints": Family(pkl_shared_keypoints),
    "pkl-huge-shape": Family(pkl_huge_shape),
    "pkl-big-label": Family(pkl_big_label),
    "json-deep": Family(json_deep),
    "sidecar-deep": Family(sidecar_deep, ("review", "merge", "{path}")),
    "bvh-nonfinite": Family(bvh_nonfinite),
    "fifo": Family(fifo),
    "skeleton-device": Family(skeleton_device),
    "h5-uint64-labels": Family(h5_uint64_labels),
    "mmpose-empty-frames": Family(mmpose_empty_frames),
}
