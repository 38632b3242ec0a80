"""Contracts of the import structure (docs/ARCHITECTURE.md): the library `dtmr` never loads Qt, pyqtgraph or
OpenGL, and never imports the app. Every module of `dtmr` is imported in a fresh interpreter, so nothing
another test imported first can hide or fake a violation."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: top-level packages the library must never load: the GUI toolkit, its GL stack, and the app itself
FORBIDDEN = ("PySide6", "shiboken6", "pyqtgraph", "OpenGL", "app")

IMPORT_EVERYTHING = f"""
import importlib, json, pkgutil, sys

import dtmr

def fail(name):
    raise ImportError(f"cannot import {{name}}")

names = ["dtmr"]
for info in pkgutil.walk_packages(dtmr.__path__, "dtmr.", onerror=fail):
    if info.name.rsplit(".", 1)[-1] != "__main__":  # dtmr.__main__ runs the command line
        importlib.import_module(info.name)
        names.append(info.name)
loaded = sorted(m for m in sys.modules if m.split(".")[0] in {FORBIDDEN!r})
print(json.dumps({{"imported": names, "forbidden": loaded}}))
"""


def test_importing_every_dtmr_module_loads_no_qt_no_opengl_and_not_the_app():
    done = subprocess.run([sys.executable, "-c", IMPORT_EVERYTHING], cwd=REPO, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    expected = {path.relative_to(REPO).with_suffix("").as_posix().replace("/", ".").removesuffix(".__init__")
                for path in (REPO / "dtmr").rglob("*.py") if path.name != "__main__.py"}
    assert expected <= set(result["imported"])  # every module, not only those reached by imports
    assert result["forbidden"] == []


def _imported_roots(tree: ast.AST) -> set[str]:
    """Top-level package names a module imports: import statements and importlib/`__import__` calls on
    a constant name."""
    roots = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str):
            called = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if called in ("import_module", "__import__"):
                roots.add(node.args[0].value.split(".")[0])
    return roots


def test_no_dtmr_module_imports_the_app_or_qt_even_inside_a_function():
    offenders = {}
    for path in sorted((REPO / "dtmr").rglob("*.py")):
        bad = _imported_roots(ast.parse(path.read_text(encoding="utf-8"))) & set(FORBIDDEN)
        if bad:
            offenders[path.relative_to(REPO).as_posix()] = sorted(bad)
    assert offenders == {}
