"""The chance nodes of the 7th-edition rules: exact tables and each node's outcomes (7E-2 to 7E-7).

Chance outcomes are aggregated (the rules' module docstring): a casting roll is one node whose
outcomes are ``2*successes + perils`` (:func:`cast_distribution`), a deny one node "denied or
not" (:func:`deny_chance`), an attack one node over the wounds it inflicts
(:func:`allocate_wounds`).

:class:`SeventhChances` is the part of :class:`~.rules.SeventhRules` that lists a chance node's
exact outcomes, keys it by everything its distribution depends on, and keeps its
:class:`~psygym.kernel.ChanceTable`: the D6 and D3 nodes have one table each, a casting roll's
table is kept by caster, power and dice, the other nodes' by their keys.
"""

from __future__ import annotations

from fractions import Fraction
from functools import cache

import numpy as np

from psygym.combat import (
    capped,
    roll_chance,
    to_wound_7th,
    unsaved_chance_7th,
)
from psygym.dice import Dist, at_least, binomial, distribution, pool, pool_any_double
from psygym.editions.seventh.facts import MEMO_SIZE
from psygym.editions.seventh.spec import AREA_HITS
from psygym.editions.seventh.state import (
    _CAST_ROLL,
    _DENY,
    _DENY_ROLL,
    _DICE,
    _DISCIPLINE,
    _DRAIN,
    _EFFECT,
    _GEN_ROLL,
    _LD_TEST,
    _OVER,
    _PERILS,
    _PERILS_HITS,
    _PHASE_ROLL,
    _PURGE,
    _SELECT,
    _SWAP,
    Cast,
    Stage,
    State,
)
from psygym.kernel import ChanceTable

_DECISIONS = frozenset((_DISCIPLINE, _SWAP, _SELECT, _DICE, _DENY))
_CHANCE_STAGES = frozenset(Stage) - _DECISIONS - {_OVER}


# ----------------------------------------------------------------------------- exact tables
@cache
def ld_pass(leadership: int) -> Fraction:
    """P(2D6 <= Ld), the Leadership test (7E-6)."""
    return sum((p for v, p in distribution("2D6").items() if v <= leadership), Fraction(0))


@cache
def cast_distribution(dice: int, doubles_peril: bool) -> tuple[tuple[int, Fraction], ...]:
    """Outcomes ``2*successes + perils`` of a casting roll (7E-4.3, 7E-4.4).

    Successes are rolls of 4+; Perils is two or more 6s, or any double for Daemonology powers cast
    by a psyker without the matching flag.
    """
    out: dict[int, Fraction] = {}
    if doubles_peril:
        for (k, dbl), p in pool_any_double(dice, 4).items():
            key = 2 * k + int(dbl)
            out[key] = out.get(key, Fraction(0)) + p
    else:
        for (k, sixes), p in pool(dice, 4).items():
            key = 2 * k + int(sixes >= 2)
            out[key] = out.get(key, Fraction(0)) + p
    return tuple(sorted(out.items()))


@cache
def deny_chance(dice: int, threshold: int, successes: int) -> Fraction:
    """P(at least ``successes`` of ``dice`` dice roll ``threshold``+) (7E-5.2, 7E-5.3)."""
    return at_least(binomial(dice, roll_chance(threshold)), successes)


class SeventhChances:
    """Chance nodes: outcomes, keys and memoised tables, mixed into the rules class.

    Reads the scenario's facts (:class:`~.facts.SeventhFacts` fields, held by the rules as
    attributes) and the memos the rules set up (``_chance_cache``, ``_stage_tables``,
    ``_cast_tables``, ``_node_tables``, ``_effect_cache``).
    """

    def chance_outcomes(self, s: State) -> list[tuple[int, float]]:
        """Exact outcomes of the pending chance event (see the stage comments in ``state.py``).

        Empty at decision nodes and at the end of the game.
        """
        if s.stage not in _CHANCE_STAGES:
            return []
        return list(self._table(s).outcomes)

    def sample_chance(self, s: State, rng: np.random.Generator) -> int:
        """Draw a chance outcome (one uniform draw) from the table ``chance_outcomes`` reads."""
        return self._table(s).sample(rng)

    def _fixed_stage_tables(self) -> tuple[ChanceTable | None, ...]:
        """The one table of each node whose outcomes never change (the ``(stage,)`` keys)."""
        fixed = {_PHASE_ROLL: _d6(), _PERILS: _d6(), _DRAIN: tuple(distribution("D3").items())}
        return tuple(
            self._chance_cache.get((st,), lambda st=st: _exact(fixed[st])) if st in fixed else None
            for st in Stage
        )

    def _table(self, s: State) -> ChanceTable:
        """The chance table of the pending event, memoised per chance-node key.

        The D6 and D3 nodes have one table each, a casting roll's table is kept by its dice,
        caster and power too (what its key is made from), and the other nodes' by their keys in
        a plain dictionary; these are the tables the chance-node keys find in the same cache.
        """
        st = s.stage
        table = self._stage_tables[st]
        if table is not None:
            return table
        if st == _CAST_ROLL:
            cast = s.cast
            by_dice = self._cast_tables[cast.caster][cast.power]
            dice = cast.dice
            table = by_dice[dice] if 0 <= dice < len(by_dice) else None
            if table is None:
                table = self._chance_cache.get(self._chance_key(s), lambda: self._exact_outcomes(s))
                if 0 <= dice < len(by_dice):
                    by_dice[dice] = table
            return table
        key = self._chance_key(s)
        table = self._node_tables.get(key)
        if table is None:
            table = self._chance_cache.get(key, lambda: self._exact_outcomes(s))
            if len(self._node_tables) >= MEMO_SIZE:
                self._node_tables.clear()
            self._node_tables[key] = table
        return table

    def _exact_outcomes(self, s: State) -> tuple[tuple[int, Fraction], ...]:
        """Exact outcomes, sorted, zero-probability ones dropped (what the table holds)."""
        return _exact(self._compute_distribution(s))

    def _chance_key(self, s: State) -> tuple:
        """Everything the pending chance event's distribution depends on."""
        st = s.stage
        cast = s.cast
        # The commonest nodes after the casting roll first (the order changes no key).
        if st == _DENY_ROLL:
            _, threshold = self.deny_unit_and_threshold(s, cast)
            return (st, cast.deny_dice, threshold, cast.successes)
        if st == _EFFECT:
            return self._effect_key(s, s.targets[0])
        if st in (_PHASE_ROLL, _PERILS, _DRAIN):
            return (st,)
        if st == _GEN_ROLL:
            return (st, s.gen_disc, s.units[s.gen_unit].powers)
        assert cast is not None
        if st == _CAST_ROLL:
            return (st, cast.dice, self._doubles_peril(cast))
        if st == _LD_TEST:
            return (st, cast.caster)
        if st == _PERILS_HITS:
            return (st, cast.caster, s.units[cast.caster].wounds)
        if st == _PURGE:
            return (st, s.units[cast.caster].powers)
        raise ValueError(f"stage {st.name} is not a chance node")

    def _effect_key(self, s: State, target: int) -> tuple:
        assert s.cast is not None
        u = s.units[target]
        return (_EFFECT, s.cast.power, s.cast.caster, target, u.wounds, u.surge)

    def chance_distribution(self, s: State) -> tuple[tuple[int, Fraction], ...]:
        """Exact (Fraction) outcomes of the pending chance event, in ``chance_outcomes`` order."""
        return self._table(s).exact

    def _compute_distribution(self, s: State) -> tuple[tuple[int, Fraction], ...]:
        st = s.stage
        if st == _PHASE_ROLL:
            return _d6()
        if st == _GEN_ROLL:
            d = self.disciplines[s.gen_disc]
            left = [p for p in self.numbered[d] if p not in s.units[s.gen_unit].powers]
            return tuple((p, Fraction(1, len(left))) for p in left)
        if st == _CAST_ROLL:
            assert s.cast is not None
            return cast_distribution(s.cast.dice, self._doubles_peril(s.cast))
        if st == _PERILS:
            return _d6()
        if st == _LD_TEST:
            assert s.cast is not None
            p = ld_pass(self.specs[s.cast.caster].leadership)
            return _binary(p)
        if st == _PERILS_HITS:
            assert s.cast is not None
            return tuple(sorted(self._removed_hits_dist(s, s.cast.caster).items()))
        if st == _PURGE:
            assert s.cast is not None
            known = s.units[s.cast.caster].powers
            return tuple((p, Fraction(1, len(known))) for p in known)
        if st == _DRAIN:
            return tuple(sorted(distribution("D3").items()))
        if st == _DENY_ROLL:
            assert s.cast is not None
            _, threshold = self.deny_unit_and_threshold(s, s.cast)
            return _binary(deny_chance(s.cast.deny_dice, threshold, s.cast.successes))
        if st == _EFFECT:
            return tuple(sorted(self.effect_distribution(s, s.targets[0]).items()))
        raise ValueError(f"stage {st.name} is not a chance node")

    def _doubles_peril(self, cast: Cast) -> bool:
        flag = self.powers[cast.power].doubles_perils_unless
        psyker = self.specs[cast.caster].psyker
        return flag is not None and not (psyker is not None and getattr(psyker, flag))

    def _removed_hits_dist(self, s: State, unit: int) -> Dist:
        spec, rh = self.specs[unit], self.removed_hits
        hit = to_wound_7th(rh.strength, spec.toughness)
        p = roll_chance(hit) * unsaved_chance_7th(spec.save, spec.invulnerable, rh.ap)
        instant = self._instant(rh.strength, unit)
        return self._attack_wounds(distribution(rh.hits), p, ((1, Fraction(1)),), s, unit, instant)

    def _instant(self, strength: int, unit: int) -> bool:
        """Instant Death (rules' docstring): S >= 2 x T against a model of more than one wound."""
        spec = self.specs[unit]
        return self.instant_death and spec.wounds > 1 and strength >= 2 * spec.toughness

    def _attack_wounds(
        self,
        hits: Dist,
        p: Fraction,
        damage: tuple[tuple[int, Fraction], ...],
        s: State,
        unit: int,
        instant: bool,
    ) -> Dist:
        """Wounds lost to ``hits`` hits that each become an unsaved wound with chance ``p``."""
        left, per_model = s.units[unit].wounds, self.specs[unit].wounds
        # The number of unsaved wounds first, then what they take: the same exact sums as
        # allocating after each (hits, unsaved) pair, with far fewer Fraction products.
        unsaved: Dist = {}
        for h, ph in hits.items():
            for k, pk in binomial(h, p).items():
                unsaved[k] = unsaved.get(k, Fraction(0)) + ph * pk
        out: Dist = {}
        for k, pk in unsaved.items():
            for w, pw in allocate_wounds(left, per_model, k, damage, instant):
                out[w] = out.get(w, Fraction(0)) + pk * pw
        return out

    def effect_distribution(self, s: State, target: int) -> Dist:
        """Exact wounds the pending manifested power inflicts on ``target`` (7E-7.1)."""
        key = self._effect_key(s, target)
        hit = self._effect_cache.get(key)
        if hit is None:
            hit = self._effect_cache[key] = {
                k: p for k, p in self._effect_distribution(s, target).items() if p
            }
        return hit

    def _effect_distribution(self, s: State, target: int) -> Dist:
        assert s.cast is not None
        power = self.powers[s.cast.power]
        eff = power.effect
        spec, u = self.specs[target], s.units[target]
        if eff.mortal is not None:
            d = distribution(eff.mortal)
            if eff.minus_target_ld:
                d = {v - spec.leadership: p for v, p in d.items()}
            return capped(d, u.wounds)
        if eff.rolloff_mortal is not None:
            caster_ld = self.specs[s.cast.caster].leadership
            p_win = _rolloff_win(caster_ld, spec.leadership)
            out = {
                k: p * p_win for k, p in capped(distribution(eff.rolloff_mortal), u.wounds).items()
            }
            out[0] = out.get(0, Fraction(0)) + 1 - p_win
            return out
        atk = eff.attack
        assert atk is not None
        caster = self.specs[s.cast.caster]
        if atk.hits in AREA_HITS:
            hits: Dist = {min(self.models_left(s, target), AREA_HITS[atk.hits]): Fraction(1)}
        else:
            hits = distribution(atk.hits)
        p_hit = (
            Fraction(1) if atk.to_hit == "auto" else roll_chance(max(2, 7 - caster.ballistic_skill))
        )
        invuln = spec.invulnerable
        if u.surge:
            invuln = 3 if invuln is None else min(invuln, 3)  # 7E-6.6 Warp Surge: 3++
        ap_dist = {None: Fraction(1)} if atk.ap == "none" else distribution(atk.ap)
        damage = tuple(sorted(distribution(atk.damage).items()))
        # Strengths and APs that give the same chance per hit (and the same Instant Death)
        # give the same wounds: their weights are added first, so each is allocated once.
        weights: dict[tuple[Fraction, bool], Fraction] = {}
        for strength, ps in distribution(atk.strength).items():
            wound_on = atk.always_wounds_on or to_wound_7th(strength, spec.toughness)
            instant = self._instant(strength, target)
            for ap, pa in ap_dist.items():
                p = p_hit * roll_chance(wound_on) * unsaved_chance_7th(spec.save, invuln, ap)
                weights[(p, instant)] = weights.get((p, instant), Fraction(0)) + ps * pa
        out: Dist = {}
        for (p, instant), weight in weights.items():
            for w, pw in self._attack_wounds(hits, p, damage, s, target, instant).items():
                out[w] = out.get(w, Fraction(0)) + weight * pw
        return out


@cache
def allocate_wounds(
    wounds: int,
    per_model: int,
    unsaved: int,
    damage: tuple[tuple[int, Fraction], ...],
    instant: bool,
) -> tuple[tuple[int, Fraction], ...]:
    """Wounds a unit loses to ``unsaved`` unsaved wounds, one at a time (7E-7.1, defaults).

    Each unsaved wound goes to the partly wounded model if there is one (wounds come off the
    unit's pool model by model) and takes ``damage`` wounds from it, never more than that model
    has left (no spill into the next model); with ``instant`` (Instant Death) it removes the model
    outright.

    Args:
        wounds: wounds left in the unit.
        per_model: wounds of one model.
        unsaved: number of unsaved wounds.
        damage: distribution of wounds per unsaved wound, as sorted (value, chance) pairs.
        instant: Instant Death applies.

    Returns:
        Sorted (wounds lost, chance) pairs.
    """
    dist: dict[int, Fraction] = {wounds: Fraction(1)}
    for _ in range(unsaved):
        nxt: dict[int, Fraction] = {}
        for w, p in dist.items():
            if w <= 0:
                nxt[0] = nxt.get(0, Fraction(0)) + p
                continue
            model = w % per_model or per_model  # wounds left on the model being hit
            if instant:
                nxt[w - model] = nxt.get(w - model, Fraction(0)) + p
                continue
            for d, pd in damage:
                k = w - min(max(d, 0), model)
                nxt[k] = nxt.get(k, Fraction(0)) + p * pd
        dist = nxt
    return tuple(sorted((wounds - w, p) for w, p in dist.items() if p))


@cache
def _rolloff_win(ld_a: int, ld_b: int) -> Fraction:
    """P(D6 + ld_a > D6 + ld_b)."""
    d6 = distribution("D6")
    return sum(
        (p * q for a, p in d6.items() for b, q in d6.items() if a + ld_a > b + ld_b), Fraction(0)
    )


@cache
def _d6() -> tuple[tuple[int, Fraction], ...]:
    return tuple(sorted(distribution("D6").items()))


def _exact(dist) -> tuple[tuple[int, Fraction], ...]:
    """Outcomes of ``dist`` (pairs or a dict's items), sorted, zero-probability ones dropped."""
    return tuple((int(k), p) for k, p in sorted(dist) if p)


def _binary(p: Fraction) -> tuple[tuple[int, Fraction], ...]:
    return tuple((k, q) for k, q in ((0, 1 - p), (1, p)) if q)


__all__ = ["SeventhChances", "allocate_wounds", "cast_distribution", "deny_chance", "ld_pass"]
