"""`dtmr-studio [PATH]` opens PATH (or the bundled demo library); `--self-test OUT.png` checks the install.

Order matters: `Qt.AA_ShareOpenGLContexts` is set before the QApplication exists (otherwise the second
GL view draws nothing, pyqtgraph #2618), and OpenGL is probed before any GL widget is created, so a
missing or too old driver gets a dialog naming what to install instead of a crash.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication

from dtmr import __version__
from dtmr.resources import DEMO_LIBRARY, resource_path

from .core.cpu_sharing import share_cpu_with_ui
from .workers.gui_thread_gc import install_gui_thread_gc

EXIT_NO_OPENGL = 3


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dtmr-studio", description="DTMR Studio: compare, inspect and export "
                                     "privacy-preserving skeleton retargeting.")
    parser.add_argument("path", nargs="?", type=Path, metavar="PATH",
                        help=".skeleton file, folder of them, .npz data set or .h5 library (default: the demo library)")
    parser.add_argument("--self-test", type=Path, metavar="OUT.png",
                        help="open the library, anonymize its first clip, render the three views, write a "
                             "screenshot and exit (0 = OK)")
    parser.add_argument("--version", action="version", version=f"dtmr-studio {__version__}")
    return parser


def application() -> QApplication:
    """The QApplication, created with shared OpenGL contexts (more than one GL view per window)."""
    app = QApplication.instance()
    if app is None:
        QCoreApplication.setAttribute(Qt.ApplicationAttribute.AA_ShareOpenGLContexts)
        app = QApplication(sys.argv[:1])
    install_gui_thread_gc(app)  # Qt objects in garbage cycles die on the GUI thread, never on a worker's
    app.setApplicationName("DTMR Studio")
    app.setOrganizationName("DTMR")
    app.setDesktopFileName("dtmr-studio")  # matches packaging/dtmr-studio.desktop (taskbar icon on Wayland)
    icon = resource_path("icons", "dtmr-studio.png")
    if icon.is_file():
        app.setWindowIcon(QIcon(str(icon)))
    return app


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    app = application()
    from .ui.gl_check import gl_error_box, probe_opengl

    report = probe_opengl()
    if not report.ok:
        print(f"dtmr-studio: {report.message}", file=sys.stderr)
        if args.self_test is None:
            gl_error_box(report).exec()
        return EXIT_NO_OPENGL
    library = args.path or resource_path(*DEMO_LIBRARY)
    gl_line = f"OpenGL {'.'.join(map(str, report.version or ()))} ({report.renderer})"
    if args.self_test is not None:
        from .self_test import run_self_test

        return run_self_test(app, library, args.self_test, gl_line)

    share_cpu_with_ui()
    from .ui.main_window import MainWindow
    from .ui.settings_store import default_qsettings

    window = MainWindow(default_qsettings())
    install_gui_thread_gc(app).collect_full()  # start-up's objects frozen before anything is on screen
    window.show()
    if library.exists():
        window.open_path(library)
    else:
        window.show_error(f"{library} does not exist. Open a .skeleton file or folder, an .npz data set or an "
                          ".h5 library with File ▸ Open.")
    return app.exec()


if __name__ == "__main__":
    sys.exit(main())
