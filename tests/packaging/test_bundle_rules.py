"""The rules of the frozen build (packaging/bundle_rules.py), checked without running PyInstaller."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, REPO / "packaging" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


rules = _load("bundle_rules")


def test_variant_defaults_to_cpu_and_rejects_unknown_names():
    assert rules.build_variant({}) == "cpu"
    assert rules.build_variant({"DTMR_BUILD_VARIANT": " GPU "}) == "gpu"
    with pytest.raises(SystemExit, match="cuda.*choose one of cpu, gpu"):
        rules.build_variant({"DTMR_BUILD_VARIANT": "cuda"})
    assert rules.dist_folder_name("gpu") == "dtmr-studio-gpu"


def test_only_the_cpu_variant_excludes_the_cuda_packages():
    cpu, gpu = set(rules.excludes("cpu")), set(rules.excludes("gpu"))
    assert {"nvidia", "triton"} <= cpu
    assert not {"nvidia", "triton"} & gpu
    assert {"pytest", "hypothesis", "tkinter", "IPython", "PySide6.QtWebEngineCore", "PySide6.QtQml"} <= gpu


@pytest.mark.parametrize("name", [
    "libtorch_cuda.so", "libc10_cuda.so", "libcudart.so.12", "libcudnn_ops.so.9", "libnccl.so.2",
    "libcublasLt.so.12", "libnvrtc-builtins.so.12.4", "libcaffe2_nvrtc.so", "libnvToolsExt.so.1",
    "libnvJitLink.so.12", "libcuda.so.1", "torch/lib/libcupti.so.12", "cudnn64_9.dll",
    "nvidia/cudnn/lib/libcudnn.so.9", "nvidia/cuda_runtime/include/cuda.h",
])
def test_cuda_files_are_recognised(name):
    assert rules.is_cuda_file(name)


@pytest.mark.parametrize("name", [
    "libicudata.so.73", "libicuuc.so.73", "libtorch_cpu.so", "libgomp.so.1", "libQt6Core.so.6",
    "torch/cuda/__init__.py", "torch/include/ATen/cuda/CUDAContext.h", "libcudart_notes.txt",
])
def test_other_files_are_not_taken_for_cuda(name):
    assert not rules.is_cuda_file(name)


def test_torch_test_programs_are_recognised_but_the_shared_memory_manager_stays():
    assert rules.is_torch_test_file("torch/test/Dict_test")
    assert rules.is_torch_test_file("torch/bin/test_api")
    assert rules.is_torch_test_file("torch/lib/libtorchbind_test.so")
    assert not rules.is_torch_test_file("torch/bin/torch_shm_manager")
    assert not rules.is_torch_test_file("torch/lib/libtorch_cpu.so")
    assert not rules.is_torch_test_file("torch/testing/_comparison.py")


def test_the_gtk_theme_plugin_and_its_own_libraries_are_recognised():
    for name in ("PySide6/Qt/plugins/platformthemes/libqgtk3.so", "libcairo.so.2", "libpango-1.0.so.0",
                 "libgdk_pixbuf-2.0.so.0", "libharfbuzz.so.0"):
        assert rules.is_gtk_theme_file(name), name
    for name in ("PySide6/Qt/plugins/platformthemes/libqxdgdesktopportal.so", "libharfbuzz-fb49c9fc.so.0.61450.0",
                 "libglib-2.0.so.0", "libfreetype.so.6", "libQt6Gui.so.6"):
        assert not rules.is_gtk_theme_file(name), name


def test_split_toc_checks_the_destination_and_the_source_file_name():
    toc = [
        ("torch/lib/libtorch_cpu.so", "/venv/torch/lib/libtorch_cpu.so", "BINARY"),
        ("libcudart.so.12", "/venv/nvidia/cuda_runtime/lib/libcudart.so.12", "BINARY"),
        ("renamed.so", "/venv/torch/lib/libtorch_cuda.so", "BINARY"),
        ("PySide6/Qt/lib/libicudata.so.73", "/venv/PySide6/Qt/lib/libicudata.so.73", "BINARY"),
    ]
    kept, dropped = rules.split_toc(toc, rules.is_cuda_file)
    assert [e[0] for e in kept] == ["torch/lib/libtorch_cpu.so", "PySide6/Qt/lib/libicudata.so.73"]
    assert [e[0] for e in dropped] == ["libcudart.so.12", "renamed.so"]


def test_cuda_files_scans_a_built_folder(tmp_path):
    for name in ("_internal/torch/lib/libtorch_cpu.so", "_internal/libicudata.so.73", "dtmr-studio"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(b"x")
    assert rules.cuda_files(tmp_path) == []
    (tmp_path / "_internal/nvidia/cublas/lib").mkdir(parents=True)
    (tmp_path / "_internal/nvidia/cublas/lib/libcublas.so.12").write_bytes(b"x")
    assert rules.cuda_files(tmp_path) == [Path("_internal/nvidia/cublas/lib/libcublas.so.12")]


def test_resource_datas_lists_every_bundled_file_but_hidden_ones(tmp_path):
    for name in ("resources/demo/demo_library.h5", "resources/icons/dtmr-studio.svg",
                 "resources/models/sub/action.pt", "resources/models/.gitkeep", "resources/other/x.txt"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(b"x")
    assert rules.resource_datas(tmp_path) == [
        (str(tmp_path / "resources/demo/demo_library.h5"), "resources/demo"),
        (str(tmp_path / "resources/models/sub/action.pt"), "resources/models/sub"),
        (str(tmp_path / "resources/icons/dtmr-studio.svg"), "resources/icons"),
    ]
    assert rules.resource_datas(tmp_path / "missing") == []


def test_no_qt_module_the_code_imports_is_excluded():
    """A new `from PySide6.QtX import ...` in dtmr/ or app/ must not be cut from the frozen build."""
    used = set()
    for path in [*(REPO / "app").rglob("*.py"), *(REPO / "dtmr").rglob("*.py")]:
        used |= set(re.findall(r"\bPySide6\.(Qt\w+)", path.read_text()))
    assert {"QtCore", "QtGui", "QtWidgets"} <= used
    excluded = {name.removeprefix("PySide6.") for name in rules.QT_EXCLUDES}
    assert not used & excluded


def test_the_hidden_import_packages_exist():
    for name in (*rules.GL_PACKAGES, *rules.QT_HIDDEN, *rules.OWN_PACKAGES):
        assert importlib.util.find_spec(name) is not None, name
