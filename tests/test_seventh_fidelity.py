"""7th edition rules-fidelity changes, scripted with forced chance outcomes.

Instant Death, no damage spill, advancing units and ranges, fixed powers beside disciplines,
novas per target unit, Warp Surge on the whole unit, labelled data defaults, and every power of
the shipped duel cast in random games. Rule ids refer to ``shared/rules/seventh.md``; the
defaults are listed in the docstring of ``psygym/editions/seventh/rules.py``.
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

import numpy as np
import pytest
from helpers import (
    act,
    choose,
    exact_outcomes,
    force,
    force_ev,
    psyker7,
    rules_from,
    scenario7,
    unit7,
)

import psygym
from psygym.dice import binomial, distribution, mean
from psygym.editions.seventh import SCENARIO_DIR
from psygym.editions.seventh import rules as rules_module
from psygym.editions.seventh.rules import allocate_wounds, plan_positions
from psygym.editions.seventh.spec import load_powers
from psygym.editions.seventh.state import Cast, Stage
from psygym.kernel import evolve
from psygym.scenario import ScenarioError, read_toml

F = Fraction


def farseer(**fields) -> dict:
    """The duel's Farseer: T3, 3 wounds, no armour, 4++ (a psyker, so the Eldar can deny)."""
    return unit7(
        "Farseer",
        (0, 16),
        wounds=3,
        toughness=3,
        save=7,
        invulnerable=4,
        leadership=10,
        psyker=psyker7(2, powers=["Foreboding"]),
        **fields,
    )


def librarian(powers, position=(0, 0), **fields) -> dict:
    return unit7(
        "Lib",
        position,
        wounds=2,
        toughness=4,
        save=3,
        leadership=10,
        ballistic_skill=5,
        psyker=psyker7(2, powers=powers),
        **fields,
    )


def to_effect(rules, label: str, successes: int = 1):
    """Warp charge roll 4, cast ``label`` with 2 dice, ``successes`` successes, no deny."""
    s = force(rules, rules.initial_state(), 4)
    assert s.stage == Stage.SELECT
    s = choose(rules, s, label)
    s = act(rules, s, rules.DICE + 1)
    assert s.stage == Stage.CAST_ROLL and s.cast.dice == 2
    s = force(rules, s, 2 * successes)
    assert s.stage == Stage.DENY
    s = act(rules, s, rules.DENY)
    assert s.stage == Stage.EFFECT
    return s


# ----------------------------------------------------------------------------- Instant Death
@pytest.mark.parametrize("instant,lost", [(True, 3), (False, 1)])
def test_instant_death_assail_removes_the_farseer_outright(instant, lost):
    """S6 v T3 (S >= 2T): one unsaved wound removes the 3-wound model (setting on by default)."""
    game = {} if instant else {"instant_death": False}
    rules = rules_from(scenario7([librarian(["Assail"])], [farseer()], **game))
    assert rules.instant_death is instant
    s = to_effect(rules, "Lib: Assail (WC 1) at Farseer")
    # 1 hit, auto, wounds on 2+, no armour (7+), 4++: p = 5/6 * 1/2 = 5/12
    assert exact_outcomes(rules, s) == {0: F(7, 12), lost: F(5, 12)}
    s, ev = force_ev(rules, s, lost)
    assert s.units[1].wounds == 3 - lost
    assert s.score == lost  # value per wound 1
    assert [e.get("amount") for e in ev if e.kind == "wounds"] == [lost]


def test_instant_death_needs_twice_the_toughness_and_several_wounds():
    """Smite (S4 v T3) never kills outright; a 1-wound model is unaffected either way."""
    rules = rules_from(scenario7([librarian(["Smite"])], [farseer()]))
    s = to_effect(rules, "Lib: Smite (WC 1) at Farseer")
    # 4 hits, BS5 2+, S4 v T3 3+, AP2 v no save, 4++: p = 5/6 * 2/3 * 1/2 = 5/18, wounds one each
    expect = {min(k, 3): F(0) for k in range(5)}
    for k, p in binomial(4, F(5, 18)).items():
        expect[min(k, 3)] += p
    assert exact_outcomes(rules, s) == expect
    single = rules_from(
        scenario7(
            [librarian(["Assail"])], [unit7("Guardians", (0, 16), models=5, toughness=3, save=5)]
        )
    )
    s = to_effect(single, "Lib: Assail (WC 1) at Guardians")
    # 1-wound models: S6 v T3 2+, AP none so the 5+ armour save: p = 5/6 * 2/3, one wound
    assert exact_outcomes(single, s) == {0: F(4, 9), 1: F(5, 9)}


def test_instant_death_on_the_shipped_duel_farseer_matches_the_audit():
    """Expected wounds on the duel's Farseer rise x3.0 (Assail), x2.5 (Life Leech, Crush)."""
    on = psygym.load("7th", "duel")
    data = read_toml(str(SCENARIO_DIR / "duel.toml"))
    data["game"]["instant_death"] = False
    off = rules_from(data)
    ratios = {}
    for name in ("Assail", "Life Leech", "Crush"):
        means = []
        for r in (on, off):
            lib, far = r.names.index("Librarian"), r.names.index("Farseer")
            probe = evolve(r.initial_state(), cast=Cast(lib, r.power_index[name], far))
            means.append(mean(r.effect_distribution(probe, far)))
        ratios[name] = float(means[0] / means[1])
    assert ratios["Assail"] == pytest.approx(3.0)
    assert ratios["Life Leech"] == pytest.approx(2.5, abs=0.03)
    assert ratios["Crush"] == pytest.approx(2.5, abs=0.04)


# ----------------------------------------------------------------------------- wound allocation
def test_allocate_wounds_model_by_model_without_spill():
    """A D3-damage wound takes at most what the model hit has left (as 8th's excess damage)."""
    d3 = tuple(sorted(distribution("D3").items()))
    assert allocate_wounds(4, 2, 1, d3, False) == ((1, F(1, 3)), (2, F(2, 3)))
    assert allocate_wounds(3, 2, 1, d3, False) == ((1, F(1)),)  # the wounded model first
    assert allocate_wounds(4, 2, 2, ((1, F(1)),), False) == ((2, F(1)),)  # 1 damage: one for one
    # Instant Death: each unsaved wound removes the model it hits, the wounded one first
    assert allocate_wounds(5, 3, 2, ((1, F(1)),), True) == ((5, F(1)),)
    assert allocate_wounds(5, 3, 3, ((1, F(1)),), True) == ((5, F(1)),)  # nothing left to lose


def test_vortex_of_doom_damage_does_not_spill_into_the_next_model():
    rules = rules_from(
        scenario7(
            [
                unit7(
                    "Paladin",
                    wounds=2,
                    leadership=9,
                    ballistic_skill=5,
                    psyker=psyker7(2, powers=["Vortex of Doom"], grey_knight=True),
                )
            ],
            [unit7("Wraiths", (0, 10), models=2, wounds=3, toughness=6, save=3)],
        )
    )
    s = force(rules, rules.initial_state(), 4)
    s = choose(rules, s, "Paladin: Vortex of Doom (WC 3) at Wraiths")
    s = act(rules, s, rules.DICE + 3)
    s = act(rules, force(rules, s, 2 * 3), rules.DENY)
    assert s.stage == Stage.EFFECT
    # blast: 2 hits, BS5 2+, S10 v T6 2+, AP1 beats 3+: p = 25/36; D3 per wound, no spill,
    # S10 < 2 x T6 so no Instant Death
    p = F(25, 36)
    d3 = tuple(sorted(distribution("D3").items()))
    expect: dict[int, Fraction] = {}
    for k, pk in binomial(2, p).items():
        for w, pw in allocate_wounds(6, 3, k, d3, False):
            expect[w] = expect.get(w, F(0)) + pk * pw
    assert exact_outcomes(rules, s) == expect
    assert max(expect) == 6 and F(0) not in expect.values()


# ----------------------------------------------------------------------------- movement, ranges
def test_plan_positions_advance_and_stop_one_inch_short():
    pos = plan_positions([(0, 0), (0, 10)], [4, 0], (0, 1), 5)
    assert [p[0] for p in pos] == [(0, 0), (0, 4), (0, 8), (0, 9), (0, 9)]
    assert all(p[1] == (0.0, 10.0) for p in pos)
    both = plan_positions([(0, 0), (0, 10)], [4, 4], (0, 1), 3)
    # units move in index order: the second sees the first where it already stands
    assert both[1] == ((0, 4), (0, 6)) and both[2] == ((0, 5), (0, 6))
    gap = [abs(b[1][1] - b[0][1]) for b in both]
    assert min(gap) >= 1


def test_advance_brings_a_power_into_range_in_a_later_round():
    """20" apart, the caster advances 3" a round: Smite (18") is out of range, then in range."""
    rules = rules_from(
        scenario7(
            [librarian(["Smite"], advance=3)],
            [unit7("Squad", (0, 20), models=5, toughness=4, save=3)],
            phases=3,
            rounds=2,
        )
    )
    s = rules.initial_state()
    assert rules.positions[0][0] == (0.0, 0.0) and rules.positions[1][0] == (0.0, 3.0)
    # Round 1: 20" away, nothing to cast, so the phase ends at once after the pool roll (7E-4.1)
    s = force(rules, s, 4)
    assert s.stage == Stage.PHASE_ROLL and s.phase == 2 and s.active == 0  # Squad: no psyker
    assert rules.round_of(s) == 1
    s = force(rules, s, 4)  # round 2: 17" away
    assert s.stage == Stage.SELECT
    assert [rules.describe(s, a).label for a in rules.legal_actions(s)][1:] == [
        "Lib: Smite (WC 1) at Squad"
    ]


@pytest.mark.parametrize("y,legal", [(18.0, True), (18.01, False)])
def test_range_is_centre_to_centre_and_inclusive(y, legal):
    rules = rules_from(scenario7([librarian(["Smite"])], [unit7("Squad", (0, y), models=5)]))
    s = force(rules, rules.initial_state(), 4)
    if legal:
        assert s.stage == Stage.SELECT and len(rules.legal_actions(s)) == 2
    else:  # nothing in range: the phase ends at once and the one-phase game is over
        assert s.stage == Stage.OVER


# ----------------------------------------------------------------------------- 7E-2 generation
def test_fixed_power_of_a_discipline_beside_disciplines_is_refused():
    data = scenario7(
        [unit7("Lib", psyker=psyker7(2, powers=["Smite"], disciplines=["Telepathy"]))],
        [unit7("Squad", (0, 10))],
        generate=True,
    )
    with pytest.raises(ScenarioError) as err:
        rules_from(data)
    assert "sides.0.units.0.psyker.powers.0" in str(err.value)
    assert "Biomancy" in str(err.value)


def test_fixed_power_of_no_discipline_does_not_count_toward_ml_or_break_focus():
    """7E-2.3/7E-2.4: Force (no discipline) listed as a fixed power: ML powers, focus kept."""
    rules = rules_from(
        scenario7(
            [unit7("Lib", psyker=psyker7(1, powers=["Force"], disciplines=["Telepathy"]))],
            [unit7("Squad", (0, 10))],
            generate=True,
        )
    )
    s = rules.initial_state()
    assert s.stage == Stage.GEN_ROLL
    s = force(rules, s, rules.power_index["Dominate"])
    assert s.stage == Stage.SWAP
    s = act(rules, s, rules.SWAP)  # keep Dominate
    known = {rules.powers[p].name for p in s.units[0].powers}
    assert known == {"Force", "Dominate", "Psychic Shriek"}  # Psychic Focus: the Primaris power


# ----------------------------------------------------------------------------- novas, Warp Surge
def test_nova_rolls_its_hits_once_per_target_unit():
    rules = rules_from(
        scenario7(
            [librarian(["Shockwave"])],
            [
                unit7("A", (0, 5), models=10, toughness=4, save=7),
                unit7("B", (3, 5), models=10, toughness=4, save=7),
            ],
        )
    )
    s = to_effect(rules, "Lib: Shockwave (WC 1)")
    assert s.targets == (1, 2)
    first = exact_outcomes(rules, s)
    # 2D6 hits, S4 v T4 4+, no save: each unit rolls its own 2D6
    expect: dict[int, Fraction] = {}
    for h, ph in distribution("2D6").items():
        for k, pk in binomial(h, F(1, 2)).items():
            expect[min(k, 10)] = expect.get(min(k, 10), F(0)) + ph * pk
    assert first == expect
    s = force(rules, s, 7)
    assert s.stage == Stage.EFFECT and s.targets == (2,) and s.units[1].wounds == 3
    assert exact_outcomes(rules, s) == expect  # a fresh roll, not the first unit's 7
    s = force(rules, s, 2)
    assert s.units[2].wounds == 8 and s.score == 9


def test_warp_surge_3_plus_covers_the_whole_unit():
    """7E-6.6: a surging psyker's unit of 5 models saves every wound on 3++."""
    target = unit7(
        "Brothers", (0, 10), models=5, toughness=4, save=3, psyker=psyker7(1, powers=["Smite"])
    )
    rules = rules_from(scenario7([librarian(["Assail"])], [target]))
    s = to_effect(rules, "Lib: Assail (WC 1) at Brothers")
    # S6 v T4 2+, AP none: the 3+ armour save: p = 5/6 * 1/3
    assert exact_outcomes(rules, s) == {0: F(13, 18), 1: F(5, 18)}
    # 3++ and 3+ armour: the same 3+, so the surge changes nothing here; lower the armour
    weak = rules_from(scenario7([librarian(["Assail"])], [{**target, "save": 6}]))
    s = to_effect(weak, "Lib: Assail (WC 1) at Brothers")
    assert exact_outcomes(weak, s) == {0: F(11, 36), 1: F(25, 36)}
    surged = s.with_unit(1, surge=True)
    assert weak.effect_distribution(surged, 1) == {0: F(13, 18), 1: F(5, 18)}


# ----------------------------------------------------------------------------- data defaults
def test_data_with_no_source_is_labelled_default_and_listed():
    labelled = {p.name for p in load_powers().power if p.default}
    assert labelled == {
        "Gate of Infinity",
        "Sanctuary",
        "Cursed Earth",
        "Sacrifice",
        "Dark Flame",
        "Incursion",
        "Possession",
        "Flame Breath",
    }
    doc = rules_module.__doc__
    for name in labelled:
        assert name in doc.replace("\n", " ")
    assert '8" range of the template powers' in doc.replace("\n", " ")
    templates = {
        p.name
        for p in load_powers().power
        if p.effect.attack and p.effect.attack.hits == "template"
    }
    assert templates <= labelled


# ----------------------------------------------------------------------------- shipped duel
def generable_powers(rules) -> set[int]:
    """Every power a psyker of ``rules`` can come to know (fixed, Force, disciplines)."""
    out: set[int] = set()
    for u in range(len(rules.specs)):
        psy = rules.specs[u].psyker
        if psy is None:
            continue
        out |= {rules.power_index[n] for n in psy.powers}
        if psy.force_weapon:
            out.add(rules.power_index["Force"])
        for d in psy.disciplines:
            out |= set(rules.numbered[d]) | {rules.primaris[d]}
    return out


def cast_counts(games: int, seed: int) -> Counter:
    rules = psygym.load("7th", "duel")
    rng = np.random.default_rng(seed)
    counts: Counter = Counter()
    for _ in range(games):
        s = rules.initial_state()
        while s.stage != Stage.OVER:
            if s.stage == Stage.CAST_ROLL:
                counts[rules.powers[s.cast.power].name] += 1
            if rules.current_player(s) < 0:
                a = rules.sample_chance(s, rng)
            else:
                legal = rules.legal_actions(s)
                a = legal[int(rng.integers(len(legal)))]
            s = rules.apply(s, a)
    return counts


def test_every_generable_duel_power_comes_into_range():
    rules = psygym.load("7th", "duel")
    names = {rules.powers[p].name for p in generable_powers(rules)}
    assert {"Flame Breath", "Sunburst", "Molten Beam", "Shockwave", "Psychic Maelstrom"} <= names
    for p in generable_powers(rules):
        power = rules.powers[p]
        casters = [
            u
            for u in range(len(rules.specs))
            if rules.specs[u].psyker is not None
            and (
                power.discipline in rules.specs[u].psyker.disciplines
                or power.name in rules.specs[u].psyker.powers
                or (power.name == "Force" and rules.specs[u].psyker.force_weapon)
            )
        ]
        ok = False
        for rnd in range(len(rules.positions)):
            for c in casters:
                if power.target == "enemies":
                    ok |= any(
                        rules._in_range(c, t, power.range, rnd)
                        for t in rules.side_units[1 - rules.owner[c]]
                    )
                else:
                    ok |= bool(rules.candidates_by_round[rnd][(c, p)])
        assert ok, power.name


def test_every_generable_duel_power_is_cast_in_2000_random_games():
    """Random-legal play; about 8 s on this machine, so it always runs (no ``slow`` mark)."""
    rules = psygym.load("7th", "duel")
    counts = cast_counts(2000, 0)
    missing = {rules.powers[p].name for p in generable_powers(rules)} - set(counts)
    assert not missing
