import numpy as np
import pytest

from dtmr.data.label_set import LabelSet, TrainedOn
from dtmr.render import Recognizers, build_comparison, load_recognizers, pick_reference
from dtmr.render.comparison import describe_clip, prediction_lines, prediction_notes
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
        def retarget_pair(self, clip, reference, action_names=None):
            retargeted, released = super().retarget_pair(clip, reference, action_names)
            return retargeted.replace(joints=retargeted.joints * 0.5), released

    anonymizer, full = FakeAnonymizer(beta=0.2), Shorter(beta=1.0)
    panels = build_comparison(source, reference, anonymizer, full_model=full, library_action_names=["sit", "wave"])
    # both models get the library's action names, as `dtmr anonymize` gives them (k-same, re-timing use them)
    assert anonymizer.action_names == full.action_names == [["sit", "wave"]]
    assert [p.title for p in panels][1:] == ["retargeted (β = 1) · body of subject 7", "released (β = 0.2) · fake"]
    own = build_comparison(source, reference, FakeAnonymizer(beta=0.2))
    np.testing.assert_allclose(panels[1].joints, 0.5 * own[1].joints, rtol=1e-6)
    np.testing.assert_allclose(panels[2].joints, own[2].joints)


def library_labels(action_names, subjects=(3, 7, 9), name="lib") -> LabelSet:
    return LabelSet.build(name, "ntu25", range(len(action_names)), action_names, subjects)


def test_predictions_show_top1_per_frame_and_mark_the_source_labels():
    source, reference = swaying_clip(frames=4, subject=3, action=2), swaying_clip(subject=7)
    labels = library_labels(["sit", "walk", "wave"])
    same = TrainedOn("lib", labels.fingerprint)
    recognizers = Recognizers(
        action=FakeRecognizer("action", labels=[0, 1, 2], class_names=["sit", "walk", "wave"], predicted=2),
        subject=FakeRecognizer("subject", labels=[3, 7, 9], class_names=["S3", "S7", "S9"], predicted=1,
                               trained_on=same),
    )
    panels = build_comparison(source, reference, FakeAnonymizer(), recognizers, labels=labels)
    assert panels[0].title == "source · subject 3 · wave"
    for panel in panels:
        assert len(panel.predictions) == 4
        assert list(panel.predictions[3]) == ["action: wave 75% ✓", "identity: S7 75%"]


def test_titles_use_the_librarys_names_and_marks_match_by_name():
    """N-UCLA's label 5 is "stand up"; the synthetic recognizer's label 5 is "squat": the title says
    "stand up" and nothing is marked (issue 18: the export titled a "stand up" clip "squat")."""
    source, reference = swaying_clip(frames=3, subject=3, action=5), swaying_clip(subject=7)
    labels = library_labels(["pick up", "carry", "throw", "sit down", "walk around", "stand up"])
    synthetic = Recognizers(action=FakeRecognizer("action", labels=[1, 2, 3, 4, 5],
                                                  class_names=["walk in place", "wave", "clap", "jump", "squat"],
                                                  predicted=4, trained_on=TrainedOn("synthetic", "0" * 16)))
    panels = build_comparison(source, reference, FakeAnonymizer(), synthetic, labels=labels)
    assert panels[0].title == "source · subject 3 · stand up"
    # no "squat 75%": a class of another data set is no prediction of this one's actions (issue 42)
    assert all(list(p.predictions[0]) == ["action: no prediction (trained on synthetic)"] for p in panels)
    assert prediction_notes(synthetic, source, labels) == [
        "action recognizer trained on another label set (synthetic, 5 actions): no prediction"]


def test_a_withheld_prediction_is_one_caption_drawn_whole_at_the_default_size(monkeypatch):
    """The exported video says why it shows no prediction, in a line that is not cut at 3 x 640 x 480."""
    import dtmr.render.frame as frame
    from dtmr.render import render_comparison

    source, reference = swaying_clip(frames=2, subject=3, action=0), swaying_clip(subject=7)
    labels = library_labels(["pick up with one hand", "throw"])
    synthetic = Recognizers(
        action=FakeRecognizer("action", labels=[1, 2], class_names=["walk in place", "throw"], predicted=1,
                              trained_on=TrainedOn("synthetic", "0" * 16)),
        subject=FakeRecognizer("subject", labels=[3, 7], class_names=["S3", "S7"], predicted=0,
                               trained_on=TrainedOn("synthetic", "0" * 16)))
    panels = build_comparison(source, reference, FakeAnonymizer(), synthetic, labels=labels)
    assert all(list(p.predictions[1]) == ["action: no prediction (trained on synthetic)",
                                          "identity: no prediction (trained on synthetic)"] for p in panels)
    drawn = []
    real_fit = frame.fit_text
    monkeypatch.setattr(frame, "fit_text", lambda text, font, width: drawn.append((text, real_fit(text, font, width)))
                        or drawn[-1][1])
    render_comparison(panels, 0, frame.default_size(3))
    captions = [(text, shown) for text, shown in drawn if "no prediction" in text]
    assert len(captions) == 6 and all(text == shown for text, shown in captions)


def test_a_class_of_another_number_but_the_same_name_is_marked():
    """A recognizer trained on ["wave", "clap"] shown a library whose label 0 is "clap": its class 1 is ✓."""
    source = swaying_clip(frames=2, subject=3, action=0)
    labels = library_labels(["Clap", "wave"])
    recognizers = Recognizers(action=FakeRecognizer("action", labels=[0, 1], class_names=["wave", "clap"],
                                                    predicted=1))
    lines = prediction_lines(source, recognizers, source, labels)
    assert lines[0] == ["action: clap 75% ✓"]
    wrong = Recognizers(action=FakeRecognizer("action", labels=[0, 1], class_names=["wave", "clap"], predicted=0))
    assert prediction_lines(source, wrong, source, labels)[0] == ["action: wave 75%"]  # label 0, but not "clap"
    # no library labels: nothing to check the classes against, so no prediction
    assert prediction_lines(source, recognizers, source)[0] == ["action: no prediction (unknown labels)"]


def test_subjects_are_marked_only_within_the_same_data_set():
    source = swaying_clip(frames=2, subject=3, action=0)
    labels = library_labels(["sit"])
    other = Recognizers(subject=FakeRecognizer("subject", labels=[3, 7], class_names=["S3", "S7"], predicted=0,
                                               trained_on=TrainedOn("synthetic", "f" * 16)))
    assert prediction_lines(source, other, source, labels)[0] == ["identity: no prediction (trained on synthetic)"]
    assert "trained on other people (synthetic, 2 subjects)" in prediction_notes(other, source, labels)[0]
    same = Recognizers(subject=FakeRecognizer("subject", labels=[3, 7, 9], class_names=["S3", "S7", "S9"],
                                              predicted=0, trained_on=TrainedOn("lib", labels.fingerprint)))
    assert prediction_lines(source, same, source, labels)[0] == ["identity: S3 75% ✓"]


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
