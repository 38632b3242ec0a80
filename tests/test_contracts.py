"""Contracts of the import structure (docs/ARCHITECTURE.md): the library `dtmr` never loads Qt, pyqtgraph or
OpenGL, and never imports the app; every import, also one inside a function, goes down the layer table
below; no two modules import each other, however indirectly. Every module of `dtmr` is imported in a fresh
interpreter, so nothing another test imported first can hide or fake a violation."""

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


#: the layers, lowest first: a module imports its own package and the packages of lower layers, never one of
#: its own layer or above. `dtmr` itself (its `__init__`, which names `Clip`, the errors and `Anonymizer`: the
#: app may import it, the library's modules import the submodules) and `dtmr.__main__` stand outside the table.
LAYERS = (
    ("dtmr.errors",),
    ("dtmr.methods", "dtmr.attacker_names", "dtmr.resources", "dtmr.terminal", "dtmr.parallel"),
    ("dtmr.skeleton",),
    ("dtmr.data",),
    ("dtmr.io",),
    ("dtmr.models", "dtmr.review"),
    ("dtmr.render", "dtmr.train", "dtmr.lift"),
    ("dtmr.attackers",),
    ("dtmr.eval",),
    ("dtmr.release",),
    ("dtmr.audit",),
    ("dtmr.argtypes",),
    ("dtmr.bench",),
    ("dtmr.cli",),
    ("app.core",),
    ("app.state", "app.workers", "app.render_gl"),
    ("app.ui",),
    ("app",),
)
UNLAYERED = ("dtmr", "dtmr.__main__")


def _modules() -> dict[str, Path]:
    modules = {}
    for root in ("dtmr", "app"):
        for path in (REPO / root).rglob("*.py"):
            modules[path.relative_to(REPO).with_suffix("").as_posix().replace("/", ".").removesuffix(".__init__")] = path
    return modules


def _import_graph() -> dict[str, set[str]]:
    """module -> the project modules it imports, anywhere in its body. `from P import m` of a submodule m
    is an import of P.m only; the packages above a module are not counted (Python imports them anyway)."""
    modules = _modules()
    graph = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")
                    base = ".".join(parts[:len(parts) - node.level + 1] + ([base] if base else []))
                subs = [f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in modules]
                found = subs if len(subs) == len(node.names) else [base, *subs]
            else:
                continue
            for target in found:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name and not name.startswith(target + "."):
                    targets.add(target)
        graph[name] = targets
    return graph


def _layer(module: str) -> tuple[int, str] | None:
    """(layer index, package) of the longest package of LAYERS that holds `module`."""
    best = None
    for index, packages in enumerate(LAYERS):
        for package in packages:
            if (module == package or module.startswith(package + ".")) and (best is None or len(package) > len(best[1])):
                best = (index, package)
    return best


def test_every_module_has_a_layer():
    assert [m for m in _import_graph() if m not in UNLAYERED and _layer(m) is None] == []


def test_imports_go_down_the_layer_table():
    upward = []
    for module, targets in sorted(_import_graph().items()):
        if module in UNLAYERED:
            continue
        layer, package = _layer(module)
        for target in sorted(targets):
            if target in UNLAYERED:
                if not (target == "dtmr" and module.split(".")[0] == "app"):
                    upward.append(f"{module} -> {target}")
                continue
            target_layer, target_package = _layer(target)
            if target_package != package and target_layer >= layer:
                upward.append(f"{module} -> {target}")
    assert upward == []


def test_no_import_circle():
    graph = _import_graph()
    index, low, stack, on_stack, circles = {}, {}, [], set(), []

    def visit(start: str) -> None:  # Tarjan's strongly connected components, iteratively
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    circles.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    assert circles == []
