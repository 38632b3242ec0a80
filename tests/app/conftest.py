"""Fixtures of the Studio tests: a real window under Xvfb (pytest-xvfb), fakes for the models, leak checks.

`AA_ShareOpenGLContexts` is set here, before pytest-qt creates the QApplication, as `app.main` does.
Every test fails if it leaves a QThread running or a top-level window visible (napari's strict_qt).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import shiboken6
from PySide6.QtCore import QCoreApplication, QEvent, QSettings, Qt, QThread
from PySide6.QtWidgets import QApplication

from dtmr.io.npz_dataset import write_npz_dataset

QCoreApplication.setAttribute(Qt.ApplicationAttribute.AA_ShareOpenGLContexts)

from app.core.plausibility import ChunkScorer  # noqa: E402
from app.core.recognition import Recognition  # noqa: E402
from app.core.retargeting import Retargeting  # noqa: E402
from app.workers.gui_thread_gc import install_gui_thread_gc  # noqa: E402
from studio_fakes import (  # noqa: E402
    ACTION_NAMES,
    FakeAnonymizer,
    FakeRecognizer,
    make_clip,
    save_fake_checkpoint,
    settle,
)

#: the β of the DisentangledTMR checkpoints a release bundles (resources/models/dtmr_small_beta{β}.pt)
BUNDLED_BETAS = (0.2, 1.0)


@pytest.fixture(autouse=True, scope="package")
def garbage_collected_on_the_gui_thread(qapp):
    """As in the Studio (`app.main.application`): no worker thread ever collects a previous test's widgets.

    Automatic collection comes back after the last Studio test, for the rest of the suite.
    """
    collector = install_gui_thread_gc(qapp)
    yield
    collector.stop()


@pytest.fixture(autouse=True)
def no_leaked_threads_or_windows(request, monkeypatch):
    """Fail a test that leaves a QThread running or a top-level widget visible."""
    started: list[QThread] = []
    original = QThread.start

    def recording_start(self, *args):
        started.append(self)
        return original(self, *args)

    monkeypatch.setattr(QThread, "start", recording_start)
    yield
    app = QApplication.instance()
    if app is None:
        return
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline:
        app.processEvents()
        running = [t for t in started if shiboken6.isValid(t) and t.isRunning()]
        visible = [w for w in QApplication.topLevelWidgets() if shiboken6.isValid(w) and w.isVisible()]
        if not running and not visible:
            break
        time.sleep(0.02)
    assert not running, f"QThreads still running: {[t.objectName() for t in running]}"
    assert not visible, f"top-level widgets left open: {[type(w).__name__ for w in visible]}"


@pytest.fixture
def library_file(tmp_path) -> Path:
    """A real .npz data set of 3 subjects x 3 actions, opened through dtmr.io.sources."""
    clips = [make_clip(s, a, 40 + 4 * a) for s in range(3) for a in range(3)]
    path = tmp_path / "clips.npz"
    write_npz_dataset(path, clips, action_names=ACTION_NAMES)
    return path


@pytest.fixture
def fakes():
    """The fake model objects a studio window uses, to make them slow or inspect their calls."""

    class Fakes:
        anonymizers: dict[str, FakeAnonymizer] = {}

        def load_anonymizer(self, info, device):
            return self.anonymizers.setdefault(str(info.path), FakeAnonymizer(beta=info.beta or 0.0))

        def load_recognizer(self, info, device):
            return FakeRecognizer(info.task, 4)

    return Fakes()


@pytest.fixture
def make_studio(qtbot, tmp_path, fakes):
    """make_studio(models_dir=None, ..., attribution=None, scoring_process=False, motion_fit=None) -> a shown
    MainWindow using the fakes (`attribution`: the Privacy panel's job; `scoring_process`: plausibility scored in
    the Studio's child process, not in its worker thread; `motion_fit`: the job of "Fit k-same on this library",
    by default the Studio's child process); closed after the test.

    Without `models_dir` the models folder holds what a release bundles, as fake checkpoints: the two
    DisentangledTMR ones (β = 0.2 and β = 1), no recognizers.
    """
    from app.ui.main_window import MainWindow

    windows = []

    def make(models_dir: Path | None = None, settings_file: Path | None = None, size=(1300, 850), attribution=None,
             scoring_process: bool = False, motion_fit=None):
        if models_dir is None:
            models_dir = tmp_path / "bundled-models"
            models_dir.mkdir(exist_ok=True)
            for beta in BUNDLED_BETAS:
                save_fake_checkpoint(models_dir / f"dtmr_small_beta{beta:.1f}.pt", beta=beta)
        settings = QSettings(str(settings_file or tmp_path / "settings.ini"), QSettings.Format.IniFormat)
        window = MainWindow(
            settings,
            retargeting=Retargeting(load=fakes.load_anonymizer),
            recognition=Recognition(load=fakes.load_recognizer),
            models_dir=models_dir,
            attribution=attribution,
            # in-process scoring unless the test is about the Studio's own child process
            plausibility=None if scoring_process else ChunkScorer(),
            motion_fit=motion_fit,
        )
        if size is not None:
            window.resize(*size)
        window.show()
        qtbot.waitExposed(window)
        windows.append(window)
        return window

    yield make
    for window in windows:
        if shiboken6.isValid(window):
            window.close()
            window.deleteLater()
    QApplication.processEvents()
    # deleteLater outside an event loop waits for one that may never come: a window still alive when the
    # QApplication is destroyed at exit crashes Qt (its GL window containers outlive their windows), so the
    # deferred deletes are delivered here, now
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)


@pytest.fixture
def release_studio(make_studio, tmp_path):
    """release_studio(attribution=None, models_dir=None) -> `make_studio`'s window with `attribution` as the
    Privacy panel's job and, by default, one fake β = 0.2 model."""

    def make(attribution=None, models_dir: Path | None = None):
        if models_dir is None:
            models_dir = tmp_path / "models"
            models_dir.mkdir(exist_ok=True)
            save_fake_checkpoint(models_dir / "dtmr_small_beta0.2.pt", beta=0.2)
        return make_studio(models_dir=models_dir, attribution=attribution)

    return make


@pytest.fixture
def studio(make_studio, library_file, qtbot):
    """A Studio window on `library_file`, its first clip's three views shown."""
    from app.state.comparison import ViewKind

    window = make_studio()
    window.open_path(library_file)
    qtbot.waitUntil(lambda: ViewKind.RELEASED in window.comparison.clips, timeout=20000)
    settle(qtbot, window)
    return window
