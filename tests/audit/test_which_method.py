"""dtmr/audit/which_method.py and dtmr/audit/result.py: the which-method table from published audits."""

from __future__ import annotations

import json

import pytest
from test_audit_table import _audit

from dtmr.audit.result import AuditResult
from dtmr.audit.which_method import WhichMethodConfig, which_method_table
from dtmr.errors import InputError

CONFIG = {
    "target_times_chance": 2,
    "data_sets": [{"name": "a", "label": "Set A"}, {"name": "b", "label": "Set B"}],
    "rows": [
        {"label": "k-same", "method": "ksame", "command": "dtmr anonymize --model K", "audits": {"a": "a_ksame"},
         "use": "publish"},
        {"label": "naive", "method": "naive", "command": "dtmr anonymize --method naive",
         "audits": {"a": "a_naive", "b": "b_naive"}, "use": "body only"},
        {"label": "DisentangledTMR", "method": "dtmr", "command": "dtmr anonymize --model C", "audits": {},
         "use": "research"},
        {"label": "raw", "method": "raw", "command": "dtmr anonymize --method raw",
         "audits": {"a": "a_raw", "b": "b_raw"}, "use": "never"},
    ],
}


def _publish(root, name, audit, motion=None):
    if motion is not None:
        audit["utility"]["motion_amplitude_kept"] = {"median": motion}
    (root / name).mkdir(parents=True)
    (root / name / "audit.json").write_text(json.dumps(audit))


@pytest.fixture
def published(tmp_path):
    root = tmp_path / "audits"
    _publish(root, "a_ksame", _audit("ksame", 18.0, 72.0), motion=0.7)
    _publish(root, "a_naive", _audit("naive", 34.0, 60.0), motion=0.99)
    _publish(root, "b_naive", _audit("naive", 93.0, 90.0, failed=True))
    _publish(root, "a_raw", _audit("raw", 91.0, 80.0), motion=1.0)
    _publish(root, "b_raw", _audit("raw", 96.0, 95.0))
    path = tmp_path / "which.json"
    path.write_text(json.dumps(CONFIG))
    return WhichMethodConfig.read(path), root


def test_rows_give_the_worst_case_per_set_utility_against_raw_and_a_verdict(published):
    config, root = published
    lines = which_method_table(config, root).splitlines()
    assert lines[0] == ("| method | command | Set A worst case | Set B worst case | action kept | motion kept | verdict "
                        "| use it when |")
    assert lines[2] == ("| k-same | `dtmr anonymize --model K` | **1.8× (18.0 %)** | – | 90 % | 0.70 | within 2× chance "
                        "on every set audited | publish |")
    assert lines[3] == ("| naive | `dtmr anonymize --method naive` | 3.4× (34.0 %) | 9.3× (93.0 %) | 75 % / 95 % | 0.99 "
                        "| fails the metadata scan (frame count) | body only |")
    assert lines[4] == "| DisentangledTMR | `dtmr anonymize --model C` | – | – | – | – | not audited with this suite | research |"
    assert lines[5].startswith("| raw | `dtmr anonymize --method raw` | 9.1× (91.0 %) | 9.6× (96.0 %) | 100 % / 100 % |")
    assert "above 2× chance (up to 9.6×)" in lines[5]
    assert "(Set A 10 %, Set B 10 %)" in lines[-1]


def test_a_missing_audit_or_a_bad_config_is_an_error_naming_the_file(published, tmp_path):
    config, root = published
    (root / "b_raw" / "audit.json").unlink()
    with pytest.raises(InputError, match="b_raw/audit.json: no such audit file"):
        which_method_table(config, root)
    for change, message in (({"method": "lstm"}, "unknown method 'lstm'"),
                            ({"audits": {"c": "x"}}, "unknown data set c")):
        bad = json.loads(json.dumps(CONFIG))
        bad["rows"][0].update(change)
        path = tmp_path / "bad.json"
        path.write_text(json.dumps(bad))
        with pytest.raises(InputError, match=message):
            WhichMethodConfig.read(path)


def test_an_audit_result_reads_the_summary_and_names_a_broken_file(tmp_path):
    audit = _audit("naive", 34.0, 60.0, failed=True)
    result = AuditResult.from_audit(audit)
    assert (result.method, result.worst_name, result.worst_form, result.worst_times_chance) == ("naive", "tcn", "adaptive", 3.4)
    assert result.metadata_failures == ("frame count",) and result.action_accuracy == 60.0 and result.motion_kept is None
    raw = AuditResult.from_audit(_audit("raw", 90.0, 80.0))
    assert result.action_kept(raw) == 75.0
    del audit["worst"]
    with pytest.raises(InputError, match="x.json: an audit without a readable 'worst' entry"):
        AuditResult.from_audit(audit, "x.json")
