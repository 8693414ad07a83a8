"""Power texts (``RulesBase.power_texts``): one short line of rules text per power a player sees.

7th: 7E-2 (known powers), 7E-7 (effects); 8th: 8E-1.2, 8E-3.1 (the data's description); 2nd:
2E-1, 2E-5 (own psykers' cards, powers in play; never the other hand, 2E-2); Rogue Trader: RT-1,
RT-4 (held abilities).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import psygym.edition as editions
from psygym.core import CHANCE, Information
from psygym.scenario import read_toml

MAX_CHARS = 120
"""Longest line a power text may be (the browser shows it beside the board)."""

SCENARIOS = [(e.id, name) for e in editions.editions() for name in e.scenario_names()]


def _rules(edition_id: str, name: str):
    ed = editions.get(edition_id)
    path = Path(ed.scenario_dir) / f"{name}.toml"
    return ed.build_rules(read_toml(path), str(path))


def _walk(rules, seed: int, games: int = 3, limit: int = 300):
    """States of a few random games (uniform legal moves, sampled chance)."""
    rng = np.random.default_rng(seed)
    for _ in range(games):
        s = rules.initial_state()
        for _ in range(limit):
            yield s
            if rules.is_terminal(s):
                break
            if rules.current_player(s) == CHANCE:
                a = rules.sample_chance(s, rng)
            else:
                legal = rules.legal_actions(s)
                a = legal[int(rng.integers(len(legal)))]
            s = rules.apply(s, a)


def _known_names(rules, s, player):
    """Names of the powers ``player`` may see in ``s``, read from the state per edition."""
    if hasattr(rules, "specs") and hasattr(s, "units") and hasattr(s.units[0], "powers"):  # 7th
        return {
            rules.powers[p].name
            for t, u in enumerate(s.units)
            if rules.specs[t].psyker is not None and u.psyker
            for p in u.powers
        }
    if hasattr(rules, "known"):  # 8th
        return {
            rules.powers[p].name for i, k in enumerate(rules.known) if s.wounds[i] > 0 for p in k
        }
    if hasattr(rules, "power_data"):  # 2nd
        names = {
            rules.power_data[k].name
            for i, slots in enumerate(s.powers)
            if (player is None or rules.psyker_side[i] == player)
            and s.wounds[rules.psyker_unit[i]] > 0
            for k in slots
            if k >= 0
        }
        names |= {rules.power_data[ip.power].name for ip in s.in_play}
        if s.pending is not None:
            names.add(rules.power_data[s.pending.power].name)
        return names
    return {  # Rogue Trader
        rules.abilities[a].name
        for i, u in enumerate(s.units)
        if rules.psyker[i] and u.hp > 0
        for a in u.abilities
    }


@pytest.mark.parametrize(("edition_id", "name"), SCENARIOS)
def test_every_seen_power_has_one_short_line(edition_id, name):
    """Every power a player may see in shipped-scenario games has a line of <= 120 chars."""
    rules = _rules(edition_id, name)
    lines: dict[str, str] = {}
    for s in _walk(rules, seed=1):
        for player in (None, 0, 1):
            texts = rules.power_texts(s, player)
            assert set(texts) == _known_names(rules, s, player)
            lines.update(texts)
    assert lines, "a shipped scenario shows no power at all"
    for power, line in lines.items():
        assert line.strip() and line.startswith(power), line
        assert "\n" not in line and len(line) <= MAX_CHARS, (len(line), line)


def test_seventh_lines_follow_the_data():
    """7th lines carry discipline, warp charge, kind, range and the attack profile (7E-7.1)."""
    from psygym.editions.seventh.spec import load_powers
    from psygym.editions.seventh.views import power_line

    by_name = {p.name: p for p in load_powers().power}
    assert power_line(by_name["Smite"]) == (
        'Smite (Biomancy primaris, WC 1, witchfire, 18"): 4 shots at S4 AP2'
    )
    assert power_line(by_name["Haemorrhage"]).endswith(by_name["Haemorrhage"].text)
    assert power_line(by_name["Flame Breath"]).endswith("[default]")
    assert "Perils on doubles unless a Grey Knight" in power_line(by_name["Banishment"])
    for p in by_name.values():  # every shipped power, reachable or not, gets one line
        line = power_line(p)
        assert line.startswith(p.name) and "\n" not in line
        assert len(line) <= 170, line


def test_eighth_lines_use_the_description_and_value_overrides():
    """8th lines are the data's description; a scenario value override shows (8E-7.3)."""
    rules = _rules("8th", "duel")
    s = rules.initial_state()
    texts = rules.power_texts(s)
    assert texts["Doom"] == (
        'Doom (WC 7): Enemy unit within 24": re-roll wound rolls against it (scored as 3 wounds).'
    )
    assert "+1 per earlier attempt" in texts["Smite"]
    path = Path(editions.get("8th").scenario_dir) / "duel.toml"
    data = read_toml(path)
    data.setdefault("game", {})["power_values"] = {"Doom": 4.5}
    changed = editions.get("8th").build_rules(data, str(path))
    assert "(scored as 4.5 wounds)" in changed.power_texts(changed.initial_state())["Doom"]


@pytest.mark.parametrize("name", editions.get("2nd").scenario_names())
def test_second_never_shows_the_other_hand(name):
    """2nd edition: re-dealing the hidden cards (sample_hidden) never changes the texts (2E-2)."""
    rules = _rules("2nd", name)
    assert editions.get("2nd").information == Information.HIDDEN
    rng = np.random.default_rng(7)
    checked = 0
    for s in _walk(rules, seed=3, games=2):
        for player in (0, 1):
            if not sum(s.hands[1 - player]):
                continue
            texts = rules.power_texts(s, player)
            for _ in range(3):
                other = rules.sample_hidden(s, player, rng)
                assert rules.power_texts(other, player) == texts
            checked += 1
    assert checked > 0


def test_second_hides_the_enemy_psykers_cards_until_played():
    """2nd edition: a player's texts list its own psykers' cards, not the enemy's (2E-1.1)."""
    rules = _rules("2nd", "librarian-vs-farseer")
    for s in _walk(rules, seed=5, games=1):
        if s.pending is None and not s.in_play and any(k >= 0 for k in s.powers[0]):
            own = rules.power_texts(s, rules.psyker_side[0])
            enemy = {
                rules.power_data[k].name
                for i, slots in enumerate(s.powers)
                if rules.psyker_side[i] != rules.psyker_side[0]
                for k in slots
                if k >= 0
            }
            mine = {
                rules.power_data[k].name
                for i, slots in enumerate(s.powers)
                if rules.psyker_side[i] == rules.psyker_side[0]
                for k in slots
                if k >= 0
            }
            assert not (set(own) & (enemy - mine))
            assert set(rules.power_texts(s)) >= enemy | mine
            return
    pytest.fail("no state with dealt power cards and nothing in play")


def test_power_texts_leave_observations_unchanged():
    """power_texts is a view: the state and its observations stay as they were."""
    for edition_id, name in SCENARIOS:
        rules = _rules(edition_id, name)
        for s in list(_walk(rules, seed=2, games=1, limit=40)):
            before = [rules.observe(s, p).copy() for p in (0, 1)]
            rules.power_texts(s, 0)
            rules.power_texts(s)
            for p in (0, 1):
                assert np.array_equal(rules.observe(s, p), before[p])
