import numpy as np
import pytest

from dtmr.render import Camera, ComparisonRenderer, Panel, Style, render_comparison
from dtmr.render.style import DEFAULT_STYLE
from render_fakes import LEFT_ELBOW, LEFT_WRIST, T_POSE, swaying_clip

FRONT = Camera.preset("front", distance=3.0, target=(0.0, 0.9, 3.0))
#: floor drawn in the background colour, so an empty spot is exactly the background
NO_GRID = Style(grid=DEFAULT_STYLE.background)


def panel_of(joints, title="pose", **kwargs):
    return Panel(title=title, joints=np.asarray(joints, dtype=np.float32), topology="ntu25", **kwargs)


LEFT_FOREARM = (T_POSE[LEFT_ELBOW] + T_POSE[LEFT_WRIST]) / 2
RIGHT_FOREARM = (T_POSE[9] + T_POSE[10]) / 2


def front_view(panel, size):
    """(renderer, frame 0) of one panel seen from the front, floor invisible."""
    renderer = ComparisonRenderer([panel], size=size, camera=FRONT, style=NO_GRID)
    return renderer, renderer.render(0)


def pixel(renderer, point):
    """(column, row) of the output pixel showing `point`."""
    return tuple(np.floor(renderer.image_pixels(point)).astype(int))


def test_three_panel_frame_has_the_requested_size():
    clip = swaying_clip()
    panels = [Panel.from_clip(clip, name) for name in ("source", "retargeted", "released")]
    image = render_comparison(panels, 3, size=(300, 120))
    assert image.shape == (120, 300, 3) and image.dtype == np.uint8
    default = ComparisonRenderer(panels)
    assert default.size == (1920, 480)


def test_bones_are_drawn_in_their_side_colour_where_the_skeleton_is():
    renderer, image = front_view(panel_of(T_POSE[None]), (160, 120))
    x, y = pixel(renderer, LEFT_FOREARM)
    assert np.abs(image[y, x].astype(int) - DEFAULT_STYLE.left).max() < 40  # the left forearm, blue
    x, y = pixel(renderer, RIGHT_FOREARM)
    assert np.abs(image[y, x].astype(int) - DEFAULT_STYLE.right).max() < 40  # the right forearm, red
    corner = image[55:65, 2:12]  # far left of the panel: nothing there
    assert (corner == DEFAULT_STYLE.background).all()


def test_missing_joint_hides_its_bones_and_leaves_the_pixels_unchanged():
    renderer, full = front_view(panel_of(T_POSE[None]), (160, 120))
    missing = T_POSE.copy()
    missing[LEFT_WRIST] = np.nan
    _, hidden = front_view(panel_of(missing[None]), (160, 120))
    x, y = pixel(renderer, LEFT_FOREARM)
    assert (full[y - 1 : y + 2, x - 2 : x + 3] != DEFAULT_STYLE.background).any()
    assert (hidden[y - 1 : y + 2, x - 2 : x + 3] == DEFAULT_STYLE.background).all()
    # the rest of the skeleton is still drawn
    x, y = pixel(renderer, RIGHT_FOREARM)
    np.testing.assert_array_equal(hidden[y, x], full[y, x])


def test_all_missing_panel_renders_the_empty_floor():
    renderer = ComparisonRenderer([panel_of(np.full((2, 25, 3), np.nan))], size=(80, 90), camera=FRONT, style=NO_GRID)
    top, bottom = renderer.viewport
    assert (renderer.render(1)[top:bottom] == DEFAULT_STYLE.background).all()


def test_panels_share_one_camera_so_skeletons_compare_in_size():
    small, big = swaying_clip(scale=0.8), swaying_clip(scale=1.2)
    renderer = ComparisonRenderer([Panel.from_clip(small, "a"), Panel.from_clip(big, "b")], size=(320, 160), style=NO_GRID)
    image = renderer.render(0)

    def drawn_rows(panel_image):
        return np.flatnonzero((panel_image[20:145] != DEFAULT_STYLE.background).any(axis=(1, 2)))

    rows_small, rows_big = drawn_rows(image[:, :160]), drawn_rows(image[:, 160:])
    assert np.ptp(rows_big) > 1.3 * np.ptp(rows_small)


def test_shorter_clip_holds_its_last_frame():
    short, long = swaying_clip(frames=4), swaying_clip(frames=10)
    renderer = ComparisonRenderer([Panel.from_clip(short, "short"), Panel.from_clip(long, "long")], size=(200, 100))
    assert renderer.length == 10
    last, later = renderer.render(3), renderer.render(9)
    np.testing.assert_array_equal(last[:, :100], later[:, :100])
    assert not np.array_equal(last[:, 100:], later[:, 100:])
    with pytest.raises(ValueError, match="outside"):
        renderer.render(10)


def test_title_and_prediction_lines_are_written():
    frames = 3
    plain = panel_of(np.repeat(T_POSE[None], frames, 0), title="source · subject 3")
    lines = [["action: wave 75% ✓", "identity: 3 40%"]] * frames
    annotated = panel_of(np.repeat(T_POSE[None], frames, 0), title="source · subject 3", predictions=lines)
    a = render_comparison([plain], 1, size=(240, 180), camera=FRONT, style=NO_GRID)
    renderer = ComparisonRenderer([annotated], size=(240, 180), camera=FRONT, style=NO_GRID)
    b = renderer.render(1)
    assert (a[:8] != DEFAULT_STYLE.background).any()  # the title
    header_rows = np.flatnonzero((b[: renderer.viewport[0]] != DEFAULT_STYLE.background).any(axis=(1, 2)))
    assert header_rows.max() > 20  # two lines under the title
    # the view moved down to leave the lines room: the skeleton never lies under the text
    top, bottom = renderer.viewport
    assert 40 < top < 60 and bottom <= 170
    assert np.isin(np.floor(renderer.image_pixels(T_POSE)[:, 1]), np.arange(top, bottom)).all()


def test_panel_validates_its_overlays():
    joints = np.repeat(T_POSE[None], 2, 0)
    with pytest.raises(ValueError, match="lines"):
        panel_of(joints, predictions=[["1", "2", "3", "4", "5", "6"]] * 2)
    with pytest.raises(ValueError, match="prediction frames"):
        panel_of(joints, predictions=[["a"]])
    with pytest.raises(ValueError, match="foot_speeds"):
        panel_of(joints, foot_speeds=np.zeros((2, 3)))
    with pytest.raises(ValueError, match="joints"):
        Panel("bad", np.zeros((2, 20, 3)), "ntu25")


def test_feet_in_contact_are_coloured_by_sliding_speed():
    joints = np.repeat(T_POSE[None], 2, 0)
    speeds = np.full((2, 4), np.nan, dtype=np.float32)
    speeds[:, 1] = 10.0  # the left toe slides fast
    renderer, image = front_view(panel_of(joints, foot_speeds=speeds), (320, 240))
    x, y = pixel(renderer, T_POSE[15])
    np.testing.assert_allclose(image[y, x], DEFAULT_STYLE.sliding_stops[2], atol=30)


def test_rendering_is_deterministic():
    panels = [Panel.from_clip(swaying_clip(), "a")]
    np.testing.assert_array_equal(render_comparison(panels, 2, size=(96, 64)), render_comparison(panels, 2, size=(96, 64)))


def test_small_frames_draw_the_text_over_the_view():
    tall = np.repeat(T_POSE[None], 2, 0)
    camera = Camera.preset("front", distance=1.2, target=(0.0, 1.3, 3.0))  # the head reaches the top rows
    titled = ComparisonRenderer([panel_of(tall, title="WWWW")], size=(64, 48), camera=camera, style=NO_GRID)
    untitled = ComparisonRenderer([panel_of(tall, title="")], size=(64, 48), camera=camera, style=NO_GRID)
    assert titled.viewport == (0, 48)
    a, b = titled.render(0), untitled.render(0)
    assert (b[:14] != DEFAULT_STYLE.background).any()  # the skeleton is up there
    dark = (a[:14].astype(int).sum(axis=-1) < 200) & (b[:14].astype(int).sum(axis=-1) >= 200)
    assert dark.sum() > 10  # and the title is drawn over it
