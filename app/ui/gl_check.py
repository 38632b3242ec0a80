"""Start-up OpenGL check: a clear dialog naming what to install, instead of a crash in the first view.

The probe creates an OpenGL context on an offscreen surface and reads its version; pyqtgraph's GL items
need OpenGL 2.1 or newer. It fails cleanly when PyOpenGL or libGL is missing (`import OpenGL.GL` raises),
when the platform has no OpenGL (e.g. `QT_QPA_PLATFORM=offscreen`), or when the driver is too old.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtGui import QOffscreenSurface, QOpenGLContext
from PySide6.QtWidgets import QMessageBox, QWidget

MIN_VERSION = (2, 1)
INSTALL_HINT = (
    "DTMR Studio draws its 3-D views with OpenGL 2.1 or newer.\n\n"
    "• Debian/Ubuntu: sudo apt install libgl1 libglx-mesa0 libegl1 (Mesa drivers), or your GPU vendor's driver.\n"
    "• Python: pip install PyOpenGL (it is a dependency of dtmr-studio).\n"
    "• Remote or headless machine: run under a virtual X server (xvfb-run dtmr-studio), or set "
    "LIBGL_ALWAYS_SOFTWARE=1 to use Mesa's software renderer.\n\n"
    "Videos can be exported without OpenGL: dtmr export --help."
)


@dataclass(frozen=True)
class GlReport:
    ok: bool
    version: tuple[int, int] | None = None
    renderer: str = ""
    problem: str = ""

    @property
    def message(self) -> str:
        return f"OpenGL is not usable: {self.problem}\n\n{INSTALL_HINT}"


def probe_opengl() -> GlReport:
    """Needs a QGuiApplication. Never raises: a failure is described in the report."""
    try:
        from OpenGL import GL
    except Exception as exc:  # ImportError, or OSError/NullFunctionError when libGL is missing
        return GlReport(False, problem=f"PyOpenGL cannot load the OpenGL library ({type(exc).__name__}: {exc})")
    context = QOpenGLContext()
    if not context.create():
        return GlReport(False, problem="no OpenGL context can be created on this display")
    surface = QOffscreenSurface()
    surface.setFormat(context.format())
    surface.create()
    if not surface.isValid() or not context.makeCurrent(surface):
        return GlReport(False, problem="the OpenGL context cannot be made current")
    try:
        fmt = context.format()
        version = (fmt.majorVersion(), fmt.minorVersion())
        raw = GL.glGetString(GL.GL_RENDERER)
        renderer = raw.decode(errors="replace") if isinstance(raw, bytes) else str(raw or "")
    except Exception as exc:
        return GlReport(False, problem=f"querying the OpenGL driver failed ({type(exc).__name__}: {exc})")
    finally:
        context.doneCurrent()
    if context.isOpenGLES():
        return GlReport(True, version, renderer)
    if version < MIN_VERSION:
        found = ".".join(map(str, version))
        return GlReport(False, version, renderer, f"the driver offers OpenGL {found} ({renderer}), 2.1 is needed")
    return GlReport(True, version, renderer)


def gl_error_box(report: GlReport, parent: QWidget | None = None) -> QMessageBox:
    """The dialog shown instead of the main window (not yet shown: call `exec()` or `open()`)."""
    box = QMessageBox(QMessageBox.Icon.Critical, "DTMR Studio: OpenGL unavailable", report.message,
                      QMessageBox.StandardButton.Close, parent)
    return box
