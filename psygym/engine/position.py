"""Game positions held as the compiled twin's bytes, for the envs that step both players.

The PettingZoo AEC env (:mod:`psygym.envs.aec`) and the OpenSpiel adapter
(:mod:`psygym.interop.openspiel`) ask the rules the same few questions at every step: whose
move, which actions, which chance outcomes, the next state, the scores, what each player sees.
:class:`CoreRules` answers them from the core over :class:`Position` objects, and decodes the
reference state only where something needs it (a render, a description, events). The answers
are the reference's: the differential test holds the twin to the reference at every node, and
``tests/test_engine_interop.py`` holds both envs to their reference runs.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import numpy as np

from psygym.core import CHANCE
from psygym.engine import compiled_game
from psygym.engine.compiled import (
    CompiledGame,
    class_methods,
    core_generator,
    untouched,
    write_generator,
)
from psygym.engine.episode import ReplayedEvents


class Position:
    """One state of a game, as the core's bytes; the reference state is decoded when read.

    Immutable and hashable (by its bytes): a position can be shared, as OpenSpiel's clones do.

    Args:
        compiled: the scenario's compiled twin.
        data: the state's bytes (checked by the core on every call).
        state: the reference state, where it is known already.
    """

    __slots__ = ("_compiled", "_state", "data")

    def __init__(self, compiled: CompiledGame, data: bytes, state: Hashable | None = None):
        self._compiled = compiled
        self.data = data
        self._state = state

    @property
    def state(self) -> Hashable:
        """The reference state (decoded once, when first read)."""
        if self._state is None:
            self._state = self._compiled.decode(self.data)
        return self._state

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Position) and other.data == self.data

    def __hash__(self) -> int:
        return hash(self.data)

    def __deepcopy__(self, memo: dict[int, Any]) -> Position:
        return self  # immutable


class CoreRules:
    """The questions an env asks at every step, answered by the compiled twin.

    Args:
        rules: the reference rules (they still describe, render and check actions).
        compiled: their compiled twin.
    """

    def __init__(self, rules: Any, compiled: CompiledGame):
        self.rules = rules
        self.compiled = compiled
        self._game = compiled.game
        self._methods = class_methods(rules)

    def serves(self) -> bool:
        """Whether the core answers as the reference would.

        Not while a method of the rules is replaced on the instance (a test's spy, a replayed
        chance).
        """
        return untouched(self.rules, self._methods)

    def initial_state(self) -> Position:
        """The initial state."""
        return Position(self.compiled, self._game.initial_state())

    def place(self, state: Hashable) -> Position | None:
        """``state`` as a position, or ``None`` where the twin cannot hold it."""
        try:
            data = self.compiled.encode(state)
        except (ValueError, TypeError, OverflowError):
            return None
        if self._game.check_state(data):
            return None
        return Position(self.compiled, data, state)

    def current_player(self, pos: Position) -> int:
        """The player to move (or the rules' CHANCE / TERMINAL)."""
        return self._game.current_player(pos.data)

    def legal_actions(self, pos: Position) -> list[int]:
        """The sorted legal actions of the player to move."""
        return list(self._game.legal_actions(pos.data))

    def chance_outcomes(self, pos: Position) -> list[tuple[int, float]]:
        """``(outcome, exact probability)`` in the reference's order."""
        return [(int(a), float(p)) for a, p in self._game.chance_outcomes(pos.data)]

    def apply(self, pos: Position, action: int, *, check: bool = True) -> Position:
        """The position after ``action``.

        Raises:
            IllegalActionError: with ``check``, an action the reference would refuse (its own
                error, naming the legal ones).
        """
        if check and not self._legal(pos, action):
            self.rules.check_action(pos.state, action)  # the reference's error, in its words
        return Position(self.compiled, self._game.apply(pos.data, int(action)))

    def _legal(self, pos: Position, action: int) -> bool:
        game, data = self._game, pos.data
        player = game.current_player(data)
        if player >= 0:
            return action in game.legal_actions(data)
        return player == CHANCE and action in [a for a, _ in game.chance_outcomes(data)]

    def walk(self, pos: Position, rng: np.random.Generator) -> tuple[Position, list[int]]:
        """The chance nodes from ``pos`` on, drawn from ``rng`` as the reference env draws them.

        Returns the position reached (a decision or the end) and the outcomes drawn; ``rng``
        draws on from where the core stopped.
        """
        if self._game.current_player(pos.data) != CHANCE:
            return pos, []
        pcg = core_generator(self.compiled.core, rng)
        data, path = self._game.walk_chance(pos.data, pcg)
        write_generator(pcg.words, rng)
        return Position(self.compiled, data), list(path)

    def returns(self, pos: Position) -> tuple[float, float]:
        """Both players' scores."""
        r0, r1 = self._game.returns(pos.data)
        return float(r0), float(r1)

    def observe(self, pos: Position, player: int) -> np.ndarray:
        """What ``player`` sees (float32, the reference's vector bit for bit)."""
        return self._game.observe(pos.data, player)

    def events(self, start: Position, path: list[int]) -> ReplayedEvents:
        """The events of the transitions ``path`` from ``start``, replayed when read."""
        return ReplayedEvents(self.rules, self.compiled, start.data, path)


def core_rules(rules: Any, engine: str | None = None) -> CoreRules | None:
    """The twin's answers for ``rules``, or ``None`` where the reference answers.

    ``None`` with ``engine="python"`` (or ``PSYGYM_ENGINE=python``, no core, no twin or one
    without an observation, a rules subclass, rules with a method replaced on the instance).
    """
    if engine not in (None, "core", "python"):
        raise ValueError(f"engine must be 'core', 'python' or None, not {engine!r}")
    if engine == "python":
        return None
    compiled = compiled_game(rules)
    if compiled is None or not compiled.game.observation_size:
        return None
    core = CoreRules(rules, compiled)
    return core if core.serves() else None


__all__ = ["CoreRules", "Position", "core_rules"]
