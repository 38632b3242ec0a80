import numpy as np
import pytest

from dtmr.skeleton import NTU25, foot_contacts, foot_sliding_speed, sliding_speeds
from dtmr.skeleton.floor import fit_floor


def two_feet_clip(frames=60, fps=30.0, left_speed=0.0, lift_right=False):
    """Feet on the ground (y = 0); the left foot slides along x at `left_speed` m/s."""
    clip = np.zeros((frames, 25, 3), dtype=np.float32)
    clip[:, :, 1] = 1.0  # everything else well above the ground
    t = np.arange(frames) / fps
    for j in (14, 15):  # left ankle, left foot
        clip[:, j] = np.stack([left_speed * t, np.full(frames, 0.02 if j == 15 else 0.08), np.zeros(frames)], -1)
    for j in (18, 19):
        clip[:, j] = [0.3, 0.02 if j == 19 else 0.08, 0.0]
    if lift_right:
        clip[20:40, [18, 19], 1] += 0.4 * np.sin(np.linspace(0, np.pi, 20))[:, None]
    return clip


def test_planted_feet_are_in_contact_and_do_not_slide():
    clip = two_feet_clip()
    contacts = foot_contacts(clip, NTU25, fps=30)
    assert contacts.shape == (60, 4)
    assert contacts.all()
    assert foot_sliding_speed(clip, NTU25, fps=30) == pytest.approx(0.0, abs=1e-6)


def test_sliding_foot_speed_is_measured_on_contact_frames():
    clip = two_feet_clip(left_speed=0.5)
    speeds = sliding_speeds(clip, NTU25, fps=30)
    np.testing.assert_allclose(speeds[:, :2], 0.5, atol=1e-4)  # left ankle and foot
    np.testing.assert_allclose(speeds[:, 2:], 0.0, atol=1e-6)
    assert foot_sliding_speed(clip, NTU25, fps=30) == pytest.approx(0.25, abs=1e-4)


def test_lifted_foot_is_not_in_contact():
    clip = two_feet_clip(lift_right=True)
    contacts = foot_contacts(clip, NTU25, fps=30)
    assert not contacts[28:32, 2:].any()
    assert contacts[:15, 2:].all()
    assert contacts[:, :2].all()


def test_no_contact_gives_zero_sliding():
    clip = two_feet_clip()
    clip[:, :, 1] += np.linspace(0, 3, 60)[:, None]  # the whole body flies up fast
    assert foot_sliding_speed(clip, NTU25, fps=30) == 0.0


def test_a_leg_held_up_for_the_whole_clip_never_touches_the_ground():
    clip = two_feet_clip()
    clip[:, [18, 19], 1] += 0.5
    contacts = foot_contacts(clip, NTU25, fps=30)
    assert contacts[:, :2].all() and not contacts[:, 2:].any()


def pitched(clip, degrees):
    """The clip as a camera pitched by `degrees` about x sees it (the floor no longer at constant y)."""
    a = np.radians(degrees)
    rotation = np.array([[1, 0, 0], [0, np.cos(a), -np.sin(a)], [0, np.sin(a), np.cos(a)]], dtype=np.float32)
    return clip @ rotation.T


def stepping_clip(frames=60):
    """Two planted feet that step 0.6 m forward (+z) in one frame halfway; everything else 1 m up."""
    clip = two_feet_clip(frames)
    clip[frames // 2:, :, 2] += 0.6
    return clip


def test_feet_planted_on_a_floor_tilted_by_the_camera_are_in_contact_and_do_not_slide():
    clip = pitched(stepping_clip(), 14.0)
    contacts = foot_contacts(clip, NTU25, fps=30)
    steady = np.r_[0:28, 32:60]  # away from the step
    assert contacts[steady].all()
    speeds = sliding_speeds(clip, NTU25, fps=30)
    np.testing.assert_allclose(speeds[steady], 0.0, atol=1e-3)


def test_the_floor_plane_recovers_the_camera_pitch_and_stays_level_for_a_person_on_one_spot():
    assert fit_floor(pitched(stepping_clip(), 14.0), NTU25).tilt_degrees == pytest.approx(14.0, abs=1.0)
    rng = np.random.default_rng(0)
    standing = two_feet_clip() + rng.normal(0.0, 0.01, (60, 25, 3)).astype(np.float32)
    assert fit_floor(standing, NTU25).tilt_degrees < 3.0


def test_a_sliding_foot_on_a_tilted_floor_is_measured_along_the_floor():
    clip = stepping_clip()
    clip[:, [14, 15], 0] += np.arange(60)[:, None] * (0.3 / 30)  # left foot slides 0.3 m/s along x
    speeds = sliding_speeds(pitched(clip, 14.0), NTU25, fps=30)
    np.testing.assert_allclose(speeds[np.r_[2:28, 32:58], :2], 0.3, atol=2e-3)
