"""Resume as printed: ``--resume <folder>`` alone, and resume records checked line by line.

The hint ``evaluate`` prints (``--resume <folder>``) resumes with the folder's own settings; a
setting given with another value is refused, naming it. Every line of a resume record must be
the one the command wrote (its hash chain), of the right shape, with scores within the
scenario's bounds; a line that is not is refused with the file and its line number.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from psygym_experiments.cli import app
from psygym_experiments.harness.gamelog import GENESIS, chained_line
from psygym_experiments.harness.runs import ResumeRecord
from psygym_experiments.harness.task_record import check_task_line
from typer.testing import CliRunner

runner = CliRunner()
ROUND_ROBIN = ["evaluate", "--edition", "7th", "--scenario", "single-phase", "--agents",
               "double-wc,all-in", "--episodes", "6", "--no-exact", "--format", "json"]  # fmt: skip


def error_line(result) -> str:
    """The one error line of a refused command (exit status 2, no traceback)."""
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    (line,) = [x for x in result.stderr.splitlines() if x.startswith("error:")]
    return line


def rows_of(path: Path) -> list[dict]:
    """A record's lines as objects, without their hashes."""
    rows = [json.loads(x) for x in path.read_text().splitlines()]
    return [{k: v for k, v in r.items() if k != "hash"} for r in rows]


def rechain(path: Path, rows: list[dict]) -> None:
    """Write ``rows`` with a valid hash chain (as someone who recomputes the hashes would)."""
    previous, text = GENESIS, ""
    for row in rows:
        line, previous = chained_line(previous, row)
        text += line
    path.write_text(text)


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> tuple[Path, dict]:
    """A finished round-robin's folder and its printed results."""
    runs = tmp_path_factory.mktemp("runs")
    result = runner.invoke(app, [*ROUND_ROBIN, "--runs-dir", str(runs)])
    assert result.exit_code == 0, result.output
    (folder,) = runs.glob("evaluate-*")
    assert f"--resume {folder}" in result.stderr  # the hint
    return folder, json.loads(result.stdout)


def copy_run(run: tuple[Path, dict], tmp_path: Path) -> Path:
    import shutil

    return Path(shutil.copytree(run[0], tmp_path / "run"))


# ----------------------------------------------------------------------------- --resume alone
def test_resume_alone_takes_every_setting_from_the_folder(run, tmp_path):
    folder = copy_run(run, tmp_path)
    (folder / "results.json").unlink()
    again = runner.invoke(app, ["evaluate", "--resume", str(folder), "--format", "json"])
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout) == run[1]
    assert json.loads((folder / "results.json").read_text())["episodes"] == 6
    # A setting given with the same value is fine; one with another value is refused, named.
    same = runner.invoke(app, ["evaluate", "--resume", str(folder), "--episodes", "6"])
    assert same.exit_code == 0, same.output
    for option, value, field in (
        ("--episodes", "7", "episodes"),
        ("--seed", "3", "seed"),
        ("--agents", "all-in,double-wc", "agents"),
        ("--edition", "8th", "edition"),
        ("--exact", None, "exact"),
    ):
        args = [option] if value is None else [option, value]
        line = error_line(runner.invoke(app, ["evaluate", "--resume", str(folder), *args]))
        assert f"other settings ({field})" in line, line
    line = error_line(runner.invoke(app, ["evaluate", "--resume", str(folder), "--until-clear"]))
    assert "holds a round-robin of evaluate; leave out --until-clear" in line


def test_resume_alone_reloads_a_scenario_file(tmp_path):
    from psygym.edition import get

    src = Path(get("7th").scenario_dir) / "single-phase.toml"
    mine = tmp_path / "mine.toml"
    mine.write_text(src.read_text())
    args = ["evaluate", "--edition", "7th", "--scenario", str(mine), "--agents",
            "double-wc,all-in", "--episodes", "4", "--no-exact", "--format", "json",
            "--runs-dir", str(tmp_path / "runs")]  # fmt: skip
    first = runner.invoke(app, args)
    assert first.exit_code == 0, first.output
    (folder,) = (tmp_path / "runs").glob("evaluate-*")
    again = runner.invoke(app, ["evaluate", "--resume", str(folder), "--format", "json"])
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout) == json.loads(first.stdout)


def test_a_bad_config_is_one_line(run, tmp_path):
    folder = copy_run(run, tmp_path)
    doc = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**doc, "episodes": "many"}))
    line = error_line(runner.invoke(app, ["evaluate", "--resume", str(folder)]))
    assert "config.json: episodes:" in line


# ----------------------------------------------------------------------------- tasks.jsonl
def test_a_changed_line_is_refused_naming_its_line_number(run, tmp_path):
    folder = copy_run(run, tmp_path)
    tasks = folder / "tasks.jsonl"
    lines = tasks.read_text().splitlines()
    doc = json.loads(lines[1])
    doc["result"]["stats"]["scores"] = [100.0] * len(doc["result"]["stats"]["scores"])
    tasks.write_text("\n".join([lines[0], json.dumps(doc), *lines[2:]]) + "\n")
    line = error_line(runner.invoke(app, ["evaluate", "--resume", str(folder)]))
    assert f"{tasks}: line 2: hash does not follow from the previous line" in line
    # Removing a line breaks the chain at the line after it.
    tasks.write_text("\n".join([lines[0], *lines[2:]]) + "\n")
    line = error_line(runner.invoke(app, ["evaluate", "--resume", str(folder)]))
    assert f"{tasks}: line 2: hash does not follow" in line


@pytest.mark.parametrize("garbage", [{"garbage": True}, [1, 2], "text"])
def test_garbage_is_one_line_naming_the_file_and_line(run, tmp_path, garbage):
    folder = copy_run(run, tmp_path)
    tasks = folder / "tasks.jsonl"
    good = tasks.read_text()
    tasks.write_text(good + json.dumps(garbage) + "\n")
    line = error_line(runner.invoke(app, ["evaluate", "--resume", str(folder)]))
    n = len(good.splitlines()) + 1
    assert line.startswith(f"error: {tasks}: line {n}: "), line
    # The same garbage as a first line: the file has no chain at all.
    tasks.write_text(json.dumps(garbage) + "\n")
    line = error_line(runner.invoke(app, ["evaluate", "--resume", str(folder)]))
    assert line.startswith(f"error: {tasks}: line 1: "), line
    # And with a chain recomputed around it: its shape is refused.
    if isinstance(garbage, dict):
        rechain(tasks, [garbage])
        line = error_line(runner.invoke(app, ["evaluate", "--resume", str(folder)]))
        assert f"{tasks}: line 1: task: Field required" in line


def test_a_record_written_before_the_chain_asks_for_a_new_run(run, tmp_path):
    folder = copy_run(run, tmp_path)
    tasks = folder / "tasks.jsonl"
    tasks.write_text("".join(json.dumps(r) + "\n" for r in rows_of(tasks)))
    line = error_line(runner.invoke(app, ["evaluate", "--resume", str(folder)]))
    assert f"{tasks}: line 1: the record has no hash chain" in line and "start a new run" in line


def test_scores_outside_the_scenarios_bounds_are_refused(tmp_path):
    # 8th single-phase declares its scores: -31 to 31 for seat 0.
    args = ["evaluate", "--edition", "8th", "--scenario", "single-phase", "--agents",
            "random,random", "--episodes", "4", "--no-exact", "--runs-dir",
            str(tmp_path)]  # fmt: skip
    assert runner.invoke(app, args).exit_code == 0
    (folder,) = tmp_path.glob("evaluate-*")
    tasks = folder / "tasks.jsonl"
    rows = rows_of(tasks)
    rows[1]["result"]["stats"]["scores"][1] = 100.0
    rechain(tasks, rows)
    line = error_line(runner.invoke(app, ["evaluate", "--resume", str(folder)]))
    game = rows[1]["task"][3] + 1
    assert (f"{tasks}: line 2: the score of game {game} is 100, outside the scenario's scores "
            "-31 to 31") in line  # fmt: skip


def test_a_seventh_score_of_100_is_refused_by_the_declared_bounds(run, tmp_path):
    # 7th single-phase declares -4 to 6 for seat 0 (psygym.editions.seventh.bounds); the chain
    # is recomputed, so only the bounds can catch the tampered score.
    folder = copy_run(run, tmp_path)
    tasks = folder / "tasks.jsonl"
    rows = rows_of(tasks)
    k = next(i for i, r in enumerate(rows) if r["task"][0] == "games")
    rows[k]["result"]["stats"]["scores"][0] = 100.0
    rechain(tasks, rows)
    line = error_line(runner.invoke(app, ["evaluate", "--resume", str(folder)]))
    game = rows[k]["task"][3]
    assert (f"{tasks}: line {k + 1}: the score of game {game} is 100, outside the scenario's "
            "scores -4 to 6") in line  # fmt: skip


def test_the_shape_of_every_task_kind_is_checked():
    stats = {
        "games": 2,
        "scores": [1.0, -1.0],
        "attempts": [1, 0],
        "perils": [0, 0],
        "manifests": [1, 0],
        "dice": [2, 0],
        "deny_attempts": [0, 1],
        "denied": [0, 0],
    }
    good = {
        "task": ["games", 0, 1, 0, 2, 0],
        "result": {"stats": stats, "stochastic": [False, False]},
    }
    bounds = (-5.0, 5.0)
    check_task_line(good, bounds)
    check_task_line({"task": ["value", 1000], "result": ["ok", 0.5]}, bounds)
    check_task_line({"task": ["br", 1, 0, None], "result": ["unsolvable", "too big"]}, bounds)
    bad = {
        "games 0 to 2: 2 games and 2 scores recorded, where 3": {
            **good, "task": ["games", 0, 1, 0, 3, 0]},
        "task.1: Input should be a valid integer": {**good, "task": ["games", True, 1, 0, 2, 0]},
        "task kind 'solve' is not one of: games, value, exact, br": {
            "task": ["solve", 1], "result": ["ok", 0.0]},
        "result.stats.attempts: List should have at most 2 items": {
            **good, "result": {"stats": {**stats, "attempts": [1, 0, 0]},
                               "stochastic": [False, False]}},
        "result.stats.dice.0: Input should be greater than or equal to 0": {
            **good, "result": {"stats": {**stats, "dice": [-2, 0]},
                               "stochastic": [False, False]}},
        "the exact value is 9, outside the scenario's scores -5 to 5": {
            "task": ["exact", 0, 1, 10], "result": ["ok", 9.0]},
        "the score of game 1 is -6, outside": {
            **good, "result": {"stats": {**stats, "scores": [1.0, -6.0]},
                               "stochastic": [False, False]}},
        "extra": {**good, "extra": 1},
    }  # fmt: skip
    for message, row in bad.items():
        with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(".", r"\.")):
            check_task_line(row, bounds)


# ----------------------------------------------------------------------------- other records
def test_until_clear_records_are_checked_too(tmp_path):
    args = ["evaluate", "--edition", "rt", "--scenario", "duel", "--until-clear", "--agents",
            "spend-freely,conserve", "--episodes", "10", "--min-episodes", "10", "--runs-dir",
            str(tmp_path)]  # fmt: skip
    assert runner.invoke(app, args).exit_code == 0
    (folder,) = tmp_path.glob("evaluate-*")
    record = folder / "games.jsonl"
    rows = rows_of(record)
    rows[0]["pairs"][3] = [100.0, 0.0]  # the Rogue Trader duel's seat 0 scores -3 to 2
    rechain(record, rows)
    line = error_line(runner.invoke(app, ["evaluate", "--resume", str(folder)]))
    assert f"{record}: line 1: the score of game 3 in seat 0 is 100, outside" in line
    rows[0]["pairs"][3] = "x"
    rechain(record, rows)
    line = error_line(runner.invoke(app, ["evaluate", "--resume", str(folder)]))
    assert f"{record}: line 1: pairs.3:" in line


def test_value_check_records_are_checked_and_out_alone_resumes(tmp_path):
    out = tmp_path / "vc"
    args = ["value-check", "--edition", "rt", "--scenario", "duel", "--boards", "1",
            "--continuations", "3", "--agent", "bid-all", "--out", str(out)]  # fmt: skip
    first = runner.invoke(app, args)
    assert first.exit_code == 0, first.output
    # --out alone: the folder's settings (it plays nothing more: every board is finished).
    alone = runner.invoke(app, ["value-check", "--out", str(out)])
    assert alone.exit_code == 0, alone.output
    assert alone.stdout == first.stdout
    line = error_line(runner.invoke(app, ["value-check", "--out", str(out), "--seed", "4"]))
    assert "other settings (seed)" in line
    boards = out / "boards.jsonl"
    rows = rows_of(boards)
    rows[0]["mean"] = 50.0
    rechain(boards, rows)
    line = error_line(runner.invoke(app, ["value-check", "--out", str(out)]))
    assert f"{boards}: line 1: board {rows[0]['board']}: the mean gain is 50, outside" in line
    boards.write_text(boards.read_text().replace('"mean": 50.0', '"mean": 0.5'))
    line = error_line(runner.invoke(app, ["value-check", "--out", str(out)]))
    assert f"{boards}: line 1: hash does not follow" in line
    chunks = out / "chunks.jsonl"
    rechain(chunks, [{"board": 0, "start": 0, "gains": [1.0]}])
    rows[0]["mean"] = 0.5
    rechain(boards, [])
    line = error_line(runner.invoke(app, ["value-check", "--out", str(out)]))
    assert f"{chunks}: line 1: board 0: 1 gains from game 0, where the chunk plays 3" in line


def test_a_torn_last_line_is_left_out_and_dropped(tmp_path):
    record = ResumeRecord(tmp_path / "r.jsonl")
    record.rewrite([{"a": 1}, {"a": 2}])
    with (tmp_path / "r.jsonl").open("a") as f:
        f.write('{"a": 3')  # a killed run, halfway through a line
    again = ResumeRecord(tmp_path / "r.jsonl")
    assert again.read() == [{"a": 1}, {"a": 2}]
    again.append({"a": 3})
    assert ResumeRecord(tmp_path / "r.jsonl").read() == [{"a": 1}, {"a": 2}, {"a": 3}]
