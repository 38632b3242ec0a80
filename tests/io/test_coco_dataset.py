"""COCO's own dataset layout (`images` / `annotations` / `categories`: the COCO keypoint files, pycocotools,
PoseTrack), one sequence per video or track (issue 45). Fixtures are built here from the COCO format's
published description (cocodataset.org, "Data format": keypoints are `[x, y, v] * 17`, v = 0 not labelled,
1 labelled but not visible, 2 visible; the person category lists the keypoint names and the skeleton) and
PoseTrack 2018's additions (`vid_id` / `frame_id` on images, `track_id` on annotations)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dtmr.cli import main
from dtmr.data import generate_clips
from dtmr.errors import InputError
from dtmr.io.coco_json import is_coco_json, read_coco_json, read_coco_json_2d, read_coco_sequences_2d
from dtmr.io.library import ClipLibrary
from dtmr.io.sources import open_clip_source
from dtmr.render.camera import fit_camera
from dtmr.skeleton import COCO17, NTU25

SIZE = (1280, 720)
POSETRACK_NAMES = ["nose", "head_bottom", "head_top", "left_ear", "right_ear", *COCO17.joint_names[5:]]


#: the face points of COCO-17 beside NTU-25's head (metres, performer facing -z): nose, eyes, ears
FACE = {"nose": (0, -0.02, -0.09), "left_eye": (-0.03, 0.01, -0.07), "right_eye": (0.03, 0.01, -0.07),
        "left_ear": (-0.07, 0, 0), "right_ear": (0.07, 0, 0)}


def coco17_of(ntu: np.ndarray) -> np.ndarray:
    """(T, 17, 3) COCO-17 joints of an NTU-25 clip: the limb joints by name, the face around the head."""
    head = ntu[:, NTU25.joint_names.index("head")]
    return np.stack([head + FACE[name] if name in FACE else ntu[:, NTU25.joint_names.index(name)]
                     for name in COCO17.joint_names], axis=1).astype(np.float64)


@pytest.fixture(scope="module")
def two_people() -> list[np.ndarray]:
    """(T, 17, 2) pixels of two synthetic performers, each seen by the same level camera."""
    clips = generate_clips(subjects=2, actions=1, repetitions=1, seed=3, noise=0.0)[:2]
    joints = [coco17_of(c.joints)[:20] for c in clips]
    camera = fit_camera(joints, aspect=SIZE[0] / SIZE[1], azimuth=0.0, elevation=0.0)
    return [camera.project(j, SIZE) for j in joints]


def category(names=COCO17.joint_names) -> dict:
    return {"supercategory": "person", "id": 1, "name": "person", "keypoints": list(names),
            "skeleton": [[16, 14], [14, 12], [17, 15], [15, 13], [12, 13]]}


def flat(points: np.ndarray, visible=None) -> list:
    v = np.full(len(points), 2) if visible is None else visible
    out = []
    for (x, y), vis in zip(points.tolist(), v.tolist()):
        out += [x, y, int(vis)] if vis else [0, 0, 0]
    return out


def annotation(ident, image_id, points, track=None, category_id=1, visible=None) -> dict:
    entry = {"id": ident, "image_id": image_id, "category_id": category_id, "keypoints": flat(points, visible),
             "num_keypoints": int(len(points)), "iscrowd": 0, "bbox": [0, 0, 10, 10], "area": 100.0}
    if track is not None:
        entry["track_id"] = track
    return entry


def dataset(images, annotations, categories=None) -> dict:
    return {"info": {"description": "test", "version": "1.0"}, "licenses": [], "images": images,
            "annotations": annotations, "categories": [category()] if categories is None else categories}


def two_videos(people, video_key="video_id") -> dict:
    """Video 1 shows performer 0, video 2 performer 1; each image a frame with `frame_id`, listed out of order."""
    images, annotations = [], []
    for video, points in enumerate(people, 1):
        for frame in reversed(range(len(points))):
            image_id = video * 1000 + frame
            images.append({"id": image_id, "file_name": f"images/{video:03d}/{frame:06d}.jpg", "width": SIZE[0],
                           "height": SIZE[1], video_key: video, "frame_id": image_id})
            annotations.append(annotation(len(annotations) + 1, image_id, points[frame]))
    return dataset(images, annotations)


def dump(path, doc):
    path.write_text(json.dumps(doc))
    return path


def test_two_videos_are_two_sequences_in_frame_order(tmp_path, two_people):
    path = dump(tmp_path / "person_keypoints_val.json", two_videos(two_people))
    sequences = read_coco_sequences_2d(path)
    assert [s.name for s in sequences] == ["person_keypoints_val_video_1", "person_keypoints_val_video_2"]
    for found, points in zip(sequences, two_people):
        np.testing.assert_allclose(found.keypoints, points, atol=1e-9)
    with pytest.raises(InputError, match="holds 2 image sequences"):
        read_coco_json_2d(path)
    with pytest.raises(InputError, match="--lift"):  # 2-D: clips need lifting
        read_coco_json(path)
    with pytest.raises(InputError, match="--lift"):
        open_clip_source(path)


def test_posetrack_vid_id_and_folders_group_alike(tmp_path, two_people):
    by_vid = read_coco_sequences_2d(dump(tmp_path / "pt.json", two_videos(two_people, "vid_id")))
    doc = two_videos(two_people)
    for image in doc["images"]:  # no ids: the folder of the file name groups, the number in it orders
        del image["video_id"], image["frame_id"]
    by_folder = read_coco_sequences_2d(dump(tmp_path / "folders.json", doc))
    assert [s.name for s in by_folder] == ["folders_images_001", "folders_images_002"]
    for a, b, points in zip(by_vid, by_folder, two_people):
        np.testing.assert_allclose(a.keypoints, points, atol=1e-9)
        np.testing.assert_allclose(b.keypoints, points, atol=1e-9)


def test_tracks_of_one_video_are_sequences_and_unlabelled_frames_are_nan(tmp_path, two_people):
    images, annotations = [], []
    for frame in range(len(two_people[0])):
        images.append({"id": frame + 1, "file_name": f"v/{frame:04d}.jpg", "video_id": 7, "frame_id": frame})
        if frame == 4:
            continue  # an image with no annotation: a frame without the person
        for track, points in enumerate(two_people):
            annotations.append(annotation(len(annotations) + 1, frame + 1, points[frame], track=track + 10))
    sequences = read_coco_sequences_2d(dump(tmp_path / "tracks.json", dataset(images, annotations)))
    assert [s.name for s in sequences] == ["tracks_video_7_track_10", "tracks_video_7_track_11"]
    for found, points in zip(sequences, two_people):
        assert found.num_frames == len(points)
        assert np.isnan(found.keypoints[4]).all() and (found.scores[4] == 0).all()
        keep = np.arange(len(points)) != 4
        np.testing.assert_allclose(found.keypoints[keep], points[keep], atol=1e-9)


def test_keypoints_are_matched_by_name_and_v0_is_missing(tmp_path, two_people):
    points = two_people[0][:3]
    visible = np.full(17, 2)
    visible[9] = 0  # left_wrist not labelled
    images = [{"id": i, "file_name": f"{i}.jpg"} for i in range(3)]
    annotations = [annotation(i + 1, i, points[i], visible=visible) for i in range(3)]
    found = read_coco_json_2d(dump(tmp_path / "pt.json", dataset(images, annotations, [category(POSETRACK_NAMES)])))
    assert found.name == "pt"
    assert np.isnan(found.keypoints[:, 1:3]).all()  # PoseTrack's head_bottom / head_top are not COCO's eyes
    assert np.isnan(found.keypoints[:, 9]).all()
    np.testing.assert_allclose(found.keypoints[:, [0, 3, 4, 5, 16]], points[:, [0, 3, 4, 5, 16]], atol=1e-9)


def test_other_categories_and_unlabelled_videos_are_left_out(tmp_path, two_people):
    doc = two_videos(two_people)
    doc["categories"].append({"id": 3, "name": "car", "supercategory": "vehicle"})
    doc["annotations"].append({"id": 999, "image_id": 1000, "category_id": 3, "bbox": [0, 0, 1, 1]})
    doc["images"].append({"id": 5000, "file_name": "images/009/000001.jpg", "video_id": 9, "frame_id": 5000})
    assert len(read_coco_sequences_2d(dump(tmp_path / "mixed.json", doc))) == 2


@pytest.mark.parametrize("change, reason", [
    (lambda d: d["annotations"][0].update(image_id=424242), "refers to image 424242"),
    (lambda d: d["images"].append(dict(d["images"][0])), "appears twice"),
    (lambda d: d.update(categories=[category(["nose", "left_eye"])]), "lack left_shoulder"),
    (lambda d: d["annotations"][0].update(keypoints=[1, 2]), "(x, y, v) triples"),
    (lambda d: d["annotations"][0].update(track_id=[1]), "'track_id'"),
    (lambda d: d.update(annotations={}), "'annotations' must be a list"),
    (lambda d: d.update(images=[{"file_name": "x.jpg"}]), "image 0 is not an object with 'id'"),
    (lambda d: d.update(annotations=[]), "no annotation of a person"),
])
def test_malformed_dataset_files_are_one_line_errors(tmp_path, two_people, change, reason):
    doc = two_videos(two_people)
    change(doc)
    path = dump(tmp_path / "bad.json", doc)
    with pytest.raises(InputError) as err:
        read_coco_sequences_2d(path)
    assert reason in str(err.value) and "bad.json" in str(err.value) and "\n" not in str(err.value)


def test_a_dataset_file_is_recognised_from_its_first_bytes(tmp_path, two_people):
    doc = two_videos(two_people)
    doc["images"] = [{"id": i + 10**6, "file_name": "x" * 100} for i in range(200)] + doc["images"]
    assert is_coco_json(dump(tmp_path / "big.json", doc))  # the first 8 KiB hold only images


def test_import_lifts_one_clip_per_video_upright_with_plausible_height(tmp_path, two_people, capsys):
    from dtmr.lift.sources import open_lifted

    path = dump(tmp_path / "two.json", two_videos(two_people))
    source = open_lifted(path)
    assert len(source) == 2 and [c.sample_name for c in source.clips] == ["two_video_1", "two_video_2"]
    for clip in source.clips:
        nose, ankles = clip.joints[:, 0], clip.joints[:, 15:17].mean(axis=1)
        height = np.nanmedian(nose[:, 1] - ankles[:, 1])  # y up: the nose above the ankles
        assert 1.1 < height < 2.1, height
    code = main(["data", "import", str(path), "--lift", "-o", str(tmp_path / "lib.h5")])
    assert code == 0, capsys.readouterr().err
    with ClipLibrary(tmp_path / "lib.h5") as library:
        assert len(library) == 2
