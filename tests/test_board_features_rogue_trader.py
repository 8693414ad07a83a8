"""Rogue Trader board features: names, exact values from the scenario and played states.

Expected numbers come from the scenario's spec (``rules.scenario.sides[k].units[i]``), the
state's unit fields and the rules text (rules/rogue-trader.md RT-1.1 typical psi-levels, RT-3.1
psychic saves, RT-4.1/RT-4.2 mental attacks and the to-wound chart), not from the observation.
"""

from __future__ import annotations

import tomllib
from fractions import Fraction
from itertools import product

import numpy as np
import pytest
from psygym_agents.rogue_trader.board_features import (
    FEATURES,
    MONOTONE,
    ability_worths,
    board_features,
)
from psygym_agents.value import features as value_features

from psygym.core import CHANCE, TERMINAL
from psygym.editions import load
from psygym.editions.rogue_trader import rules_from_data
from psygym.editions.rogue_trader.abilities import DATA_DIR
from psygym.editions.rogue_trader.actions import REST
from psygym.editions.rogue_trader.state import Phase

EDITION = "rt"
SCENARIOS = ["duel", "psyker-vs-squad", "random:3", "random:11,psykers=3", "random:7,psykers=2"]
DATA_ABILITIES = tomllib.loads((DATA_DIR / "abilities.toml").read_text())["abilities"]
"""The ability data file, read directly (costs)."""
KINDS = {Phase.CHOOSE: "choose", Phase.TARGET: "target", Phase.AMOUNT: "amount",
         Phase.ATTACK_BID: "attack_bid", Phase.SAVE_BID: "save_bid"}  # fmt: skip

DRAWN = {  # one psyker whose abilities are drawn at random (RT-1.1, RT-1.3)
    "edition": "rt",
    "name": "drawn",
    "game": {"turns": 2, "ability_count": "random"},
    "sides": [
        {"name": "A", "units": [
            {"name": "Seer", "wounds": 2, "position": [0.0, 0.0], "mastery": 1,
             "intelligence": 2, "psi_level": 8, "abilities": "random"},
        ]},
        {"name": "B", "units": [
            {"name": "Grunts", "models": 3, "wounds": 1, "position": [6.0, 0.0]},
            {"name": "Witch", "wounds": 2, "position": [5.0, 1.0], "mastery": 1,
             "abilities": ["Mental Blow"]},
        ]},
    ],
}  # fmt: skip


def _rules(name: str):
    return rules_from_data(DRAWN, "<drawn>") if name == "drawn" else load(EDITION, name)


def _phi(rules, state) -> dict[str, float]:
    return dict(zip(FEATURES, board_features(rules)(rules.observe(state, 0)), strict=True))


def _units(rules):
    """``(side, spec)`` of every unit, in scenario order (side 0's units first)."""
    return [(k, u) for k, side in enumerate(rules.scenario.sides) for u in side.units]


def _two_d6(n: int) -> Fraction:
    """P(2D6 <= n), counted (RT-2.3, RT-3.1)."""
    return Fraction(sum(a + b <= n for a, b in product(range(1, 7), repeat=2)), 36)


def _p2d6(n: int) -> float:
    return float(_two_d6(n))


def _to_wound(strength: int, toughness: int) -> Fraction:
    """The RT chart (RT-4.2)."""
    need = {2: 2, 1: 3, 0: 4, -1: 5, -2: 6}.get(max(-3, min(2, strength - toughness)))
    return Fraction(0) if need is None else Fraction(7 - need, 6)


def _mental(wp: int, strength: int, toughness: int, die: int, cap: int, vpw: float) -> float:
    """Expected score of a mental attack that works, no bids (RT-3.1, RT-4.1)."""
    wounds = Fraction(sum(min(d, cap) for d in range(1, die + 1)), die)  # capped at the model
    return float((1 - _two_d6(wp)) * _to_wound(strength, toughness) * wounds) * vpw


def _cost(name: str) -> int:
    return next(a["cost"] for a in DATA_ABILITIES if a["name"] == name)


def _play(rules, state, picks):
    """Apply ``picks`` (actions or chance outcomes) one after the other."""
    for a in picks:
        state = rules.apply(state, a)
    return state


def _at_decision(rules, state, rng):
    while rules.current_player(state) == CHANCE:
        outcomes, probs = zip(*rules.chance_outcomes(state), strict=True)
        state = rules.apply(state, int(rng.choice(outcomes, p=np.array(probs) / sum(probs))))
    return state


# ----------------------------------------------------------------------------- the map
@pytest.mark.parametrize("name", [*SCENARIOS, "drawn"])
def test_names_and_shape(name):
    rules = _rules(name)
    bf = board_features(rules)
    assert bf.names == FEATURES
    assert len(set(FEATURES)) == len(FEATURES)
    assert bf.matrix.shape == (rules.observation_size, len(FEATURES))
    assert np.isfinite(bf.matrix).all() and np.isfinite(bf.offset).all()


def test_the_manifest_tool_finds_it():
    rules = load(EDITION, "duel")
    assert value_features.features_tool(EDITION) is board_features
    bf = value_features.board_features(rules)
    assert bf is not None and bf.names == FEATURES
    assert np.array_equal(bf.matrix, board_features(rules).matrix)


# ----------------------------------------------------------------------------- the start
@pytest.mark.parametrize("name", SCENARIOS)
def test_initial_state_from_the_spec(name):
    rules = load(EDITION, name)
    phi = _phi(rules, rules.initial_state())
    game = rules.scenario.game
    for k, side in enumerate(("own", "foe")):
        units = [u for s, u in _units(rules) if s == k]
        points = sum(u.wounds * u.models * float(u.value_per_wound) for u in units)
        psykers = [u for u in units if u.mastery > 0]
        levels = [u.psi_level if u.psi_level is not None else 10 * u.mastery for u in psykers]
        left = [
            lv if u.psi_points is None else min(lv, u.psi_points)
            for u, lv in zip(psykers, levels, strict=True)
        ]
        assert phi[f"{side}_points"] == pytest.approx(points)
        assert phi[f"{side}_full_points"] == pytest.approx(points)
        assert phi[f"{side}_units"] == pytest.approx(len(units))
        assert phi[f"{side}_psykers"] == pytest.approx(len(psykers))
        assert phi[f"{side}_mastery"] == pytest.approx(sum(u.mastery for u in psykers))
        assert phi[f"{side}_psi_level"] == pytest.approx(sum(levels))
        assert phi[f"{side}_psi_points"] == pytest.approx(sum(left))
        assert phi[f"{side}_no_test"] == pytest.approx(sum(p >= game.no_test_at for p in left))
        assert phi[f"{side}_saves"] == pytest.approx(sum(_p2d6(u.will_power) for u in units))
        assert phi[f"{side}_reach"] == pytest.approx(phi[f"{side}_known"])
        for quiet in ("removed_points", "resting", "auras", "strength_of_mind", "stolen_turns",
                      "confused", "afraid"):  # fmt: skip
            assert phi[f"{side}_{quiet}"] == 0.0
    assert phi["kind_choose"] == 1.0
    assert phi["own_turn"] == phi["own_move"] == float(game.first_player == 0)
    assert phi["use_own"] == float(game.first_player == 0)  # the first psyker to choose
    assert (phi["turns"], phi["turns_left"], phi["turns_played"]) == (game.turns, game.turns, 0)
    assert (phi["turns_left_fraction"], phi["turn_fraction"]) == (1.0, 0.0)
    assert phi["use_worth"] == phi["use_cost"] == phi["use_bid"] == phi["use_amount"] == 0.0


def test_duel_ability_worths_by_hand():
    """Mental attacks at the start, by RT-3.1, RT-4.1 and RT-4.2 (vpw 1, full wounds)."""
    rules = load(EDITION, "duel")
    worth, idx = ability_worths(rules), rules.data.index
    # The Librarian at the Warlock (T3, WP9, 2 wounds), the Warlock at the Librarian (T4, WP8, 3).
    assert worth[0][idx["Mental Blow"]] == pytest.approx(_mental(9, 3, 3, 3, 2, 1.0))
    assert worth[0][idx["Mental Bolt"]] == pytest.approx(_mental(9, 4, 3, 4, 2, 1.0))
    assert worth[1][idx["Mental Bolt"]] == pytest.approx(_mental(8, 4, 4, 4, 3, 1.0))
    assert worth[0][idx["Cure Injury"]] == pytest.approx(1.0)  # one wound back, works (RT-4.6)
    phi = _phi(rules, rules.initial_state())
    assert phi["own_known"] == pytest.approx(sum(worth[0].values()))
    assert phi["foe_known"] == pytest.approx(sum(worth[1].values()))


# ----------------------------------------------------------------------------- played states
def _expect(phi: dict[str, float], **values: float) -> None:
    """Each named feature equals its value (the observation is float32)."""
    got = {k: phi[k] for k in values}
    assert got == pytest.approx(values, abs=1e-5)


def test_duel_mental_bolt_scripted():
    """The Librarian's Mental Bolt: cost, bids, then one wound on the Warlock (RT-2.4, RT-3)."""
    rules = load(EDITION, "duel")
    nb = rules.number_base
    cost = _cost("Mental Bolt")
    bid = _play(
        rules, rules.initial_state(), [rules.actions.ability(rules.data.index["Mental Bolt"])]
    )
    _expect(
        _phi(rules, bid), kind_attack_bid=1, kind_choose=0, use_own=1, own_psi_points=12 - cost,
        own_no_test=0, use_cost=cost, use_target_points=2, use_target_own=0,
        use_target_save=_p2d6(9), use_worth=_mental(8, 4, 4, 4, 3, 1.0),  # the Warlock's best
    )  # fmt: skip
    save = _play(rules, bid, [nb + 2])  # enhanced attack: 2 points
    _expect(_phi(rules, save), kind_save_bid=1, own_move=0, own_turn=1, use_bid=2)
    resolve = _play(rules, save, [nb + 1])  # augmented save: 1 point
    assert rules.current_player(resolve) == CHANCE
    before = _phi(rules, resolve)
    _expect(before, kind_none=1, own_psi_points=12 - cost - 2, foe_psi_points=11, use_bid=0)
    after = _phi(rules, _play(rules, resolve, [2]))  # outcome 1 + w: one wound
    assert before["foe_points"] - after["foe_points"] == pytest.approx(1 * 1.0)  # w x vpw
    _expect(
        after, own_points=3, foe_points=1, foe_full_points=2, foe_units=1, kind_choose=1,
        own_turn=0, own_move=0, use_own=0, use_worth=0, turns_played=1, turns_left=5,
        turns_left_fraction=5 / 6, turn_fraction=1 / 6,
    )  # fmt: skip


def test_rout_removes_points_already_scored():
    """Rout on the Ork Boyz: out of the fight, its wounds scored at once (RT-4.5)."""
    rules = load(EDITION, "psyker-vs-squad")
    rout = rules.actions.ability(rules.data.index["Rout"])
    s = _play(rules, rules.initial_state(), [rout, rules.actions.target(1)])
    s = _play(rules, s, [rules.number_base])  # no enhanced attack; the Boyz cannot augment
    assert rules.current_player(s) == CHANCE
    s = _play(rules, s, [1])  # the Rout takes hold
    boyz = 5 * 1 * 1.0
    assert s.score == pytest.approx(boyz)
    _expect(
        _phi(rules, s), foe_removed_points=boyz, foe_points=7, foe_units=1, foe_psykers=1,
        own_psi_points=30 - _cost("Rout"), own_psykers=1,
    )  # fmt: skip


def test_steal_mind_counts_the_turns_lost():
    """The Warlock steals the Librarian's mind for 3 of its turns; one passes (RT-4.5)."""
    rules = load(EDITION, "duel")
    s = _play(rules, rules.initial_state(), [REST])  # the Librarian rests (RT-5)
    steal = rules.actions.ability(rules.data.index["Steal Mind"])
    s = _play(rules, s, [steal, rules.number_base, rules.number_base, 3])
    assert s.units[0].stolen == 2 and s.active == 1
    _expect(_phi(rules, s), own_stolen_turns=2, foe_stolen_turns=0, turns_played=3, own_turn=0)


SAGE = {  # Strength of Mind and an aura, then fear and confusion (RT-4.3, RT-4.5, RT-4.7)
    "edition": "rt",
    "name": "sage",
    "game": {"turns": 4, "abilities_per_turn": 2},
    "sides": [
        {"name": "A", "units": [
            {"name": "Sage", "wounds": 3, "will_power": 8, "position": [0.0, 0.0], "mastery": 4,
             "psi_level": 40, "abilities": ["Strength of Mind", "Aura of Protection",
                                            "Cause Fear", "Cause Confusion"]},
        ]},
        {"name": "B", "units": [
            {"name": "Grunts", "models": 2, "wounds": 1, "will_power": 6, "position": [20.0, 0.0],
             "value_per_wound": 2},
        ]},
    ],
}  # fmt: skip


def test_strength_of_mind_and_aura_defend():
    rules = rules_from_data(SAGE, "<sage>")
    index = rules.data.index
    start = _phi(rules, rules.initial_state())
    _expect(start, own_saves=_p2d6(8), foe_saves=_p2d6(6), foe_points=4, own_auras=0)
    moves = [rules.actions.ability(index[n]) for n in ("Strength of Mind", "Aura of Protection")]
    s = _play(rules, rules.initial_state(), moves)
    aura = next(a["aura"] for a in DATA_ABILITIES if a["name"] == "Aura of Protection")
    _expect(
        _phi(rules, s), own_strength_of_mind=1, own_saves=_p2d6(9), own_auras=aura,
        own_psi_points=40 - _cost("Strength of Mind") - _cost("Aura of Protection"),
        foe_saves=_p2d6(6), foe_afraid=0, foe_confused=0,
    )  # fmt: skip
    for name in ("Cause Fear", "Cause Confusion"):  # no bids, then the save fails
        s = _play(rules, s, [rules.actions.ability(index[name]), rules.number_base, 1])
    assert rules.current_player(s) == CHANCE and s.phase == Phase.RECOVER  # the Grunts' turn
    _expect(_phi(rules, s), foe_afraid=1, foe_confused=1, own_afraid=0, kind_none=1, own_turn=0)


MEDIC = {  # the Witch wounds the Medic, who heals by Cure Wounds with a test (RT-2.3, RT-4.6)
    "edition": "rt",
    "name": "medic",
    "game": {"turns": 4, "first_player": 1},
    "sides": [
        {"name": "A", "units": [
            {"name": "Medic", "wounds": 3, "will_power": 2, "position": [0.0, 0.0], "mastery": 4,
             "psi_level": 40, "psi_points": 11, "abilities": ["Cure Wounds"]},
        ]},
        {"name": "B", "units": [
            {"name": "Witch", "wounds": 2, "position": [5.0, 0.0], "mastery": 1,
             "abilities": ["Mental Blow"]},
        ]},
    ],
}  # fmt: skip


def test_cure_wounds_pending_amount():
    rules = rules_from_data(MEDIC, "<medic>")
    nb = rules.number_base
    blow = rules.actions.ability(rules.data.index["Mental Blow"])
    s = _play(rules, rules.initial_state(), [blow, 1, nb, nb, 2])  # works; no bids; a wound
    _expect(_phi(rules, s), own_points=2, own_full_points=3, kind_choose=1, own_turn=1)
    s = _play(rules, s, [rules.actions.ability(rules.data.index["Cure Wounds"])])
    assert s.phase == Phase.TEST and s.amount == 1  # one wound lost: the amount is forced
    cost = _cost("Cure Wounds")
    _expect(
        _phi(rules, s), kind_none=1, use_amount=1, use_cost=cost, use_own=1, use_target_own=1,
        use_target_points=3, use_target_save=_p2d6(2), use_worth=1.0, own_no_test=0,
    )  # fmt: skip
    _expect(_phi(rules, _play(rules, s, [1])), own_points=3, own_psi_points=11 - cost)


def _from_state(rules, s, worth) -> dict[str, float]:
    """The exactly linear side features, counted from the state's units and the spec."""
    out: dict[str, float] = {}
    units = _units(rules)
    for k, side in enumerate(("own", "foe")):
        rows = [(s.units[t], u) for t, (o, u) in enumerate(units) if o == k]
        psy = [(s.units[t], u, worth[t]) for t, (o, u) in enumerate(units) if o == k and u.mastery]
        vpw = [float(u.value_per_wound) for _, u in rows]
        out |= {
            f"{side}_points": sum(us.hp * v for (us, _), v in zip(rows, vpw, strict=True)),
            f"{side}_removed_points": sum(
                us.out * u.wounds * u.models * v for (us, u), v in zip(rows, vpw, strict=True)
            ),
            f"{side}_units": sum(us.hp > 0 and not us.out for us, _ in rows),
            f"{side}_psykers": sum(us.hp > 0 and not us.out for us, _, _ in psy),
            f"{side}_mastery": sum(u.mastery * us.fighting for us, u, _ in psy),
            f"{side}_psi_points": sum(us.points for us, _, _ in psy),
            f"{side}_psi_level": sum(us.level for us, _, _ in psy),
            f"{side}_no_test": sum(us.points >= rules.scenario.game.no_test_at for us, _, _ in psy),
            f"{side}_resting": sum(us.resting for us, _, _ in psy),
            f"{side}_known": sum(w[a] for us, _, w in psy for a in us.abilities),
            f"{side}_auras": sum(us.aura for us, _ in rows),
            f"{side}_strength_of_mind": sum(us.wp_bonus for us, _ in rows),
            f"{side}_stolen_turns": sum(us.stolen for us, _ in rows),
            f"{side}_confused": sum(us.confused for us, _ in rows),
            f"{side}_afraid": sum(us.afraid for us, _ in rows),
        }
        if all(u.abilities != "random" for _, u, _ in psy):  # known from the start
            out[f"{side}_reach"] = sum(
                us.fighting * sum(w[rules.data.index[a]] for a in u.abilities) for us, u, w in psy
            )
        if not any(us.wp_bonus and not us.fighting for us, _ in rows):  # the proxy is exact
            out[f"{side}_saves"] = sum(
                us.fighting * _p2d6(u.will_power + us.wp_bonus) for us, u in rows
            )
    turns = rules.scenario.game.turns
    seen_bid = s.phase == Phase.SAVE_BID and s.active == 0  # RT-3.4: only the attacker's
    out |= {"use_amount": s.amount, "use_bid": s.attack_bid if seen_bid else 0}
    out |= {"turns_played": s.turn, "turns_left": turns - s.turn, "own_turn": s.active == 0}
    kind = KINDS.get(s.phase, "none")
    out |= {f"kind_{k}": float(k == kind) for k in (*KINDS.values(), "none")}
    return out


@pytest.mark.parametrize("name", [*SCENARIOS, "drawn"])
def test_random_games_match_the_state(name):
    """Along seeded random games, every exactly linear feature equals its count from the state."""
    rules = _rules(name)
    rng = np.random.default_rng(7)
    worth = ability_worths(rules)
    seen = 0
    for _ in range(6):
        s = rules.initial_state()
        while True:
            phi = _phi(rules, s)
            assert np.isfinite(list(phi.values())).all()
            for feature, value in _from_state(rules, s, worth).items():
                assert phi[feature] == pytest.approx(float(value), abs=1e-5), (feature, s)
            seen += 1
            if rules.current_player(s) == TERMINAL:
                break
            if rules.current_player(s) == CHANCE:
                s = _at_decision(rules, s, rng)
            else:
                s = rules.apply(s, int(rng.choice(rules.legal_actions(s))))
    assert seen > 8


def test_drawn_abilities_reach_is_the_expected_known():
    """RT-1.1/RT-1.3: 1D6 abilities capped at intelligence 2, drawn uniformly: E = 11/6 draws."""
    rules = rules_from_data(DRAWN, "<drawn>")
    start = _phi(rules, rules.initial_state())
    assert rules.current_player(rules.initial_state()) == CHANCE
    worth = ability_worths(rules)[0]
    assert len(worth) == len(rules.data.by_level(1))
    assert start["own_reach"] == pytest.approx(11 / 6 * sum(worth.values()) / len(worth))
    assert start["own_reach"] > 0 and start["own_known"] == 0.0

    def expected(state, p):
        if rules.current_player(state) != CHANCE:
            return p * _phi(rules, state)["own_known"]
        return sum(expected(rules.apply(state, o), p * q) for o, q in rules.chance_outcomes(state))

    assert expected(rules.initial_state(), 1.0) == pytest.approx(start["own_reach"])


def test_the_monotone_directions_are_one_more_point_or_rest():
    """Own psi-points, no-test and resting up, the enemy's down (RT-2.3, RT-2.4, RT-5)."""
    features = board_features(load(EDITION, "random:3"))
    rows = features.directions()
    assert rows.shape == (len(MONOTONE), len(FEATURES)) and (np.count_nonzero(rows, 1) == 1).all()
    assert {FEATURES[j]: rows[i, j] for i, j in zip(*np.nonzero(rows))} == {
        "own_psi_points": 1.0, "own_no_test": 1.0, "own_resting": 1.0,
        "foe_psi_points": -1.0, "foe_no_test": -1.0, "foe_resting": -1.0,
    }  # fmt: skip


def test_a_monotone_direction_must_name_a_feature():
    with pytest.raises(ValueError, match="monotone step own_psi=1"):
        value_features.FeatureBuilder(FEATURES, 4, [{"own_psi": 1}])
    with pytest.raises(ValueError, match="monotone step own_resting=0"):
        value_features.FeatureBuilder(FEATURES, 4, [{"own_resting": 0}])
