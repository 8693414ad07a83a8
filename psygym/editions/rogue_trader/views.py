"""What players see of a Rogue Trader game: observations, action views and text (RT-3.4).

:class:`RTViews` turns states of one scenario into

* the flat float32 observation of :meth:`RTViews.observe` (layout in its docstring), which never
  reveals the attacker's pending enhanced-attack bid to the defender (RT-3.4);
* typed :class:`~psygym.core.ActionView` records for decisions and chance outcomes
  (:meth:`RTViews.describe`);
* a text picture (:meth:`RTViews.render`) that hides the pending bid from anyone but the attacker.

It reads a state and the scenario's read-only :class:`~.facts.RTFacts` only, never the rules
class, which delegates its ``observe``, ``describe``, ``render`` and ``power_texts`` here.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

from psygym.core import ActionView
from psygym.editions.rogue_trader.actions import END, REST, ActionKind
from psygym.editions.rogue_trader.chances import works_chance
from psygym.editions.rogue_trader.facts import RTFacts
from psygym.editions.rogue_trader.state import DECISIONS, Phase, State, UnitState
from psygym.text import plural

KINDS = ("choose", "target", "amount", "attack_bid", "save_bid", "none")
"""Kinds of decision, in the order of the observation's one-hot."""
_KIND_OF = {
    Phase.CHOOSE: 0, Phase.TARGET: 1, Phase.AMOUNT: 2, Phase.ATTACK_BID: 3, Phase.SAVE_BID: 4,
}  # fmt: skip
_ASKS = {
    Phase.CHOOSE: "use an ability, rest or end the turn (RT-2, RT-5)",
    Phase.TARGET: "the target (RT-2)",
    Phase.AMOUNT: "how many psi-points to spend (RT-2)",
    Phase.ATTACK_BID: "the secret bid to enhance the attack (RT-3)",
    Phase.SAVE_BID: "the bid to augment the save (RT-3)",
}
"""What each decision asks, in the words the board shows (not the observation's kind names)."""
_KINDS_AT = {
    Phase.CHOOSE: (ActionKind.REST, ActionKind.END, ActionKind.ABILITY),
    Phase.TARGET: (ActionKind.TARGET,),
    Phase.AMOUNT: (ActionKind.NUMBER,),
    Phase.ATTACK_BID: (ActionKind.NUMBER,),
    Phase.SAVE_BID: (ActionKind.NUMBER,),
}
"""The kinds of action (:mod:`.actions`) each decision asks for: ``describe`` names no other."""
_GLOBAL = 10
_UNIT_FEATURES = 16
_ACTING = _UNIT_FEATURES - 1  # the "acting now" feature of a unit
_NORM = 20.0
_SHOWN_ACTOR = DECISIONS | {Phase.TEST, Phase.RESOLVE}
_MAX_BLOCKS = 20_000  # memoised unit blocks kept (a few kB each at most)


# ----------------------------------------------------------------------------- action views
@dataclass(frozen=True, kw_only=True)
class UseAbility(ActionView):
    """A psyker uses an ability (target chosen next)."""

    psyker: str
    ability: str
    cost: int
    works: float


@dataclass(frozen=True, kw_only=True)
class Rest(ActionView):
    """A psyker rests for the whole turn (RT-5)."""

    psyker: str


@dataclass(frozen=True, kw_only=True)
class EndTurn(ActionView):
    """A psyker stops using abilities this turn."""

    psyker: str


@dataclass(frozen=True, kw_only=True)
class ChooseTarget(ActionView):
    """The target of the ability being used."""

    psyker: str
    ability: str
    target: str


@dataclass(frozen=True, kw_only=True)
class ChooseAmount(ActionView):
    """How many wounds Cure Wounds heals, for 10 points each (RT-4.6)."""

    psyker: str
    ability: str
    wounds: int
    cost: int


@dataclass(frozen=True, kw_only=True)
class Bid(ActionView):
    """A secret bid of psi-points: ``enhance`` (attacker, RT-3.2) or ``augment`` (RT-3.3)."""

    psyker: str
    role: str
    points: int


@dataclass(frozen=True, kw_only=True)
class Roll(ActionView):
    """A chance outcome: ``kind`` is test, recover, resolve, psi-level, count or draw."""

    kind: str
    outcome: int


@cache
def _ability_flags(abilities: tuple[int, ...], n: int) -> np.ndarray:
    flags = np.zeros(n, dtype=np.float32)
    flags[list(abilities)] = 1.0
    return flags


# ----------------------------------------------------------------------------- views
class RTViews:
    """Observations, action views and text of one scenario's states.

    Args:
        facts: the scenario's facts (names, sizes, tables).

    Attributes:
        size: length of the observation vector.
        units_offset: index of the first unit's features in it.
        unit_size: features per unit.
    """

    def __init__(self, facts: RTFacts):
        self.facts = facts
        n, na = facts.n_units, facts.n_abilities
        self.unit_size = _UNIT_FEATURES + na
        self.units_offset = _GLOBAL + na + 2 * n + 2
        self.size = self.units_offset + n * self.unit_size
        self._head = np.zeros(self.units_offset, dtype=np.float32)
        # The per-unit part of an observation depends only on (player, units): memoised, as a
        # whole observation with the head zero (each observation is one copy of it).
        self._blocks: dict[tuple[int, tuple[UnitState, ...]], np.ndarray] = {}
        # One unit's features depend only on (unit index, player, unit): memoised too.
        self._rows: dict[tuple[int, int, UnitState], np.ndarray] = {}

    # ------------------------------------------------------------------ observation
    def observe(self, state: State, player: int) -> np.ndarray:
        """What ``player`` may see, as a flat float32 vector.

        Layout (U units in scenario order, A = 40 abilities):

        * ``[0:6]`` one-hot kind of decision asked: choose ability/rest, choose target, choose
          amount (Cure Wounds), attack bid, save bid, none (chance node or game over);
        * ``[6]`` 1 if ``player`` is to move; ``[7]`` 1 if it is ``player``'s turn;
          ``[8]`` turns played / turns; ``[9]`` turns left / turns;
        * ``[10:10+A]`` one-hot of the ability being used; then U one-hot of the acting psyker;
          then U one-hot of the target;
        * then ``player``'s own pending enhanced-attack bid / the scenario's largest bid
          (``rules.bid_limit``; only the attacker sees it: the defender's observation never
          reveals it, RT-3.4), then the Cure Wounds amount / max number;
        * then per unit, ``16 + A`` values: owned by ``player``, psyker, wounds left / wounds,
          in the fight, out of the fight, aura / 4, stolen turns / 6, confused, afraid, will
          power / 12, psi-points / 20, psi-level / 20, points >= 12 (no test), resting,
          Strength of Mind used, acting now; then A flags of the abilities it knows.

        A new array each time (the rules keep the fast walk's last ones, :mod:`.graph`).
        """
        facts = self.facts
        key = (player, state.units)
        base = self._blocks.get(key)
        if base is None:
            if len(self._blocks) >= _MAX_BLOCKS:
                self._blocks.clear()
                self._rows.clear()
            rows = [self._unit_row(i, us, player) for i, us in enumerate(state.units)]
            base = np.concatenate((self._head, *rows))
            base.flags.writeable = False
            self._blocks[key] = base
        obs = base.copy()
        phase = state.phase
        obs[_KIND_OF.get(phase, 5)] = 1.0
        obs[6] = float(facts.current_player(state) == player)
        obs[7] = float(state.active == player)
        turns = facts.game.turns
        obs[8] = state.turn / turns
        obs[9] = (turns - state.turn) / turns
        n = facts.n_units
        if state.ability >= 0:
            obs[_GLOBAL + state.ability] = 1.0
        base = _GLOBAL + facts.n_abilities
        actor = state.actor
        if actor >= 0 and phase in _SHOWN_ACTOR:
            obs[base + actor] = 1.0
            if phase in DECISIONS:
                obs[self.units_offset + actor * self.unit_size + _ACTING] = 1.0
        if state.target >= 0:
            obs[base + n + state.target] = 1.0
        if phase == Phase.SAVE_BID and player == state.active:
            obs[base + 2 * n] = state.attack_bid / max(1, facts.bid_limit)
        obs[base + 2 * n + 1] = state.amount / max(1, facts.max_number)
        return obs

    def _unit_row(self, i: int, us: UnitState, player: int) -> np.ndarray:
        """Features of unit ``i`` in state ``us`` as ``player`` sees them (memoised, read-only).

        The ``16 + A`` values of :meth:`observe`'s layout, "acting now" off.
        """
        key = (i, player, us)
        row = self._rows.get(key)
        if row is not None:
            return row
        facts = self.facts
        row = np.zeros(self.unit_size, dtype=np.float32)
        row[:_UNIT_FEATURES] = (
            facts.owner[i] == player,
            facts.psyker[i],
            us.hp / facts.max_hp[i],
            us.fighting,
            us.out,
            us.aura / 4,
            us.stolen / 6,
            us.confused,
            us.afraid,
            (facts.specs[i].will_power + us.wp_bonus) / 12,
            us.points / _NORM,
            us.level / _NORM,
            us.points >= facts.game.no_test_at,
            us.resting,
            us.wp_bonus,
            False,
        )
        if us.abilities:
            row[_UNIT_FEATURES:] = _ability_flags(us.abilities, facts.n_abilities)
        row.flags.writeable = False
        self._rows[key] = row
        return row

    # ------------------------------------------------------------------ text
    def render(self, state: State, player: int | None = None) -> str:
        """Text picture of the state; the attacker's pending bid is hidden from anyone else."""
        facts = self.facts
        game = facts.game
        lines = []
        if state.phase == Phase.OVER:
            lines.append(f"Game over after {state.turn} turn(s). Score {state.score:+g}.")
        else:
            lines.append(
                f"Turn {min(state.turn + 1, game.turns)}/{game.turns}: "
                f"{facts.side_names[state.active]}'s turn. Score {state.score:+g}."
            )
        for p in (0, 1):
            lines.append(f"{facts.side_names[p]} (player {p}):")
            for i in facts.side_units[p]:
                lines.append("  " + self._unit_line(state, i))
        if state.ability >= 0:
            ab = facts.abilities[state.ability]
            lines.append(
                f"Using: {facts.names[state.actor]} - {ab.name}"
                + (f" on {facts.names[state.target]}" if state.target >= 0 else "")
            )
        if state.phase == Phase.SAVE_BID:
            seen = player is None or player == state.active
            bid = str(state.attack_bid) if seen else "secret"
            lines.append(
                f"Enhanced attack bid: {bid}. {facts.names[state.target]} bids to augment."
            )
        elif state.phase in DECISIONS:
            who = facts.current_player(state)
            lines.append(f"{facts.side_names[who]} (player {who}) decides: {_ASKS[state.phase]}.")
        return "\n".join(lines)

    def _unit_line(self, s: State, i: int) -> str:
        facts = self.facts
        us = s.units[i]
        spec = facts.specs[i]
        parts = [f"{facts.names[i]}: {us.hp}/{facts.max_hp[i]} W"]
        if spec.models > 1:
            models = -(-us.hp // facts.per_model[i])
            parts.append(f"{models}/{spec.models} models")
        parts.append(
            f"T{spec.toughness} Sv{spec.save if spec.save <= 6 else '-'} WP{facts.will_power(s, i)}"
        )
        if facts.psyker[i]:
            parts.append(f"mastery {spec.mastery}, psi {us.points}/{us.level}")
        if us.aura:
            parts.append(f"aura +{us.aura}")
        flags = [
            name
            for name, on in (
                ("OUT", us.out),
                ("slain", us.hp == 0),
                ("confused", us.confused),
                ("afraid", us.afraid),
                ("resting", us.resting),
            )
            if on
        ]
        if us.stolen:
            flags.append(f"mind stolen {us.stolen}")
        if flags:
            parts.append(", ".join(flags))
        line = "; ".join(parts)
        if facts.psyker[i] and us.abilities:
            line += " | " + ", ".join(facts.abilities[a].name for a in us.abilities)
        return line

    # ------------------------------------------------------------------ power texts
    def power_texts(self, state: State, player: int | None = None) -> dict[str, str]:
        """One line of rules text per ability a living psyker holds, by name (RT-1, RT-4).

        Abilities are public (only the bids of RT-3 are secret), so ``player`` does not change
        the result. Listed in unit order, then ability order; an ability several psykers hold
        appears once.
        """
        facts = self.facts
        texts: dict[str, str] = {}
        for i, us in enumerate(state.units):
            if not facts.psyker[i] or us.hp <= 0:
                continue
            for a in us.abilities:
                name = facts.abilities[a].name
                if name not in texts:
                    texts[name] = self.power_line(a)
        return texts

    def power_line(self, a: int) -> str:
        """``"Mental Blow (level 1, 1 psi, enemy 24"): automatic S3 hit, ..."`` for ability ``a``.

        Level (RT-1.2), cost in psi-points (RT-2.4; per wound healed for Cure Wounds, RT-4.6),
        target and range, then the data's ``summary``; an ability with no fighting effect
        (RT-4.8) says what it is scored as (its ``value``, after the scenario's overrides).
        """
        facts = self.facts
        ab = facts.abilities[a]
        cost = f"{ab.cost} psi" + (" per wound" if ab.effect == "cure_wounds" else "")
        where = "self" if ab.target == "self" else f'{ab.target} {ab.range:g}"'
        text = ab.summary or ab.effect.replace("_", " ")
        value = facts.value[a]
        if ab.effect == "value":
            text += f" (scored as {value:g})" if value else " (no effect in this game)"
        elif value:
            text += f" (also scores {value:g})"
        return f"{ab.name} (level {ab.level}, {cost}, {where}): {text}"

    # ------------------------------------------------------------------ action views
    def describe(self, state: State, action: int) -> ActionView:
        """Typed view of a decision or chance outcome in ``state``.

        An id of this decision's kind describes the action it would be, legal here or not (as
        OpenSpiel's ``action_to_string`` does); any other id (outside the action space,
        negative, or of another kind of decision) gets a plain "not an action" label.
        """
        facts = self.facts
        layout = facts.actions
        phase = state.phase
        action = int(action)
        kinds = _KINDS_AT.get(phase)
        if kinds is not None and (
            not 0 <= action < layout.num_actions or layout.decode(action).kind not in kinds
        ):
            return ActionView(label=f"action {action} (not an action at this {phase.name} node)")
        u = state.actor
        name = facts.names[u] if u >= 0 else ""
        if phase == Phase.CHOOSE:
            if action == REST:
                return Rest(label=f"{name} rests", psyker=name)
            if action == END:
                return EndTurn(label=f"{name} ends its turn", psyker=name)
            ab = facts.abilities[layout.ability_of(action)]
            w = float(works_chance(state.units[u].points, facts.game.no_test_at))
            cost = f"{ab.cost} points/wound"
            if ab.effect != "cure_wounds":
                cost = plural(ab.cost, "point")
            return UseAbility(
                label=f"{name} uses {ab.name} ({cost}, works {w:.0%})",
                psyker=name,
                ability=ab.name,
                cost=ab.cost,
                works=w,
            )
        if phase == Phase.TARGET:
            ab = facts.abilities[state.ability]
            t = facts.names[layout.target_of(action)]
            return ChooseTarget(
                label=f"{name} aims {ab.name} at {t}", psyker=name, ability=ab.name, target=t
            )
        if phase == Phase.AMOUNT:
            ab = facts.abilities[state.ability]
            k = layout.number_of(action)
            return ChooseAmount(
                label=f"{name} heals {plural(k, 'wound')} for {plural(k * ab.cost, 'point')}",
                psyker=name,
                ability=ab.name,
                wounds=k,
                cost=k * ab.cost,
            )
        if phase == Phase.ATTACK_BID:
            k = layout.number_of(action)
            return Bid(
                label=f"{name} secretly enhances the attack by {k}",
                psyker=name,
                role="enhance",
                points=k,
            )
        if phase == Phase.SAVE_BID:
            j = layout.number_of(action)
            t = facts.names[state.target]
            return Bid(
                label=f"{t} secretly augments its save by {j}", psyker=t, role="augment", points=j
            )
        return self._describe_chance(state, action)

    def _describe_chance(self, state: State, o: int) -> Roll:
        facts = self.facts
        phase = state.phase
        if phase == Phase.TEST:
            pts = state.units[state.actor].points
            text = f"test: 2D6 <= {pts}, works" if o else f"test: 2D6 > {pts}, fails"
            return Roll(label=text, kind="test", outcome=o)
        if phase == Phase.RECOVER:
            return Roll(label="recovers" if o else "stays confused", kind="recover", outcome=o)
        if phase == Phase.SETUP_LEVEL:
            return Roll(label=f"psi-level {o}", kind="psi-level", outcome=o)
        if phase == Phase.SETUP_COUNT:
            return Roll(label=plural(o, "ability", "abilities"), kind="count", outcome=o)
        if o < 0 or (phase == Phase.SETUP_DRAW and o >= len(facts.abilities)):
            return Roll(label=f"outcome {o} (not an outcome at this {phase.name} node)",
                        kind="none", outcome=o)  # fmt: skip
        if phase == Phase.SETUP_DRAW:
            return Roll(label=f"draws {facts.abilities[o].name}", kind="draw", outcome=o)
        if phase == Phase.RESOLVE:
            effect = facts.abilities[state.ability].effect
            if o == 0:
                text = "psychic save made"
            elif effect in ("mental", "missile"):
                text = "no wound" if o == 1 else plural(o - 1, "wound")
            elif effect == "steal_mind":
                text = f"mind stolen for {plural(o, 'turn')}"
            else:
                text = "takes hold"
            return Roll(label=text, kind="resolve", outcome=o)
        return Roll(label=f"outcome {o}", kind="none", outcome=o)


__all__ = [
    "KINDS",
    "Bid",
    "ChooseAmount",
    "ChooseTarget",
    "EndTurn",
    "RTViews",
    "Rest",
    "Roll",
    "UseAbility",
]
