"""`dtmr audit` on the command line: the default output folder, the summary line, the metadata failure
said first, and bad inputs as one-line errors (exit 2); `dtmr evaluate`'s adaptive worst-case column."""

from __future__ import annotations

import json

import pytest
from audit_releases import make_release

from dtmr.cli import main
from dtmr.io.library import ClipLibrary

FAST = ["--attackers", "bone-lengths", "--epochs", "tcn=2"]


def test_audit_writes_next_to_the_release_and_records_its_command(synthetic_raw, tmp_path, capsys):
    raw, clips = synthetic_raw
    release, key = make_release(clips, raw, tmp_path / "released.h5")
    assert main(["audit", str(release), "--key", str(key), "--raw", str(raw), "--folds", "2", *FAST]) == 0
    audit = json.loads((tmp_path / "released.audit" / "audit.json").read_text())
    assert audit["command"].startswith("dtmr audit ") and "--folds 2" in audit["command"]
    assert audit["split"]["kind"] == "repetition" and audit["split"]["folds"] == 2
    out = capsys.readouterr().out
    assert "released.audit" in out and "bone-lengths" in out


def test_a_leaky_release_is_reported_as_a_metadata_failure_first(synthetic_raw, tmp_path, capsys):
    raw, clips = synthetic_raw
    release, key = make_release(clips, raw, tmp_path / "leaky.h5", leak_subject=True)
    assert main(["audit", str(release), "--key", str(key), "--raw", str(raw), *FAST]) == 0
    captured = capsys.readouterr()
    assert captured.out.splitlines()[-1].split(": ", 1)[1].startswith("FAILED: identifying metadata")
    log = captured.err.splitlines()
    first_attacker = next(i for i, line in enumerate(log) if line.startswith("bone-lengths"))
    assert any("metadata fail: clips/subject" in line for line in log[:first_attacker])


def test_a_key_that_does_not_match_is_a_one_line_error(synthetic_raw, tmp_path, capsys):
    raw, clips = synthetic_raw
    release, _ = make_release(clips, raw, tmp_path / "one.h5")
    _, other = make_release(clips, raw, tmp_path / "two.h5")
    assert main(["audit", str(release), "--key", str(other), "--raw", str(raw), *FAST]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dtmr: error: ") and "two.key.json" in err and "one.h5" in err
    assert not (tmp_path / "one.audit" / "audit.json").exists()


def test_too_few_clips_per_subject_is_a_one_line_error(synthetic_raw, tmp_path, capsys):
    raw, clips = synthetic_raw
    lib = tmp_path / "few_raw.h5"
    ClipLibrary.create(lib, [c.replace(repetition=None) for c in clips if c.action == 1]).close()
    release, key = make_release(ClipLibrary(lib).read_all(), lib, tmp_path / "few.h5")
    assert main(["audit", str(release), "--key", str(key), "--raw", str(lib), "--folds", "4", *FAST]) == 2
    assert "needs at least 4 clips of every subject" in capsys.readouterr().err


def test_the_output_may_not_be_an_input(synthetic_raw, tmp_path, capsys):
    raw, clips = synthetic_raw
    release, key = make_release(clips, raw, tmp_path / "rel.h5")
    assert main(["audit", str(release), "--key", str(key), "--raw", str(raw), "--out", str(tmp_path), *FAST]) == 2
    assert "dtmr: error: " in capsys.readouterr().err


def test_unknown_attacker_is_a_usage_error(capsys):
    with pytest.raises(SystemExit):
        main(["audit", "r.h5", "--key", "k", "--raw", "x", "--attackers", "sgn,resnet"])
    assert "unknown attacker(s) resnet" in capsys.readouterr().err


@pytest.mark.slow
def test_evaluate_reports_the_adaptive_worst_case_column(tmp_path):
    from dtmr.data.synthetic import generate_clips

    library = tmp_path / "synthetic.h5"
    ClipLibrary.create(library, generate_clips(subjects=4, actions=2, repetitions=2, seed=3)).close()
    out = tmp_path / "eval"
    assert main(["evaluate", "--data", str(library), "--split", "synthetic", "--baselines", "raw,naive", "--seeds",
                 "1", "--out", str(out), "--recognizer-epochs", "1", "--retrain-epochs", "1", "--device", "cpu"]) == 0
    rows = json.loads((out / "results.json").read_text())
    for row in rows:
        assert row["ri_adaptive_worst"]["mean"] >= row["ri_adaptive_top1"]["mean"]
    assert "RI adaptive worst ↓" in (out / "results.md").read_text()


def test_epochs_take_one_number_or_one_per_attacker():
    import argparse

    from dtmr.argtypes import attacker_epochs as _epochs
    from dtmr.audit.suite import AuditSettings

    assert _epochs("7") == 7
    per_attacker = _epochs("tcn=30, sgn=5")
    assert per_attacker == {"tcn": 30, "sgn": 5}
    settings = AuditSettings(epochs={"tcn": 30})
    assert (settings.epochs_of("tcn"), settings.epochs_of("sgn"), settings.epochs_of("bone-lengths")) == (30, 3, None)
    for bad in ("bone-lengths=3", "lstm=4", "tcn=0"):
        with pytest.raises(argparse.ArgumentTypeError):
            _epochs(bad)
