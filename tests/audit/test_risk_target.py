"""`dtmr anonymize --max-risk`: the ladder of a mechanism's settings in order of utility, each release audited,
the first that meets the target promoted to OUT (release, key, audit, the rewritten model), nothing written
when none meets it."""

from __future__ import annotations

import json

import pytest

from dtmr.audit.risk_target import RiskTarget, anonymize_to_risk, privacy_ladder
from dtmr.audit.suite import AuditSettings
from dtmr.cli import main
from dtmr.data.synthetic import generate_clips
from dtmr.errors import DtmrError
from dtmr.io.library import ClipLibrary
from dtmr.models.checkpoints.checkpoint import load_checkpoint
from dtmr.release.key import key_path_for, read_key
from dtmr.release.release import open_release, release_attributes
from dtmr.release.run import file_sha256

#: fast attackers: the test is about the search, not the attackers' strength
FAST = AuditSettings(attackers=("bone-lengths", "first-root"), utility=False)


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    """(library, k = 2 file): 5 subjects x 2 actions x 3 repetitions, k-same fitted on repetitions 0-1."""
    folder = tmp_path_factory.mktemp("risk")
    library = folder / "lib.h5"
    ClipLibrary.create(library, generate_clips(subjects=5, actions=2, repetitions=3, seed=2)).close()
    model = folder / "ksame2.pt"
    assert main(["fit-motion-model", "--data", str(library), "--split", "synthetic", "--method", "ksame", "--k", "2",
                 "-o", str(model)]) == 0
    return library, model


@pytest.mark.parametrize("text, value, unit", [("2x", 2.0, "x"), ("1.5×", 1.5, "x"), (" 15% ", 15.0, "%")])
def test_a_target_is_a_multiple_of_chance_or_a_rate(text, value, unit):
    assert RiskTarget.parse(text) == RiskTarget(value, unit)


@pytest.mark.parametrize("text", ["", "2", "x2", "0x", "150%", "-1x", "two x"])
def test_a_target_that_is_neither_is_refused(text):
    with pytest.raises(DtmrError, match="--max-risk"):
        RiskTarget.parse(text)


def test_the_ladder_of_a_k_same_file_climbs_k_while_its_pool_allows(fitted, tmp_path):
    _, model = fitted
    notes = []
    rungs = privacy_ladder(model, None, tmp_path, "out", notes.append)
    # 5 subjects: k = 2 (the file), 3 and 5; 8 needs more people than the pool holds
    assert [r.label for r in rungs] == ["k=2", "k=3", "k=5"]
    assert rungs[0].model == model and not rungs[0].derived
    for rung, k in zip(rungs[1:], (3, 5)):
        assert rung.derived and rung.model.name == f"out_k{k}.pt"
        checkpoint = load_checkpoint(rung.model)
        assert checkpoint["config"]["k"] == k and checkpoint["method"] == "ksame"
    assert len(notes) == 1 and "k=8" in notes[0]
    assert [r.label for r in privacy_ladder(None, "naive", tmp_path, "out", notes.append)] == ["naive"]


def test_the_first_setting_that_meets_the_target_is_released_with_its_key_audit_and_model(fitted, tmp_path,
                                                                                        monkeypatch):
    library, model = fitted
    from dtmr.audit import suite

    real = suite.run_audit

    def worst_falls_with_k(release, key, raw, out, settings, command="", log=print, **kw):
        audit = real(release, key, raw, out, settings, command, log, **kw)
        k = int(release.parent.name[1:])  # OUT.h5.risk/k<K>/OUT.h5
        audit["worst"]["times_chance"] = 6.0 / k  # k=2: 3x, k=3: 2x, k=5: 1.2x
        return audit

    monkeypatch.setattr(suite, "run_audit", worst_falls_with_k)
    out = tmp_path / "release.h5"
    outcome = anonymize_to_risk(library, out, RiskTarget(2.0, "x"), model=model, method=None, audit_settings=FAST,
                                log=lambda m: None)
    assert outcome["setting"] == "k=3" and [t["met"] for t in outcome["tried"]] == [False, True]
    chosen = tmp_path / "release_k3.pt"
    library_, key = open_release(out)  # the key matches the release it was moved with
    library_.close()
    assert key.model == chosen.name and key.model_sha256 == file_sha256(chosen)
    assert load_checkpoint(chosen)["config"]["k"] == 3
    assert release_attributes(out)["placement"] == "canonical"
    assert json.loads((tmp_path / "release.audit" / "audit.json").read_text())["release"]["file"] == "release.h5"
    assert not (tmp_path / "release.h5.risk").exists()  # the other settings' keys are gone
    assert sorted(p.name for p in tmp_path.iterdir()) == [".audit-cache", "release.audit", "release.h5",
                                                          "release.key.json", "release_k3.pt"]


def test_no_release_is_written_when_no_setting_meets_the_target(fitted, tmp_path):
    library, model = fitted
    out = tmp_path / "release.h5"
    with pytest.raises(DtmrError, match=r"no setting meets 0\.01× chance \(k=2: .*; k=3: .*; k=5: .*no release written"):
        anonymize_to_risk(library, out, RiskTarget(0.01, "x"), model=model, method=None, audit_settings=FAST,
                          log=lambda m: None)
    assert not out.exists() and not key_path_for(out).exists() and not (tmp_path / "release.audit").exists()
    assert not (tmp_path / "release.h5.risk").exists()


def test_the_command_releases_a_parameter_free_method_that_meets_a_loose_target(fitted, tmp_path, capsys):
    library, _ = fitted
    out = tmp_path / "naive.h5"
    # every attacker runs, each for one epoch on one named fold: the test is about the command
    code = main(["anonymize", str(library), "--method", "naive", "--max-risk", "100%", "--device", "cpu",
                 "--audit-split", "synthetic", "--audit-epochs", "1", "-o", str(out)])
    assert code == 0
    printed = capsys.readouterr().out
    assert "at naive, the first setting whose audit meets 100 % re-identified" in printed
    assert read_key(key_path_for(out)).method == "naive"
    audit = json.loads((tmp_path / "naive.audit" / "audit.json").read_text())
    assert audit["worst"]["accuracy"] <= 100.0 and audit["calibration"]["raw"]
    assert audit["split"]["name"] == "synthetic" and audit["split"]["folds"] == 1


def test_the_audit_options_need_max_risk(fitted, tmp_path, capsys):
    library, _ = fitted
    assert main(["anonymize", str(library), "--method", "naive", "--audit-split", "synthetic",
                 "-o", str(tmp_path / "naive.h5")]) != 0
    assert "give --max-risk too" in capsys.readouterr().err
    assert not (tmp_path / "naive.h5").exists()
