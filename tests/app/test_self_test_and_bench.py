"""`dtmr-studio --self-test` and `dtmr bench studio --json` end to end, as separate processes."""

import json
import os
import subprocess
import sys
from pathlib import Path

from PIL import Image

from dtmr.data import generate_clips
from dtmr.io.npz_dataset import write_npz_dataset

REPO = Path(__file__).resolve().parents[2]


def environment(tmp_path):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    env["DTMR_RESOURCES"] = str(tmp_path / "resources")  # nothing bundled: the fallback must say so
    return env


def test_self_test_writes_a_screenshot_and_says_it_uses_the_fallback(tmp_path):
    library = tmp_path / "demo.npz"
    write_npz_dataset(library, generate_clips(subjects=2, actions=2, repetitions=1, seed=3))
    out = tmp_path / "shot.png"
    done = subprocess.run([sys.executable, "-m", "app", "--self-test", str(out), str(library)],
                          env=environment(tmp_path), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "DEVELOPMENT FALLBACK" in done.stdout and "self-test: OK" in done.stdout
    for view in ("source", "retargeted", "released"):
        assert f"self-test: {view} view" in done.stdout
    with Image.open(out) as image:
        assert image.size[0] > 800 and image.size[1] > 500


def test_self_test_fails_without_a_library(tmp_path):
    done = subprocess.run([sys.executable, "-m", "app", "--self-test", str(tmp_path / "x.png")],
                          env=environment(tmp_path), capture_output=True, text=True, timeout=300)
    assert done.returncode == 1 and "FAILED" in done.stdout and "does not exist" in done.stdout
    assert not (tmp_path / "x.png").exists()


def test_bench_studio_json(tmp_path):
    done = subprocess.run([sys.executable, "-m", "dtmr", "bench", "studio", "--json", "--frames", "20", "--seconds", "1"],
                          env=environment(tmp_path), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["joints"] == 25 and result["views"] == 3 and result["frames_timed"] == 20
    assert 0 < result["frame_update_ms"] < 1000 and 0 <= result["max_stall_ms"] < 5000
    assert result["inference_runs"] >= 2 and "FALLBACK" in result["model"]
