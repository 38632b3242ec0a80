"""PYSKL / MMAction2 annotation pickles read back: the restricted unpickler (a pickle that would run code does
not), round trips with the writer and the library export, labels, main actor, 2-D keypoints, damaged files."""

from __future__ import annotations

import os
import pickle
import resource
import struct

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from reader_fuzz import (
    CHANGES,
    CUTS,
    FUZZ,
    assert_clips_or_one_line_error,
    damaged,
    truncated,
)

from dtmr.data.clip import Clip
from dtmr.errors import InputError
from dtmr.io import safe_pickle
from dtmr.io.library import ClipLibrary
from dtmr.io.npz_dataset import write_npz_dataset
from dtmr.io.pyskl_pickle import pyskl_annotation, write_pyskl_pickle
from dtmr.io.pyskl_pickle_reader import (
    is_pyskl_pickle,
    read_pyskl_2d,
    read_pyskl_pickle,
)
from dtmr.release.export import export_library

NTU_A = "S001C002P003R002A017"
NTU_B = "S002C001P004R001A005"


def keypoint(rng, bodies=2, frames=10, joints=25, dims=3, scale=(1.0, 0.1)) -> np.ndarray:
    """(M, T, V, C) with body 0 moving most; body 1 absent (zeros) in the first 3 frames."""
    kp = np.stack([rng.normal(0, s, (frames, joints, dims)) + 2.0 for s in scale[:bodies]]).astype(np.float32)
    if bodies > 1:
        kp[1, :3] = 0
    return kp


def dump(path, data, protocol=4):
    path.write_bytes(pickle.dumps(data, protocol=protocol))
    return path


def expect_error(path, *fragments, reader=read_pyskl_pickle) -> str:
    with pytest.raises(InputError) as info:
        reader(path)
    message = str(info.value)
    assert info.value.path == str(path) and "\n" not in message
    for fragment in fragments:
        assert fragment in message, message
    return message


# -- round trips --------------------------------------------------------------------------------------------
def test_round_trip_with_the_writer_keeps_joints_labels_and_splits(rng, tmp_path):
    kp_a, kp_b = keypoint(rng), keypoint(rng, bodies=1)
    kp_a[0, 4, 7] = 0  # a missing joint, as the export writes NaN
    path = tmp_path / "ntu.pkl"
    write_pyskl_pickle(path, [pyskl_annotation(NTU_A, 16, kp_a), pyskl_annotation(NTU_B, 4, kp_b)],
                       {"xsub_train": [NTU_A], "xview_val": [NTU_A, NTU_B]})
    dataset = read_pyskl_pickle(path)
    assert (dataset.topology, dataset.format, dataset.action_names) == ("ntu25", "pyskl-pickle", None)
    a, b = dataset.clips
    expected = kp_a[0].copy()
    expected[4, 7] = np.nan
    np.testing.assert_array_equal(a.joints, expected)
    np.testing.assert_array_equal(b.joints, kp_b[0])
    # labels are A - 1 in the file: NTU's own numbers come back, the rest from the names
    assert (a.action, a.subject, a.view, a.repetition) == (17, 3, 2, 2)
    assert (b.action, b.subject, b.view, b.repetition) == (5, 4, 1, 1)
    assert a.extra == {"body_index": "0", "setup": "1", "split": "xsub_train,xview_val"}
    assert b.extra == {"body_index": "0", "setup": "2", "split": "xview_val"}
    assert (a.sample_name, a.source_file, a.fps) == (NTU_A, str(path), 30.0)


def test_library_export_reads_back_as_the_same_clips(rng, tmp_path):
    names = [NTU_A, NTU_B, "S003C003P001R001A017"]
    clips = []
    for name in names:
        joints = rng.normal(0, 1, (8, 25, 3)).astype(np.float32) + 2.0
        joints[2, 3] = np.nan
        clips.append(Clip(joints=joints, subject=int(name[9:12]), action=int(name[17:20]), view=int(name[5:8]),
                          repetition=int(name[13:16]), sample_name=name))
    library = tmp_path / "lib.h5"
    ClipLibrary.create(library, clips).close()
    export_library(library, tmp_path / "out.pkl")
    back = read_pyskl_pickle(tmp_path / "out.pkl")
    for clip, original in zip(back.clips, clips, strict=True):
        np.testing.assert_array_equal(clip.joints, original.joints)
        assert (clip.sample_name, clip.subject, clip.action, clip.view, clip.repetition) == (
            original.sample_name, original.subject, original.action, original.view, original.repetition)


def test_labels_are_kept_as_they_are_unless_every_name_agrees(rng, tmp_path):
    kp = keypoint(rng, bodies=1)
    other = tmp_path / "other.pkl"
    write_pyskl_pickle(other, [pyskl_annotation("clip0", 0, kp), pyskl_annotation("clip1", 7, kp)], {})
    assert [c.action for c in read_pyskl_pickle(other).clips] == [0, 7]
    # one NTU name whose action is not its label + 1: the file's own (0-based) labels for every clip
    mixed = tmp_path / "mixed.pkl"
    write_pyskl_pickle(mixed, [pyskl_annotation(NTU_A, 16, kp), pyskl_annotation(NTU_B, 9, kp)], {})
    clips = read_pyskl_pickle(mixed).clips
    assert [c.action for c in clips] == [16, 9] and [c.subject for c in clips] == [3, 4]


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_numpys_own_pickles_of_every_protocol(rng, tmp_path, protocol):
    """What `pickle.dump` / mmcv write: NumPy's reducers (`_reconstruct`, `_frombuffer`, `scalar`, `dtype`),
    `_codecs.encode` for bytes in protocol 2, big-endian and Fortran-ordered arrays, NumPy scalar labels."""
    kp = keypoint(rng)
    data = {"split": {"xsub_train": ["a", "b"]}, "annotations": [
        {"frame_dir": "a", "label": np.int64(3), "keypoint": kp.astype(">f8"), "total_frames": np.int64(10),
         "keypoint_score": np.ones(kp.shape[:3], np.float16), "img_shape": (1080, 1920)},
        {"frame_dir": "b", "label": 1, "keypoint": np.asfortranarray(kp), "total_frames": 10},
    ]}
    path = dump(tmp_path / "np.pkl", data, protocol)
    assert is_pyskl_pickle(path)
    clips = read_pyskl_pickle(path).clips
    assert [c.action for c in clips] == [3, 1]
    for clip in clips:
        np.testing.assert_array_equal(clip.joints, kp[0])


def test_a_list_of_annotations_without_split_is_read(rng, tmp_path):
    path = dump(tmp_path / "list.pkl", [{"frame_dir": "x", "label": 2, "keypoint": keypoint(rng)}])
    (clip,) = read_pyskl_pickle(path).clips
    assert clip.action == 2 and "split" not in clip.extra


# -- main actor ---------------------------------------------------------------------------------------------
def test_main_actor_is_the_body_with_most_motion_in_its_frames(rng, tmp_path):
    kp = keypoint(rng, scale=(0.1, 1.0))  # body 1 moves most; it is absent from the first 3 frames
    kp[0, 8:] = 0
    path = dump(tmp_path / "two.pkl", {"annotations": [{"frame_dir": "x", "label": 0, "keypoint": kp}]})
    (clip,) = read_pyskl_pickle(path).clips
    assert clip.extra["body_index"] == "1"
    np.testing.assert_array_equal(clip.joints, kp[1, 3:])


def test_main_actor_tie_takes_the_first_body(rng, tmp_path):
    one = keypoint(rng, bodies=1)
    kp = np.concatenate([one, one + 1.0])  # same motion, shifted
    path = dump(tmp_path / "tie.pkl", {"annotations": [{"frame_dir": "x", "label": 0, "keypoint": kp}]})
    assert read_pyskl_pickle(path).clips[0].extra["body_index"] == "0"


# -- 2-D keypoints ------------------------------------------------------------------------------------------
def test_2d_keypoints_are_refused_as_clips_and_returned_for_lifting(rng, tmp_path):
    kp = keypoint(rng, joints=17, dims=2) * 100
    kp[0, 5, 3] = 0
    scores = rng.uniform(0, 1, kp.shape[:3]).astype(np.float32)
    path = dump(tmp_path / "hrnet.pkl", {"split": {"train": [NTU_A]}, "annotations": [
        {"frame_dir": NTU_A, "label": 16, "keypoint": kp, "keypoint_score": scores, "img_shape": (1080, 1920),
         "total_frames": 10}]})
    expect_error(path, "2-D keypoints", "--lift")
    poses = read_pyskl_2d(path)
    assert poses.topology == "coco17"
    (pose,) = poses.poses
    expected = kp[0].copy()
    expected[5, 3] = np.nan
    np.testing.assert_array_equal(pose.keypoints, expected)
    np.testing.assert_array_equal(pose.scores, scores[0])
    assert pose.img_shape == (1080, 1920)
    clip = Clip(joints=np.zeros((10, 25, 3)) + 1, topology="ntu25", **pose.fields)  # what a lifter builds
    assert (clip.action, clip.subject, clip.extra["split"]) == (17, 3, "train")
    expect_error(dump(tmp_path / "3d.pkl", [{"frame_dir": "x", "label": 0, "keypoint": keypoint(rng)}]),
                 "3-D keypoints", reader=read_pyskl_2d)


# -- recognition --------------------------------------------------------------------------------------------
def test_is_pyskl_pickle_sniffs_the_first_bytes(rng, tmp_path):
    write_pyskl_pickle(tmp_path / "w.pkl", [pyskl_annotation("a", 0, keypoint(rng, bodies=1))], {})
    assert is_pyskl_pickle(tmp_path / "w.pkl")
    assert is_pyskl_pickle(dump(tmp_path / "p0.pickle", {"annotations": []}, protocol=0))
    assert not is_pyskl_pickle(dump(tmp_path / "wrong_suffix.bin", {"annotations": []}))
    assert not is_pyskl_pickle(dump(tmp_path / "number.pkl", 3))
    (tmp_path / "text.pkl").write_text("hello")
    write_npz_dataset(tmp_path / "own.npz", [Clip(joints=np.ones((2, 25, 3)))])
    for path in (tmp_path / "text.pkl", tmp_path / "own.npz", tmp_path / "missing.pkl", tmp_path):
        assert not is_pyskl_pickle(path)


# -- pickles that must not run --------------------------------------------------------------------------------
class _WritesAFile:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return os.system, (f"touch {self.marker}",)


class _OpensAFile:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return open, (str(self.marker), "w")


@pytest.mark.parametrize("payload", [_WritesAFile, _OpensAFile])
def test_a_pickle_that_would_run_code_is_refused_and_does_not_run(tmp_path, payload):
    marker = tmp_path / "marker"
    for protocol in (0, 2, 4):
        path = dump(tmp_path / "evil.pkl", {"split": {}, "annotations": [{"frame_dir": payload(marker)}]}, protocol)
        message = expect_error(path, "refused to load: it references the Python object")
        assert ("system" if payload is _WritesAFile else "open") in message
        assert not marker.exists()


@pytest.mark.parametrize("module, name", [
    ("builtins", "eval"), ("builtins", "getattr"), ("subprocess", "Popen"), ("numpy", "load"),
    ("numpy", "ndarray.__new__"), ("copyreg", "_reconstructor"), ("numpy.core.multiarray", "fromstring"),
])
def test_every_other_global_is_refused_by_name(tmp_path, module, name):
    path = tmp_path / "global.pkl"
    path.write_bytes(b"\x80\x02c" + f"{module}\n{name}\n".encode() + b"X\x01\x00\x00\x00a\x85R.")
    expect_error(path, f"Python object {module}.{name}")


def test_admitted_globals_cannot_be_changed_or_instantiated(tmp_path):
    crafted = {
        # BUILD with a slot state on numpy.dtype's stand-in: setattr(dtype, "build", None)
        "slots.pkl": b"\x80\x02cnumpy\ndtype\nN}X\x05\x00\x00\x00buildNs\x86b.",
        # BUILD with a dict state: numpy.ndarray's stand-in has no __dict__
        "dict.pkl": b"\x80\x02cnumpy\nndarray\n}X\x01\x00\x00\x00aNsb.",
        # NEWOBJ: ndarray.__new__ without the checks
        "newobj.pkl": b"\x80\x02cnumpy\nndarray\n)\x81.",
    }
    for name, data in crafted.items():
        (tmp_path / name).write_bytes(data)
        expect_error(tmp_path / name, "not a readable")
    assert safe_pickle._ADMITTED[("numpy", "dtype")].build is safe_pickle._new_dtype


class _HugeArray:
    def __reduce__(self):
        return np.ndarray, ((10**12, 25, 3), "<f4", bytearray(b"abcd"))


class _HugeState:
    def __reduce__(self):
        return np.ndarray.__reduce__(np.zeros(1, np.float32))[:2] + ((1, (10**12,), np.dtype("f4"), False, b"abcd"),)


class _ObjectArray:
    def __reduce__(self):
        return np.ndarray.__reduce__(np.array([None, 1], dtype=object))


@pytest.mark.parametrize("payload, fragment", [
    (_HugeArray, "declares 300000000000000 bytes of data but holds 4"),
    (_HugeState, "declares 4000000000000 bytes of data but holds 4"),
    (_ObjectArray, "not a plain"),
])
def test_arrays_are_refused_before_their_declared_size_is_allocated(tmp_path, payload, fragment):
    path = dump(tmp_path / "huge.pkl", {"annotations": [{"frame_dir": "x", "keypoint": payload()}]})
    expect_error(path, fragment)


def test_lengths_beyond_the_file_and_files_beyond_the_cap_are_refused(tmp_path, monkeypatch):
    path = tmp_path / "long.pkl"
    path.write_bytes(b"\x80\x04\x8e" + struct.pack("<Q", 2**60) + b"ab.")  # BINBYTES8 of 2**60 bytes
    expect_error(path, "not a readable")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    path.write_bytes(b"\x80\x05\x96" + struct.pack("<Q", 2**31) + b"ab.")  # BYTEARRAY8: not allocated first
    expect_error(path, "truncated")
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 2**20  # KiB: less than 1 GiB more
    path.write_bytes(b"\x80\x02Nr\xff\xff\xff\xff.")  # None memoized at 2**32 - 1: no 64 GiB memo table
    expect_error(path, "got NoneType")
    monkeypatch.setattr(safe_pickle, "MAX_PICKLE_BYTES", 8)
    path.write_bytes(pickle.dumps({"annotations": []}))
    expect_error(path, "larger than")


# -- malformed annotations ------------------------------------------------------------------------------------
def _one(rng, **changes) -> list[dict]:
    annotation = {"frame_dir": "x", "label": 1, "keypoint": keypoint(rng), "total_frames": 10}
    annotation.update(changes)
    return [{key: value for key, value in annotation.items() if value is not _DROP}]


_DROP = object()


@pytest.mark.parametrize("make, fragment", [
    (lambda rng: 3, "expected a dict"),
    (lambda rng: {"split": {}}, "expected a dict with an 'annotations' list"),
    (lambda rng: [], "no annotations"),
    (lambda rng: ["x"], "annotation 0: expected a dict"),
    (lambda rng: _one(rng, frame_dir=_DROP), "'frame_dir' must be a string"),
    (lambda rng: _one(rng, keypoint=np.zeros((10, 25, 3))), "numeric (M, T, V, C)"),
    (lambda rng: _one(rng, keypoint=np.array([["a"]] * 2).reshape(1, 1, 2, 1)), "numeric (M, T, V, C)"),
    (lambda rng: _one(rng, keypoint=np.zeros((1, 0, 25, 3), np.float32)), "M, T, V > 0"),
    (lambda rng: _one(rng, keypoint=np.ones((1, 4, 25, 4), np.float32)), "C = 2 or 3"),
    (lambda rng: _one(rng, total_frames=11), "'total_frames' is 11"),
    (lambda rng: _one(rng, label="3"), "'label' must be an integer"),
    (lambda rng: _one(rng, keypoint_score=np.ones((2, 10))), "'keypoint_score' must be"),
    (lambda rng: _one(rng, img_shape=(1080,)), "'img_shape'"),
    (lambda rng: _one(rng, keypoint=np.zeros((2, 10, 25, 3), np.float32)), "no body in any frame"),
    (lambda rng: _one(rng, keypoint=np.full((1, 10, 25, 3), 1e300)), "infinite"),
    (lambda rng: _one(rng) + _one(rng, keypoint=keypoint(rng, joints=20))[:1], "different joint counts"),
    (lambda rng: _one(rng, keypoint=keypoint(rng, joints=17)), "cannot tell the topology of 17 joints"),
    (lambda rng: {"annotations": _one(rng), "split": ["x"]}, "'split' must be a dict"),
    (lambda rng: {"annotations": _one(rng), "split": {"a": "x"}}, "split 'a' must name a list"),
])
def test_malformed_annotations_are_one_line_errors(rng, tmp_path, make, fragment):
    expect_error(dump(tmp_path / "bad.pkl", make(rng)), fragment)


def test_topology_argument_reads_other_joint_sets(rng, tmp_path):
    path = dump(tmp_path / "h36m.pkl", _one(rng, keypoint=keypoint(rng, joints=17)))
    assert read_pyskl_pickle(path, topology="h36m17").topology == "h36m17"
    with pytest.raises(InputError, match="topology ntu25 has 25 joints, the file has 17"):
        read_pyskl_pickle(path, topology="ntu25")


def test_negative_labels_and_unknown_split_names_are_unknown(rng, tmp_path):
    path = dump(tmp_path / "neg.pkl", {"split": {"a": ["x", "nobody"]}, "annotations": _one(rng, label=-1)})
    (clip,) = read_pyskl_pickle(path).clips
    assert clip.action is None and clip.extra["split"] == "a"


# -- damaged files (property tests) ---------------------------------------------------------------------------
def _valid_files() -> dict[str, bytes]:
    rng = np.random.default_rng(3)
    data = {"split": {"train": [NTU_A], "val": [NTU_B]}, "annotations": [
        {"frame_dir": NTU_A, "label": 16, "keypoint": keypoint(rng, frames=4), "total_frames": 4},
        {"frame_dir": NTU_B, "label": np.int64(4), "keypoint": keypoint(rng, bodies=1, frames=3)},
    ]}
    return {f"protocol{p}": pickle.dumps(data, protocol=p) for p in (0, 2, 4, 5)}


VALID = _valid_files()


@FUZZ
@given(which=st.sampled_from(sorted(VALID)), cut=CUTS)
def test_truncated_files_read_or_fail_cleanly(tmp_path_factory, which, cut):
    path = tmp_path_factory.mktemp("cut") / "t.pkl"
    assert_clips_or_one_line_error(read_pyskl_pickle, path, truncated(VALID[which], cut))


@FUZZ
@given(which=st.sampled_from(sorted(VALID)), changes=CHANGES)
def test_damaged_bytes_read_or_fail_cleanly(tmp_path_factory, which, changes):
    path = tmp_path_factory.mktemp("flip") / "f.pkl"
    assert_clips_or_one_line_error(read_pyskl_pickle, path, damaged(VALID[which], changes))


def _filled(shape, dtype, value) -> np.ndarray:
    with np.errstate(over="ignore"):  # 1e300 as float32 is inf, on purpose
        return np.full(shape, value if np.dtype(dtype).kind in "fc" else 1, dtype=dtype)


_VALUES = st.one_of(
    st.none(), st.integers(-3, 3), st.floats(allow_nan=True), st.text(max_size=3), st.binary(max_size=3),
    st.lists(st.integers(0, 3), max_size=3).map(tuple),
    st.tuples(st.integers(0, 3), st.integers(0, 3), st.integers(0, 30), st.integers(0, 4),
              st.sampled_from(["<f4", ">f8", "<i2", "u1", "?", "<c8", "U2"]),
              st.sampled_from([0.0, 1.0, np.nan, np.inf, 1e300])).map(lambda s: _filled(s[:4], s[4], s[5])),
)


@FUZZ
@given(fields=st.dictionaries(st.sampled_from(["frame_dir", "label", "keypoint", "keypoint_score", "total_frames",
                                               "img_shape"]), _VALUES),
       keep=st.booleans(), protocol=st.sampled_from([2, 4, 5]))
def test_wrong_types_shapes_and_values_read_or_fail_cleanly(tmp_path_factory, fields, keep, protocol):
    annotation = {"frame_dir": "S001C001P001R001A001", "label": 0,
                  "keypoint": np.ones((1, 3, 25, 3), np.float32)} if keep else {}
    annotation.update(fields)
    assert_clips_or_one_line_error(read_pyskl_pickle, tmp_path_factory.mktemp("types") / "w.pkl",
                                   pickle.dumps({"annotations": [annotation]}, protocol))


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_a_bytearray_loads_in_every_protocol(tmp_path, protocol):
    """Issue 43: protocols 0-2 name it `__builtin__.bytearray`, which was refused."""
    path = dump(tmp_path / "b.pkl", {"raw": bytearray(b"xyz")}, protocol=protocol)
    assert safe_pickle.load_data_pickle(path) == {"raw": bytearray(b"xyz")}
