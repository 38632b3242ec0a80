import numpy as np
import pytest

from dtmr import Clip


def test_clip_validates_shape_topology_and_values():
    clip = Clip(np.zeros((4, 25, 3)), subject=3)
    assert clip.joints.dtype == np.float32 and clip.num_frames == 4 and clip.topology == "ntu25"
    with pytest.raises(ValueError, match="no frames"):
        Clip(np.zeros((0, 25, 3)))
    with pytest.raises(ValueError, match="25 joints"):
        Clip(np.zeros((4, 20, 3)))
    with pytest.raises(ValueError, match="infinite"):
        Clip(np.full((4, 25, 3), np.inf))
    with pytest.raises(ValueError, match=r"\(T, J, 3\)"):
        Clip(np.zeros((4, 25)))
    with pytest.raises(KeyError):
        Clip(np.zeros((4, 25, 3)), topology="nope")
    # missing joints are NaN and allowed
    assert np.isnan(Clip(np.full((2, 20, 3), np.nan), topology="kinect_v1_20").joints).all()


def test_replace_copies_metadata_but_not_extra_by_reference():
    clip = Clip(np.zeros((2, 25, 3)), subject=1, extra={"a": "1"})
    other = clip.replace(subject=2)
    other.extra["b"] = "2"
    assert clip.extra == {"a": "1"} and other.subject == 2 and other.joints is clip.joints
    assert "joints" not in clip.metadata() and clip.metadata()["subject"] == 1
