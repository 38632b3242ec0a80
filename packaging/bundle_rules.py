"""What the frozen build (packaging/dtmr_studio.spec) takes in and leaves out.

Kept apart from the .spec so that the rules can be unit-tested without running PyInstaller
(tests/packaging/test_bundle_rules.py). Nothing here imports PyInstaller.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

VARIANT_VARIABLE = "DTMR_BUILD_VARIANT"
VARIANTS = ("cpu", "gpu")

#: folder of the build under dist/ and the two executables in it
APP_NAME = "dtmr-studio"
CLI_NAME = "dtmr"
#: the resource folders the build carries (dtmr.resources finds them in `<_internal>/resources`)
RESOURCE_FOLDERS = ("demo", "models", "icons")

#: imported through importlib / pkgutil or by name at run time, so PyInstaller's analysis misses them
GL_PACKAGES = ("pyqtgraph.opengl", "OpenGL.platform", "OpenGL.arrays")
#: pyqtgraph imports `f"{QT_LIB}.QtOpenGL"` with importlib
QT_HIDDEN = ("PySide6.QtOpenGL", "PySide6.QtOpenGLWidgets")
#: every module of these is collected: dtmr/cli/*_cmd.py and dtmr/bench/*.py are found with pkgutil,
#: and much of dtmr and app is imported inside functions
OWN_PACKAGES = ("dtmr", "app")

#: test and development tools, and GUI toolkits we do not use
DEV_EXCLUDES = (
    "tests", "pytest", "_pytest", "pytestqt", "pytest_xvfb", "pyvirtualdisplay", "hypothesis", "IPython",
    "jupyter_client", "ipykernel", "notebook", "sphinx", "ruff", "PyInstaller", "build", "setuptools", "pip",
    "tkinter", "_tkinter", "matplotlib.backends._backend_tk", "matplotlib.backends.backend_tkagg",
    "PyQt5", "PyQt6", "PySide2",
)
#: Qt modules the Studio never imports (it needs QtCore, QtGui, QtWidgets, QtOpenGL, QtOpenGLWidgets)
QT_EXCLUDES = tuple(f"PySide6.{name}" for name in (
    "QtWebEngine", "QtWebEngineCore", "QtWebEngineWidgets", "QtWebEngineQuick", "QtWebChannel", "QtWebSockets",
    "QtWebView", "Qt3DCore", "Qt3DRender", "Qt3DInput", "Qt3DLogic", "Qt3DAnimation", "Qt3DExtras", "QtQml",
    "QtQuick", "QtQuick3D", "QtQuickWidgets", "QtQuickControls2", "QtQuickTest", "QtMultimedia",
    "QtMultimediaWidgets", "QtSpatialAudio", "QtTextToSpeech", "QtCharts", "QtDataVisualization", "QtGraphs",
    "QtBluetooth", "QtNfc", "QtPositioning", "QtLocation", "QtSensors", "QtSerialPort", "QtSerialBus",
    "QtRemoteObjects", "QtScxml", "QtStateMachine", "QtPdf", "QtPdfWidgets", "QtDesigner", "QtHelp",
    "QtUiTools", "QtSql", "QtTest", "QtSvg", "QtSvgWidgets", "QtNetworkAuth", "QtHttpServer", "QtXml",
    "QtConcurrent", "QtDBus", "QtPrintSupport", "QtAxContainer",
))
#: Python packages that only exist to drive NVIDIA GPUs; the CPU variant must not import them
CUDA_PACKAGES = ("nvidia", "triton", "cupy", "pycuda")

#: shared libraries of the CUDA stack (NVIDIA's runtime wheels, torch's CUDA parts such as libtorch_cuda.so),
#: by file name: the name (after "lib" and any "prefix_") starts with one of these words, so that e.g.
#: ICU's libicudata is not taken for CUDA
_CUDA_LIBRARY = re.compile(
    r"^(lib)?([a-z0-9]+[_-])*(cuda|cudart|cudnn|nccl|cublas|cublaslt|cufft|cufftw|curand|cusolver|cusolvermg|"
    r"cusparse|cusparselt|nvrtc|nvjitlink|nvtoolsext|nvtx3?|cupti|cufile|nvshmem|nvperf_host|nvperf_target|"
    r"nvblas)([_.-]|\d)"
)
_SHARED_LIBRARY = re.compile(r"\.(so(\.\d+)*|dll)$")


def build_variant(environ: Mapping[str, str] = os.environ) -> str:
    """`cpu` (the default) or `gpu`, from DTMR_BUILD_VARIANT; anything else is an error naming the choices."""
    variant = environ.get(VARIANT_VARIABLE, "cpu").strip().lower() or "cpu"
    if variant not in VARIANTS:
        raise SystemExit(f"{VARIANT_VARIABLE}={environ[VARIANT_VARIABLE]!r}: choose one of {', '.join(VARIANTS)}")
    return variant


def dist_folder_name(variant: str) -> str:
    return f"{APP_NAME}-{variant}"


def excludes(variant: str) -> list[str]:
    extra = CUDA_PACKAGES if variant == "cpu" else ()
    return [*DEV_EXCLUDES, *QT_EXCLUDES, *extra]


def is_cuda_file(path: str | Path) -> bool:
    """A CUDA/NVIDIA shared library, or any file inside an `nvidia` package folder (NVIDIA's runtime wheels)."""
    parts = Path(path).parts
    if any(part.lower() == "nvidia" for part in parts[:-1]):
        return True
    name = parts[-1].lower() if parts else ""
    return bool(_SHARED_LIBRARY.search(name) and _CUDA_LIBRARY.search(name))


def is_torch_test_file(dest: str | Path) -> bool:
    """torch's C++ test programs and test-only libraries, which its wheel ships and PyInstaller's torch hook
    collects as binaries (about 120 MB): torch/test/*, torch/bin/* but torch_shm_manager (used by
    torch.multiprocessing), and torch/lib/lib*test*.so."""
    parts = Path(dest).parts
    if parts[:2] == ("torch", "test"):
        return True
    if parts[:2] == ("torch", "bin"):
        return parts[-1] != "torch_shm_manager"
    return parts[:2] == ("torch", "lib") and "test" in parts[-1] and bool(_SHARED_LIBRARY.search(parts[-1]))


#: Qt's GTK 3 platform theme plugin and the GTK-stack libraries that nothing else in the build links to (checked
#: with ldd on the CPU build). The plugin's libgtk-3 is never bundled, so on a desktop that has one it would load
#: the system's GTK against our copies of cairo/pango; without the plugin Qt uses its own theme (or the
#: xdg-desktop-portal one, which stays).
_GTK_THEME_LIBRARY = re.compile(
    r"^lib(qgtk3|atk-1\.0|cairo|cairo-gobject|pango-1\.0|pangocairo-1\.0|pangoft2-1\.0|gdk_pixbuf-2\.0|pixman-1|"
    r"thai|datrie|fribidi|graphite2|harfbuzz)\.so"
)


def is_gtk_theme_file(dest: str | Path) -> bool:
    """The GTK 3 platform theme plugin or a library only it needs (pillow's own libharfbuzz-<hash> stays)."""
    return bool(_GTK_THEME_LIBRARY.match(Path(dest).name))


def split_toc(toc: Iterable[tuple], unwanted: Callable[[str], bool]) -> tuple[list[tuple], list[tuple]]:
    """A PyInstaller TOC of (dest name, source, type) split into (entries kept, entries dropped); an entry is
    dropped when `unwanted` holds for its destination or for its source file's name."""
    kept, dropped = [], []
    for entry in toc:
        source_name = Path(entry[1]).name if entry[1] else ""
        (dropped if unwanted(entry[0]) or unwanted(source_name) else kept).append(entry)
    return kept, dropped


def cuda_files(folder: Path) -> list[Path]:
    """The CUDA files under a built folder, relative to it (empty for a correct CPU build)."""
    files = (path.relative_to(folder) for path in folder.rglob("*") if path.is_file())
    return sorted(path for path in files if is_cuda_file(path))


def resource_datas(root: Path) -> list[tuple[str, str]]:
    """(source file, destination folder) for every bundled resource file, as PyInstaller's `datas` wants:
    resources/<folder>/... lands in <_internal>/resources/<folder>/... . Listed file by file because a
    glob that matches nothing (no model trained yet) is an error for PyInstaller; hidden files are skipped."""
    datas = []
    for folder in RESOURCE_FOLDERS:
        base = root / "resources" / folder
        for path in sorted(base.rglob("*")) if base.is_dir() else ():
            relative = path.relative_to(root)
            if path.is_file() and not any(part.startswith(".") for part in relative.parts):
                datas.append((str(path), str(relative.parent)))
    return datas

