"""Rules of the toy dice game (a pig variant), on the whole ``psygym.core.RulesBase`` contract."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from pydantic import Field

from psygym.core import CHANCE, TERMINAL, ActionView, Event, GameInfo, RulesBase
from psygym.kernel import ChanceTable, evolve
from psygym.odds import Table
from psygym.scenario import Spec, validate

STOP, ROLL = 0, 1
"""The two actions: bank the turn's points, or roll the die."""
FACES = 6
D6 = ChanceTable((face, Fraction(1, FACES)) for face in range(1, FACES + 1))
"""The one chance node: a fair D6, each face 1/6."""


class GameSpec(Spec):
    """The ``[game]`` table of a toy scenario."""

    turns: int = Field(3, ge=1, le=10, description="turns per player")
    max_rolls: int = Field(3, ge=1, le=6, description="rolls per turn at most")
    first_player: int = Field(0, ge=0, le=1)


class SideSpec(Spec):
    """One side: only a name."""

    name: str = Field(min_length=1)


class ScenarioSpec(Spec):
    """A toy scenario file."""

    edition: str
    name: str = Field(min_length=1)
    description: str = ""
    game: GameSpec = GameSpec()
    sides: list[SideSpec] = Field(min_length=2, max_length=2)


@dataclass(frozen=True)
class DiceState:
    """A frozen, hashable toy state.

    Attributes:
        turn: turns finished so far (both players together).
        scores: banked points of players 0 and 1.
        pot: points rolled this turn, not yet banked.
        rolls: rolls made this turn.
        rolling: whether the die is in the air (a chance node).
    """

    turn: int = 0
    scores: tuple[int, int] = (0, 0)
    pot: int = 0
    rolls: int = 0
    rolling: bool = False


@dataclass(frozen=True)
class Stop(ActionView):
    """Bank the pot."""

    pot: int = 0


@dataclass(frozen=True)
class Roll(ActionView):
    """Roll the die."""


@dataclass(frozen=True)
class Face(ActionView):
    """A chance outcome: the face rolled."""

    face: int = 0


class ToyRules(RulesBase):
    """The toy dice game built from a validated scenario."""

    edition = "toy-dice"
    num_actions = 2
    observation_size = 6

    def __init__(self, scenario: ScenarioSpec, source: str = "<toy>"):
        self.scenario = scenario
        self.edition = scenario.edition
        self.source = source
        self.turns = scenario.game.turns
        self.max_rolls = scenario.game.max_rolls
        self.first = scenario.game.first_player
        self.bound = self.turns * self.max_rolls * FACES

    def game_info(self) -> GameInfo:
        """Sizes and bounds of the game."""
        return GameInfo(
            num_players=2,
            num_actions=self.num_actions,
            observation_size=self.observation_size,
            information=self.information,
            max_chance_outcomes=FACES,
            max_game_length=2 * self.turns * (self.max_rolls + 1),
            min_utility=-self.bound,
            max_utility=self.bound,
        )

    def initial_state(self) -> DiceState:
        """No points, player ``first_player`` to move."""
        return DiceState()

    def _mover(self, state: DiceState) -> int:
        return (self.first + state.turn) % 2

    def current_player(self, state: DiceState) -> int:
        """The player whose turn it is, CHANCE while the die rolls, TERMINAL at the end."""
        if state.turn >= 2 * self.turns:
            return TERMINAL
        return CHANCE if state.rolling else self._mover(state)

    def legal_actions(self, state: DiceState) -> list[int]:
        """Bank, and roll while rolls are left."""
        if self.current_player(state) < 0:
            return []
        return [STOP, ROLL] if state.rolls < self.max_rolls else [STOP]

    def chance_outcomes(self, state: DiceState) -> list[tuple[int, float]]:
        """The six faces, 1/6 each, while the die rolls."""
        return list(D6.outcomes) if self.current_player(state) == CHANCE else []

    def chance_distribution(self, state: DiceState) -> list[tuple[int, Fraction]]:
        """The same outcomes with exact probabilities."""
        return list(D6.exact) if self.current_player(state) == CHANCE else []

    def sample_chance(self, state: DiceState, rng: np.random.Generator) -> int:
        """One face drawn from the exact table."""
        return D6.sample(rng)

    def _end_turn(self, state: DiceState, scores: tuple[int, int]) -> DiceState:
        return evolve(state, turn=state.turn + 1, scores=scores, pot=0, rolls=0, rolling=False)

    def _apply(self, state: DiceState, action: int) -> tuple[DiceState, tuple[Event, ...]]:
        p = self._mover(state)
        if state.rolling:
            if action == 1:
                ev = Event("bust", f"player {p} rolls a 1 and loses {state.pot} points", p)
                return self._end_turn(state, state.scores), (ev,)
            ev = Event("roll", f"player {p} rolls a {action}", p, (("face", action),))
            return evolve(state, pot=state.pot + action, rolling=False), (ev,)
        if action == ROLL:
            return evolve(state, rolls=state.rolls + 1, rolling=True), ()
        scores = list(state.scores)
        scores[p] += state.pot
        ev = Event("bank", f"player {p} banks {state.pot} points", p, (("points", state.pot),))
        return self._end_turn(state, (scores[0], scores[1])), (ev,)

    def returns(self, state: DiceState) -> tuple[float, float]:
        """Banked points of each player minus the other's (zero-sum)."""
        d = float(state.scores[0] - state.scores[1])
        return d, -d

    def observe(self, state: DiceState, player: int) -> np.ndarray:
        """``[to move, turns left / turns, own score, other score, pot, rolls left]``."""
        mover = self.current_player(state) == player
        left = max(0, 2 * self.turns - state.turn)
        return np.array(
            [
                float(mover),
                left / (2 * self.turns),
                state.scores[player],
                state.scores[1 - player],
                state.pot,
                self.max_rolls - state.rolls,
            ],
            dtype=np.float32,
        )

    def describe(self, state: DiceState, action: int) -> ActionView:
        """``Stop``/``Roll`` at decisions, ``Face`` at the chance node."""
        if state.rolling:
            return Face(label=f"rolled a {action}", face=action)
        if action == STOP:
            return Stop(label=f"bank {state.pot} points", pot=state.pot)
        return Roll(label="roll the die")

    def render(self, state: DiceState, player: int | None = None) -> str:
        """One line: turn, scores, pot."""
        names = [s.name for s in self.scenario.sides]
        return (
            f"turn {min(state.turn + 1, 2 * self.turns)}/{2 * self.turns}: "
            f"{names[0]} {state.scores[0]}, {names[1]} {state.scores[1]}; "
            f"pot {state.pot} after {state.rolls} rolls"
        )


def rules_from_data(data: Mapping[str, Any], source: str) -> ToyRules:
    """Validate a toy scenario's data and build its rules."""
    return ToyRules(validate(ScenarioSpec, data, source), source)


def odds_table(max_rolls: int = 6) -> Table:
    """One exact table: the chance to keep the pot after n rolls, and the pot expected then."""
    keep = Fraction(FACES - 1, FACES)
    mean_face = Fraction(sum(range(2, FACES + 1)), FACES - 1)
    rows = [[n, keep**n, float(keep**n * n * mean_face)] for n in range(1, max_rolls + 1)]
    return Table(
        name="keep",
        title="Toy dice: chance to keep the pot",
        columns=["rolls", "keep %", "expected pot"],
        rows=rows,
        note="a 1 loses the pot; each other face adds its pips",
    )


__all__ = ["D6", "DiceState", "ROLL", "STOP", "ToyRules", "odds_table", "rules_from_data"]
