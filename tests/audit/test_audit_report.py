"""audit.md / audit.html from an audit dict laid out as audit.json is (dtmr.audit.report.write_reports)."""

from __future__ import annotations

import base64
import io
import re

import numpy as np
import pytest
from matplotlib.image import imread

from dtmr.audit.report import write_reports

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def audit() -> dict:
    rng = np.random.default_rng(3)
    clips = [{"id": f"R{i + 1:06d}", "subject": i % 4 + 1, "risk": round(float(r), 3), "correct": bool(r > 0.5)}
             for i, r in enumerate(rng.uniform(0, 1, 24))]
    clips[5].update(risk=0.99, correct=True)
    return {
        "format": "dtmr-audit", "version": 1, "command": "dtmr audit released.h5 --key released.key.json --raw raw.h5",
        "created": "2026-12-02T10:00:00+00:00",
        "release": {"file": "released.h5", "clips": 24, "subjects": 4, "method": "dtmr", "beta": 0.2,
                    "model": "dtmr_small_beta0.2.pt", "provenance": "none"},
        "raw": {"file": "raw.h5", "clips": 24},
        "split": {"kind": "folds", "folds": 3, "name": None},
        "chance": {"subject": 25.0, "linkage": 4.17},
        "metadata": {"passed": False, "findings": [
            {"field": "frame count", "problem": "frame count links to the source", "detail": "5 of 24 clips ...",
             "severity": "warn"},
            {"field": "clips/subject", "problem": "equals the subject id", "detail": "equal for 24 of 24 clips",
             "severity": "fail"},
        ]},
        "attackers": [
            {"name": "sgn", "family": "SGN", "form": "raw-trained",
             "accuracy": {"mean": 30.0, "std": 2.0, "folds": [28.0, 30.0, 32.0]}, "chance": 25.0,
             "times_chance": 1.2, "verdict": "at chance"},
            {"name": "tcn", "family": "temporal conv (positions + velocities)", "form": "adaptive",
             "accuracy": {"mean": 81.5, "std": 1.5, "folds": [80.0, 81.5, 83.0]}, "chance": 25.0,
             "times_chance": 3.26, "verdict": "re-identifies"},
            {"name": "bone-lengths", "family": "logistic regression on bone lengths", "form": "adaptive",
             "accuracy": {"mean": 50.0, "std": 0.0, "folds": [50.0, 50.0, 50.0]}, "chance": 25.0,
             "times_chance": 2.0, "verdict": "above chance"},
        ],
        "linkage": [{"name": "embedding", "accuracy": {"mean": 12.5, "std": 4.1, "folds": [8.0, 13.0, 16.5]},
                     "chance": 4.17, "times_chance": 3.0, "verdict": "re-identifies"}],
        "worst": {"name": "tcn", "form": "adaptive", "accuracy": 81.5, "times_chance": 3.26},
        "subjects": [{"subject": s, "clips": 6, "risk": r, "accuracy": a}
                     for s, r, a in ((1, 0.3, 33.3), (2, 0.9, 100.0), (3, 0.5, 50.0), (4, 0.1, 0.0))],
        "clips": clips,
        "risk": {"mean": 0.5, "median": 0.48, "p90": 0.9, "max": 0.99},
        "attacker_files": {"tcn/adaptive": "attackers/tcn_adaptive.pt"},
    }


def test_reports_are_written_with_the_worst_case_and_failures_first(tmp_path, audit):
    written = write_reports(audit, tmp_path / "out")
    names = {p.name for p in written}
    assert {"audit.md", "audit.html", "risk_per_subject.png", "attackers.png", "risk_distribution.png"} <= names
    assert all(p.is_file() and p.parent == tmp_path / "out" for p in written)

    md = (tmp_path / "out" / "audit.md").read_text()
    lines = md.splitlines()
    bold = [line for line in lines if line.startswith("**")]
    assert bold[0].startswith("**Metadata: FAILED. 1 finding")
    assert "tcn (adaptive)" in bold[1] and "81.5 %" in bold[1] and "3.26×" in bold[1] and "re-identifies" in bold[1]
    assert md.index("equals the subject id") < md.index("frame count links to the source") < md.index("## Attackers")
    row = next(line for line in lines if "temporal conv" in line)
    assert row.startswith("| **tcn** |") and "**81.5 ± 1.5**" in row  # the worst row in bold
    assert next(line for line in lines if line.startswith("| sgn")).count("**") == 0
    subject_rows = [line for line in lines if re.match(r"\| [1-4] \| 6 \|", line)]
    assert [r.split("|")[1].strip() for r in subject_rows] == ["2", "3", "1", "4"]  # riskiest first
    assert "| R000006 | 2 | 0.99 | yes |" in md
    assert audit["command"] in md
    assert "![Risk per subject](risk_per_subject.png)" in md

    page = (tmp_path / "out" / "audit.html").read_text()
    assert page.index("Metadata: FAILED") < page.index("Worst case: tcn (adaptive)") < page.index("<h2>Attackers")
    assert 'class="strong"><td>tcn</td>' in page
    images = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
    assert len(images) == 3
    for data in images:
        png = base64.b64decode(data)
        assert png.startswith(PNG_MAGIC)
        assert imread(io.BytesIO(png)).ndim == 3
    assert "src=\"http" not in page and "<script" not in page  # self-contained


def test_a_clean_audit_says_passed_and_escapes_html(tmp_path, audit):
    audit["metadata"] = {"passed": True, "findings": []}
    audit["release"]["file"] = "<b>release</b>.h5"
    write_reports(audit, tmp_path)
    md = (tmp_path / "audit.md").read_text()
    assert "FAILED" not in md and md.splitlines()[2].startswith("**Worst case: tcn (adaptive)")
    assert "Passed: no field" in md
    page = (tmp_path / "audit.html").read_text()
    assert "&lt;b&gt;release&lt;/b&gt;.h5" in page and "<b>release" not in page


def test_without_attackers_only_the_metadata_is_reported(tmp_path, audit):
    for name in ("attackers", "linkage", "subjects", "clips"):
        audit[name] = []
    audit["worst"] = audit["risk"] = None
    written = write_reports(audit, tmp_path)
    assert sorted(p.name for p in written) == ["audit.html", "audit.md"]
    md = (tmp_path / "audit.md").read_text()
    assert "No motion attacker was run." in md and "equals the subject id" in md
