"""7th-edition situations for ``psygym advise``: a decision described in a player's terms.

Two ways to name a state:

- **A 7th-edition situation** (:func:`seventh_situation`), built with ``psygym.kernel.evolve``
  on the scenario's initial state: the caster's and the denier's dice, which powers are still
  to be cast this phase, wounds left, and the decision asked (which power, how many dice, or
  whether to deny). The compact text form (:func:`parse_situation`) is
  ``"dice=7,enemy_dice=4,power=Smite,wc=1"``.
- **A state file** (:func:`load_state_file`), JSON, any edition::

      {"edition": "8th", "scenario": "single-phase", "actions": [0, 5, 9]}
      {"edition": "7th", "scenario": "single-phase",
       "situation": {"dice": 7, "enemy_dice": 4, "power": "Smite"}}

  ``actions`` are replayed from the initial state (decisions and chance outcomes alike, as
  ``psygym`` replays record them); ``situation`` (7th only) is a mapping of the keys below or
  the compact text. ``edition`` and ``scenario`` are optional (the command's options decide).

Situation keys (7th edition):

========== ===============================================================================
dice        dice left in the casting player's pool (default: a warp charge roll of 4 plus the
            side's living mastery levels, 7E-3.1)
enemy_dice  dice left to the other player (default: 4 plus its living mastery levels)
powers      powers still to cast this phase, ``Name[:WC][@Caster]`` separated by commas (in
            the compact form by ``;``); the others the psykers know count as attempted.
            ``:WC`` is checked against the power data; ``@Caster`` teaches the power to that
            psyker if it does not know it
power       one power (the same as ``powers`` with one entry); then the decision is its dice
wc          keep only the castable powers of this warp charge, 1-3 (or check ``power``'s)
caster      the psyker casting ``power`` (default: the first that knows it)
target      its target unit (default: the first legal one)
successes   ask the deny decision instead: ``power`` was cast with this many successes (at
            least its warp charge, at most ``cast_dice``: 7E-4.3, 7E-5.1)
cast_dice   dice the caster rolled for that cast (default: ``successes``); with ``dice`` (the
            dice left after it) one pool, at most the scenario's largest (7E-3.1)
wounds      wounds left, ``Unit:N`` separated by commas (``;`` in the compact form)
side        the casting player, 0 or 1 (default: the scenario's first player)
round       the battle round, from 1 (default: the first in which every power named has a
            living target in range; powers generated before the game, 7E-2, are taught to the
            first psyker of the side whose disciplines hold them)
phase       the Psychic phase index, from 0 (instead of ``round``, not with it); even phases
            are the first player's, odd ones the other's (7E-8.1), and it must be ``side``'s
decision    ``select``, ``dice`` or ``deny`` (default: deny with ``successes``, dice with one
            power, else select)
========== ===============================================================================
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Mapping
from typing import TYPE_CHECKING, Any

from psygym.kernel import evolve
from psygym.text import plural

if TYPE_CHECKING:
    from psygym.editions.seventh.rules import SeventhRules

SITUATION_KEYS = (
    "dice", "enemy_dice", "powers", "power", "wc", "caster", "target", "successes",
    "cast_dice", "wounds", "side", "round", "phase", "decision",
)  # fmt: skip
"""Keys of a 7th-edition situation."""

_INT_KEYS = ("dice", "enemy_dice", "wc", "successes", "cast_dice", "side", "round", "phase")


def parse_situation(text: str) -> dict[str, Any]:
    """Parse ``"dice=7,enemy_dice=4,powers=Smite;Psychic Maelstrom:2,wounds=Librarian:1"``.

    Pairs are separated by commas; lists inside a value by ``;`` (or by commas that are not
    followed by ``key=``). Integers are converted.

    Raises:
        ValueError: a part is not ``key=value`` or the key is unknown (lists the known keys).
    """
    from psygym_agents.solvers.situations import key_values

    return normalize(key_values(text))


def normalize(options: Mapping[str, Any]) -> dict[str, Any]:
    """Check keys, turn whole-number strings into ints and drop ``None`` values.

    Raises:
        ValueError: unknown key or a value that should be a whole number and is not.
    """
    from psygym_agents.solvers.situations import check_options

    return check_options(
        options, SITUATION_KEYS, _INT_KEYS, minimum=0,
        unknown="situation: unknown key {key}; known keys: {known}",
    )  # fmt: skip


def _items(value: Any) -> list[str]:
    if isinstance(value, list | tuple):
        return [str(v).strip() for v in value if str(v).strip()]
    return [v.strip() for v in re.split(r"[;,]", str(value)) if v.strip()]


def _warp_charge(value: Any, what: str) -> int:
    """``value`` as a warp charge, 1-3 (7E-4.3), or a ``ValueError`` naming ``what``."""
    try:
        wc = int(value)
    except (TypeError, ValueError):
        wc = 0
    if not 1 <= wc <= 3:
        raise ValueError(
            f"situation: {what} must be 1, 2 or 3 (a warp charge, 7E-4.3), got {value!r}"
        )
    return wc


def _check_cast(rules: SeventhRules, power: Any, successes: int, rolled: int, left: int) -> None:
    """A deny situation's cast must be one the dice allow.

    Each die rolled gives at most one success (7E-4.3), the power was cast (successes at least
    its warp charge, else there is nothing to deny: 7E-5.1), and the dice rolled plus the dice
    left (``dice``) were one pool, at most the scenario's largest (7E-3.1, 7E-4.1).

    Raises:
        ValueError: one line naming the key and what is allowed.
    """
    wc, most = power.warp_charge, rules.max_dice
    room = most - left
    if successes < wc:
        raise ValueError(
            f"situation: successes must be at least {power.name}'s warp charge {wc} (with fewer "
            f"the power is not cast and nothing is denied, 7E-4.3, 7E-5.1), got {successes}"
        )
    if rolled < successes:
        raise ValueError(
            f"situation: successes ({successes}) must be at most cast_dice, the dice rolled "
            f"({rolled}): each die gives at most one success (7E-4.3)"
        )
    if rolled > room:
        raise ValueError(
            f"situation: successes={successes} with cast_dice={rolled} does not fit the pool: "
            f"the dice rolled and the dice left (dice={left}) are one pool of at most {most} "
            f"(7E-3.1, 7E-4.1), so successes <= cast_dice <= {max(room, 0)}"
        )


def _unit(rules: SeventhRules, name: str, what: str) -> int:
    if name not in rules.names:
        raise ValueError(
            f"situation: {what} {name!r} is not a unit of the scenario; units: "
            f"{', '.join(rules.names)}"
        )
    return rules.names.index(name)


def _teach(rules: SeventhRules, unit: Any, p: int) -> Any:
    """``unit`` knowing power ``p`` too (a generated power's discipline recorded, 7E-2.3)."""
    powers = tuple(sorted({*unit.powers, p}))
    discipline = rules.powers[p].discipline
    generated = unit.generated
    if discipline in rules.disciplines:
        generated = (*generated, rules.disciplines.index(discipline))
    return evolve(unit, powers=powers, generated=generated)


def _has_target(rules: SeventhRules, s: Any, units: list[Any], phase: int, c: int, p: int) -> bool:
    """Whether power ``p`` of ``c`` has a living target (or nova victim) in ``phase``'s round."""
    probe = evolve(s, phase=phase, units=tuple(units))
    power = rules.powers[p]
    if power.target == "enemies":
        return bool(rules.nova_targets(probe, c, power))
    return any(units[t].alive() for t in rules.targets_in_range(probe, c, p))


def seventh_situation(rules: SeventhRules, **options: Any) -> Hashable:
    """A 7th-edition decision state described by the keys of the module docstring.

    Raises:
        ValueError: a key names an unknown unit or power, a value is out of range, or the
            described decision has no legal choice.
    """
    from psygym.editions.seventh.state import Cast, Stage

    opts = normalize(options)
    s = rules.initial_state()
    side = opts.get("side", rules.scenario.game.first_player)
    if side not in (0, 1):
        raise ValueError(f"situation: side must be 0 or 1, got {side}")
    units = list(s.units)

    # Wounds left (a unit at 0 is destroyed and loses its psyker).
    for item in _items(opts.get("wounds", "")):
        name, sep, n = item.rpartition(":")
        if not sep:
            raise ValueError(f"situation: wounds entry {item!r} is not Unit:N")
        u = _unit(rules, name.strip(), "wounds unit")
        try:
            w = int(n)
        except ValueError:
            raise ValueError(f"situation: wounds of {name.strip()} must be a number") from None
        if not 0 <= w <= rules.max_wounds[u]:
            raise ValueError(
                f"situation: wounds of {name.strip()} must be 0..{rules.max_wounds[u]}"
            )
        psyker = units[u].psyker and w > 0
        units[u] = evolve(units[u], wounds=w, psyker=psyker)

    def psykers_of(p: int) -> list[int]:
        return [i for i, u in enumerate(units) if rules.owner[i] == p and u.psyker and u.alive()]

    casters = psykers_of(side)
    if not casters:
        raise ValueError(f"situation: {rules.scenario.sides[side].name} has no living psyker")

    # Powers still to cast this phase.
    wanted = _items(opts["powers"]) if "powers" in opts else []
    if "power" in opts:
        wanted.append(str(opts["power"]))
    chosen: list[tuple[int, int]] = []  # (caster, power)
    for item in wanted:
        who = None
        if "@" in item:
            item, who = (x.strip() for x in item.split("@", 1))
        elif len(wanted) == 1 and "caster" in opts:
            who = str(opts["caster"])
        name, sep, wc = item.partition(":")
        name = name.strip()
        if name not in rules.power_index:
            raise ValueError(
                f"situation: unknown power {name!r}; powers of this scenario: "
                f"{', '.join(p.name for p in rules.powers)}"
            )
        p = rules.power_index[name]
        if sep and _warp_charge(wc, f"the warp charge in {name}:WC") != rules.powers[p].warp_charge:
            raise ValueError(
                f"situation: {name} has warp charge {rules.powers[p].warp_charge} "
                f"in the power data, not {wc}"
            )
        if who is not None:
            c = _unit(rules, who, "caster")
            if c not in casters:
                raise ValueError(f"situation: {who} is not a living psyker of the casting side")
            if p not in units[c].powers:
                units[c] = _teach(rules, units[c], p)
        else:
            knowing = [c for c in casters if p in units[c].powers]
            if not knowing:
                discipline = rules.powers[p].discipline
                able = [
                    c
                    for c in casters
                    if (spec := rules.specs[c].psyker) is not None
                    and rules.scenario.game.generate_powers
                    and discipline in spec.disciplines
                ]
                if able:
                    knowing = able[:1]
                    units[able[0]] = _teach(rules, units[able[0]], p)
                elif len(casters) != 1:
                    raise ValueError(
                        f"situation: no psyker of the casting side knows {name}; "
                        f"say which with {name}@Caster"
                    )
                else:
                    knowing = casters
                    units[casters[0]] = _teach(rules, units[casters[0]], p)
            c = knowing[0]
        chosen.append((c, p))
    named = list(chosen)
    wc_filter = opts.get("wc")
    if wc_filter is not None:
        _warp_charge(wc_filter, "wc")
        if chosen:
            bad = [
                rules.powers[p].name for _, p in chosen if rules.powers[p].warp_charge != wc_filter
            ]
            if bad:
                raise ValueError(f"situation: {', '.join(bad)} do not have warp charge {wc_filter}")
        else:
            chosen = [
                (c, p)
                for c in casters
                for p in units[c].powers
                if rules.powers[p].warp_charge == wc_filter
            ]
            if not chosen:
                raise ValueError(
                    f"situation: no power of warp charge {wc_filter} is known by the casting side"
                )
    attempted = frozenset()
    if chosen:
        keep = set(chosen)
        attempted = frozenset(
            (c, p) for c in casters for p in units[c].powers if (c, p) not in keep
        )

    def pool_default(p: int) -> int:
        bonus = rules.scenario.sides[p].pool_bonus if p == side else 0
        return 4 + sum(rules.mastery[i] for i in psykers_of(p)) + bonus

    dice = opts.get("dice", pool_default(side))
    enemy = opts.get("enemy_dice", pool_default(1 - side))
    if dice < 1 or dice > rules.max_dice or enemy > rules.max_dice:
        raise ValueError(
            f"situation: dice must be 1..{rules.max_dice} and enemy_dice 0..{rules.max_dice}"
        )
    pools = (dice, enemy) if side == 0 else (enemy, dice)
    first = rules.scenario.game.first_player
    own = 0 if side == first else 1
    if "round" in opts and "phase" in opts:
        raise ValueError(
            "situation: give round or phase, not both (phase is the Psychic phase index, "
            "which already says the battle round)"
        )
    if "round" in opts:
        rounds = -(-rules.total_phases // 2)
        if not 1 <= opts["round"] <= rounds:
            raise ValueError(f"situation: round must be 1..{rounds}, got {opts['round']}")
        phase = 2 * (opts["round"] - 1) + own
    elif "phase" in opts:
        phase = opts["phase"]
        if phase < rules.total_phases and phase % 2 != own:
            # The phase index alone fixes whose phase it is (each player has one Psychic phase
            # a battle round, the first player's first: 7E-8.1); a side casting in the other
            # side's phase is a game that cannot happen.
            names = [sc_side.name for sc_side in rules.scenario.sides]
            theirs = 1 - side
            mine = ", ".join(str(k) for k in range(own, rules.total_phases, 2)) or "none"
            raise ValueError(
                f"situation: phase {phase} is {names[theirs]}'s Psychic phase (battle round "
                f"{phase // 2 + 1}), not {names[side]}'s; {names[side]} (side {side}) has phases "
                f"{mine}, or give side={theirs}"
            )
    else:
        phase = next(
            (
                ph
                for ph in range(own, rules.total_phases, 2)
                if all(_has_target(rules, s, units, ph, c, p) for c, p in named)
            ),
            own,
        )
    if phase >= rules.total_phases:
        raise ValueError(f"situation: phase must be below {rules.total_phases}")
    for c, p in named:
        if not _has_target(rules, s, units, phase, c, p):
            power = rules.powers[p]
            raise ValueError(
                f'situation: {power.name} ({power.range:g}") has no living target in range of '
                f"{rules.names[c]} in battle round {phase // 2 + 1}; give another round"
            )
    s = evolve(
        s, stage=Stage.SELECT, units=tuple(units), phase=phase, active=side, pools=pools,
        attempted=attempted, effects=frozenset(), cast=None, targets=(), gen_unit=-1,
        gen_pick=0, gen_disc=-1, gen_power=-1, perils_roll=0, score=0.0,
    )  # fmt: skip

    decision = opts.get("decision")
    if decision is None:
        decision = "deny" if "successes" in opts else "dice" if len(chosen) == 1 else "select"
    if decision not in ("select", "dice", "deny"):
        raise ValueError(f"situation: decision must be select, dice or deny, not {decision!r}")
    if decision == "select":
        if len(rules.legal_actions(s)) < 2:
            raise ValueError("situation: no power can be cast in this situation")
        return s
    if len(chosen) != 1:
        raise ValueError(f"situation: decision {decision} needs exactly one power (power=...)")
    c, p = chosen[0]
    targets = [t for t in rules.targets_in_range(s, c, p) if units[t].alive()]
    if "target" in opts:
        t = _unit(rules, str(opts["target"]), "target")
        if t not in targets:
            raise ValueError(
                f"situation: {opts['target']} is not a legal target of "
                f"{rules.powers[p].name}; legal: "
                f"{', '.join(rules.names[x] for x in targets) or 'none'}"
            )
    elif targets:
        t = targets[0]
    else:
        raise ValueError(f"situation: {rules.powers[p].name} has no living target in range")
    if decision == "dice":
        return evolve(s, stage=Stage.DICE, cast=Cast(c, p, t))
    k = opts.get("successes")
    if k is None or k < 1:
        raise ValueError("situation: the deny decision needs successes=N (N >= 1)")
    if enemy < 1:
        raise ValueError("situation: the deny decision needs enemy_dice >= 1")
    rolled = opts.get("cast_dice", k)
    _check_cast(rules, rules.powers[p], k, rolled, dice)
    cast = Cast(c, p, t, dice=rolled, successes=k)
    return evolve(s, stage=Stage.DENY, cast=cast, attempted=attempted | {(c, p)})


def question(rules: SeventhRules, state: Hashable) -> str:
    """What the decision at ``state`` asks, in player words."""
    from psygym.editions.seventh.state import Stage

    s: Any = state
    if s.stage == Stage.GEN_ROLL:
        side = rules.scenario.sides[rules.owner[s.gen_unit]].name
        return (
            f"{side}: {rules.names[s.gen_unit]} rolls on {rules.disciplines[s.gen_disc]} for "
            f"power {s.gen_pick + 1}: keep what it rolls or take the Primaris power?"
        )
    side = rules.scenario.sides[rules.current_player(s)].name
    cast = s.cast
    if s.stage == Stage.SELECT:
        return f"{side}: which power to cast next (or end the phase)?"
    if s.stage == Stage.DICE and cast is not None:
        return (
            f"{side}: how many dice {rules.names[cast.caster]} rolls for "
            f"{rules.powers[cast.power].name} ({s.pools[s.active]} left)?"
        )
    if s.stage == Stage.DENY and cast is not None:
        return (
            f"{side}: deny {rules.powers[cast.power].name} ({plural(cast.successes, 'success')}), "
            f"and with how many of {plural(s.pools[1 - s.active], 'die')}?"
        )
    if s.stage == Stage.DISCIPLINE:
        who = rules.names[s.gen_unit]
        return f"{side}: which discipline {who} rolls on for power {s.gen_pick + 1}?"
    if s.stage == Stage.SWAP:
        return (
            f"{side}: {rules.names[s.gen_unit]} keeps {rules.powers[s.gen_power].name} or takes "
            "the Primaris power?"
        )
    return f"{side} to decide"


def generation_state(
    rules: SeventhRules,
    psyker: str | None = None,
    pick: int = 1,
    choose: Any = None,
) -> Hashable:
    """The state where ``psyker`` chooses the discipline of its ``pick``-th power (7E-2.1).

    With one discipline to roll on there is no choice: the state is then that roll.

    Earlier picks (of this psyker or of psykers generating before it) are made by ``choose``
    (``choose(state) -> action``; default: the first legal action), their rolls by the most
    likely outcome (the middle one of ties).

    Raises:
        ValueError: the scenario generates no powers, or ``psyker``/``pick`` is not a pick of it.
    """
    from psygym.editions.seventh.state import Stage

    if not rules.scenario.game.generate_powers:
        raise ValueError(
            f"--generation: scenario {rules.scenario.name} generates no powers (7E-2); "
            "use one with generate_powers = true, such as duel"
        )
    generating = [
        i for i, u in enumerate(rules.specs) if u.psyker is not None and u.psyker.disciplines
    ]
    if psyker is None:
        unit = generating[0]
    elif psyker not in rules.names or rules.names.index(psyker) not in generating:
        raise ValueError(
            f"--psyker: {psyker!r} generates no powers in {rules.scenario.name}; psykers that do: "
            f"{', '.join(rules.names[i] for i in generating)}"
        )
    else:
        unit = rules.names.index(psyker)
    most = rules.mastery[unit]
    if not 1 <= pick <= most:
        raise ValueError(
            f"--pick: {rules.names[unit]} generates {most} power(s) (its mastery level, 7E-2.1), "
            f"so pick is 1..{most}, got {pick}"
        )
    s: Any = rules.initial_state()
    while True:
        if (
            s.stage in (Stage.DISCIPLINE, Stage.GEN_ROLL)
            and s.gen_unit == unit
            and s.gen_pick == pick - 1
        ):
            return s  # a psyker with one discipline has no choice of it: its roll (7E-2.1)
        if s.stage not in (Stage.DISCIPLINE, Stage.GEN_ROLL, Stage.SWAP):
            raise ValueError(
                f"--pick: {rules.names[unit]} has no discipline to choose for power {pick}"
            )
        player = rules.current_player(s)
        if player < 0:
            outcomes = rules.chance_outcomes(s)
            best = max(q for _, q in outcomes)
            tied = [o for o, q in outcomes if q >= best - 1e-12]
            s = rules.apply(s, tied[len(tied) // 2])
        else:
            s = rules.apply(s, choose(s) if choose else rules.legal_actions(s)[0])


__all__ = [
    "SITUATION_KEYS", "generation_state", "normalize", "parse_situation", "question",
    "seventh_situation",
]  # fmt: skip
