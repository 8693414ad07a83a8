"""What the 8th-edition players see: observations, typed action views and text rendering.

:class:`EighthView` is built once per rules object (``rules.view``); the rules' ``observe``,
``describe`` and ``render`` delegate to it. It reads a state and the scenario's read-only
:class:`~.facts.EighthFacts` only, never the rules class (the rules hand it their memoised
``cast_options``). 8th edition has no hidden information (8E-1), so every view shows the whole
state.

Observations are assembled from three cached float32 blocks (the header, the per-unit wounds
and denies, the per-power block), each keyed by the few state fields it reads; then the per-unit
0/1 flags of the selection (selected, caster, target, denier) are set from a cached index array
and the score is written last. The values are exactly those of building the whole vector from
Python floats.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from psygym.core import ActionView
from psygym.editions.eighth.actions import CastAction
from psygym.editions.eighth.effects import deny_chance, is_perils
from psygym.editions.eighth.facts import EighthFacts
from psygym.editions.eighth.state import Stage, State
from psygym.text import plural

DECISION_KINDS = 5
"""Observation entries of the one-hot node kind: select, power, deny, chance, game over."""
GLOBALS = 8
"""Observation entries after the node kind (round, whose phase, the pending test, score)."""
UNIT_FEATURES = 10
"""Observation entries per unit."""
POWER_FEATURES = 4
"""Observation entries per power."""
_KIND = {Stage.SELECT: 0, Stage.POWER: 1, Stage.DENY: 2, Stage.OVER: 4}
_HEAD = DECISION_KINDS + GLOBALS
_SCORE = _HEAD - 1  # the score is the last global entry
_FLAG_COLUMN = 6  # per-unit columns 6..9: selected, caster, target, denier
_CACHE_LIMIT = 100_000


def observation_size(n_units: int, n_powers: int) -> int:
    """Length of the observation vector for ``n_units`` units and ``n_powers`` powers."""
    return _HEAD + UNIT_FEATURES * n_units + POWER_FEATURES * n_powers


# ---------------------------------------------------------------- typed views of actions


@dataclass(frozen=True)
class SelectUnit(ActionView):
    """Select a PSYKER unit to manifest powers (8E-2.1)."""

    unit: str = ""


@dataclass(frozen=True)
class EndPhase(ActionView):
    """End the Psychic phase (8E-2.1)."""

    side: str = ""


@dataclass(frozen=True)
class Cast(ActionView):
    """Attempt a power (8E-3, 8E-4)."""

    caster: str = ""
    power: str = ""
    warp_charge: int = 0
    target: str | None = None


@dataclass(frozen=True)
class StopUnit(ActionView):
    """Stop manifesting powers with the selected unit (8E-2.2)."""

    unit: str = ""


@dataclass(frozen=True)
class Deny(ActionView):
    """Attempt to deny the pending power with ``denier`` (``None``: do not deny) (8E-5)."""

    denier: str | None = None
    power: str = ""
    test_total: int = 0
    chance: float = 0.0


@dataclass(frozen=True)
class Outcome(ActionView):
    """A chance outcome: ``kind`` is test, perils, blast, deny or effect; ``value`` its number."""

    kind: str = ""
    value: int = 0
    unit: str | None = None


class EighthView:
    """Observations, action views and rendering for one scenario (:class:`~.rules.EighthRules`).

    Args:
        facts: the scenario's facts.
        cast_options: the rules' ``cast_options(state, unit)`` (8E-3), which the board lists as
            the powers a unit may still attempt.
    """

    def __init__(self, facts: EighthFacts, cast_options: Callable[[State, int], list[int]]):
        self.facts = facts
        self._cast_options = cast_options
        n = facts.n_units
        first = facts.game.first_player
        self._first = (float(first == 0), float(first == 1))
        self._mine = tuple(tuple(float(facts.side_of[i] == p) for i in range(n)) for p in (0, 1))
        self._psyker = tuple(float(u.psyker) for u in facts.units)
        self._deny = [float(deny_chance(t)) if t else 0.0 for t in range(13)]
        self._heads: dict[tuple[Any, ...], np.ndarray] = {}
        self._unit_blocks: dict[tuple[Any, ...], np.ndarray] = {}
        self._power_blocks: dict[tuple[Any, ...], np.ndarray] = {}
        self._flags: dict[tuple[int, int, int, int], tuple[int, ...]] = {}

    # ------------------------------------------------------------------ observation

    def observe(self, state: State, player: int) -> np.ndarray:
        """Everything ``player`` may see, float32 (layout: :meth:`.rules.EighthRules.observe`)."""
        pending = state.power >= 0
        total = state.total if pending else 0
        head_key = (state.stage, state.round, state.active == player, player, total)
        if pending:
            head_key += (state.warp_charge,)
        head = self._heads.get(head_key)
        if head is None:
            head = self._cached(self._heads, head_key, self._head(state, player))
        unit_key = (player, state.wounds, state.deny_left)
        units = self._unit_blocks.get(unit_key)
        if units is None:
            units = self._cached(self._unit_blocks, unit_key, self._units(state, player))
        power_key = (state.attempts, state.caster, state.power)
        powers = self._power_blocks.get(power_key)
        if powers is None:
            powers = self._cached(self._power_blocks, power_key, self._powers(state))
        out = np.concatenate((head, units, powers))
        flag_key = (state.selected, state.caster, state.target, state.denier)
        flags = self._flags.get(flag_key)
        if flags is None:
            flags = self._flag_positions(flag_key)
        for k in flags:
            out[k] = 1.0
        out[_SCORE] = state.score if player == 0 else -state.score
        return out

    def _flag_positions(self, key: tuple[int, int, int, int]) -> tuple[int, ...]:
        """Positions of the 1s among the per-unit selection flags (the rest of those are 0)."""
        selected, caster, target, denier = key
        positions = []
        for i in range(self.facts.n_units):
            base = _HEAD + UNIT_FEATURES * i
            for column, on in enumerate(
                ((selected >> i) & 1, caster == i, target == i, denier == i), start=_FLAG_COLUMN
            ):
                if on:
                    positions.append(base + column)
        if len(self._flags) >= _CACHE_LIMIT:
            self._flags.clear()
        flags = self._flags[key] = tuple(positions)
        return flags

    @staticmethod
    def _cached(
        cache: dict[tuple[Any, ...], np.ndarray], key: tuple[Any, ...], values: list[float]
    ):
        if len(cache) >= _CACHE_LIMIT:
            cache.clear()
        block = cache[key] = np.array(values, dtype=np.float32)
        block.flags.writeable = False
        return block

    def _head(self, state: State, player: int) -> list[float]:
        """Node kind and globals; the score entry is a placeholder (written per call)."""
        kind = [0.0] * DECISION_KINDS
        kind[_KIND.get(state.stage, 3)] = 1.0
        pending = state.power >= 0
        total = state.total if pending else 0
        return kind + [
            state.round / self.facts.game.battle_rounds,
            float(state.active == player),
            self._first[player],
            total / 12,
            state.warp_charge / 12 if pending else 0.0,
            float(is_perils(total)),
            self._deny[total],
            0.0,
        ]

    def _units(self, state: State, player: int) -> list[float]:
        """Per-unit entries, with the four selection flags left at 0 (set per call)."""
        mine, psyker, max_wounds = self._mine[player], self._psyker, self.facts.max_wounds
        deny_left = state.deny_left
        values: list[float] = []
        for i, w in enumerate(state.wounds):
            values += (
                mine[i],
                float(w > 0),
                w / max_wounds[i],
                w,
                psyker[i],
                deny_left[i],
                0.0,  # selected this phase
                0.0,  # is the caster
                0.0,  # is the pending target
                0.0,  # is the denier
            )
        return values

    def _powers(self, state: State) -> list[float]:
        facts = self.facts
        known = facts.known[state.caster] if state.caster >= 0 else ()
        values: list[float] = []
        for p, tries in enumerate(state.attempts):
            power = facts.powers[p]
            values += (
                (power.warp_charge + power.escalation * tries) / 12,
                tries,
                float(p in known),
                float(state.power == p),
            )
        return values

    # ------------------------------------------------------------------ action views

    def describe(self, state: State, action: int) -> ActionView:
        """Typed view of a decision, or of a chance outcome at chance nodes."""
        facts = self.facts
        layout = facts.actions
        stage, a = state.stage, int(action)
        if stage == Stage.SELECT:
            if a == layout.END_PHASE:
                side = facts.side_names[state.active]
                return EndPhase(label=f"End {side}'s Psychic phase", side=side)
            if 0 <= a < facts.n_units:
                return SelectUnit(label=f"Select {facts.names[a]}", unit=facts.names[a])
        elif stage == Stage.POWER:
            caster = facts.names[state.caster]
            if a == layout.STOP:
                return StopUnit(label=f"{caster} stops manifesting", unit=caster)
            if layout.is_cast(a):
                cast: CastAction = layout.decode_cast(a)
                power = facts.powers[cast.power]
                wc = facts.warp_charge(state, cast.power)
                if power.target in ("self", "none"):
                    label, target = f"{caster} casts {power.name} (WC {wc})", None
                else:
                    target = facts.names[cast.target]
                    label = f"{caster} casts {power.name} (WC {wc}) at {target}"
                return Cast(
                    label=label, caster=caster, power=power.name, warp_charge=wc, target=target
                )
        elif stage == Stage.DENY:
            power = facts.powers[state.power].name
            chance = float(deny_chance(state.total))
            if a == layout.NO_DENY:
                return Deny(
                    label=f"Do not deny {power} (test {state.total})",
                    power=power,
                    test_total=state.total,
                )
            if layout.is_deny(a):
                d = facts.names[layout.decode(a).unit]  # type: ignore[union-attr]
                return Deny(
                    label=f"{d} denies {power} (test {state.total}, {chance:.0%} to deny)",
                    denier=d,
                    power=power,
                    test_total=state.total,
                    chance=chance,
                )
        elif stage == Stage.TEST:
            passed = a >= state.warp_charge
            tag = " (Perils)" if is_perils(a) else ""
            return Outcome(
                label=f"test {a}: {'passed' if passed else 'failed'}{tag}",
                kind="test",
                value=a,
                unit=facts.names[state.caster],
            )
        elif stage in (Stage.PERILS, Stage.BLAST, Stage.EFFECT):
            unit = {
                Stage.PERILS: state.caster,
                Stage.BLAST: state.blast[0] if state.blast else -1,
                Stage.EFFECT: state.target,
            }[stage]
            kind = stage.name.lower()
            name = facts.names[unit] if unit >= 0 else None
            return Outcome(
                label=f"{kind}: {name} loses {plural(a, 'wound')}", kind=kind, value=a, unit=name
            )
        elif stage == Stage.DENY_ROLL:
            return Outcome(
                label="denied" if a else "not denied",
                kind="deny",
                value=a,
                unit=facts.names[state.denier],
            )
        elif stage == Stage.OVER:
            return Outcome(label="game over", kind="over", value=a)
        return ActionView(label=f"action {a} (not an action at this {stage.name} node)")

    # ------------------------------------------------------------------ text

    def render(self, state: State, player: int | None = None) -> str:
        """Text picture of the state for terminal play (everything is public in 8th edition)."""
        facts = self.facts
        who = facts.side_names[state.active]
        view = 0 if player is None else player
        score = (state.score if view == 0 else -state.score) + 0.0  # never "-0"
        if state.stage == Stage.OVER:
            head = f"Game over after battle round {state.round}"
        else:
            head = (
                f"Battle round {state.round}/{facts.game.battle_rounds}: {who}'s Psychic phase "
                f"({state.stage.name.lower()})"
            )
        lines = [f"{head}; score {score:+g} for {facts.side_names[view]}"]
        for side in (0, 1):
            lines.append(f"  {facts.side_names[side]}:")
            for i in facts.side_units[side]:
                u = facts.units[i]
                w = state.wounds[i]
                bits = [f"{w}/{facts.max_wounds[i]} W" if w else "destroyed"]
                if u.models > 1 and w:
                    bits.append(plural(-(-w // u.wounds), "model"))
                if u.psyker:
                    bits.append(f"PSYKER deny {state.deny_left[i]}")
                if (state.selected >> i) & 1:
                    bits.append("selected")
                if state.caster == i:
                    bits.append(f"casting, {plural(state.manifests_left, 'attempt')} left")
                still = self._still_to_attempt(state, i)
                if still:
                    bits.append(f"may still attempt {still}")
                lines.append(f"    [{i}] {u.name}: {', '.join(bits)}")
        if state.power >= 0:
            p = facts.powers[state.power]
            line = f"  Pending: {p.name} (WC {state.warp_charge})"
            if state.total:
                line += f", test {state.total}"
            lines.append(line)
        return "\n".join(lines)

    def _still_to_attempt(self, state: State, unit: int) -> str:
        """The powers ``unit`` may still attempt in this Psychic phase, or ``""``.

        Only a PSYKER of the side whose phase it is that may still act: not yet selected, or
        selected and casting with attempts left (8E-2.3, 8E-3.1). Powers already attempted this
        phase are left out (8E-3.2, 8E-3.3), so the board says which powers are still to come,
        as an answer of ``psygym advise`` assumed them.
        """
        facts = self.facts
        if state.stage == Stage.OVER or facts.side_of[unit] != state.active:
            return ""
        if not facts.units[unit].psyker or not state.wounds[unit]:
            return ""
        if (state.selected >> unit) & 1 and (state.caster != unit or not state.manifests_left):
            return ""
        decode = facts.actions.decode_cast
        powers = sorted({decode(a).power for a in self._cast_options(state, unit)})
        return ", ".join(facts.powers[p].name for p in powers)

    def power_texts(self, state: State, player: int | None = None) -> dict[str, str]:
        """One line of rules text per power a living PSYKER knows, by name (8E-1.2, 8E-3.1).

        The line is ``"<name> (WC <n>): <description>"`` with the ``description`` of the shipped
        power data the scenario loaded (escalating warp charge noted, 8E-4.2). A scored value
        changed by the scenario's ``power_values`` replaces the data's "(scored as N wounds)". A
        power with no description gets a line made from its fields. Everything is public in 8th
        edition (8E-1), so ``player`` does not change the result.
        """
        facts = self.facts
        texts: dict[str, str] = {}
        for i, known in enumerate(facts.known):
            if not known or state.wounds[i] <= 0:
                continue
            for p in known:
                power = facts.powers[p]
                if power.name not in texts:
                    texts[power.name] = self.power_line(p)
        return texts

    def power_line(self, p: int) -> str:
        """One line of rules text for power ``p`` (see :meth:`power_texts`)."""
        facts = self.facts
        power = facts.powers[p]
        wc = f"WC {power.warp_charge}"
        if power.escalation:
            wc += f", +{power.escalation} per earlier attempt this phase"
        shipped = {d.name: d for d in facts.catalogue.powers}.get(power.name)
        if shipped is not None and shipped.description:
            text = shipped.description
            if power.value is not None and power.value != shipped.effect.value:
                scored = f"(scored as {plural(float(power.value), 'wound')})"
                text, n = _SCORED.subn(scored, text)
                if not n:
                    text = f"{text.rstrip('.')} {scored}."
        else:
            text = _effect_line(power)
        return f"{power.name} ({wc}): {text}"


_SCORED = re.compile(r"\(scored as [0-9.]+ wounds?\)")
"""The scored value in a shipped description (8E-7.3)."""


def _effect_line(power: Any) -> str:
    """A line made from a power's fields, for power files without descriptions (8E-7)."""
    where = {
        "closest_enemy": f'the closest enemy unit within {power.range:g}"',
        "enemy": f"an enemy {'CHARACTER' if power.character_only else 'unit'} "
        f'within {power.range:g}"',
        "friendly": f"a friendly {'CHARACTER' if power.character_only else 'unit'} "
        f'within {power.range:g}"',
        "self": "the psyker's unit",
        "none": "no target",
    }[power.target]
    e = power.effect
    if e.mortal_wounds is not None:
        what = f"{e.mortal_wounds} mortal wounds"
        if e.boosted is not None:
            what += f" ({e.boosted} on a test of {e.boosted_at}+)"
    elif e.attack is not None:
        a = e.attack
        what = f"{a.hits} hits at S{a.strength} AP{a.ap}, damage {a.damage}"
    elif e.rolloff is not None:
        win = "the difference" if e.rolloff.win == "difference" else e.rolloff.win
        what = f"roll-off {e.rolloff.dice}+Ld; if higher, {win} mortal wounds"
    else:
        what = f"scored as {plural(float(power.value), 'wound')}"
    return f"{where}: {what}"


__all__ = [
    "Cast",
    "Deny",
    "EighthView",
    "EndPhase",
    "Outcome",
    "SelectUnit",
    "StopUnit",
    "observation_size",
]
