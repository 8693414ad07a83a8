"""Rogue Trader situations for ``psygym advise``: a decision described in a player's terms.

:func:`rt_situation` builds the state where a psyker of the side whose turn it is chooses what
to do (an ability or rest, RT-2.1, RT-5), with the psi-points and wounds the player names. Bids
(RT-3.2, RT-3.3) come later in the same turn and are solved with it; advise on a bid from a
played game (``--from-log``). The compact text form (:func:`parse_situation`) is
``"turn=3,points=Librarian:7;Warlock:12,wounds=Warlock:1"``.

Situation keys:

========== ===============================================================================
turn        the player turn, from 1 (default 1); it says whose turn it is (RT-6.1)
points      psi-points left, ``Unit:N`` separated by commas (``;`` in the compact form), at
            most the psyker's psi-level (RT-1.1, RT-5)
wounds      wounds left, ``Unit:N`` (0: slain)
psyker      the psyker choosing (default: the first of the side able to act, RT-2.1)
========== ===============================================================================

Units not named keep the scenario's start (full wounds, psi-points at the psi-level), with no
effects in force (no aura, stolen mind, confusion or fear) and nobody resting.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Mapping
from typing import TYPE_CHECKING, Any

from psygym.kernel import evolve

if TYPE_CHECKING:
    from psygym.editions.rogue_trader.rules import RogueTraderRules

SITUATION_KEYS = ("turn", "points", "wounds", "psyker")
"""Keys of a Rogue Trader situation."""


def normalize(options: Mapping[str, Any]) -> dict[str, Any]:
    """Check keys, turn ``turn`` into an int and drop ``None`` values.

    Raises:
        ValueError: an unknown key (the message lists the known ones) or a bad number.
    """
    from psygym_agents.solvers.situations import check_options

    return check_options(
        options, SITUATION_KEYS, ("turn",),
        unknown="situation: {key} is not a key of Rogue Trader situations; known keys: {known}",
    )  # fmt: skip


def parse_situation(text: str) -> dict[str, Any]:
    """Parse ``"turn=3,points=Librarian:7;Warlock:12,wounds=Warlock:1"``.

    Raises:
        ValueError: a part is not ``key=value`` or the key is unknown.
    """
    from psygym_agents.solvers.situations import key_values

    return normalize(key_values(text))


def _unit(rules: RogueTraderRules, name: str, what: str) -> int:
    if name not in rules.names:
        raise ValueError(
            f"situation: {what} {name!r} is not a unit of the scenario; units: "
            f"{', '.join(rules.names)}"
        )
    return rules.names.index(name)


def _counts(rules: RogueTraderRules, text: Any, what: str) -> dict[int, int]:
    items = text if isinstance(text, list | tuple) else re.split(r"[;,]", str(text))
    out = {}
    for item in (str(i).strip() for i in items):
        if not item:
            continue
        name, sep, n = item.rpartition(":")
        if not sep:
            raise ValueError(f"situation: {what} entry {item!r} is not Unit:N")
        u = _unit(rules, name.strip(), f"{what} unit")
        try:
            out[u] = int(n)
        except ValueError:
            raise ValueError(f"situation: {what} of {name.strip()} must be a number") from None
    return out


def rt_situation(rules: RogueTraderRules, **options: Any) -> Hashable:
    """The Rogue Trader decision state described by the keys of the module docstring.

    Raises:
        ValueError: one line naming the key and what is allowed.
    """
    from psygym.editions.rogue_trader.state import Phase

    opts = normalize(options)
    s = rules.initial_state()
    if s.phase != Phase.CHOOSE:
        raise ValueError(
            "situation: this scenario generates its psykers at random; advise on a played game "
            "with --from-log"
        )
    turns = rules.scenario.game.turns
    turn = opts.get("turn", 1)
    if not 1 <= turn <= turns:
        raise ValueError(f"situation: turn must be 1..{turns}, got {turn}")
    first = rules.scenario.game.first_player
    active = first if (turn - 1) % 2 == 0 else 1 - first
    units = list(s.units)
    for u, w in _counts(rules, opts.get("wounds", ""), "wounds").items():
        if not 0 <= w <= rules.max_hp[u]:
            raise ValueError(f"situation: wounds of {rules.names[u]} must be 0..{rules.max_hp[u]}")
        units[u] = evolve(units[u], hp=w)
    for u, k in _counts(rules, opts.get("points", ""), "points").items():
        level = units[u].level
        if u not in rules.psykers_of[rules.owner[u]]:
            raise ValueError(f"situation: {rules.names[u]} is not a psyker (it has no psi-points)")
        if not 0 <= k <= level:
            raise ValueError(
                f"situation: points of {rules.names[u]} must be 0..{level} (its psi-level, RT-1.1)"
            )
        units[u] = evolve(units[u], points=k)
    able = [i for i in rules.psykers_of[active] if units[i].fighting]
    if not able:
        raise ValueError(f"situation: {rules.side_names[active]} has no psyker in the fight")
    if "psyker" in opts:
        actor = _unit(rules, str(opts["psyker"]), "psyker")
        if actor not in able:
            raise ValueError(
                f"situation: {opts['psyker']} is not a psyker of {rules.side_names[active]} in "
                f"the fight on turn {turn}; choose from: {', '.join(rules.names[i] for i in able)}"
            )
    else:
        actor = able[0]
    if not any(units[i].fighting for i in rules.side_units[1 - active]):
        raise ValueError(f"situation: {rules.side_names[1 - active]} has no unit in the fight")
    s = evolve(
        s, units=tuple(units), turn=turn - 1, active=active, phase=Phase.CHOOSE, actor=actor,
        used=0, ability=-1, target=-1, amount=0, attack_bid=0, save_bid=0, left=0, score=0.0,
    )  # fmt: skip
    if len(rules.legal_actions(s)) < 2:
        raise ValueError(
            f"situation: {rules.names[actor]} has no choice (it can only rest with these points)"
        )
    return s


def question(rules: RogueTraderRules, state: Hashable) -> str:
    """What the decision at ``state`` asks, in player words."""
    from psygym.editions.rogue_trader.state import Phase

    side = rules.side_names[rules.current_player(state)]
    phase = state.phase  # type: ignore[attr-defined]
    who = rules.names[state.actor] if state.actor >= 0 else side  # type: ignore[attr-defined]
    if phase == Phase.CHOOSE:
        return f"{side}: what {who} does (an ability, rest or end its turn)?"
    if phase == Phase.TARGET:
        return f"{side}: which unit {who}'s ability targets?"
    if phase == Phase.AMOUNT:
        return f"{side}: how many wounds Cure Wounds heals?"
    if phase == Phase.ATTACK_BID:
        return f"{side}: how many psi-points {who} bids in secret on enhanced attack?"
    if phase == Phase.SAVE_BID:
        target = rules.names[state.target]  # type: ignore[attr-defined]
        return f"{side}: how many psi-points {target} bids in secret on its augmented save?"
    return f"{side} to decide"


__all__ = ["SITUATION_KEYS", "normalize", "parse_situation", "question", "rt_situation"]
