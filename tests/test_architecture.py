"""Architecture rules of DESIGN.md, checked on the source tree and on the built wheel.

- no module imports bare ``agents`` or ``experiments`` (they belong to other PyPI packages);
- no string literal names an edition id or alias outside ``psygym/editions/<e>/`` and
  ``agents/<e>/`` (upper layers find editions through the declarations);
- the wheel's top-level names are exactly ``psygym``, ``psygym_agents``, ``psygym_experiments``,
  and every package folder is listed in ``pyproject.toml``.

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
