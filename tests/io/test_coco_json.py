"""COCO-17 keypoint JSON: MMPose / COCO-results / OpenPose layouts, main-person tracking, 2-D vs 3-D, bounds,
damaged files, and the COCO results writer's round trip."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dtmr.data.clip import Clip
from dtmr.errors import InputError
from dtmr.io import coco_json
from dtmr.io.coco_json import (
    LIFT_HINT,
    OPENPOSE_BODY_25,
    OPENPOSE_COCO_18,
    Keypoints2D,
    is_coco_json,
    read_coco_json,
    read_coco_json_2d,
)
from dtmr.render.camera import Camera
from dtmr.render.coco_keypoints import write_coco_json
from dtmr.skeleton import COCO17, NTU25, UIPRMD22

J = COCO17.num_joints


def person_2d(rng, centre=(500.0, 400.0), score=0.9) -> tuple[np.ndarray, np.ndarray]:
    points = np.asarray(centre) + rng.normal(0, 40, (J, 2))
    return points, np.full(J, score)


def results_entry(image_id, points, scores) -> dict:
    flat = np.concatenate([points, scores[:, None]], axis=1).reshape(-1).tolist()
    return {"image_id": image_id, "category_id": 1, "keypoints": flat, "score": float(scores.mean())}


def instance(points, scores) -> dict:
    return {"keypoints": points.tolist(), "keypoint_scores": scores.tolist(), "bbox": [[0, 0, 10, 10]],
            "bbox_score": 0.99}


def dump(path, doc):
    path.write_text(json.dumps(doc))
    return path


def body_3d(rng, frames=6, scale=1.0) -> np.ndarray:
    """A standing-person-sized cloud of 17 points around (0, 1, 3) metres, times `scale`."""
    base = np.array([0.0, 1.0, 3.0]) + rng.uniform(-0.4, 0.4, (J, 3)) * np.array([1.0, 2.0, 0.5])
    return (base + rng.normal(0, 0.01, (frames, J, 3))) * scale


# ---------------------------------------------------------------------------------------------- COCO results


def test_coco_results_list_reads_as_2d_with_low_scores_missing(rng, tmp_path):
    frames = [person_2d(rng) for _ in range(4)]
    frames[2][1][5] = 0.1  # below the 0.3 threshold
    path = dump(tmp_path / "res.json", [results_entry(t, p, s) for t, (p, s) in enumerate(frames)])
    keypoints = read_coco_json_2d(path)
    assert isinstance(keypoints, Keypoints2D) and keypoints.path == str(path) and keypoints.fps is None
    assert keypoints.keypoints.shape == (4, J, 2) and keypoints.scores.shape == (4, J)
    expected = np.stack([p for p, _ in frames])
    expected[2, 5] = np.nan
    np.testing.assert_array_equal(keypoints.keypoints, expected)
    assert keypoints.scores[2, 5] == pytest.approx(0.1)
    assert not keypoints.keypoints.flags.writeable


def test_2d_input_to_the_clip_reader_says_how_to_lift(rng, tmp_path):
    path = dump(tmp_path / "res.json", [results_entry(0, *person_2d(rng))])
    with pytest.raises(InputError) as err:
        read_coco_json(path)
    assert err.value.path == str(path) and err.value.reason == LIFT_HINT
    assert "dtmr data import FILE --lift -o OUT.h5" in str(err.value)


def test_string_image_ids_give_frame_numbers_and_gaps_are_missing_frames(rng, tmp_path):
    a, b = person_2d(rng), person_2d(rng)
    path = dump(tmp_path / "res.json", [results_entry("img_0012.jpg", *b), results_entry("img_0010.jpg", *a)])
    keypoints = read_coco_json_2d(path)
    assert keypoints.num_frames == 3
    np.testing.assert_array_equal(keypoints.keypoints[0], a[0])
    np.testing.assert_array_equal(keypoints.keypoints[2], b[0])
    assert np.isnan(keypoints.keypoints[1]).all() and (keypoints.scores[1] == 0).all()


def test_wholebody_results_keep_the_first_17_points(rng, tmp_path):
    points, scores = person_2d(rng)
    extra = rng.normal(0, 1, (133 - J, 3)).tolist()
    entry = results_entry(0, points, scores)
    entry["keypoints"] += [v for row in extra for v in row]
    keypoints = read_coco_json_2d(dump(tmp_path / "wb.json", [entry]))
    np.testing.assert_array_equal(keypoints.keypoints[0], points)


# ---------------------------------------------------------------------------------------------- main person


def test_main_person_is_the_best_scored_one_followed_by_nearest_centre(rng, tmp_path):
    """Person A (left) has the best-scored detection of the file (frame 1) and is followed in every frame,
    though B (right) scores higher than A in all the others, and the list order alternates."""
    entries = []
    a_points = []
    for t in range(5):
        a = person_2d(rng, centre=(300.0 + 5 * t, 400.0), score=0.99 if t == 1 else 0.5)
        b = person_2d(rng, centre=(1200.0, 400.0), score=0.9)
        a_points.append(a[0])
        pair = [results_entry(t, *b), results_entry(t, *a)]
        entries += pair if t % 2 else pair[::-1]
    keypoints = read_coco_json_2d(dump(tmp_path / "two.json", entries))
    np.testing.assert_array_equal(keypoints.keypoints, np.stack(a_points))


def test_a_frame_without_the_person_is_nan_and_tracking_resumes(rng, tmp_path):
    a0, a2 = person_2d(rng, (300, 400)), person_2d(rng, (310, 400))
    b1 = person_2d(rng, (1500, 400), score=0.4)
    entries = [results_entry(0, *a0), results_entry(1, *b1), results_entry(2, *a2),
               results_entry(2, *person_2d(rng, (1500, 400), score=0.4))]
    keypoints = read_coco_json_2d(dump(tmp_path / "gap.json", entries))
    np.testing.assert_array_equal(keypoints.keypoints[0], a0[0])
    # the only person in frame 1 is more than a body size away: not the main person
    assert np.isnan(keypoints.keypoints[1]).all() and (keypoints.scores[1] == 0).all()
    np.testing.assert_array_equal(keypoints.keypoints[2], a2[0])


def test_no_confident_keypoint_anywhere_is_an_error(rng, tmp_path):
    path = dump(tmp_path / "low.json", [results_entry(0, *person_2d(rng, score=0.1))])
    with pytest.raises(InputError, match="no person"):
        read_coco_json_2d(path)


# ---------------------------------------------------------------------------------------------- MMPose


def test_mmpose_video_predictions_2d(rng, tmp_path):
    frames = [person_2d(rng) for _ in range(3)]
    doc = [{"frame_id": t, "instances": [instance(*f)]} for t, f in enumerate(frames)]
    keypoints = read_coco_json_2d(dump(tmp_path / "video.json", doc))
    np.testing.assert_array_equal(keypoints.keypoints, np.stack([p for p, _ in frames]))


def test_mmpose_single_image_predictions(rng, tmp_path):
    points, scores = person_2d(rng)
    keypoints = read_coco_json_2d(dump(tmp_path / "img.json", [instance(points, scores)]))
    assert keypoints.num_frames == 1
    np.testing.assert_array_equal(keypoints.keypoints[0], points)


def test_inferencer_result_dump_with_fps(rng, tmp_path):
    frames = [[instance(*person_2d(rng))] for _ in range(2)]
    keypoints = read_coco_json_2d(dump(tmp_path / "pred.json", {"predictions": frames, "fps": 25}))
    assert keypoints.fps == 25.0 and keypoints.num_frames == 2


def test_instance_without_scores_counts_as_confident(rng, tmp_path):
    points, _ = person_2d(rng)
    keypoints = read_coco_json_2d(dump(tmp_path / "img.json", [{"keypoints": points.tolist()}]))
    np.testing.assert_array_equal(keypoints.scores, np.ones((1, J)))


def test_mmpose_3d_needs_the_topology_confirmed(rng, tmp_path):
    joints = body_3d(rng)
    doc = [{"frame_id": t, "instances": [instance(joints[t], np.full(J, 0.9))]} for t in range(len(joints))]
    path = dump(tmp_path / "p3d.json", doc)
    with pytest.raises(InputError, match="Human3.6M-17; pass --topology coco17"):
        read_coco_json(path)
    found = read_coco_json(path, topology="coco17")
    assert found.topology == "coco17" and found.format == "coco-json" and found.action_names is None
    (clip,) = found.clips
    assert clip.topology == "coco17" and clip.fps == 30.0 and clip.source_file == str(path)
    assert clip.sample_name == "p3d" and clip.extra["layout"] == "mmpose-video"  # (a random cloud: size warned)
    np.testing.assert_allclose(clip.joints, joints, atol=1e-6)
    with pytest.raises(InputError, match="3-D keypoints"):
        read_coco_json_2d(path)
    with pytest.raises(InputError, match="not ntu25"):
        read_coco_json(path, topology="ntu25")


def test_instance_info_with_coco_names_reads_3d_and_other_names_are_refused(rng, tmp_path):
    joints = body_3d(rng, frames=2)
    names = {str(i): n for i, n in enumerate(COCO17.joint_names)}
    doc = {"meta_info": {"dataset_name": "coco", "keypoint_id2name": names},
           "instance_info": [{"frame_id": t + 1, "instances": [instance(joints[t], np.ones(J))]} for t in range(2)]}
    (clip,) = read_coco_json(dump(tmp_path / "demo.json", doc)).clips
    np.testing.assert_allclose(clip.joints, joints, atol=1e-6)
    doc["meta_info"] = {"dataset_name": "h36m", "keypoint_id2name": {str(i): f"j{i}" for i in range(J)}}
    with pytest.raises(InputError, match="h36m's, not COCO-17"):
        read_coco_json(dump(tmp_path / "h36m.json", doc))


def test_millimetres_are_converted_and_other_scales_refused(rng, tmp_path):
    joints = body_3d(rng, scale=1000.0)
    doc = {"predictions": [[instance(j, np.ones(J))] for j in joints]}
    (clip,) = read_coco_json(dump(tmp_path / "mm.json", doc), topology="coco17").clips
    np.testing.assert_allclose(clip.joints, joints / 1000.0, atol=1e-5)
    assert clip.extra["units"] == "millimetres, divided by 1000"
    doc = {"predictions": [[instance(j, np.ones(J))] for j in body_3d(rng, scale=30.0)]}
    with pytest.raises(InputError, match="expected metres"):
        read_coco_json(dump(tmp_path / "cm.json", doc), topology="coco17")


def test_mixed_dimensions_are_refused(rng, tmp_path):
    doc = [{"frame_id": 0, "instances": [instance(*person_2d(rng))]},
           {"frame_id": 1, "instances": [instance(body_3d(rng, 1)[0], np.ones(J))]}]
    with pytest.raises(InputError, match="mix 2-D and 3-D"):
        read_coco_json_2d(dump(tmp_path / "mix.json", doc))


# ---------------------------------------------------------------------------------------------- OpenPose


def openpose_person(coco_points, coco_scores, order, dim) -> list[float]:
    """An OpenPose `pose_keypoints_{dim}d` list in `order` holding the given COCO-17 points (others c = 0)."""
    rows = np.zeros((len(order), dim + 1))
    for i, name in enumerate(COCO17.joint_names):
        rows[order.index(coco_json._OPENPOSE_NAME[name])] = [*coco_points[i], coco_scores[i]]
    return rows.reshape(-1).tolist()


@pytest.mark.parametrize("order", [OPENPOSE_BODY_25, OPENPOSE_COCO_18], ids=["body25", "coco18"])
def test_openpose_folder_is_one_clip_in_frame_number_order(rng, tmp_path, order):
    frames = [person_2d(rng) for _ in range(11)]
    folder = tmp_path / "op"
    folder.mkdir()
    for t in rng.permutation(len(frames)).tolist():  # unpadded numbers: 10 sorts after 9
        doc = {"version": 1.3, "people": [{"person_id": [-1], "pose_keypoints_2d": openpose_person(
            *frames[t], order, 2), "pose_keypoints_3d": []}]}
        dump(folder / f"video_{t}_keypoints.json", doc)
    (folder / "notes.txt").write_text("not a frame")
    assert is_coco_json(folder)
    keypoints = read_coco_json_2d(folder)
    np.testing.assert_array_equal(keypoints.keypoints, np.stack([p for p, _ in frames]))
    with pytest.raises(InputError, match="lift"):
        read_coco_json(folder)


def test_openpose_3d_reads_as_a_clip_and_2d_reader_takes_the_2d_points(rng, tmp_path):
    joints = body_3d(rng, frames=2)
    folder = tmp_path / "op3d"
    folder.mkdir()
    pixels = [person_2d(rng) for _ in range(2)]
    for t in range(2):
        doc = {"people": [{"pose_keypoints_2d": openpose_person(*pixels[t], OPENPOSE_BODY_25, 2),
                           "pose_keypoints_3d": openpose_person(joints[t], np.ones(J), OPENPOSE_BODY_25, 3)}]}
        dump(folder / f"x_{t:012d}_keypoints.json", doc)
    (clip,) = read_coco_json(folder).clips
    np.testing.assert_allclose(clip.joints, joints, atol=1e-6)
    assert clip.extra["layout"] == "openpose-3d" and clip.sample_name == "op3d"
    np.testing.assert_array_equal(read_coco_json_2d(folder).keypoints, np.stack([p for p, _ in pixels]))


def test_single_openpose_file_and_wrong_point_counts(rng, tmp_path):
    good = dump(tmp_path / "a_000000000007_keypoints.json",
                {"people": [{"pose_keypoints_2d": openpose_person(*person_2d(rng), OPENPOSE_BODY_25, 2)}]})
    assert read_coco_json_2d(good).num_frames == 1
    bad = dump(tmp_path / "b_keypoints.json", {"people": [{"pose_keypoints_2d": [1.0] * (15 * 3)}]})
    with pytest.raises(InputError, match="BODY_25 or COCO-18"):
        read_coco_json_2d(bad)


def test_openpose_folder_problems(rng, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InputError, match="no OpenPose"):
        read_coco_json_2d(empty)
    twice = tmp_path / "twice"
    twice.mkdir()
    for name in ("a_1_keypoints.json", "a_01_keypoints.json"):
        dump(twice / name, {"people": []})
    with pytest.raises(InputError, match="two files hold frame 1"):
        read_coco_json_2d(twice)
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "v_3_keypoints.json").write_text('{"people": [')
    with pytest.raises(InputError) as err:
        read_coco_json_2d(broken)
    assert err.value.path == str(broken / "v_3_keypoints.json") and "not valid JSON" in str(err.value)


# ---------------------------------------------------------------------------------------------- recognising


def test_is_coco_json_sniffs_without_raising(rng, tmp_path):
    assert is_coco_json(dump(tmp_path / "res.json", [results_entry(0, *person_2d(rng))]))
    assert is_coco_json(dump(tmp_path / "op.json", {"people": []}))
    assert not is_coco_json(dump(tmp_path / "names.json", {"trajectory_names": ["nose"]}))
    assert not is_coco_json(dump(tmp_path / "res.txt", [results_entry(0, *person_2d(rng))]))
    (tmp_path / "bin.json").write_bytes(b"\x00\xff" * 100)
    assert not is_coco_json(tmp_path / "bin.json")
    assert not is_coco_json(tmp_path / "missing.json")
    assert not is_coco_json(tmp_path)  # a folder without *_keypoints.json


# ---------------------------------------------------------------------------------------------- bounds


@pytest.mark.parametrize("text, reason", [
    ('[{"image_id": 0, "keypoints": [NaN', "non-finite number NaN"),
    ('{"people": [{"pose_keypoints_2d": [Infinity]}]}', "non-finite number Infinity"),
    ('[{"image_id": 0, "keypoints": [1e999]}]', "beyond"),
    ('{"people": [', "not valid JSON"),
    ("[" * 100_000, "nested too deeply"),
    ('"just a string"', "unknown keypoint JSON layout"),
    ("[]", "no detections"),
    ('[{"image_id": 0, "keypoints": [1, 2]}]', "(x, y, v) triples"),
    ('[{"image_id": 0, "keypoints": [[1, 2, 3]]}]', "shape N"),
    ('[{"image_id": 0.5, "keypoints": [1, 2, 3]}]', "neither an integer"),
    ('[{"image_id": 0, "keypoints": ["a", "b", "c"]}]', "non-numeric"),
    ('[{"image_id": 0, "keypoints": [true, false, true]}]', "non-numeric"),  # issue 43: read as 1, 0, 1 before
    ('[{"image_id": 0, "keypoints": [300.5, true, 0.9]}]', "non-numeric"),
    ('[{"keypoints": [[1, 2, 3, 4]]}]', "got 4 values"),
])
def test_malformed_files_give_one_line_naming_the_file(tmp_path, text, reason):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(InputError) as err:
        read_coco_json_2d(path)
    assert err.value.path == str(path) and reason in err.value.reason
    assert "\n" not in str(err.value)


def test_bounds_on_size_frames_and_people(rng, tmp_path, monkeypatch):
    points, scores = person_2d(rng)
    far = dump(tmp_path / "far.json", [results_entry(0, points, scores), results_entry(10**12, points, scores)])
    with pytest.raises(InputError, match="more than the 200000 allowed"):
        read_coco_json_2d(far)
    crowd = dump(tmp_path / "crowd.json", [instance(points, scores)] * 1001)
    with pytest.raises(InputError, match="1001 people"):
        read_coco_json_2d(crowd)
    monkeypatch.setattr(coco_json, "MAX_FILE_BYTES", 100)
    with pytest.raises(InputError, match="over the 100-byte limit"):
        read_coco_json_2d(far)


# ---------------------------------------------------------------------------------------------- writer


def ntu_clip(rng, frames=5) -> Clip:
    joints = np.array([0.0, 1.0, 3.0]) + rng.uniform(-0.3, 0.3, (frames, NTU25.num_joints, 3))
    joints[min(2, frames - 1), 4] = np.nan  # a missing left shoulder
    return Clip(joints=joints, topology="ntu25", sample_name="c")


def test_written_coco_json_reads_back_to_the_projected_points(rng, tmp_path):
    clip = ntu_clip(rng)
    camera = Camera.preset("front", target=(0.0, 1.0, 3.0), distance=3.0)
    path = tmp_path / "out.json"
    write_coco_json(path, clip, camera=camera, image_size=(640, 480))
    entries = json.loads(path.read_text())
    assert len(entries) == clip.num_frames
    assert entries[0].keys() == {"image_id", "category_id", "keypoints", "score"}
    assert [e["image_id"] for e in entries] == list(range(clip.num_frames))
    back = read_coco_json_2d(path)
    written = [i for i, n in enumerate(COCO17.joint_names) if n in NTU25.joint_names]
    assert [COCO17.joint_names[i] for i in written][:2] == ["left_shoulder", "right_shoulder"] and len(written) == 12
    own = [NTU25.index(COCO17.joint_names[i]) for i in written]
    expected = camera.project(clip.joints[:, own].astype(np.float64), (640, 480))
    np.testing.assert_allclose(back.keypoints[:, written], expected, atol=1e-6, equal_nan=True)
    assert np.isnan(back.keypoints[2, COCO17.index("left_shoulder")]).all()
    face = [COCO17.index(n) for n in ("nose", "left_eye", "right_eye", "left_ear", "right_ear")]
    assert np.isnan(back.keypoints[:, face]).all() and (back.scores[:, face] == 0).all()
    assert entries[0]["keypoints"][:3] == [0, 0, 0]  # the nose: COCO's "not labelled"


def test_default_camera_frames_the_clip_in_the_image(rng, tmp_path):
    clip = ntu_clip(rng)
    path = tmp_path / "out.json"
    write_coco_json(path, clip)
    back = read_coco_json_2d(path).keypoints
    seen = back[np.isfinite(back).all(axis=2)]
    assert len(seen) == clip.num_frames * 12 - 1
    assert (seen >= 0).all() and (seen[:, 0] <= 1920).all() and (seen[:, 1] <= 1080).all()


def test_several_clips_are_people_of_the_same_frames(rng, tmp_path):
    coco = Clip(joints=rng.uniform(0.5, 1.5, (3, J, 3)) + [0, 0, 3], topology="coco17")
    path = tmp_path / "two.json"
    write_coco_json(path, [ntu_clip(rng, frames=2), coco])
    entries = json.loads(path.read_text())
    assert [(e["image_id"], e["track_id"]) for e in entries] == [(0, 0), (1, 0), (0, 1), (1, 1), (2, 1)]
    assert all(v == 2 for v in entries[2]["keypoints"][2::3])  # every coco17 joint is written


def test_writer_refuses_what_it_cannot_write(rng, tmp_path):
    with pytest.raises(InputError, match="no clips"):
        write_coco_json(tmp_path / "none.json", [])
    ui = Clip(joints=rng.normal(0, 1, (2, UIPRMD22.num_joints, 3)), topology="uiprmd22")
    with pytest.raises(InputError, match="uiprmd22 shares no joint names"):
        write_coco_json(tmp_path / "ui.json", ui)
    assert not (tmp_path / "ui.json").exists()


# ---------------------------------------------------------------------------------------------- fuzz


def _valid_bytes() -> bytes:
    rng = np.random.default_rng(3)
    entries = [results_entry(t, *person_2d(rng)) for t in range(3)]
    return json.dumps(entries).encode()


VALID = _valid_bytes()


def _outcome(path) -> None:
    """Reading gives Keypoints2D or an InputError naming the file, nothing else."""
    try:
        keypoints = read_coco_json_2d(path)
    except InputError as exc:
        assert exc.path == str(path) and "\n" not in str(exc)
        return
    assert keypoints.keypoints.shape[1:] == (J, 2) and keypoints.num_frames >= 1


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.integers(0, len(VALID)), flips=st.lists(st.tuples(st.integers(0, len(VALID) - 1),
                                                                 st.integers(0, 255)), max_size=4))
def test_fuzz_damaged_bytes(tmp_path, cut, flips):
    data = bytearray(VALID[:cut] if cut < len(VALID) // 2 else VALID)
    for at, value in flips:
        if at < len(data):
            data[at] = value
    path = tmp_path / "fuzz.json"
    path.write_bytes(bytes(data))
    _outcome(path)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**20, 10**20) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda children: st.lists(children, max_size=6) | st.dictionaries(
        st.sampled_from(["image_id", "keypoints", "keypoint_scores", "frame_id", "instances", "people",
                         "pose_keypoints_2d", "predictions", "instance_info", "meta_info", "fps"]), children,
        max_size=4),
    max_leaves=40,
)


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(doc=json_values, keypoints=st.lists(st.floats(-1e9, 1e9) | st.integers(-5, 5), max_size=60))
def test_fuzz_structured_garbage(tmp_path, doc, keypoints):
    """Random JSON shaped like the layouts, and results with random keypoint lists (wrong lengths, huge values)."""
    for i, body in enumerate([doc, [{"image_id": 0, "keypoints": keypoints}],
                              {"people": [{"pose_keypoints_2d": keypoints}]}]):
        path = tmp_path / f"g{i}.json"
        path.write_text(json.dumps(body))
        _outcome(path)


def test_fuzz_layout_mutations_of_3d_files(rng, tmp_path):
    """Each key of a valid 3-D file dropped, retyped, or its numbers made huge: a clip or an InputError."""
    joints = body_3d(rng, frames=2)
    base = [{"frame_id": t, "instances": [instance(joints[t], np.ones(J))]} for t in range(2)]
    mutations = [None, "x", -1, [], {}, [[1e12] * 3] * J, [[math.pi] * 3] * (J + 1), [1.0] * J]
    for key in ("frame_id", "instances", "keypoints", "keypoint_scores"):
        for value in mutations:
            doc = json.loads(json.dumps(base))
            target = doc[1] if key in ("frame_id", "instances") else doc[1]["instances"][0]
            target[key] = value
            path = dump(tmp_path / "m.json", doc)
            try:
                clips = read_coco_json(path, topology="coco17").clips
            except InputError as exc:
                assert exc.path == str(path)
                continue
            assert clips[0].joints.shape[1:] == (J, 3)


def test_a_3d_body_of_no_persons_height_is_read_with_a_warning(tmp_path):
    """COCO 3-D keypoints are metres or millimetres; a body of 0.5 m (a file in another unit) was read without a
    word. The Studio and `dtmr data import` show the warning."""
    from coco_fixtures import coco17_of

    from dtmr.data import generate_clips

    person = coco17_of(generate_clips(subjects=1, actions=1, repetitions=1, seed=3, noise=0.0)[0].joints[:6])
    for scale, warned in ((1.0, False), (0.3, True)):
        doc = {"predictions": [[instance(j * scale, np.ones(J))] for j in person]}
        (clip,) = read_coco_json(dump(tmp_path / f"x{scale}.json", doc), topology="coco17").clips
        assert ("import_warning" in clip.extra) == warned, clip.extra
    assert "outside 0.8-2.5 m" in clip.extra["import_warning"]


def test_import_options_for_a_format_that_states_its_own_are_refused(tmp_path):
    """--up / --units / --scale reach only BVH and pose arrays, --joint-map only BVH; given for another file
    they were ignored without a word."""
    from dtmr.io.import_options import ImportOptions
    from dtmr.io.sources import open_clip_source

    joints = body_3d(np.random.default_rng(0))
    path = dump(tmp_path / "k.json", {"predictions": [[instance(j, np.ones(J))] for j in joints]})
    open_clip_source(path, "coco17")  # without options: read
    for options, word in ((ImportOptions(up="z"), "--up"), (ImportOptions(units="cm"), "--up"),
                          (ImportOptions(joint_map=tmp_path / "m.json"), "--joint-map")):
        with pytest.raises(InputError, match=f"k.json: {word}"):
            open_clip_source(path, "coco17", options=options)
