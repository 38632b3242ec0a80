"""scripts/which_method.py: the which-method tables of README.md and docs/RESULTS.md are the ones the
published audits give (so that neither can be edited by hand or go stale), and a file without the markers
is named."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from dtmr.errors import DtmrError

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "which_method.py"


def _script():
    spec = importlib.util.spec_from_file_location("which_method", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_readme_and_results_show_the_table_the_published_audits_give():
    script = _script()
    expected = script.table()
    for path in script.FILES:
        text = path.read_text(encoding="utf-8")
        start, end = script.generated_block(text, path)
        assert text[start:end].strip() == expected, f"{path.name}: run python scripts/which_method.py --write"


def test_a_file_without_the_markers_is_named(tmp_path):
    with pytest.raises(DtmrError, match="no which-method table markers"):
        _script().generated_block("# no table here", tmp_path / "x.md")
