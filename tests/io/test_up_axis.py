"""The up axis read off the data (head over feet), the body's size and unit, and the pose arrays that use them:
MediaPipe's world landmarks (y down) import upright, normalized image landmarks are no person (issue 45)."""

from __future__ import annotations

import numpy as np
import pytest

from dtmr.data import generate_clips
from dtmr.errors import DtmrError, InputError
from dtmr.io import body_size, up_axis
from dtmr.io.import_notes import NOTE, WARNING, source_notes
from dtmr.io.import_options import ImportOptions
from dtmr.io.pose_npy import read_pose_npy
from dtmr.io.sources import open_clip_source
from rig_fixtures import mediapipe_world_landmarks, upright_and_height

STANDING = generate_clips(subjects=1, actions=1, repetitions=1, seed=11)[0].joints[:40].astype(np.float64)


def lying_along(axis: str) -> np.ndarray:
    """The standing body with its up (+y) turned onto `axis`: the inverse of turning `axis` up."""
    return STANDING @ up_axis.UP_ROTATIONS[axis]


def rotation_taking(a, b) -> np.ndarray:
    """The rotation turning direction `a` onto direction `b` about their common normal (Rodrigues)."""
    a, b = np.asarray(a, float) / np.linalg.norm(a), np.asarray(b, float) / np.linalg.norm(b)
    axis = np.cross(a, b)
    sin, cos = np.linalg.norm(axis), a @ b
    k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]]) / sin
    return np.eye(3) + sin * k + (1 - cos) * k @ k


@pytest.mark.parametrize("text, axis", [("x", "+x"), ("Y", "+y"), ("+z", "+z"), ("-y", "-y"), (" -X ", "-x"),
                                        ("auto", None), (None, None)])
def test_up_choices(text, axis):
    assert up_axis.normalize_up(text) == axis


def test_unknown_up_is_refused():
    with pytest.raises(ValueError, match="unknown up axis 'up'"):
        up_axis.normalize_up("up")
    with pytest.raises(DtmrError, match="unknown up axis"):
        ImportOptions(up="w")
    with pytest.raises(DtmrError, match="not both"):
        ImportOptions(units="cm", scale=0.01)
    with pytest.raises(DtmrError, match="positive number"):
        ImportOptions(scale=-1.0)


@pytest.mark.parametrize("axis", up_axis.AXES)
def test_rotations_are_proper_and_lift_their_axis(axis):
    r = up_axis.UP_ROTATIONS[axis]
    assert np.linalg.det(r) == pytest.approx(1.0)
    np.testing.assert_allclose(r @ up_axis.axis_vector(axis), [0, 1, 0])


@pytest.mark.parametrize("axis", up_axis.AXES)
@pytest.mark.parametrize("prior", ["+y", "+z", "-y"])
def test_a_standing_body_s_axis_is_found_whatever_the_prior(axis, prior):
    joints = lying_along(axis)
    choice = up_axis.choose_up(joints, "ntu25", prior=prior)
    assert choice.axis == axis and choice.upright == 1.0 and choice.warning() == ""
    assert choice.how == ("convention" if axis == prior else "detected")
    np.testing.assert_allclose(up_axis.turn_upright(joints, choice.axis), STANDING, atol=1e-9)


def test_the_prior_stays_when_no_axis_holds_the_body_and_the_clip_is_flagged():
    # feet-to-head along (1, 1, 1): 55 degrees from every axis, upright along none
    joints = STANDING @ rotation_taking([0, 1, 0], [1, 1, 1]).T
    choice = up_axis.choose_up(joints, "ntu25", prior="+y")
    assert choice.axis == "+y" and choice.how == "convention" and choice.upright == 0.0
    assert "upright in only 0% of its frames with +y as up" in choice.warning()


def test_an_axis_given_is_kept_and_flagged_when_the_body_then_lies():
    choice = up_axis.choose_up(lying_along("+z"), "ntu25", prior="+y", given="+y")
    assert (choice.axis, choice.how, choice.upright) == ("+y", "given", 0.0)
    assert "dtmr data import --up" in choice.warning() and "Open with options" in choice.warning()


def test_body_height_and_the_unit_that_makes_a_person():
    height = body_size.body_height(STANDING, "ntu25")
    upright, measured = upright_and_height(STANDING.astype(np.float32))
    assert upright and abs(height - measured) < 0.1
    assert body_size.body_height(STANDING * 100, "ntu25") == pytest.approx(100 * height)
    assert [body_size.infer_unit(h) for h in (1.7, 170.0, 1700.0, 67.0, 0.3, 30.0, 17000.0)] == \
        ["m", "cm", "mm", "in", None, None, None]
    with pytest.raises(InputError, match=r"f\.bvh: a body 30 units tall is no person's height.*--units.*--scale"):
        body_size.metres_per_unit("f.bvh", 30.0, None, None)
    with pytest.raises(InputError, match=r"f\.npy: the body is 0.3 m tall, outside 0.8-2.5 m: give its unit"):
        body_size.check_height("f.npy", 0.3, given=False)
    assert "with the unit given" in body_size.check_height("f.npy", 0.3, given=True)
    assert body_size.check_height("f.npy", 1.75, given=False) == ""


def test_mediapipe_world_landmarks_import_upright(tmp_path):
    path = tmp_path / "world_landmarks.npy"
    np.save(path, mediapipe_world_landmarks())
    source = open_clip_source(path)
    clip = source.read(0)
    assert clip.topology == "mediapipe33"
    assert "units m" in clip.extra[NOTE] and "up -y (detected)" in clip.extra[NOTE] and WARNING not in clip.extra
    from dtmr.skeleton import to_ntu25

    upright, height = upright_and_height(to_ntu25(clip.joints, clip.topology))
    assert upright and 1.4 <= height <= 2.0
    notes, warnings = source_notes(source)
    assert notes == [clip.extra[NOTE]] and warnings == []


def test_the_up_option_reaches_the_pose_array_reader(tmp_path):
    path = tmp_path / "world_landmarks.npy"
    np.save(path, mediapipe_world_landmarks())
    clip = open_clip_source(path, options=ImportOptions(up="y")).read(0)
    assert "up +y (given)" in clip.extra[NOTE] and "upright in only 0%" in clip.extra[WARNING]


def test_pose_arrays_in_centimetres_and_normalized_image_landmarks(tmp_path):
    landmarks = mediapipe_world_landmarks()
    np.save(tmp_path / "cm.npy", landmarks * 100)
    clip = read_pose_npy(tmp_path / "cm.npy")
    assert "units cm (inferred from a body " in clip.clips[0].extra[NOTE]
    # MediaPipe's normalized image landmarks: x, y in [0, 1] of the image, a body a third of the frame tall
    image = landmarks[..., :] / 5.0 + 0.5
    np.save(tmp_path / "image.npy", image)
    with pytest.raises(InputError) as caught:
        read_pose_npy(tmp_path / "image.npy")
    message = str(caught.value)
    assert message.startswith(f"{tmp_path / 'image.npy'}: a body 0.") and "--units" in message
    assert "\n" not in message
    given = read_pose_npy(tmp_path / "image.npy", scale=5.0).clips[0]
    assert "scale 5 m per unit (given)" in given.extra[NOTE]
