"""`dtmr-studio --self-test OUT.png`: open the main window on a library, anonymize the first clip with the
bundled model, render the three views, check that each shows a skeleton, write a screenshot and exit 0
(1 on any failure, with a one-line reason).

The models are the bundled ones (`resources/models/`; the settings are a fresh temporary file, so no
checkpoint the user added can stand in): without a bundled retargeting checkpoint the self-test fails.
The bundled recognizers run when present, and then the predictions must be there. Every step prints
one line, including which checkpoints produced the views.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication

from dtmr.io.atomic import atomic_write

from .core.cpu_sharing import share_cpu_with_ui
from .state.comparison import VIEWS, ViewKind
from .ui.first_start_hint import DISMISSED_KEY
from .ui.main_window import MainWindow
from .ui.screenshots import coloured_pixels, grab_window, view_pixels

TIMEOUT_S = 300.0
#: a view showing a skeleton has at least this pixel standard deviation and this many coloured pixels
MIN_VIEW_STD = 2.0
MIN_SKELETON_PIXELS = 50


class SelfTestFailure(Exception):
    pass


def wait_until(app: QApplication, condition: Callable[[], bool], timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise SelfTestFailure(f"timed out after {timeout_s:.0f} s waiting for {what}")
        app.processEvents()
        time.sleep(0.01)


def run_self_test(app: QApplication, library: Path, out_png: Path, gl_line: str, clip: int = 0,
                  timeout_s: float = TIMEOUT_S) -> int:
    """The self-test on clip number `clip` of `library`; prints its steps and returns the exit status."""
    print(f"self-test: {gl_line}", flush=True)
    if not library.exists():
        print(f"self-test: FAILED: library {library} does not exist (is the demo library bundled?)", flush=True)
        return 1
    share_cpu_with_ui()
    with tempfile.TemporaryDirectory(prefix="dtmr-studio-selftest-") as folder:
        settings = QSettings(str(Path(folder) / "settings.ini"), QSettings.Format.IniFormat)
        settings.setValue(DISMISSED_KEY, True)  # the picture shows the Studio in use, not its first-start banner
        window = MainWindow(settings)
        try:
            _run(app, window, library, clip, out_png, timeout_s)
        except SelfTestFailure as exc:
            print(f"self-test: FAILED: {exc}", flush=True)
            return 1
        finally:
            window.close()
            app.processEvents()
    print("self-test: OK", flush=True)
    return 0


def _run(app: QApplication, window: MainWindow, library: Path, clip: int, out_png: Path, timeout_s: float) -> None:
    errors: list[str] = []
    controller = window.controller
    controller.error.connect(errors.append)
    window.resize(1500, 920)
    window.show()

    def check(condition: Callable[[], bool]) -> Callable[[], bool]:
        def checked() -> bool:
            if errors:
                raise SelfTestFailure(errors[0])
            return condition()
        return checked

    wait_until(app, check(lambda: controller.catalog_scanned), timeout_s, "the scan of the model folder")
    catalog = controller.catalog
    if not catalog.retargeters:
        raise SelfTestFailure(f"no retargeting checkpoint in {controller.models_dir} (a release bundles the "
                              "trained DisentangledTMR checkpoints there)")
    print(f"self-test: models in {controller.models_dir}: {len(catalog.retargeters)} retargeting, recognizers: "
          f"{', '.join(sorted(catalog.recognizers)) or 'none (no predictions)'}", flush=True)
    print(f"self-test: opening {library}", flush=True)
    window.open_path(library)
    wait_until(app, check(lambda: controller.library is not None), timeout_s, "the library")
    if not 0 <= clip < len(controller.library.source):
        raise SelfTestFailure(f"{library} has no clip number {clip} (it holds {len(controller.library.source)})")
    window.library_panel.select_clip(clip)
    shown = check(lambda: window.selection.source_index == clip and ViewKind.RELEASED in window.comparison.clips
                  and not controller.busy)
    wait_until(app, shown, timeout_s, "the model and the recognizers")
    app.processEvents()
    if errors:
        raise SelfTestFailure(errors[0])
    source = window.comparison.clips[ViewKind.SOURCE]
    reference = window.comparison.reference
    print(f"self-test: {len(controller.library.source)} clips; source {source.name}, reference {reference.name}",
          flush=True)
    print(f"self-test: model: {window.comparison.model_note}", flush=True)
    recognition = window.comparison.recognition
    tasks = sorted(recognition.tasks) if recognition is not None else []
    if tasks != sorted(catalog.recognizers):
        raise SelfTestFailure(f"predictions for {tasks or 'nothing'}, expected {sorted(catalog.recognizers)}")
    print(f"self-test: predictions: {', '.join(tasks) if tasks else 'none (no recognizer bundled)'}", flush=True)
    window.clock.seek(window.comparison.length // 2)
    window.coalescer.flush()
    app.processEvents()
    for kind in VIEWS:
        pixels = view_pixels(window.views.views[kind])
        spread = float(pixels[..., :3].std())
        bones = coloured_pixels(pixels)
        print(f"self-test: {kind.value} view {pixels.shape[1]}x{pixels.shape[0]}, pixel std {spread:.1f}, "
              f"{bones} skeleton pixels", flush=True)
        if spread < MIN_VIEW_STD or bones < MIN_SKELETON_PIXELS:
            raise SelfTestFailure(f"the {kind.value} view shows no skeleton (pixel std {spread:.2f}, "
                                  f"{bones} coloured pixels)")
    image = grab_window(window, list(window.views.views.values()))
    out_png = Path(out_png)
    with atomic_write(out_png, suffix=".png") as tmp:
        if not image.save(str(tmp), "PNG"):
            raise SelfTestFailure(f"cannot write {out_png}")
    print(f"self-test: wrote {out_png} ({image.width()}x{image.height()})", flush=True)
    if not np.isfinite(window.comparison.clips[ViewKind.RELEASED].joints).any():
        raise SelfTestFailure("the released clip has no finite joint")
