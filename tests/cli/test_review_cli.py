"""`dtmr review export|merge` through `dtmr.cli.main`."""

from __future__ import annotations

import json

from dtmr.cli import main
from dtmr.review import (
    ClipReview,
    LibraryFingerprint,
    Review,
    sidecar_path,
    write_review,
)

LIB = LibraryFingerprint.of("clips.h5", ["a", "b", "c"])


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def write(tmp_path, annotator, verdicts):
    path = sidecar_path(tmp_path / "clips.h5", annotator)
    write_review(path, Review(LIB, annotator, {k: ClipReview(v, time="t") for k, v in verdicts.items()}))
    return path


def test_export_reads_every_sidecar_beside_the_library(tmp_path, capsys):
    write(tmp_path, "ada", {"a": "plausible", "b": "implausible"})
    write(tmp_path, "bob", {"a": "unsure"})
    code, out, _ = run(capsys, "review", "export", tmp_path / "clips.h5", "--format", "csv", "-o", tmp_path / "r.csv")
    assert code == 0 and "3 reviewed clips from 2 annotator(s)" in out
    lines = (tmp_path / "r.csv").read_text().splitlines()
    assert lines[0].startswith("library,annotator,clip,verdict") and len(lines) == 4
    code, _, _ = run(capsys, "review", "export", tmp_path / "clips.h5", "-o", tmp_path / "r.json")
    assert code == 0 and len(json.loads((tmp_path / "r.json").read_text())) == 3


def test_merge_prints_kappa_and_writes_the_merge(tmp_path, capsys):
    a = write(tmp_path, "ada", {"a": "plausible", "b": "implausible", "c": "plausible"})
    b = write(tmp_path, "bob", {"a": "plausible", "b": "implausible", "c": "implausible"})
    code, out, _ = run(capsys, "review", "merge", a, b, "-o", tmp_path / "merged.json")
    assert code == 0
    assert "Cohen's kappa ada vs bob: 0.400 on 3 clips both reviewed" in out
    merged = json.loads((tmp_path / "merged.json").read_text())
    assert merged["agreement"]["pairs"][0]["cohen_kappa"] == 0.4 or abs(merged["agreement"]["pairs"][0]["cohen_kappa"] - 0.4) < 1e-9
    assert merged["clips"]["c"] == {"ada": {"verdict": "plausible", "flags": [], "note": "", "tags": [], "time": "t"},
                                    "bob": {"verdict": "implausible", "flags": [], "note": "", "tags": [], "time": "t"}}


def test_errors_are_one_line(tmp_path, capsys):
    bad = tmp_path / "clips.h5.review.x.json"
    bad.write_text("{not json")
    code, _, err = run(capsys, "review", "merge", bad, bad)
    assert code == 2 and err.startswith(f"dtmr: error: {bad}:1: damaged review sidecar") and err.count("\n") == 1
    (tmp_path / "lonely.h5").write_bytes(b"")
    code, _, err = run(capsys, "review", "export", tmp_path / "lonely.h5", "-o", tmp_path / "o.csv")
    assert code == 2 and "no review sidecar beside it" in err
