"""The foot-sliding track shows what the views' captions say (issue 42: "the foot-sliding track can show no curve
while the caption says 1.5 m/s"): a released clip whose feet touch the floor on single frames between gaps,
sliding at 1.5 m/s, among two views of many slow contact frames."""

import numpy as np
import pytest
from PySide6.QtWidgets import QApplication

from app.state.comparison import ViewKind
from app.ui.tracks_panel import VIEW_PENS
from dtmr.io.npz_dataset import write_npz_dataset
from dtmr.skeleton import get_topology
from studio_fakes import ACTION_NAMES, FakeAnonymizer, make_clip, settle

FRAMES = 300
#: the released clip's feet are seen on these frames and their neighbours only (a tracking gap elsewhere)
SEEN = (50, 150, 250)
SPEED = 1.5  # m/s, the whole body sliding sideways


class SlidingRelease(FakeAnonymizer):
    """Retargeted: the source as it is (feet planted); released: sliding at SPEED, feet seen on 3 x 3 frames."""

    def retarget_pair(self, clip, reference, action_names=None):
        retargeted, _ = super().retarget_pair(clip, clip, action_names)  # the source's own height: unchanged
        joints = clip.joints.copy()
        joints[..., 0] += SPEED * np.arange(clip.num_frames, dtype=np.float32)[:, None] / clip.fps
        seen = np.zeros(clip.num_frames, dtype=bool)
        for frame in SEEN:
            seen[frame - 1: frame + 2] = True
        joints[np.ix_(~seen, list(get_topology("ntu25").contact_joints))] = np.nan
        return retargeted, clip.replace(joints=joints, extra=retargeted.extra)


def colour_pixels(widget, colour, tolerance: int = 40) -> int:
    image = widget.grab().toImage()
    pixels = np.array([[image.pixelColor(x, y).getRgb()[:3] for x in range(image.width())]
                       for y in range(image.height())], dtype=np.int32)
    return int((np.abs(pixels - np.array(colour)).max(axis=2) <= tolerance).sum())


@pytest.mark.timeout(120)
def test_the_sliding_track_shows_a_view_whose_contacts_are_single_fast_frames(make_studio, tmp_path, fakes, qtbot):
    path = tmp_path / "long.npz"
    write_npz_dataset(path, [make_clip(s, 0, frames=FRAMES) for s in range(2)], action_names=ACTION_NAMES)
    window = make_studio()
    models = window.controller.models_dir
    for beta in (0.2, 1.0):
        fakes.anonymizers[str(models / f"dtmr_small_beta{beta:.1f}.pt")] = SlidingRelease(beta=beta)
    window.open_path(path)
    qtbot.waitUntil(lambda: ViewKind.RELEASED in window.comparison.clips, timeout=20000)
    settle(qtbot, window)
    QApplication.processEvents()
    feet = window.comparison.feet
    released = feet[ViewKind.RELEASED].per_frame()
    # the scenario: single contact frames between gaps, the caption's mean 1.5 m/s, many slow frames elsewhere
    assert np.flatnonzero(np.isfinite(released)).tolist() == list(SEEN)
    assert feet[ViewKind.RELEASED].mean == pytest.approx(SPEED, abs=0.05)
    assert np.isfinite(feet[ViewKind.SOURCE].per_frame()).sum() > 200
    plot = window.tracks.plots["sliding"]
    low, high = plot.getPlotItem().vb.viewRange()[1]
    assert low <= 0 and high >= feet[ViewKind.RELEASED].mean  # the caption's speed lies inside the track
    x, y = window.tracks.sliding_dots[ViewKind.RELEASED].getData()
    assert x.tolist() == list(SEEN) and np.allclose(y, released[list(SEEN)])
    assert colour_pixels(plot, VIEW_PENS[ViewKind.RELEASED]) >= 3 * 6  # three dots drawn, each a few pixels
