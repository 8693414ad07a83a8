"""``psygym play`` in 2nd edition: the screen shows only the human's view (rules/second.md).

Design. The screen text of a :class:`PlaySession` must be a function of what the human may see
(their hand and the public table, 2E-1/2E-3.3). At every node of real games a twin of the state
is made with everything the human has not seen dealt again (``rules.sample_hidden``: the AI's
hand, its face-down discards and the deck) and both sessions take the same step: the human's
same answer, the AI's same action (PASS when the twin's hand cannot play it: the AI may
legitimately choose otherwise with another hand), the same chance outcome (a card dealt to the
AI that the twin's deck lacks is replaced by one it holds: the human does not see it; a card
dealt to the human that the twin's deck lacks makes the step *void*). Every line printed must
be identical. A canary (the old rules that skipped the response step for a hand without
response cards) must be caught by the same check.

Also: the scripted situation of the hidden-hands issue (the AI holds no response card vs the
same view with a Nullify it declines), the odds (only public dice laws, no 0.0% on an action
that can take effect) and the estimated hints.
"""

from __future__ import annotations

import re
from fractions import Fraction

import numpy as np
import pytest
from helpers import ScriptedConsole
from psygym_experiments.harness.odds_view import DEPENDS_ON_RESPONSE, odds_text, percent
from psygym_experiments.play_advice import Advisor
from psygym_experiments.play_session import PlaySession

from psygym import CHANCE, TERMINAL, load
from psygym.editions.second.actions import NULLIFY, PASS, RESPONSE_CARDS
from psygym.editions.second.data import Card
from psygym.editions.second.rules import SecondRules, nullify_chance
from psygym.editions.second.state import DEAL, RESPONSE, ROLL, ROLL_NULLIFY_IN_PLAY


class Fixed:
    """The AI: plays the action it is told to (set before each step)."""

    name = "fixed"

    def __init__(self) -> None:
        self.action = PASS

    def action_probabilities(self, rules, state, player):  # noqa: D102
        return {self.action: 1.0}


class Forced:
    """A rules object's chance: the outcome it is told to, else the seeded draw."""

    def __init__(self, rules) -> None:
        self.rules, self.outcome = rules, None
        rules.sample_chance = self

    def __call__(self, state, rng) -> int:
        if self.outcome is None:
            return SecondRules.sample_chance(self.rules, state, rng)
        return self.outcome


def _session(rules, seat: int, advisor=None) -> tuple[PlaySession, ScriptedConsole, Fixed]:
    console, ai = ScriptedConsole(), Fixed()
    hint = advisor is not None
    session = PlaySession(
        rules, ai, seat=seat, seed=0, console=console, hint=hint, echo_input=True, advisor=advisor
    )
    return session, console, ai


def _is_deal(s) -> bool:
    return s.stage == DEAL and not s.effects


class OldSkip(SecondRules):
    """Canary: the old rule, skipping the response step when the responder holds no card."""

    def _settle(self, s, events):
        s = super()._settle(s, events)
        if s.stage == RESPONSE and not s.effects and self._response_actions(s) == [PASS]:
            s = self._finish_pending(s, events, reflected=False, stopped=False)
            return super()._settle(s, events)
        return s


def _screen_leaks(make_rules, games: int, seed: int, hint_games: int = 0) -> dict[str, int]:
    """Twin check of the screen at every node of ``games`` random games; counts, with leaks."""
    rng, hidden_rng = np.random.default_rng(seed), np.random.default_rng(seed + 1)
    count = {"games": 0, "nodes": 0, "compared": 0, "void": 0, "leaks": 0, "lines": 0}
    for game in range(games):
        seat = game % 2
        pair = []
        for _ in range(2):
            rules = make_rules()
            advisor = Advisor(rules, search_iterations=30) if game < hint_games else None
            pair.append((rules, Forced(rules), *_session(rules, seat, advisor)))
        (rules, _, real, real_out, real_ai), (twin_rules, chance, twin, twin_out, twin_ai) = pair
        s = rules.initial_state()
        count["games"] += 1
        while (mover := rules.current_player(s)) != TERMINAL:
            if mover == CHANCE:
                a = SecondRules.sample_chance(rules, s, rng)  # the real draw (not the forced)
            else:
                legal = rules.legal_actions(s)
                a = legal[int(rng.integers(len(legal)))]
            count["nodes"] += 1
            t = twin_rules.sample_hidden(s, seat, hidden_rng)
            b = a
            if mover == CHANCE and _is_deal(s) and not t.deck[a]:
                if s.deal_to == seat:
                    count["void"] += 1
                    s = rules.apply(s, a)
                    continue
                b = next(c for c, n in enumerate(t.deck) if n)
            if mover == 1 - seat and a not in twin_rules.legal_actions(t):
                a = b = PASS  # the AI would play otherwise with that hand: compare PASS instead
            for session in (real, twin):
                session._rendered = None  # show the state at this decision in both
            if mover == seat:
                answer = str(rules.legal_actions(s).index(a) + 1)
                real_out.answers, twin_out.answers = [answer], [answer]
            real_ai.action = twin_ai.action = a
            real.rules.sample_chance.outcome = a if mover == CHANCE else None
            chance.outcome = b if mover == CHANCE else None
            x = real.step(s)
            y = twin.step(t)
            seen, twin_seen = real_out.take(), twin_out.take()
            count["compared"] += 1
            count["lines"] += seen.count("\n")
            if seen != twin_seen or rules.render(x, seat) != twin_rules.render(y, seat):
                count["leaks"] += 1
            s = x
    return count


def test_play_screen_leaks_nothing_of_the_hidden_hand():
    """>= 50 games, both seats: every line the human sees is the same for every re-deal."""
    total = {"games": 0, "leaks": 0, "compared": 0, "void": 0}
    for name, games, hints in (("duel", 30, 3), ("librarian-vs-farseer", 24, 3)):
        count = _screen_leaks(lambda name=name: load("2nd", name), games, seed=3, hint_games=hints)
        assert count["leaks"] == 0, (name, count)
        assert count["compared"] > 30 * games and count["lines"] > 100 * games, count
        for k in total:
            total[k] += count[k]
    assert total["games"] >= 50, total
    assert total["void"] < total["compared"] // 20, total


def test_the_screen_leak_check_catches_the_old_skipped_response_step():
    base = load("2nd", "librarian-vs-farseer")
    count = _screen_leaks(lambda: OldSkip(base.scenario, deck=base.deck_counts), 10, seed=3)
    assert count["leaks"] > 0, count


# ----------------------------------------------------------------------------- the issue
def _human_cast_with_ai_holding_no_response_card():
    """A librarian-vs-farseer turn of the human (seat 0) who can cast, with the AI holding
    cards but no response card; and the same view with one AI card swapped for a Nullify."""
    rules = load("2nd", "librarian-vs-farseer")
    responses = set(RESPONSE_CARDS.values())
    for seed in range(300):
        rng = np.random.default_rng(seed)
        s = rules.initial_state()
        while rules.current_player(s) != TERMINAL:
            mover = rules.current_player(s)
            if mover == CHANCE:
                s = rules.apply(s, rules.sample_chance(s, rng))
                continue
            legal = rules.legal_actions(s)
            casts = [a for a in legal if a >= rules.cast_base]
            ai = s.hands[1]
            if mover == 0 and casts and any(ai) and not any(ai[c] for c in responses):
                if s.deck[Card.NULLIFY]:
                    swap = next(c for c, n in enumerate(ai) if n)
                    hand = list(ai)
                    hand[swap] -= 1
                    hand[Card.NULLIFY] += 1
                    deck = list(s.deck)
                    deck[Card.NULLIFY] -= 1
                    deck[swap] += 1
                    twin = s.__class__(
                        **{**s.__dict__, "hands": (s.hands[0], tuple(hand)), "deck": tuple(deck)}
                    )
                    return rules, s, twin, casts[0]
            s = rules.apply(s, legal[int(rng.integers(len(legal)))])
    pytest.skip("no such turn reached")


def test_no_response_card_and_a_declined_nullify_look_the_same():
    """The issue's situation, scripted: the human casts; the AI holds no response card, or
    holds Nullify and declines (the rules ask in both cases, 2E-5.2); the human's screen is
    identical, line for line, up to the human's next decision."""
    rules, s, twin, cast = _human_cast_with_ai_holding_no_response_card()
    assert rules.render(s, 0) == rules.render(twin, 0) and s != twin
    assert twin.hands[1][Card.NULLIFY] == 1 and not s.hands[1][Card.NULLIFY]
    screens = []
    for state in (s, twin):
        session, console, ai = _session(load("2nd", "librarian-vs-farseer"), 0)
        console.answers = [str(rules.legal_actions(state).index(cast) + 1)]
        state = session.step(state)  # the human casts
        assert rules.current_player(state) == 1 and rules.is_response(state)
        legal = rules.legal_actions(state)
        assert legal == ([PASS, NULLIFY] if state.hands[1][Card.NULLIFY] else [PASS])
        ai.action = PASS  # declines (or has nothing to play)
        state = session.step(state)
        while rules.current_player(state) not in (0, TERMINAL):
            state = session.step(state)  # the wound rolls: public dice, same seed
        screens.append(console.take())
    assert screens[0] == screens[1]
    lines = screens[0].splitlines()
    assert any("plays no response card" in line and "(AI: fixed)" in line for line in lines)
    assert any(DEPENDS_ON_RESPONSE in line for line in lines)
    ai_hand = [line for line in lines if line.startswith(f"Hand of {rules.side_names[1]}:")]
    assert ai_hand and all(re.fullmatch(r"Hand of .+: \d+ cards?", line) for line in ai_hand)


# ----------------------------------------------------------------------------- odds
def _exact_odds(rules, s, a) -> Fraction | None:
    """The chance a 2nd-edition response or in-play Nullify stops its power, from public facts
    only (2E-5.2: the score needed follows from the MLs; a hood re-rolls), or None."""
    p = rules.current_player(s)
    if s.stage == RESPONSE and a in RESPONSE_CARDS:
        if a != NULLIFY:
            return Fraction(1)  # Reflection, Destroy Power, Daemonic Attack stop it
        return nullify_chance(*rules.nullify_need(s, p, s.pending.psyker))
    nxt = rules.apply(s, a)
    if nxt.stage == ROLL and nxt.roll is not None and nxt.roll.kind == ROLL_NULLIFY_IN_PLAY:
        return nullify_chance(*rules.nullify_need(s, p, nxt.roll.a))
    return None


def test_second_edition_odds_are_public_and_exact():
    """No 0.0% on an action that can take effect; every printed percentage is an exact
    probability from the player's view (the same for every re-deal of the hidden cards)."""
    checked = {"casts": 0, "percent": 0}
    for name in ("duel", "librarian-vs-farseer"):
        rules = load("2nd", name)
        rng, hidden = np.random.default_rng(11), np.random.default_rng(12)
        for _ in range(25):
            s = rules.initial_state()
            while rules.current_player(s) != TERMINAL:
                p = rules.current_player(s)
                if p == CHANCE:
                    s = rules.apply(s, rules.sample_chance(s, rng))
                    continue
                twin = rules.sample_hidden(s, p, hidden)
                legal = rules.legal_actions(s)
                for a in legal:
                    text = odds_text(rules, s, a)
                    assert text == odds_text(rules, twin, a)
                    assert not re.search(r"(?<![\d.])0\.0%", text), text
                    if a >= rules.cast_base:
                        assert text == DEPENDS_ON_RESPONSE  # 2E-5.2: a response step follows
                        checked["casts"] += 1
                    shown = re.findall(r"denied (\d+\.\d%)", text)
                    exact = _exact_odds(rules, s, a)
                    if shown:
                        assert exact is not None and shown == [percent(float(exact))]
                        checked["percent"] += 1
                    assert re.sub(r"denied \d+\.\d%", "", text).count("%") == 0
                s = rules.apply(s, legal[int(rng.integers(len(legal)))])
    assert checked["casts"] > 100 and checked["percent"] > 20, checked


# ----------------------------------------------------------------------------- hints
def test_second_edition_hint_is_a_search_estimate_of_the_view():
    """The hint's values come from the information-set search, are marked as estimates, and
    are the same for every re-deal of what the human has not seen."""
    rules = load("2nd", "librarian-vs-farseer")
    rng, hidden = np.random.default_rng(2), np.random.default_rng(3)
    s = rules.initial_state()
    while rules.current_player(s) < 0 or len(rules.legal_actions(s)) < 3:
        if rules.current_player(s) == CHANCE:
            s = rules.apply(s, rules.sample_chance(s, rng))
        else:
            s = rules.apply(s, rules.legal_actions(s)[-1])
    p = rules.current_player(s)
    advice = Advisor(rules, search_iterations=200).advise(s)
    assert advice.values and not advice.exact and advice.iterations == 200
    assert set(advice.values) == set(rules.legal_actions(s))
    twin = next(t for _ in range(200) if (t := rules.sample_hidden(s, p, hidden)) != s)
    assert twin.hands[1 - p] != s.hands[1 - p]
    assert Advisor(rules, search_iterations=200).advise(twin).values == advice.values
    advisor = Advisor(rules, search_iterations=100)
    assert advisor.advise(s, further=False).iterations == 100
    assert advisor.advise(s).iterations == 200  # "h": searched further
    assert advisor.advise(s, further=False).iterations == 200
