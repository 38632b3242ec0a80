"""`dtmr-studio --self-test` and the Studio benchmark (`python -m app.bench`, which `dtmr bench studio` hands
over to): they run the bundled model, or fail with one clear line.

The failures and a self-test on a tiny checkpoint run in this process (`app.main.main`, as the
`dtmr-studio` entry point calls it); the real self-test on the bundled resources and the benchmark run as
separate processes, as a user runs them.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from app import bench
from app.core.checkpoints import build_catalog
from app.main import main as studio_main
from dtmr.cli import bench_cmd, build_parser
from dtmr.cli import main as dtmr_main
from dtmr.data import generate_clips
from dtmr.io.npz_dataset import write_npz_dataset
from studio_fakes import save_tiny_dtmr_checkpoint

REPO = Path(__file__).resolve().parents[2]
BUNDLED = REPO / "resources"


@pytest.fixture(autouse=True)
def restore_cpu_sharing():
    """The in-process runs call `share_cpu_with_ui`; later tests get the session's switch interval back."""
    interval = sys.getswitchinterval()
    yield
    sys.setswitchinterval(interval)


@pytest.fixture
def library(tmp_path) -> Path:
    path = tmp_path / "demo.npz"
    write_npz_dataset(path, generate_clips(subjects=2, actions=2, repetitions=1, seed=3))
    return path


def resources(tmp_path: Path, *betas: float) -> Path:
    """A resources folder whose models/ holds tiny DisentangledTMR checkpoints of the given β (or nothing)."""
    folder = tmp_path / "resources"
    (folder / "models").mkdir(parents=True)
    for beta in betas:
        save_tiny_dtmr_checkpoint(folder / "models" / f"dtmr_tiny_beta{beta:.1f}.pt", beta=beta)
    return folder


def failure_lines(stdout: str) -> list[str]:
    return [line for line in stdout.splitlines() if "FAILED" in line]


def test_self_test_fails_without_a_library(qapp, tmp_path, capsys):
    assert studio_main(["--self-test", str(tmp_path / "x.png"), str(tmp_path / "missing.h5")]) == 1
    failed = failure_lines(capsys.readouterr().out)
    assert len(failed) == 1 and "does not exist" in failed[0]
    assert not (tmp_path / "x.png").exists()


def test_self_test_fails_without_a_bundled_model(qapp, tmp_path, library, monkeypatch, capsys):
    folder = resources(tmp_path)  # models/ is empty
    monkeypatch.setenv("DTMR_RESOURCES", str(folder))
    assert studio_main(["--self-test", str(tmp_path / "x.png"), str(library)]) == 1
    out = capsys.readouterr().out
    failed = failure_lines(out)
    assert len(failed) == 1 and f"no retargeting checkpoint in {folder / 'models'}" in failed[0]
    assert "opening" not in out and not (tmp_path / "x.png").exists()  # it stops before opening the library


def test_self_test_anonymizes_with_the_bundled_checkpoints(qapp, tmp_path, library, monkeypatch, capsys):
    monkeypatch.setenv("DTMR_RESOURCES", str(resources(tmp_path, 0.2, 1.0)))
    out_png = tmp_path / "shot.png"
    assert studio_main(["--self-test", str(out_png), str(library)]) == 0
    out = capsys.readouterr().out
    assert ("self-test: model: DisentangledTMR β=0.2 small (dtmr_tiny_beta0.2.pt); retargeted view: "
            "DisentangledTMR β=1 small (dtmr_tiny_beta1.0.pt)") in out
    assert "self-test: predictions: none (no recognizer bundled)" in out and out.rstrip().endswith("self-test: OK")
    for view in ("source", "retargeted", "released"):
        assert f"self-test: {view} view" in out
    with Image.open(out_png) as image:
        assert image.size[0] > 800 and image.size[1] > 500


def test_real_self_test_on_the_bundled_resources(tmp_path):
    catalog = build_catalog([BUNDLED / "models"], [])
    if not catalog.retargeters:
        pytest.skip(f"{BUNDLED / 'models'} holds no retargeting (DisentangledTMR) checkpoint")
    if not (BUNDLED / "demo" / "demo_library.h5").is_file():
        pytest.skip("the demo library resources/demo/demo_library.h5 is not built")
    env = {k: v for k, v in os.environ.items() if k != "DTMR_RESOURCES"}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    out_png = tmp_path / "shot.png"
    done = subprocess.run([sys.executable, "-m", "app", "--self-test", str(out_png)], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "demo_library.h5" in done.stdout and "self-test: OK" in done.stdout
    released = next(r for r in catalog.retargeters if r.beta is not None and abs(r.beta - 0.2) < 1e-6)
    retargeted = catalog.full_model(released)
    assert f"self-test: model: {released.label}; retargeted view: {retargeted.label}" in done.stdout
    tasks = ", ".join(sorted(catalog.recognizers)) or "none (no recognizer bundled)"
    assert f"self-test: predictions: {tasks}" in done.stdout
    assert out_png.stat().st_size > 10_000


def test_bench_fails_clearly_without_a_bundled_model(qapp, tmp_path, monkeypatch, capsys):
    folder = resources(tmp_path)
    monkeypatch.setenv("DTMR_RESOURCES", str(folder))
    assert bench.main(["--json", "--frames", "5", "--seconds", "0.1"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.strip().splitlines() == [
        (f"python -m app.bench: no retargeting checkpoint in {folder / 'models'}: the benchmark runs the bundled "
         "model (add dtmr_*.pt there, or set DTMR_RESOURCES)")]


def test_bench_without_a_display_reruns_itself_under_xvfb_run_or_says_it_needs_one(monkeypatch, capsys):
    argv = ["--json", "--frames", "5"]
    monkeypatch.setattr(bench.shutil, "which", lambda name: f"/usr/bin/{name}")
    assert bench.headless_command(argv, {"DISPLAY": ":7"}) is None
    assert bench.headless_command(argv, {}) == ["/usr/bin/xvfb-run", "-a", "-s", bench.XVFB_SCREEN, sys.executable,
                                                "-m", "app.bench", *argv]
    monkeypatch.setattr(bench.shutil, "which", lambda name: None)
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    assert bench.main(argv) == 1
    assert capsys.readouterr().err.strip().splitlines() == [
        "python -m app.bench: the benchmark needs a display, or xvfb-run to make one (apt install xvfb)"]


def test_dtmr_bench_studio_hands_its_options_to_the_app_or_says_the_studio_is_missing(monkeypatch, tmp_path, capsys):
    args = build_parser().parse_args(["bench", "studio", "--json", "--seconds", "0.5"])
    assert bench_cmd.studio_arguments(args) == ["--json", "--seconds", "0.5"]
    monkeypatch.setattr(bench_cmd, "PACKAGES", tmp_path)  # a library installed without the app
    assert dtmr_main(["bench", "studio"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        f"dtmr: error: dtmr bench studio measures the Studio, and the Studio (package app) is not installed beside "
        f"the library in {tmp_path}"]


def test_bench_studio_json_with_the_bundled_model(tmp_path):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    env["DTMR_RESOURCES"] = str(resources(tmp_path, 0.2, 1.0))
    done = subprocess.run([sys.executable, "-m", "dtmr", "bench", "studio", "--json", "--frames", "20", "--seconds", "1",
                           "--open-clips", "100"],
                          env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["joints"] == 25 and result["views"] == 3 and result["frames_timed"] == 20
    assert 0 < result["frame_update_ms"] < 1000 and 0 <= result["max_stall_ms"] < 5000
    assert result["open_clips"] == 100 and 0 <= result["open_max_stall_ms"] < 5000
    assert result["inference_runs"] >= 2 and result["model"].startswith("DisentangledTMR β=0.2 small (dtmr_tiny_beta0.2.pt)")


def test_docs_images_writes_the_window_and_the_exported_comparison(qapp, tmp_path, library, monkeypatch, capsys):
    from app.docs_images import main as docs_images

    monkeypatch.setenv("DTMR_RESOURCES", str(resources(tmp_path, 0.2, 1.0)))
    out = tmp_path / "images"
    assert docs_images([str(out), "--library", str(library), "--clip", "S002A001R00V01"]) == 0
    printed = capsys.readouterr().out
    assert "source S002A001R00V01" in printed and "self-test: OK" in printed
    with Image.open(out / "studio.png") as image:
        assert image.size == (1500, 920)
    with Image.open(out / "comparison.gif") as gif:
        assert gif.size == (960, 320) and gif.n_frames > 10
