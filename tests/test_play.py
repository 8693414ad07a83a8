"""``psygym play`` and ``psygym replay``: whole games driven through standard input, every edition.

Each game is played by the typer app with ``CliRunner(input=...)``: bad answers ("abc", "999",
"") must be re-prompted with what is allowed, the game must reach its end, the log must exist
and ``psygym replay`` must reach the same final state and score through the rules alone.
"""

from __future__ import annotations

import io
import json
import random
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from psygym_experiments.cli import app
from psygym_experiments.harness.odds_view import action_odds, percent
from psygym_experiments.play_advice import Advisor
from psygym_experiments.play_replay import read_log, replay_log
from psygym_experiments.play_session import (
    GameLog,
    PlaySession,
    state_digest,
    state_text,
)
from rich.console import Console
from typer.testing import CliRunner

from psygym.core import CHANCE, TERMINAL
from psygym.edition import get
from psygym.editions import available, load, scenario_names

runner = CliRunner()

BAD = "abc\n999\n\n"
"""Three bad answers: not a number, out of range, empty."""


def _importable(edition: str) -> bool:
    try:
        get(edition)
    except ValueError:
        return False
    return True


EDITIONS = [e for e in available() if _importable(e)]
EDITION_SCENARIOS = [(e, s) for e in EDITIONS for s in scenario_names(e)]


def test_all_four_editions_are_covered():
    assert set(EDITIONS) == {"rt", "2nd", "7th", "8th"}


def play(tmp_path: Path, *args: str, answers: str, opponent: str = "random") -> tuple[str, Path]:
    """Run ``psygym play`` with ``answers`` on standard input; return its output and log."""
    runs = tmp_path / "runs"
    before = set((runs / "games").glob("*.jsonl")) if (runs / "games").exists() else set()
    result = runner.invoke(
        app, ["play", *args, "--opponent", opponent, "--runs-dir", str(runs)], input=answers
    )
    assert result.exit_code == 0, result.output + repr(result.exception)
    logs = sorted(set((runs / "games").glob("*.jsonl")) - before)
    assert len(logs) == 1, logs
    return result.output, logs[0]


def lines_of(log: Path) -> list[dict]:
    return [obj for _, obj in read_log(log)]


def check_replay(log: Path) -> dict:
    """``psygym replay`` (full and quiet) reaches the logged final state and score."""
    end = lines_of(log)[-1]
    assert end["type"] == "end"
    full = runner.invoke(app, ["replay", str(log)])
    assert full.exit_code == 0, full.output
    assert "matches the log" in full.output
    quiet = runner.invoke(app, ["replay", str(log), "--quiet"])
    assert quiet.exit_code == 0, quiet.output
    assert "matches the log" in quiet.output
    assert len(quiet.output.splitlines()) <= 3  # no transcript
    result = replay_log(log, Console(file=io.StringIO()), quiet=True)
    assert state_digest(result.state) == end["state_sha256"]
    assert list(result.score) == pytest.approx(end["score"])
    assert result.steps == end["steps"]
    return end


# ----------------------------------------------------------------------------- whole games
FIRST_ACTION_SEEDS = {("7th", "single-phase", 1): 8}
"""Seeds where that seat gets a decision at all (with seed 7 the random caster of 7th
single-phase manifests nothing, so the denier is never asked)."""


@pytest.mark.parametrize("edition,scenario", EDITION_SCENARIOS)
@pytest.mark.parametrize("seat", [0, 1])
def test_first_action_game_through_stdin(tmp_path, edition, scenario, seat):
    """Bad input first, then "1" (the first legal action) every time, to the end of the game."""
    seed = FIRST_ACTION_SEEDS.get((edition, scenario, seat), 7)
    out, log = play(
        tmp_path,
        "--edition",
        edition,
        "--scenario",
        scenario,
        "--seat",
        str(seat),
        "--seed",
        str(seed),
        answers=BAD + "1\n" * 3000,
    )
    assert out.count("Not a valid choice") == 3
    assert "Not a valid choice: 'abc'" in out
    assert "Not a valid choice: '999'" in out
    assert "Not a valid choice: nothing" in out
    assert "Enter a number from 1 to" in out or "Enter 1 (the only choice)" in out
    assert "Game over." in out
    assert "Chance:" in out  # chance outcomes are shown
    lines = lines_of(log)
    if any(x.get("player") == 1 - seat for x in lines):
        assert "(AI: random):" in out  # the opponent's decisions are announced
    header, steps, end = lines[0], lines[1:-1], lines[-1]
    assert header["type"] == "header" and header["edition"] == edition
    assert header["seat"] == seat and header["seed"] == seed and header["opponent"] == "random"
    assert header["scenario"] == load(edition, scenario).scenario.name
    assert end["result"] == "finished" and end["terminal"] is True
    assert steps and all(s["type"] == "step" for s in steps)
    assert {s["player"] for s in steps} >= {"chance", seat}
    assert [s["n"] for s in steps] == list(range(1, len(steps) + 1))
    check_replay(log)


@pytest.mark.parametrize("edition,scenario", EDITION_SCENARIOS)
def test_random_choices_game_through_stdin(tmp_path, edition, scenario):
    """Random numbers 1-6 (some out of range, so re-prompted) drive a longer game to its end."""
    rng = random.Random(f"{edition}-{scenario}")
    answers = BAD + "".join(f"{rng.randint(1, 6)}\n" for _ in range(6000))
    out, log = play(
        tmp_path,
        "--edition",
        edition,
        "--scenario",
        scenario,
        "--seed",
        "11",
        answers=answers,
    )
    assert "Game over." in out
    end = check_replay(log)
    assert end["result"] == "finished"


@pytest.mark.parametrize("edition", EDITIONS)
def test_default_scenario_and_heuristic_opponent(tmp_path, edition):
    """The default scenario against the edition's default (``auto``) opponent, when fast."""
    from psygym_experiments.play import default_opponent

    rules = load(edition)
    spec = default_opponent(rules)  # the AI plays seat 1 when you take seat 0 (the default)
    assert spec != default_opponent(rules, seat=0) or "seat" not in spec
    if spec.endswith(".zip"):
        pytest.skip("the auto opponent is a trained model (torch): covered elsewhere")
    out, log = play(
        tmp_path, "--edition", edition, "--seed", "3", answers=BAD + "1\n" * 3000, opponent="auto"
    )
    assert "Game over." in out
    assert lines_of(log)[0]["opponent"] == spec
    check_replay(log)


def test_the_lists_best_heuristic_as_the_opponent(tmp_path):
    out, log = play(tmp_path, "--edition", "rt", "--scenario", "random:0", "--seed", "3",
                    answers="1\n" * 3000, opponent="best-heuristic")  # fmt: skip
    assert "Game over." in out
    assert lines_of(log)[0]["opponent"] == "bid-all"  # docs/strength.md, the held-out tables
    check_replay(log)


def test_real_pipes_with_the_console_script(tmp_path):
    """The same through real pipes (no terminal): ``python -m psygym_experiments.cli play``."""
    import subprocess
    import sys

    def run(*args: str, stdin: str = "") -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "psygym_experiments.cli", *args],
            input=stdin,
            text=True,
            capture_output=True,
            timeout=120,
        )

    res = run(
        "play",
        "--edition",
        "8th",
        "--scenario",
        "single-phase",
        "--seed",
        "2",
        "--opponent",
        "random",
        "--runs-dir",
        str(tmp_path),
        stdin=BAD + "1\n" * 500,
    )
    assert res.returncode == 0, res.stderr
    assert res.stdout.count("Not a valid choice") == 3 and "Game over." in res.stdout
    assert "\x1b[" not in res.stdout  # no colour codes or live displays when piped
    (log,) = (tmp_path / "games").glob("*.jsonl")
    res = run("replay", str(log))
    assert res.returncode == 0 and "matches the log" in res.stdout


def test_same_seed_same_game(tmp_path):
    answers = "2\n3\n1\n" * 200
    _, log1 = play(tmp_path / "a", "--edition", "7th", "--seed", "5", answers=answers)
    _, log2 = play(tmp_path / "b", "--edition", "7th", "--seed", "5", answers=answers)

    # The hash chain starts from the header, which holds the start time: compare the moves.
    def moves(log):
        return [{k: v for k, v in line.items() if k != "hash"} for line in lines_of(log)[1:]]

    assert moves(log1) == moves(log2) and len(moves(log1)) > 10


def test_list_and_quit_save_the_log(tmp_path):
    out, log = play(
        tmp_path, "--edition", "7th", "--scenario", "single-phase", "--seed", "1", answers="?\nq\n"
    )
    assert out.count("Your move") == 2  # "?" lists the actions again
    assert "You quit." in out
    end = lines_of(log)[-1]
    assert end["result"] == "quit" and end["terminal"] is False
    check_replay(log)


def test_end_of_input_stops_the_game_and_saves_the_log(tmp_path):
    out, log = play(tmp_path, "--edition", "8th", "--scenario", "single-phase", answers="")
    assert "Standard input ended" in out
    assert lines_of(log)[-1]["result"] == "quit"
    check_replay(log)


def test_bad_options_are_one_clear_line(tmp_path):
    res = runner.invoke(app, ["play", "--edition", "9th", "--runs-dir", str(tmp_path)])
    assert res.exit_code == 2 and "unknown edition" in res.output
    res = runner.invoke(app, ["play", "--opponent", "nobody", "--runs-dir", str(tmp_path)])
    assert res.exit_code == 2 and "unknown agent" in res.output
    res = runner.invoke(app, ["play", "--scenario", "nowhere", "--runs-dir", str(tmp_path)])
    assert res.exit_code == 2 and "no shipped 7th scenario" in res.output
    assert not (tmp_path / "games").exists()


# ----------------------------------------------------------------------------- odds
def test_seventh_cast_odds_are_exact():
    """7E-4.3/7E-4.4: n dice pass WC 1 with 1 - (1/2)^n; Perils needs two or more 6s."""
    rules = load("7th", "single-phase")
    s = rules.initial_state()
    s = rules.apply(s, 4)  # warp charge roll 4
    smite = next(a for a in rules.legal_actions(s) if "Smite" in rules.action_label(s, a))
    s = rules.apply(s, smite)
    for n, a in enumerate(rules.legal_actions(s), start=1):
        assert rules.action_label(s, a) == f"Cast Smite with {n} {'die' if n == 1 else 'dice'}"
        odds = action_odds(rules, s, a)
        six = Fraction(1, 6)
        perils = 1 - (1 - six) ** n - n * six * (1 - six) ** (n - 1)
        assert odds["passed"] == pytest.approx(float(1 - Fraction(1, 2) ** n), abs=1e-12)
        assert odds.get("perils", 0.0) == pytest.approx(float(perils), abs=1e-12)
        assert ("perils" in odds) == (n >= 2)  # shown only when it can happen
    assert percent(7 / 8) == "87.5%" and percent(15 / 16) == "93.8%"  # half-up, as psygym odds


def test_eighth_test_odds_are_exact():
    """8E-4: Smite (WC 5) passes on 2D6 >= 5 (30/36); Perils on a double 1 or 6 (2/36)."""
    rules = load("8th", "single-phase")
    s = rules.apply(rules.initial_state(), 0)  # select the Librarian
    smite = next(a for a in rules.legal_actions(s) if "Smite" in rules.action_label(s, a))
    odds = action_odds(rules, s, smite)
    assert odds == pytest.approx({"passed": 30 / 36, "perils": 2 / 36})


def test_seventh_deny_odds_are_exact():
    """7E-5.2/7E-5.3: m deny dice negate s successes with P(at least s rolls of threshold+)."""
    from psygym.editions.seventh.rules import deny_chance

    rules = load("7th", "single-phase")
    rng = np.random.default_rng(1)
    checked = 0
    for _ in range(50):
        s = rules.initial_state()
        while rules.current_player(s) != TERMINAL:
            if rules.current_player(s) == CHANCE:
                s = rules.apply(s, rules.sample_chance(s, rng))
                continue
            legal = rules.legal_actions(s)
            if rules.is_response(s):
                _, threshold = rules.deny_unit_and_threshold(s, s.cast)
                for a in legal:
                    m = a - rules.DENY
                    odds = action_odds(rules, s, a)
                    if m == 0:
                        assert odds == {}
                    else:
                        want = float(deny_chance(m, threshold, s.cast.successes))
                        assert odds == pytest.approx({"denied": want}, abs=1e-12)
                        checked += 1
            s = rules.apply(s, legal[-1] if len(legal) > 1 and legal[0] == 0 else legal[0])
    assert checked > 0


def test_deny_odds_and_menu_show_them(tmp_path):
    out, _ = play(
        tmp_path,
        "--edition",
        "7th",
        "--scenario",
        "single-phase",
        "--seed",
        "3",
        answers="2\n3\n" + "1\n" * 50,
    )
    assert "Cast Smite with 3 dice  [passes 87.5%, Perils 7.4%]" in out


# ----------------------------------------------------------------------------- hints
def _small_decision(rules, max_states: int = 3000):
    """A decision of a random game (avoiding the first action, often "end") that the exact
    solver answers within ``max_states`` states, with its exact action values."""
    from psygym_agents.solvers import NotSolvable
    from psygym_agents.solvers.expectiminimax import Solver

    for seed in range(20):
        rng = np.random.default_rng(seed)
        s = rules.initial_state()
        while rules.current_player(s) != TERMINAL:
            if rules.current_player(s) == CHANCE:
                s = rules.apply(s, rules.sample_chance(s, rng))
                continue
            legal = rules.legal_actions(s)
            if len(legal) > 1:
                try:
                    return s, Solver(rules, max_states=max_states).action_values(s)
                except NotSolvable:
                    pass
            s = rules.apply(s, legal[int(rng.integers(1, len(legal))) if len(legal) > 1 else 0])
    pytest.skip("no small decision reached")


@pytest.mark.parametrize("edition,scenario", [("7th", "single-phase"), ("8th", "single-phase")])
def test_hint_values_match_the_solver(edition, scenario):
    rules = load(edition, scenario)
    s, exact = _small_decision(rules)
    advice = Advisor(rules, budget=10).advise(s)
    assert advice.values and advice.exact and advice.depth is None
    assert advice.values == pytest.approx(exact)


def test_hint_in_the_game_and_on_demand(tmp_path):
    out, _ = play(
        tmp_path,
        "--edition",
        "7th",
        "--scenario",
        "single-phase",
        "--seed",
        "3",
        "--hint",
        "--hint-seconds",
        "0.5",
        answers="h\n" + "1\n" * 50,
    )
    assert "Hint:" in out


def test_hint_in_second_edition_is_an_estimate_from_the_search(tmp_path):
    """2E hands are secret: ``--hint`` gives the information-set search's estimates, so marked."""
    out, _ = play(
        tmp_path,
        "--edition",
        "2nd",
        "--scenario",
        "smite-skirmish",
        "--seed",
        "3",
        "--hint",
        answers="h\n" + "1\n" * 500,
    )
    assert "no exact advice exists" not in out
    assert "values are estimated (search), not exact" in out
    assert "estimated value" in out and "(best)" in out


def test_duel_advice_comes_from_search_and_says_what_is_exact():
    rules = load("7th", "duel")
    rng = np.random.default_rng(0)
    s = rules.initial_state()
    while rules.current_player(s) < 0 or rules.legal_actions(s) == [0]:
        if rules.current_player(s) == CHANCE:
            s = rules.apply(s, rules.sample_chance(s, rng))
        else:
            s = rules.apply(s, rules.legal_actions(s)[-1])
    advisor = Advisor(rules, budget=0.5)
    advice = advisor.advise(s)
    assert set(advice.values) == set(rules.legal_actions(s))  # every option gets a value
    assert not advice.exact
    assert advice.note.startswith(("exact over the whole Psychic phase", "exact within each cast"))
    assert advisor.advise(s, further=True) is advice  # h answers the same, at once


# ----------------------------------------------------------------------------- hidden information
def test_second_edition_hides_the_ai_cards(tmp_path):
    """2E-3.3: the human sees only their own hand; a card dealt to the AI is never named, not
    even when the deck could hold nothing else (the human does not know what the deck holds)."""
    from collections import Counter

    from psygym.editions.second.state import DEAL

    rules = load("2nd", "duel")
    out, log = play(
        tmp_path, "--edition", "2nd", "--scenario", "duel", "--seed", "4", answers="1\n" * 3000
    )
    mine: Counter[str] = Counter()
    secret = 0
    s = rules.initial_state()
    for step in lines_of(log)[1:-1]:
        if step["player"] == "chance" and s.stage == DEAL and not s.effects:
            if s.deal_to == 1:
                secret += 1
            else:
                mine[step["label"]] += 1
        s = rules.apply(s, step["action"])
    rolls = Counter(line for line in out.splitlines() if line.startswith("Chance:"))
    assert secret > 0
    assert rolls["Chance: (hidden from you)"] == secret
    assert not any(line.endswith(f" to {rules.side_names[1]}") for line in rolls)
    for label, n in mine.items():
        assert rolls[f"Chance: {label}"] == n
    assert not any("(odds of" in line for line in list(rolls)[-10:])  # draw odds would tell


class ScriptedConsole(Console):
    """A console reading answers from a list (for driving a session without a terminal)."""

    def __init__(self, answers: list[str]):
        super().__init__(file=io.StringIO(), width=200)
        self.answers = list(answers)

    def input(self, prompt: str = "", **_: object) -> str:  # noqa: D102
        self.print(prompt, end="")
        if not self.answers:
            raise EOFError
        return self.answers.pop(0)


def _rt_secret_bid_state(ai: int):
    """A Rogue Trader state where player ``ai`` makes the first of two secret bids (RT-3.4)."""
    rules = load("rt", "duel")
    for seed in range(200):
        rng = np.random.default_rng(seed)
        s = rules.initial_state()
        while rules.current_player(s) != TERMINAL:
            p = rules.current_player(s)
            if p == ai and rules.simultaneous_info(s) is not None:
                return rules, s
            if p == CHANCE:
                s = rules.apply(s, rules.sample_chance(s, rng))
            else:
                legal = rules.legal_actions(s)
                s = rules.apply(s, legal[int(rng.integers(len(legal)))])
    pytest.skip("no secret bid reached")


def test_rogue_trader_secret_bid_is_hidden_until_the_human_bids():
    """RT-3.4: the AI's enhanced-attack bid is announced only after the human's save bid."""
    from psygym_agents.base import RandomPolicy

    rules, s = _rt_secret_bid_state(ai=1)
    console = ScriptedConsole(["1"])
    session = PlaySession(
        rules,
        RandomPolicy(),
        seat=0,
        seed=0,
        console=console,
        hint=True,
        echo_input=True,
        advisor=Advisor(rules, budget=0.5),
    )
    s = session.step(s)  # the AI's secret bid
    text = console.file.getvalue()
    assert "makes a secret choice" in text
    assert "enhances the attack by" not in text
    s = session.step(s)  # the human's bid (answer "1"), then the reveal
    text = console.file.getvalue()
    assert "(revealed now)" in text
    # The hint at the human's bid never depends on the AI's actual secret bid.
    parent = session.player_view.pending  # cleared after the human's bid
    assert parent is None


def test_secret_bid_hint_ignores_the_actual_bid():
    rules, parent = _rt_secret_bid_state(ai=1)
    advisor = Advisor(rules, budget=30)
    answers = []
    for a in rules.legal_actions(parent):
        child = rules.apply(parent, a)
        answers.append(advisor.advise(child, parent).values)
    assert answers[0] and all(v == pytest.approx(answers[0]) for v in answers)


# ----------------------------------------------------------------------------- replay errors
def _game(tmp_path: Path) -> Path:
    _, log = play(
        tmp_path,
        "--edition",
        "7th",
        "--scenario",
        "single-phase",
        "--seed",
        "2",
        answers="2\n3\n" + "1\n" * 100,
    )
    return log


def _rewrite(log: Path, change) -> Path:
    """A copy of ``log`` changed by ``change`` and hash-chained again, so the rules must catch it.

    (Without re-chaining the hash chain would refuse the file first: tests/test_security.py.)
    """
    from psygym_experiments.harness.gamelog import GENESIS, chained_line

    lines = [json.loads(x) for x in log.read_text().splitlines()]
    change(lines)
    bad = log.with_name("bad.jsonl")
    previous, out = GENESIS, []
    for obj in lines:
        text, previous = chained_line(previous, obj)
        out.append(text)
    bad.write_text("".join(out))
    return bad


def test_replay_rejects_an_illegal_action(tmp_path):
    log = _game(tmp_path)

    def change(lines):
        step = next(x for x in lines if x.get("player") == 0)
        step["action"] = 10_000

    res = runner.invoke(app, ["replay", str(_rewrite(log, change))])
    assert res.exit_code == 2
    assert "line 3" in res.output and "not legal" in res.output


def test_replay_rejects_a_wrong_chance_outcome_label_player_or_score(tmp_path):
    log = _game(tmp_path)

    def outcome(lines):
        lines[1]["action"] = 99

    def label(lines):
        lines[2]["label"] = "something else"

    def player(lines):
        lines[2]["player"] = 1

    def score(lines):
        lines[-1]["score"] = [5.0, -5.0]

    def state(lines):
        lines[-1]["state_sha256"] = "0" * 64

    expected = {
        outcome: "line 2",
        label: "line 3",
        player: "line 3",
        score: "end line",
        state: "another final state",
    }
    for change, where in expected.items():
        res = runner.invoke(app, ["replay", str(_rewrite(log, change)), "--quiet"])
        assert res.exit_code == 2, change.__name__
        assert where in res.output, (change.__name__, res.output)


def test_replay_of_a_log_without_end_line_and_of_bad_files(tmp_path):
    log = _game(tmp_path)
    res = runner.invoke(app, ["replay", str(_rewrite(log, lambda lines: lines.pop()))])
    assert res.exit_code == 2 and "no end line" in res.output
    junk = tmp_path / "junk.jsonl"
    junk.write_text("not json\n")
    res = runner.invoke(app, ["replay", str(junk)])
    assert res.exit_code == 2 and "line 1: not valid JSON" in res.output
    res = runner.invoke(app, ["replay", str(tmp_path / "missing.jsonl")])
    assert res.exit_code == 2 and "no game log" in res.output


def test_replay_refuses_end_line_fields_of_the_wrong_kind(tmp_path):
    """An edited end line (chain recomputed) gets one line naming file, line and what is allowed."""
    log = _game(tmp_path)
    n = len(lines_of(log))

    def setting(key, value):
        def change(lines):
            if value is KeyError:
                del lines[-1][key]
            else:
                lines[-1][key] = value

        return change

    changes = [
        ("score", 5, "a list of two numbers"),
        ("score", [None, None], "a list of two numbers"),
        ("score", [0.0], "a list of two numbers"),
        ("score", [float("inf"), 0.0], "a list of two numbers"),
        ("score", [10**400, 0], "a list of two numbers"),
        ("score", KeyError, "a list of two numbers"),
        ("steps", "7", "a whole number"),
        ("steps", KeyError, "a whole number"),
        ("terminal", "no", "true or false"),
        ("terminal", KeyError, "true or false"),
        ("result", "won", "finished, quit, error"),
        ("state_sha256", KeyError, "a SHA-256"),
    ]
    for key, value, allowed in changes:
        bad = _rewrite(log, setting(key, value))
        res = runner.invoke(app, ["replay", str(bad), "--quiet"])
        case = (key, value if value is not KeyError else "missing", res.output)
        assert res.exit_code == 2, case
        assert f"{bad}: line {n} (the end line)" in res.output and f'"{key}"' in res.output, case
        assert f"allowed: {allowed}" in res.output.replace("\n", " "), case
        assert "internal error" not in res.output and len(res.output.splitlines()) == 1, case


def test_replay_status_comes_from_the_rules_not_the_log(tmp_path):
    log = _game(tmp_path)
    assert lines_of(log)[-1]["terminal"] is True
    result = replay_log(log, Console(file=io.StringIO()), quiet=True)
    assert result.finished is True
    res = runner.invoke(app, ["replay", str(log), "--quiet"])
    assert res.exit_code == 0 and "(finished)" in res.output

    def not_terminal(lines):
        lines[-1]["terminal"] = False

    res = runner.invoke(app, ["replay", str(_rewrite(log, not_terminal)), "--quiet"])
    assert res.exit_code == 2 and "terminal=false, the replay reached terminal=true" in res.output

    # A game the human quit, claimed to have finished.
    _, quit_log = play(tmp_path / "q", "--edition", "7th", "--seed", "1", answers="q\n")
    assert replay_log(quit_log, Console(file=io.StringIO()), quiet=True).finished is False

    def finished(lines):
        lines[-1]["result"] = "finished"

    res = runner.invoke(app, ["replay", str(_rewrite(quit_log, finished)), "--quiet"])
    assert res.exit_code == 2 and 'says the game "finished"' in res.output


def test_replay_refuses_a_header_seat_that_is_not_a_player(tmp_path):
    log = _game(tmp_path)
    for seat in (7, -1, True, "0", None, KeyError):

        def change(lines, seat=seat):
            if seat is KeyError:
                del lines[0]["seat"]
            else:
                lines[0]["seat"] = seat

        res = runner.invoke(app, ["replay", str(_rewrite(log, change))])
        assert res.exit_code == 2, (seat, res.output)
        assert "line 1: the header's seat is" in res.output, (seat, res.output)
        assert "allowed: 0 or 1" in res.output, (seat, res.output)


def test_replay_checks_a_random_battles_scenario_hash(tmp_path):
    """Like a scenario file's, a random battle's hash is checked: its army list generated again."""
    _, log = play(tmp_path, "--edition", "8th", "--scenario", "random:4", "--seed", "1",
                  answers="q\n")  # fmt: skip
    res = runner.invoke(app, ["replay", str(log), "--quiet"])
    assert res.exit_code == 0 and "warning" not in res.output

    def other_list(lines):
        lines[0]["scenario_sha256"] = "0" * 64

    res = runner.invoke(app, ["replay", str(_rewrite(log, other_list)), "--quiet"])
    assert res.exit_code == 0 and "matches the log" in res.output
    assert "warning: the random battle random:4 is not the army list" in res.output


def test_replay_shows_the_logs_header_fields_as_text(tmp_path):
    """Header fields are the log's, not the rules': no markup, no raw control characters."""
    log = _game(tmp_path)

    def change(lines):
        lines[0]["opponent"] = "\x1b[31mEVIL [bold]x\u202e"
        lines[0]["scenario"] = "[red]s\x1b]0;title\x07"  # shown; the game is its scenario_arg

    res = runner.invoke(app, ["replay", str(_rewrite(log, change))])
    assert res.exit_code == 0, res.output
    first = res.output.splitlines()[0]
    assert "\x1b" not in res.output and "\u202e" not in res.output
    assert r"scenario [red]s\x1b]0;title\x07, seed " in first, first
    assert first.endswith(r"human seat 0, opponent \x1b[31mEVIL [bold]x\u202e"), first


def test_replay_of_unreadable_files_names_the_file_and_line(tmp_path):
    from psygym_experiments.harness.gamelog import GENESIS, chained_line

    header, _ = chained_line(GENESIS, {"type": "header", "edition": "7th", "seat": 0})
    cases = {
        "binary.jsonl": (f"{header}{{}}\n".encode() + b"\xff\xfe\x00\n", "line 3: not UTF-8"),
        "deep.jsonl": (("[" * 100_000 + "]" * 100_000).encode(), "line 1: JSON nested too deeply"),
        "long.jsonl": (f'{header}{{"n": {"9" * 5000}}}\n'.encode(), "line 2: a number longer"),
    }
    for name, (data, message) in cases.items():
        path = tmp_path / name
        path.write_bytes(data)
        res = runner.invoke(app, ["replay", str(path)])
        assert res.exit_code == 2, (name, res.output)
        assert f"{path}: {message}" in res.output.replace("\n", ""), (name, res.output)
        assert "internal error" not in res.output, (name, res.output)
    folder = tmp_path / "adir.jsonl"
    folder.mkdir()
    res = runner.invoke(app, ["replay", str(folder)])
    assert res.exit_code == 2 and f"{folder} is a folder, not a game log" in res.output


def test_a_scenario_file_of_ones_own(tmp_path):
    """A scenario given as a path is logged by path; replay warns if the file changed since."""
    mine = tmp_path / "mine.toml"
    mine.write_text((Path(get("8th").scenario_dir) / "single-phase.toml").read_text())
    _, log = play(
        tmp_path, "--edition", "8th", "--scenario", str(mine), "--seed", "1", answers="2\n" * 200
    )
    header = lines_of(log)[0]
    assert header["scenario_path"] == str(mine.resolve())
    check_replay(log)
    mine.write_text(mine.read_text() + "\n# edited\n")
    res = runner.invoke(app, ["replay", str(log), "--quiet"])
    assert res.exit_code == 0 and "changed since the game was played" in res.output


# ----------------------------------------------------------------------------- pieces
def test_state_text_is_canonical():
    rules = load("7th", "single-phase")
    s = rules.initial_state()
    assert state_text(s) == state_text(rules.initial_state())
    assert state_text(frozenset({"b", "a"})) == state_text(frozenset({"a", "b"})) == "{'a', 'b'}"
    assert state_digest(s) != state_digest(rules.apply(s, 1))


def test_log_names_never_collide(tmp_path):
    a = GameLog.create(tmp_path, {"edition": "7th"})
    b = GameLog.create(tmp_path, {"edition": "7th"})
    assert a.path != b.path and a.path.parent == tmp_path / "games"
    a.close()
    b.close()


def test_a_public_roll_shows_the_odds_of_that_outcome(tmp_path):
    # "test 10: passed (chance 8.3%)" read as the odds of passing; it is those of rolling 10.
    out, log = play(tmp_path, "--edition", "8th", "--scenario", "single-phase", "--seed", "4",
                    answers="1\n" * 40)  # fmt: skip
    rules = load("8th", "single-phase")
    s, shown = rules.initial_state(), []
    for step in lines_of(log)[1:-1]:
        if step["player"] == "chance":
            p = dict(rules.chance_outcomes(s))[step["action"]]
            shown.append(f"Chance: {step['label']} (odds of this outcome {percent(p)})")
        s = rules.apply(s, step["action"])
    assert shown and all(line in out for line in shown), (shown, out)
    assert "(chance " not in out
