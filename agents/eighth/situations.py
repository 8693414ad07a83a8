"""8th-edition situations for ``psygym advise``: a decision described in a player's terms.

:func:`eighth_situation` builds the state at one decision of a Psychic phase by playing the
rules' own transitions from the start of that phase (8E-2 to 8E-5): which psyker to select
next, which power the selected psyker attempts, or whether (and with which unit) to deny a power
whose psychic test rolled a given total. The compact text form (:func:`parse_situation`) is
``"caster=Farseer,power=Smite,test=8,still=Doom"``.

Situation keys:

========== ===============================================================================
side        the casting side, its name or 0/1 (default: the caster's side, else the
            scenario's first player)
round       battle round, from 1 (default 1)
wounds      wounds left, ``Unit:N`` separated by commas (``;`` in the compact form)
denies      deny attempts left this phase, ``Unit:N`` (default: each PSYKER's ``deny``)
still       powers the casting side may still attempt this phase, by name; every other
            power of the side counts as attempted (8E-3.2) and a psyker that knows none of
            them counts as already selected (8E-2.3). Smite may be repeated (8E-4.2) by any
            psyker left. Default: the phase has just begun
caster      the selected psyker: the decision is then which power it attempts
power       the power ``caster`` attempts (needs ``test``)
target      the unit it targets (default: the first legal one)
test        the psychic test total, 2-12 (8E-4.1): asks the deny decision
========== ===============================================================================

:func:`question` says in player words what a decision asks.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Mapping
from typing import TYPE_CHECKING, Any

from psygym.core import CHANCE
from psygym.kernel import evolve

if TYPE_CHECKING:
    from psygym.editions.eighth.rules import EighthRules

SITUATION_KEYS = (
    "side", "round", "wounds", "denies", "still", "caster", "power", "target", "test",
)  # fmt: skip
"""Keys of an 8th-edition situation."""

_INT_KEYS = ("round", "test")


def normalize(options: Mapping[str, Any]) -> dict[str, Any]:
    """Check keys, turn whole-number strings into ints and drop ``None`` values.

    Raises:
        ValueError: an unknown key (the message lists the known ones) or a bad number.
    """
    from psygym_agents.solvers.situations import check_options

    return check_options(
        options, SITUATION_KEYS, _INT_KEYS,
        unknown="situation: {key} is not a key of 8th-edition situations; known keys: {known}",
    )  # fmt: skip


def parse_situation(text: str) -> dict[str, Any]:
    """Parse ``"caster=Farseer,power=Smite,test=8,still=Doom;Fortune"``.

    Raises:
        ValueError: a part is not ``key=value`` or the key is unknown.
    """
    from psygym_agents.solvers.situations import key_values

    return normalize(key_values(text))


def _items(value: Any) -> list[str]:
    if isinstance(value, list | tuple):
        return [str(v).strip() for v in value if str(v).strip()]
    return [v.strip() for v in re.split(r"[;,]", str(value)) if v.strip()]


def _unit(rules: EighthRules, name: str, what: str) -> int:
    if name not in rules.names:
        raise ValueError(
            f"situation: {what} {name!r} is not a unit of the scenario; units: "
            f"{', '.join(rules.names)}"
        )
    return rules.names.index(name)


def _counts(rules: EighthRules, text: Any, what: str, most: tuple[int, ...]) -> dict[int, int]:
    out = {}
    for item in _items(text):
        name, sep, n = item.rpartition(":")
        if not sep:
            raise ValueError(f"situation: {what} entry {item!r} is not Unit:N")
        u = _unit(rules, name.strip(), f"{what} unit")
        try:
            k = int(n)
        except ValueError:
            raise ValueError(f"situation: {what} of {name.strip()} must be a number") from None
        if not 0 <= k <= most[u]:
            raise ValueError(f"situation: {what} of {name.strip()} must be 0..{most[u]}, got {k}")
        out[u] = k
    return out


def _power(rules: EighthRules, name: str) -> int:
    if name not in rules.power_index:
        raise ValueError(
            f"situation: unknown power {name!r}; powers of this scenario: "
            f"{', '.join(p.name for p in rules.powers)}"
        )
    return rules.power_index[name]


def _side(rules: EighthRules, value: Any) -> int:
    names = rules.side_names
    if str(value) in names:
        return names.index(str(value))
    if str(value) in ("0", "1"):
        return int(value)
    raise ValueError(f"situation: side must be 0, 1, {names[0]} or {names[1]}, got {value!r}")


def eighth_situation(rules: EighthRules, **options: Any) -> Hashable:
    """The 8th-edition decision state described by the keys of the module docstring.

    Raises:
        ValueError: one line naming the key and what is allowed.
    """
    from psygym.editions.eighth.state import PHASE_START, Stage

    opts = normalize(options)
    caster = _unit(rules, str(opts["caster"]), "caster") if "caster" in opts else None
    if caster is not None and not (rules.units[caster].psyker and rules.units[caster].manifest):
        raise ValueError(f"situation: caster {rules.names[caster]} is not a PSYKER that manifests")
    if "side" in opts:
        side = _side(rules, opts["side"])
        if caster is not None and rules.side_of[caster] != side:
            raise ValueError(f"situation: {rules.names[caster]} is not of {rules.side_names[side]}")
    else:
        side = rules.side_of[caster] if caster is not None else rules.game.first_player
    rnd = opts.get("round", 1)
    if not 1 <= rnd <= rules.game.battle_rounds:
        raise ValueError(f"situation: round must be 1..{rules.game.battle_rounds}, got {rnd}")
    phase = 0 if side == rules.game.first_player else 1
    wounds = list(rules.max_wounds)
    for u, w in _counts(rules, opts.get("wounds", ""), "wounds", rules.max_wounds).items():
        wounds[u] = w
    full = tuple(u.deny if u.psyker else 0 for u in rules.units)
    deny_left = list(full)
    for u, k in _counts(rules, opts.get("denies", ""), "denies", full).items():
        deny_left[u] = k
    if caster is not None and not wounds[caster]:
        raise ValueError(f"situation: the caster {rules.names[caster]} has no wounds left")

    attempts = [0] * len(rules.powers)
    selected = 0
    if "still" in opts:
        still = {_power(rules, name) for name in _items(opts["still"])}
        psykers = rules.side_psykers[side]
        for p in {p for i in psykers for p in rules.known[i]} - still:
            if not rules.powers[p].repeatable:
                attempts[p] = 1  # already attempted this phase (8E-3.2)
        for i in psykers:
            if i != caster and not still & set(rules.known[i]):
                selected |= 1 << i  # done this phase (8E-2.3)
    start = {**PHASE_START, "selected": selected}
    s = evolve(
        rules.initial_state(), **start, wounds=tuple(wounds), deny_left=tuple(deny_left),
        attempts=tuple(attempts), round=rnd, phase=phase, active=side,
        phases_played=2 * (rnd - 1) + phase, score=0.0,
    )  # fmt: skip
    if len(rules.legal_actions(s)) < 2:
        raise ValueError(
            f"situation: {rules.side_names[side]} has no psyker left that can attempt a power"
        )
    if caster is None:
        if "power" in opts or "test" in opts:
            raise ValueError("situation: power and test need caster (the psyker attempting it)")
        return s
    select = rules.actions.select(caster)
    if select not in rules.legal_actions(s):
        raise ValueError(f"situation: {rules.names[caster]} has no power it may attempt now")
    s = rules.apply(s, select)
    if "power" not in opts:
        if "test" in opts:
            raise ValueError("situation: test needs power (the power attempted)")
        return s
    p = _power(rules, str(opts["power"]))
    casts = [a for a in rules.legal_actions(s) if rules.actions.is_cast(a)]
    mine = [a for a in casts if rules.actions.decode_cast(a).power == p]
    if not mine:
        raise ValueError(
            f"situation: {rules.names[caster]} may not attempt {rules.powers[p].name} now; "
            f"it may attempt: "
            f"{', '.join(sorted({rules.powers[rules.actions.decode_cast(a).power].name for a in casts})) or 'nothing'}"  # noqa: E501
        )
    if "target" in opts:
        t = _unit(rules, str(opts["target"]), "target")
        chosen = [a for a in mine if rules.actions.decode_cast(a).target == t]
        if not chosen:
            legal = ", ".join(rules.names[rules.actions.decode_cast(a).target] for a in mine)
            raise ValueError(
                f"situation: {opts['target']} is not a legal target of {rules.powers[p].name}; "
                f"legal: {legal}"
            )
        action = chosen[0]
    else:
        action = mine[0]
    wc = rules.warp_charge(s, p)
    s = rules.apply(s, action)
    if "test" not in opts:
        raise ValueError("situation: power needs test=N, the psychic test total, to ask the deny")
    total = opts["test"]
    if not wc <= total <= 11:
        raise ValueError(
            f"situation: test must be {wc}..11 for a deny question ({rules.powers[p].name} needs "
            f"{wc} to be manifested, 8E-4.1; a 12 cannot be denied, 8E-5.2), got {total}"
        )
    s = rules.apply(s, total)
    while rules.current_player(s) == CHANCE:  # no Perils between 3 and 11 (8E-4.3)
        outcomes = rules.chance_outcomes(s)
        s = rules.apply(s, max(outcomes, key=lambda o: o[1])[0])
    if s.stage != Stage.DENY:
        raise ValueError(
            f"situation: no unit of {rules.side_names[1 - side]} may deny: no PSYKER with a deny "
            f'left within {rules.game.deny_range:g}" of {rules.names[caster]} (8E-5.1)'
        )
    return s


def question(rules: EighthRules, state: Hashable) -> str:
    """What the decision at ``state`` asks, in player words."""
    from psygym.editions.eighth.state import Stage

    stage = state.stage  # type: ignore[attr-defined]
    side = rules.side_names[rules.current_player(state)]
    if stage == Stage.SELECT:
        return f"{side}: which psyker to select next (or end the phase)?"
    if stage == Stage.POWER:
        who = rules.names[state.caster]  # type: ignore[attr-defined]
        return f"{side}: which power {who} attempts next (or stop)?"
    if stage == Stage.DENY:
        p = rules.powers[state.power].name  # type: ignore[attr-defined]
        total = state.total  # type: ignore[attr-defined]
        who = rules.names[state.caster]  # type: ignore[attr-defined]
        return f"{side}: deny {who}'s {p} (test {total}), and with which psyker?"
    return f"{side} to decide"


__all__ = ["SITUATION_KEYS", "eighth_situation", "normalize", "parse_situation", "question"]
