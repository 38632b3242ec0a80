"""One bad checkpoint is one line of the catalogue's problems; every other model is still listed."""

from __future__ import annotations

import torch

from app.core.checkpoints import build_catalog, read_checkpoint_info
from dtmr.errors import CheckpointError
from studio_fakes import save_fake_checkpoint


def rewrite(path, **changes):
    data = torch.load(path, weights_only=True)
    data.update(changes)
    torch.save(data, path)
    return path


def test_malformed_metadata_is_a_checkpoint_error(tmp_path):
    for name, changes in (("beta_text.pt", {"beta": "abc"}), ("beta_list.pt", {"beta": [0.2]}),
                          ("beta_nan.pt", {"beta": float("nan")}), ("beta_bool.pt", {"beta": True})):
        path = rewrite(save_fake_checkpoint(tmp_path / name), **changes)
        try:
            read_checkpoint_info(path)
        except CheckpointError as exc:
            assert exc.path == str(path) and "beta" in str(exc)
        else:
            raise AssertionError(f"{name} was accepted")


def test_mixed_type_loss_weight_keys_still_give_a_label(tmp_path):
    path = rewrite(save_fake_checkpoint(tmp_path / "mixed.pt"), training={"loss_weights": {"cycle": 2.0, 3: 1.0}})
    assert read_checkpoint_info(path).preset == "small, 3=1, cycle=2"


def test_one_bad_file_never_hides_the_others(tmp_path):
    models = tmp_path / "models"
    models.mkdir()
    save_fake_checkpoint(models / "good_b02.pt", beta=0.2)
    save_fake_checkpoint(models / "good_b1.pt", beta=1.0)
    save_fake_checkpoint(models / "action.pt", method="sgn", beta=None, task="action")
    rewrite(save_fake_checkpoint(models / "bad_beta.pt"), beta="abc")
    rewrite(save_fake_checkpoint(models / "mixed_keys.pt", beta=0.5), training={"loss_weights": {"a": 1.0, 2: 3.0}})
    (models / "truncated.pt").write_bytes(b"PK\x03\x04" + b"\0" * 40)
    catalog = build_catalog([models], [])
    assert [r.path.name for r in catalog.retargeters] == ["good_b02.pt", "mixed_keys.pt", "good_b1.pt"]
    assert set(catalog.recognizers) == {"action"}
    assert len(catalog.problems) == 2 and all("\n" not in p.text for p in catalog.problems)
    assert any("bad_beta.pt" in p.text and "beta" in p.text for p in catalog.problems)
    assert any("truncated.pt" in p.text for p in catalog.problems)
