"""Rogue Trader board features: any Rogue Trader scenario's board as the same named numbers.

The map reads player 0's observation (:meth:`psygym.editions.rogue_trader.views.RTViews.observe`)
and the scenario's facts (:mod:`psygym_agents.value.features` says why it is linear). Per side,
``own`` being player 0 and ``foe`` player 1:

- ``points``: wounds left x value per wound (the score, RT-6.2), ``full_points`` at the start;
  ``removed_points``: units out of the fight (Rout, RT-4.5), their wounds left scored already,
  at full points (proxy, exact if removed unwounded); ``units`` in the fight; ``psykers`` and
  ``mastery`` living (RT-1.1, RT-1.2); ``psi_points``, ``psi_level`` (RT-1.1), ``no_test``: 12+
  points (RT-2.3), ``resting`` (RT-5), slain psykers' entries included (else a product);
- ``reach``: worth of what the living psykers know at the start (proxy: in-the-fight flag times a
  constant; random abilities, RT-1.3, as expected number x mean worth); ``known``: worth of the
  abilities held now (flags, a slain psyker's too). Worth: expected score if the ability works,
  no bids, at its best target at the start (``heuristics.ability_worth``);
- ``saves``: living units' P(2D6 <= WP) of a psychic save (RT-3.1); proxy: in-the-fight flag x
  the chance at profile WP, plus Strength of Mind flag x what +1 WP adds (RT-4.7), exact but for
  slain units; ``auras`` levels (RT-4.3); ``strength_of_mind``; ``stolen_turns``, ``confused``,
  ``afraid`` (RT-4.5).

Shared: decision kind (six), whose move and turn, turns played / left / in all and fractions
(RT-6.1); the pending ability: its user is player 0's, its worth (best over psykers), cost
(RT-2.4), the target's full points, owner and psychic-save chance, player 0's own enhanced bid
(RT-3.2; hidden from the defender, RT-3.4) and the wounds Cure Wounds heals (RT-4.6).
"""

from __future__ import annotations

from typing import Any

from psygym_agents.rogue_trader.heuristics import ability_worth
from psygym_agents.value.features import BoardFeatures, FeatureBuilder

from psygym.dice import distribution
from psygym.editions.rogue_trader.chances import psychic_save_chance
from psygym.editions.rogue_trader.state import State, UnitState
from psygym.editions.rogue_trader.units import put
from psygym.editions.rogue_trader.views import KINDS
from psygym.kernel import evolve

SIDE_FEATURES = (
    "points", "full_points", "removed_points", "units", "psykers", "mastery", "psi_points",
    "psi_level", "no_test", "resting", "reach", "known", "saves", "auras", "strength_of_mind",
    "stolen_turns", "confused", "afraid",
)  # fmt: skip
"""Features counted once per side."""

SHARED_FEATURES = (
    *(f"kind_{k}" for k in KINDS), "own_move", "own_turn", "turns_played", "turn_fraction",
    "turns_left", "turns_left_fraction", "turns", "use_own", "use_worth", "use_cost",
    "use_target_points", "use_target_own", "use_target_save", "use_bid", "use_amount",
)  # fmt: skip
"""Features of the whole board."""

FEATURES = tuple(f"{side}_{n}" for side in ("own", "foe") for n in SIDE_FEATURES) + SHARED_FEATURES
"""Every Rogue Trader board feature, in order."""

MONOTONE = tuple({f"{side}_{name}": step} for side, step in (("own", 1.0), ("foe", -1.0))
                 for name in ("psi_points", "no_test", "resting"))  # fmt: skip
"""Directions the board is never worth less in to a side, by the rules: psi-points carry over
and are spent only by choice (RT-2.4, RT-3.2, RT-3.3), 12 or more spare the test (RT-2.3), and
a resting psyker regains one (RT-5). In games between heuristics a psyker keeps its points or
rests when it has nothing better to do, and a value fitted to those games alone rated a
resting psyker's board about 0.2 points lower. (Auras, Strength of Mind, psychic saves and
stolen turns as directions too made a value that lost three held-out lists; docs/strength.md.)"""

_ROW = 16  # a unit's entries before its ability flags (RTViews.observe)
_NORM = 20  # psi-points and psi-levels are observed divided by 20


def start_board(rules: Any) -> State:
    """The start: full wounds, psi-levels (random: the mean, RT-1.1), every possible ability."""
    units = []
    for i, spec in enumerate(rules.specs):
        if not rules.psyker[i]:
            units.append(UnitState(hp=rules.max_hp[i]))
            continue
        row = rules.data.mastery_row(spec.mastery)
        level = row.psi_level if spec.psi_level is None else spec.psi_level
        if rules.random_level[i]:
            level = round(sum(o * p for o, p in distribution(row.random_psi_level).items()))
        points = level if spec.psi_points is None else min(spec.psi_points, level)
        held = rules.data.by_level(spec.mastery)  # drawn at random: any of its levels (RT-1.3)
        if not rules.random_abilities[i]:
            held = tuple(sorted(rules.data.index[a] for a in spec.abilities))
        units.append(UnitState(hp=rules.max_hp[i], points=points, level=level, abilities=held))
    return State(units=tuple(units))


def ability_worths(rules: Any) -> list[dict[int, float]]:
    """Per unit, ability id -> its expected score if it works, at its best target (else 0).

    On :func:`start_board` with no bids (RT-3.1); a cure's target is one wound down and Destroy
    Aura's bears a level-1 aura, so each has the target it needs.
    """
    board = start_board(rules)
    worth: list[dict[int, float]] = [{} for _ in rules.specs]
    for u in (*rules.psykers_of[0], *rules.psykers_of[1]):
        sure = max(board.units[u].points, rules.game.no_test_at)  # RT-2.3: works, no test
        caster = evolve(board, units=put(board.units, u, points=sure))
        for a in board.units[u].abilities:
            effect, values = rules.abilities[a].effect, []
            for t in range(rules.n_units):
                need = {"hp": rules.max_hp[t] - 1} if effect.startswith("cure") else {}
                need = {"aura": 1} if effect == "destroy_aura" else need
                s = evolve(caster, units=put(caster.units, t, **need))
                if t in rules.targets(s, u, a):
                    values.append(ability_worth(rules, s, u, a, t))
            worth[u][a] = max(values, default=0.0)
    return worth


def _reach(rules: Any, u: int, worth: dict[int, float]) -> float:
    """Worth of what psyker ``u`` knows at the start (expected, for random abilities)."""
    if not rules.random_abilities[u]:
        return sum(worth.values())
    return rules.expected_abilities(u) * sum(worth.values()) / max(1, len(worth))


def board_features(rules: Any) -> BoardFeatures:
    """The Rogue Trader board features of ``rules``' scenario (see the module docstring)."""
    views, b = rules.views, FeatureBuilder(FEATURES, rules.observation_size, MONOTONE)
    worth, n, n_abilities = ability_worths(rules), rules.n_units, rules.n_abilities
    full = [rules.max_hp[t] * rules.vpw[t] for t in range(n)]
    save = [float(psychic_save_chance(spec.will_power)) for spec in rules.specs]
    for t, spec in enumerate(rules.specs):
        side, i = ("own", "foe")[rules.owner[t]], views.units_offset + t * views.unit_size
        gain = float(psychic_save_chance(spec.will_power + 1)) - save[t]  # RT-4.7: +1 WP
        entries = [  # (feature, entry of the unit's row, coefficient)
            ("points", 2, full[t]), ("removed_points", 4, full[t]), ("units", 3, 1),
            ("saves", 3, save[t]), ("saves", 14, gain), ("strength_of_mind", 14, 1),
            ("auras", 5, 4), ("stolen_turns", 6, 6), ("confused", 7, 1), ("afraid", 8, 1),
        ]  # fmt: skip
        if rules.psyker[t]:
            entries += [
                ("psykers", 3, 1), ("mastery", 3, spec.mastery), ("psi_points", 10, _NORM),
                ("psi_level", 11, _NORM), ("no_test", 12, 1), ("resting", 13, 1),
                ("reach", 3, _reach(rules, t, worth[t])),
                *(("known", _ROW + a, w) for a, w in worth[t].items()),
            ]  # fmt: skip
        for name, k, c in entries:
            b.add(f"{side}_{name}", i + k, c)
        b.constant(f"{side}_full_points", full[t])
    turns, actor = rules.game.turns, 10 + n_abilities  # one-hots: ability at 10, actor, target
    target = actor + n
    entries = [
        *((f"kind_{kind}", k, 1) for k, kind in enumerate(KINDS)), ("own_move", 6, 1),
        ("own_turn", 7, 1), ("turns_played", 8, turns), ("turn_fraction", 8, 1),
        ("turns_left", 9, turns), ("turns_left_fraction", 9, 1),
        ("use_bid", target + n, max(1, rules.bid_limit)),
        ("use_amount", target + n + 1, max(1, rules.max_number)),
    ]  # fmt: skip
    entries += [("use_worth", 10 + a, max((w[a] for w in worth if a in w), default=0.0))
                for a in range(n_abilities)]  # fmt: skip
    entries += [("use_cost", 10 + a, ab.cost) for a, ab in enumerate(rules.abilities)]
    entries += [("use_target_points", target + t, full[t]) for t in range(n)]
    entries += [("use_target_save", target + t, save[t]) for t in range(n)]
    entries += [("use_own", actor + t, 1) for t in rules.side_units[0]]
    entries += [("use_target_own", target + t, 1) for t in rules.side_units[0]]
    for name, k, c in entries:
        b.add(name, k, c)
    b.constant("turns", turns)
    return b.build()


__all__ = ["FEATURES", "MONOTONE", "ability_worths", "board_features", "start_board"]
