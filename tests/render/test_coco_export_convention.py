"""The COCO export's x convention (issue 45): pixels of a photograph taken by the render camera, COCO's own
convention (a performer facing the camera has their left side on the image's right), which is the mirror of
NTU RGB+D's colour coordinates (checked against a real NTU file's colorX when the samples are present)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from dtmr.data import generate_clips
from dtmr.io.ntu_skeleton import read_skeleton_file
from dtmr.render.coco_keypoints import write_coco_json
from dtmr.skeleton import COCO17, NTU25

LEFT, RIGHT = COCO17.joint_names.index("left_shoulder"), COCO17.joint_names.index("right_shoulder")
SAMPLES = Path(os.environ.get("DTMR_SHARED_DATA", Path(__file__).resolve().parents[2] / ".." / "shared" / "data"))


def exported(path, clip) -> np.ndarray:
    write_coco_json(path, clip)
    return np.array([np.reshape(e["keypoints"], (17, 3)) for e in json.loads(Path(path).read_text())])


def test_a_performer_facing_the_camera_has_the_left_shoulder_on_the_image_right(tmp_path):
    clip = generate_clips(subjects=1, actions=1, repetitions=1, seed=0, noise=0.0)[0]
    hips = clip.joints[:, [NTU25.joint_names.index("left_hip"), NTU25.joint_names.index("right_hip")], 0]
    assert (hips[:, 1] > hips[:, 0]).all()  # Kinect camera space: facing the sensor, the right side is +x
    points = exported(tmp_path / "c.json", clip)
    assert (points[:, LEFT, 0] > points[:, RIGHT, 0]).all()


@pytest.mark.skipif(not (SAMPLES / "ntu_samples").is_dir(), reason="the NTU samples are not present")
def test_ntu_colour_coordinates_are_the_mirror_of_the_export(tmp_path):
    skeleton = read_skeleton_file(next(iter(sorted((SAMPLES / "ntu_samples").glob("*.skeleton")))))
    body = skeleton.main_body
    points = exported(tmp_path / "ntu.json", skeleton.to_clip().replace(partners=None))
    colour_x = body.joint_fields[:, [NTU25.joint_names.index("left_shoulder"),
                                     NTU25.joint_names.index("right_shoulder")], 2]
    ours = points[:, [LEFT, RIGHT], 0]
    assert np.corrcoef(ours.ravel(), colour_x.ravel())[0, 1] < -0.9
    assert np.corrcoef((1920 - ours).ravel(), colour_x.ravel())[0, 1] > 0.9
