"""The app/library seam is typed with the library's own types, not `Any` (issue 20, Part 2 item 4).

Where the app holds a library value it names its type: `dtmr.data.clip.Clip`, `dtmr.io.sources.ClipSource`,
`dtmr.models.anonymizer.Anonymizer`, `dtmr.models.recognizers.Recognizer`, `dtmr.release.key.ReleaseKey`, ...
(imported under `TYPE_CHECKING` where the import would pull torch or h5py into the Studio's start-up).
`Any` is left only where the value really is arbitrary; those places are listed in `ALLOWED`, so a new
`Any` anywhere in `app/` fails here. Every annotation must also resolve to a real name, which catches a
misspelt type now that the names live in `TYPE_CHECKING` blocks that nothing executes at run time.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import subprocess
import sys
import typing
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "app"

#: (file, place) -> how many times `Any` may appear there, and why it is arbitrary
ALLOWED: dict[tuple[str, str], int] = {
    # the job signature: the workers run every kind of job, each with its own request and result types
    ("app/core/cancel.py", "Job"): 2,
    ("app/workers/job_thread.py", "JobThread.__init__"): 1,  # the pending request, of any job
    ("app/workers/job_thread.py", "JobThread.submit"): 1,
    ("app/workers/job_thread.py", "JobThread._run_one"): 1,
    ("app/workers/process_job.py", "ProcessJob.__call__"): 2,  # request and result, pickled to the child and back
    ("app/workers/process_job.py", "ProcessJob._wait"): 1,
    # settings: a value's type depends on its key (str, bool, int, float, list[str]); text read back from
    # an INI file is coerced to it
    ("app/state/settings.py", "DEFAULTS"): 1,
    ("app/state/settings.py", "coerce"): 3,
    ("app/state/settings.py", "SettingsModel.__init__"): 1,
    ("app/state/settings.py", "SettingsModel.get"): 1,
    ("app/state/settings.py", "SettingsModel.set"): 1,
    ("app/state/settings.py", "SettingsModel.items"): 1,
}


class _AnyFinder(ast.NodeVisitor):
    """Counts the uses of `typing.Any` per place: a module-level or class-level name, or a function."""

    def __init__(self) -> None:
        self.places: Counter[str] = Counter()
        self._scope: list[tuple[str, bool]] = []  # (name, is a function)
        self._any_names = {"Any"}
        self._in_type = 0  # > 0 inside an annotation or a subscript, where a string may be a quoted type

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.module == "typing":
            self._any_names |= {a.asname or a.name for a in node.names if a.name == "Any"}

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in self._any_names:
            self._count()

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr == "Any":
            self._count()
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if self._in_type and isinstance(node.value, str):  # a quoted type: "Any", "dict[str, Any]"
            try:
                expression = ast.parse(node.value, mode="eval")
            except SyntaxError:
                return
            self.visit(expression)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        self._in_type += 1
        self.generic_visit(node)
        self._in_type -= 1

    def visit_arg(self, node: ast.arg) -> None:
        if node.annotation is not None:
            self._type(node.annotation)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        self._scope.append((node.name, not isinstance(node, ast.ClassDef)))
        for field, value in ast.iter_fields(node):
            if field == "returns" and value is not None:
                self._type(value)
            elif field == "body":
                for child in value:
                    if not (isinstance(child, ast.Expr) and isinstance(child.value, ast.Constant)):  # docstrings
                        self.visit(child)
            elif isinstance(value, ast.AST):
                self.visit(value)
            elif isinstance(value, list):
                for child in value:
                    if isinstance(child, ast.AST):
                        self.visit(child)
        self._scope.pop()

    visit_AsyncFunctionDef = visit_ClassDef = visit_FunctionDef

    def visit_Assign(self, node: ast.Assign | ast.AnnAssign) -> None:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        in_function = bool(self._scope) and self._scope[-1][1]
        named = not in_function and len(targets) == 1 and isinstance(targets[0], ast.Name)
        if named:
            self._scope.append((targets[0].id, False))
        if isinstance(node, ast.AnnAssign):
            self._type(node.annotation)
            if node.value is not None:
                self.visit(node.value)
        else:
            self.visit(node.value)
        if named:
            self._scope.pop()

    visit_AnnAssign = visit_Assign

    def _type(self, node: ast.AST) -> None:
        self._in_type += 1
        self.visit(node)
        self._in_type -= 1

    def _count(self) -> None:
        self.places[".".join(name for name, _ in self._scope) or "<module>"] += 1


def any_places(source: str) -> Counter[str]:
    finder = _AnyFinder()
    tree = ast.parse(source)
    for node in tree.body:
        if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):  # the module docstring
            finder.visit(node)
    return finder.places


def app_files() -> list[Path]:
    return sorted(APP.rglob("*.py"))


def test_the_finder_sees_every_spelling_of_any() -> None:
    source = '''"""Any docstring."""
from typing import Any, Any as Anything
import typing

Alias = dict[str, Any]


class Box:
    value: "Any"
    count: int = 0

    def get(self, key: str) -> typing.Any:
        """Any key."""
        return key

    def put(self, value: Anything, note: str = "Any") -> None:
        pass


def make() -> None:
    table: dict[str, "Any"] = {}
    label = "Any"


def plain(x: int) -> int:
    return x
'''
    assert any_places(source) == Counter({"Alias": 1, "Box.value": 1, "Box.get": 1, "Box.put": 1, "make": 1})


def test_any_appears_in_the_app_only_where_the_value_is_arbitrary() -> None:
    found = Counter()
    for path in app_files():
        rel = path.relative_to(ROOT).as_posix()
        for place, n in any_places(path.read_text(encoding="utf-8")).items():
            found[(rel, place)] = n
    new = {place: n for place, n in found.items() if n > ALLOWED.get(place, 0)}
    assert not new, (
        f"`Any` where a real type belongs: {new}. Use the library's type (Clip, ClipSource, Anonymizer, ...; under "
        "TYPE_CHECKING when its module imports torch), or, if the value really is arbitrary, add the place to ALLOWED "
        "with the reason")
    gone = {place: n for place, n in ALLOWED.items() if found.get(place, 0) < n}
    assert not gone, f"these places no longer use `Any` as often: lower or remove them in ALLOWED: {gone}"


def _type_checking_imports(path: Path) -> list[ast.stmt]:
    """The import statements of the module's `if TYPE_CHECKING:` blocks."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [stmt for node in tree.body
            if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"
            for stmt in node.body if isinstance(stmt, (ast.Import, ast.ImportFrom))]


def _annotated(module) -> list[object]:
    """The functions, methods and classes defined in `module` (those whose annotations are checked)."""
    own = [obj for obj in vars(module).values()
           if (inspect.isfunction(obj) or inspect.isclass(obj)) and obj.__module__ == module.__name__]
    methods = [member for cls in own if inspect.isclass(cls) for member in vars(cls).values()
               if inspect.isfunction(member)]
    return own + methods


MODULES = sorted(p.relative_to(ROOT).with_suffix("").as_posix().replace("/", ".")
                 for p in app_files() if p.name != "__main__.py")


@pytest.mark.parametrize("name", MODULES)
def test_every_annotation_names_a_real_type(name: str) -> None:
    module = importlib.import_module(name)
    namespace = dict(vars(module))
    imports = ast.Module(body=_type_checking_imports(Path(module.__file__)), type_ignores=[])
    exec(compile(imports, module.__file__, "exec", dont_inherit=True), namespace)  # noqa: S102 -- its own imports
    for obj in _annotated(module):
        typing.get_type_hints(obj, globalns=namespace)


def test_the_types_of_the_seam_do_not_bring_torch_into_the_start_up() -> None:
    """The model types (`Anonymizer`, `Recognizer`, attackers) import torch: the Studio names them under
    `TYPE_CHECKING` only, and loads torch in its model workers."""
    code = "import sys, app.main, app.ui.main_window; print(sorted(m for m in ('torch', 'dtmr.models.anonymizer', " \
           "'dtmr.models.recognizers', 'dtmr.attackers') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                         check=True).stdout
    assert out.strip() == "[]"
