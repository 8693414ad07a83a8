"""Loose but sound score bounds of a 7th-edition scenario (``game_info``'s utilities).

The score (7E-8.2) moves in three ways only, and each has a bound from the scenario alone:

- **Wounds.** A unit's wounds fall (attacks, Perils, Dragged into the Warp) and rise only by a
  heal (Life Leech), never above the unit's full pool; each wound lost moves the score by the
  unit's value per wound one way, each wound healed the other (the rules' ``_wound`` takes at
  most the wounds left, ``_heal`` stops at the full pool). So whatever the heals, a unit's net
  share is ``(pool - wounds left) x value per wound`` with ``0 <= wounds left <= pool``: heals
  cannot loosen the bound, they only give back what was taken.
- **Manifested values** (blessings, maledictions, conjurations, 7E-7.1). One cast attempt
  manifests at most one power, scored once; a blessing cast again in a later phase (its copy
  ended, 7E-7.2) is another attempt. So each attempt scores at most the largest ``value``.
- **Warp Surge** (7E-6.6). Perils is one roll per attempt however many 6s (7E-6), so each
  attempt scores at most one ``warp_surge_value``.

Values and surges go to the caster's side, and only the active side casts (the other denies,
7E-5), so a side scores them in its own phases only. Its attempts in one phase are at most its
largest pool, ``D6 + ML of its psykers + pool_bonus <= 6 + ML + bonus`` (7E-3.1; every attempt
spends at least one die, 7E-4.1, and a pool never grows mid-phase, 7E-3.2 and 7E-6.3), and at
most the (psyker, power) pairs it can hold (each pair once a phase, 7E-4.2; Mental Purge only
takes powers away, 7E-6.2). A psyker holds at most its fixed powers and Force (7E-2.4), plus,
when it generates powers, its ML rolls (each one power, swapped or not, 7E-2.1 and 7E-2.2) and
one Primaris from Psychic Focus (7E-2.3). The phases a side has are every other one of the
game's phases (7E-8.1), the first player's first.

Loose by design: in seeded play the shipped duel's scores stay within about a fifth of its
bounds (-137 to 138). On single-phase the bounds (-4 to 6) are reached (a dead Librarian; a
dead Sorcerer and two Warp Surges), far below a tampered 100 (``tests/test_seventh_bounds.py``).
"""

from __future__ import annotations

from psygym.editions.seventh.facts import SeventhFacts

FLOAT_MARGIN = 1e-9
"""Relative room added to each bound, so that float sums in another order never step over it."""


def held_powers_most(facts: SeventhFacts, unit: int) -> int:
    """The most powers psyker ``unit`` can hold at once (7E-2.1 to 7E-2.4); 0 for no psyker."""
    psy = facts.specs[unit].psyker
    if psy is None:
        return 0
    fixed = set(psy.powers) | ({"Force"} if psy.force_weapon else set())
    generated = psy.mastery + 1 if facts.scenario.game.generate_powers and psy.disciplines else 0
    return min(len(facts.powers), len(fixed) + generated)


def attempts_most(facts: SeventhFacts) -> tuple[int, int]:
    """The most cast attempts each side can make in a whole game (7E-3.1, 7E-4.1, 7E-4.2)."""
    first = facts.scenario.game.first_player
    phases = [0, 0]
    for k in range(facts.total_phases):
        phases[first if k % 2 == 0 else 1 - first] += 1
    out = []
    for side in (0, 1):
        units = facts.side_units[side]
        pool = 6 + sum(facts.mastery[i] for i in units) + facts.scenario.sides[side].pool_bonus
        pairs = sum(held_powers_most(facts, i) for i in units)
        out.append(phases[side] * min(pool, pairs))
    return out[0], out[1]


def utility_bounds(facts: SeventhFacts) -> tuple[float, float]:
    """Seat 0's lowest and highest possible score (7E-8.2), as the module docstring argues."""
    values = [p.effect.value for p in facts.powers if p.effect.value is not None]
    surge = facts.scenario.game.warp_surge_value
    # What one attempt can add to its caster's side, and take from it (values are never below 0
    # in a valid scenario, so the second is 0 there).
    gain = max([0.0, *values]) + max(0.0, surge)
    loss = max([0.0, *(-v for v in values)]) + max(0.0, -surge)
    attempts = attempts_most(facts)

    def most(side: int) -> float:
        wounds = 0.0
        for u, vpw in enumerate(s.value_per_wound for s in facts.specs):
            enemy = facts.owner[u] != side
            wounds += facts.max_wounds[u] * max(0.0, vpw if enemy else -vpw)
        total = wounds + attempts[side] * gain + attempts[1 - side] * loss
        return total + FLOAT_MARGIN * max(1.0, total)

    return -most(1), most(0)
