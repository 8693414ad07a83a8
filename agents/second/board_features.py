"""2nd-edition board features: any 2nd scenario's board as the same named numbers.

The map reads player 0's observation (:meth:`~psygym.editions.second.views.SecondViews.observe`;
hands are secret, 2E-2: the public table and player 0's own hand) and the scenario's facts
(:mod:`psygym_agents.value.features` says why it is linear). Per side (``own``: player 0):

- ``points``: wounds left times value per wound (the score, 2E-8); ``full_points``: the same at
  the start; ``units``: units alive;
- ``psykers``, ``mastery``, ``hoods``: living psykers, their mastery levels (2E-1.1, read by
  Nullify, Daemonic Attack and Psychic Duel, 2E-5.2, 2E-7) and psychic hoods;
- ``reach``: the start worth of the living psykers' cards (:func:`power_worth`; a card drawn at
  set-up, 2E-1.1, at its pool's mean: exact in expectation); ``known``: the worth of the cards
  held now (proxy: a slain psyker's cards still count);
- ``in_force``, ``locked``: powers in play (2E-6), paid with Ultimate Force (2E-5.1);
  ``in_force_worth``: their worth per phase (proxy: an in-play slot times its fixed card's worth,
  or its pool's mean remain-in-play card); ``cast``: psykers that have cast this phase (2E-4.2);
- ``hand``, ``force``, ``ultimate``, ``nullify``, ``stoppers`` (Destroy Power, Reflection,
  Daemonic Attack): cards in hand; the foe's hand is hidden, so its kinds are a proxy: its size
  times the warp deck's share of the kind (2E-2);
- ``nullify_chance``: a Nullify against the enemy's average caster (2E-5.2); proxy linear in
  the psykers alive, exact with all of them (best ML, any hood) and with none.

Shared: the decision kind, battle round (count, fraction, rounds), phases left (count,
fraction), whose phase and move, passes in a row (2E-4.3), warp flux dice (2E-3.1), the deck and
the unseen Force, Nullify and other cards (2E-2), and the pending power (2E-5): present, cast by
player 0, worth (proxy: the caster's best card, cast-biggest's pick), the target's full points
(0 for an area power), Force, Ultimate Force, responses. The score so far is left out.
"""

from __future__ import annotations

from typing import Any

from psygym_agents.value.features import BoardFeatures, FeatureBuilder

from psygym.editions.second.data import NUM_CARDS, Card
from psygym.editions.second.responses import nullify_chance, nullify_roll_needed

SIDE_FEATURES = (
    "points", "full_points", "units", "psykers", "mastery", "hoods", "reach", "known",
    "in_force", "locked", "in_force_worth", "cast", "hand", "force", "ultimate", "nullify",
    "stoppers", "nullify_chance",
)  # fmt: skip
"""Features counted once per side."""

SHARED_FEATURES = (
    "kind_turn", "kind_response", "kind_wait", "kind_over", "round", "round_fraction",
    "rounds", "phases_left", "phases_left_fraction", "own_phase", "own_move", "passes",
    "flux_dice", "deck", "unseen_force", "unseen_nullify", "unseen_other", "pending",
    "pending_own", "pending_worth", "pending_target_points", "pending_force",
    "pending_ultimate", "pending_responses",
)  # fmt: skip
"""Features of the whole board."""

FEATURES = tuple(f"{side}_{n}" for side in ("own", "foe") for n in SIDE_FEATURES) + SHARED_FEATURES
"""Every 2nd-edition board feature, in order."""

_K = NUM_CARDS
_KIND = {Card.FORCE: "force", Card.ULTIMATE_FORCE: "ultimate", Card.NULLIFY: "nullify"}
_KIND.update(dict.fromkeys((Card.DESTROY_POWER, Card.REFLECTION, Card.DAEMONIC_ATTACK), "stoppers"))
_UNSEEN = {Card.FORCE: "unseen_force", Card.NULLIFY: "unseen_nullify"}


def power_worth(rules: Any) -> list[list[float]]:
    """Per psyker and power: the expected score if it goes off at its best target at the start.

    The heuristics' ``rules.effect_value`` (2E-6, 2E-8), best over targets (2E-5.1) and Force
    (2E-1.1); at least 0, and 0 for a power above the psyker's ML with 2E-1.2's setting.
    """
    wounds, barred = rules.initial_state().wounds, rules.settings.ml_limits_power_level
    worth = [[0.0] * len(rules.power_data) for _ in range(rules.num_psykers)]
    for i, k in ((i, k) for i in range(rules.num_psykers) for k in range(len(rules.power_data))):
        targets = rules.targets_of(i, k)
        if not (barred and rules.power_data[k].level > rules.ml[i]):
            forces = range(rules.force_range[k][0], rules.force_range[k][1] + 1)
            values = [rules.effect_value(wounds, i, k, f, t) for t in targets for f in forces]
            worth[i][k] = max([0.0, *values])
    return worth


def slot_worth(rules: Any, worth: list[list[float]], lasting: bool = False) -> list[list[float]]:
    """Per psyker and slot: its card's expected worth at the start (0: no card).

    A card drawn at set-up (the first ML slots, 2E-1.1) counts at its pool's mean; with
    ``lasting`` only remain-in-play cards count (2E-6), a drawn one at the pool's such mean.
    """
    out = []
    for i, (fixed, ml) in enumerate(zip(rules.initial_powers, rules.ml, strict=True)):
        keep = [not lasting or p.remain_in_play for p in rules.power_data]
        pool = [k for k in rules.draw_pools[i] or () if k not in fixed and keep[k]]
        mean = sum(worth[i][k] for k in pool) / max(1, len(pool))
        row = (worth[i][k] * keep[k] if k >= 0 else mean * (j < ml) for j, k in enumerate(fixed))
        out.append(list(row))
    return out


def _nullify(rules: Any, side: int, best: int, hood: bool) -> float:
    """Chance ``side``'s Nullify succeeds against the enemy's average caster (2E-5.2)."""
    casters = [rules.ml[e] for e in rules.side_psykers[1 - side]] or [0]
    need = [nullify_roll_needed(rules.settings, best, ml) for ml in casters]
    return float(sum(nullify_chance(n, hood) for n in need)) / len(casters)


def board_features(rules: Any) -> BoardFeatures:
    """The 2nd-edition board features of ``rules``' scenario (see the module docstring)."""
    views = rules.views  # the layout's bases; read only
    b = FeatureBuilder(FEATURES, rules.observation_size)
    worth = power_worth(rules)
    held, lasting = slot_worth(rules, worth), slot_worth(rules, worth, lasting=True)
    n_powers, n_slots, n_units = len(rules.power_data), rules.num_slots, rules.num_units
    side_name, pending = ("own", "foe"), views.pending_start
    target = pending + 1 + rules.num_psykers + n_slots  # the target one-hot
    for u, spec in enumerate(rules.units):
        side, i, points = side_name[rules.owner[u]], views.board_start + 4 * u, spec.value_per_wound
        b.add(f"{side}_points", i + 2, points)
        b.constant(f"{side}_full_points", rules.max_wounds[u] * points)
        b.add(f"{side}_units", i + 1)
        b.add("pending_target_points", target + u, rules.max_wounds[u] * points)
    nullify = []
    for s, mine in enumerate(rules.side_psykers):
        none, ml = _nullify(rules, s, 0, False), max((rules.ml[p] for p in mine), default=0)
        best = _nullify(rules, s, ml, any(rules.hood[p] for p in mine))
        b.constant(f"{side_name[s]}_nullify_chance", none)
        nullify.append((best - none) / max(1, len(mine)))
    for p, s in enumerate(rules.psyker_side):
        side, i = side_name[s], views.board_start + 4 * n_units + p * (5 + n_slots * (3 + n_powers))
        for name, coefficient in (
            ("psykers", 1), ("mastery", rules.ml[p]), ("hoods", float(rules.hood[p])),
            ("reach", sum(held[p])), ("nullify_chance", nullify[s]),
        ):  # fmt: skip
            b.add(f"{side}_{name}", i + 1, coefficient)
        b.add(f"{side}_cast", i + 3)
        for j in range(n_slots):
            slot = i + 5 + j * (3 + n_powers)
            b.add(f"{side}_in_force", slot + 1)
            b.add(f"{side}_locked", slot + 2)
            b.add(f"{side}_in_force_worth", slot + 1, lasting[p][j])
            for k in range(n_powers):
                b.add(f"{side}_known", slot + 3 + k, worth[p][k])
        b.add("pending_own", pending + 1 + p, float(s == 0))
        b.add("pending_worth", pending + 1 + p, max(held[p]))
    # The head (SecondObservation.observe): 0-3 decision, 4 own phase, 5 round / rounds, 6 phase
    # / phases, 7 passes, 8 own move, 9 own hand (K kinds), 9+K foe hand, 10+K deck, 11+3K unseen.
    counts = rules.deck_counts
    for c in range(_K):
        b.add("own_hand", 9 + c)
        b.add(_UNSEEN.get(c, "unseen_other"), 11 + 3 * _K + c)
        if c in _KIND:
            b.add(f"own_{_KIND[c]}", 9 + c)
            b.add(f"foe_{_KIND[c]}", 9 + _K, counts[c] / sum(counts))  # proxy: a hidden hand
    for k, name in enumerate(SHARED_FEATURES[:4]):
        b.add(name, k)
    for k, name in enumerate(("pending_force", "pending_ultimate", "pending_responses")):
        b.add(name, target + n_units + 1 + k)
    rounds = rules.game.battle_rounds
    for name, k, coefficient in (
        ("round", 5, rounds), ("round_fraction", 5, 1), ("phases_left", 6, -2 * rounds),
        ("phases_left_fraction", 6, -1), ("own_phase", 4, 1), ("own_move", 8, 1),
        ("passes", 7, 1), ("foe_hand", 9 + _K, 1), ("deck", 10 + _K, 1), ("pending", pending, 1),
    ):  # fmt: skip
        b.add(name, k, coefficient)
    for name, value in (
        ("phases_left", 2 * rounds), ("phases_left_fraction", 1), ("rounds", rounds),
        ("flux_dice", rules.settings.warp_flux_dice),
    ):  # fmt: skip
        b.constant(name, value)
    return b.build()


__all__ = ["FEATURES", "SHARED_FEATURES", "SIDE_FEATURES", "board_features", "power_worth"]
