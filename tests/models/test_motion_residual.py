"""DisentangledTMR with a re-timed residual ("retimed", "retimed-naive"): the model, its checkpoint, the
Anonymizer's blend and a short training."""

import dataclasses

import numpy as np
import pytest
import torch

from dtmr.data.synthetic import generate_clips
from dtmr.errors import CheckpointError, DtmrError
from dtmr.io.library import ClipLibrary
from dtmr.models import Anonymizer, DisentangledTMR, DTMRConfig
from dtmr.models.checkpoints.checkpoint import (
    build_model_from_checkpoint,
    load_checkpoint,
    save_checkpoint,
)
from dtmr.models.config import variant_label
from dtmr.models.motion import Retimer, TemplateBank
from dtmr.skeleton import NTU25, normalize
from dtmr.train.data import load_training_data, prepare_clips
from dtmr.train.distributed import DistributedContext
from dtmr.train.dtmr_trainer import DTMRTrainer, TrainConfig

#: DTMRConfig fields of a model that builds and steps in a fraction of a second (tests/train/tiny_training.py)
TINY = {
    "action_conv_channels": 8, "action_hidden": 16, "action_heads": 2, "action_layers": 1, "action_ffn": 32,
    "action_dim": 16, "mixformer_channels": [40], "mixformer_blocks": [1], "identity_channels": [8, 16, 16, 16],
    "identity_heads": 2, "bone_hidden": 16, "identity_fusion_hidden": 32, "identity_dim": 16,
    "decoder_layers": 1, "decoder_dim": 16, "decoder_heads": 2, "decoder_ffn": 32, "dropout": 0.0,
}


@pytest.fixture(scope="module")
def clips():
    return generate_clips(subjects=4, actions=3, repetitions=2, seed=0)


@pytest.fixture(scope="module")
def bank(clips):
    arrays = prepare_clips(clips, "ntu25")
    return TemplateBank.fit("ntu25", arrays.joints, arrays.actions)


def tiny(residual: str) -> DTMRConfig:
    return DTMRConfig.preset("small", "ntu25", residual=residual, **TINY)


def test_a_retimed_residual_is_the_retimer_of_the_models_templates(clips, bank):
    arrays = prepare_clips(clips[:4], "ntu25")
    src, ref = torch.from_numpy(arrays.joints[:2]), torch.from_numpy(arrays.joints[2:])
    for residual, naive in (("retimed", False), ("retimed-naive", True)):
        model = DisentangledTMR(tiny(residual), beta=0.3, templates=bank)
        assert model.retimes and {"retimer.bank.templates", "retimer.bank.actions"} <= set(model.state_dict())
        torch.testing.assert_close(model.residual(src, ref), Retimer("ntu25", bank, naive)(src, ref))
        assert variant_label(model.config_dict()) == f"small, {residual} residual"
    assert not DisentangledTMR(tiny("naive")).retimes
    with pytest.raises(ValueError, match="needs action templates: pass them"):
        DisentangledTMR(tiny("retimed-naive"))
    with pytest.raises(ValueError, match="'source' residual takes no action templates"):
        DisentangledTMR(tiny("source"), templates=bank)


def test_the_checkpoint_holds_the_templates_and_the_anonymizer_blends_with_the_retimed_residual(clips, bank,
                                                                                                tmp_path):
    model = DisentangledTMR(tiny("retimed-naive"), beta=0.0, templates=bank).eval()
    path = save_checkpoint(tmp_path / "dtmr.pt", model, data={}, metrics={})
    loaded = build_model_from_checkpoint(load_checkpoint(path), source=path)
    torch.testing.assert_close(loaded.retimer.bank.templates, bank.templates)
    source, reference = clips[1], clips[10]
    # β = 0: the release is the residual alone, re-timed in the normalized space and mapped back like D
    released = Anonymizer.from_checkpoint(path, device="cpu").anonymize(source, reference)
    (src, transform), (ref, _) = normalize(source.joints, NTU25), normalize(reference.joints, NTU25)
    expected = Retimer("ntu25", bank, naive=True)(torch.from_numpy(src)[None], torch.from_numpy(ref)[None])
    np.testing.assert_allclose(released.joints, transform.invert(expected[0].numpy()), atol=1e-5)
    checkpoint = load_checkpoint(path)
    del checkpoint["state_dict"]["retimer.bank.templates"]
    with pytest.raises(CheckpointError, match="invalid dtmr configuration: the file holds no action templates"):
        build_model_from_checkpoint(checkpoint, source=path)


def tiny_training(clips, tmp_path, epochs=(0, 2, 0), loss_weights=None, **residual):
    """(the training data, the config of a short training (default: 2 epochs of stage 2) of a tiny model with
    `residual` options)."""
    library = tmp_path / "tiny.h5"
    ClipLibrary.create(library, clips).close()
    data = load_training_data(library, "synthetic")
    config = TrainConfig(data=str(library), split="synthetic", out=str(tmp_path / "run"), beta=0.5, epochs=epochs,
                         batch=2, quadruplets_per_epoch=4, lr=3e-3, model_overrides={**TINY, **residual},
                         loss_weights=loss_weights or {})
    return data, config


def test_training_with_a_retimed_residual_fits_the_templates_and_saves_them(clips, tmp_path):
    # through stage 3 with the output identity adversary (it once failed there: its pairs were left undefined)
    data, config = tiny_training(clips, tmp_path, epochs=(0, 1, 1), loss_weights={"output_identity_adversary": 1.0},
                                 residual="retimed-naive")
    trainer = DTMRTrainer(config, data, DistributedContext())
    path = trainer.run()
    assert all(np.isfinite(h["total"]) for h in trainer.history)
    expected = TemplateBank.fit("ntu25", data.train.joints, data.train.actions)
    loaded = Anonymizer.from_checkpoint(path, device="cpu")
    assert loaded.model.retimes
    torch.testing.assert_close(loaded.model.retimer.bank.templates, expected.templates)


def _pool(clips):
    arrays = prepare_clips(clips, "ntu25")
    return arrays, tuple(torch.from_numpy(a) for a in (arrays.joints, arrays.actions, arrays.subjects))


def test_a_ksame_residual_is_the_ksame_average_of_the_models_pool(clips, bank):
    from dtmr.models.motion import KSameMotion

    arrays, pool = _pool(clips)
    config = DTMRConfig.preset("small", "ntu25", residual="ksame", residual_k=2, **TINY)
    model = DisentangledTMR(config, beta=0.3, templates=bank, pool=pool)
    saved = set(model.state_dict())
    assert {"ksame.pool", "ksame.pool_actions", "ksame.pool_subjects", "ksame.bank.templates"} <= saved
    assert model.residual_labels == ("actions", "subjects") and not model.retimes
    src, ref = torch.from_numpy(arrays.joints[:2]), torch.from_numpy(arrays.joints[2:4])
    subjects = torch.from_numpy(arrays.subjects[:2])
    expected = KSameMotion("ntu25", bank, *pool, k=2)(src, ref, None, subjects)
    torch.testing.assert_close(model.residual(src, ref, subjects=subjects), expected)
    assert not torch.allclose(model.residual(src, ref), expected)  # without subjects a clip is its own partner
    assert variant_label(model.config_dict()) == "small, ksame residual k=2"
    assert "residual_k" not in tiny("naive").to_dict()  # other configs read as before the field existed
    with pytest.raises(ValueError, match="averages with a pool of training clips: pass it"):
        DisentangledTMR(config, templates=bank)
    with pytest.raises(ValueError, match="'naive' residual takes no pool"):
        DisentangledTMR(tiny("naive"), pool=pool)


def test_the_anonymizer_blends_with_the_ksame_residual_excluding_the_sources_subject(clips, bank, tmp_path):
    from dtmr.models.motion import KSameMotion

    _, pool = _pool(clips)
    config = DTMRConfig.preset("small", "ntu25", residual="ksame", residual_k=3, **TINY)
    model = DisentangledTMR(config, beta=0.0, templates=bank, pool=pool).eval()
    path = save_checkpoint(tmp_path / "dtmr_ksame.pt", model, data={}, metrics={})
    source, reference = clips[1], clips[10]
    released = Anonymizer.from_checkpoint(path, device="cpu").anonymize(source, reference)  # β = 0: the residual
    (src, transform), (ref, _) = normalize(source.joints, NTU25), normalize(reference.joints, NTU25)
    expected = KSameMotion("ntu25", bank, *pool, k=3)(torch.from_numpy(src)[None], torch.from_numpy(ref)[None],
                                                     None, torch.tensor([source.subject]))
    np.testing.assert_allclose(released.joints, transform.invert(expected[0].numpy()), atol=1e-5)
    checkpoint = load_checkpoint(path)
    del checkpoint["state_dict"]["ksame.pool_subjects"]
    with pytest.raises(CheckpointError, match="the file holds no k-same pool"):
        build_model_from_checkpoint(checkpoint, source=path)


def test_training_with_a_ksame_residual_averages_every_training_clip_once(clips, tmp_path):
    data, config = tiny_training(clips, tmp_path, residual="ksame", residual_k=2)
    trainer = DTMRTrainer(config, data, DistributedContext())
    ksame = trainer.model.ksame
    first = torch.from_numpy(data.train.joints[:3])
    expected = ksame.average(first, torch.from_numpy(data.train.actions[:3]), torch.from_numpy(data.train.subjects[:3]))
    torch.testing.assert_close(trainer.train_averages[:3], expected)
    path = trainer.run()
    assert all(np.isfinite(h["total"]) for h in trainer.history)
    loaded = Anonymizer.from_checkpoint(path, device="cpu")
    assert loaded.residual_labels == ("actions", "subjects")
    torch.testing.assert_close(loaded.model.ksame.pool, torch.from_numpy(data.train.joints))
    too_many = dataclasses.replace(config, out=str(tmp_path / "run5"),
                                   model_overrides={**TINY, "residual": "ksame", "residual_k": 5})
    with pytest.raises(DtmrError, match="k = 5 needs 5 subjects per action"):
        DTMRTrainer(too_many, data, DistributedContext())


def test_the_audit_replays_the_partners_of_a_ksame_residual_and_refuses_a_model_without(clips, bank, tmp_path):
    from dtmr.audit.partners import replay_partners

    arrays, pool = _pool(clips)
    config = DTMRConfig.preset("small", "ntu25", residual="ksame", residual_k=3, **TINY)
    model = DisentangledTMR(config, beta=0.2, templates=bank, pool=pool).eval()
    path = save_checkpoint(tmp_path / "dtmr_ksame.pt", model, data={}, metrics={})
    ksame, partners = replay_partners(Anonymizer.from_checkpoint(path, device="cpu"), clips, None)
    expected = model.ksame.partners(torch.from_numpy(arrays.joints), None, torch.from_numpy(arrays.subjects))[0]
    assert ksame.k == 3 and partners.tolist() == expected.tolist()
    retimed = save_checkpoint(tmp_path / "dtmr_retimed.pt", DisentangledTMR(tiny("retimed"), templates=bank),
                              data={}, metrics={})
    with pytest.raises(DtmrError, match="dtmr_retimed.pt: a dtmr model has no partners"):
        replay_partners(Anonymizer.from_checkpoint(retimed, device="cpu"), clips, None)
