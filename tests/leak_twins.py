"""Twins of a game's responses for the leak tests (``tests/test_hidden_leaks.py``).

A *twin* of one response (from one decision of the player to the next) starts where the response
started, with everything the player has not seen dealt again (``rules.sample_hidden``), or with
another pending secret bid, and plays the response as the player saw it (:class:`Script`,
:class:`SecretBid`). What it shows the player must be byte-identical to what the real game
showed (:func:`same`, raising :class:`Leak`). :class:`ServeChecker` plays ``psygym serve`` games
through the HTTP API and :class:`PlayChecker` ``psygym play`` sessions on a piped console,
checking every response and counting what was checked (``count``).

Generic over editions: only the Rules API, ``private_to``, ``observe`` and ``sample_hidden``.
"""

from __future__ import annotations

import copy
import difflib
import json
import threading
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np
from fastapi.responses import JSONResponse
from fastapi.testclient import TestClient
from helpers import ScriptedConsole
from psygym_experiments import play_session
from psygym_experiments.harness.player_view import PlayerView
from psygym_experiments.play_advice import Advisor
from psygym_experiments.play_session import PlaySession
from psygym_experiments.serve.store import GameStore

from psygym.core import CHANCE, TERMINAL

ATTEMPTS = 12
"""Re-deals tried per response before it counts as void."""


class Reject(Exception):
    """This re-deal cannot play the real response as the player saw it: another is tried."""


def observed(rules: Any, seat: int, state: Hashable, steps: list[tuple[int, int]]) -> list:
    """What ``seat`` observes (``rules.observe``) at each node of ``steps`` and after the last."""
    out = []
    for _, action in steps:
        out.append(rules.observe(state, seat).tobytes())
        state = rules.apply(state, action, check=False)
    return [*out, rules.observe(state, seat).tobytes()]


class Script:
    """A twin's dice and opponent: the real response's steps, as the player saw them.

    Public chance outcomes and cards dealt to the player are the real ones (:class:`Reject`
    when the twin's deck lacks the card); a chance outcome private to the other player is
    drawn from the twin's own chance law; the other player's decisions are the real ones
    (:class:`Reject` when its twin hand cannot make one), except its secret decision, which
    is ``secret`` when given. With ``seen`` (from :func:`observed`), a twin whose player would
    observe something else at a node or at the end (a hand discarded face up, 2E-4.3) is
    rejected too: the player learned there that the re-deal is not the game's.
    """

    name = "script"

    def __init__(self, rules: Any, seat: int, steps: list, rng, *, seen=None, secret=None):
        self.rules, self.seat, self.steps, self.rng = rules, seat, steps, rng
        self.seen, self.secret = seen, secret
        self.i = 0

    def _real(self, state: Hashable, who: int) -> int:
        assert self.i < len(self.steps), "the twin takes more steps than the real response"
        player, action = self.steps[self.i]
        assert player == who, f"step {self.i}: the twin's mover is {who}, the real one {player}"
        self._check(state)
        self.i += 1
        return action

    def _check(self, state: Hashable) -> None:
        if self.seen is not None:
            if self.rules.observe(state, self.seat).tobytes() != self.seen[self.i]:
                raise Reject

    def chance(self, state: Hashable, _rng: Any) -> int:
        """The twin's chance outcome at ``state``."""
        rules = self.rules
        real = self._real(state, CHANCE)
        private = rules.private_to(state)
        if private is not None and private != self.seat:
            return type(rules).sample_chance(rules, state, self.rng)
        if real not in dict(rules.chance_outcomes(state)):
            raise Reject
        return real

    def action_probabilities(self, rules: Any, state: Hashable, player: int) -> dict[int, float]:
        """The other player's decision at ``state`` (always one action)."""
        real = self._real(state, player)
        if self.secret is not None and rules.private_to(state) == player:
            return {self.secret: 1.0}
        if real not in rules.legal_actions(state):
            raise Reject
        return {real: 1.0}

    def finished(self, state: Hashable) -> None:
        """Assert the twin took exactly the real response's steps, ending at ``state``."""
        assert self.i == len(self.steps), f"the twin stopped after {self.i} of {len(self.steps)}"
        self._check(state)


class SecretBid:
    """The real opponent, except that its secret decision is ``bid`` (the same dice follow)."""

    def __init__(self, inner: Any, bid: int):
        self.inner, self.bid = inner, bid
        self.name = getattr(inner, "name", "opponent")

    def action_probabilities(self, rules: Any, state: Hashable, player: int) -> dict[int, float]:
        """``{bid: 1}`` at the secret decision, else the real opponent's distribution."""
        if rules.private_to(state) == player:
            return {self.bid: 1.0}
        return self.inner.action_probabilities(rules, state, player)


def scripted(rules: Any, script_of: Callable[[Any], Script]) -> tuple[Any, Script]:
    """A copy of ``rules`` whose chance is a script's (the real rules stay untouched)."""
    twin_rules = copy.copy(rules)
    script = script_of(twin_rules)
    twin_rules.sample_chance = script.chance
    return twin_rules, script


# ----------------------------------------------------------------------------- serve
class NullLog:
    """A game log that writes nothing (for twins)."""

    closed = False

    def step(self, *_: Any) -> None:  # noqa: D102
        pass

    def end(self, *_: Any) -> None:  # noqa: D102
        self.closed = True


def body_of(view: dict) -> bytes:
    """The HTTP body FastAPI sends for a route's answer (a view holds only JSON types, which
    ``jsonable_encoder`` passes through unchanged)."""
    return JSONResponse(view).body


class Leak(AssertionError):
    """A twin's answer differs from the real one: something hidden reached the player."""


def same(twin: bytes | str, real: bytes | str, what: str) -> None:
    """Assert byte identity; on failure, show where (a line diff of the two)."""
    if twin == real:
        return
    if isinstance(twin, bytes):
        twin = json.dumps(json.loads(twin), indent=1)
        real = json.dumps(json.loads(real), indent=1)
    diff = difflib.unified_diff(real.splitlines(), twin.splitlines(), "real", "twin", lineterm="")
    raise Leak(f"{what}:\n" + "\n".join(list(diff)[:60]))


class ServeChecker:
    """Plays games through serve's HTTP API and checks every response against twins."""

    def __init__(self, client: TestClient, store: GameStore, seed: int):
        self.client, self.store = client, store
        self.hidden_rng = np.random.default_rng(seed)
        self.count = {"games": 0, "responses": 0, "compared": 0, "void": 0, "hints": 0}
        self.count.update(secret_bids=0, secret_twins=0)

    # -- snapshots of a game before a response
    @staticmethod
    def snapshot(game: Any, dice: bool) -> dict[str, Any]:
        """What a game holds before a response (its state, history, view, and its dice when
        ``dice``: a twin that takes the same dice and AI draws)."""
        return {
            "state": game.state,
            "entries": list(game.entries),
            "player_view": game.player_view.fork(),
            "result": game.result,
            "chance_rng": copy.deepcopy(game.chance_rng) if dice else None,
            "policy_rng": copy.deepcopy(game.policy_rng) if dice else None,
        }

    @staticmethod
    def start(game: Any) -> dict[str, Any]:
        """What a game held before its first response (seeded as ``Game`` seeds it)."""
        chance_seq, policy_seq = np.random.SeedSequence(game.seed).spawn(2)
        return {
            "state": game.rules.initial_state(),
            "entries": [],
            "player_view": PlayerView(game.rules, game.seat),
            "result": None,
            "chance_rng": np.random.default_rng(chance_seq),
            "policy_rng": np.random.default_rng(policy_seq),
        }

    @staticmethod
    def twin(game: Any, snap: dict[str, Any], state: Hashable, rules: Any, opponent: Any) -> Any:
        """A copy of ``game`` as it was at ``snap``, at ``state``, with its own dice and AI."""
        twin = copy.copy(game)
        twin.__dict__.update(
            state=state,
            entries=list(snap["entries"]),
            player_view=snap["player_view"].fork(),
            result=snap["result"],
            chance_rng=copy.deepcopy(snap["chance_rng"]),
            policy_rng=copy.deepcopy(snap["policy_rng"]),
            rules=rules,
            opponent=opponent,
            log=NullLog(),
            lock=threading.RLock(),
            _hint_caches={},
            _hint_search=None,
        )
        return twin

    def steps_since(self, game_id: str, done: int) -> list[tuple[int, int]]:
        """``(player, action)`` of the log's step lines after the first ``done``."""
        path = self.store.games_dir / f"{game_id}.jsonl"
        steps = [json.loads(x) for x in path.read_text().splitlines()]
        steps = [s for s in steps if s.get("type") == "step"][done:]
        return [(CHANCE if s["player"] == "chance" else s["player"], s["action"]) for s in steps]

    # -- one response
    def check(self, game, snap, action, steps, body: bytes, hint: bool) -> None:
        """Twins of one response (re-deals) must answer ``body`` byte for byte."""
        rules, seat = game.rules, game.seat
        self.count["responses"] += 1
        start = snap["state"] if action is None else rules.apply(snap["state"], action)
        seen = observed(rules, seat, start, steps)
        for _ in range(ATTEMPTS):
            state = rules.sample_hidden(snap["state"], seat, self.hidden_rng)
            twin_rules, script = scripted(
                rules, lambda r: Script(r, seat, steps, self.hidden_rng, seen=seen)
            )
            twin = self.twin(game, snap, state, twin_rules, script)
            try:
                twin.play(action) if action is not None else twin._advance()
                script.finished(twin.state)
            except Reject:
                continue
            same(body_of(twin.view()), body, "a re-deal changed the response")
            self.count["compared"] += 1
            if hint and not game.over:
                twin.rules = rules
                real = self.client.get(f"/api/games/{game.id}/hint").content
                same(body_of(twin.hint()), real, "a re-deal changed the hint")
                self.count["hints"] += 1
            return
        self.count["void"] += 1

    def check_secret(self, game, snap, action, steps, body: bytes, hint: bool) -> None:
        """Every other secret bid the AI could have made gives the same response and hint."""
        rules, parent = game.rules, game.player_view.pending
        self.count["responses"] += 1
        if parent is None:
            return
        assert rules.current_player(game.state) == game.seat  # the player's bid is next
        self.count["secret_bids"] += 1
        real_bid = next(a for p, a in reversed(steps) if p == rules.current_player(parent))
        hint_body = self.client.get(f"/api/games/{game.id}/hint").content if hint else None
        for bid in rules.legal_actions(parent):
            if bid == real_bid:
                continue
            twin = self.twin(game, snap, snap["state"], rules, SecretBid(game.opponent, bid))
            twin.play(action) if action is not None else twin._advance()
            assert twin.state != game.state  # (another bid is pending)
            same(body_of(twin.view()), body, "another pending secret bid changed the response")
            self.count["secret_twins"] += 1
            if hint_body is not None:
                same(body_of(twin.hint()), hint_body, "another secret bid changed the hint")
                self.count["hints"] += 1
                hint_body = None  # one twin's hint per response (a search each)

    # -- one game
    def play(self, body: dict, choose: Callable[[dict], int], *, secret=False, hints=0) -> dict:
        """Play one game to the end through the API, checking every response; its last view."""
        r = self.client.post("/api/games", json=body)
        assert r.status_code == 200, r.text
        view = r.json()
        game = self.store.get(view["id"])
        self.count["games"] += 1
        check = self.check_secret if secret else self.check
        steps = self.steps_since(game.id, 0)
        check(game, self.start(game), None, steps, r.content, hints > 0)
        done, n = len(steps), 1
        while not view["over"]:
            snap = self.snapshot(game, dice=secret)
            action = choose(view)
            body = {"action": action, "step": view["step"]}
            r = self.client.post(f"/api/games/{game.id}/actions", json=body)
            assert r.status_code == 200, r.text
            view = r.json()
            steps = self.steps_since(game.id, done)
            done += len(steps)
            assert steps[0] == (game.seat, action)
            check(game, snap, action, steps[1:], r.content, n < hints)
            n += 1
        return view


def picker(game_index: int) -> Callable[[list], int]:
    """The player, as an index into its options: the first (as in the issue) in odd games,
    else seeded random."""
    if game_index % 2:
        return lambda options: 0
    rng = np.random.default_rng(1000 + game_index)
    return lambda options: int(rng.integers(len(options)))


def chooser(game_index: int) -> Callable[[dict], int]:
    """:func:`picker` for serve: the action to send, from the view."""
    pick = picker(game_index)
    return lambda view: view["actions"][pick(view["actions"])]["action"]


# ----------------------------------------------------------------------------- the terminal
class Recorder:
    """A game log that keeps ``(player, action)`` of every step."""

    closed = False

    def __init__(self) -> None:
        self.steps: list[tuple[int, int]] = []

    def step(self, player: int, action: int, _label: str) -> None:  # noqa: D102
        self.steps.append((player, action))


class PlayChecker:
    """Drives ``PlaySession`` with piped answers; twins of every response print the same."""

    def __init__(self, seed: int):
        self.hidden_rng = np.random.default_rng(seed)
        self.count = {"games": 0, "responses": 0, "compared": 0, "void": 0, "hints": 0}
        self.count.update(secret_bids=0, secret_twins=0)

    def session(self, rules: Any, opponent: Any, seat: int, seed: int, name: str) -> PlaySession:
        """A session as ``psygym play`` makes it, on a piped console."""
        return PlaySession(
            rules,
            opponent,
            seat=seat,
            seed=seed,
            console=ScriptedConsole(width=160),
            log=Recorder(),
            opponent_name=f"AI: {name}",
            advisor=Advisor(rules, search_iterations=12),
            echo_input=True,
        )

    @staticmethod
    def twin(real: PlaySession, view: PlayerView, rules: Any, opponent: Any) -> PlaySession:
        """A copy of ``real`` with its own console, view, dice and AI (a fresh advisor)."""
        twin = copy.copy(real)
        twin.rules, twin.opponent, twin.log, twin.player_view = rules, opponent, None, view.fork()
        twin.console = ScriptedConsole(width=160)
        name = real.narrator.opponent_name
        twin.narrator = play_session.Narrator(rules, twin.console, real.seat, name)
        twin._advisor = Advisor(real.rules, search_iterations=12)
        twin._rendered = None
        return twin

    @staticmethod
    def run(session: PlaySession, state: Hashable, answers: list[str]) -> Hashable:
        """One response: from ``state`` to the player's next decision (or the end)."""
        rules = session.rules
        session.console.answers = list(answers)
        first = True
        while rules.current_player(state) != TERMINAL:
            if rules.current_player(state) == session.seat and not first:
                break
            state = session.step(state)
            first = False
        return state

    def play(self, rules, opponent, name, seat, seed, pick, hints=(), *, secret=False) -> str:
        """One game; returns everything printed (with the end as ``psygym play`` prints it)."""
        real = self.session(rules, opponent, seat, seed, name)
        out: list[str] = []
        state = rules.initial_state()
        self.count["games"] += 1
        k = 0
        while True:
            view, before, done = real.player_view.fork(), state, len(real.log.steps)
            answers = []
            if rules.current_player(state) == seat:
                legal = rules.legal_actions(state)
                answers = (["h"] if k in hints else []) + [str(pick(legal) + 1)]
            state = self.run(real, state, answers)
            seen = real.console.take()
            out.append(seen)
            steps = real.log.steps[done:]
            if secret:
                self.check_secret(real, view, before, steps, answers, seen)
            else:
                self.check(real, view, before, steps, answers, seen, hint=k in hints)
            k += 1
            if rules.is_terminal(state):
                break
        real.log = None  # (the command prints the log's path after this)
        real.finish(state, "finished")
        out.append(real.console.take())
        return "".join(out)

    def check(self, real, view, before, steps, answers, seen: str, hint: bool) -> None:
        """Twins (re-deals at ``before``) must print ``seen`` character for character."""
        rules, seat = real.rules, real.seat
        self.count["responses"] += 1
        own = 1 if rules.current_player(before) == seat else 0
        start = rules.apply(before, steps[0][1]) if own else before
        obs = observed(rules, seat, start, steps[own:])
        for _ in range(ATTEMPTS):
            state = rules.sample_hidden(before, seat, self.hidden_rng)
            twin_rules, script = scripted(
                rules, lambda r: Script(r, seat, steps[own:], self.hidden_rng, seen=obs)
            )
            twin = self.twin(real, view, twin_rules, script)
            try:
                end = self.run(twin, state, answers)
                script.finished(end)
            except Reject:
                continue
            same(twin.console.take(), seen, "a re-deal changed the screen")
            self.count["compared"] += 1
            self.count["hints"] += hint
            return
        self.count["void"] += 1

    def check_secret(self, real, view, before, steps, answers, seen: str) -> None:
        """At a pending secret bid, every other bid prints the same response."""
        rules = real.rules
        self.count["responses"] += 1
        parent = real.player_view.pending
        if parent is None:
            return
        self.count["secret_bids"] += 1
        own = 1 if rules.current_player(before) == real.seat else 0
        for bid in rules.legal_actions(parent):
            twin_rules, script = scripted(
                rules, lambda r, bid=bid: Script(r, real.seat, steps[own:], None, secret=bid)
            )
            twin = self.twin(real, view, twin_rules, script)
            script.finished(self.run(twin, before, answers))
            same(twin.console.take(), seen, "another pending secret bid changed the screen")
            self.count["secret_twins"] += 1


def subsequence(items: list[str], within: list[str]) -> bool:
    """Whether ``items`` appear in ``within`` in this order (other lines between them)."""
    rest = iter(within)
    return all(any(x == y for y in rest) for x in items)
