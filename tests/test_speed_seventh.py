"""The 7th edition's env-speed paths give exactly the answers of plain computations (no timing).

The env's walk (a decision and the chance nodes after it in one draft), the events kept per key,
the casting choices derived from the last answer, the per-scenario tables behind casting
choices, deny thresholds and observations, the masks kept per legal set and the one initial
state are each checked against a computation from scratch written here from the rules text
(shared/rules/seventh.md 7E-4.1, 7E-5.2, 7E-7.1, 7E-7.2), along seeded random games of every
shipped scenario and of ``test_seventh_fast_paths``'s zoo (novas, blessings, several deniers).
"""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
from test_seventh_contract import reference_observation
from test_seventh_fast_paths import SCENARIOS, make, random_walk

from psygym.core import CHANCE, RulesBase
from psygym.editions import load
from psygym.editions.seventh.state import Stage
from psygym.kernel import evolve


def _events(events):
    return [(e.kind, e.text, e.player, e.data) for e in events]


# ----------------------------------------------------------------------------- plain references
def plain_casts(rules, s) -> list[int]:
    """Choose-cast actions of the active player, from the rules text (7E-4.1, 7E-7.1, 7E-7.2)."""
    rnd = rules.round_of(s)
    in_force = {(p, t) for p, t, _ in s.effects}
    out = []
    for c, u in enumerate(s.units):
        if rules.owner[c] != s.active or not u.psyker or u.wounds <= 0:
            continue
        for p in u.powers:
            if (c, p) in s.attempted:
                continue
            power = rules.powers[p]
            if power.target == "enemies" and not rules.nova_targets(s, c, power):
                continue
            for t in rules.candidates_by_round[rnd][(c, p)]:
                if s.units[t].wounds <= 0:
                    continue
                if power.effect.value is not None and (p, t) in in_force:
                    continue
                out.append(rules.actions.cast(c, p, t))
    return sorted(out)


def plain_deny(rules, s, cast) -> tuple[int | None, int]:
    """The denying unit and its roll (7E-5.2): +1 a living psyker, +1 higher ML, +1 Adamantium."""
    power = rules.powers[cast.power]
    if power.target == "enemy":
        units = [cast.target]
    elif power.target == "enemies":
        units = list(rules.nova_targets(s, cast.caster, power))
    else:
        return None, 6
    best: tuple[int | None, int] = (None, 6)
    for t in units:
        mods = 0
        spec, u = rules.specs[t], s.units[t]
        if u.psyker and u.wounds > 0:
            mods += 1 + (rules.mastery[t] > rules.mastery[cast.caster])
            mods += bool(spec.psyker is not None and spec.psyker.adamantium_will)
        if best[0] is None or 6 - mods < best[1]:
            best = (t, 6 - mods)
    return best


# ----------------------------------------------------------------------------- the checks
@pytest.mark.parametrize("name", SCENARIOS)
def test_casting_choices_match_the_rules_text(name):
    """Every casting choice, and choices derived from the last answer, equal a fresh count.

    After one more (psyker, power) is attempted with nothing else changed (a failed or denied
    cast), the choices are the last ones without that pair's: no fresh count is made.
    """
    rules = make(name)
    counted = []
    count = rules._compute_legal_casts
    rules._compute_legal_casts = lambda s, rnd: counted.append(1) or count(s, rnd)
    selects = derived = 0
    for s, _ in random_walk(rules, games=25, seed=21):
        if s.stage != Stage.SELECT:
            continue
        selects += 1
        legal = rules.legal_actions(s)
        assert legal == [0, *plain_casts(rules, s)]
        if len(legal) < 2:
            continue
        # The same state with the first choice's (psyker, power) attempted as well.
        pair = rules._cast_pair[legal[1]]
        after = evolve(s, attempted=s.attempted | {pair})
        before = len(counted)
        assert rules.legal_actions(after) == [0, *plain_casts(rules, after)]
        derived += len(counted) == before
    assert selects > 30 and derived > 15


@pytest.mark.parametrize("name", SCENARIOS)
def test_deny_thresholds_and_observations_match_plain_computations(name):
    rules = make(name)
    casts = 0
    for s, _ in random_walk(rules, games=12, seed=8):
        if s.cast is not None:
            casts += 1
            assert rules.deny_unit_and_threshold(s, s.cast) == plain_deny(rules, s, s.cast)
        for player in (0, 1):
            assert (
                rules.observe(s, player).tobytes()
                == reference_observation(rules, s, player).tobytes()
            )
    assert casts > 20


@pytest.mark.parametrize("name", SCENARIOS)
def test_kept_events_equal_events_built_afresh(name):
    """Events kept per key are the ones a rules object with nothing kept builds."""
    rules, fresh = make(name), make(name)
    kinds = set()
    for s, a in random_walk(rules, games=15, seed=13):
        _, events = rules.apply_with_events(s, a)
        fresh._event_memo.clear()
        _, built = fresh.apply_with_events(s, a)
        assert _events(events) == _events(built)
        kinds.update(e.kind for e in events)
    assert {"attempt", "deny_attempt", "denied", "wounds", "manifest"} <= kinds


@pytest.mark.parametrize("name", SCENARIOS)
def test_masks_follow_the_legal_actions_at_every_decision(name):
    rules = make(name)
    stages = set()
    for s, _ in random_walk(rules, games=10, seed=2):
        if rules.current_player(s) not in (0, 1):
            assert not rules.legal_mask(s).any()
            continue
        stages.add(s.stage)
        mask = rules.legal_mask(s)
        assert list(np.flatnonzero(mask)) == rules.legal_actions(s)
        mask[:] = True  # the caller's own array: what is kept is untouched
        assert list(np.flatnonzero(rules.legal_mask(s))) == rules.legal_actions(s)
        assert list(np.flatnonzero(RulesBase.legal_mask(rules, s))) == rules.legal_actions(s)
    assert {Stage.SELECT, Stage.DICE, Stage.DENY} <= stages


def test_every_game_starts_from_one_initial_state():
    rules = load("7th", "duel")
    first = rules.initial_state()
    assert rules.initial_state() is first
    built = rules._build_initial_state()
    assert built == first and hash(built) == hash(first) and repr(built) == repr(first)


def test_a_replaced_hook_on_the_instance_takes_the_generic_walk():
    """``apply_with_chance`` serves the one-draft walk only while nothing it uses is replaced."""
    rules = load("7th", "duel")
    s = rules.initial_state()
    rng = np.random.default_rng(0)
    while rules.current_player(s) == CHANCE:
        s = rules.apply(s, rules.sample_chance(s, rng))
    asked = []
    plain = rules.sample_chance

    def counting(state, generator):
        asked.append(state.stage)
        return plain(state, generator)

    rules.sample_chance = counting
    a = rules.legal_actions(s)[0]
    walked = rules.apply_with_chance(s, a, np.random.default_rng(4), [])
    del rules.sample_chance
    fast = rules.apply_with_chance(s, a, np.random.default_rng(4), [])
    assert asked and walked == fast and repr(walked) == repr(fast)


def test_rules_with_their_kept_answers_still_pickle_and_copy():
    """What is kept (tables, masks, events, the observer's vectors) pickles with the rules."""
    rules = load("7th", "duel")
    steps = list(random_walk(rules, games=2, seed=3))
    for clone in (pickle.loads(pickle.dumps(rules)), copy.deepcopy(rules)):
        for s, a in steps:
            assert clone.legal_actions(s) == rules.legal_actions(s)
            assert clone.observe(s, 0).tobytes() == rules.observe(s, 0).tobytes()
            assert clone.apply_with_events(s, a) == rules.apply_with_events(s, a)
