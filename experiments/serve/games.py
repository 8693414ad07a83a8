"""Games of ``psygym serve``: one human seat against an AI, kept in memory and logged as they go.

Everything here is edition-blind: it uses only the Rules API (``render``, ``legal_actions``,
``describe``, ``chance_outcomes``, ``sample_chance``, ``apply_with_events``, ``returns``,
``current_player``), the edition registry (:mod:`psygym.edition`) and the agent registry
(:mod:`psygym.policies`).

What the player is shown of every step (2nd edition's hands and deck, a pending Rogue Trader
secret bid) comes from :class:`~psygym_experiments.harness.player_view.PlayerView`, as in the
terminal: it is computed from the player's information only (the edition's ``private_to``). A
step private to the AI is sent without its label or probability, only its events. The board is
always ``render(state, seat)``, also at the end of the game; the full record is the game log,
which is served only once the game is over.

Game logs are JSON Lines in the format ``psygym replay`` reads (format 1 of
``psygym_experiments.play_session``): a header line, one ``step`` line per transition (flushed as
it happens, so a server restart loses nothing that was logged) and an ``end`` line. A game on a
scenario with overrides (a shorter game) or on an uploaded scenario is logged with the path of
the exact scenario file the server wrote, so the replay loads the same rules; a random battle
(an army list generated from a seed, :mod:`psygym.generator`) under its name ``random:SEED``,
which the replay generates again.
"""

from __future__ import annotations

import dataclasses
import math
import threading
import time
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from psygym_experiments.harness.gamelog import (  # noqa: F401 - LOG_FORMAT re-exported
    LOG_FORMAT,
    GameLog,
    state_text,
)
from psygym_experiments.harness.odds_view import outcome_note, percent
from psygym_experiments.harness.player_view import HIDDEN_OUTCOME, SECRET_CHOICE, PlayerView

from psygym.core import CHANCE, TERMINAL, Event, IllegalActionError
from psygym.kernel import weighted_choice
from psygym.policies import describe_agent
from psygym.scenario import toml_text

LENGTH_KEYS = ("battle_rounds", "turns")
"""``[game]`` settings that count a game's length; the "rounds" override sets the one declared."""

PATH_FIELD_SUFFIX = "_file"
"""Scenario fields naming another file to read end in this (``powers_file``): refused in
uploads."""

MAX_UPLOAD_BYTES = 256 * 1024
"""Largest scenario file accepted."""

MAX_STEPS = 100_000
"""Bound on the transitions the server plays in a row before the human moves."""

HINT_STATES = 20_000
"""States one hint search may add (about a second: a hint click answers within a second or two;
the memo is kept, so another click searches further)."""

HINT_PLIES = 8
"""Transitions the last-resort hint search looks ahead (an estimate)."""

HINT_ITERATIONS = 300
"""Iterations of the information-set search for hints over hidden hands (where it is the
hidden-hand search, or where a deal's phase does not fit its share of the phase budget)."""


class BadRequest(ValueError):
    """A request the server refuses (answered with a 4xx and a one-line JSON error).

    Attributes:
        status: the HTTP status code to answer with.
    """

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


# ----------------------------------------------------------------------------- game log
LogWriter = GameLog
"""The one game-log writer (hash-chained JSON Lines, :mod:`psygym_experiments.harness.gamelog`)."""


# ----------------------------------------------------------------------------- one game
@dataclass
class Entry:
    """One line of the event log as the player may see it.

    Attributes:
        who: ``"you"``, ``"ai"`` or ``"chance"``.
        text: the decision or outcome in words.
        events: what it caused, one line each, with their kinds.
    """

    who: str
    text: str
    events: list[dict[str, str]] = field(default_factory=list)


def _event_rows(events: Sequence[Event]) -> list[dict[str, str]]:
    return [{"kind": str(e.kind), "text": e.text} for e in events]


class Game:
    """One game in memory: the human at ``seat`` against ``opponent``; thread-safe via ``lock``.

    Args:
        game_id: the id the page uses.
        rules: the edition's rules.
        opponent: the AI's policy.
        opponent_name: how the AI is shown.
        seat: the human's player number (0 or 1).
        seed: seeds the dice and the AI's random choices (two independent streams, as
            ``psygym play`` does).
        log: the game log writer.
        info: setup facts shown on the page (edition title, scenario name, ...).
    """

    def __init__(
        self,
        game_id: str,
        rules: Any,
        opponent: Any,
        opponent_name: str,
        *,
        seat: int,
        seed: int,
        log: LogWriter,
        info: Mapping[str, Any],
    ):
        self.id = game_id
        self.rules = rules
        self.opponent = opponent
        self.opponent_name = opponent_name
        self.seat = seat
        self.seed = seed
        self.log = log
        self.info = dict(info)
        self.lock = threading.RLock()
        self.touched = time.monotonic()
        chance_seq, policy_seq = np.random.SeedSequence(seed).spawn(2)
        self.chance_rng = np.random.default_rng(chance_seq)
        self.policy_rng = np.random.default_rng(policy_seq)
        self.entries: list[Entry] = []
        self.player_view = PlayerView(rules, seat)
        """What the player is shown (the one home of hidden information)."""
        self._hint_caches: dict[Any, Any] = {}
        self._hint_search: Any = None  # the search agent for hints (False: not installed)
        self.result: str | None = None
        self.state = rules.initial_state()
        self._advance()

    # ------------------------------------------------------------------ playing
    @property
    def step(self) -> int:
        """The view's ``step``, which an action answers: the lines of the player's event log.

        Every action of the human adds a line, and nothing adds one while the game waits for
        the human, so it names the decision a view shows (and it is as public as that log).
        """
        return len(self.entries)

    @property
    def over(self) -> bool:
        """Whether the game has ended (finished, or closed when it expired)."""
        return self.result is not None

    def play(self, action: Any, step: int | None = None) -> None:
        """Apply the human's ``action``, then play chance and the AI until the human moves.

        Call it holding :attr:`lock`, so that the ``step`` checked is the one played on.

        Args:
            action: one of the legal actions of the view.
            step: the ``step`` of the view the action was chosen in. Another one (the action
                was sent twice, or it answers a decision already played) is refused, so it can
                never land on a later decision. ``None``: not checked (callers in this process
                that hold the lock).

        Raises:
            BadRequest: the game is over, ``step`` is not the current decision's, it is not the
                human's turn, or ``action`` is not legal (the game is unchanged).
        """
        if self.over:
            raise BadRequest("the game is over", 409)
        if step is not None and step != self.step:
            raise BadRequest(
                f"this action answers step {step} but the game is at step {self.step}: it was "
                "sent twice or answers a decision already played (the game's view shows the "
                "current decision)",
                409,
            )
        if not isinstance(action, int) or isinstance(action, bool):
            raise BadRequest(f"action must be an integer, got {action!r}")
        rules, state = self.rules, self.state
        if rules.current_player(state) != self.seat:
            raise BadRequest("it is not your turn", 409)
        try:
            nxt, events = rules.apply_with_events(state, action)
        except IllegalActionError as exc:
            legal = ", ".join(str(a) for a in rules.legal_actions(state))
            raise BadRequest(f"action {action} is not legal here; legal actions: {legal}") from exc
        self.log.step(self.seat, action, rules.action_label(state, action))
        shown = self.player_view.see(state, action, events)
        if not shown.revealed:
            self.entries.append(Entry("you", str(shown.label), _event_rows(shown.events)))
        else:  # the AI's secret choice is shown once the human has made theirs
            self.entries.append(Entry("you", str(shown.label)))
            for earlier in shown.revealed:
                self.entries.append(Entry("ai", f"{earlier.label} (revealed now)"))
            revealed = Entry("you", "both secret choices are revealed", _event_rows(shown.events))
            self.entries.append(revealed)
        self.state = nxt
        self._advance()

    def _advance(self) -> None:
        """Play chance nodes and the AI's decisions until the human moves or the game ends."""
        rules = self.rules
        for _ in range(MAX_STEPS):
            player = rules.current_player(self.state)
            if player == TERMINAL:
                self._close("finished")
                return
            if player == self.seat:
                return
            if player == CHANCE:
                self._chance()
            else:
                self._ai(player)
        raise RuntimeError(f"the game did not reach the human's turn within {MAX_STEPS} steps")

    def _chance(self) -> None:
        rules, state = self.rules, self.state
        a = rules.sample_chance(state, self.chance_rng)
        nxt, events = rules.apply_with_events(state, a, check=False)
        self.log.step(CHANCE, a, rules.action_label(state, a))
        shown = self.player_view.see(state, a, events, dict(rules.chance_outcomes(state)).get(a))
        if shown.label is None:
            text = HIDDEN_OUTCOME
        elif shown.probability is not None:
            text = shown.label + outcome_note(shown.probability)
        else:
            text = shown.label
        self.entries.append(Entry("chance", text, _event_rows(shown.events)))
        self.state = nxt

    def _ai(self, player: int) -> None:
        rules, state = self.rules, self.state
        probs = self.opponent.action_probabilities(rules, state, player)
        a = int(weighted_choice(list(probs), list(probs.values()), self.policy_rng))
        nxt, events = rules.apply_with_events(state, a)
        self.log.step(player, a, rules.action_label(state, a))
        shown = self.player_view.see(state, a, events, float(probs[a]) if len(probs) > 1 else None)
        if shown.label is None:
            self.entries.append(Entry("ai", SECRET_CHOICE, _event_rows(shown.events)))
        else:
            why = [shown.odds] if shown.odds else []
            if shown.probability is not None:
                why.append(f"chosen with probability {percent(shown.probability)}")
            text = f"{shown.label}  [{'; '.join(why)}]" if why else shown.label
            self.entries.append(Entry("ai", text, _event_rows(shown.events)))
        self.state = nxt

    def _close(self, result: str) -> None:
        if self.result is None:
            self.result = result
            if not self.log.closed:
                self.log.end(self.rules, self.state, result)

    def expire(self) -> None:
        """End an idle game: write the log's end line (``"quit"``) and close it."""
        with self.lock:
            self._close("quit")

    # ------------------------------------------------------------------ hints
    def hint(self) -> dict[str, Any]:
        """Values of the human's options: exact, or estimated by search.

        Perfect-information editions and secret bids (``simultaneous_info``) use the ``search``
        agent (:class:`psygym_agents.solvers.search.LookaheadPolicy`): exact where the scenario
        is solvable whole, else exact within the cast or turn in progress with a learned value
        of the board beyond it (its ``note`` says so); at the second secret bid the values are
        expectations against the opponent's equilibrium mix, never its actual bid. Without the
        search agent the expectiminimax solver is tried within :data:`HINT_STATES` new states.
        Editions with hidden information use ``search`` for hidden hands
        (:func:`psygym_agents.solvers.search.hidden_search`: the phase searched in deals of the
        cards the human has not seen, or the information-set search), which reads only what
        the human may know (their hand and the public table), so its values are estimates.

        Raises:
            BadRequest: the game is over or it is not the human's turn.
        """
        rules, state = self.rules, self.state
        if self.over or rules.current_player(state) != self.seat:
            raise BadRequest("no decision of yours to advise on", 409)
        legal = rules.legal_actions(state)
        if len(legal) == 1:
            return self._hint_answer({legal[0]: float("nan")}, True, "the only legal action")
        if not self.player_view.laws_public:
            return self._search_hint(state)
        lookahead = self._lookahead()
        if lookahead is not None:
            from psygym_agents.solvers.search import UnitTooLarge

            try:
                values = lookahead.action_values(rules, state)
            except UnitTooLarge as exc:
                return self._hint_answer({}, False, str(exc))
            exact = bool(lookahead.exact)
            note = (
                "exact: your expected final score under best play by both sides"
                if exact
                else f"estimated by search: {lookahead.note}"
            )
            return self._hint_answer(values, exact, note)
        try:
            from psygym_agents.solvers import NotSolvable
            from psygym_agents.solvers.expectiminimax import Cache, Solver
        except ImportError:
            return self._hint_answer({}, False, "no solver is installed")
        attempts: list[tuple[dict[str, int], str]] = [
            ({}, ""),
            (
                {"max_depth": 1},
                "estimated: looking to the end of this Psychic phase, later phases counted at "
                "the score reached",
            ),
            (
                {"max_plies": HINT_PLIES},
                f"estimated: looking {HINT_PLIES} steps (decisions and rolls) ahead, counted at "
                "the score reached",
            ),
        ]
        for limits, estimated in attempts:
            key = next(iter(limits.items()), None)
            cache = self._hint_caches.get(key)
            if cache is None or len(cache.values) > 500_000:
                cache = self._hint_caches[key] = Cache()
            solver = Solver(
                rules, cache=cache, max_states=len(cache.values) + HINT_STATES, **limits
            )
            try:
                values = solver.action_values(state)
            except (NotSolvable, ValueError):
                continue  # too large (or a limit the solver cannot apply here)
            exact = not limits or bool(solver.exact)
            note = (
                "exact: your expected final score under best play by both sides"
                if exact
                else estimated
            )
            return self._hint_answer(values, exact, note)
        return self._hint_answer(
            {},
            False,
            "too large to search within the hint budget; click Hint again to search further",
        )

    def _lookahead(self) -> Any:
        """The ``search`` agent of this game's rules (built once), or ``None`` if unavailable."""
        if self._hint_search is None:
            from psygym_experiments.harness.advice import lookahead_agent

            try:
                self._hint_search = lookahead_agent(self.rules)
            except ImportError:
                self._hint_search = False
        return self._hint_search or None

    def _search_hint(self, state: Hashable) -> dict[str, Any]:
        try:
            from psygym_agents.solvers.search import hidden_search
        except ImportError:
            return self._hint_answer({}, False, "no search is installed")
        seed = len(self.entries)
        search = hidden_search(self.rules, f"iterations={HINT_ITERATIONS},seed={seed}")
        _, means = search.search(self.rules, state, self.seat)
        note = f"estimated over hands you cannot see: {search.note}"
        return self._hint_answer(means, False, note)

    def _hint_answer(self, values: Mapping[int, float], exact: bool, note: str) -> dict[str, Any]:
        finite = {int(a): float(v) for a, v in values.items() if math.isfinite(v)}
        best = max(finite.values()) if finite else None
        return {
            "exact": exact,
            "kind": "exact" if exact else "estimated" if values else "unavailable",
            "note": note,
            "values": [
                {
                    "action": int(a),
                    "value": (round(float(v), 4) if math.isfinite(v) else None),
                    "best": best is not None and math.isfinite(v) and math.isclose(v, best),
                }
                for a, v in values.items()
            ],
        }

    # ------------------------------------------------------------------ the player's view
    def view(self) -> dict[str, Any]:
        """Everything the page shows, as the human may see it (JSON-ready)."""
        rules, state = self.rules, self.state
        your_turn = not self.over and rules.current_player(state) == self.seat
        actions = []
        if your_turn:
            for a, label, odds in self.player_view.options(state):
                actions.append({"action": int(a), "label": label, "odds": odds})
        score = float(rules.returns(state)[self.seat]) + 0.0
        sides = getattr(rules.scenario, "sides", None)
        names = [s.name for s in sides] if sides else ["player 0", "player 1"]
        out: dict[str, Any] = {
            **self.info,
            "id": self.id,
            "seat": self.seat,
            "you": names[self.seat],
            "ai": names[1 - self.seat],
            "opponent": self.opponent_name,
            "opponent_description": describe_agent(self.opponent_name, rules),
            "board": rules.render(state, self.seat),
            "powers": self._powers(),
            "score": score,
            "your_turn": your_turn,
            "step": self.step,
            "actions": actions,
            "hidden": not self.player_view.laws_public,
            "events": [dataclasses.asdict(e) for e in self.entries],
            "over": self.over,
            "result": None,
        }
        if self.over:
            verdict = "You win" if score > 0 else "You lose" if score < 0 else "A draw"
            if self.result != "finished":
                verdict = "The game was closed before its end"
            out["result"] = {"score": score, "verdict": verdict, "log_url": self.log_url}
        return out

    @property
    def log_url(self) -> str:
        """Where the page downloads the game log (served once the game is over)."""
        return f"/api/games/{self.id}/log"

    def _powers(self) -> list[dict[str, str]]:
        """One-line rules text of each power on the board the player may see.

        From ``rules.power_texts(state, player)`` (``{power name: one line}``; editions that
        give none show the powers in the board text only).
        """
        texts = self.rules.power_texts(self.state, self.seat)
        return [{"name": str(k), "text": str(v)} for k, v in texts.items()]


__all__ = [
    "HINT_ITERATIONS", "HINT_PLIES", "HINT_STATES", "LENGTH_KEYS", "LOG_FORMAT", "MAX_STEPS",
    "MAX_UPLOAD_BYTES", "PATH_FIELD_SUFFIX", "BadRequest", "Entry", "Game", "LogWriter",
    "toml_text",
]  # fmt: skip
