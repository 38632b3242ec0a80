import numpy as np
import pytest

from dtmr.render import Recognizers, build_comparison, load_recognizers, pick_reference
from dtmr.render.comparison import describe_clip
from render_fakes import FakeAnonymizer, FakeRecognizer, swaying_clip


def test_comparison_has_source_retargeted_and_released_panels():
    source, reference = swaying_clip(frames=8, subject=3, action=1), swaying_clip(frames=5, subject=7, scale=0.8)
    panels = build_comparison(source, reference, FakeAnonymizer(beta=0.5), action_names={1: "wave"})
    assert [p.title for p in panels] == [
        "source · subject 3 · wave",
        "retargeted (decoder of the β = 0.5 model) · body of subject 7",  # no β = 1 partner: its own decoder
        "released (β = 0.5) · fake",
    ]
    assert all(p.num_frames == 8 for p in panels)
    assert all(p.predictions is None for p in panels)
    assert all(p.foot_speeds.shape == (8, 4) for p in panels)
    height = [np.nanmax(p.joints[..., 1]) for p in panels]
    assert height[1] == pytest.approx(0.8 * height[0], rel=1e-4)
    assert height[2] == pytest.approx(0.9 * height[0], rel=1e-4)


def test_the_retargeted_panel_comes_from_the_beta_one_partner_when_given():
    source, reference = swaying_clip(frames=6, subject=3), swaying_clip(frames=5, subject=7, scale=0.8)

    class Shorter(FakeAnonymizer):
        def retarget_pair(self, clip, reference):
            retargeted, released = super().retarget_pair(clip, reference)
            return retargeted.replace(joints=retargeted.joints * 0.5), released

    panels = build_comparison(source, reference, FakeAnonymizer(beta=0.2), full_model=Shorter(beta=1.0))
    assert [p.title for p in panels][1:] == ["retargeted (β = 1) · body of subject 7", "released (β = 0.2) · fake"]
    own = build_comparison(source, reference, FakeAnonymizer(beta=0.2))
    np.testing.assert_allclose(panels[1].joints, 0.5 * own[1].joints, rtol=1e-6)
    np.testing.assert_allclose(panels[2].joints, own[2].joints)


def test_predictions_show_top1_per_frame_and_mark_the_source_labels():
    source, reference = swaying_clip(frames=4, subject=3, action=2), swaying_clip(subject=7)
    recognizers = Recognizers(
        action=FakeRecognizer("action", labels=[0, 1, 2], class_names=["sit", "walk", "wave"], predicted=2),
        subject=FakeRecognizer("subject", labels=[3, 7, 9], class_names=["S3", "S7", "S9"], predicted=1),
    )
    panels = build_comparison(source, reference, FakeAnonymizer(), recognizers)
    assert panels[0].title == "source · subject 3 · wave"  # names from the action recognizer
    for panel in panels:
        assert len(panel.predictions) == 4
        assert list(panel.predictions[3]) == ["action: wave 75% ✓", "identity: S7 75%"]


def test_describe_clip_leaves_out_unknown_labels():
    clip = swaying_clip()
    assert describe_clip(clip.replace(subject=None, action=17)) == "action 17"
    assert describe_clip(clip.replace(subject=None, action=None)) == ""


def test_reference_is_a_seeded_draw_of_another_subject():
    subjects = np.array([0, 0, 1, 2, -1, 2])
    draws = {pick_reference(subjects, 0, seed) for seed in range(40)}
    assert draws == {2, 3, 5}
    assert pick_reference(subjects, 0, seed=5) == pick_reference(subjects, 0, seed=5)
    assert pick_reference(subjects, 4, seed=1) in {0, 1, 2, 3, 5}  # unknown source: any other clip
    assert pick_reference(np.array([4, 4, -1]), 0) is None


def test_folder_without_recognizers_gives_none(tmp_path):
    assert load_recognizers(tmp_path) is None
