"""Nothing is written through a symbolic link planted in an output folder.

For every command that writes a run folder (train, evaluate, compare, tune, value-check, advise,
serve's game logs, cheatsheet), a link to a file or folder outside is planted where the command
writes, and the command is resumed or run again: it must stop with one line naming the link, and
the file the link points to must be left as it was. Commands that always make a new folder
(advise, compare's report, cheatsheet) pass over a link planted where that folder would go.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from psygym_experiments.cli import app
from psygym_experiments.harness import runs
from psygym_experiments.harness.output import (
    UnsafeOutputError,
    atomic_write,
    open_append,
    save_figure,
    write_json,
)
from typer.testing import CliRunner

runner = CliRunner()
OUTSIDE = "outside: must stay as it is\n"


@pytest.fixture
def outside(tmp_path_factory) -> Path:
    """A folder outside every output folder, with one file whose text must never change."""
    folder = tmp_path_factory.mktemp("outside")
    (folder / "target.txt").write_text(OUTSIDE)
    return folder


def plant(link: Path, target: Path) -> Path:
    """Replace ``link`` (a file, or nothing) by a symbolic link to ``target``."""
    if link.is_file() and not link.is_symlink():
        link.unlink()
    link.symlink_to(target)
    return link


def untouched(outside: Path) -> bool:
    """Whether the outside folder still holds only its one file, unchanged."""
    names = sorted(p.name for p in outside.iterdir())
    return names == ["target.txt"] and (outside / "target.txt").read_text() == OUTSIDE


def refused(result, link: Path) -> bool:
    """Exit status 2 with one error line that names ``link``, and no traceback."""
    err = result.stderr.strip()
    return (result.exit_code == 2 and err.count("\n") == 0 and "refusing to write" in err
            and link.name in err and "Traceback" not in result.output)  # fmt: skip


# ----------------------------------------------------------------------------- the writers
def test_every_writer_refuses_a_link_and_leaves_its_target(tmp_path, outside):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    target = outside / "target.txt"
    fig = plt.figure()
    writers = {
        "a.txt": lambda p: atomic_write(p, "x"),
        "a.json": lambda p: write_json(p, {"x": 1}),
        "a.csv": lambda p: open_append(p).close(),
        "a.png": lambda p: save_figure(fig, p),
    }
    for name, write in writers.items():
        link = plant(tmp_path / name, target)
        with pytest.raises(UnsafeOutputError, match=f"refusing to write .*{name}: it is a "
                           "symbolic link to"):  # fmt: skip
            write(link)
        dangling = plant(tmp_path / f"dangling-{name}", outside / f"new-{name}")
        with pytest.raises(UnsafeOutputError):
            write(dangling)
    plt.close(fig)
    # A folder of the run that is a link: refused below the output folder, naming the link.
    sub = plant(tmp_path / "sub", outside)
    with pytest.raises(UnsafeOutputError, match=f"its folder {sub} is a symbolic link"):
        atomic_write(sub / "a.txt", "x", root=tmp_path)
    # A hard link to the target: an append would change it, so it is refused too.
    os.link(target, tmp_path / "hard.csv")
    with pytest.raises(UnsafeOutputError, match="hard link"):
        open_append(tmp_path / "hard.csv")
    assert untouched(outside)


def test_a_new_folder_passes_over_a_link_where_it_would_go(tmp_path, outside, monkeypatch):
    monkeypatch.setattr(runs, "timestamp", lambda: "20240101-000000")
    plant(tmp_path / "advise-table-20240101-000000", outside)
    plant(tmp_path / "advise-table-20240101-000000-2", tmp_path / "nowhere")  # dangling
    assert runs.run_folder(tmp_path, "advise-table").name == "advise-table-20240101-000000-3"
    assert untouched(outside)


# ----------------------------------------------------------------------------- evaluate
EVALUATE = ["evaluate", "--edition", "7th", "--scenario", "single-phase", "--agents",
            "double-wc,all-in", "--episodes", "4", "--no-exact", "--format", "json"]  # fmt: skip


def test_evaluate_resume_refuses_links_in_its_run_folder(tmp_path, outside):
    first = runner.invoke(app, [*EVALUATE, "--runs-dir", str(tmp_path / "runs")])
    assert first.exit_code == 0, first.output
    (run,) = (tmp_path / "runs").glob("evaluate-*")
    for name in ("results.csv", "results.json", "command.txt", "tasks.jsonl", "config.json"):
        keep = (run / name).read_bytes()
        link = plant(run / name, outside / "target.txt")
        result = runner.invoke(app, ["evaluate", "--resume", str(run)])
        assert refused(result, link), (name, result.output)
        link.unlink()
        (run / name).write_bytes(keep)
    sub = plant(run / "plots", outside)  # a folder link is refused as well
    assert refused(runner.invoke(app, ["evaluate", "--resume", str(run)]), sub)
    sub.unlink()
    assert runner.invoke(app, ["evaluate", "--resume", str(run)]).exit_code == 0
    assert untouched(outside)


def test_evaluate_until_clear_resume_refuses_a_linked_record(tmp_path, outside):
    args = ["evaluate", "--edition", "rt", "--scenario", "duel", "--until-clear", "--agents",
            "spend-freely,conserve", "--episodes", "10", "--min-episodes", "10"]  # fmt: skip
    assert runner.invoke(app, [*args, "--runs-dir", str(tmp_path / "runs")]).exit_code == 0
    (run,) = (tmp_path / "runs").glob("evaluate-*")
    link = plant(run / "games.jsonl", outside / "target.txt")
    assert refused(runner.invoke(app, ["evaluate", "--resume", str(run)]), link)
    assert untouched(outside)


# ----------------------------------------------------------------------------- train
def test_train_resume_refuses_links_in_its_run_folder(tmp_path, outside):
    from psygym_experiments.harness.train_config import make_config
    from psygym_experiments.harness.training_files import start_run
    from psygym_experiments.harness.value_config import make_value_config, start_value_run

    cfg = make_config("7th", "single-phase", steps=64, eval_every=32, eval_episodes=2)
    run = start_run(cfg, tmp_path / "runs")
    runs.write_command(run, "psygym train")
    link = plant(run / "command.txt", outside / "target.txt")
    assert refused(runner.invoke(app, ["train", "--resume", str(run), "--no-progress"]), link)
    link.unlink()
    folder = plant(run / "checkpoints", outside)
    assert refused(runner.invoke(app, ["train", "--resume", str(run), "--no-progress"]), folder)
    value = start_value_run(make_value_config("rt", "duel", 4, 0), tmp_path / "runs")
    link = plant(value / "metrics.csv", outside / "target.txt")
    assert refused(runner.invoke(app, ["train", "--resume", str(value), "--no-progress"]), link)
    assert untouched(outside)


# ----------------------------------------------------------------------------- tune
TUNE = ["tune", "--edition", "7th", "--scenario", "single-phase", "--trials", "1", "--episodes",
        "4", "--scoring", "simulation", "--study", "s", "--no-progress"]  # fmt: skip


def test_tune_rerun_refuses_links_in_its_study_folder_and_storage(tmp_path, outside):
    runs_dir = tmp_path / "runs"
    study = runs_dir / "7th" / "single-phase" / "tune_s"
    study.mkdir(parents=True)
    for name in ("trials.csv", "best.json", "command.txt", "history.png"):
        link = plant(study / name, outside / "target.txt")
        assert refused(runner.invoke(app, [*TUNE, "--runs-dir", str(runs_dir)]), link), name
        link.unlink()
    link = plant(runs_dir / "optuna.db", outside / "target.txt")
    assert refused(runner.invoke(app, [*TUNE, "--runs-dir", str(runs_dir)]), link)
    link.unlink()
    folder = plant(runs_dir / "7th" / "single-phase" / "tune_t", outside)
    result = runner.invoke(app, [*TUNE[:-3], "--study", "t", "--no-progress", "--runs-dir",
                                 str(runs_dir)])  # fmt: skip
    assert refused(result, folder)
    assert untouched(outside)


# ----------------------------------------------------------------------------- value-check
def test_value_check_rerun_refuses_links_in_its_folder(tmp_path, outside):
    out = tmp_path / "vc"
    args = ["value-check", "--edition", "rt", "--scenario", "duel", "--boards", "1",
            "--continuations", "3", "--agent", "bid-all", "--out", str(out)]  # fmt: skip
    out.mkdir()
    for name in ("boards.jsonl", "chunks.jsonl", "summary.json", "value-check.png"):
        link = plant(out / name, outside / "target.txt")
        assert refused(runner.invoke(app, args), link), name
        link.unlink()
    assert untouched(outside)


# ----------------------------------------------------------------------------- compare
def test_compare_refuses_a_linked_tuned_folder(tmp_path, outside):
    from psygym_experiments.harness.compare_field import tuned_entry

    runs_dir = tmp_path / "runs"
    (runs_dir / "tuned").mkdir(parents=True)
    folder = plant(runs_dir / "tuned" / "7th-single-phase-quick", outside)
    with pytest.raises(UnsafeOutputError, match=f"write {folder}: it is a symbolic link to"):
        tuned_entry("7th", "single-phase", "single-phase", runs_dir, 1, 0, [], quick=True)
    assert untouched(outside)


# ----------------------------------------------------------------------------- advise
def test_advise_table_passes_over_a_link_where_its_folder_would_go(
    tmp_path, outside, monkeypatch
):  # fmt: skip
    monkeypatch.setattr(runs, "timestamp", lambda: "20240101-000000")
    plant(tmp_path / "advise-table-20240101-000000", outside)
    result = runner.invoke(app, ["advise", "--edition", "7th", "--table", "--max-pool", "2",
                                 "--max-enemy-dice", "1", "--runs-dir", str(tmp_path)])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert (tmp_path / "advise-table-20240101-000000-2" / "dice_table.csv").is_file()
    assert untouched(outside)


# ----------------------------------------------------------------------------- serve
def test_serve_refuses_a_linked_log_folder_and_log_file(tmp_path, outside):
    from psygym_experiments.harness.gamelog import GameLog
    from psygym_experiments.serve.store import GameStore

    runs_dir = tmp_path / "runs"
    (runs_dir / "serve").mkdir(parents=True)
    folder = plant(runs_dir / "serve" / "games", outside)
    with pytest.raises(UnsafeOutputError, match=f"write {folder}: it is a symbolic link to"):
        GameStore(runs_dir)
    result = runner.invoke(app, ["serve", "--runs-dir", str(runs_dir), "--port", "8765"])
    assert refused(result, folder)
    folder.unlink()
    store = GameStore(runs_dir)
    link = plant(store.games_dir / "0123456789abcdef.jsonl", outside / "target.txt")
    with pytest.raises(UnsafeOutputError, match="it is a symbolic link to"):
        GameLog(link, {"edition": "7th"}, root=runs_dir)
    game = store.create({"edition": "7th", "scenario": "single-phase", "seat": 0, "seed": 1})
    assert game is not None and len(list(store.games_dir.glob("*.jsonl"))) == 2
    assert untouched(outside)


# ----------------------------------------------------------------------------- cheatsheet
def test_cheatsheet_refuses_a_linked_file_and_passes_over_a_linked_folder(
    tmp_path, outside, monkeypatch
):  # fmt: skip
    link = plant(tmp_path / "sheet.png", outside / "target.txt")
    result = runner.invoke(app, ["cheatsheet", "--edition", "7th", "--quick", "--out",
                                 str(tmp_path / "sheet")])  # fmt: skip
    assert refused(result, link)
    monkeypatch.setattr(runs, "timestamp", lambda: "20240101-000000")
    (tmp_path / "runs").mkdir()
    plant(tmp_path / "runs" / "cheatsheet-20240101-000000", outside)
    result = runner.invoke(app, ["cheatsheet", "--edition", "7th", "--quick", "--runs-dir",
                                 str(tmp_path / "runs")])  # fmt: skip
    assert result.exit_code == 0, result.output
    made = tmp_path / "runs" / "cheatsheet-20240101-000000-2"
    assert {p.name for p in made.iterdir()} == {"cheatsheet-7th.png", "cheatsheet-7th.pdf",
                                                 "command.txt"}  # fmt: skip
    assert untouched(outside)


# ----------------------------------------------------------------------------- cfr
def test_cfr_refuses_a_link_in_its_reused_folder_before_solving(tmp_path, outside):
    pytest.importorskip("pyspiel")
    folder = tmp_path / "cfr"  # like the default runs/cfr: the same folder on every run
    folder.mkdir()
    link = plant(folder / "report.md", outside / "target.txt")
    result = runner.invoke(app, ["cfr", "--edition", "2nd", "--scenario", "smite-skirmish",
                                 "--iterations", "1", "--out", str(folder)])  # fmt: skip
    assert refused(result, link)
    assert sorted(p.name for p in folder.iterdir()) == ["report.md"]  # nothing solved or written
    assert untouched(outside)


# ----------------------------------------------------------------------------- play
def test_play_refuses_a_linked_log_folder(tmp_path, outside):
    from psygym_experiments.play_session import GameLog

    runs_dir = tmp_path / "runs"
    runs_dir.mkdir()
    plant(runs_dir / "games", outside)
    with pytest.raises(UnsafeOutputError, match="games: it is a symbolic link to"):
        GameLog.create(runs_dir, {"edition": "7th"})
    assert untouched(outside)
