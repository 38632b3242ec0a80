"""`open_clip_source` takes the formats of other tools (issue 21): each kind reaches its reader, 2-D keypoints
say how to lift them, and every kind is named in `OPEN_KINDS` / `OPEN_PATTERNS`."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dtmr.data import generate_clips
from dtmr.data.clip import Clip
from dtmr.errors import InputError
from dtmr.io.bvh_writer import write_bvh
from dtmr.io.pyskl_pickle import pyskl_annotation, write_pyskl_pickle
from dtmr.io.sources import (
    FORMAT_LABELS,
    OPEN_KINDS,
    OPEN_PATTERNS,
    load_clips,
    open_clip_source,
)
from dtmr.render.coco_keypoints import write_coco_json


@pytest.fixture
def clip(rng):
    return Clip(joints=(rng.normal(0, 0.3, (12, 25, 3)) + (0, 1, 3)).astype(np.float32), topology="ntu25",
                action=3, sample_name="S001C001P002R001A003")


def write_sgn(path, clip):
    x = np.zeros((2, 20, 150), np.float32)
    x[:, :clip.num_frames, :75] = clip.joints.reshape(clip.num_frames, 75)
    np.savez(path, x_train=x, y_train=np.array([1, 0]), x_test=x[:1], y_test=np.array([1]))


def write_mmpose_h36m(path, rng):
    frames = [{"frame_id": t, "instances": [{"keypoints": (rng.normal(0, 0.2, (17, 3)) + (0, 0, 1)).tolist()}]}
              for t in range(5)]
    meta = {"dataset_name": "h36m"}
    path.write_text(json.dumps({"meta_info": meta, "instance_info": frames}))


@pytest.mark.parametrize("kind, fmt, topology", [
    ("bvh", "bvh", "ntu25"),
    ("pkl", "pyskl-pickle", "ntu25"),
    ("sgn", "sgn-npz", "ntu25"),
    ("npy", "pose-npy", "ntu25"),
    ("pose-npz", "pose-npy", "h36m17"),
    ("h36m-json", "mmpose-3d-json", "h36m17"),
])
def test_each_kind_reaches_its_reader(tmp_path, clip, rng, kind, fmt, topology):
    if kind == "bvh":
        path = tmp_path / "c.bvh"
        write_bvh(path, clip)
    elif kind == "pkl":
        path = tmp_path / "c.pkl"
        write_pyskl_pickle(path, [pyskl_annotation(clip.sample_name, 2, clip.joints[None])],
                           {"all": [clip.sample_name]})
    elif kind == "sgn":
        path = tmp_path / "c.npz"
        write_sgn(path, clip)
    elif kind == "npy":  # a pose array must hold a person-sized body (dtmr.io.body_size), not random points
        path = tmp_path / "c.npy"
        np.save(path, generate_clips(subjects=1, actions=1, repetitions=1, seed=3)[0].joints[:12])
    elif kind == "pose-npz":
        path = tmp_path / "c.npz"
        np.savez(path, positions_3d=rng.normal(0, 0.2, (6, 17, 3)).astype(np.float32))
    else:
        path = tmp_path / "c.json"
        write_mmpose_h36m(path, rng)
    source = open_clip_source(path)
    assert source.format == fmt and source.topology == topology and len(source) >= 1
    assert fmt in FORMAT_LABELS
    assert all(np.isfinite(c.joints).any() for c in load_clips(path))


def test_a_bvh_opened_as_a_source_gives_back_the_clip(tmp_path, clip):
    write_bvh(tmp_path / "c.bvh", clip, per_frame_lengths=True)  # random joints: every bone length varies
    np.testing.assert_allclose(load_clips(tmp_path / "c.bvh")[0].joints, clip.joints, atol=1e-3)


@pytest.mark.parametrize("as_folder", [False, True])
def test_2d_keypoints_say_how_to_lift_them(tmp_path, clip, as_folder):
    if as_folder:
        path = tmp_path / "openpose"
        path.mkdir()
        for t in range(3):
            people = [{"pose_keypoints_2d": [v for i in range(25) for v in (100.0 + i, 200.0 + t, 0.9)]}]
            (path / f"video_{t:012d}_keypoints.json").write_text(json.dumps({"people": people}))
    else:
        path = tmp_path / "c.json"
        write_coco_json(path, clip)
    with pytest.raises(InputError, match="--lift") as info:
        open_clip_source(path)
    assert info.value.path == str(path)


def test_every_pattern_is_named_and_unknown_kinds_list_them(tmp_path):
    for suffix in (".bvh", ".pkl", ".npy", ".json", ".npz", ".skeleton", ".h5"):
        assert f"*{suffix}" in OPEN_PATTERNS
    other = tmp_path / "c.csv"
    other.write_text("1,2,3")
    with pytest.raises(InputError, match="unknown kind of file") as info:
        open_clip_source(other)
    assert all(kind in str(info.value) for kind in OPEN_KINDS)
