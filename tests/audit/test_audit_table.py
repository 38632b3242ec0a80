"""dtmr.audit.table and scripts/audit_table.py: audits of one data set side by side."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from dtmr.audit.table import COLUMNS, audit_table

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "audit_table.py"


def _entry(mean: float, std: float = 1.0, **fields) -> dict:
    return {"chance": 10.0, "times_chance": mean / 10, "verdict": "re-identifies", **fields,
            "accuracy": {"mean": mean, "std": std, "folds": [mean]}}


def _audit(method: str, tcn: float, action: float, failed: bool = False) -> dict:
    return {
        "format": "dtmr-audit", "release": {"file": f"{method}.h5", "method": method},
        "metadata": {"findings": [{"field": "frame count", "severity": "fail"}] if failed else []},
        "attackers": [_entry(tcn, name="tcn", family="temporal conv", form="adaptive"),
                      _entry(tcn - 5, name="tcn", family="temporal conv", form="raw-trained"),
                      _entry(20.0, name="sgn", family="SGN", form="adaptive"),
                      _entry(30.0, name="bone-lengths", family="logistic regression", form="adaptive")],
        "linkage": [_entry(90.0, name="embedding"), _entry(2.0, name="frame count")],
        "worst": {"name": "tcn", "form": "adaptive", "accuracy": tcn, "times_chance": tcn / 10},
        "chance": {"subject": 10.0, "linkage": 0.07},
        "utility": {"action_recognition": _entry(action, chance=10.0)},
    }


def _script():
    spec = importlib.util.spec_from_file_location("audit_table", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_rows_give_the_worst_case_metadata_and_ar_kept_against_the_raw_release():
    raw_audit = _audit("raw", 58.0, 80.0, failed=True)
    raw_audit["utility"]["action_recognition_retrained"] = _entry(88.0, chance=10.0)  # the naive's: audited before
    table = audit_table([raw_audit, _audit("naive", 40.0, 60.0)], ["raw", "naive"])
    header, _, raw, naive = table.splitlines()[:4]
    assert header == "| " + " | ".join(COLUMNS) + " |"
    assert raw.startswith("| raw | **fails**: frame count | **58.0 ± 1.0** (tcn, adaptive) | 5.8× |")
    assert naive.startswith("| naive | passed | **40.0 ± 1.0** (tcn, adaptive) | 4.0× | 20.0 ± 1.0 | 40.0 ± 1.0 |")
    assert raw.endswith("| 80.0 ± 1.0 | 100 % | 88.0 ± 1.0 |") and naive.endswith("| 60.0 ± 1.0 | 75 % | – |")
    assert "Chance: re-identification 10.0 %, linkage 0.07 %, action 10.0 %." in table


def test_the_script_reads_audit_folders_and_names_what_it_cannot_read(tmp_path, capsys):
    for method in ("raw", "naive"):
        (tmp_path / method).mkdir()
        (tmp_path / method / "audit.json").write_text(json.dumps(_audit(method, 50.0, 70.0)))
    assert _script().main([str(tmp_path / "raw"), str(tmp_path / "naive"), "--labels", "raw, naive"]) == 0
    assert "| naive | passed |" in capsys.readouterr().out
    assert _script().main([str(tmp_path / "absent")]) == 1
    assert "absent/audit.json: no such audit file" in capsys.readouterr().err
    assert _script().main([str(tmp_path / "raw"), "--labels", "a,b"]) == 1


def test_the_partner_table_sets_the_partners_beside_the_source_and_skips_audits_without_them():
    from dtmr.audit.table import PARTNER_COLUMNS, partner_table

    ksame = _audit("ksame", 17.0, 80.0)
    ksame["release"]["clips"] = 30
    ksame["partners"] = {"k": 3, "named": _entry(28.0), "source_named": _entry(12.0), "linked": _entry(6.0),
                         "appearances": [{"subject": 0, "releases": 4}, {"subject": 1, "releases": 26}]}
    table = partner_table([ksame, _audit("naive", 40.0, 60.0)], ["k-same k=3", "naive"]).splitlines()
    assert table[0] == "| " + " | ".join(PARTNER_COLUMNS) + " |" and len(table) == 3
    assert table[2] == ("| k-same k=3 | 3 | 17.0 ± 1.0 (1.7×) | 12.0 ± 1.0 (1.2×) | 28.0 ± 1.0 (2.8×) | "
                        "90.0 ± 1.0 (9.0×) | 6.0 ± 1.0 (0.6×) | 4–26 of 30 |")
