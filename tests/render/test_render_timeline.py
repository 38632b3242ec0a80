import numpy as np
import pytest

from dtmr.render.timeline import comparison_length, frame_index


def test_comparison_runs_for_the_longest_clip():
    assert comparison_length([40, 64, 12]) == 64
    with pytest.raises(ValueError):
        comparison_length([])
    with pytest.raises(ValueError):
        comparison_length([10, 0])


def test_shorter_clip_holds_its_last_frame():
    assert frame_index(5, 10) == 5
    assert frame_index(9, 10) == 9
    assert frame_index(30, 10) == 9
    np.testing.assert_array_equal(frame_index(np.arange(6), 3), [0, 1, 2, 2, 2, 2])
    with pytest.raises(ValueError):
        frame_index(-1, 10)
    with pytest.raises(ValueError):
        frame_index(0, 0)
