"""`dtmr bench io` runs end to end on generated data (the real figures are in docs/io.md)."""

from __future__ import annotations

import json

from dtmr.cli import main


def test_bench_io_on_generated_data(capsys, tmp_path):
    code = main(["bench", "io", "--json", "--clips", "40", "--reads", "15", "--data", str(tmp_path / "absent")])
    out, err = capsys.readouterr()
    assert code == 0, err
    results = json.loads(out)
    parse = results["skeleton_parse"]
    assert parse["source"].startswith("generated") and parse["mb_per_s"] > 0 and parse["rounds"] >= 3
    assert "absent" in results["nucla_import"]["skipped"]
    reads = results["library_reads"]
    assert reads["clips"] == 40 and reads["reads"] == 15
    assert 0 < reads["median_ms"] <= reads["p95_ms"]
    assert list(tmp_path.iterdir()) == []  # nothing left behind


def test_bench_io_text_report(capsys, tmp_path):
    assert main(["bench", "io", "--clips", "5", "--reads", "3", "--data", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert ".skeleton parsing:" in out and "N-UCLA import: skipped" in out and "single-clip read median" in out
