"""A release in the library table: opaque ids, source subjects through its key, the audit's Risk column."""

import json
import os

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog

from app.state.comparison import ViewKind
from app.ui.clip_table import COLUMNS, RISK_COLUMN
from release_fakes import ORDER, risk_order, write_audit, write_release
from studio_fakes import settle


def opened(window, qtbot, path, key=None):
    window.controller.open_path(path, key)
    qtbot.waitUntil(lambda: window.controller.library is not None and window.controller.library.path == path
                    and (key is None or window.controller.library.key is not None), timeout=20000)
    settle(qtbot, window)
    return window.library_panel


def column(panel, col):
    return [panel.proxy.index(r, col).data() for r in range(panel.proxy.rowCount())]


def test_release_with_key_and_audit_shows_subjects_and_sorts_by_risk(release_studio, tmp_path, qtbot):
    release = write_release(tmp_path)
    window = release_studio()
    panel = opened(window, qtbot, release.path)
    library = window.controller.library
    assert library.release and library.key is not None and library.audit.path == release.audit
    assert COLUMNS[RISK_COLUMN] == "Risk"
    assert column(panel, 1) == [f"R{p + 1:06d}" for p in range(9)]  # opaque ids, in release order
    assert column(panel, 2) == [str(release.subject_of(p)) for p in range(9)]  # subjects from the key
    assert column(panel, RISK_COLUMN) == [f"{r:.2f}" for r in release.risks.values()]
    tip = panel.model.index(0, 1).data(Qt.ItemDataRole.ToolTipRole)
    assert release.sources[ORDER[0]].sample_name in tip
    assert "with its key" in panel.path_label.text() and str(release.audit) in panel.path_label.text()

    header = panel.table.horizontalHeader()
    qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton,
                     pos=header.rect().topLeft() + _section_centre(header, RISK_COLUMN))
    shown = [float(v) for v in column(panel, RISK_COLUMN)]
    assert shown == sorted(shown) or shown == sorted(shown, reverse=True)
    panel.table.sortByColumn(RISK_COLUMN, Qt.SortOrder.DescendingOrder)
    assert column(panel, 1) == risk_order(release)  # numeric order, not the ids' or the text's
    assert [float(v) for v in column(panel, RISK_COLUMN)] == sorted(release.risks.values(), reverse=True)

    # the selected clip is the released clip, labelled with its source subject for the identity track
    rect = panel.table.visualRect(panel.proxy.index(0, 0))
    qtbot.mouseClick(panel.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    settle(qtbot, window)
    highest = risk_order(release)[0]
    source = window.comparison.clips[ViewKind.SOURCE]
    assert source.sample_name == highest
    assert source.subject == release.subject_of(int(highest[1:]) - 1)
    assert window.comparison.reference.subject != source.subject  # references of other people


def _section_centre(header, section):
    from PySide6.QtCore import QPoint

    return QPoint(header.sectionViewportPosition(section) + header.sectionSize(section) // 2, header.height() // 2)


def test_release_without_key_or_audit_then_both_opened_from_the_file_menu(release_studio, tmp_path, qtbot,
                                                                          monkeypatch):
    release = write_release(tmp_path)
    hidden_key = tmp_path / "elsewhere.key.json"
    os.replace(release.key, hidden_key)
    audit_folder = release.audit.parent
    moved_audit = tmp_path / "kept" / "audit.json"
    moved_audit.parent.mkdir()
    os.replace(release.audit, moved_audit)
    window = release_studio()
    panel = opened(window, qtbot, release.path)
    assert window.controller.library.release and window.controller.library.key is None
    assert set(column(panel, 2)) == {""} and set(column(panel, RISK_COLUMN)) == {""}  # nothing known: empty cells
    assert "without its key" in panel.path_label.text()
    assert window.comparison.clips[ViewKind.SOURCE].subject is None

    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(hidden_key), ""))
    window.actions.open_key.trigger()
    qtbot.waitUntil(lambda: window.controller.library.key is not None, timeout=20000)
    settle(qtbot, window)
    panel = window.library_panel
    assert column(panel, 2) == [str(release.subject_of(p)) for p in range(9)]

    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(moved_audit), ""))
    window.actions.open_audit.trigger()
    assert column(panel, RISK_COLUMN) == [f"{r:.2f}" for r in release.risks.values()]
    assert str(moved_audit) in panel.path_label.text()
    assert not audit_folder.joinpath("audit.json").exists()


def test_a_key_of_another_release_and_a_broken_audit_are_messages(release_studio, tmp_path, qtbot, monkeypatch):
    release = write_release(tmp_path, audit=False)
    wrong = tmp_path / "wrong.key.json"  # the key of another release: its token differs
    wrong.write_text(release.key.read_text(encoding="utf-8").replace('"release_token": "', '"release_token": "f'),
                     encoding="utf-8")
    window = release_studio()
    opened(window, qtbot, release.path)
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(wrong), ""))
    window.actions.open_key.trigger()
    qtbot.waitUntil(lambda: bool(window.message_boxes), timeout=20000)
    text = window.message_boxes[-1].text()
    assert str(wrong) in text and str(release.path) in text
    assert window.controller.library.path == release.path  # the release stays open

    broken = tmp_path / "broken" / "audit.json"
    broken.parent.mkdir()
    broken.write_text('{"format": "dtmr-audit", "clips": [{"id": "R000001", "risk": 7}]}', encoding="utf-8")
    window.open_audit(broken)
    assert str(broken) in window.message_boxes[-1].text() and "risk" in window.message_boxes[-1].text()
    assert window.controller.library.audit is None

    write_audit(release, attacker=False)  # the audit of this release, in its default folder, is not re-read
    audit = json.loads(release.audit.read_text(encoding="utf-8"))
    unfinished = tmp_path / "unfinished" / "audit.json"  # good risks, no worst attacker: not an audit dtmr writes
    unfinished.parent.mkdir()
    unfinished.write_text(json.dumps({k: v for k, v in audit.items() if k != "worst"}), encoding="utf-8")
    window.open_audit(unfinished)
    assert f"{unfinished}: an audit without a readable 'worst' entry" in window.message_boxes[-1].text()
    assert window.controller.library.audit is None
    stranger = tmp_path / "stranger" / "audit.json"  # a whole audit of another release
    stranger.parent.mkdir()
    stranger.write_text(json.dumps({**audit, "clips": [{**c, "id": f"X{n}"} for n, c in enumerate(audit["clips"])]}),
                        encoding="utf-8")
    window.open_audit(stranger)
    assert "lists none of the clips" in window.message_boxes[-1].text()
    window.open_audit(release.audit)
    risks = window.library_panel.model.risk
    assert np.allclose(risks, list(release.risks.values()))


def test_a_release_whose_audit_lacks_the_worst_attacker_opens_without_it(release_studio, tmp_path, qtbot):
    release = write_release(tmp_path)
    audit = json.loads(release.audit.read_text(encoding="utf-8"))
    del audit["worst"]  # the Studio once read such an audit's risks with no attacker to explain them
    release.audit.write_text(json.dumps(audit), encoding="utf-8")
    window = release_studio()
    panel = opened(window, qtbot, release.path)
    assert window.controller.library.audit is None
    assert column(panel, RISK_COLUMN) == [""] * 9
    qtbot.waitUntil(lambda: bool(window.message_boxes), timeout=20000)
    text = window.message_boxes[-1].text()
    assert text == f"The audit beside the release was not used: {release.audit}: an audit without a readable " \
                   "'worst' entry"
