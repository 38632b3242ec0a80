"""The Privacy panel: attribution of the audit's worst attacker, drawn on the released clip and as a track."""

import numpy as np
from PySide6.QtCore import QCoreApplication, QEvent
from PySide6.QtWidgets import QApplication

from app.core.privacy import PrivacyAttribution
from app.render_gl.palette import reliance_colours
from app.state.comparison import ViewKind
from app.ui.screenshots import view_pixels
from release_fakes import write_release
from studio_fakes import save_fake_checkpoint, settle


def opened_release(window, qtbot, path):
    window.controller.open_path(path)
    qtbot.waitUntil(lambda: window.controller.library is not None and window.controller.library.path == path,
                    timeout=20000)
    settle(qtbot, window)


def rendered(view) -> np.ndarray:
    """(H, W, 3) of the view after it painted its current items (a grab alone returns the last paint)."""
    QCoreApplication.sendEvent(view, QEvent(QEvent.Type.UpdateRequest))
    QApplication.processEvents()
    return view_pixels(view)[..., :3].astype(np.int16)


def attributed(window, qtbot):
    qtbot.waitUntil(lambda: window.privacy.result is not None or window.privacy.failed, timeout=20000)
    settle(qtbot, window)
    return window.privacy.result


def test_worst_attacker_attribution_fills_the_track_and_colours_the_joints(release_studio, tmp_path, qtbot):
    release = write_release(tmp_path)  # the audit's worst attacker: a trained bone-length regression
    window = release_studio()
    opened_release(window, qtbot, release.path)
    assert window.docks["privacy"].isVisible()  # a release brings the panel to the front
    result = attributed(window, qtbot)
    assert result is not None, window.privacy.message
    source = window.comparison.clips[ViewKind.SOURCE]
    assert result.request.clip is source and result.request.view == "source"  # a release's clips are released
    assert result.target == "true subject" and result.class_label == release.subject_of(0)
    a = result.attribution
    assert a.joints.shape == (25,) and a.frames.shape == (source.num_frames,)
    assert a.joints.max() > 0  # bone lengths change when a joint sits on its parent

    panel = window.privacy_panel
    assert "bone-lengths (adaptive), the audit's worst attacker" in panel.attacker_label.text()
    assert f"true subject {release.subject_of(0)}" in panel.target_label.text()
    assert "audit risk 0.05" in panel.target_label.text()
    assert "Joints relied on most" in panel.joints_label.text()
    assert not window.privacy.failed and window.privacy.message == ""

    track = window.tracks.reliance_curve
    x, y = track.getData()
    assert window.tracks.reliance_plot.isVisible()
    assert len(x) == source.num_frames and np.allclose(y, a.frames_normalized)
    skeleton = window.views.views[ViewKind.SOURCE].skeleton
    assert np.allclose(skeleton.joint_colours, reliance_colours(a.joints_normalized))
    assert window.views.views[ViewKind.RELEASED].skeleton.joint_colours is None
    assert "attacker's reliance" in window.views.notes[ViewKind.SOURCE].toolTip()

    # another clip: the old colours go at once, the new attribution follows
    window.library_panel.select_clip(3)
    assert window.privacy.result is None and window.privacy.pending  # results arrive through the event loop
    assert skeleton.joint_colours is None
    result = attributed(window, qtbot)
    assert result.request.clip is window.comparison.clips[ViewKind.SOURCE]
    assert result.class_label == release.subject_of(3)

    # hiding the panel stops the work and clears the drawing
    window.docks["predictions"].raise_()
    qtbot.waitUntil(lambda: not window.controller.privacy_active, timeout=5000)
    assert window.privacy.result is None and skeleton.joint_colours is None
    assert not window.tracks.reliance_plot.isVisible()


def test_joint_colours_change_the_rendered_frame(release_studio, tmp_path, qtbot):
    release = write_release(tmp_path)
    window = release_studio()
    opened_release(window, qtbot, release.path)
    result = attributed(window, qtbot)
    view = window.views.views[ViewKind.SOURCE]
    window.clock.seek(10)
    window.coalescer.flush()
    coloured = rendered(view)
    window.views.show_reliance(None)
    plain = rendered(view)
    window._privacy_changed()  # drawn again from the state
    again = rendered(view)
    changed = np.abs(coloured - plain).max(axis=-1) > 40
    assert changed.sum() > 100, changed.sum()  # the joints and bones took other colours (and larger joints)
    assert np.array_equal(coloured, again)
    top = reliance_colours(np.ones(1))[0, :3] * 255  # the most relied-on joint's colour is on screen
    near = np.abs(coloured - top[None, None]).max(axis=-1) < 30
    assert near.sum() > np.abs(plain - top[None, None]).max(axis=-1).__lt__(30).sum()
    assert result.attribution.joints_normalized.max() == 1.0


class TinySubjectModel:
    """A subject "recognizer" reading the mean height of the left hand (joint 7): a Gaussian per subject."""

    def __init__(self, centres):
        self.labels = list(range(len(centres)))
        self.class_names = [f"subject {i}" for i in self.labels]
        self.centres = np.asarray(centres)

    def predict_proba(self, clips, samples=5, seed=0):
        h = np.array([np.nanmean(c.joints[:, 7, 1]) for c in clips])
        logits = -((h[:, None] - self.centres[None]) ** 2) / (2 * 0.01**2)
        e = np.exp(logits - logits.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)


def test_without_an_attacker_file_the_subject_recognizer_stands_in_and_says_so(release_studio, tmp_path, qtbot):
    release = write_release(tmp_path, attacker=False)
    centres = [np.mean([c.joints[:, 7, 1].mean() for c in release.sources if c.subject == s]) for s in range(3)]
    models = tmp_path / "models-with-recognizer"
    models.mkdir()
    save_fake_checkpoint(models / "dtmr_small_beta0.2.pt", beta=0.2)
    save_fake_checkpoint(models / "subject.pt", method="sgn", beta=None, task="subject")
    loads = []

    def load_recognizer(info, device):
        loads.append(info.path.name)
        return TinySubjectModel(centres)

    window = release_studio(attribution=PrivacyAttribution(load_recognizer=load_recognizer), models_dir=models)
    opened_release(window, qtbot, release.path)
    result = attributed(window, qtbot)
    assert result is not None, window.privacy.message
    assert loads == ["subject.pt"]
    text = window.privacy_panel.attacker_label.text()
    assert "subject recognizer (subject.pt)" in text
    assert "names no saved file for its worst attacker" in text and "stands in" in text
    assert result.attribution.top_joints(1) == [7]  # the hand is what this model reads


def test_a_failing_attribution_is_a_message_and_the_studio_carries_on(release_studio, tmp_path, qtbot):
    release = write_release(tmp_path)

    def broken(path, device):
        raise RuntimeError("the attacker exploded")

    window = release_studio(attribution=PrivacyAttribution(load_attacker=broken))
    opened_release(window, qtbot, release.path)
    attributed(window, qtbot)
    assert window.privacy.failed and window.privacy.result is None
    assert "Attribution failed: RuntimeError: the attacker exploded" in window.privacy_panel.message_label.text()
    assert not window.message_boxes  # a message in the panel, not a dialog
    assert window.isVisible() and window.tracks.reliance_plot.isVisible()
    assert window.views.views[ViewKind.SOURCE].skeleton.joint_colours is None
    # the Studio keeps working: another clip is selected, shown and tried again
    window.library_panel.select_clip(2)
    settle(qtbot, window)
    assert window.comparison.clips[ViewKind.SOURCE].sample_name == "R000003"
    assert window.privacy.failed
    window.clock.seek(5)
    window.coalescer.flush()
    assert window.timeline.frame_label.text().startswith("frame 6")
