import numpy as np

from dtmr.render.style import DEFAULT_STYLE, bone_colours, joint_colours, sliding_colours
from dtmr.skeleton import get_topology


def test_bones_take_the_side_colour_of_their_child_joint():
    topo = get_topology("ntu25")
    colours = {topo.joint_names[c]: tuple(col) for c, col in zip(topo.bone_children, bone_colours(topo))}
    assert colours["left_elbow"] == DEFAULT_STYLE.left
    assert colours["left_knee"] == DEFAULT_STYLE.left
    assert colours["right_wrist"] == DEFAULT_STYLE.right
    assert colours["right_foot"] == DEFAULT_STYLE.right
    assert colours["spine_mid"] == DEFAULT_STYLE.centre
    assert colours["head"] == DEFAULT_STYLE.centre


def test_joint_colours_cover_every_topology_by_name():
    for name, left, right in (("uiprmd22", "left_forearm", "right_forearm"), ("coco17", "left_ankle", "right_ankle")):
        topo = get_topology(name)
        colours = joint_colours(topo)
        assert colours.shape == (topo.num_joints, 3)
        assert tuple(colours[topo.index(left)]) == DEFAULT_STYLE.left
        assert tuple(colours[topo.index(right)]) == DEFAULT_STYLE.right


def test_sliding_colour_map_runs_from_planted_to_sliding():
    stops = np.array(DEFAULT_STYLE.sliding_stops)
    speeds = np.array([0.0, DEFAULT_STYLE.sliding_max / 2, DEFAULT_STYLE.sliding_max, 5.0, np.nan])
    colours = sliding_colours(speeds)
    np.testing.assert_array_equal(colours[:4], [stops[0], stops[1], stops[2], stops[2]])
    np.testing.assert_array_equal(colours[4], stops[0])
    quarter = sliding_colours(np.array([DEFAULT_STYLE.sliding_max / 4]))[0]
    np.testing.assert_allclose(quarter, (stops[0] + stops[1]) / 2, atol=1)
