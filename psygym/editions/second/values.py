"""What 2nd-edition powers and duels are worth: expected values and the score bounds (2E-8).

:class:`SecondValues` is the part of :class:`~.rules.SecondRules` that values a power resolving
now, a cast action, the power waiting for a response and a Psychic Duel for the side that plays
it, from public information only (what heuristics and advice read), and bounds the game's
chance nodes and scores (:meth:`SecondValues.game_info`).
"""

from __future__ import annotations

from fractions import Fraction

from psygym.core import GameInfo
from psygym.editions.second.actions import PAY_ULTIMATE
from psygym.editions.second.data import NUM_CARDS
from psygym.editions.second.effects import dice_difference
from psygym.editions.second.views import SecondView
from psygym.kernel import evolve


class SecondValues:
    """Expected values and bounds (2E-6 to 2E-8), mixed into :class:`~.rules.SecondRules`.

    Reads the scenario's facts (:class:`~.facts.SecondFacts` fields, held by the rules as
    attributes), exact effect distributions (:class:`~.effects.SecondEffects`) and the memos
    ``_mean_cache`` and ``_duel_cache``; the values read a player's view, never a hidden hand.
    """

    def effect_value(
        self, wounds: tuple[int, ...], psyker: int, power: int, force: int, target: int
    ) -> float:
        """Expected score the caster's side gains when a power resolves now (public info only)."""
        value = self._value_of(power, force)
        if value is not None:
            return value
        side = self.psyker_side[psyker]
        victims = self._area[(psyker, power)] if target == self.num_units else (target,)
        total = 0.0
        attacker = self.psyker_unit[psyker]
        for victim in victims:
            left = wounds[victim]
            if left <= 0:
                continue
            key = (power, force, attacker, victim, left)
            mean = self._mean_cache.get(key)
            if mean is None:
                dist = self.effect_distribution(power, force, attacker, victim, left)
                mean = self._mean_cache[key] = float(sum(w * p for w, p in dist.items()))
            sign = 1.0 if self.owner[victim] != side else -1.0
            total += sign * mean * self.units[victim].value_per_wound
        return total

    def cast_value(self, view: SecondView, action: int) -> float:
        """Expected value of a cast action for the caster's side, from a player's view."""
        i, j, target, pay = self.decode_cast(action)
        k = view.powers[i][j]
        force = self.power_data[k].max_force if pay == PAY_ULTIMATE else pay
        return self.effect_value(view.wounds, i, k, force, target)

    def pending_value(self, view: SecondView) -> float:
        """Expected value, for its caster, of the power waiting for a response."""
        p = view.pending
        if p is None:
            return 0.0
        return self.effect_value(view.wounds, p.psyker, p.power, p.force, p.target)

    def duel_value(self, view: SecondView, action: int) -> float:
        """Expected wound value of a Psychic Duel action for the player who plays it (2E-7).

        Exact (Fractions) once per (psyker, enemy, wounds left of both), then memoised.
        """
        i, k = self.actions.decode_duel(action)
        mine, theirs = self.psyker_unit[i], self.psyker_unit[k]
        key = (i, k, view.wounds[mine], view.wounds[theirs])
        value = self._duel_cache.get(key)
        if value is None:
            value = self._duel_cache[key] = self._duel_value(i, k, key[2], key[3])
        return value

    def _duel_value(self, i: int, k: int, left_mine: int, left_theirs: int) -> float:
        """The exact expected wound value of psyker ``i``'s duel against ``k`` (2E-7)."""
        mine, theirs = self.psyker_unit[i], self.psyker_unit[k]
        st = self.settings
        add = st.psychic_duel_add_ml
        diff = dice_difference(
            st.psychic_duel_dice, self.ml[i] if add else 0, self.ml[k] if add else 0
        )
        total = Fraction(0)
        for d, p in diff.items():
            if d > 0:
                total += p * min(d, left_theirs) * Fraction(self.units[theirs].value_per_wound)
            elif d < 0:
                total -= p * min(-d, left_mine) * Fraction(self.units[mine].value_per_wound)
        return float(total)

    def game_info(self) -> GameInfo:
        """Static facts of this scenario, with bounds on chance outcomes and utilities.

        ``max_chance_outcomes``: the largest of the card kinds (a deal, 2E-2), ``5F + 1`` warp
        flux totals of F dice (2E-3.1), a discipline pool (2E-1.1), two (Nullify, Daemonic
        Attack), a Psychic Duel's differences (2E-7) and 0..W wounds of the sturdiest unit
        (2E-6). Utilities (2E-8): every enemy wound's value, plus at most one ``value`` effect
        per unit for each power cast (one per psyker and phase) or in play (one per slot).
        """
        st = self.settings
        add = st.psychic_duel_add_ml
        duel = max(
            (
                len(dice_difference(st.psychic_duel_dice, a if add else 0, b if add else 0))
                for a in self.ml
                for b in self.ml
            ),
            default=0,
        )
        pools = max((len(p) for p in self.draw_pools if p is not None), default=0)
        most = max(NUM_CARDS, 5 * st.warp_flux_dice + 1, pools, 2, duel, max(self.max_wounds) + 1)
        wound_value = max(
            sum(self.max_wounds[u] * self.units[u].value_per_wound for u in self.side_units[s])
            for s in (0, 1)
        )
        values = [
            abs(v)
            for k in range(len(self.power_data))
            for f in range(self.force_range[k][0], self.force_range[k][1] + 1)
            if (v := self._value_of(k, f)) is not None
        ]
        P = self.num_psykers
        per_phase = (P + P * self.num_slots) * self.num_units * max(values, default=0.0)
        bound = float(wound_value + 2 * self.game.battle_rounds * per_phase)
        return evolve(
            super().game_info(),
            max_chance_outcomes=most,
            min_utility=-bound,
            max_utility=bound,
        )


__all__ = ["SecondValues"]
