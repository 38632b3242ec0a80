"""Pose-estimator arrays: FreeMoCap / MediaPipe-33 `.npy`, Human3.6M-17 `.npy`/`.npz` (VideoPose3D) and MMPose's
3-D results JSON, on fixtures made here from a synthetic NTU-25 body put in each producer's own frame."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dtmr.data import generate_clips
from dtmr.errors import InputError
from dtmr.io.pose_npy import (
    FREEMOCAP_NAMES,
    UP_ROTATIONS,
    is_mmpose3d_json,
    is_pose_npy,
    read_mmpose3d_json,
    read_pose_npy,
)
from dtmr.skeleton import NTU25, get_topology, to_ntu25

FUZZ = settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
#: joint of each set -> the NTU-25 joint it is placed at on the synthetic body (the rest: at the nearest one)
PLACES = {
    "h36m17": {"root": "spine_base", "spine": "spine_mid", "thorax": "spine_shoulder", "neck_base": "neck",
               "head": "head", "left_foot": "left_ankle", "right_foot": "right_ankle"},
    "mediapipe33": {"left_foot_index": "left_foot", "right_foot_index": "right_foot", "left_heel": "left_ankle",
                    "right_heel": "right_ankle", "left_pinky": "left_hand", "right_pinky": "right_hand",
                    "left_index": "left_hand_tip", "right_index": "right_hand_tip"},
}


def _body(name: str) -> np.ndarray:
    """(T, J, 3) joints of set `name` in the project's frame (metres, y up) from a synthetic NTU-25 clip."""
    ntu = generate_clips(subjects=1, actions=1, repetitions=1, seed=7)[0].joints[:20]
    topo = get_topology(name)
    out = np.empty((len(ntu), topo.num_joints, 3), dtype=np.float32)
    for j, joint in enumerate(topo.joint_names):
        target = PLACES[name].get(joint, joint if joint in NTU25.joint_names else "head")
        out[:, j] = ntu[:, NTU25.index(target)]
    return out


BODY_H36M = _body("h36m17")
BODY_MP = _body("mediapipe33")


def _camera(joints: np.ndarray) -> np.ndarray:
    """Kinect camera space (x left, y up, z forward) -> OpenCV's (x right, y down, z forward)."""
    return joints * np.array([-1.0, -1.0, 1.0])


def _z_up_mm(joints: np.ndarray) -> np.ndarray:
    """y-up metres -> FreeMoCap's ground-plane world: z up, millimetres."""
    return 1000.0 * joints @ UP_ROTATIONS["+z"]


def _mmpose(joints: np.ndarray) -> np.ndarray:
    """What MMPose's demo writes: (-x, z, -y) of camera space."""
    cam = _camera(joints)
    return np.stack([-cam[..., 0], cam[..., 2], -cam[..., 1]], axis=-1)


def _mmpose_document(joints: np.ndarray, empty_frames=()) -> dict:
    names = {str(j): n for j, n in enumerate(get_topology("h36m17").joint_names)}
    frames = [
        {"frame_id": t, "instances": [] if t in empty_frames else [
            {"keypoints": pose.tolist(), "keypoint_scores": [1.0] * 17},
            {"keypoints": (pose + 5).tolist(), "keypoint_scores": [1.0] * 17},
        ]}
        for t, pose in enumerate(_mmpose(joints))
    ]
    return {"meta_info": {"dataset_name": "h36m", "num_keypoints": 17, "keypoint_id2name": names},
            "instance_info": frames}


def _only_clip(source):
    assert len(source) == 1
    return source.read(0)


def test_freemocap_body_in_millimetres_z_up_reads_back_in_metres_y_up(tmp_path):
    path = tmp_path / "mediapipe_body_3d_xyz.npy"
    np.save(path, _z_up_mm(BODY_MP))
    assert is_pose_npy(path)
    source = read_pose_npy(path)
    clip = _only_clip(source)
    assert source.format == "pose-npy" and source.topology == clip.topology == "mediapipe33"
    np.testing.assert_allclose(clip.joints, BODY_MP, atol=1e-5)
    assert clip.subject is None and clip.action is None and clip.fps == 30.0
    assert source.metadata_table()["action"].tolist() == [-1]
    assert to_ntu25(clip.joints, clip.topology).shape == (len(BODY_MP), 25, 3)


def test_freemocap_names_file_reorders_the_landmarks(tmp_path):
    names = list(get_topology("mediapipe33").joint_names)
    order = np.random.default_rng(0).permutation(33)
    np.save(tmp_path / "mediapipe_body_3d_xyz.npy", _z_up_mm(BODY_MP)[:, order])
    (tmp_path / FREEMOCAP_NAMES).write_text(json.dumps({"body": {"names": [names[i] for i in order]}}))
    clip = _only_clip(read_pose_npy(tmp_path / "mediapipe_body_3d_xyz.npy"))
    np.testing.assert_allclose(clip.joints, BODY_MP, atol=1e-5)


def test_freemocap_names_file_with_other_names_is_refused(tmp_path):
    np.save(tmp_path / "body.npy", _z_up_mm(BODY_MP))
    names = [f"point_{i}" for i in range(33)]
    (tmp_path / FREEMOCAP_NAMES).write_text(json.dumps({"body": {"names": names}}))
    with pytest.raises(InputError, match=FREEMOCAP_NAMES) as caught:
        read_pose_npy(tmp_path / "body.npy")
    assert caught.value.path.endswith(FREEMOCAP_NAMES)


def test_videopose3d_export_in_camera_space_reads_back_y_up(tmp_path):
    path = tmp_path / "export.npy"
    np.save(path, _camera(BODY_H36M).astype(np.float32))
    clip = _only_clip(read_pose_npy(path))
    assert clip.topology == "h36m17" and clip.sample_name == "export"
    np.testing.assert_allclose(clip.joints, BODY_H36M, atol=1e-6)
    # y up: the head is above the ankles
    h36m = get_topology("h36m17")
    assert (clip.joints[:, h36m.index("head"), 1] > clip.joints[:, h36m.index("left_foot"), 1]).all()


@pytest.mark.parametrize("key", ["positions_3d", "keypoints"])
def test_npz_with_a_pose_array_and_fps(tmp_path, key):
    path = tmp_path / "lifted.npz"
    np.savez(path, **{key: _camera(BODY_H36M)}, fps=np.float32(50))
    assert is_pose_npy(path)
    clip = _only_clip(read_pose_npy(path))
    assert clip.fps == 50.0 and clip.topology == "h36m17"
    np.testing.assert_allclose(clip.joints, BODY_H36M, atol=1e-6)


def test_videopose3d_dataset_npz_of_pickled_dicts_is_refused_without_unpickling(tmp_path):
    path = tmp_path / "data_3d_h36m.npz"
    np.savez(path, positions_3d=np.array({"S1": {}}, dtype=object))
    with pytest.raises(InputError, match="never unpickled"):
        read_pose_npy(path)


def test_bare_array_joint_count_decides_and_others_are_refused(tmp_path):
    np.save(tmp_path / "ntu.npy", BODY_H36M[:, :1].repeat(25, axis=1) + np.arange(25)[:, None] * 0.01)
    assert _only_clip(read_pose_npy(tmp_path / "ntu.npy")).topology == "ntu25"
    np.save(tmp_path / "twenty.npy", np.zeros((4, 20, 3)))
    with pytest.raises(InputError, match=r"twenty\.npy: 20 joints.*17 \(h36m17\), 25 \(ntu25\), 33 \(mediapipe33\)"):
        read_pose_npy(tmp_path / "twenty.npy")
    np.save(tmp_path / "flat.npy", np.zeros((4, 51)))
    with pytest.raises(InputError, match=r"flat\.npy: the array is float64 \(4, 51\); expected"):
        read_pose_npy(tmp_path / "flat.npy")


def test_topology_and_up_can_be_given(tmp_path):
    path = tmp_path / "coco3d.npy"
    np.save(path, BODY_H36M @ UP_ROTATIONS["+x"])  # an x-up array of 17 joints
    clip = _only_clip(read_pose_npy(path, topology="coco17", up="+x"))
    assert clip.topology == "coco17"
    np.testing.assert_allclose(clip.joints, BODY_H36M, atol=1e-6)
    with pytest.raises(InputError, match="has 25 joints, the array has 17"):
        read_pose_npy(path, topology="ntu25")
    with pytest.raises(InputError, match="unknown up axis"):
        read_pose_npy(path, up="up")


@pytest.mark.parametrize("axis", sorted(UP_ROTATIONS))
def test_up_rotations_are_proper_and_lift_their_axis(axis):
    r = UP_ROTATIONS[axis]
    assert np.linalg.det(r) == pytest.approx(1.0)
    unit = np.zeros(3)
    unit["xyz".index(axis[1])] = 1.0 if axis[0] == "+" else -1.0
    np.testing.assert_allclose(r @ unit, [0, 1, 0])


def test_missing_joints_stay_nan_and_a_clip_without_hips_is_refused(tmp_path):
    joints = _camera(BODY_H36M).copy()
    joints[3, 10] = np.nan
    np.save(tmp_path / "gap.npy", joints)
    clip = _only_clip(read_pose_npy(tmp_path / "gap.npy"))
    assert np.isnan(clip.joints[3, 10]).all() and np.isfinite(np.delete(clip.joints[3], 10, axis=0)).all()
    joints[:, 1] = np.nan  # right hip never seen
    np.save(tmp_path / "nohips.npy", joints)
    with pytest.raises(InputError, match="hips are never both present"):
        read_pose_npy(tmp_path / "nohips.npy")


def test_mmpose_results_read_the_first_person_mirrored_back(tmp_path):
    path = tmp_path / "results_walk.json"
    path.write_text(json.dumps(_mmpose_document(BODY_H36M, empty_frames={2}), indent="\t"))
    assert is_mmpose3d_json(path) and not is_pose_npy(path)
    source = read_mmpose3d_json(path)
    clip = _only_clip(source)
    assert source.format == "mmpose-3d-json" and clip.topology == "h36m17"
    assert np.isnan(clip.joints[2]).all()
    keep = np.arange(len(BODY_H36M)) != 2
    np.testing.assert_allclose(clip.joints[keep], BODY_H36M[keep], atol=1e-6)


def test_mmpose_results_of_other_skeletons_or_2d_are_refused(tmp_path):
    document = _mmpose_document(BODY_H36M)
    document["meta_info"]["keypoint_id2name"]["0"] = "nose"
    (tmp_path / "a.json").write_text(json.dumps(document))
    with pytest.raises(InputError, match="keypoint_id2name"):
        read_mmpose3d_json(tmp_path / "a.json")
    document = _mmpose_document(BODY_H36M)
    document["instance_info"][1]["instances"][0]["keypoints"] = [[0.0, 0.0]] * 17
    (tmp_path / "b.json").write_text(json.dumps(document))
    with pytest.raises(InputError, match=r"b\.json: frame 1: 2-D keypoints"):
        read_mmpose3d_json(tmp_path / "b.json")
    coco = {"meta_info": {"dataset_name": "coco"}, "instance_info": []}
    (tmp_path / "coco.json").write_text(json.dumps(coco))
    assert not is_mmpose3d_json(tmp_path / "coco.json")


def test_sniffers_never_raise_and_leave_the_dataset_layout_alone(tmp_path):
    np.savez(tmp_path / "dataset.npz", joints=np.zeros((1, 2, 25, 3)))
    (tmp_path / "junk.npz").write_bytes(b"PK\x03\x04 not really")
    (tmp_path / "dir.npy").mkdir()
    for path in ("dataset.npz", "junk.npz", "missing.npy", "dir.npy", "missing.json"):
        assert not is_pose_npy(tmp_path / path) and not is_mmpose3d_json(tmp_path / path)


# ------------------------------------------------------------------ damaged files


def _check(path, reader=read_pose_npy):
    """A damaged file gives valid clips or one InputError line naming it; nothing else."""
    try:
        source = reader(path)
    except InputError as exc:
        assert exc.path == str(path) or exc.path.endswith(FREEMOCAP_NAMES)
        assert "\n" not in str(exc)
        return
    clip = _only_clip(source)
    assert clip.joints.dtype == np.float32 and not np.isinf(clip.joints).any()


def _npy_bytes(array: np.ndarray, path) -> bytes:
    np.save(path, array)
    return path.read_bytes()


@FUZZ
@given(cut=st.integers(0, 2000), flips=st.lists(st.tuples(st.integers(0, 2000), st.integers(0, 255)), max_size=4))
def test_damaged_npy(tmp_path_factory, cut, flips):
    folder = tmp_path_factory.mktemp("npy")
    data = bytearray(_npy_bytes(_camera(BODY_H36M[:8]).astype(np.float32), folder / "base.npy"))
    for at, value in flips:
        data[at % len(data)] = value
    path = folder / "damaged.npy"
    path.write_bytes(bytes(data[: max(cut, 0)] if cut < len(data) else data))
    _check(path)


@FUZZ
@given(cut=st.integers(0, 3000), at=st.integers(0, 3000), value=st.integers(0, 255))
def test_damaged_npz(tmp_path_factory, cut, at, value):
    folder = tmp_path_factory.mktemp("npz")
    np.savez(folder / "base.npz", positions_3d=_camera(BODY_H36M[:8]), fps=np.float64(25))
    data = bytearray((folder / "base.npz").read_bytes())
    data[at % len(data)] = value
    path = folder / "damaged.npz"
    path.write_bytes(bytes(data[:cut] if cut < len(data) else data))
    _check(path)


@FUZZ
@given(shape=st.tuples(st.integers(0, 10**12), st.sampled_from([17, 33, 25, 3, 0]), st.integers(0, 4)),
       dtype=st.sampled_from(["<f4", ">f8", "|b1", "<c8", "<i2", "|O"]))
def test_huge_or_odd_declared_headers_are_refused_before_reading(tmp_path_factory, shape, dtype):
    folder = tmp_path_factory.mktemp("hdr")
    header = repr({"descr": dtype, "fortran_order": False, "shape": shape}).encode()
    header += b" " * (-(len(header) + 11) % 64) + b"\n"
    path = folder / "declared.npy"
    path.write_bytes(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header + b"\x00" * 408)
    _check(path)


@FUZZ
@given(cut=st.integers(0, 4000), token=st.sampled_from(["NaN", "1e999", "-1e39", "null", '"x"', "[]", "{}", "[1,2]"]),
       at=st.integers(0, 400))
def test_damaged_mmpose_json(tmp_path_factory, cut, token, at):
    folder = tmp_path_factory.mktemp("json")
    text = json.dumps(_mmpose_document(BODY_H36M[:3]))
    numbers = [i for i, ch in enumerate(text) if ch.isdigit() and text[i - 1] in "[ "]
    i = numbers[at % len(numbers)]
    damaged = (text[:i] + token + text[i + 1:])[:cut] if cut < len(text) else text[:i] + token + text[i + 1:]
    path = folder / "results.json"
    path.write_text(damaged)
    _check(path, read_mmpose3d_json)
