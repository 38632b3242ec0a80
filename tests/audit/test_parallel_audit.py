"""`dtmr audit --workers 2` writes the audit.json of a one-process run (but for the fields that record time
and the command line), a failing cell is a one-line error naming it, and a rerun resumes from the parts."""

from __future__ import annotations

import json

import pytest
import torch
from audit_releases import make_release

from dtmr.audit.suite import AuditSettings, run_audit
from dtmr.errors import DtmrError
from dtmr.parallel import Workers

#: what differs between two runs of the same audit: when it ran, the command, and how long attackers took
TIMING = ("created", "command")


def _comparable(audit: dict) -> dict:
    audit = {k: v for k, v in json.loads(json.dumps(audit)).items() if k not in TIMING}
    for attacker in audit["attackers"]:
        attacker.pop("seconds")
    return audit


def test_two_workers_write_the_audit_of_one_process_and_a_rerun_resumes(synthetic_raw, tmp_path):
    raw, clips = synthetic_raw
    release, key = make_release(clips, raw, tmp_path / "rel.h5")
    settings = AuditSettings(attackers=("sgn", "tcn", "bone-lengths"), epochs=1, cache=tmp_path / "cache-one")
    before = torch.get_num_threads()
    torch.set_num_threads(1)  # the workers' thread count: float sums in the same order
    try:
        one = run_audit(release, key, raw, tmp_path / "one", settings, log=lambda m: None)
    finally:
        torch.set_num_threads(before)
    two_settings = AuditSettings(attackers=settings.attackers, epochs=1, cache=tmp_path / "cache-two")
    lines: list[str] = []
    two = run_audit(release, key, raw, tmp_path / "two", two_settings, log=lines.append,
                    workers=Workers(2, 1, ("cpu", "cpu")))
    assert sum(line.endswith(": done") for line in lines) == 33  # 3 attackers x 3 forms x 3 folds, 2 x 3 utility folds
    assert _comparable(two) == _comparable(one)
    assert json.loads((tmp_path / "two" / "audit.json").read_text())["worst"] == one["worst"]
    # 3 attackers x 3 folds raw-trained, 3 raw-known (every raw clip), 3 utility
    assert len(list((tmp_path / "cache-two").iterdir())) == 15
    # a rerun starts no worker: every cell has its part
    again: list[str] = []
    run_audit(release, key, raw, tmp_path / "two", two_settings, log=again.append, workers=Workers(2, 1, ("cpu",) * 2))
    assert sum("done before" in line for line in again) == 33 and not any("worker" in line for line in again)


def test_a_failing_cell_names_it_and_the_rerun_keeps_the_other_parts(synthetic_raw, tmp_path):
    raw, clips = synthetic_raw
    release, key = make_release(clips, raw, tmp_path / "rel.h5")
    settings = AuditSettings(attackers=("bone-lengths",), epochs=1, folds=2, cache=tmp_path / "cache")
    run_audit(release, key, raw, tmp_path / "probe", settings, log=lambda m: None)
    # a folder where the action recognizer of a fold would be cached: saving it fails in its worker
    blocked = next(p for p in (tmp_path / "cache").iterdir() if p.name.startswith("tcn-raw-"))
    blocked.unlink()
    blocked.mkdir()
    (blocked / "keep").touch()
    with pytest.raises(DtmrError, match=r"^action recognition \(tcn raw-trained\), fold \d/2: .+$"):
        run_audit(release, key, raw, tmp_path / "out", settings, log=lambda m: None,
                  workers=Workers(2, 1, ("cpu", "cpu")))
    (blocked / "keep").unlink()
    blocked.rmdir()
    again: list[str] = []
    audit = run_audit(release, key, raw, tmp_path / "out", settings, log=again.append)
    assert sum("done before" in line for line in again) >= 4  # each worker finished its bone-length cells first
    assert audit["utility"] is not None
