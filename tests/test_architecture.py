"""Architecture rules of DESIGN.md, checked on the source tree and on the built wheel.

- no module imports bare ``agents`` or ``experiments`` (they belong to other PyPI packages);
- no string literal names an edition id or alias outside ``psygym/editions/<e>/`` and
  ``agents/<e>/`` (upper layers find editions through the declarations);
- the wheel's top-level names are exactly ``psygym``, ``psygym_agents``, ``psygym_experiments``,
  and every package folder is listed in ``pyproject.toml``;
- no module is in an import circle (module-level and function-level imports alike; a few known
  circles outside ``psygym/`` are listed), and no source file under ``psygym/`` is over 700 lines.

That ``psygym/editions/**`` import no RL library is checked by
``test_core.test_editions_import_no_rl_library``.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
from helpers import REPO

from psygym.edition import aliases, editions

TREES = ("psygym", "agents", "experiments", "tests")
FORBIDDEN_ROOTS = {"agents", "experiments"}
EDITION_HOMES = {Path("psygym/editions"), Path("agents")}


def _py_files(*trees: str) -> list[Path]:
    return sorted(p for t in trees for p in (REPO / t).rglob("*.py") if ".venv" not in p.parts)


def imported_roots(tree: ast.AST) -> set[str]:
    """Top-level names of every import statement and literal ``import_module("...")`` target."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.add(node.module.split(".")[0])
        elif isinstance(node, ast.Call):
            name = getattr(node.func, "attr", getattr(node.func, "id", ""))
            arg = node.args[0] if node.args else None
            if name in ("import_module", "__import__") and isinstance(arg, ast.Constant):
                if isinstance(arg.value, str):
                    out.add(arg.value.split(".")[0])
    return out


def test_imported_roots_sees_statements_and_import_module():
    tree = ast.parse(
        "import agents.x\nfrom experiments import y\ndef f():\n"
        "    importlib.import_module('experiments.cli')\n    import psygym_agents\n"
    )
    assert imported_roots(tree) == {"agents", "experiments", "psygym_agents"}


def test_no_bare_agents_or_experiments_imports():
    files = _py_files(*TREES)
    assert len(files) > 50
    offenders = {
        str(f.relative_to(REPO)): sorted(imported_roots(ast.parse(f.read_text())) & FORBIDDEN_ROOTS)
        for f in files
    }
    assert {k: v for k, v in offenders.items() if v} == {}


# ----------------------------------------------------------------------------- edition ids
def _edition_literals(path: Path, names: set[str]) -> list[str]:
    """``line: 'literal'`` for every str constant equal to an edition id or alias."""
    tree = ast.parse(path.read_text())
    return [
        f"{node.lineno}: {node.value!r}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and node.value.lower() in names
    ]


def _in_edition_home(rel: Path) -> bool:
    """Inside ``psygym/editions/<e>/`` or ``agents/<e>/`` for a declared edition package."""
    for home in EDITION_HOMES:
        parts = rel.parts[len(home.parts) :]
        if rel.parts[: len(home.parts)] == home.parts and len(parts) >= 2:
            return (REPO / home / parts[0] / "__init__.py").is_file()
    return False


def _edition_names() -> set[str]:
    """Ids and aliases, without the bare numbers (``"1"``, ``"7"``): those are ordinary digits
    in code (``os.environ.get(..., "1")``) far more often than edition names."""
    return {name for name in aliases() if not name.isdigit()}


def _id_offenders(tree: str) -> dict[str, list[str]]:
    names = _edition_names()
    assert {e.id.lower() for e in editions()} <= names
    out = {}
    for f in _py_files(tree):
        rel = f.relative_to(REPO)
        if not _in_edition_home(rel):
            hits = _edition_literals(f, names)
            if hits:
                out[str(rel)] = hits
    return out


def test_edition_literal_finder(tmp_path):
    f = tmp_path / "m.py"
    f.write_text('"""Docs mention 7th edition."""\nx = "7th"\ny = {"Seventh": 1}\nz = "7th ed"\n')
    assert _edition_literals(f, _edition_names()) == ["2: '7th'", "3: 'Seventh'"]


@pytest.mark.parametrize("tree", ["psygym", "agents"])
def test_no_edition_id_literals_outside_edition_folders(tree):
    assert _id_offenders(tree) == {}


def test_no_edition_id_literals_in_experiments():
    assert _id_offenders("experiments") == {}


# ----------------------------------------------------------------------------- packaging
def _pyproject() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text())


def test_every_package_folder_is_listed_in_pyproject():
    setup = _pyproject()["tool"]["setuptools"]
    package_dir = setup["package-dir"]
    assert set(package_dir) == {"psygym", "psygym_agents", "psygym_experiments"}
    folders = set()
    for name, folder in package_dir.items():
        for init in (REPO / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(REPO / folder)
            folders.add(".".join([name, *rel.parts]))
    assert folders - set(setup["packages"]) == set()
    assert set(setup["packages"]) - folders == set()


@pytest.mark.slow
def test_wheel_top_level_names(tmp_path):
    # The package layout only: no compiled engine (setup.py's PSYGYM_BUILD=python).
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(REPO), "--no-deps", "--no-build-isolation",
         "-w", str(tmp_path), "-q"],
        check=True, capture_output=True, cwd=tmp_path, env={**os.environ, "PSYGYM_BUILD": "python"},
    )  # fmt: skip
    (wheel,) = tmp_path.glob("psygym-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        (top,) = [n for n in names if n.endswith(".dist-info/top_level.txt")]
        top_level = set(zf.read(top).decode().split())
    roots = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    expected = {"psygym", "psygym_agents", "psygym_experiments"}
    assert top_level == expected
    assert roots == expected


# ----------------------------------------------------------------------------- circles, lengths
PACKAGE_OF = {"psygym": "psygym", "agents": "psygym_agents", "experiments": "psygym_experiments"}
"""Source folder -> import name (``pyproject.toml``'s package-dir)."""
ALLOWED_CIRCLES = {
    # Left for later (psygym/ has none): function-level imports both ways, make_search in
    # policy.py <-> shared_solver in search.py.
    frozenset({"psygym_agents.solvers.policy", "psygym_agents.solvers.search"}),
}
"""Circles known today; each must still exist, so a fixed one leaves the list."""
MAX_LINES = 700
"""Longest source file under ``psygym/`` (Python, C++ sources and headers)."""


def import_graph(root: Path, packages: dict[str, str]) -> dict[str, set[str]]:
    """Module -> the modules of the trees it imports, at module level or in a function alike.

    ``from p import x`` imports ``p.x`` when that is a module, else ``p``; imports inside
    ``if TYPE_CHECKING:`` never run and are left out, as are modules outside the trees.
    """
    modules: dict[str, tuple[Path, bool]] = {}
    for folder, package in packages.items():
        for path in sorted((root / folder).rglob("*.py")):
            parts = [package, *path.relative_to(root / folder).with_suffix("").parts]
            is_init = parts[-1] == "__init__"
            modules[".".join(parts[:-1] if is_init else parts)] = (path, is_init)

    def known(name: str) -> str:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name

    graph: dict[str, set[str]] = {}
    for name, (path, is_init) in modules.items():
        tree = ast.parse(path.read_text())
        typing_only = {
            id(n)
            for node in ast.walk(tree)
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
            for stmt in node.body
            for n in ast.walk(stmt)
        }
        here = name if is_init else name.rpartition(".")[0]
        targets: list[str] = []
        for node in ast.walk(tree):
            if id(node) in typing_only:
                continue
            if isinstance(node, ast.Import):
                targets += [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = here.rsplit(".", node.level - 1)[0] if node.level else ""
                base = ".".join(p for p in (base, node.module) if p)
                for a in node.names:
                    targets.append(f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base)
        graph[name] = {known(t) for t in targets} - {name, ""}
    return graph


def import_circles(graph: dict[str, set[str]]) -> set[frozenset[str]]:
    """Every group of two or more modules that reach one another through imports."""
    reach: dict[str, set[str]] = {}
    for start in graph:
        seen, todo = set(), [start]
        while todo:
            for nxt in graph[todo.pop()] - seen:
                seen.add(nxt)
                todo.append(nxt)
        reach[start] = seen
    return {frozenset({m, *(o for o in reach[m] if m in reach[o])}) for m in graph if m in reach[m]}


def test_import_circle_finder(tmp_path):
    files = {
        "a.py": "from pkg import b\n",
        "b.py": "def f():\n    from . import a\n",  # a function-level import still counts
        "c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.d import X\n",
        "d.py": "import pkg.c\nimport os\n",
        "e/__init__.py": "from ..c import f\n",
    }
    for rel, text in {"__init__.py": "", **files}.items():
        (tmp_path / "src" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "src" / rel).write_text(text)
    graph = import_graph(tmp_path, {"src": "pkg"})
    assert graph["pkg.d"] == {"pkg.c"} and graph["pkg.c"] == set() and graph["pkg.e"] == {"pkg.c"}
    assert import_circles(graph) == {frozenset({"pkg.a", "pkg.b"})}


def test_no_import_circles():
    circles = import_circles(import_graph(REPO, PACKAGE_OF))
    assert circles - ALLOWED_CIRCLES == set()
    assert ALLOWED_CIRCLES - circles == set()  # fixed since: drop it from ALLOWED_CIRCLES
    assert all(not m.startswith("psygym.") for c in ALLOWED_CIRCLES for m in c)


def test_no_long_files_in_psygym():
    lengths = {
        str(p.relative_to(REPO)): len(p.read_text().splitlines())
        for p in sorted((REPO / "psygym").rglob("*"))
        if p.suffix in (".py", ".cc", ".h")
    }
    assert len(lengths) > 50
    assert {k: n for k, n in lengths.items() if n > MAX_LINES} == {}
