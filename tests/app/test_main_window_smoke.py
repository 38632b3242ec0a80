"""First light: the window opens a real .npz, plays the source, and the model views arrive."""

from app.state.comparison import VIEWS, ViewKind
from app.ui.screenshots import coloured_pixels, view_pixels
from studio_fakes import settle


def test_open_library_and_show_three_views(make_studio, library_file, qtbot):
    window = make_studio()
    window.open_path(library_file)
    qtbot.waitUntil(lambda: ViewKind.RELEASED in window.comparison.clips, timeout=20000)
    settle(qtbot, window)
    assert window.library_panel.model.rowCount() == 9
    for kind in VIEWS:
        pixels = view_pixels(window.views.views[kind])
        assert pixels[..., :3].std() > 2.0
        assert coloured_pixels(pixels) > 50, kind
