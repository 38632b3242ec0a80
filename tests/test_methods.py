"""The method registry (dtmr/methods.py): one declaration per method and per residual, read by everything
that lists, orders, names or dispatches on them; no product module spells a method's name itself."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from dtmr import methods
from dtmr.errors import DtmrError

REPO = Path(__file__).resolve().parents[1]
#: string constants that equal a method's name but mean something else, with the reason
NOT_A_METHOD = {
    ("dtmr/audit/report.py", "raw"): "audit.json's entry of the raw clips the audit read",
    ("dtmr/audit/suite.py", "raw"): "audit.json's entry of the raw clips the audit read",
    ("dtmr/models/__init__.py", "dtmr"): "the submodule dtmr.models.dtmr",
    ("dtmr/cli/__init__.py", "dtmr"): "the program's name",
    ("app/core/training_command.py", "dtmr"): "python -m dtmr",
    ("app/docs_images.py", "dtmr"): "python -m dtmr",
    ("dtmr/cli/data_cmd.py", "noise"): "`dtmr data synth --noise`",
    ("scripts/train_lifter.py", "noise"): "the synthetic clips' noise setting",
    ("app/ui/trainer_tab.py", "naive"): "the residual check box's text",
}


def _docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                ids.add(id(first.value))
    return ids


def test_a_method_name_is_a_literal_only_in_the_registry():
    names = {m.name for m in methods.METHODS}
    found = {}
    for root in ("dtmr", "app", "scripts"):
        for path in sorted((REPO / root).rglob("*.py")):
            rel = path.relative_to(REPO).as_posix()
            if rel == "dtmr/methods.py":
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"))
            skip = _docstrings(tree)
            for node in ast.walk(tree):
                if isinstance(node, ast.Constant) and node.value in names and id(node) not in skip \
                        and (rel, node.value) not in NOT_A_METHOD:
                    found.setdefault(rel, []).append(f"{node.value!r} line {node.lineno}")
    assert found == {}


def test_every_method_once_in_table_order_with_its_kind_and_needs():
    assert [m.name for m in methods.METHODS] == ["raw", "noise", "naive", "retime", "retime-naive", "ksame",
                                                 "dmr", "pmr", "dtmr"]
    assert [methods.order(m.name) for m in methods.METHODS] == list(range(len(methods.METHODS)))
    assert methods.names("parameter-free") == ("raw", "noise", "naive")
    assert methods.names("fitted") == ("retime", "retime-naive", "ksame")
    assert methods.names("trained") == ("dmr", "pmr", "dtmr")
    assert not methods.RAW.needs_model and methods.KSAME.needs_model and methods.DTMR.needs_model
    assert methods.NAIVE.needs_references and not methods.RETIME.needs_references
    assert methods.display_name("ksame") == "k-same" and methods.method("disentangledtmr") is methods.DTMR


def test_an_unknown_method_or_residual_names_the_known_ones():
    with pytest.raises(DtmrError, match="unknown method 'lstm' .*ksame"):
        methods.method("lstm")
    assert not methods.is_method("lstm") and methods.is_method("dtmr")
    with pytest.raises(ValueError, match="residual must be one of source, naive.*got 'x'"):
        methods.residual("x")


def test_residuals_say_what_they_need_compute_and_are_told():
    table = {r.name: (r.needs_templates, r.needs_pool, r.computed_by_model, r.on_reference, r.labels)
             for r in methods.RESIDUALS}
    assert table == {
        "source": (False, False, False, False, ()),
        "naive": (False, False, False, True, ()),
        "retimed": (True, False, True, False, ("actions",)),
        "retimed-naive": (True, False, True, True, ("actions",)),
        "ksame": (True, True, True, True, ("actions", "subjects")),
    }
    assert methods.RESIDUALS[0] is methods.SOURCE_RESIDUAL  # the paper's


def test_the_registry_and_the_parsers_that_read_it_load_no_torch():
    import subprocess
    import sys

    code = ("import sys, dtmr.methods, dtmr.cli.anonymize_cmd, dtmr.cli.fit_motion_cmd, dtmr.train.presets; "
            "print('torch' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120,
                          check=True)
    assert done.stdout.strip() == "False"
