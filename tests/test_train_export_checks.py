"""``psygym train --export``: the name is checked like ``psygym export``'s, before any training.

A name that would write over a model, through a link, into a folder or file in the way, or with
a suffix no psygym command loads a model by, is refused in one line (exit 2) naming it and what
is allowed; the files there stay byte for byte, and no run folder is made (nothing was trained).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from cli_helpers import clean_error, ok, run

TINY = (
    "--edition",
    "7th",
    "--scenario",
    "single-phase",
    "--steps",
    1,
    "--n-envs",
    1,
    "--eval-episodes",
    2,
    "--no-progress",
)


def _train(runs: Path, export: object, *more: object):
    """``psygym train`` at the tiny budget into ``runs``, exporting to ``export``."""
    return run("train", *TINY, "--runs-dir", runs, "--export", export, *more)


def _files(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (links as their target's text) by relative name."""
    return {
        str(p.relative_to(folder)): os.readlink(p).encode() if p.is_symlink() else p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_symlink() or p.is_file()
    }


@pytest.fixture
def mine(tmp_path) -> Path:
    """A folder holding a user's earlier model ``old`` (both files) and notes ``notes.json``."""
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "old.safetensors").write_bytes(b"weights of hours of training")
    (folder / "old.json").write_text('{"note": "keep me"}\n')
    (folder / "notes.json").write_text("my notes\n")
    return folder


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> tuple[Path, Path]:
    """A finished tiny run exported into a folder that did not exist: (run folder, weights)."""
    base = tmp_path_factory.mktemp("trained")
    weights = base / "new folder" / "m.safetensors"
    out = ok("train", *TINY, "--runs-dir", base / "runs", "--export", weights)
    assert f"exported: {weights} (" in out, out
    return base / "runs" / "7th" / "single-phase" / "maskable-ppo_1", weights


def test_an_earlier_model_is_never_written_over(tmp_path, mine):
    before = _files(mine)
    for name in ("old", "old.safetensors", "old.json"):
        clean_error(
            _train(tmp_path / "runs", mine / name),
            f"{mine / 'old.safetensors'} exists already",
            "new files only",
            "remove old.safetensors and old.json",
            "another --export",
        )
    # Either file alone is somebody's work too.
    clean_error(_train(tmp_path / "runs", mine / "notes"), f"{mine / 'notes.json'} exists already")
    assert _files(mine) == before
    assert not (tmp_path / "runs").exists()  # refused before training


def test_an_exported_model_is_not_written_over_by_a_later_run_or_resume(tmp_path, trained):
    run_dir, weights = trained
    before, run_before = _files(weights.parent), _files(run_dir)
    clean_error(_train(tmp_path / "runs", weights), f"{weights} exists already")
    resumed = run("train", "--resume", run_dir, "--export", weights.with_suffix(""))
    clean_error(resumed, f"{weights} exists already", "another --export")
    assert _files(weights.parent) == before and _files(run_dir) == run_before
    assert not (tmp_path / "runs").exists()


def test_a_folder_is_refused_with_a_stem_in_it_to_use(tmp_path, mine):
    before = _files(mine)
    for name in (str(mine), f"{mine}/", f"{tmp_path / 'new'}/"):
        clean_error(
            _train(tmp_path / "runs", name),
            f"--export {name} is a folder",
            f"e.g. --export {Path(name) / 'model'}",
        )
    assert _files(mine) == before and not (tmp_path / "new").exists()
    assert not (tmp_path / "runs").exists()


def test_a_link_where_a_model_file_would_go_is_refused_before_training(tmp_path, mine):
    outside = tmp_path / "outside.json"
    outside.write_text("outside\n")
    (mine / "linked.json").symlink_to(outside)
    (mine / "dangling.safetensors").symlink_to(tmp_path / "nowhere")
    before = _files(mine)
    for stem, target in (("linked", outside), ("dangling", tmp_path / "nowhere")):
        line = clean_error(
            _train(tmp_path / "runs", mine / stem),
            "refusing to write",
            "symbolic link",
            str(target),
            "another --export",
        )
        assert str(mine / stem) in line
    assert _files(mine) == before and outside.read_text() == "outside\n"
    assert not (tmp_path / "nowhere").exists() and not (tmp_path / "runs").exists()


def test_a_file_where_a_folder_would_go_is_refused_before_training(tmp_path, mine):
    before = _files(mine)
    clean_error(
        _train(tmp_path / "runs", mine / "notes.json" / "m"),
        f"{mine / 'notes.json'} is a file, not a folder",
        "another --export",
    )
    assert _files(mine) == before and not (tmp_path / "runs").exists()


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("m.zip", "not an SB3 .zip"),
        ("m.ZIP", "not an SB3 .zip"),
        ("m.zip.json", "not an SB3 .zip"),
        ("m.SAFETENSORS", "in lowercase, not .SAFETENSORS"),
        ("m.Json", "in lowercase, not .Json"),
        ("m.json.safetensors", "has two model suffixes"),
    ],
)
def test_a_suffix_no_command_loads_a_model_by_is_refused(tmp_path, name, why):
    dest = tmp_path / "out" / name
    clean_error(
        _train(tmp_path / "runs", dest),
        f"--export {dest}: ",
        why,
        "allowed: a stem, or it with .safetensors or .json",
        f"e.g. --export {tmp_path / 'out' / 'm'} for",
    )
    assert not (tmp_path / "out").exists() and not (tmp_path / "runs").exists()


def test_a_folder_without_write_permission_is_refused_before_training(tmp_path, monkeypatch):
    folder = tmp_path / "shared"
    folder.mkdir()
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: Path(p) != folder and real(p, mode))
    clean_error(
        _train(tmp_path / "runs", folder / "sub" / "m"), f"no permission to make files in {folder}"
    )
    assert not list(folder.iterdir()) and not (tmp_path / "runs").exists()


def test_a_value_run_checks_its_export_before_training(tmp_path, mine):
    before = _files(mine)
    result = run(
        "train",
        "--algo",
        "value",
        "--edition",
        "7th",
        "--scenario",
        "single-phase",
        "--steps",
        2,
        "--no-progress",
        "--runs-dir",
        tmp_path / "runs",
        "--export",
        mine / "old",
    )
    clean_error(result, f"{mine / 'old.safetensors'} exists already")
    assert _files(mine) == before and not (tmp_path / "runs").exists()


def test_a_missing_folder_is_made_and_the_name_printed_as_given(tmp_path, trained):
    """A name holding ``[...]`` (rich markup) is written and printed as given, not as ``m1``."""
    assert trained[1].is_file() and trained[1].with_suffix(".json").is_file()
    weights = tmp_path / "new" / "m[bold]1[/].safetensors"
    out = ok("train", *TINY, "--runs-dir", tmp_path / "runs", "--export", weights)
    assert f"exported: {weights} (" in out, out
    assert weights.is_file() and weights.with_suffix(".json").is_file()
