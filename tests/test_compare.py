"""``psygym compare`` and its report: files, one CSV row per pairing and seat, same seed same
numbers, the leaderboard arithmetic, and the double-wc statement against the exact optimum.

The runs use a tiny 7th-edition scenario (one Librarian with Smite against a squad, one Psychic
phase; 7E-3 to 7E-7) that the exact solver solves in a second or two, and few games.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest
from helpers import TINY_SEVENTH
from psygym_experiments.cli import app
from psygym_experiments.harness.compare_field import plan
from psygym_experiments.harness.compare_run import run_compare
from psygym_experiments.harness.games import GameStats
from psygym_experiments.harness.standings import head_to_head, leaderboard
from psygym_experiments.harness.tournament_results import CSV_COLUMNS, Evaluation, PairResult
from psygym_experiments.report import DEFINITIONS
from typer.testing import CliRunner

TINY = TINY_SEVENTH

FIELD = "double-wc,all-in,minimum,random,tuned,ppo,optimal"


@pytest.fixture(scope="module")
def tiny_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("scenario") / "tiny.toml"
    path.write_text(TINY)
    return path


def _rows(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(path.read_text())))


# ----------------------------------------------------------------------------- arithmetic
def _pair(i, j, labels, scores, exact=None):
    stats = GameStats(games=len(scores), scores=list(scores))
    return PairResult.from_games(labels[i], labels[j], np.asarray(scores, dtype=float), stats,
                                 index0=i, index1=j, exact=exact)  # fmt: skip


def test_leaderboard_averages_every_opponent_and_seat():
    labels = ["a", "b", "c"]
    # Seat-0 scores of each pairing, two games each.
    data = {(0, 1): [2, 4], (1, 0): [0, 2], (0, 2): [1, 1], (2, 0): [-1, -3],
            (1, 2): [0, 0], (2, 1): [2, 2]}  # fmt: skip
    pairs = [_pair(i, j, labels, s, exact=float(np.mean(s))) for (i, j), s in data.items()]
    ev = Evaluation("7th", "x", labels, labels, 2, 0, pairs)
    board = {r.label: r for r in leaderboard(ev)}
    # a: +3, -1, +1, +2 per pairing -> games (2 + -0 + 1 + 1)/4, (4 - 2 + 1 + 3)/4
    assert board["a"].mean == pytest.approx(np.mean([(2 - 0 + 1 + 1) / 4, (4 - 2 + 1 + 3) / 4]))
    assert board["a"].exact == pytest.approx((3 - 1 + 1 + 2) / 4)
    # Zero-sum: the leaderboard scores of a full round-robin add up to 0.
    assert sum(r.mean for r in board.values()) == pytest.approx(0)
    assert [r.rank for r in leaderboard(ev)] == [1, 2, 3]
    assert leaderboard(ev)[0].label == "a"
    m, _, x = head_to_head(ev, 0, 1)
    assert m == pytest.approx((3 - 1) / 2) and x == pytest.approx(1.0)
    assert "Leaderboard score" in DEFINITIONS


def test_plan_takes_each_default_scenario_and_single_phase():
    pairs, _ = plan(["7th"], None)
    assert pairs == [("7th", "duel"), ("7th", "single-phase")]
    everything, _ = plan(None, None)
    assert everything[0] == ("7th", "duel")
    with pytest.raises(ValueError, match="unknown edition"):
        plan(["9th"], None)
    with pytest.raises(ValueError, match="no scenario"):
        plan(["7th"], "no-such-scenario")


# ----------------------------------------------------------------------------- runs
def test_compare_quick_writes_report_and_one_row_per_pairing_and_seat(tmp_path, tiny_path):
    runner = CliRunner()
    args = ["compare", "--quick", "--edition", "7th", "--scenario", str(tiny_path),
            "--episodes", "6", "--seed", "3", "--runs-dir", str(tmp_path), "--agents", FIELD,
            "--tune-trials", "1", "--solve-seconds", "120", "--workers", "1"]  # fmt: skip
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    (run,) = tmp_path.glob("compare-*")
    for name in ("report.md", "results.csv", "results.json", "config.json", "command.txt",
                 "leaderboard-7th-tiny.png", "head-to-head-7th-tiny.png"):  # fmt: skip
        assert (run / name).is_file(), name
    doc = json.loads((run / "results.json").read_text())
    (sc,) = doc["scenarios"]
    labels = [a["label"] for a in sc["agents"]]
    # The PPO agent is skipped under --quick when there is no pretrained model, and says so.
    assert "ppo" not in labels
    assert any("PPO agent left out" in n for n in sc["notes"])
    assert {"double-wc", "all-in", "minimum", "random", "optimal"} <= set(labels)
    rows = _rows(run / "results.csv")
    assert list(rows[0]) == ["edition", "scenario", *CSV_COLUMNS]
    n = len(labels)
    assert len(rows) == n * (n - 1)
    assert {(r["agent0"], r["agent1"]) for r in rows} == {
        (a, b) for a in labels for b in labels if a != b
    }
    assert all(r["episodes"] == "6" for r in rows)
    # --quick leaves exact scores out; the game value still decides on the optimal agent.
    assert sc["game_value"] is not None
    # The tuned parameters were saved for the next run.
    assert (tmp_path / "tuned" / "7th-tiny-quick" / "best.json").is_file()
    # The leaderboard is printed; the report states the gap to the best agent and the optimum.
    assert "double-wc" in result.stdout and "exploitability" in result.stdout
    report = (run / "report.md").read_text()
    assert "the exact optimum (both players optimal) is" in report and "## Headline" in report


def test_double_wc_statement_matches_the_exact_numbers(tmp_path, tiny_path):
    pytest.importorskip("psygym_agents.solvers.evaluate")
    from psygym_agents.solvers.evaluate import policy_value
    from psygym_agents.solvers.expectiminimax import Solver

    from psygym.editions import load
    from psygym.policies import resolve_policy

    # Not --quick (which leaves exact scores out); no tuned or PPO agent, so nothing to train.
    run = run_compare(["7th"], scenario=str(tiny_path), episodes=4, seed=0, runs_dir=tmp_path,
                      workers=1, agents=["double-wc", "all-in", "optimal"], solve_seconds=120,
                      show_progress=False)  # fmt: skip
    doc = json.loads((run / "results.json").read_text())
    rules = load("7th", tiny_path)
    v = Solver(rules).value()
    dwc = policy_value(
        rules, [resolve_policy("double-wc", rules), resolve_policy("optimal", rules)]
    )
    (sc,) = doc["scenarios"]
    assert sc["game_value"] == pytest.approx(v, abs=1e-9)
    line = next(s for s in sc["statement"] if "falls short of the optimum" in s)
    assert f"optimum (both players optimal) is {v:+.3f}" in line
    short = float(re.search(r"falls short of the optimum by ([0-9.]+)", line).group(1))
    assert short == pytest.approx(v - dwc, abs=1e-3)
    assert short > 0  # double-wc is not optimal here
    # Its share is of the worst agent's shortfall, never of the optimum itself.
    worst = max(v - p["exact_score"] for p in sc["pairs"]
                if p["agent1"] == "optimal" and p["agent0"] != "optimal")  # fmt: skip
    share = ("the largest shortfall in the field" if worst - (v - dwc) < 1e-6
             else f"{(v - dwc) / worst:.0%} of the worst agent's shortfall")  # fmt: skip
    assert share in line and f"{(v - dwc) / abs(v):.1%}" not in line


def test_same_seed_same_report_numbers_and_workers_do_not_change_them(tmp_path, tiny_path):
    kwargs = dict(scenario=str(tiny_path), quick=True, episodes=8, seed=5, runs_dir=tmp_path,
                  agents=["double-wc", "all-in", "minimum"], solve_seconds=120,
                  show_progress=False)  # fmt: skip
    first = run_compare(["7th"], workers=1, **kwargs)
    second = run_compare(["7th"], workers=2, **kwargs)
    assert first != second
    assert (first / "results.csv").read_text() == (second / "results.csv").read_text()
    a = json.loads((first / "results.json").read_text())
    b = json.loads((second / "results.json").read_text())
    for key in ("headline", "notes"):
        assert a[key] == b[key]
    assert a["scenarios"][0]["leaderboard"] == b["scenarios"][0]["leaderboard"]
    third = run_compare(["7th"], workers=1, **{**kwargs, "seed": 6})
    assert (third / "results.csv").read_text() != (first / "results.csv").read_text()


def test_compare_bad_edition_is_a_clean_error(tmp_path):
    result = CliRunner().invoke(app, ["compare", "--quick", "--edition", "9th", "--runs-dir",
                                      str(tmp_path)])  # fmt: skip
    assert result.exit_code == 2
    assert "unknown edition" in result.output and "Traceback" not in result.output


# ----------------------------------------------------------------------------- answers
def _table_rows(md: str, heading: str) -> list[list[str]]:
    """Body rows of every Markdown table that follows a heading starting with ``heading``."""
    out, inside, header_seen = [], False, 0
    for line in md.splitlines():
        if line.startswith("#"):
            inside, header_seen = line.lstrip("# ").startswith(heading), 0
            continue
        if inside and line.startswith("|"):
            header_seen += 1
            if header_seen > 2:  # past the header and the alignment row
                out.append([c.strip() for c in line.strip("|").split("|")])
    return out


def test_report_answers_every_edition_describes_every_agent_and_names_no_best_in_noise(tmp_path):
    agents = ["double-wc", "all-in", "deny-never", "smite-first", "deny-always", "random",
              "optimal"]  # fmt: skip
    run = run_compare(["7th", "8th"], scenario="single-phase", quick=True, episodes=3, seed=0,
                      runs_dir=tmp_path, workers=1, agents=agents,
                      show_progress=False)  # fmt: skip
    md = (run / "report.md").read_text()
    answers = md.split("## Answers", 1)[1].split("\n## ", 1)[0]
    for eid in ("7th", "8th"):
        assert f"### {eid} edition" in answers
    assert "**Which agent is best?**" in answers
    # The 7th edition's exact tables, each with the situation it assumes.
    assert "How many dice for warp charge 2" in answers and "When should I deny" in answers
    assert answers.count("*Assumes:*") >= 3
    rows = _table_rows(md, "Leaderboard")
    assert rows and all(len(r) == 8 and r[-1] for r in rows), "every agent row has a description"
    assert not any("built-in rule of thumb" in r[-1] for r in rows)
    # Which-is-best lines: a sampled "is best" only with an interval that excludes 0.
    for line in answers.splitlines():
        if "is best with" in line and "exact" not in line:
            g, h = map(float, re.search(r"([0-9.]+) ± ([0-9.]+) ahead", line).groups())
            assert g > h
        if "no measurable difference" in line:
            assert "is best" not in line


def test_best_answer_says_no_measurable_difference_when_the_interval_covers_zero():
    from types import SimpleNamespace

    from psygym_experiments.report import scenario_doc
    from psygym_experiments.report_answers import best_answer

    labels = ["a", "b", "c"]
    rng = np.random.default_rng(0)
    noisy = {k: rng.normal(0, 3, 40) for k in [(0, 1), (1, 0), (0, 2), (2, 0), (1, 2), (2, 1)]}
    noisy[(0, 2)] += 0.2  # a is a little better than b against c: far inside the noise
    pairs = [_pair(i, j, labels, s) for (i, j), s in noisy.items()]
    entries = [SimpleNamespace(label=x, spec=x, kind="heuristic", source="test",
                               description=f"plays {x}", seats=(0, 1)) for x in labels]  # fmt: skip
    ev = Evaluation("7th", "x", labels, labels, 40, 0, pairs)
    res = SimpleNamespace(edition="7th", scenario="x", description="", entries=entries,
                          evaluation=ev, game_value=None, value_note="", seconds=0.0,
                          notes=[], timing={})  # fmt: skip
    text = best_answer(res, scenario_doc(res))
    assert "no measurable difference" in text and "is best" not in text
    # With a clear gap the best agent is named, with its interval.
    big = {k: (v + (5.0 if k[0] == 0 else -5.0 if k[1] == 0 else 0.0)) for k, v in noisy.items()}
    res.evaluation = Evaluation("7th", "x", labels, labels, 40, 0,
                                [_pair(i, j, labels, s) for (i, j), s in big.items()])  # fmt: skip
    text = best_answer(res, scenario_doc(res))
    assert "`a` is best with" in text and "beyond noise" in text


def test_state_graph_values_equal_the_solver_and_identical_players_merge(tiny_path):
    from psygym_agents.solvers.evaluate import best_response_value, policy_value
    from psygym_agents.solvers.expectiminimax import Solver
    from psygym_experiments.harness.compare_graph import build_graph, exact_field

    from psygym.editions import load
    from psygym.policies import resolve_policy

    rules = load("7th", tiny_path)
    graph = build_graph(rules)
    pols = [resolve_policy(n, rules) for n in ("double-wc", "all-in", "random")]
    optimal = resolve_policy("optimal", rules)
    field = exact_field(graph, [*pols, None], [(0, 1), (1, 2), (2, 3), (3, 0)], [0, 2])
    assert field.game_value == pytest.approx(Solver(rules).value(), abs=1e-12)
    everyone = [*pols, optimal]
    for (i, j), v in field.pairs.items():
        assert v == pytest.approx(policy_value(rules, [everyone[i], everyone[j]]), abs=1e-12)
    for i, (b0, b1) in field.best_response.items():
        assert b0 == pytest.approx(best_response_value(rules, pols[i], 0), abs=1e-12)
        assert b1 == pytest.approx(best_response_value(rules, pols[i], 1), abs=1e-12)
    from psygym_experiments.harness.compare_graph import GraphTooLarge

    with pytest.raises(GraphTooLarge, match="more than 10 states"):
        build_graph(rules, max_states=10)


def test_ppo_is_scored_only_on_its_trained_seat():
    from psygym_experiments.harness.standings import agent_games, leaderboard

    labels = ["a", "b", "ppo"]
    data = {(0, 1): [1, 1], (1, 0): [1, 1], (0, 2): [3, 3], (2, 0): [-9, -9],
            (1, 2): [2, 2], (2, 1): [-7, -7]}  # fmt: skip
    pairs = [_pair(i, j, labels, s) for (i, j), s in data.items()]
    ev = Evaluation("7th", "x", labels, labels, 2, 0, pairs)
    seats = {"ppo": (0,)}
    board = {r.label: r for r in leaderboard(ev, seats=seats)}
    # ppo counts only its seat-0 games (-9 and -7 as seat 0); a and b leave out games vs ppo.
    assert board["ppo"].mean == pytest.approx((-9 - 7) / 2)
    assert board["a"].mean == pytest.approx((1 - 1) / 2) == board["b"].mean
    assert agent_games(pairs, 0).mean() != board["a"].mean  # without seats ppo's games count


def test_one_seat_agents_play_only_their_seat_and_head_to_head_says_so():
    from psygym_experiments.harness.compare_field import Entry
    from psygym_experiments.harness.compare_run import _field_pairings
    from psygym_experiments.harness.standings import head_to_head
    from psygym_experiments.report import _h2h_cell

    entries = [Entry("a", "a", "heuristic"), Entry("ppo-seat0", "x", "ppo", seats=(0,)),
               Entry("ppo-seat1", "y", "ppo", seats=(1,))]  # fmt: skip
    order = _field_pairings(entries)
    assert (0, 1) not in order and (2, 0) not in order and (2, 1) not in order
    assert set(order) == {(0, 2), (1, 0), (1, 2)}
    labels = [e.label for e in entries]
    data = {(0, 2): [2, 4], (1, 0): [1, 3], (1, 2): [5, 5]}
    ev = Evaluation("7th", "x", labels, labels, 2, 0,
                    [_pair(i, j, labels, s) for (i, j), s in data.items()])  # fmt: skip
    # a met ppo-seat0 only with ppo-seat0 in seat 0: a's score is minus that seat's.
    assert head_to_head(ev, 0, 1)[0] == pytest.approx(-2.0)
    assert head_to_head(ev, 1, 0)[0] == pytest.approx(2.0)
    assert head_to_head(ev, 0, 2)[0] == pytest.approx(3.0)
    assert _h2h_cell({"a": {"b": {"mean": None, "exact": None}}}, "a", "b") == "-"


def test_agents_that_play_alike_still_merge_beside_one_seat_agents():
    from psygym_experiments.harness.standings import twins

    labels = ["a", "b", "c", "ppo-seat0"]
    # a and b play alike against c and against ppo-seat0 (which meets them in seat 0 only).
    data = {(0, 2): [1, 2], (2, 0): [0, 1], (1, 2): [1, 2], (2, 1): [0, 1], (0, 1): [0, 0],
            (1, 0): [0, 0], (3, 0): [2, 2], (3, 1): [2, 2], (3, 2): [1, 1]}  # fmt: skip
    ev = Evaluation("7th", "x", labels, labels, 2, 0,
                    [_pair(i, j, labels, s) for (i, j), s in data.items()])  # fmt: skip
    assert twins(ev, ["a", "b", "c"]) == [["a", "b"], ["c"]]


def test_unsolved_hidden_information_note_recommends_no_agent_outside_the_field(tmp_path):
    from psygym_agents.solvers import has_hidden_information
    from psygym_experiments.harness.compare_run import unsolved_note
    from psygym_experiments.harness.solving import exact_game_value

    from psygym.edition import editions
    from psygym.editions import load

    hidden = [load(e.id) for e in editions() if has_hidden_information(load(e.id))]
    assert hidden, "no edition with hidden information to check"
    solved = exact_game_value(hidden[0], 1000, 5.0)
    assert solved.value is None
    note = unsolved_note(hidden[0], solved).note
    assert "hidden information" in note and "optimal" not in note  # no agent recommended
    assert "use the 'optimal' agent" in solved.note  # the solver's own message does
    # Through the whole scenario (exact scores asked for, as without --quick): no note points
    # to an agent outside the field.
    from psygym_experiments.harness.compare_field import CompareSettings
    from psygym_experiments.harness.compare_run import compare_scenario

    edition = hidden[0].edition
    name = hidden[0].scenario.name
    settings = CompareSettings(
        editions=[edition], scenarios=[(edition, name)], episodes=2, seed=0, workers=1,
        quick=False, tune_trials=1, train_steps=0, max_states=1000, solve_seconds=5.0,
        runs_dir=str(tmp_path), agents=["pass", "cast-biggest", "random"],
    )  # fmt: skip
    res = compare_scenario(edition, name, settings, show_progress=False)
    labels = {e.label for e in res.entries}
    assert "optimal" not in labels and res.notes
    assert not any("use the" in n for n in res.notes), res.notes


def test_search_plays_the_leader_of_an_unsolved_duel_head_to_head(tmp_path):
    """Where search is too slow for the round-robin it meets the leader over both seats."""
    from psygym_experiments.harness.compare_field import CompareSettings
    from psygym_experiments.harness.compare_run import compare_scenario
    from psygym_experiments.harness.standings import board_of, search_match_sentence
    from psygym_experiments.report import scenario_doc
    from psygym_experiments.report_answers import answers_md

    def settings(**kw):
        base = dict(
            editions=["rt"], scenarios=[("rt", "duel")], episodes=2, seed=3, workers=1,
            quick=False, tune_trials=1, train_steps=0, max_states=1000, solve_seconds=0.5,
            runs_dir=str(tmp_path), search_games=3,
        )  # fmt: skip
        return CompareSettings(**{**base, **kw})

    res = compare_scenario("rt", "duel", settings(), show_progress=False)
    match = res.search_match
    assert match is not None and res.game_value is None  # not solved within 1000 states
    both = [r.label for r in board_of(res) if (r.label, (0, 1)) in
            {(e.label, tuple(e.seats)) for e in res.entries}]  # fmt: skip
    assert match["agent"] == "search" and match["opponent"] == both[0]
    assert match["games_per_seat"] == 3
    assert match["margin"] == pytest.approx((match["seat0_mean"] + match["seat1_mean"]) / 2)
    assert "search" not in {e.label for e in res.entries}
    assert any("plays the leader head to head" in n for n in res.notes)
    doc = scenario_doc(res)
    line = search_match_sentence("rt duel", match)
    assert doc["search_match"] == match and line in doc["statement"]
    assert f"- {line}" in answers_md([res], [doc], {}, "double-wc")
    for off in (settings(search_games=0), settings(quick=True), settings(search=True)):
        assert compare_scenario("rt", "duel", off, show_progress=False).search_match is None


def test_search_match_sentence_names_a_winner_only_beyond_noise():
    from psygym_experiments.harness.standings import search_match_sentence

    base = {"opponent": "bid-all", "opponent_kind": "heuristic", "games_per_seat": 10}
    clear = search_match_sentence("x", {**base, "margin": 1.5, "ci95": 1.0, "decided": True})
    unclear = search_match_sentence("x", {**base, "margin": 0.5, "ci95": 1.0, "decided": False})
    lost = search_match_sentence("x", {**base, "margin": -1.5, "ci95": 1.0, "decided": True})
    assert "search beats bid-all" in clear and "+1.50 ± 1.00" in clear
    assert "no clear difference" in unclear and "beats" not in unclear
    assert "search loses to bid-all" in lost


# ----------------------------------------------------------------------------- one rank
def _ranked_field():
    """A solved field whose seat-0-only model and two identical agents sit above double-wc.

    Strengths: optimal 2.5, a = a2 (identical play) 2, ppo-seat0 2.4 (seat 0 only), double-wc
    1, random -1; seat 0's edge 0.1 is the optimum. Every pairing has its exact score, so the
    ranks follow the exact values: optimal, a = a2, double-wc, random (ppo-seat0 not ranked).
    """
    from types import SimpleNamespace

    labels = ["double-wc", "a", "a2", "random", "ppo-seat0", "optimal"]
    strength = {"double-wc": 1.0, "a": 2.0, "a2": 2.0, "random": -1.0, "ppo-seat0": 2.4,
                "optimal": 2.5}  # fmt: skip
    seats = {"ppo-seat0": (0,)}
    rng = np.random.default_rng(1)
    same = {"a2": "a"}
    noise = {(x, y): rng.normal(0, 1, 30) for x in labels for y in labels}
    pairs = []
    for i, x in enumerate(labels):
        for j, y in enumerate(labels):
            if i == j or (y in seats and 1 not in seats[y]) or (x in seats and 0 not in seats[x]):
                continue
            exact = strength[x] - strength[y] + 0.1
            scores = exact + noise[(same.get(x, x), same.get(y, y))]
            pairs.append(_pair(i, j, labels, scores, exact=exact))
    entries = [SimpleNamespace(label=x, spec=x, kind="optimal" if x == "optimal" else
                               "ppo" if x.startswith("ppo") else "heuristic", source="test",
                               description=f"plays {x}", seats=seats.get(x, (0, 1)))
               for x in labels]  # fmt: skip
    ev = Evaluation("7th", "x", labels, labels, 30, 0, pairs, game_value=0.1)
    return SimpleNamespace(edition="7th", scenario="x", description="", entries=entries,
                           evaluation=ev, game_value=0.1, value_note="", seconds=0.0, notes=[],
                           timing={}, search_match=None)  # fmt: skip


def test_headline_answers_table_and_html_state_one_rank_and_a_meaningful_share(tmp_path):
    from types import SimpleNamespace

    from psygym_experiments.harness.standings import board_of
    from psygym_experiments.report import write_report

    res = _ranked_field()
    board = {r.label: r.rank for r in board_of(res)}
    assert board == {"optimal": 1, "a": 2, "a2": 2, "double-wc": 3, "random": 4,
                     "ppo-seat0": None}  # fmt: skip
    settings = SimpleNamespace(
        editions=["7th"], scenarios=[("7th", "x")], episodes=30, seed=0, workers=1, quick=False,
        solve_seconds=30.0, max_states=1000,
    )  # fmt: skip
    write_report(tmp_path, [res], settings)
    md = (tmp_path / "report.md").read_text()
    answers = md.split("## Answers", 1)[1].split("\n## ", 1)[0]
    headline = md.split("## Headline", 1)[1].split("\n## ", 1)[0]
    # The old report said "row 3 of 4" in the Answers and "rank 5 of 5" in the Headline (which
    # counted the seat-0 model and each twin).
    for section in (answers, headline):
        assert "rank 3 of 4" in section and "row " not in section
        assert not re.search(r"rank [0-9]+ of (?!4\b)", section)
    table = {r[1]: r[0] for r in _table_rows(md, "Leaderboard")}
    assert table == {"`optimal`": "1", "`a` = `a2`": "2", "`double-wc`": "3", "`random`": "4"}
    # Short of the optimum (+0.100) by 1.5: 1500% of the optimum, 43% of random's 3.5.
    for section, name in ((answers, "`random`"), (headline, "random")):
        assert f"by 1.500 (43% of the worst agent's shortfall: {name}, 3.500)" in section or (
            f"1.500 short of the optimum +0.100 (43% of the worst agent's shortfall: {name}, "
            "3.500)" in section
        )
        assert "%)" not in section.replace("shortfall", "") and "1500" not in section
    doc = json.loads((tmp_path / "results.json").read_text())
    (sc,) = doc["scenarios"]
    assert [r["rank"] for r in sc["rows"]] == [1, 2, 3, 4, None]
    # The HTML page is the same text: the same rank and share sentences.
    page = (tmp_path / "report.html").read_text()
    assert page.count("rank 3 of 4") == md.count("rank 3 of 4") == 2
    assert page.count("43% of the worst agent") == md.count("43% of the worst agent") == 2
    # The printed leaderboard numbers the same rows and leaves the seat-0 model unranked.
    from psygym_experiments.report import leaderboard_table

    (t,) = leaderboard_table(doc)
    assert list(t.columns[0].cells) == ["1", "2", "3", "4", "-"]


def test_shortfall_share_is_left_out_when_no_agent_falls_short():
    from psygym_experiments.harness.standings import optimum_shortfall

    rows = [{"agent0": "x", "agent1": "optimal", "exact_score": 0.0},
            {"agent0": "y", "agent1": "optimal", "exact_score": -0.2},
            {"agent0": "optimal", "agent1": "x", "exact_score": 0.5}]  # fmt: skip
    assert optimum_shortfall(rows, 0.0, "x") == (0.0, " (0% of the worst agent's shortfall: y, "
                                                  "0.200)")  # fmt: skip
    assert optimum_shortfall(rows, 0.0, "y") == (0.2, " (the largest shortfall in the field)")
    assert optimum_shortfall(rows[:1], 0.0, "x") == (0.0, "")  # nobody falls short: no share
    assert optimum_shortfall(rows, 0.0, "z") is None


def test_what_follows_the_games_in_the_background_gives_the_numbers_of_playing_it_in_place(
    tmp_path,
):
    """The exact values and search's match, left to the background, change no number."""
    from concurrent.futures import ThreadPoolExecutor

    from psygym_experiments.harness.compare_field import CompareSettings
    from psygym_experiments.harness.compare_run import collect, compare_scenario
    from psygym_experiments.harness.tournament import worker_pool

    settings = CompareSettings(
        editions=["rt"], scenarios=[("rt", "duel")], episodes=2, seed=3, workers=2,
        quick=False, tune_trials=1, train_steps=0, max_states=1000, solve_seconds=0.5,
        runs_dir=str(tmp_path), search_games=3,
    )  # fmt: skip
    with worker_pool(2) as pool, ThreadPoolExecutor(2) as matches:
        here = compare_scenario("rt", "duel", settings, pool=pool, show_progress=False)
        later = compare_scenario("rt", "duel", settings, pool=pool, show_progress=False,
                                 matches=matches)  # fmt: skip
        assert here.pending is None and later.pending is not None
        collect(later)
    assert later.pending is None and later.search_match is not None

    def numbers(res):
        match = {k: v for k, v in res.search_match.items() if k != "seconds"}
        return match, repr([p.row() for p in res.evaluation.pairs]), res.game_value  # NaN rates

    assert numbers(later) == numbers(here)
    assert later.timing["search_match"] == later.search_match["seconds"]


def test_duels_with_a_match_are_played_first_and_quick_keeps_the_plan_order(tmp_path):
    from psygym_experiments.harness.compare_field import CompareSettings
    from psygym_experiments.harness.compare_run import _play_order

    pairs, _ = plan(None, None)
    settings = CompareSettings(
        editions=[], scenarios=pairs, episodes=1, seed=0, workers=2, quick=False,
        tune_trials=1, train_steps=0, max_states=1000, solve_seconds=1.0, runs_dir=str(tmp_path),
    )  # fmt: skip
    order = _play_order(pairs, settings)
    assert sorted(order) == sorted(pairs)
    duels = [sc for sc in pairs if sc[1] != "single-phase"]
    assert order == duels + [sc for sc in pairs if sc not in duels]  # each kept in plan order
    settings.quick = True
    assert _play_order(pairs, settings) == pairs


# ----------------------------------------------------------------------------- shipped tuning
def test_every_compared_scenario_ships_tuned_parameters_that_load():
    from psygym_agents.parametric import make_tuned, shipped_tuned

    from psygym.edition import editions
    from psygym.editions import load

    for edition in editions():
        for scenario in ("default", "single-phase"):
            if scenario != "default" and scenario not in edition.scenario_names():
                continue
            path = shipped_tuned(edition.id, scenario)
            assert path is not None, (edition.id, scenario)
            doc = json.loads(path.read_text())
            rules = load(edition.id, scenario)
            assert doc["edition"] == edition.id and doc["scenario"] == rules.scenario.name
            assert make_tuned(rules, str(path)).name == f"tuned:{path}"


def test_shipped_tuned_parameters_are_for_shipped_scenarios_only(tmp_path):
    from psygym_agents.parametric import shipped_tuned

    own = tmp_path / "duel.toml"  # a player's file with a shipped scenario's name
    assert shipped_tuned("7th", str(own)) is None
    assert shipped_tuned("7th", "random:3") is None
    assert shipped_tuned("no-such-edition", "duel") is None
    assert shipped_tuned("7th", "duel") == shipped_tuned("7th", "default")


def test_compare_uses_the_shipped_tuned_parameters_and_says_so(tmp_path):
    from psygym_experiments.harness.compare_field import tuned_entry

    notes: list[str] = []
    entry = tuned_entry("8th", "single-phase", "single-phase", tmp_path, 1, 0, notes, quick=True)
    assert entry.spec.endswith("tuned-8th-single-phase.json")
    assert any("shipped in tuned-8th-single-phase.json" in n for n in notes)
    assert not (tmp_path / "tuned").exists()  # nothing was tuned
    saved = tmp_path / "tuned" / "8th-single-phase" / "best.json"
    saved.parent.mkdir(parents=True)
    saved.write_text(Path(entry.spec.split(":", 1)[1]).read_text())
    assert tuned_entry("8th", "single-phase", "single-phase", tmp_path, 1, 0, []).spec == (
        f"tuned:{saved}"  # parameters saved by a run take the shipped ones' place
    )
