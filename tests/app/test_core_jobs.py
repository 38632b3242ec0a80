"""The Qt-free jobs: retargeting (β = 1 view, own D without one, cache), recognition (top-5, tracks), foot sliding."""

from pathlib import Path

import numpy as np
import pytest

from app.core.cancel import CancelToken, JobCancelled, no_progress
from app.core.checkpoints import CheckpointInfo
from app.core.foot_sliding import FootSliding
from app.core.recognition import Recognition, RecognitionRequest
from app.core.retargeting import Retargeting, RetargetRequest
from dtmr.data.label_set import RecognizerClasses
from dtmr.skeleton import foot_sliding_speed
from studio_fakes import FakeAnonymizer, FakeRecognizer, make_clip

B02 = CheckpointInfo(path=Path("b02.pt"), method="dtmr", topology="ntu25", beta=0.2)
B1 = CheckpointInfo(path=Path("b1.pt"), method="dtmr", topology="ntu25", beta=1.0)


def loader(loaded):
    def load(info, device):
        loaded.append((info.path, device))
        return FakeAnonymizer(beta=info.beta)
    return load


def test_released_from_selected_model_and_retargeted_from_beta_one_model():
    loaded = []
    job = Retargeting(load=loader(loaded))
    source, reference = make_clip(0, 0), make_clip(2, 1)
    result = job(RetargetRequest(source, reference, B02, B1, "cpu"), CancelToken(), no_progress)
    full = FakeAnonymizer(beta=1.0).retarget_pair(source, reference)[0]
    np.testing.assert_allclose(result.retargeted.joints, full.joints)
    blend = 0.8 * source.joints + 0.2 * full.joints
    np.testing.assert_allclose(result.released.joints, blend, atol=1e-6)
    assert "β=0.2" in result.note and "β=1" in result.note
    job(RetargetRequest(make_clip(1, 0), reference, B02, B1, "cpu"), CancelToken(), no_progress)
    assert loaded == [(Path("b02.pt"), "cpu"), (Path("b1.pt"), "cpu")]  # cached per (checkpoint, device)


def test_without_a_beta_one_model_the_retargeted_view_is_the_selected_models_own_decoder():
    loaded = []
    job = Retargeting(load=loader(loaded))
    source, reference = make_clip(0, 0), make_clip(2, 1)
    result = job(RetargetRequest(source, reference, B02, None, None), CancelToken(), no_progress)
    own_full, own_released = FakeAnonymizer(beta=0.2).retarget_pair(source, reference)
    np.testing.assert_allclose(result.retargeted.joints, own_full.joints)
    np.testing.assert_allclose(result.released.joints, own_released.joints)
    assert result.note == B02.label and loaded == [(Path("b02.pt"), None)]


def test_the_librarys_action_names_reach_both_models():
    models = {}

    def load(info, device):
        return models.setdefault(info.path, FakeAnonymizer(beta=info.beta))

    names = ("", "walk in place", "wave")
    Retargeting(load=load)(RetargetRequest(make_clip(0, 0), make_clip(2, 1), B02, B1, "cpu", names), CancelToken(),
                           no_progress)
    assert [m.action_names for m in models.values()] == [[names], [names]]


def test_cancelled_job_raises_before_running_the_model():
    token = CancelToken()
    token.cancel()
    model = FakeAnonymizer()
    job = Retargeting(load=lambda info, device: model)
    with pytest.raises(JobCancelled):
        job(RetargetRequest(make_clip(0, 0), make_clip(1, 0), B02, None, None), token, no_progress)
    assert model.calls == []


def test_recognition_top5_tracks_and_labels():
    clips = {"source": make_clip(1, 2), "released": make_clip(1, 2, frames=30)}
    classes = RecognizerClasses("action", (0, 1, 2, 3), ("action 0", "action 1", "action 2", "action 3"))
    action = CheckpointInfo(path=Path("a.pt"), method="sgn", topology="ntu25", task="action", classes=classes)
    job = Recognition(load=lambda info, device: FakeRecognizer(info.task, 4))
    result = job(RecognitionRequest(clips, action, None, "cpu"), CancelToken(), no_progress)
    assert set(result.tasks) == {"action"}
    probs = result.tasks["action"]
    top = probs.top_k("source", 5)
    assert len(top) == 4 and top[0].label == 2 and top[0].probability >= top[1].probability
    assert probs.classes is classes  # the header's classes, matched to a library by name (dtmr.data.label_set)
    assert probs.track("released", 2).shape == (30,)
    np.testing.assert_allclose(probs.per_frame["source"].sum(axis=1), 1.0, rtol=1e-5)
    assert probs.top_k("released", 999)[0].label == 2  # a frame past the end reads the last window


def test_foot_sliding_matches_the_library_and_marks_contacts():
    clip = make_clip(0, 2, frames=60)  # sway: the feet slide sideways while planted
    sliding = FootSliding.of(clip.joints, clip.topology, clip.fps)
    assert sliding.mean == pytest.approx(foot_sliding_speed(clip.joints, "ntu25", 30.0))
    assert sliding.mean > 0.05
    per_frame = sliding.per_frame()
    assert per_frame.shape == (60,) and np.nanmax(per_frame) > 0.1
    assert sliding.contacts.shape == (60, 4) and sliding.contacts.any()
    planted = FootSliding.of(make_clip(0, 0).joints, "ntu25", 30.0)
    assert planted.mean < 0.01


def test_foot_contacts_are_the_library_contacts():
    from dtmr.skeleton import foot_contacts

    for action in range(3):
        clip = make_clip(1, action, frames=50, missing=True)
        sliding = FootSliding.of(clip.joints, clip.topology, clip.fps)
        np.testing.assert_array_equal(sliding.contacts, foot_contacts(clip.joints, "ntu25", clip.fps))


def test_an_exported_clips_method_and_beta_come_from_its_typed_provenance():
    """The export reads β through `dtmr.data.provenance` (it parsed `extra` strings); a clip of an opened
    library with a damaged entry is exported naming no method rather than failing."""
    from app.core.export_job import ShownOutputs
    from app.core.provenance import shown_provenance
    from studio_fakes import make_clip

    clip = make_clip(1, 1)
    made = clip.replace(extra={"method": "dtmr", "beta": "0.2", "output": "retargeted"})
    assert shown_provenance(made).beta == 0.2 and shown_provenance(clip) is None
    assert shown_provenance(clip.replace(extra={"method": "dtmr", "beta": "zero point two"})) is None
    outputs = ShownOutputs(made, made, 1.0, "model").full_model()
    assert (outputs.beta, outputs.method) == (0.2, "dtmr")
