"""The differential check: a compiled twin against its Python reference, node by node.

:func:`check_games` plays seeded games on the reference (random legal actions, chance drawn
with its exact probabilities) and at every node compares what the twin says of the same
state: the state itself (bytes decoded, and the bytes of the state encoded), the player to move,
the legal actions, the chance outcomes with their probabilities (``==``, not approximately),
the next state after the action taken, the returns and the bounds on the rest
(``rest_bounds``); where the twin has the edition's horizon, ``horizon`` (the unit of the
search agent's lookahead); where it has a compiled observation, both players' float32
observations (equal arrays, bit for bit); and at chance nodes the draw the reference's
``sample_chance`` makes from a generator state against the twin's ``sample_chance`` from the
same state (the outcome and the generator state after it). The first difference raises
:class:`EngineMismatch` naming the game, the move and what differs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from psygym.core import CHANCE, TERMINAL


class EngineMismatch(AssertionError):
    """The compiled twin and the reference disagree at a node."""


@dataclass
class DifferentialCount:
    """What a differential run compared.

    Attributes:
        games: games played.
        nodes: states compared (decision, chance and terminal).
        decisions: decision nodes among them.
        chance: chance nodes among them.
        observations: observations compared (two per node where the twin has them).
    """

    games: int = 0
    nodes: int = 0
    decisions: int = 0
    chance: int = 0
    observations: int = 0

    def add(self, other: DifferentialCount) -> None:
        """Add another run's counts to these."""
        self.games += other.games
        self.nodes += other.nodes
        self.decisions += other.decisions
        self.chance += other.chance
        self.observations += other.observations


def check_games(rules: Any, compiled: Any, games: int, seed: int = 0) -> DifferentialCount:
    """Play ``games`` seeded games and compare the twin with the reference at every node.

    Args:
        rules: the reference rules.
        compiled: their :class:`~psygym.engine.compiled.CompiledGame`.
        games: how many games (game ``k`` uses seed ``[seed, k]`` for its moves and
            ``[seed, k, 1]`` for the draw checks).
        seed: the base seed.

    Raises:
        EngineMismatch: at the first difference.
    """
    count = DifferentialCount()
    size = compiled.game.observation_size
    if size:
        _same("the scenario", "observation_size", rules.observation_size, size)
    for k in range(games):
        rng, draws = np.random.default_rng([seed, k]), np.random.default_rng([seed, k, 1])
        _check_game(rules, compiled, rng, draws, f"game {k} (seed [{seed}, {k}])", count)
        count.games += 1
    return count


def _check_game(
    rules: Any, compiled: Any, rng: Any, draws: Any, name: str, count: DifferentialCount
) -> None:
    """One game: ``rng`` chooses the moves, ``draws`` is the generator of the draw checks."""
    game = compiled.game
    observed = game.observation_size > 0
    horizon = game.has_horizon
    state = rules.initial_state()
    data = game.initial_state()
    moves: list[int] = []
    while True:
        where = f"{name}, after moves {moves}"
        _same_state(compiled, state, data, where)
        count.nodes += 1
        if observed:
            for p in (0, 1):
                _same_observation(where, p, rules.observe(state, p), game.observe(data, p))
            count.observations += 2
        player = rules.current_player(state)
        _same(where, "current_player", player, game.current_player(data))
        ref_returns = tuple(rules.returns(state))
        _same(where, "returns", ref_returns, tuple(game.returns(data)))
        _same(where, "rest_bounds", tuple(rules.rest_bounds(state)), tuple(game.rest_bounds(data)))
        if horizon:
            _same(where, "horizon", tuple(rules.horizon(state)), tuple(game.horizon(data)))
            _same(where, "phase_horizon", tuple(rules.phase_horizon(state)),
                  tuple(game.phase_horizon(data)))  # fmt: skip
        if player == TERMINAL:
            _same(where, "legal_actions", [], list(game.legal_actions(data)))
            _same(where, "chance_outcomes", [], list(game.chance_outcomes(data)))
            return
        if player == CHANCE:
            count.chance += 1
            ref = [(int(a), float(p)) for a, p in rules.chance_outcomes(state)]
            _same(where, "chance_outcomes", ref, [tuple(o) for o in game.chance_outcomes(data)])
            _same(where, "legal_actions", list(rules.legal_actions(state)),
                  list(game.legal_actions(data)))  # fmt: skip
            _same_draw(rules, compiled, state, data, draws, where)
            live = [(a, p) for a, p in ref if p > 0]
            probs = np.array([p for _, p in live])
            action = live[int(rng.choice(len(live), p=probs / probs.sum()))][0]
        else:
            count.decisions += 1
            legal = [int(a) for a in rules.legal_actions(state)]
            _same(where, "legal_actions", legal, list(game.legal_actions(data)))
            _same(where, "chance_outcomes", [], list(game.chance_outcomes(data)))
            action = legal[int(rng.integers(len(legal)))]
        moves.append(action)
        state = rules.apply(state, action)
        data = game.apply(data, action)


def _same_state(compiled: Any, state: Any, data: bytes, where: str) -> None:
    decoded = compiled.decode(data)
    if decoded != state:
        raise EngineMismatch(
            f"{where}: the states differ:\n reference {state}\n compiled  {decoded}"
        )
    encoded = compiled.encode(state)
    if encoded != data:
        raise EngineMismatch(f"{where}: encoding the reference state gives other bytes "
                             f"({encoded.hex()} != {data.hex()})")  # fmt: skip


def _same_observation(where: str, player: int, ref: np.ndarray, got: np.ndarray) -> None:
    if ref.dtype != got.dtype or not np.array_equal(ref, got):
        differ = np.flatnonzero(ref != got) if ref.shape == got.shape else "all: the shapes"
        raise EngineMismatch(f"{where}: player {player}'s observations differ (entries "
                             f"{differ}):\n reference {ref}\n compiled  {got}")  # fmt: skip


def _same_draw(rules: Any, compiled: Any, state: Any, data: bytes, draws: Any, where: str) -> None:
    """The reference's and the twin's chance draw from one generator state.

    Both must give the same outcome and leave the generator in the same state (as many numbers
    drawn); ``draws`` moves on by the reference's draw.
    """
    from psygym.engine.compiled import core_generator, generator_words

    twin = core_generator(compiled.core, draws)
    ref = int(rules.sample_chance(state, draws))
    got = compiled.game.sample_chance(data, twin)
    _same(where, "sample_chance", ref, got)
    _same(where, "generator state after sample_chance", generator_words(draws), twin.words)


def _same(where: str, what: str, ref: Any, got: Any) -> None:
    if ref != got:
        raise EngineMismatch(f"{where}: {what} differ:\n reference {ref}\n compiled  {got}")


__all__ = ["DifferentialCount", "EngineMismatch", "check_games"]
