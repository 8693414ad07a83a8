"""``psygym mistakes``: an agent's decisions priced exactly against a fixed opponent."""

from __future__ import annotations

import json

import pytest
from psygym_agents.solvers.evaluate import policy_value
from psygym_agents.solvers.expectiminimax import Solver
from psygym_experiments.cli import app
from psygym_experiments.harness.mistakes import review_seat
from typer.testing import CliRunner

from psygym.editions import load
from psygym.policies import resolve_policy

runner = CliRunner()

SMALL_RT = "random:22,rounds=2,psykers=1"
"""A Rogue Trader list of 4 turns: Red's Warlock (32 points) takes Blue's Ork Boyz with Change
Allegiance (RT-4.5). Bid 0 on the enhanced attack (RT-3.2) and the game is worth 6.2639 to
Red; any bid of 7 or more makes the save impossible and the game worth 5 exactly."""


def _score(rules, agent, opponent, seat):
    v = policy_value(rules, [agent, opponent] if seat == 0 else [opponent, agent])
    return v if seat == 0 else -v


@pytest.mark.parametrize("seat", [0, 1])
def test_costs_add_up_to_what_the_agent_scores_less_than_the_best_answer(seat):
    rules = load("7th", "single-phase")
    agent, opponent = resolve_policy("double-wc", rules), resolve_policy("optimal", rules)
    r = review_seat(rules, agent, opponent, seat, max_states=200_000)
    assert r.score == pytest.approx(_score(rules, agent, opponent, seat), abs=1e-12)
    game = Solver(rules).value()  # the best answer to the optimum scores the game's value
    assert r.best_response == pytest.approx(game if seat == 0 else -game, abs=1e-12)
    assert r.cost > 0.1
    assert sum(d.cost for d in r.decisions) == pytest.approx(r.cost, abs=1e-12)
    assert [d.cost for d in r.decisions] == sorted((d.cost for d in r.decisions), reverse=True)
    for d in r.decisions:
        assert d.cost == pytest.approx(d.reach * d.gives_up, abs=1e-12)
        assert d.best.value - sum(c.probability * c.value for c in d.chosen) == pytest.approx(
            d.gives_up, abs=1e-12
        )


@pytest.mark.parametrize("seat", [0, 1])
def test_secret_bids_and_mixed_agents_still_add_up(seat):
    rules = load("rt", SMALL_RT)
    agent, opponent = resolve_policy("random", rules), resolve_policy("spend-freely", rules)
    r = review_seat(rules, agent, opponent, seat, max_states=200_000)
    assert r.score == pytest.approx(_score(rules, agent, opponent, seat), abs=1e-12)
    assert sum(d.cost for d in r.decisions) == pytest.approx(r.cost, abs=1e-9)
    assert r.cost > 0.3
    # Blue's save bids answer Red's secret attack bids (one decision whatever the secret);
    # Red's attack bids come first.
    bid = ("secretly augments its save", "secretly enhances the attack")[seat]
    assert any(bid in d.chosen[0].label for d in r.decisions)
    assert all(0 < d.reach <= 1.0 + 1e-12 for d in r.decisions)


def test_an_overbid_is_priced_exactly():
    rules = load("rt", SMALL_RT)
    agent, opponent = resolve_policy("bid-all", rules), resolve_policy("optimal", rules)
    r = review_seat(rules, agent, opponent, 1, max_states=200_000)
    assert r.best_response == pytest.approx(451 / 72, abs=1e-12)  # 6.2639
    assert r.score == pytest.approx(5.0, abs=1e-12)
    (d,) = r.decisions
    assert d.reach == 1.0 and d.cost == pytest.approx(91 / 72, abs=1e-12)
    assert d.best.label == "Warlock secretly enhances the attack by 0"
    assert [c.probability for c in d.chosen] == [1.0]
    assert "enhances the attack by" in d.chosen[0].label and d.chosen[0].value == 5.0
    assert "Change Allegiance on Ork Boyz" in d.board


@pytest.mark.parametrize(
    ("edition", "scenario", "agent", "opponent"),
    [("7th", "single-phase", "double-wc", "optimal"),
     # Red mixes its secret attack bids: Blue's save bid is one decision over all of them.
     ("rt", SMALL_RT, "spend-freely", "random")],
)  # fmt: skip
def test_after_agent_prices_changing_one_decision_alone(edition, scenario, agent, opponent):
    rules = load(edition, scenario)
    agent, opponent = resolve_policy(agent, rules), resolve_policy(opponent, rules)
    r = review_seat(rules, agent, opponent, 0, max_states=200_000, after="agent")
    assert r.best_response is None and r.cost is None
    top = r.decisions[0]
    origin = rules.simultaneous_parent(top.state)

    def same(state):
        if origin is None:
            return state == top.state
        return rules.simultaneous_parent(state) == origin

    class Changed:
        """The agent, but the best action at the top decision (whatever the secret)."""

        name = "changed"

        def action_probabilities(self, rules, state, player):
            if player == 0 and rules.current_player(state) == 0 and same(state):
                return {top.best.action: 1.0}
            return agent.action_probabilities(rules, state, player)

    gain = policy_value(rules, [Changed(), opponent]) - policy_value(rules, [agent, opponent])
    assert gain == pytest.approx(top.cost, abs=1e-12) and gain > 0.01
    if origin is not None:
        assert "secretly augments its save" in top.best.label


def _run(*args: str):
    return runner.invoke(app, ["mistakes", *args])


def test_the_command_names_the_costly_decision():
    result = _run("--edition", "rt", "--scenario", SMALL_RT, "--agent", "bid-all", "--side",
                  "red", "--format", "json", "--no-progress")  # fmt: skip
    assert result.exit_code == 0, (result.stdout, result.stderr)
    doc = json.loads(result.stdout)
    (seat,) = doc["seats"]
    assert seat["side"] == "Red" and seat["cost"] == pytest.approx(91 / 72, abs=1e-9)
    assert seat["decisions"][0]["best"]["label"].endswith("by 0")
    text = _run("--edition", "rt", "--scenario", SMALL_RT, "--agent", "bid-all", "--top", "1",
                "--no-progress").stdout  # fmt: skip
    assert "as Blue" in text and "as Red" in text and "costs 1.2639 a game" in text


BID_ALL = ["--edition", "rt", "--scenario", SMALL_RT, "--agent", "bid-all"]


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--edition", "2nd", "--agent", "cast-biggest"], ["hidden information"]),
        ([*BID_ALL, "--side", "green"], ["--side", "Blue", "Red"]),
        ([*BID_ALL, "--max-states", "5"], ["more than 5 states", "--max-states"]),
        ([*BID_ALL, "--after", "worst"], ["--after"]),
        ([*BID_ALL, "--side", "red", "--after", "agent", "--max-states", "30"],
         ["choices need more than 30 states"]),
    ],
)  # fmt: skip
def test_bad_input_gets_one_line(args, words):
    result = _run(*args, "--no-progress")
    assert result.exit_code == 2, (result.stdout, result.stderr)
    lines = [ln for ln in result.stderr.splitlines() if ln.strip() and ln.startswith("error:")]
    assert len(lines) == 1 and "Traceback" not in result.stderr
    for w in words:
        assert w in lines[0]
