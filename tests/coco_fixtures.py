"""COCO's own dataset layout (`images` / `annotations` / `categories`: the COCO keypoint files, pycocotools,
PoseTrack), written by the tests from the format's published description (cocodataset.org, "Data format":
keypoints are `[x, y, v] * 17`, v = 0 not labelled, 1 labelled but not visible, 2 visible; the person category
lists the keypoint names and the skeleton) and PoseTrack 2018's additions (`vid_id` / `frame_id` on images,
`track_id` on annotations). Read by tests/io/test_coco_dataset.py and the Studio's open tests."""

from __future__ import annotations

import json

import numpy as np

from dtmr.data import generate_clips
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


def two_people_pixels() -> list[np.ndarray]:
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
