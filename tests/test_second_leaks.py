"""2nd edition: nothing the other player may not see leaks (hidden hands, rules/second.md).

Design. Along real games, at every decision (and, for the rules, at every node), a twin of the
state is made with everything the observing player has not seen dealt again
(``rules.sample_hidden``: the other hand, the other player's face-down discards and the deck).
Both are stepped with the same action and, through chance, with the same outcomes: the real
step's outcomes are replayed in the twin (a card dealt to the other player that the twin's deck
lacks is replaced by any card of that deck: the observer does not see it). A step is *void*
only where the twin legitimately differs: a card dealt to the observer that the twin's deck
lacks, or (env tests) the opponent choosing differently with its different hand. Everything the
observer sees must then be identical: observation vector, legal actions (and mask), rendered
text, the events' kinds, texts and data, rewards, whose turn it is.

Sizes: rules 60 games, Gymnasium env 40 games per seat, AEC env 50 games (at least 50 games each,
thousands of decisions; the counts are asserted). A canary rules class that skips the response
step for hands holding no response card (the old behaviour) must be caught.
"""

from __future__ import annotations

import copy

import numpy as np
from psygym_agents.second.heuristics import CastBiggest

from psygym import CHANCE, TERMINAL, load
from psygym.editions.second.actions import PASS
from psygym.editions.second.rules import SecondRules
from psygym.editions.second.state import DEAL, RESPONSE
from psygym.envs.aec import AGENTS, raw_env
from psygym.envs.psychic import PsychicPhaseEnv


def _events(events) -> list[tuple]:
    return [(e.kind, e.text, e.player, e.data) for e in events]


def _seen(rules, s, o) -> tuple:
    """Everything observer ``o`` may see of node ``s``."""
    mover = rules.current_player(s)
    out = [mover, rules.observe(s, o).tobytes(), rules.render(s, o)]
    if mover == o:
        legal = rules.legal_actions(s)
        out += [tuple(legal), tuple(str(rules.describe(s, a)) for a in legal)]
    elif mover == CHANCE and not (s.stage == DEAL and not s.effects):
        out.append(tuple(rules.chance_outcomes(s)))  # dice laws: public information only
    return tuple(out)


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


def _rules_leaks(rules, games: int, seed: int) -> dict[str, int]:
    """Twin check at every node of ``games`` random games; counts, with ``leaks`` found."""
    rng, hidden_rng = np.random.default_rng(seed), np.random.default_rng(seed + 1)
    count = {"games": 0, "nodes": 0, "twins": 0, "differing": 0, "void": 0, "leaks": 0}
    for _ in range(games):
        s = rules.initial_state()
        count["games"] += 1
        while (mover := rules.current_player(s)) != TERMINAL:
            if mover == CHANCE:
                a = rules.sample_chance(s, rng)
            else:
                legal = rules.legal_actions(s)
                a = legal[int(rng.integers(len(legal)))]
            count["nodes"] += 1
            for o in (0, 1):
                twin = rules.sample_hidden(s, o, hidden_rng)
                count["twins"] += 1
                count["differing"] += twin != s
                if _seen(rules, s, o) != _seen(rules, twin, o):
                    count["leaks"] += 1
                    continue
                b = a
                if mover == 1 - o and a not in rules.legal_actions(twin):
                    b = PASS  # always legal for the other player: compare that step instead
                if mover == CHANCE and _is_deal(s) and not twin.deck[a]:
                    if s.deal_to == o:
                        count["void"] += 1
                        continue
                    b = next(c for c, n in enumerate(twin.deck) if n)
                # Chance: the real outcome here, the same (or a stand-in card) in the twin.
                x, ex = rules.apply_with_events(s, a if mover == CHANCE else b)
                y, ey = rules.apply_with_events(twin, b)
                if _events(ex) != _events(ey) or _seen(rules, x, o) != _seen(rules, y, o):
                    count["leaks"] += 1
            s = rules.apply(s, a)
    return count


def test_rules_leak_nothing_to_the_other_player():
    for name, games in (("duel", 40), ("librarian-vs-farseer", 30)):
        count = _rules_leaks(load("2nd", name), games, seed=7)
        assert count["leaks"] == 0, (name, count)
        assert count["nodes"] > 30 * games and count["differing"] > count["twins"] // 2, count
        assert count["void"] < count["twins"] // 20, count  # about 1.5% here


def test_the_leak_check_catches_the_old_skipped_response_step():
    base = load("2nd", "librarian-vs-farseer")
    count = _rules_leaks(OldSkip(base.scenario), 20, seed=7)
    assert count["leaks"] > 0, count


# ---------------------------------------------------------------------------------------------
# Env-level twins: the real step's chance outcomes are replayed in the twin


class _Chance:
    """Records the real env's chance outcomes, or replays them in the twin env."""

    def __init__(self, rules, observer: int):
        self.rules, self.observer = rules, observer
        self.log: list[tuple[tuple, int]] = []
        self.replay: list[tuple[tuple, int]] | None = None
        self.void = self.mismatch = False

    def start(self, replay=None) -> None:
        self.log, self.replay, self.void, self.mismatch, self.i = [], replay, False, False, 0

    def __call__(self, state, rng) -> int:
        rules = self.rules
        key = (state.stage, state.deal_to if _is_deal(state) else -1, bool(state.effects))
        if self.replay is None:
            out = SecondRules.sample_chance(rules, state, rng)
            self.log.append((key, out))
            return out
        possible = [c for c, p in rules.chance_table(state).outcomes if p > 0]
        if self.i >= len(self.replay) or self.replay[self.i][0] != key:
            self.mismatch = True  # the twin went through other chance nodes: a leak
            return possible[0]
        want = self.replay[self.i][1]
        self.i += 1
        if want in possible:
            return want
        if _is_deal(state) and state.deal_to == self.observer:
            self.void = True  # the observer's own card is not in the twin's deck: legit
        elif not _is_deal(state):
            self.mismatch = True  # a dice law that differs: a leak
        return possible[0]


class _Recorder:
    """An opponent policy that logs its choices (a deterministic heuristic inside)."""

    name = "recorded"

    def __init__(self, inner):
        self.inner, self.log = inner, []

    def action_probabilities(self, rules, state, player):
        """The inner policy's choice, logged."""
        probs = self.inner.action_probabilities(rules, state, player)
        self.log.append(next(iter(probs)))
        return probs


def _gym_pair(name: str, seat: int):
    envs = []
    for _ in range(2):
        rules = load("2nd", name)
        chance = _Chance(rules, seat)
        rules.sample_chance = chance
        opponent = _Recorder(CastBiggest())
        env = PsychicPhaseEnv(rules=rules, opponent=opponent, seat=seat, render_mode="ansi")
        envs.append((env, chance, opponent))
    return envs


def test_gymnasium_env_leaks_nothing_to_the_agent():
    games_per_seat = 40
    count = {"games": 0, "decisions": 0, "compared": 0, "void": 0}
    for seat in (0, 1):
        (real, real_chance, real_opp), (twin, twin_chance, twin_opp) = _gym_pair("duel", seat)
        rng, hidden_rng = np.random.default_rng(seat), np.random.default_rng(100 + seat)
        for game in range(games_per_seat):
            real_chance.start()
            obs, info = real.reset(seed=1000 * seat + game)
            count["games"] += 1
            done = False
            while not done:
                legal = np.flatnonzero(info["action_mask"])
                a = int(legal[int(rng.integers(len(legal)))])
                # The twin: the real env with the opponent's unseen cards dealt again.
                twin.state = twin.rules.sample_hidden(real.state, seat, hidden_rng)
                twin.np_random = copy.deepcopy(real.np_random)
                twin._score, twin._paid = real._score, real._paid
                before = real.rules.observe(real.state, seat).tobytes()
                assert twin.rules.observe(twin.state, seat).tobytes() == before
                assert np.array_equal(twin.action_masks(), real.action_masks())
                real_chance.start()
                real_opp.log, twin_opp.log = [], []
                obs, reward, done, _, info = real.step(a)
                twin_chance.start(replay=real_chance.log)
                t_obs, t_reward, t_done, _, t_info = twin.step(a)
                count["decisions"] += 1
                # The opponent's other hand may make it choose otherwise (legit); asked the same
                # number of decisions otherwise (a skipped step would show here).
                chose = any(x != y for x, y in zip(real_opp.log, twin_opp.log))
                if twin_chance.void or chose:
                    count["void"] += 1
                    continue
                assert len(real_opp.log) == len(twin_opp.log)
                assert not twin_chance.mismatch
                count["compared"] += 1
                assert np.array_equal(obs, t_obs) and reward == t_reward and done == t_done
                assert np.array_equal(info["action_mask"], t_info["action_mask"])
                assert _events(info["events"]) == _events(t_info["events"])
                assert real.render() == twin.render()
    assert count["games"] >= 50 and count["compared"] > 1000, count
    assert count["compared"] > 2 * count["void"], count


def _fork_aec(src, dst, state) -> None:
    dst.state = state
    dst.np_random = copy.deepcopy(src.np_random)
    dst.agents = list(src.agents)
    for attr in ("rewards", "_cumulative_rewards", "terminations", "truncations", "infos"):
        setattr(dst, attr, dict(getattr(src, attr)))
    dst.agent_selection = src.agent_selection
    dst._scores = list(src._scores)
    dst._events = []


def test_aec_env_leaks_nothing_to_the_agent_out_of_turn():
    real = raw_env("2nd", "duel")
    forks = []
    for _ in range(2):
        rules = load("2nd", "duel")
        chance = _Chance(rules, 0)
        rules.sample_chance = chance
        forks.append((raw_env(rules=rules), chance))
    (same, same_chance), (twin, twin_chance) = forks
    rng, hidden_rng = np.random.default_rng(5), np.random.default_rng(6)
    count = {"games": 0, "decisions": 0, "compared": 0, "void": 0}
    for game in range(50):
        real.reset(seed=game)
        count["games"] += 1
        while not all(real.terminations.values()):
            mover = real.agent_selection
            mask = real.observe(mover)["action_mask"]
            legal = np.flatnonzero(mask)
            a = int(legal[int(rng.integers(len(legal)))])
            count["decisions"] += 1
            for o in (0, 1):
                agent = AGENTS[o]
                hidden = real.rules.sample_hidden(real.state, o, hidden_rng)
                _fork_aec(real, same, real.state)
                _fork_aec(real, twin, hidden)
                b = a
                if mover != agent and not twin.observe(mover)["action_mask"][a]:
                    b = PASS  # the other agent's action must be legal in both: compare PASS
                for env in (same, twin):
                    seen = env.observe(agent)
                    assert np.array_equal(seen["observation"], real.observe(agent)["observation"])
                    assert np.array_equal(seen["action_mask"], real.observe(agent)["action_mask"])
                same_chance.observer = twin_chance.observer = o
                same_chance.start()
                same.step(b)
                twin_chance.start(replay=same_chance.log)
                twin.step(b)
                assert not twin_chance.mismatch
                if twin_chance.void:
                    count["void"] += 1
                    continue
                count["compared"] += 1
                assert twin.agent_selection == same.agent_selection
                x, y = same.observe(agent), twin.observe(agent)
                assert np.array_equal(x["observation"], y["observation"])
                assert np.array_equal(x["action_mask"], y["action_mask"])
                assert same.rewards[agent] == twin.rewards[agent]
                assert same.terminations == twin.terminations
                assert _events(same.infos[agent]["events"]) == _events(twin.infos[agent]["events"])
                assert same.rules.render(same.state, o) == twin.rules.render(twin.state, o)
            real.step(a)
    assert count["games"] >= 50 and count["compared"] > 4000, count
    assert count["void"] < count["compared"] // 10, count  # about 4% here
