"""Two-person clips keep their second person through the library and every export that can hold one (issue
45): NTU `.skeleton` files (two bodies per frame, spec: the NTU RGB+D README's file layout) and PYSKL
pickles (`keypoint` (M, T, V, C), M = 2), read and written by the project's own readers and writers; a
release never carries the partner (it is not anonymized). Also: a 2-D PYSKL pickle and a COCO JSON of the
same detections keep the frames without a person alike (NaN in both)."""

from __future__ import annotations

import json

import h5py
import numpy as np
import pytest

from dtmr.data import generate_clips
from dtmr.data.clip import Clip
from dtmr.io.coco_json import read_coco_json_2d
from dtmr.io.library import ClipLibrary
from dtmr.io.ntu_skeleton import SkeletonFile, read_ntu_clip, read_skeleton_file, skeleton_from_clip, \
    write_skeleton_file
from dtmr.io.pyskl_pickle import pyskl_annotation, write_pyskl_pickle
from dtmr.io.pyskl_pickle_reader import load_annotation_pickle, read_pyskl_2d, read_pyskl_pickle
from dtmr.io.sgn_npz import read_sgn_npz
from dtmr.io.sources import open_clip_source
from dtmr.release.export import export_library

NAME = "S001C001P002R001A050"  # NTU's A050 "punch/slap": a two-person action


@pytest.fixture(scope="module")
def two_bodies() -> tuple[np.ndarray, np.ndarray]:
    """Two performers, (T, 25, 3) each, in camera space (z > 0: Kinect puts every joint in front of it); the
    first moves more (the main actor), the second is absent from frames 0-2 and 10-11 (NaN)."""
    clips = generate_clips(subjects=2, actions=2, repetitions=1, seed=11, noise=0.0)
    main = clips[0].joints[:20].astype(np.float64) + [0.4, 0.0, 3.0]
    other = clips[3].joints[:20].astype(np.float64) + [-0.5, 0.0, 3.2]
    rest = other.mean(axis=0)
    other = rest + (other - rest) * 0.2  # the same body, moving a fifth as much
    other[[0, 1, 2, 10, 11]] = np.nan
    return main.astype(np.float32), other.astype(np.float32)


def two_person_file(path, two_bodies):
    """A `.skeleton` file of the two bodies: body 72057594037944738 in every frame, the other where present."""
    main, other = two_bodies
    clip = Clip(joints=main, partners=other[None], sample_name=NAME,
                extra={"body_id": "72057594037944738", "partner_body_ids": "72057594037944734"})
    write_skeleton_file(path, clip)
    return path


def assert_same(a, b):
    np.testing.assert_allclose(a, b, atol=1e-6, equal_nan=True)


def test_skeleton_file_two_bodies_read_as_a_clip_with_its_partner(tmp_path, two_bodies):
    path = two_person_file(tmp_path / f"{NAME}.skeleton", two_bodies)
    skeleton = read_skeleton_file(path)
    assert skeleton.body_ids == [72057594037944738, 72057594037944734]
    assert skeleton.bodies[72057594037944734].frames.tolist() == [3, 4, 5, 6, 7, 8, 9, *range(12, 20)]
    clip = read_ntu_clip(path)
    assert clip.extra["partner_body_ids"] == "72057594037944734" and clip.num_partners == 1
    assert_same(clip.joints, two_bodies[0])
    assert_same(clip.partners[0], two_bodies[1])


def test_library_keeps_partners_and_exports_write_both_bodies(tmp_path, two_bodies):
    path = two_person_file(tmp_path / f"{NAME}.skeleton", two_bodies)
    alone = generate_clips(subjects=1, actions=1, repetitions=1, seed=2, noise=0.0)[0]
    library = tmp_path / "lib.h5"
    ClipLibrary.create(library, [alone, open_clip_source(path).read(0), alone]).close()
    with ClipLibrary(library) as opened:
        assert [c.num_partners for c in opened.read_all()] == [0, 1, 0]
        assert_same(opened.read(1).partners[0], two_bodies[1])

    export_library(library, tmp_path / "out.pkl")
    annotations = load_annotation_pickle(tmp_path / "out.pkl")["annotations"]
    assert [a["keypoint"].shape[0] for a in annotations] == [1, 2, 1]  # M = 2 for the two-person clip
    keypoint = annotations[1]["keypoint"]
    assert_same(keypoint[0], two_bodies[0])
    assert (keypoint[1][[0, 1, 2, 10, 11]] == 0).all()  # absent: zeros, as PYSKL pads bodies
    assert_same(keypoint[1][3:10], two_bodies[1][3:10])
    back = read_pyskl_pickle(tmp_path / "out.pkl").clips[1]
    assert_same(back.joints, two_bodies[0])
    assert_same(back.partners[0], two_bodies[1])

    export_library(library, f"{tmp_path / 'folder'}/")
    skeleton = read_skeleton_file(tmp_path / "folder" / f"{NAME}.skeleton")
    assert skeleton.body_ids == [72057594037944738, 72057594037944734]
    clip = read_ntu_clip(tmp_path / "folder" / f"{NAME}.skeleton")
    assert_same(clip.joints, two_bodies[0])
    assert_same(clip.partners[0], two_bodies[1])


def test_a_release_never_exports_the_partner(tmp_path, two_bodies):
    main, other = two_bodies
    library = tmp_path / "release.h5"
    ClipLibrary.create(library, [Clip(joints=main, partners=other[None], action=50, sample_name="R000001")]).close()
    with h5py.File(library, "r+") as h5:
        h5.attrs["release_format"] = "dtmr-release"
    export_library(library, tmp_path / "release.pkl")
    assert load_annotation_pickle(tmp_path / "release.pkl")["annotations"][0]["keypoint"].shape[0] == 1
    export_library(library, f"{tmp_path / 'release_folder'}/")
    (written,) = (tmp_path / "release_folder").iterdir()
    assert len(read_skeleton_file(written).bodies) == 1


def test_new_joints_drop_the_partner(two_bodies):
    main, other = two_bodies
    clip = Clip(joints=main, partners=other[None])
    assert clip.replace(fps=15.0).num_partners == 1
    assert clip.replace(joints=main + 1).partners is None  # an anonymized clip carries no raw partner
    assert "partners" not in clip.metadata()
    with pytest.raises(ValueError, match="partners must be"):
        Clip(joints=main, partners=other[None, :5])


def test_pyskl_and_sgn_two_body_arrays_give_partners(tmp_path, two_bodies):
    main, other = two_bodies
    bodies = np.stack([np.nan_to_num(other), np.nan_to_num(main)])  # the main actor second: chosen by motion
    write_pyskl_pickle(tmp_path / "two.pkl", [pyskl_annotation(NAME, 49, bodies)], {"all": [NAME]})
    clip = read_pyskl_pickle(tmp_path / "two.pkl").clips[0]
    assert clip.extra["body_index"] == "1"
    assert_same(clip.partners[0], other)
    x = np.concatenate([bodies[1].reshape(20, 75), bodies[0].reshape(20, 75)], axis=1)[None]
    np.savez(tmp_path / "sgn.npz", x_test=np.pad(x, ((0, 0), (0, 5), (0, 0))), y_test=np.array([49]))
    sgn = read_sgn_npz(tmp_path / "sgn.npz").clips[0]
    assert sgn.num_frames == 20
    assert_same(sgn.partners[0], other)


def test_2d_pickle_and_json_of_the_same_detections_keep_empty_frames_alike(tmp_path, rng):
    frames = 8
    points = 300 + rng.uniform(0, 200, (frames, 17, 2)).astype(np.float32)
    scores = np.full((frames, 17), 0.9, np.float32)
    empty = [0, 1, 5]  # no person detected in these frames
    points[empty] = 0
    scores[empty] = 0
    write_pyskl_pickle(tmp_path / "det.pkl", [{**pyskl_annotation("video", 0, points[None]),
                                               "keypoint_score": scores[None], "img_shape": (720, 1280)}],
                       {"all": ["video"]})
    video = [{"frame_id": t, "instances": [] if t in empty else
              [{"keypoints": points[t].tolist(), "keypoint_scores": scores[t].tolist()}]} for t in range(frames)]
    (tmp_path / "det.json").write_text(json.dumps(video))
    from_pickle = read_pyskl_2d(tmp_path / "det.pkl").poses[0]
    from_json = read_coco_json_2d(tmp_path / "det.json")
    assert from_pickle.keypoints.shape == from_json.keypoints.shape == (frames, 17, 2)
    assert np.isnan(from_pickle.keypoints[empty]).all() and np.isnan(from_json.keypoints[empty]).all()
    np.testing.assert_allclose(from_pickle.keypoints, from_json.keypoints, atol=1e-4, equal_nan=True)
    assert (from_pickle.scores[empty] == 0).all()


def test_skeleton_from_clip_without_partner_is_one_body(two_bodies):
    skeleton = skeleton_from_clip(Clip(joints=two_bodies[0]))
    assert isinstance(skeleton, SkeletonFile) and list(skeleton.bodies) == [0]


def test_npz_export_keeps_partners(tmp_path, two_bodies):
    from dtmr.io.npz_dataset import read_npz_dataset

    path = two_person_file(tmp_path / f"{NAME}.skeleton", two_bodies)
    alone = generate_clips(subjects=1, actions=1, repetitions=1, seed=2, noise=0.0)[0]
    library = tmp_path / "lib.h5"
    ClipLibrary.create(library, [alone, open_clip_source(path).read(0)]).close()
    export_library(library, tmp_path / "out.npz")
    clips = read_npz_dataset(tmp_path / "out.npz").clips
    assert clips[0].partners is None
    assert_same(clips[1].partners[0], two_bodies[1])


def test_coco_json_export_writes_the_partner_as_a_second_track(tmp_path, two_bodies):
    from dtmr.render.coco_keypoints import write_coco_json

    main, other = two_bodies
    write_coco_json(tmp_path / "two.json", Clip(joints=main, partners=other[None]))
    entries = json.loads((tmp_path / "two.json").read_text())
    assert sorted({e["track_id"] for e in entries}) == [0, 1] and len(entries) == 2 * len(main)
    absent = [e for e in entries if e["track_id"] == 1 and e["image_id"] in (0, 1, 2, 10, 11)]
    assert all(set(e["keypoints"]) == {0} for e in absent)  # not labelled where the partner is absent
