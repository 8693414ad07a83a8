"""OpenSpiel round trips of the adapter (psygym.interop.openspiel).

A state serialises (``state.serialize``, ``serialize_game_and_state``, pickling) and loads back
as an equal state, on either engine; a game's parameters (``str(game)``, pickling) rebuild the
same game, or refuse, never another game. Editions are found through the registry; each test
plays a tiny scenario of each (a one-phase shipped one, else a generated one).
"""

from __future__ import annotations

import pickle
import re
import tomllib
from collections.abc import Iterator

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from psygym import edition as registry  # noqa: E402
from psygym.editions import load  # noqa: E402
from psygym.interop import openspiel as ospiel  # noqa: E402
from psygym.scenario import ScenarioError  # noqa: E402

EDITIONS = [e.id for e in registry.editions()]
GENERATED = "random:{},psykers=1,rounds=1"
"""A small generated scenario (its options hold the characters OpenSpiel's game string cannot)."""
TINY_SHIPPED = ("single-phase", "smite-skirmish")


def _tiny(edition: str) -> str:
    names = registry.get(edition).scenario_names()
    return next((n for n in TINY_SHIPPED if n in names), GENERATED.format(1))


def _signature(game) -> tuple:
    """What tells two games apart here: sizes, bounds, the start's moves, text and information."""
    s = game.new_initial_state()
    return (
        game.num_distinct_actions(),
        game.max_game_length(),
        game.max_chance_outcomes(),
        game.min_utility(),
        game.max_utility(),
        game.observation_tensor_size(),
        s.current_player(),
        s.legal_actions(),
        str(s),
        [s.information_state_string(p) for p in (0, 1)],
    )


def _reloads(game) -> Iterator:
    """The game as OpenSpiel rebuilds it from its parameters, in each of its three ways."""
    yield pyspiel.load_game(str(game))
    yield pickle.loads(pickle.dumps(game))
    text = pyspiel.serialize_game_and_state(game, game.new_initial_state())
    yield pyspiel.deserialize_game_and_state(text)[0]


def _states(game, seed: int, games: int = 2) -> list:
    """Every state along ``games`` random plays of ``game`` (chance nodes and ends included)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(games):
        state = game.new_initial_state()
        out.append(state.clone())
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes())
                state.apply_action(int(rng.choice(outcomes, p=probs)))
            else:
                state.apply_action(int(rng.choice(state.legal_actions())))
            out.append(state.clone())
    return out


def _assert_same(state, other) -> None:
    assert other.history() == state.history()
    assert other.current_player() == state.current_player()
    assert other.legal_actions() == state.legal_actions()
    assert other.returns() == state.returns()
    assert str(other) == str(state)
    if not state.is_chance_node():
        assert other.chance_outcomes() == state.chance_outcomes() or state.is_terminal()
    for p in (0, 1):
        assert other.information_state_string(p) == state.information_state_string(p)
        assert other.observation_string(p) == state.observation_string(p)
        assert other.information_state_tensor(p) == state.information_state_tensor(p)


@pytest.mark.parametrize("edition", EDITIONS)
def test_state_round_trips_through_serialize_and_pickle(edition):
    game = ospiel.load_game(edition, _tiny(edition))
    for state in _states(game, seed=0):
        _assert_same(state, game.deserialize_state(state.serialize()))
        text = pyspiel.serialize_game_and_state(game, state)
        again, loaded = pyspiel.deserialize_game_and_state(text)
        assert str(again) == str(game)
        _assert_same(state, loaded)
        _assert_same(state, pickle.loads(pickle.dumps(state)))


@pytest.mark.parametrize("edition", EDITIONS)
def test_openspiel_consistency_checks_with_serialisation(edition):
    game = ospiel.load_game(edition, _tiny(edition))
    pyspiel.random_sim_test(game, num_sims=2, serialize=True, verbose=False)


@pytest.mark.parametrize("edition", EDITIONS)
def test_serialised_state_loads_on_the_other_engine(edition):
    """The text holds the history, no engine handle: the reference replays the core's, and back."""
    default = ospiel.load_game(edition, _tiny(edition))
    reference = ospiel.PsygymGame(default.get_parameters(), engine="python")
    for state in _states(default, seed=1, games=1):
        _assert_same(state, reference.deserialize_state(state.serialize()))
    for state in _states(reference, seed=2, games=1):
        _assert_same(state, default.deserialize_state(state.serialize()))


def test_illegal_serialised_history_is_refused():
    edition = EDITIONS[0]
    game = ospiel.load_game(edition, _tiny(edition))
    state = _states(game, seed=3, games=1)[-1]
    text = re.sub(r"^history=(-?\d+):\d+", r"history=\1:999999", state.serialize())
    with pytest.raises(ValueError, match="not legal"):
        game.deserialize_state(text)


@pytest.mark.parametrize("edition", EDITIONS)
def test_generated_scenario_game_reloads_as_itself(edition):
    scenario = GENERATED.format(2)
    game = ospiel.load_game(edition, scenario)
    recorded = game.get_parameters()["scenario"]  # OpenSpiel's string holds no "," or "="
    assert recorded.replace("%2C", ",").replace("%3D", "=") == scenario
    for again in _reloads(game):
        assert str(again) == str(game)
        assert _signature(again) == _signature(game)


def _renamed_copy(edition: str, folder) -> tuple[str, str]:
    """A file holding one shipped scenario under another's name (its path has ``( ) , =``)."""
    ed = registry.get(edition)
    name, content_of = ed.scenario_names()[:2]
    text = (ed.scenario_dir / f"{content_of}.toml").read_text()
    text = re.sub(r'^name = ".*"$', f'name = "{name}"', text, count=1, flags=re.MULTILINE)
    assert tomllib.loads(text)["name"] == name
    path = folder / "copy (1), v=2.toml"
    path.write_text(text)
    return str(path), name


@pytest.mark.parametrize("edition", EDITIONS)
def test_file_scenario_reloads_as_that_file_not_the_shipped_namesake(edition, tmp_path):
    path, name = _renamed_copy(edition, tmp_path)
    game = ospiel.load_game(edition, path)
    assert _signature(game) != _signature(ospiel.load_game(edition, name))
    for again in _reloads(game):
        assert str(again) == str(game)
        assert _signature(again) == _signature(game)


@pytest.mark.parametrize("edition", EDITIONS)
def test_changed_scenario_file_is_refused(edition, tmp_path):
    path, _ = _renamed_copy(edition, tmp_path)
    game = ospiel.load_game(edition, path)
    with open(path, "a") as f:
        f.write("# edited\n")
    with pytest.raises(ScenarioError, match="changed since"):
        pyspiel.load_game(str(game))


@pytest.mark.parametrize("edition", EDITIONS)
def test_rules_wrapped_in_code_reload_as_themselves_or_refuse(edition, tmp_path):
    generated = ospiel.game_from_rules(load(edition, GENERATED.format(3)))
    for again in _reloads(generated):
        assert _signature(again) == _signature(generated)
    # From a file under a shipped name: its path if the rules keep it, else a refusal.
    path, _ = _renamed_copy(edition, tmp_path)
    game = ospiel.game_from_rules(load(edition, path))
    try:
        again = pyspiel.load_game(str(game))
    except ScenarioError as err:
        assert "built in code" in str(err)
    else:
        assert _signature(again) == _signature(game)
    # Game settings overridden in code: one of the two first players is not the scenario's.
    refused = 0
    for first in (0, 1):
        game = ospiel.game_from_rules(load(edition, _tiny(edition), first_player=first))
        try:
            again = pyspiel.load_game(str(game))
        except ScenarioError as err:
            assert "built in code" in str(err)
            refused += 1
        else:
            assert _signature(again) == _signature(game)
    assert refused == 1
