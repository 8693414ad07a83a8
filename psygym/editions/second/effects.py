"""Effects of 2nd-edition powers and the Psychic Duel: wounds and scores (2E-6, 2E-7, 2E-8).

:class:`SecondEffects` is the part of :class:`~.rules.SecondRules` that turns a power that takes
effect into one effect per unit it hits (a chance node each, unless it only scores a ``value``),
gives the exact distribution of the wounds an effect inflicts (2E-6: the 2nd-edition to-wound
chart, armour saves worsened by Strength, invulnerable saves not) and of a Psychic Duel (2E-7,
with :func:`dice_difference`), and takes the wounds off a unit with their score, ending a slain
psyker's powers and the game when a side has no unit left (2E-8).
"""

from __future__ import annotations

from fractions import Fraction
from functools import cache

from psygym.combat import (
    capped,
    roll_chance,
    save_chance,
    strength_save_modifier,
    to_wound_rt,
    wound_distribution,
)
from psygym.core import Event, EventKind
from psygym.dice import Dist, distribution
from psygym.editions.second.data import AttackEffect, DuelEffect, MortalEffect
from psygym.editions.second.facts import MEMO_SIZE
from psygym.editions.second.state import OVER, Effect, SecondState
from psygym.text import plural


@cache
def dice_difference(dice: str, plus_a: int, plus_b: int) -> Dist:
    """Distribution of (dice + plus_a) - (dice + plus_b) for two independent rolls."""
    a = distribution(dice)
    out: Dist = {}
    for x, p in a.items():
        for y, q in a.items():
            d = x + plus_a - y - plus_b
            out[d] = out.get(d, Fraction(0)) + p * q
    return out


class SecondEffects:
    """Effects, wounds and the duel's law (2E-6, 2E-7, 2E-8), mixed into the rules class.

    Reads the scenario's facts (:class:`~.facts.SecondFacts` fields, held by the rules as
    attributes), the ``value`` scores by power and Force (``_values``) and the memos the rules
    set up.
    """

    def effect_distribution(
        self, power: int, force: int, attacker: int, victim: int, left: int
    ) -> Dist:
        """Exact distribution of wounds an effect inflicts on ``victim`` with ``left`` wounds.

        2E-6: attacks wound by the 2nd-edition chart (``to_wound_rt``) and armour saves are
        worsened by Strength (``strength_save_modifier``); invulnerable saves are not.
        """
        spec = self.power_data[power].effect(force)
        target = self.units[victim]
        if isinstance(spec, AttackEffect):
            shooter = self.units[attacker]
            p_hit = (
                Fraction(1)
                if spec.to_hit == "auto"
                else roll_chance(max(2, 7 - shooter.ballistic_skill))
            )
            p_wound = roll_chance(to_wound_rt(spec.strength, target.toughness))
            unsaved = Fraction(1)
            if spec.saves:
                armour = target.save + strength_save_modifier(spec.strength)
                unsaved = 1 - save_chance(armour if target.save < 7 else None, target.invulnerable)
            damage = capped(distribution(spec.damage), target.wounds)
            return wound_distribution(spec.hits, p_hit * p_wound * unsaved, damage, cap=left)
        if isinstance(spec, MortalEffect):
            return capped(distribution(spec.wounds), left)
        if isinstance(spec, DuelEffect):
            a = self.ml[self.unit_psyker[attacker]]
            b = self.ml[self.unit_psyker[victim]]
            out: Dist = {}
            for d, p in dice_difference(spec.dice, a, b).items():
                k = min(max(d, 0), left)
                out[k] = out.get(k, Fraction(0)) + p
            return out
        return {0: Fraction(1)}

    def duel_distribution(self, state: SecondState, mine: int, enemy: int) -> Dist:
        """Psychic Duel (2E-7) outcome: +w the enemy loses w wounds, -w your psyker loses w."""
        st = self.settings
        add = st.psychic_duel_add_ml
        diff = dice_difference(
            st.psychic_duel_dice, self.ml[mine] if add else 0, self.ml[enemy] if add else 0
        )
        left_mine = state.wounds[self.psyker_unit[mine]]
        left_enemy = state.wounds[self.psyker_unit[enemy]]
        out: Dist = {}
        for d, p in diff.items():
            k = min(d, left_enemy) if d > 0 else -min(-d, left_mine)
            out[k] = out.get(k, Fraction(0)) + p
        return out

    def _rolls_dice(self, state: SecondState, eff: Effect) -> bool:
        """Whether an effect is a chance node (not a value, and its victim still stands)."""
        if self._values[eff.power][eff.force] is not None:  # a value effect
            return False
        victim = self.effect_units(eff)[1] if eff.reflected else eff.target
        return state.wounds[victim] > 0

    def _effects(
        self, s: SecondState, psyker: int, power: int, force: int, target: int, reflected: bool
    ) -> tuple[Effect, ...]:
        """The effects a power resolves (one per unit for 'every enemy unit in range')."""
        if target < self.num_units:  # one unit: the same effect whatever the state
            key = (power, force, psyker, target, reflected)
            effects = self._single_effects.get(key)
            if effects is None:
                if len(self._single_effects) >= MEMO_SIZE:
                    self._single_effects.clear()
                effects = self._single_effects[key] = (
                    Effect(power, force, psyker, target, reflected),
                )
            return effects
        if target == self.num_units:
            if reflected:
                return (Effect(power, force, psyker, self.psyker_unit[psyker], True),)
            return tuple(
                Effect(power, force, psyker, u)
                for u in self._area[(psyker, power)]
                if s.wounds[u] > 0
            )
        return (Effect(power, force, psyker, target, reflected),)

    def _value_of(self, power: int, force: int) -> float | None:
        """The score of a ``value`` effect (the scenario's ``power_values`` first), else None."""
        return self._values[power][force]

    def _wound(
        self,
        s: SecondState,
        unit: int,
        amount: int,
        events: list[Event],
        source: str,
        **changes,
    ) -> SecondState:
        """Take ``amount`` wounds from ``unit``; score them; remove it when slain.

        ``s`` is a transition's own copy (changed in place and returned). ``changes``: other
        fields the same transition sets (never ``wounds`` or ``score``); they are applied first
        (a slain psyker's powers end from the ``in_play`` and ``effects`` they give).
        """
        if changes:
            s.__dict__.update(**changes)
        amount = min(amount, s.wounds[unit])
        if amount <= 0:
            return s
        spec = self.units[unit]
        owner = self.owner[unit]
        wounds = list(s.wounds)
        wounds[unit] -= amount
        value = amount * spec.value_per_wound
        s.__dict__.update(wounds=tuple(wounds), score=s.score + (value if owner == 1 else -value))
        event = self._event_values.get(("wounds", unit, amount, source))
        events.append(self._wounds_event(unit, amount, source) if event is None else event)
        if wounds[unit] == 0:
            events.append(
                self._shared_event(
                    ("slain", unit),
                    lambda: Event(
                        EventKind.SLAIN, f"{spec.name} is slain.", owner, (("unit", spec.name),)
                    ),
                )
            )
            psyker = self.unit_psyker[unit]
            if psyker >= 0:
                in_play, effects = s.in_play, s.effects
                ended = [ip for ip in in_play if ip.psyker == psyker]
                for ip in ended:
                    events.append(
                        Event(
                            EventKind.END_POWER,
                            f"{self.power_data[ip.power].name} ends with {spec.name}.",
                            owner,
                        )
                    )
                # Its powers end, and so do their effects still waiting this phase.
                s.__dict__.update(
                    in_play=tuple(ip for ip in in_play if ip.psyker != psyker),
                    effects=tuple(e for e in effects if e.psyker != psyker),
                )
            if all(wounds[u] <= 0 for u in self.side_units[owner]):
                events.append(
                    Event(
                        EventKind.GAME_OVER,
                        f"{self.side_names[owner]} has no unit left: the game ends.",
                        owner,
                    )
                )
                s.__dict__.update(stage=OVER, pending=None, roll=None)
        return s

    def _wounds_event(self, unit: int, amount: int, source: str) -> Event:
        """The event of ``unit`` losing ``amount`` wounds to ``source`` (2E-6, 2E-8)."""
        spec = self.units[unit]
        return self._shared_event(
            ("wounds", unit, amount, source),
            lambda: Event(
                EventKind.WOUNDS,
                f"{spec.name} loses {plural(amount, 'wound')} to {source}.",
                self.owner[unit],
                (("unit", spec.name), ("amount", amount), ("source", source)),
            ),
        )

    def _no_effect_event(self, power: str, victim: int) -> Event:
        """The event of an effect of ``power`` that wounds nothing on ``victim`` (2E-6)."""
        name = self.units[victim].name
        return self._shared_event(
            ("no effect", power, victim),
            lambda: Event(
                EventKind.NO_EFFECT,
                f"{power} causes no wounds on {name}.",
                self.owner[victim],
                (("power", power), ("unit", name)),
            ),
        )


__all__ = ["SecondEffects", "dice_difference"]
