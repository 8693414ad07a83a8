"""The 2nd-edition table as text: the rendered picture and the power cards' rules lines.

:class:`SecondTexts` is the part of :class:`~.views.SecondViews` that renders the table as a
player sees it (only that player's hand and face-down discards, 2E-2, 2E-4.3) and writes one line
of rules text per power card a player may see (2E-1, 2E-5, 2E-6), from a state and the
scenario's :class:`~.facts.SecondFacts`; :func:`cards_text` writes a card multiset.
"""

from __future__ import annotations

from psygym.editions.second.data import CARD_LABELS
from psygym.editions.second.state import OVER, SecondState, face_up
from psygym.text import plural


def cards_text(counts: tuple[int, ...]) -> str:
    """A card multiset as text: ``"2 Force, 1 Nullify"`` (``"none"`` when empty)."""
    parts = [f"{n} {CARD_LABELS[c]}" for c, n in enumerate(counts) if n]
    return ", ".join(parts) or "none"


class SecondTexts:
    """Rendered table and power texts, mixed into :class:`~.views.SecondViews`.

    Reads ``self.facts`` (the scenario's :class:`~.facts.SecondFacts`) and names targets with
    :meth:`~.action_views.SecondActionViews.target_name`.
    """

    def render(self, state: SecondState, player: int | None = None) -> str:
        """The table as ``player`` sees it: only that player's hand (``None``: both hands)."""
        facts = self.facts
        names = facts.side_names
        lines = [
            f"2nd edition - {facts.scenario_name} - battle round {facts.battle_round(state)}/"
            f"{facts.game.battle_rounds}, Psychic phase of {names[facts.active(state)]}"
            + (" (game over)" if state.stage == OVER else ""),
            f"Score {names[0]} {state.score:+.2f}",
        ]
        for side in (0, 1):
            lines.append(f"{names[side]}:")
            for u in facts.side_units[side]:
                unit = facts.units[u]
                text = f"  {unit.name}: {state.wounds[u]}/{facts.max_wounds[u]} wounds"
                i = facts.unit_psyker[u]
                if state.wounds[u] <= 0:
                    text += " (slain)"
                elif i >= 0:
                    cards = []
                    for j, k in enumerate(state.powers[i]):
                        if k < 0:
                            continue
                        entry = [ip for ip in state.in_play if (ip.psyker, ip.slot) == (i, j)]
                        mark = ""
                        if entry:
                            mark = (
                                " [in play, Ultimate Force]" if entry[0].ultimate else " [in play]"
                            )
                        power = facts.power_data[k]
                        cards.append(f"{power.name} ({power.cost}){mark}")
                    text += f", ML{facts.ml[i]}{', hood' if facts.hood[i] else ''}"
                    text += ", cast" if state.used[i] else ""
                    text += f"; powers: {', '.join(cards) or 'none'}"
                lines.append(text)
        for side in (0, 1):
            if player is None or player == side:
                lines.append(f"Hand of {names[side]}: {cards_text(state.hands[side])}")
            else:
                lines.append(f"Hand of {names[side]}: {plural(sum(state.hands[side]), 'card')}")
        lines.append(
            f"Deck: {plural(sum(state.deck), 'card')}; discard pile face up: "
            f"{cards_text(face_up(state))}"
        )
        for side in (0, 1):
            down = state.face_down[side]
            if not any(down):
                continue
            # 2E-4.3: face-down discards are shown only to the player who discarded them.
            own = player is None or player == side
            shown = cards_text(down) if own else plural(sum(down), "card")
            lines.append(f"Discarded face down by {names[side]}: {shown}")
        if state.pending is not None:
            pend = state.pending
            lines.append(
                f"Being cast: {facts.power_data[pend.power].name} by "
                f"{facts.psyker_names[pend.psyker]} at "
                f"{self.target_name(pend.power, pend.target)}, Force "
                f"{pend.force}{' (Ultimate Force)' if pend.ultimate else ''}"
            )
        return "\n".join(lines)

    def power_texts(self, state: SecondState, player: int | None = None) -> dict[str, str]:
        """One line of rules text per power card ``player`` may see, by name (2E-1, 2E-5, 2E-6).

        ``player`` sees the power cards of its own living psykers, every power in play and the
        power being cast (2E-4, 2E-5); ``None`` sees every living psyker's cards. The warp cards
        in the hands (2E-2) are never read, so the other hand cannot show.
        """
        facts = self.facts
        shown: list[int] = []
        for i, slots in enumerate(state.powers):
            if player is not None and facts.psyker_side[i] != player:
                continue
            if state.wounds[facts.psyker_unit[i]] <= 0:
                continue
            shown += [k for k in slots if k >= 0]
        shown += [ip.power for ip in state.in_play]
        if state.pending is not None:
            shown.append(state.pending.power)
        texts: dict[str, str] = {}
        for k in shown:
            name = facts.power_data[k].name
            if name not in texts:
                texts[name] = self.power_line(k)
        return texts

    def power_line(self, k: int) -> str:
        """One line for power card ``k``: ``"Smite (Force 1, attack, 12"): D6 hits at S4, ..."``.

        Force cost (2E-1.1), kind, range or target, then the effect from the card's fields
        (2E-6.1) or its ``text``; a ``value`` changed by the scenario is the one shown.
        """
        facts = self.facts
        power = facts.power_data[k]
        where = {
            "self": "self",
            "friendly": f'friendly {power.range:g}"',
            "enemy": f'{power.range:g}"',
            "enemies": f'every enemy unit {power.range:g}"',
            "enemy-psyker": f'enemy psyker {power.range:g}"',
        }[power.target]
        head = ", ".join(x for x in (f"Force {power.cost}", power.kind, where) if x)
        if power.text is not None:
            effect = power.text
        else:
            lo = power.min_force
            if power.variable:
                lo = max(lo, facts.settings.variable_min_force)
            forces = [f for f in range(lo, power.max_force + 1)]
            parts = [self._effect_text(k, power.effect(f)) for f in forces]
            if len(parts) == 1:
                effect = parts[0]
            else:
                effect = "; ".join(f"Force {f}: {t}" for f, t in zip(forces, parts))
        if power.remain_in_play and "remain" not in power.kind:
            effect += " (remains in play)"
        return f"{power.name} ({head}): {effect}"

    def _effect_text(self, k: int, e: object) -> str:
        """One effect in player terms (2E-6.1; duel: 2E-7 as the card does it)."""
        kind = getattr(e, "type", "")
        if kind == "attack":
            word = "shot" if e.to_hit == "bs" else "hit"  # type: ignore[attr-defined]
            hits = str(e.hits)  # type: ignore[attr-defined]
            text = f"{plural(hits, word)} at S{e.strength}"  # type: ignore[attr-defined]
            damage = str(e.damage)  # type: ignore[attr-defined]
            text += f", {plural(damage, 'wound')} each"
            if not e.saves:  # type: ignore[attr-defined]
                text += ", no armour save"
            return text
        if kind == "mortal":
            return f"{plural(str(e.wounds), 'wound')}, no save"  # type: ignore[attr-defined]
        if kind == "duel":
            dice = e.dice  # type: ignore[attr-defined]
            return (
                f"each rolls {dice} + ML; caster higher: the target loses the difference in wounds"
            )
        override = self.facts.power_value[k]
        value = override if override is not None else e.value  # type: ignore[attr-defined]
        each = " each phase" if self.facts.power_data[k].remain_in_play else ""
        return f"scored as {value:g} wound{'' if value == 1 else 's'}{each}"


__all__ = ["SecondTexts", "cards_text"]
