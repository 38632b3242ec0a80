"""COCO's own dataset layout (`images` / `annotations` / `categories`: the COCO keypoint files, pycocotools,
PoseTrack), one sequence per video or track (issue 45). Fixtures: tests/coco_fixtures.py, built from the
format's published description."""

from __future__ import annotations

import numpy as np
import pytest
from coco_fixtures import POSETRACK_NAMES, annotation, category, dataset, dump, two_people_pixels, two_videos

from dtmr.cli import main
from dtmr.errors import InputError
from dtmr.io.coco_json import is_coco_json, read_coco_json, read_coco_json_2d, read_coco_sequences_2d
from dtmr.io.library import ClipLibrary
from dtmr.io.sources import open_clip_source


@pytest.fixture(scope="module")
def two_people() -> list[np.ndarray]:
    return two_people_pixels()


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
