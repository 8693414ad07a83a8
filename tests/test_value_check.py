"""psygym value-check: V against sampled continuations, resumable, one-line errors."""

from __future__ import annotations

import json

import numpy as np
import pytest
from psygym_experiments.harness.runs import ResumeRecord
from psygym_experiments.harness.value_check import (
    board_ids,
    continuation_gains,
    read_rows,
    run_value_check,
    sample_boards,
    summarize,
)

from psygym.core import TERMINAL
from psygym.editions import load
from psygym.policies import reference_policy

CFG = {"edition": "rt", "scenario": "duel", "boards": 1, "continuations": 6, "agent": "bid-all",
       "value": None, "seed": 2}  # fmt: skip


def test_boards_are_the_distinct_first_boards_of_each_battle_round():
    rules = load("rt", "duel")
    boards = sample_boards(rules, 2, seed=0)
    rounds = [r for r, _, _ in boards]
    # Every Rogue Trader duel starts from one board, so round 1 has one board, not two copies.
    assert rounds == [1, 2, 2, 3, 3]
    for rnd in (2, 3):
        mine = [b for r, _, b in boards if r == rnd]
        assert len(set(mine)) == len(mine) == 2
    for rnd, _, b in boards:
        assert rules.horizon(b)[0] == rnd and rules.current_player(b) != TERMINAL
    # Fixed by the seed.
    again = sample_boards(rules, 2, seed=0)
    assert [b for *_, b in again] == [b for *_, b in boards]
    # Numbered by round and index, so a short round leaves the others' numbers alone.
    assert sorted(board_ids(boards, 2)) == [0, 2, 3, 4, 5]
    assert board_ids(boards, 2)[3][:2] == (2, 1)


def test_continuations_are_seeded_and_measure_what_is_still_gained():
    rules = load("rt", "duel")
    _, _, board = sample_boards(rules, 1, seed=0)[0]
    ref = reference_policy(rules)
    a = continuation_gains(rules, board, [ref, ref], 5, (1, 2))
    b = continuation_gains(rules, board, [ref, ref], 5, (1, 2))
    c = continuation_gains(rules, board, [ref, ref], 5, (1, 3))
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    # From a terminal state nothing is left to gain.
    s = board
    rng = np.random.default_rng(0)
    from psygym.core import CHANCE, sample_action

    while (p := rules.current_player(s)) != TERMINAL:
        act = rules.sample_chance(s, rng) if p == CHANCE else sample_action(ref, rules, s, p, rng)
        s = rules.apply(s, act)
    assert continuation_gains(rules, s, [ref, ref], 3, (0,)).tolist() == [0.0, 0.0, 0.0]


def test_summary_rmse_and_bias_per_round():
    rows = [{"round": 1, "V": 1.0, "mean": 0.0, "se": 0.5},
            {"round": 1, "V": -1.0, "mean": 0.0, "se": 0.1},
            {"round": 2, "V": 2.0, "mean": 1.0, "se": 0.2}]  # fmt: skip
    by = {r["round"]: r for r in summarize(rows)}
    assert by[1]["rmse"] == pytest.approx(1.0) and by[1]["bias"] == pytest.approx(0.0)
    assert by[1]["mean_se"] == pytest.approx(0.3) and by[2]["rmse"] == pytest.approx(1.0)
    assert by["all"]["boards"] == 3 and by["all"]["rmse"] == pytest.approx(1.0)


def test_run_resumes_without_replaying_and_refuses_other_settings(tmp_path):
    out = tmp_path / "vc"
    first = run_value_check(CFG, out, workers=1)
    assert [r["round"] for r in first] == [1, 2, 3]
    assert {"boards.jsonl", "summary.json", "summary.md", "value-check.png"} <= {
        p.name for p in out.iterdir()
    }
    # Drop the last board, as if the run had been killed: only it is played again.
    lines = (out / "boards.jsonl").read_text().splitlines()
    (out / "boards.jsonl").write_text("\n".join(lines[:-1]) + '\n{"torn')
    seen = []
    again = run_value_check(CFG, out, on_board=lambda done, total, row: seen.append(row["board"]))
    assert seen == [2] and again == first
    assert len(read_rows(out)) == 3
    summary = json.loads((out / "summary.json").read_text())
    assert summary["boards"] == first
    with pytest.raises(ValueError, match="other settings .*continuations"):
        run_value_check({**CFG, "continuations": 7}, out)


def test_boards_are_played_in_turn_over_the_rounds(tmp_path):
    seen = []
    cfg = {**CFG, "boards": 2, "continuations": 2}
    out = tmp_path / "turn"
    rows = run_value_check(cfg, out, on_board=lambda d, t, row: seen.append(row))
    # The files keep board order (round by round); the play goes board 0 of each round first.
    assert [r["round"] for r in rows] == [1, 2, 2, 3, 3]
    assert [(r["index"], r["round"]) for r in seen] == [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3)]
    # A record of a board the settings no longer sample (a second copy of round 1's one board,
    # as runs wrote before boards were distinct) is dropped on resume, not counted twice.
    copy = {**rows[0], "board": 1, "index": 1, "mean": 1.5}
    ResumeRecord(out / "boards.jsonl").append(copy)  # lines chained as the command writes them
    ResumeRecord(out / "chunks.jsonl").append({"board": 1, "start": 0, "gains": [1.5, 1.5]})
    assert run_value_check(cfg, out) == rows
    assert [r["board"] for r in read_rows(out)] == [0, 2, 3, 4, 5]
    assert (out / "chunks.jsonl").read_text() == ""
    assert "Up to 2 distinct boards per battle round" in (out / "summary.md").read_text()


def test_a_stopped_run_leaves_the_summary_of_its_finished_boards(tmp_path):
    cfg = {**CFG, "boards": 2, "continuations": 2}
    out = tmp_path / "stopped"

    def stop_after_two(done, total, row):
        if done == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_value_check(cfg, out, on_board=stop_after_two)
    text = (out / "summary.md").read_text()
    assert "Unfinished: 2 of 5 boards so far" in text and (out / "value-check.png").is_file()
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["finished"], summary["total"]) == (2, 5)
    assert [(r["round"], r["index"]) for r in summary["boards"]] == [(1, 0), (2, 0)]
    first = summary["boards"][0]
    assert f"| 1 | 0 | {first['V']:+.3f} | {first['mean']:+.3f} | {first['se']:.3f} |" in text
    rows = run_value_check(cfg, out)
    text = (out / "summary.md").read_text()
    assert "Unfinished" not in text and "| all | 5 |" in text and "\n| 3 | 1 | " in text
    assert json.loads((out / "summary.json").read_text())["finished"] == len(rows) == 5


def test_cli_value_check_and_its_errors(tmp_path, capsys):
    from psygym_experiments.cli import run

    out = tmp_path / "cli"
    args = ["value-check", "--edition", "rt", "--scenario", "duel", "--boards", "1",
            "--continuations", "3", "--agent", "bid-all", "--out", str(out)]  # fmt: skip
    assert run(args) == 0
    text = capsys.readouterr().out
    assert "round all: 3 boards, RMSE of V" in text and (out / "command.txt").is_file()
    assert run([*args[:-2], "--out", str(out), "--seed", "1"]) == 2
    err = capsys.readouterr().err
    assert "other settings (seed)" in err and "Traceback" not in err
    assert run(["value-check", "--edition", "nope"]) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_a_scenario_without_a_board_value_fails_before_writing_anything(tmp_path, monkeypatch):
    from psygym_agents.value import general

    # single-phase ships no value of its own; the edition's value for any list is taken away
    monkeypatch.setattr(general, "general_value_path", lambda e: tmp_path / "none.safetensors")
    out = tmp_path / "none"
    cfg = {**CFG, "edition": "7th", "scenario": "single-phase"}
    with pytest.raises(ValueError, match="no board value for 7th single-phase: give --value"):
        run_value_check(cfg, out)
    assert not out.exists()


def test_a_board_resumes_chunk_by_chunk_with_the_same_figures(tmp_path, monkeypatch):
    from psygym_experiments.harness import value_check
    from psygym_experiments.harness.value_check import board_row, play_chunk

    monkeypatch.setattr(value_check, "CHUNK", 2)
    cfg = {**CFG, "continuations": 5, "agent": "random"}
    progress = []
    whole = run_value_check(cfg, tmp_path / "whole", on_chunk=lambda *p: progress.append(p))
    assert progress == [(d, 15) for d in (2, 4, 5, 7, 9, 10, 12, 14, 15)]
    assert len((tmp_path / "whole" / "chunks.jsonl").read_text().splitlines()) == 9
    assert whole[0]["se"] > 0  # the dice of these games differ, so a lost chunk would show
    # As if killed in the first board: two of its three chunks recorded, no board finished.
    out = tmp_path / "cut"
    out.mkdir()
    (out / "config.json").write_text((tmp_path / "whole" / "config.json").read_text())
    recorded = [play_chunk(cfg, 0, 0, 2), play_chunk(cfg, 0, 2, 4)]
    ResumeRecord(out / "chunks.jsonl").rewrite(recorded)
    with (out / "chunks.jsonl").open("a") as f:
        f.write('{"torn')
    played = []
    monkeypatch.setattr(value_check, "play_chunk", lambda c, b, j, stop: played.append((b, j))
                        or play_chunk(c, b, j, stop))  # fmt: skip
    again = run_value_check(cfg, out)
    assert played == [(0, 4), (1, 0), (1, 2), (1, 4), (2, 0), (2, 2), (2, 4)]
    assert again == whole
    # The chunks split the games, not the dice: one chunk of all five is the same board.
    assert board_row(cfg, 0, play_chunk(cfg, 0, 0, 5)["gains"]) == whole[0]
    # A finished board's chunks are dropped when the run starts again.
    run_value_check(cfg, out)
    assert (out / "chunks.jsonl").read_text() == ""
    # Killed after a board's last chunk but before its row: the row comes from the chunks alone.
    (tmp_path / "whole" / "boards.jsonl").write_text("")
    played.clear()
    assert run_value_check(cfg, tmp_path / "whole") == whole and played == []
