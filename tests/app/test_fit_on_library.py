""""Fit k-same on this library" (issue 42, item 4): one click fits k-same on the open library in a worker, writes
it into the user's models folder under a new name, adds it to the model list and selects it, so the views show it."""

from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt

from app.core.motion_fit import MotionFitJob
from app.state.comparison import ViewKind
from app.ui.model_panel import PATH_ROLE, fit_action_text
from test_honest_predictions import label_shows_all_of_its_text
from dtmr.io.npz_dataset import write_npz_dataset
from dtmr.methods import KSAME, RETIME
from studio_fakes import ACTION_NAMES, make_clip, settle

NWUCLA = Path(__file__).resolve().parents[3] / "shared" / "data" / "nwucla.npz"


@pytest.fixture
def data_dir(tmp_path, monkeypatch):
    """The user's data folder (`dtmr.review.location.user_data_dir`), whose models/ the fitted files go into."""
    folder = tmp_path / "user-data"
    monkeypatch.setenv("DTMR_DATA_DIR", str(folder))
    return folder


def row_of(panel, path: Path):
    items = [panel.list.item(i) for i in range(panel.list.count())]
    return next((item for item in items if item.data(PATH_ROLE) == str(path)), None)


def fit_and_wait(window, qtbot, path: Path, timeout: int = 30000) -> None:
    panel = window.model_panel
    qtbot.mouseClick(panel.fit_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.selected_path == str(path), timeout=timeout)
    settle(qtbot, window)


@pytest.mark.timeout(120)
def test_one_click_fits_k_same_on_the_library_and_shows_it(make_studio, library_file, data_dir, qtbot):
    window = make_studio(motion_fit=MotionFitJob())
    window.open_path(library_file)
    qtbot.waitUntil(lambda: ViewKind.RELEASED in window.comparison.clips, timeout=20000)
    settle(qtbot, window)
    panel = window.model_panel
    assert panel.fit_button.isEnabled() and panel.fit_button.text() == fit_action_text(KSAME.name)
    first = data_dir / "models" / "ksame_clips.pt"
    fit_and_wait(window, qtbot, first)
    assert first.is_file()
    assert row_of(panel, first).text().splitlines()[1].strip() == "fitted on this library"
    # the library has one repetition and no known layout: no split fits, so every clip is the pool (docs/studio.md)
    assert panel.fit_status.text().startswith("Fitted k-same on every clip (9; no split fits this library) in ")
    window.docks["model"].raise_()
    assert panel.fit_status.text().endswith(" s: ksame_clips.pt") and label_shows_all_of_its_text(panel.fit_status)
    assert "ksame k=3, 3 action templates, pool of 9 clips by 3 subjects" in panel.fit_status.toolTip()
    assert not panel.fit_cancel_button.isVisible() and panel.fit_button.isEnabled()
    assert window.controller.model.path == first and window.comparison.model_note.startswith("k-same")
    # a second fit never replaces the first file
    before = first.read_bytes()
    fit_and_wait(window, qtbot, data_dir / "models" / "ksame_clips_2.pt")
    assert first.read_bytes() == before and row_of(panel, first) is not None


@pytest.mark.timeout(120)
def test_the_menu_fits_the_other_fitted_methods(make_studio, library_file, data_dir, qtbot):
    window = make_studio(motion_fit=MotionFitJob())
    window.open_path(library_file)
    qtbot.waitUntil(lambda: window.controller.library is not None, timeout=20000)
    settle(qtbot, window)
    window.model_panel.fit_actions[RETIME.name].trigger()
    qtbot.waitUntil(lambda: window.model_panel.selected_path == str(data_dir / "models" / "retime_clips.pt"),
                    timeout=30000)
    settle(qtbot, window)


@pytest.mark.timeout(120)
def test_a_fit_that_cannot_be_made_is_one_line(make_studio, tmp_path, data_dir, qtbot):
    """k-same needs k subjects per action: a library of two people cannot give three."""
    path = tmp_path / "two.npz"
    write_npz_dataset(path, [make_clip(s, a) for s in range(2) for a in range(3)], action_names=ACTION_NAMES)
    window = make_studio(motion_fit=MotionFitJob())
    window.open_path(path)
    qtbot.waitUntil(lambda: window.controller.library is not None, timeout=20000)
    settle(qtbot, window)
    panel = window.model_panel
    qtbot.mouseClick(panel.fit_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not window.motion_fitter.running, timeout=30000)
    text = panel.fit_status.text()
    assert f"{path}, every clip: k = 3 needs 3 subjects per action" in text and "\n" not in text, text
    assert not (data_dir / "models" / "ksame_two.pt").exists() and panel.fit_button.isEnabled()


@pytest.mark.timeout(240)
@pytest.mark.skipif(not NWUCLA.is_file(), reason="N-UCLA is not in ../shared/data")
def test_k_same_is_fitted_on_n_ucla_in_the_studios_child_process(make_studio, data_dir, qtbot):
    window = make_studio()  # the Studio's own job: a child process
    window.open_path(NWUCLA)
    qtbot.waitUntil(lambda: window.controller.library is not None, timeout=60000)
    out = data_dir / "models" / "ksame_nwucla.pt"
    fit_and_wait(window, qtbot, out, timeout=180000)
    status = window.model_panel.fit_status.text()
    assert "on the training half of nwucla (1,020 clips)" in status, status
    window.docks["model"].raise_()
    assert label_shows_all_of_its_text(window.model_panel.fit_status)
    seconds = float(status.split(" in ")[-1].split(" s:")[0])
    print(f"\nk-same on N-UCLA in the Studio: {seconds:.1f} s ({status})")
    assert np.isfinite(seconds)
