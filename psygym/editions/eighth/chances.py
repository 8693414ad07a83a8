"""The chance nodes of the 8th-edition rules: each node's table and a power's effect (8E-4 to 8E-7).

:class:`EighthChances` is the part of :class:`~.rules.EighthRules` that lists a chance node's
exact outcomes: the psychic test total (8E-4.1), the wounds of Perils and of its blast (8E-6.1,
8E-6.2), the deny roll (8E-5.2) and the wounds a manifested power inflicts (8E-7). Each node's
:class:`~psygym.kernel.ChanceTable` is memoised by the fields its distribution depends on; the
exact distributions themselves are :mod:`.effects`. It also gives the expected score of a power
taking effect, which the agents weigh.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from psygym.core import CHANCE
from psygym.editions.eighth.effects import (
    attack_distribution,
    deny_chance,
    mortal_distribution,
    rolloff_distribution,
)
from psygym.editions.eighth.state import Stage, State
from psygym.kernel import ChanceTable


class EighthChances:
    """Chance nodes and effect distributions, mixed into the rules class.

    Reads the scenario's facts (:class:`~.facts.EighthFacts` fields, held by the rules as
    attributes) and the memos the rules set up (``_chance_cache``, ``_mean_cache``,
    ``_test_outcomes``).
    """

    def chance_outcomes(self, state: State) -> list[tuple[int, float]]:
        """Exact aggregated outcomes of the pending roll (the rules' module docstring)."""
        if self.current_player(state) != CHANCE:
            return []
        return list(self._chance(state).outcomes)

    def sample_chance(self, state: State, rng: np.random.Generator) -> int:
        """Draw a chance outcome from the same cached table ``chance_outcomes`` lists (one draw)."""
        return self._chance(state).sample(rng)

    def effect_distribution(
        self, power: int, caster: int, target: int, total: int, remaining: int | None = None
    ) -> tuple[tuple[int, Fraction], ...]:
        """Exact distribution of wounds the target loses if ``power`` is manifested (8E-7).

        Args:
            power: power index.
            caster: casting unit.
            target: target unit.
            total: the psychic test total (for ``boosted`` effects such as Smite's D6).
            remaining: the target's wounds left (default: all of them).
        """
        eff = self.powers[power].effect
        unit = self.units[target]
        left = self.max_wounds[target] if remaining is None else remaining
        if eff.mortal_wounds is not None:
            expr = eff.mortal_wounds
            if eff.boosted_at is not None and total >= eff.boosted_at:
                expr = eff.boosted  # type: ignore[assignment]
            return mortal_distribution(expr, left)
        if eff.attack is not None:
            a = eff.attack
            return attack_distribution(
                a.hits,
                a.strength,
                a.ap,
                a.damage,
                unit.toughness,
                unit.save,
                unit.invulnerable,
                left,
                unit.wounds,
            )
        if eff.rolloff is not None:
            r = eff.rolloff
            return rolloff_distribution(
                r.dice, r.win, r.tie, self.units[caster].leadership, unit.leadership, left
            )
        return ((0, Fraction(1)),)

    def expected_effect(
        self, state: State, power: int, caster: int, target: int, total: int
    ) -> float:
        """Expected score, for the caster's side, of ``power`` taking effect now (8E-7, 8E-8.2)."""
        return self.mean_effect(power, caster, target, total, state.wounds[target])

    def mean_effect(
        self, power: int, caster: int, target: int, total: int, remaining: int
    ) -> float:
        """Expected score of ``power`` taking effect on a target with ``remaining`` wounds."""
        p = self.powers[power]
        if p.value is not None:
            return p.value
        eff = p.effect
        boosted = eff.boosted_at is not None and total >= eff.boosted_at
        key = (power, caster, target, remaining, boosted)
        value = self._mean_cache.get(key)
        if value is None:
            dist = self.effect_distribution(power, caster, target, total, remaining)
            value = float(sum(w * q for w, q in dist)) * self.units[target].value_per_wound
            self._mean_cache[key] = value
        return value

    def _chance(self, s: State) -> ChanceTable:
        """The chance table of ``s``, memoised by the fields its distribution depends on."""
        stage = s.stage
        if stage == Stage.TEST:
            key: tuple[Any, ...] = ("test",)
        elif stage == Stage.PERILS:
            key = ("mw", self.game.perils_mortal_wounds, s.wounds[s.caster])
        elif stage == Stage.BLAST:
            key = ("mw", self.game.perils_blast_mortal_wounds, s.wounds[s.blast[0]])
        elif stage == Stage.DENY_ROLL:
            key = ("deny", s.total)
        else:
            eff = self.powers[s.power].effect
            boosted = eff.boosted_at is not None and s.total >= eff.boosted_at
            key = ("effect", s.power, s.caster, s.target, s.wounds[s.target], boosted)
        return self._chance_cache.get(key, lambda: self._exact_chance(s, key))

    def _exact_chance(self, s: State, key: tuple[Any, ...]) -> Any:
        """Exact ``(outcome, Fraction)`` pairs of the chance node ``s`` (``key``: its kind)."""
        if key[0] == "test":  # 8E-4.1
            return self._test_outcomes
        if key[0] == "mw":  # 8E-6.1, 8E-6.2
            return mortal_distribution(key[1], key[2])
        if key[0] == "deny":  # 8E-5.2
            q = deny_chance(s.total)
            return [(o, p) for o, p in ((0, 1 - q), (1, q)) if p]
        return self.effect_distribution(s.power, s.caster, s.target, s.total, s.wounds[s.target])


__all__ = ["EighthChances"]
