"""The 2nd-edition duel player: information-set search with a learned board value (issue 14).

- ``rules.horizon`` is one step per Psychic phase, changing at the warp flux roll, where no
  hand is dealt yet.
- The search adds ``V(board)`` at the end of the phase: a board value that rewards one outcome
  makes it choose the move that keeps to it, where without a value it does not.
- It sees no hidden card: the same search from a state and from a re-deal of everything its
  player has not seen gives the same values.
- The shipped board value loads, names its edition and scenario, and refuses other editions;
  ``search`` on the 2nd duel uses it, ``value=none`` drops it, bad options are one clear line.
- Board-value training of hidden hands is a Monte-Carlo fit only; a tiny run writes a model.
- Through the CLI on tiny budgets: ``search`` and ``optimal`` play the 2nd duel, and
  ``optimal`` says in one plain line that it is not exact and plays ``search``.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import policy_decisions
from psygym_agents.second.heuristics import AlwaysPass, CastBiggest
from psygym_agents.solvers.ismcts import SearchPolicy
from psygym_agents.solvers.search import make_search
from psygym_agents.value import (
    BoardValue,
    ValueModelError,
    pretrained_value_path,
    shipped_value,
)

from psygym import CHANCE, TERMINAL, load
from psygym.editions.second.state import FLUX, SETUP
from psygym.editions.second.views import CastView, DuelView
from psygym.kernel import evolve

RULES = load("2nd", "duel")


def _random_game(rules, seed: int):
    """The states of one game of uniformly random moves."""
    rng = np.random.default_rng(seed)
    s = rules.initial_state()
    out = [s]
    while (p := rules.current_player(s)) != TERMINAL:
        if p == CHANCE:
            a = rules.sample_chance(s, rng)
        else:
            legal = rules.legal_actions(s)
            a = legal[int(rng.integers(len(legal)))]
        s = rules.apply(s, a)
        out.append(s)
    return out


@pytest.mark.parametrize("seed", range(5))
def test_the_horizon_steps_once_per_psychic_phase_at_the_warp_flux(seed):
    states = _random_game(RULES, seed)
    assert RULES.horizon(states[0]) == (0, 0) and states[0].stage == SETUP
    steps = 0
    for before, after in zip(states, states[1:]):
        h0, h1 = RULES.horizon(before), RULES.horizon(after)
        assert h1 >= h0
        if h1 != h0 and RULES.current_player(after) != TERMINAL:
            steps += 1
            assert after.stage == FLUX and after.phase == before.phase + (before.stage != SETUP)
            assert h1 == (after.phase // 2 + 1, after.phase % 2)
            assert not any(after.hands[0]) and not any(after.hands[1])  # nothing dealt yet
    last = states[-1]
    assert steps == min(last.phase, 2 * RULES.game.battle_rounds - 1) + 1


def _wounding_cast_decision():
    """A turn of player 0 where ``cast-biggest`` casts at the enemy, reached by play."""
    ref = CastBiggest()
    for s, p in policy_decisions(RULES, ref, range(50)):
        if (
            p == 0
            and _hits_the_enemy(s, ref.choose(RULES, s, p))
            and len(RULES.legal_actions(s)) > 2
        ):
            return s
    raise AssertionError("no wounding cast of player 0 in 50 games")


def _hits_the_enemy(s, a) -> bool:
    """Whether action ``a`` of player 0 is aimed at player 1's units (a cast or a duel)."""
    view = RULES.describe(s, a)
    if isinstance(view, DuelView):
        return True
    if not isinstance(view, CastView):
        return False
    t = view.target_index
    return t == RULES.num_units or RULES.owner[t] == 1


class _SpareTheEnemy:
    """A board value that pays player 0 heavily for every wound player 1's units keep."""

    meta: dict = {}

    def __call__(self, rules, state) -> float:
        return 100.0 * sum(w for u, w in enumerate(state.wounds) if rules.owner[u] == 1)


def test_a_board_value_that_rewards_an_outcome_steers_the_search():
    s = _wounding_cast_decision()
    # Beyond the tree nobody casts, so the board at the phase's end follows the tree's choices.
    kwargs = {"iterations": 400, "seed": 0, "rollout": AlwaysPass()}
    plain, _ = SearchPolicy(RULES, value=None, **kwargs).search(RULES, s, 0)
    steered, means = SearchPolicy(RULES, value=_SpareTheEnemy(), **kwargs).search(RULES, s, 0)
    assert _hits_the_enemy(s, plain)  # the score alone says: wound them
    assert not _hits_the_enemy(s, steered), RULES.describe(s, steered)
    assert means[steered] > means[plain]


def _decisions(games: int):
    """Decision states with several legal actions along games of ``cast-biggest``."""
    return policy_decisions(RULES, CastBiggest(), range(100, 100 + games))


def test_the_search_sees_no_hidden_card():
    hidden = np.random.default_rng(7)
    checked = redealt = 0
    for s, p in _decisions(3):
        twin = RULES.sample_hidden(s, p, hidden)
        a = make_search(RULES, "iterations=60,seed=5").search(RULES, s, p)
        b = make_search(RULES, "iterations=60,seed=5").search(RULES, twin, p)
        assert a == b
        checked += 1
        redealt += twin != s
    assert checked > 20 and redealt > 10


def test_the_shipped_value_loads_and_checks_its_edition():
    value = shipped_value(RULES)
    assert isinstance(value, BoardValue)
    assert value.meta["edition"] == "2nd" and value.meta["scenario"] == "duel"
    assert value.input_size == RULES.observation_size
    assert isinstance(value.meta.get("mc_rmse"), float)
    with pytest.raises(ValueModelError, match="edition 2nd"):
        value.check_rules(load("7th", "duel"))
    assert make_search(RULES).value is not None
    assert "learned value" in make_search(RULES).note
    assert make_search(RULES, "value=none").value is None
    other = pretrained_value_path("7th", "duel")
    with pytest.raises(ValueModelError, match="edition 7th"):
        make_search(RULES, f"value={other}")
    # The value matters: a board where player 0 lost its psykers is worth less to player 0.
    s = next(t for t in _random_game(RULES, 3) if t.stage == FLUX)
    mine = {u for u in RULES.psyker_unit if RULES.owner[u] == 0}
    dead = evolve(s, wounds=tuple(0 if u in mine else w for u, w in enumerate(s.wounds)))
    assert value(RULES, dead) < value(RULES, s)


@pytest.mark.parametrize(
    ("arg", "words"),
    [
        ("iterations=0", "iterations must be a whole number >= 1"),
        ("exploration=x", "exploration must be a number"),
        ("exploration=-1", "exploration must be >= 0"),
        ("depth=2", "unknown option 'depth'"),
        ("iterations", "needs a value"),
    ],
)
def test_bad_search_options_are_one_clear_line(arg, words):
    with pytest.raises(ValueError, match=words) as info:
        make_search(RULES, arg)
    assert "\n" not in str(info.value) and str(info.value).startswith("search: ")


def test_board_value_training_of_hidden_hands_is_a_monte_carlo_fit(tmp_path):
    from psygym_experiments.harness.value_config import make_value_config, start_value_run
    from psygym_experiments.harness.value_training import run_value_training

    with pytest.raises(ValueError, match="hidden hands"):
        make_value_config("2nd", "duel", 12, overrides={"eval_boards": 0})
    with pytest.raises(ValueError, match="agents"):
        make_value_config("2nd", "duel", 12, overrides={"sweeps": 0, "eval_boards": 0,
                                                        "agents": ["no-such-agent"]})  # fmt: skip
    cfg = make_value_config(
        "2nd", "duel", 12, overrides={"sweeps": 0, "eval_boards": 0, "eval_initial": False,
                                      "agents": ["cast-biggest", "nullify-always"]},
    )  # fmt: skip
    run = start_value_run(cfg, tmp_path / "runs")
    model = BoardValue.load(run_value_training(cfg, run, handle_signals=False))
    model.check_rules(RULES)
    assert model.meta["edition"] == "2nd" and model.meta["rmse"] is None
    assert model.meta["mc_rmse"] > 0 and model.meta["backed_up_boards"] == 0
    assert model.meta["config"]["agents"] == ["cast-biggest", "nullify-always"]
    assert model.meta["method"] == "Monte-Carlo fit only"


def _cli(*args: str):
    from psygym_experiments.cli import app
    from typer.testing import CliRunner

    return CliRunner().invoke(app, list(args))


def test_search_and_optimal_play_the_duel_through_the_cli(tmp_path):
    from psygym_agents.solvers.policy import _ANNOUNCED

    _ANNOUNCED.discard(("2nd", "duel"))
    result = _cli(
        "evaluate", "--edition", "2nd", "--scenario", "duel", "--agents",
        "search:iterations=15;seed=1,optimal:iterations=15", "--episodes", "1",
        "--runs-dir", str(tmp_path),
    )  # fmt: skip
    assert result.exit_code == 0, result.output + repr(result.exception)
    lines = [ln for ln in result.stderr.splitlines() if ln.startswith("optimal:")]
    assert len(lines) == 1, result.stderr
    assert "playing search" in lines[0] and "not exact" in lines[0].lower()
    assert "learned value" in lines[0] and "/" not in lines[0]
    bad = _cli("evaluate", "--edition", "2nd", "--scenario", "duel", "--agents",
               "search:bogus=1,pass", "--episodes", "1", "--runs-dir", str(tmp_path))  # fmt: skip
    assert bad.exit_code == 2 and "unknown option 'bogus'" in bad.stderr
    assert "Traceback" not in bad.output
