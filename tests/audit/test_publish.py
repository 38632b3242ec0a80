"""dtmr/audit/publish.py and `dtmr publish-audit`: the copy of an audit that may be published."""

from __future__ import annotations

import json

from test_audit_table import _audit

from dtmr.cli import main


def _audit_folder(tmp_path):
    audit = _audit("naive", 40.0, 60.0)
    audit.update(clips=[{"id": "R000001", "subject": 7, "risk": 0.9, "correct": True}],
                 attacker_files={"tcn/adaptive": "attackers/tcn_adaptive.pt"},
                 risk={"mean": 0.9, "median": 0.9, "p90": 0.9, "max": 0.9}, subjects=[])
    folder = tmp_path / "a"
    folder.mkdir()
    (folder / "audit.json").write_text(json.dumps(audit))
    return folder


def test_a_published_audit_keeps_the_risks_but_not_who_is_who(tmp_path, capsys):
    folder = _audit_folder(tmp_path)
    assert main(["publish-audit", str(folder), "-o", str(tmp_path / "shared")]) == 0
    assert "wrote" in capsys.readouterr().out
    shared = json.loads((tmp_path / "shared" / "audit.json").read_text())
    assert shared["clips"] == [{"id": "", "subject": "", "risk": 0.9, "correct": True}]
    assert "attacker_files" not in shared and shared["worst"]["accuracy"] == 40.0
    report = (tmp_path / "shared" / "audit.md").read_text()
    assert "R000001" not in report and "mean 0.90" in report


def test_the_copy_never_replaces_its_audit_and_a_missing_audit_is_one_line(tmp_path, capsys):
    folder = _audit_folder(tmp_path)
    before = (folder / "audit.json").read_text()
    assert main(["publish-audit", str(folder), "-o", str(folder)]) == 2
    assert "the output is also an input" in capsys.readouterr().err
    assert (folder / "audit.json").read_text() == before
    assert main(["publish-audit", str(tmp_path / "absent"), "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "absent" in err


def test_a_private_audit_is_never_replaced_by_a_copy_but_an_earlier_copy_is(tmp_path, capsys):
    folder = _audit_folder(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    (other / "audit.json").write_text((folder / "audit.json").read_text())
    before = (other / "audit.json").read_text()
    assert main(["publish-audit", str(folder), "-o", str(other)]) == 2
    assert "not a published copy" in capsys.readouterr().err
    assert (other / "audit.json").read_text() == before
    shared = tmp_path / "shared"
    assert main(["publish-audit", str(folder), "-o", str(shared)]) == 0
    assert main(["publish-audit", str(folder), "-o", str(shared)]) == 0  # a rerun refreshes its copy
