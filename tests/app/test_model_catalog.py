"""The checkpoint catalogue: metadata read safely, retargeters per β, recognizers per task, bad files listed."""

import os

import pytest
import torch

from app.core.checkpoints import build_catalog, read_checkpoint_info
from app.core.model_scan import ScanRequest, scan_models
from app.core.cancel import CancelToken, no_progress
from dtmr.errors import CheckpointError
from studio_fakes import save_fake_checkpoint


class Evil:
    def __reduce__(self):
        return (os.system, ("echo pwned",))


def test_reads_method_beta_task(tmp_path):
    info = read_checkpoint_info(save_fake_checkpoint(tmp_path / "b02.pt", beta=0.2))
    assert (info.method, info.beta, info.task, info.preset, info.is_recognizer) == ("dtmr", 0.2, None, "small", False)
    assert info.label == "DisentangledTMR β=0.2 small (b02.pt)"
    sgn = read_checkpoint_info(save_fake_checkpoint(tmp_path / "a.pt", method="sgn", beta=None, task="action"))
    assert sgn.is_recognizer and sgn.task == "action" and "recognizer" in sgn.label


def test_unsafe_corrupt_and_foreign_files_raise_checkpoint_error(tmp_path):
    evil = tmp_path / "evil.pt"
    torch.save({"format": "dtmr-checkpoint", "payload": Evil()}, evil)
    corrupt = tmp_path / "corrupt.pt"
    corrupt.write_bytes(b"not a zip")
    foreign = tmp_path / "foreign.pt"
    torch.save({"weights": torch.zeros(2)}, foreign)
    for path in (evil, corrupt, foreign):
        with pytest.raises(CheckpointError) as err:
            read_checkpoint_info(path)
        assert str(path) in str(err.value)


def test_catalog_sorts_by_beta_finds_full_model_and_lists_problems(tmp_path):
    models = tmp_path / "models"
    models.mkdir()
    save_fake_checkpoint(models / "dtmr_b1.pt", beta=1.0)
    save_fake_checkpoint(models / "dtmr_b02.pt", beta=0.2)
    save_fake_checkpoint(models / "pmr.pt", method="pmr", beta=0.5)
    save_fake_checkpoint(models / "action.pt", method="sgn", beta=None, task="action")
    (models / "broken.pt").write_bytes(b"\0" * 10)
    (models / "notes.txt").write_text("ignored")
    extra = save_fake_checkpoint(tmp_path / "user.pt", beta=0.3)
    catalog = build_catalog([models, tmp_path / "missing"], [extra, tmp_path / "gone.pt"])
    assert [r.beta for r in catalog.retargeters] == [0.2, 0.3, 0.5, 1.0]
    assert set(catalog.recognizers) == {"action"}
    assert len(catalog.problems) == 2 and any("broken.pt" in p.text for p in catalog.problems)
    b02 = catalog.find(models / "dtmr_b02.pt")
    assert catalog.full_model(b02).path.name == "dtmr_b1.pt"
    assert catalog.full_model(catalog.find(models / "pmr.pt")) is None  # a β=1 model of another method is no partner
    assert catalog.full_model(catalog.find(models / "dtmr_b1.pt")).path.name == "dtmr_b1.pt"  # β=1 is its own
    result = scan_models(ScanRequest((models,), ()), CancelToken(), no_progress)
    assert result.devices[-1] == "cpu" and len(result.catalog.retargeters) == 3


def test_a_rewritten_checkpoint_is_a_new_entry(tmp_path):
    import os

    path = save_fake_checkpoint(tmp_path / "model.pt", beta=0.2)
    first = read_checkpoint_info(path)
    os.utime(path, (first.modified + 10, first.modified + 10))  # e.g. a resumed training run saved again
    second = read_checkpoint_info(path)
    assert first != second and first.path == second.path


def test_the_studio_and_dtmr_export_pair_the_bundled_models_alike(monkeypatch):
    """The retargeted view of every bundled model comes from the same checkpoint in both tools."""
    from dtmr.cli.export_cmd import retargeting_model
    from dtmr.resources import MODELS_DIR, resource_path

    monkeypatch.delenv("DTMR_RESOURCES", raising=False)
    catalog = build_catalog([resource_path(*MODELS_DIR)], [])
    if not any(r.beta is not None and r.beta < 1 for r in catalog.retargeters):
        pytest.skip("no bundled retargeter of β < 1")
    for model in catalog.retargeters:
        studio = catalog.full_model(model)
        assert retargeting_model(model.path) == (None if studio is None else studio.path), model.label
    b02 = next(r for r in catalog.retargeters if r.path.name == "dtmr_small_beta0.2.pt")
    assert catalog.full_model(b02).path.name == "dtmr_small_beta1.0.pt"
