"""dtmr/audit/result.py: what the Studio and the tables read of an audit.json (`AuditResult`, `risk_by_clip`),
from a good file and, for each malformed entry, one line naming the file and the entry."""

from __future__ import annotations

import copy
import json
import math
import re

import pytest
from test_audit_table import _audit

from dtmr.audit.audit_json import read_audit_json
from dtmr.audit.publish import publishable
from dtmr.audit.result import AuditResult, PartnersExposure, risk_by_clip
from dtmr.errors import InputError


def _full(method: str = "naive") -> dict:
    """An audit with the entries `dtmr audit` writes that these readers take: clips and attacker files too."""
    audit = _audit(method, 40.0, 60.0)
    audit["clips"] = [{"id": "R000001", "subject": 0, "risk": 0.25, "correct": False},
                      {"id": "R000002", "subject": 1, "risk": 1, "correct": True},
                      {"id": "R000003", "subject": 2, "risk": None, "correct": False}]
    audit["attacker_files"] = {f"{n}/{f}": f"attackers/{n}_{f}.pt" for n in ("tcn", "sgn", "bone-lengths")
                               for f in ("raw-trained", "adaptive", "raw-known")}
    return audit


def _written(tmp_path, audit: dict):
    path = tmp_path / "rel.audit" / "audit.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(audit), encoding="utf-8")
    return path


def test_a_good_file_gives_the_worst_attacker_its_file_and_each_clips_risk(tmp_path):
    path = _written(tmp_path, _full())
    result = AuditResult.read(path.parent)
    assert (result.worst_name, result.worst_form, result.worst_family) == ("tcn", "adaptive", "temporal conv")
    assert (result.worst_accuracy, result.worst_times_chance, result.worst_std) == (40.0, 4.0, 1.0)
    assert result.worst_file == "attackers/tcn_adaptive.pt"  # relative to the audit's folder, as written
    risks = risk_by_clip(read_audit_json(path), path)
    assert list(risks) == ["R000001", "R000002", "R000003"]
    assert risks["R000001"] == 0.25 and risks["R000002"] == 1.0 and isinstance(risks["R000002"], float)
    assert math.isnan(risks["R000003"])  # listed without a risk


def test_the_calibration_warning_and_the_partners_exposure_are_read_when_the_audit_has_them():
    audit = _full()
    result = AuditResult.from_audit(audit)
    assert result.calibration_warning is None and result.partners is None  # older audits, no --partners
    audit["calibration"] = {"raw": [], "best": None, "reference": {"accuracy": 30.0, "why": "3 × chance"},
                            "warning": "no attacker was tested on the raw clips: the suite's strength is unknown"}
    audit["partners"] = {"k": 3, "named": {"accuracy": {"mean": 19.81, "std": 1.67}, "times_chance": 0.99},
                         "linked": {"accuracy": {"mean": 0.1, "std": 0.07}, "times_chance": 1.0}}
    result = AuditResult.from_audit(audit)
    assert result.calibration_warning == audit["calibration"]["warning"]
    assert result.partners == PartnersExposure(named_accuracy=19.81, named_times_chance=0.99, linked_accuracy=0.1)
    audit["calibration"]["warning"] = None
    assert AuditResult.from_audit(audit).calibration_warning is None


def test_an_audit_that_keeps_no_attacker_files_has_no_worst_file():
    audit = _full()
    assert AuditResult.from_audit(publishable(audit)).worst_file is None  # a published audit drops them
    del audit["attacker_files"]["tcn/adaptive"]
    assert AuditResult.from_audit(audit).worst_file is None


@pytest.mark.parametrize("change, message", [
    (lambda a: a.pop("worst"), "an audit without a readable 'worst' entry"),
    (lambda a: a.pop("chance"), "an audit without a readable 'chance' entry"),
    (lambda a: a.pop("metadata"), "an audit without a readable 'metadata' entry"),
    (lambda a: a["attackers"][0].pop("family"), "an audit without a readable 'family' entry"),
    (lambda a: a["attackers"][0].update(family=3), r"an audit without a readable 'attackers\[\].family' entry"),
    (lambda a: a.update(attacker_files=["attackers/tcn_adaptive.pt"]),
     "an audit without a readable 'attacker_files' entry"),
    (lambda a: a["attacker_files"].update({"tcn/adaptive": 7}),
     r"an audit without a readable 'attacker_files\[tcn/adaptive\]' entry"),
    (lambda a: a.update(calibration={"raw": []}), "an audit without a readable 'warning' entry"),
    (lambda a: a.update(calibration={"warning": ["weak"]}),
     "an audit without a readable 'calibration.warning' entry"),
    (lambda a: a.update(partners={"named": {"accuracy": {"mean": 19.8}, "times_chance": 0.99}}),
     "an audit without a readable 'linked' entry"),
])
def test_an_audit_result_of_a_malformed_file_is_one_line_naming_it_and_the_entry(tmp_path, change, message):
    audit = copy.deepcopy(_full())
    change(audit)
    path = _written(tmp_path, audit)
    with pytest.raises(InputError, match=f"^{re.escape(str(path))}: {message}$") as error:
        AuditResult.read(path)
    assert "\n" not in str(error.value)


@pytest.mark.parametrize("clips, message", [
    (None, "'clips' must be a list, got none"),
    ({"R000001": 0.5}, "'clips' must be a list, got dict"),
    ([["R000001", 0.5]], r"clips\[0\] must be an object with a string 'id'"),
    ([{"id": "R000001", "risk": 0.5}, {"risk": 0.5}], r"clips\[1\] must be an object with a string 'id'"),
    ([{"id": 7, "risk": 0.5}], r"clips\[0\] must be an object with a string 'id'"),
    ([{"id": "R000001", "risk": 1.5}], r"clips\[0\] \(R000001\): 'risk' must be a number in \[0, 1\], got 1.5"),
    ([{"id": "R000001", "risk": -0.1}], r"clips\[0\] \(R000001\): 'risk' must be a number in \[0, 1\], got -0.1"),
    ([{"id": "R000001", "risk": True}], r"clips\[0\] \(R000001\): 'risk' must be a number in \[0, 1\], got True"),
    ([{"id": "R000001", "risk": "0.5"}], r"clips\[0\] \(R000001\): 'risk' must be a number in \[0, 1\], got '0.5'"),
    ([{"id": "R000001", "risk": float("nan")}], r"clips\[0\] \(R000001\): 'risk' must be a number in \[0, 1\], "
                                                 "got nan"),
])
def test_clip_risks_of_a_malformed_file_are_one_line_naming_it_and_the_entry(tmp_path, clips, message):
    audit = _full()
    if clips is None:
        del audit["clips"]
    else:
        audit["clips"] = clips
    path = _written(tmp_path, audit)
    with pytest.raises(InputError, match=f"^{re.escape(str(path))}: {message}$") as error:
        risk_by_clip(read_audit_json(path), path)
    assert "\n" not in str(error.value)
