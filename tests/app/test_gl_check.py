"""OpenGL start-up check: the probe under Xvfb, and a clear message (not a crash) when GL is missing."""

import pytest
from PySide6.QtWidgets import QMessageBox

import app.main as studio_main
from app.ui import gl_check
from app.ui.gl_check import GlReport, gl_error_box, probe_opengl


def test_probe_reports_a_usable_context(qapp):
    report = probe_opengl()
    assert report.ok and report.version >= (2, 1) and report.renderer


def test_too_old_or_missing_gl_names_what_to_install(qtbot):
    report = GlReport(False, (1, 4), "Ancient GDI", "the driver offers OpenGL 1.4 (Ancient GDI), 2.1 is needed")
    box = gl_error_box(report)
    qtbot.addWidget(box)
    box.open()
    assert box.icon() == QMessageBox.Icon.Critical
    for needle in ("OpenGL 1.4", "apt install libgl1", "xvfb-run", "LIBGL_ALWAYS_SOFTWARE", "dtmr export"):
        assert needle in box.text()
    box.close()


def test_main_exits_with_a_message_when_gl_is_unusable(monkeypatch, capsys, tmp_path, qapp):
    monkeypatch.setattr(gl_check, "probe_opengl", lambda: GlReport(False, problem="no OpenGL context can be created"))
    assert studio_main.main(["--self-test", str(tmp_path / "x.png")]) == studio_main.EXIT_NO_OPENGL
    err = capsys.readouterr().err
    assert "no OpenGL context" in err and "apt install" in err
    assert not (tmp_path / "x.png").exists()


def test_missing_pyopengl_is_reported(monkeypatch, qapp):
    import builtins

    real_import = builtins.__import__

    def failing_import(name, *args, **kwargs):
        if name == "OpenGL":
            raise ImportError("libGL.so.1: cannot open shared object file")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", failing_import)
    report = probe_opengl()
    assert not report.ok and "libGL.so.1" in report.problem


@pytest.mark.parametrize("argv", [["--help"]])
def test_command_line_help(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        studio_main.main(argv)
    assert exit_info.value.code == 0 and "--self-test" in capsys.readouterr().out
