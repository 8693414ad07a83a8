"""The evaluation harness: round-robin, common random numbers, exact values, workers, CLI.

The statistical checks use fixed seeds and state their sample sizes; their bounds are 99%
intervals, so a wrong sign, a seat mix-up or an off-by-one seed would fail them.
"""

from __future__ import annotations

import csv
import io
import json
import math
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from helpers import TINY_SEVENTH
from psygym_experiments.cli import app
from psygym_experiments.harness.games import mean_ci, play_crn
from psygym_experiments.harness.tournament import (
    EvalSettings,
    evaluate,
    pairings,
)
from psygym_experiments.harness.tournament_results import CSV_COLUMNS, Evaluation, csv_text
from typer.testing import CliRunner

from psygym.core import CHANCE, TERMINAL
from psygym.editions import load
from psygym.policies import resolve_policy

Z99 = 2.5758

TINY = TINY_SEVENTH


def tournament(rules, names, episodes, seed, **settings) -> Evaluation:
    """:func:`evaluate` with ``EvalSettings(episodes, seed, **settings)``, no progress bar."""
    settings.setdefault("show_progress", False)
    return evaluate(rules, names, EvalSettings(episodes, seed, **settings))


@pytest.fixture(scope="module")
def tiny_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("scenario") / "tiny.toml"
    path.write_text(TINY)
    return path


@pytest.fixture(scope="module")
def tiny(tiny_path: Path):
    return load("7th", tiny_path)


@pytest.fixture(scope="module")
def single():
    return load("7th", "single-phase")


def hand_value(rules, policies) -> float:
    """Exact expected score of seat 0, summed over the rules' chance outcomes by hand.

    An independent ten-line expectimax over the public Rules API (no solver code): every chance
    outcome and every action a policy may take is weighted by its probability.
    """

    @cache
    def value(s) -> float:
        player = rules.current_player(s)
        if player == TERMINAL:
            return rules.returns(s)[0]
        if player == CHANCE:
            branches = rules.chance_outcomes(s)
        else:
            branches = list(policies[player].action_probabilities(rules, s, player).items())
        return sum(p * value(rules.apply(s, a)) for a, p in branches)

    return value(rules.initial_state())


# ----------------------------------------------------------------------------- structure
def test_pairings_cover_both_seats_of_every_pair():
    assert pairings(3) == [(0, 1), (1, 0), (0, 2), (2, 0), (1, 2), (2, 1)]
    assert pairings(2, self_play=True) == [(0, 0), (0, 1), (1, 0), (1, 1)]


def test_one_result_per_pairing_and_seat(single):
    names = ["double-wc", "all-in", "minimum"]
    pairs = tournament(single, names, 20, 3, exact=False, exploit=False).pairs
    assert [(p.agent0, p.agent1) for p in pairs] == [
        ("double-wc", "all-in"), ("all-in", "double-wc"), ("double-wc", "minimum"),
        ("minimum", "double-wc"), ("all-in", "minimum"), ("minimum", "all-in"),
    ]  # fmt: skip
    for p in pairs:
        assert p.episodes == 20 == len(p.scores)
        assert p.wins + p.draws + p.losses == 20
        assert p.mean_score == pytest.approx(float(np.mean(p.scores)))
        # single-phase: only seat 0 casts (7E-8.1), so only seat 1 denies.
        assert math.isnan(p.perils_rate1) and math.isnan(p.dice_per_manifest1)
        assert math.isnan(p.deny_rate0)
        assert 0 <= p.perils_rate0 <= 1 and p.dice_per_manifest0 >= 1


def test_stats_count_dice_per_manifested_power(tiny):
    # all-in casts Smite with every die; the whole pool is spent on the one power.
    pairs = tournament(tiny, ["all-in", "deny-never"], 2000, 1000, exact=False, exploit=False).pairs
    p = pairs[0]
    st = p.stats
    assert st.attempts[0] == 2000  # one attempt per game: Smite, all dice
    assert p.dice_per_manifest0 == pytest.approx(st.dice[0] / st.manifests[0])
    assert st.deny_attempts[1] == 0 and math.isnan(p.deny_rate1)
    # The pool is D6 + ML 1 = 2..7 dice (7E-3.1): mean 4.5 dice per attempt (2000 games; a pool
    # of D6 alone or D6 + 2 is 10 standard errors away).
    assert st.dice[0] / st.attempts[0] == pytest.approx(4.5, abs=Z99 * 1.708 / math.sqrt(2000))


# ----------------------------------------------------------------------------- statistics
def test_agent_against_itself_scores_zero_over_both_seats(single):
    # Common random numbers: both seat orders of the same agent are the same games.
    pairs = tournament(
        single, ["double-wc", "double-wc"], 200, 11, exact=False, exploit=False
    ).pairs
    both = (pairs[0].scores - pairs[1].scores) / 2
    m, half = mean_ci(both, z=Z99)
    assert abs(m) <= half or m == 0.0
    # With independent games (different seeds per seat order) a stochastic agent still averages
    # 0 within its 99% interval: 400 games per seat.
    a = tournament(single, ["random", "random"], 400, 0, exact=False, exploit=False).pairs[0]
    b = tournament(single, ["random", "random"], 400, 10_000, exact=False, exploit=False).pairs[1]
    m, half = mean_ci((a.scores - b.scores) / 2, z=Z99)
    assert abs(m) <= half
    # ... while a seat alone is far from 0: the caster's side (seat 0) scores.
    assert a.mean_score - Z99 * a.ci95 / 1.96 > 0


def test_sampled_mean_matches_hand_computed_exact_value(tiny):
    names = ["double-wc", "all-in"]
    policies = [resolve_policy(n, tiny) for n in names]
    exact = hand_value(tiny, policies)
    p = tournament(tiny, names, 2000, 5, exact=False, exploit=False).pairs[0]
    assert abs(p.mean_score - exact) <= Z99 * p.ci95 / 1.959964, (p.mean_score, exact)
    # An off-by-one rule (e.g. Smite wounding on 5+ instead of 4+) moves the mean by far more
    # than the interval: the interval is tight.
    assert p.ci95 < 0.1


def test_exact_scores_come_from_the_solver(tiny):
    pytest.importorskip("psygym_agents.solvers.evaluate")
    from psygym_agents.solvers.evaluate import exploitability

    names = ["double-wc", "all-in", "deny-never"]
    ev = tournament(tiny, names, 400, 1)
    pairs = ev.pairs
    policies = {n: resolve_policy(n, tiny) for n in names}
    for p in pairs:
        hand = hand_value(tiny, [policies[p.agent0], policies[p.agent1]])
        assert p.exact_score == pytest.approx(hand, abs=1e-9)
        assert abs(p.mean_score - p.exact_score) <= Z99 * p.ci95 / 1.959964 + 1e-12
    assert ev.game_value is not None
    assert ev.exploitability["double-wc"] == pytest.approx(
        exploitability(tiny, policies["double-wc"]), abs=1e-9
    )
    for name in names:
        b0, b1 = ev.best_response[name]
        # A best response does at least as well as the game value in either seat.
        assert b0 <= ev.game_value + 1e-9 <= b1 + 2e-9


def test_unsolved_games_still_get_exact_scores_of_pairs_whose_tree_is_small(tiny):
    pytest.importorskip("psygym_agents.solvers.evaluate")
    names = ["double-wc", "all-in", "random"]
    # A state limit too small for the whole game: no game value, no best responses...
    ev = tournament(tiny, names, 10, 0, max_states=500)
    pairs = ev.pairs
    assert ev.game_value is None and set(ev.exploitability.values()) == {None}
    assert any("not solved" in n for n in ev.notes)
    assert ev.stochastic == ["random"]
    # ... but a pair's own tree is smaller than the game's: every pairing's exact score is
    # there, the random agent's mixed choices weighted by their probabilities.
    policies = {n: resolve_policy(n, tiny) for n in names}
    for p in pairs:
        hand = hand_value(tiny, [policies[p.agent0], policies[p.agent1]])
        assert p.exact_score == pytest.approx(hand, abs=1e-9), (p.agent0, p.agent1)
    # A limit the random agent's first pairing (380 states) does not fit: none of its pairings
    # is tried further, and a note says why; double-wc against all-in (159 states) fits.
    ev = tournament(tiny, names, 10, 0, max_states=500, pilot_states=300)
    exact = {(p.agent0, p.agent1): p.exact_score for p in ev.pairs}
    assert exact[("double-wc", "all-in")] is not None
    assert all(v is None for k, v in exact.items() if "random" in k)
    assert any(n.startswith("no exact scores for pairings with agents that choose at random "
                            "(random) when the whole game is not solved (more than 300 states")
               for n in ev.notes), ev.notes  # fmt: skip
    # With the pilot limit too small for any pair, there are no exact values at all, and a note.
    ev = tournament(tiny, names, 10, 0, max_states=500, pilot_states=100)
    assert all(p.exact_score is None for p in ev.pairs)
    assert any("no exact scores" in n for n in ev.notes)


# ----------------------------------------------------------------------------- seeds
def test_common_random_numbers_give_every_pairing_the_same_first_roll(single):
    def first_roll(names, seed):
        rolls = []

        def on_step(_s, _a, events):
            rolls.extend(e.get("roll") for e in events if e.kind == "pools")

        play_crn(single, [resolve_policy(n, single) for n in names], seed, on_step=on_step)
        return rolls[0]

    for seed in range(20):
        rolls = {
            first_roll(n, seed)
            for n in (["double-wc", "all-in"], ["random", "minimum"], ["all-in", "random"])
        }
        assert len(rolls) == 1
    assert len({first_roll(["double-wc", "all-in"], s) for s in range(20)}) > 1


def test_same_seed_same_numbers_and_workers_do_not_change_them(single):
    names = ["double-wc", "all-in", "random"]
    one = tournament(single, names, 40, 7, exact=False, exploit=False).pairs
    two = tournament(single, names, 40, 7, workers=2, exact=False, exploit=False).pairs
    again = tournament(single, names, 40, 7, exact=False, exploit=False).pairs
    other = tournament(single, names, 40, 8, exact=False, exploit=False).pairs
    assert csv_text(one) == csv_text(two) == csv_text(again)
    assert csv_text(one) != csv_text(other)
    for a, b in zip(one, two):
        assert np.array_equal(a.scores, b.scores)
        assert a.stats.dice == b.stats.dice and a.stats.denied == b.stats.denied


def test_workers_give_the_same_exact_values(tiny):
    pytest.importorskip("psygym_agents.solvers.evaluate")
    one = tournament(tiny, ["double-wc", "minimum"], 30, 2)
    two = tournament(tiny, ["double-wc", "minimum"], 30, 2, workers=2)
    assert json.dumps(one.to_json()) == json.dumps(two.to_json())


def test_bad_input_is_a_clear_error(single):
    with pytest.raises(ValueError, match="known agents"):
        tournament(single, ["double-wc", "no-such-agent"], 5, 0)
    with pytest.raises(ValueError, match="at least one agent"):
        tournament(single, [], 5, 0)


# ----------------------------------------------------------------------------- CLI
def _rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_cli_writes_results_with_one_row_per_pairing_and_seat(tmp_path: Path):
    runner = CliRunner()
    args = ["evaluate", "--edition", "7th", "--scenario", "single-phase", "--agents",
            "double-wc,all-in,minimum", "--episodes", "12", "--seed", "4", "--runs-dir",
            str(tmp_path), "--format", "csv", "--no-exact"]  # fmt: skip
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    (run,) = tmp_path.glob("evaluate-*")
    for name in ("results.csv", "results.json", "config.json", "command.txt"):
        assert (run / name).is_file()
    text = (run / "results.csv").read_text()
    rows = _rows(text)
    assert list(rows[0]) == list(CSV_COLUMNS)
    assert len(rows) == 6 and {(r["agent0"], r["agent1"]) for r in rows} == {
        (a, b) for a in ("double-wc", "all-in", "minimum")
        for b in ("double-wc", "all-in", "minimum") if a != b
    }  # fmt: skip
    assert all(r["episodes"] == "12" for r in rows)
    assert text in result.stdout  # --format csv prints the same table
    doc = json.loads((run / "results.json").read_text())
    assert doc["seed"] == 4 and len(doc["pairs"]) == 6
    # Same seed, same numbers: run again and compare the files.
    runner.invoke(app, args)
    runs = sorted(tmp_path.glob("evaluate-*"))
    assert len(runs) == 2
    assert (runs[0] / "results.csv").read_text() == (runs[1] / "results.csv").read_text()


def test_cli_reports_exact_values_where_solvable(tmp_path: Path, tiny_path: Path):
    pytest.importorskip("psygym_agents.solvers.evaluate")
    result = CliRunner().invoke(app, [
        "evaluate", "--edition", "7th", "--scenario", str(tiny_path), "--agents",
        "double-wc,all-in", "--episodes", "10", "--runs-dir", str(tmp_path), "--format", "json",
        "--workers", "2",
    ])  # fmt: skip
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["game_value"] is not None
    assert all(p["exact_score"] is not None for p in doc["pairs"])
    assert set(doc["exploitability"]) == {"double-wc", "all-in"}


def test_cli_a_killed_round_robin_resumes_with_the_same_numbers(tmp_path: Path, tiny_path: Path):
    pytest.importorskip("psygym_agents.solvers.evaluate")
    runner = CliRunner()
    args = ["evaluate", "--edition", "7th", "--scenario", str(tiny_path), "--agents",
            "double-wc,all-in", "--episodes", "10", "--format", "json"]  # fmt: skip
    whole = runner.invoke(app, [*args, "--runs-dir", str(tmp_path / "whole")])
    assert whole.exit_code == 0, whole.output
    (run,) = (tmp_path / "whole").glob("evaluate-*")
    assert "a killed run goes on with --resume" in whole.stderr
    lines = (run / "tasks.jsonl").read_text().splitlines()
    kinds = [json.loads(x)["task"][0] for x in lines]
    # Game batches of both seat orders, the game's value, two exact scores, four best responses.
    counts = {k: kinds.count(k) for k in set(kinds)}
    assert counts.pop("games") >= 2 and counts == {"value": 1, "exact": 2, "br": 4}
    # Killed with two tasks done, halfway through writing the third.
    (run / "tasks.jsonl").write_text("\n".join(lines[:2]) + "\n" + lines[2][:20])
    (run / "results.json").unlink()
    again = runner.invoke(app, [*args, "--resume", str(run)])
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout) == json.loads(whole.stdout)
    after = (run / "tasks.jsonl").read_text().splitlines()
    # The two recorded tasks were not run again; each other task was run once.
    assert after[:2] == lines[:2] and len(after) == len(lines)
    assert sorted(json.loads(x)["task"] for x in after) == sorted(
        json.loads(x)["task"] for x in lines
    )
    # Other workers split the games into other batches: those are played again, same numbers.
    (run / "tasks.jsonl").write_text("\n".join(lines[:2]) + "\n")
    split = runner.invoke(app, [*args, "--resume", str(run), "--workers", "2"])
    assert split.exit_code == 0, split.output
    assert json.loads(split.stdout) == json.loads(whole.stdout)
    other = runner.invoke(app, [*args[:-2], "--seed", "5", "--resume", str(run)])
    assert other.exit_code == 2 and "other settings (seed)" in other.output
    assert "Traceback" not in other.output


def test_cli_bad_agent_is_one_line_and_exit_code_2(tmp_path: Path):
    result = CliRunner().invoke(app, ["evaluate", "--agents", "double-wc,nobody", "--episodes",
                                      "2", "--runs-dir", str(tmp_path)])  # fmt: skip
    assert result.exit_code == 2
    assert "nobody" in result.output and "Traceback" not in result.output


# ----------------------------------------------------------------------------- seats, notes, width
def test_an_agent_limited_to_one_seat_never_plays_the_other(single):
    ev = tournament(single, ["double-wc", "all-in", "minimum"], 4, 0,
                    seats={"minimum": (0,)}, exact=False, exploit=False)  # fmt: skip
    orders = {(p.agent0, p.agent1) for p in ev.pairs}
    assert not any(b == "minimum" for _, b in orders)
    assert {("minimum", "double-wc"), ("minimum", "all-in")} <= orders
    assert len(orders) == 4  # 6 seat orders, less the two with minimum in seat 1
    assert pairings(3, seats={0: (0,), 1: (1,)}) == [(0, 1), (0, 2), (2, 1)]
    with pytest.raises(ValueError, match="not an agent"):
        tournament(single, ["double-wc", "all-in"], 2, 0, seats={"nobody": (0,)})
    with pytest.raises(ValueError, match="no pairing"):
        tournament(single, ["double-wc", "all-in"], 2, 0, seats={"double-wc": (1,),
                                                                 "all-in": (1,)})  # fmt: skip


def test_exact_players_are_not_counted_among_agents_that_choose_at_random(tiny):
    plain = tournament(tiny, ["double-wc", "random"], 4, 0, exact=False, exploit=False)
    assert plain.stochastic == ["random"]
    # An equilibrium mix (optimal at a secret bid) is declared exact: no "choose at random".
    mixed = tournament(tiny, ["double-wc", "random"], 4, 0, exact=False, exploit=False,
                       exact_players=["random"])  # fmt: skip
    assert mixed.stochastic == []


@pytest.mark.parametrize("fmt_agents", ["save-deny-for-best,best-power-first,random"])
def test_cli_table_fits_80_columns_with_every_name_in_full(tmp_path: Path, monkeypatch,
                                                           fmt_agents: str):  # fmt: skip
    from psygym_experiments.common import console

    monkeypatch.setattr(console, "width", 80)
    result = CliRunner().invoke(app, [
        "evaluate", "--edition", "8th", "--scenario", "single-phase", "--agents", fmt_agents,
        "--episodes", "1000", "--runs-dir", str(tmp_path), "--no-exact",
    ])  # fmt: skip
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80
    rows = [line.split() for line in lines]
    for name in fmt_agents.split(","):
        assert sum(name in row for row in rows) == 4  # two pairings a seat, each name whole
    assert any("W/D/L" in line for line in lines) and any("deny 1" in line for line in lines)
