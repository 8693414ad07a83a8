"""Typed views of 2nd-edition actions and chance outcomes, with their labels (2E-4 to 2E-7).

The :class:`~psygym.core.ActionView` records of a decision (pass, a card, a cast, a power in
play, a Psychic Duel) and of a chance outcome, and :class:`SecondActionViews`, the part of
:class:`~.views.SecondViews` that builds them from a state and the scenario's
:class:`~.facts.SecondFacts`.
"""

from __future__ import annotations

from dataclasses import dataclass

from psygym.core import CHANCE, ActionView
from psygym.editions.second.actions import ENERGY_DRAIN, PASS, PAY_ULTIMATE, RESPONSE_CARDS
from psygym.editions.second.data import CARD_LABELS, NUM_CARDS
from psygym.editions.second.state import (
    DEAL,
    FLUX,
    RESPONSE,
    ROLL_DAEMONIC,
    ROLL_NULLIFY,
    ROLL_NULLIFY_IN_PLAY,
    SETUP,
    SecondState,
)
from psygym.text import plural


@dataclass(frozen=True)
class PassView(ActionView):
    """Pass on your turn, or play no response card."""

    player: int = 0
    response: bool = False


@dataclass(frozen=True)
class CardView(ActionView):
    """Play Energy Drain or a response card."""

    player: int = 0
    card: str = ""


@dataclass(frozen=True)
class CastView(ActionView):
    """Cast a power (2E-5.1)."""

    player: int = 0
    psyker: str = ""
    power: str = ""
    target: str = ""
    force: int = 0
    ultimate: bool = False
    psyker_index: int = -1
    slot: int = -1
    target_index: int = -1


@dataclass(frozen=True)
class InPlayView(ActionView):
    """End your own remain-in-play power, or Nullify an enemy one."""

    player: int = 0
    psyker: str = ""
    power: str = ""
    nullify: bool = False
    psyker_index: int = -1
    slot: int = -1


@dataclass(frozen=True)
class DuelView(ActionView):
    """Play Psychic Duel (2E-7)."""

    player: int = 0
    psyker: str = ""
    enemy: str = ""
    psyker_index: int = -1
    enemy_index: int = -1


@dataclass(frozen=True)
class OutcomeView(ActionView):
    """A chance outcome."""

    kind: str = ""
    value: int = 0


class SecondActionViews:
    """Action and outcome views, mixed into :class:`~.views.SecondViews`.

    Reads ``self.facts`` (the scenario's :class:`~.facts.SecondFacts`) and memoises cast views
    in ``self._cast_views``.
    """

    def target_name(self, power: int, target: int) -> str:
        """Name of a cast's target (``target == num_units``: every enemy unit in range)."""
        facts = self.facts
        if target == facts.num_units:
            return f'every enemy unit within {facts.power_data[power].range:g}"'
        return facts.units[target].name if 0 <= target < facts.num_units else "?"

    def describe(self, state: SecondState, action: int) -> ActionView:
        """Typed view of an action (or of a chance outcome at chance nodes).

        An id of the action space describes the action it would be, legal here or not (as
        OpenSpiel's ``action_to_string`` does); an id outside it (or negative), or one that is
        no response card at a response, gets a plain "not an action" label.
        """
        facts = self.facts
        player = facts.current_player(state)
        if player == CHANCE:
            return self.describe_chance(state, action)
        if not 0 <= action < facts.num_actions:
            return ActionView(f"action {action} (not an action of this scenario)")
        p = max(player, 0)
        name = facts.side_names[p]
        if state.stage == RESPONSE:
            if action == PASS:
                return PassView(f"{name} plays no response card", p, True)
            card = RESPONSE_CARDS.get(action)
            if card is None:
                return ActionView(f"action {action} (not an action at a response)")
            label = CARD_LABELS[card]
            return CardView(f"{name} plays {label}", p, label)
        if action == PASS:
            return PassView(f"{name} passes", p, False)
        if action == ENERGY_DRAIN:
            return CardView(f"{name} plays Energy Drain", p, "Energy Drain")
        layout = facts.actions
        psyker_name = facts.psyker_names
        if layout.is_duel(action):
            i, k = layout.decode_duel(action)
            a, b = psyker_name[i], psyker_name[k]
            return DuelView(f"{name} plays Psychic Duel: {a} against {b}", p, a, b, i, k)
        if layout.end_base <= action < layout.cast_base:
            nullify = layout.is_nullify_in_play(action)
            i, j = layout.decode_in_play(action)
            k = state.powers[i][j]
            power = facts.power_data[k].name if k >= 0 else "(no card)"
            psyker = psyker_name[i]
            label = (
                f"{name} plays Nullify on {psyker}'s {power}"
                if nullify
                else f"{psyker} ends {power}"
            )
            return InPlayView(label, p, psyker, power, nullify, i, j)
        if layout.is_cast(action):
            i, j, _, _ = layout.decode_cast(action)
            return self.cast_view(action, state.powers[i][j], p)
        return ActionView(f"action {action} (not an action of this scenario)")

    def cast_view(self, action: int, power: int, player: int) -> CastView:
        """View of the cast ``action`` asked of ``player`` when its slot holds ``power``.

        Memoised: these three are all the view depends on.
        """
        key = (action, power, player)
        view = self._cast_views.get(key)
        if view is None:
            view = self._cast_views[key] = self._cast_view(action, power, player)
        return view

    def _cast_view(self, action: int, k: int, p: int) -> CastView:
        """The view :meth:`cast_view` memoises, built."""
        facts = self.facts
        i, j, t, pay = facts.actions.decode_cast(action)
        psyker = facts.psyker_names[i]
        if k < 0:
            return CastView(f"{psyker}: empty power slot {j}", p)
        power = facts.power_data[k]
        force = power.max_force if pay == PAY_ULTIMATE else pay
        target = self.target_name(k, t)
        paying = "Ultimate Force" if pay == PAY_ULTIMATE else f"{pay} Force"
        label = f"{psyker} casts {power.name} (Force {force}, paying {paying}) at {target}"
        return CastView(label, p, psyker, power.name, target, force, pay == PAY_ULTIMATE, i, j, t)

    def describe_chance(self, state: SecondState, outcome: int) -> OutcomeView:
        """Typed view of a chance outcome (cards dealt, flux, draws, rolls, wounds)."""
        facts = self.facts
        if state.effects:
            _, victim = facts.effect_units(state.effects[0])
            return OutcomeView(
                f"{facts.units[victim].name} loses {plural(outcome, 'wound')}", "wounds", outcome
            )
        stage = state.stage
        if stage == DEAL:
            label = CARD_LABELS[outcome] if 0 <= outcome < NUM_CARDS else "?"
            return OutcomeView(
                f"deal {label} to {facts.side_names[state.deal_to]}", "deal", outcome
            )
        if stage == FLUX:
            return OutcomeView(f"warp flux {outcome}: {plural(outcome, 'card')}", "flux", outcome)
        if stage == SETUP:
            i = facts.next_drawer(state.powers)
            power = facts.power_data[outcome].name if 0 <= outcome < len(facts.power_data) else "?"
            return OutcomeView(f"{facts.psyker_names[i]} draws {power}", "draw", outcome)
        roll = state.roll
        if roll is not None and roll.kind in (ROLL_NULLIFY, ROLL_NULLIFY_IN_PLAY):
            text = "succeeds" if outcome else "fails"
            return OutcomeView(f"Nullify {text}", "nullify", outcome)
        if roll is not None and roll.kind == ROLL_DAEMONIC:
            text = "slays the caster" if outcome else "is survived"
            return OutcomeView(f"Daemonic Attack {text}", "daemonic", outcome)
        if roll is not None:
            who = facts.psyker_names[roll.b if outcome > 0 else roll.a]
            lost = plural(abs(outcome), "wound")
            return OutcomeView(f"Psychic Duel: {who} loses {lost}", "duel", outcome)
        return OutcomeView(f"outcome {outcome}", "", outcome)


__all__ = [
    "CardView",
    "CastView",
    "DuelView",
    "InPlayView",
    "OutcomeView",
    "PassView",
    "SecondActionViews",
]
