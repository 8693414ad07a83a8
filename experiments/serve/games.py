"""Games of ``psygym serve``: one human seat against an AI, kept in memory and logged as they go.

Everything here is edition-blind: it uses only the Rules API (``render``, ``legal_actions``,
``describe``, ``chance_outcomes``, ``sample_chance``, ``apply_with_events``, ``returns``,
``current_player``), the edition registry (:mod:`psygym.edition`) and the agent registry
(:mod:`psygym.policies`).

Hidden information (2nd edition's hands and deck, a pending Rogue Trader secret bid) is found as
the terminal player finds it (``psygym_experiments.play_session``): a chance outcome or an AI
decision is hidden from the player when another alternative leads to a state that
``render(s, seat)`` cannot tell apart from it although ``render(s, None)`` can. Then neither its
label nor its probability is sent, only the events every such alternative reports. The board is
always ``render(state, seat)``, also at the end of the game; the full record is the game log,
which is served only once the game is over.

Game logs are JSON Lines in the format ``psygym replay`` reads (format 1 of
``psygym_experiments.play_session``): a header line, one ``step`` line per transition (flushed as
it happens, so a server restart loses nothing that was logged) and an ``end`` line. A game on a
scenario with overrides (a shorter game) or on an uploaded scenario is logged with the path of
the exact scenario file the server wrote, so the replay loads the same rules.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import re
import secrets
import threading
import time
import tomllib
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from psygym_experiments.harness.gamelog import (  # noqa: F401 - LOG_FORMAT re-exported
    LOG_FORMAT,
    GameLog,
    state_text,
)
from psygym_experiments.harness.odds_view import (
    ODDS_KINDS,
    action_odds,
    hidden_move_events,
    odds_text,
    percent,
)

from psygym import edition as registry
from psygym.core import CHANCE, TERMINAL, Event, IllegalActionError
from psygym.editions import load
from psygym.kernel import weighted_choice
from psygym.policies import agent_names, describe_agent, resolve_policy
from psygym.scenario import ScenarioError, read_edition

LENGTH_KEYS = ("battle_rounds", "turns")
"""``[game]`` settings that count a game's length; the "rounds" override sets the one declared."""

UNSAFE_AGENTS = frozenset({"sb3", "tuned"})
"""Built-in agents the page may not name: they load a file (``sb3`` archives hold pickles)."""

UNSAFE_FAMILIES = frozenset({"maskable-ppo", "ppo", "dqn"})
"""Tuned-parameter files of these families point at a pickled SB3 archive: never offered."""

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
"""Iterations of the information-set search for hints in editions with hidden information."""


class BadRequest(ValueError):
    """A request the server refuses (answered with a 4xx and a one-line JSON error).

    Attributes:
        status: the HTTP status code to answer with.
    """

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


# ----------------------------------------------------------------------------- small helpers
def toml_text(data: Mapping[str, Any]) -> str:
    """TOML text of scenario data (tables, arrays of tables, scalars, arrays, inline tables).

    Raises:
        ValueError: the data holds something TOML cannot hold, or the text does not read back
            as the same data.
    """
    lines: list[str] = []

    def scalar(v: Any) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, (int, float)):
            if isinstance(v, float) and not math.isfinite(v):
                raise ValueError(f"cannot write {v!r} as TOML")
            return repr(v)
        if isinstance(v, str):
            return json.dumps(v)
        if isinstance(v, Mapping):
            return "{ " + ", ".join(f"{key(k)} = {scalar(x)}" for k, x in v.items()) + " }"
        if isinstance(v, (list, tuple)):
            return "[" + ", ".join(scalar(x) for x in v) + "]"
        raise ValueError(f"cannot write {type(v).__name__} as TOML")

    def key(k: str) -> str:
        return k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else json.dumps(k)

    def is_table_array(v: Any) -> bool:
        return isinstance(v, list) and bool(v) and all(isinstance(x, Mapping) for x in v)

    def table(d: Mapping[str, Any], path: list[str]) -> None:
        for k, v in d.items():
            if not isinstance(v, Mapping) and not is_table_array(v):
                lines.append(f"{key(k)} = {scalar(v)}")
        for k, v in d.items():
            sub = [*path, key(k)]
            if isinstance(v, Mapping):
                lines.extend(["", f"[{'.'.join(sub)}]"])
                table(v, sub)
            elif is_table_array(v):
                for item in v:
                    lines.extend(["", f"[[{'.'.join(sub)}]]"])
                    table(item, sub)

    table(data, [])
    text = "\n".join(lines).lstrip("\n") + "\n"
    if tomllib.loads(text) != data:
        raise ValueError("the scenario data does not survive a TOML round trip")
    return text


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
        self.hidden_seen = registry.edition_of(rules).hidden_information
        self._revealed_later: list[Entry] = []
        # The state before the AI's pending secret choice, and the choices it might have made.
        self._secret_parent: Hashable | None = None
        self._secret_twins: list[int] = []
        self._hint_caches: dict[Any, Any] = {}
        self._hint_search: Any = None  # the search agent for hints (False: not installed)
        self.result: str | None = None
        self.state = rules.initial_state()
        self._advance()

    # ------------------------------------------------------------------ playing
    @property
    def over(self) -> bool:
        """Whether the game has ended (finished, or closed when it expired)."""
        return self.result is not None

    def play(self, action: Any) -> None:
        """Apply the human's ``action``, then play chance and the AI until the human moves.

        Raises:
            BadRequest: the game is over, it is not the human's turn, or ``action`` is not legal
                (the game is unchanged).
        """
        if self.over:
            raise BadRequest("the game is over", 409)
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
        label = rules.action_label(state, action)
        self.log.step(self.seat, action, label)
        if not self._revealed_later:
            self.entries.append(Entry("you", label, _event_rows(events)))
        else:  # the AI's secret choice is shown once the human has made theirs
            self.entries.append(Entry("you", label))
            for entry in self._revealed_later:
                self.entries.append(Entry("ai", f"{entry.text} (revealed now)"))
            self._revealed_later.clear()
            self._secret_parent, self._secret_twins = None, []
            revealed = Entry("you", "both secret choices are revealed", _event_rows(events))
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
        outcomes = rules.chance_outcomes(state)
        a = rules.sample_chance(state, self.chance_rng)
        label = rules.action_label(state, a)
        nxt, events = rules.apply_with_events(state, a, check=False)
        self.log.step(CHANCE, a, label)
        shown = self.visible_events(state, a, nxt, events, [o for o, _ in outcomes])
        if shown is None:
            # With hidden cards about, a draw's chance would tell what the other hand holds.
            p = None if self.hidden_seen else dict(outcomes).get(a)
            text = f"{label} (chance {percent(p)})" if p is not None else label
            self.entries.append(Entry("chance", text, _event_rows(events)))
        else:
            self.entries.append(Entry("chance", "(hidden from you)", _event_rows(shown)))
        self.state = nxt

    def _ai(self, player: int) -> None:
        rules, state = self.rules, self.state
        probs = self.opponent.action_probabilities(rules, state, player)
        a = int(weighted_choice(list(probs), list(probs.values()), self.policy_rng))
        label = rules.action_label(state, a)
        nxt, events = rules.apply_with_events(state, a)
        self.log.step(player, a, label)
        shown = self.visible_events(state, a, nxt, events, rules.legal_actions(state))
        if shown is None:
            odds = odds_text(rules, state, a)
            why = []
            if odds:
                why.append(odds)
            if len(probs) > 1 and not self.hidden_seen:
                # (with hidden hands the number of choices could tell what the AI holds)
                why.append(f"chosen with probability {percent(float(probs[a]))}")
            text = f"{label}  [{'; '.join(why)}]" if why else label
            self.entries.append(Entry("ai", text, _event_rows(events)))
        else:
            self.entries.append(Entry("ai", "makes a secret choice", _event_rows(shown)))
            if rules.simultaneous_info(state) is not None:
                # A secret bid: shown with the human's own bid, never before.
                self._revealed_later.append(Entry("ai", label, _event_rows(events)))
                mine = rules.render(nxt, self.seat)
                self._secret_parent = state
                self._secret_twins = [
                    b
                    for b in rules.legal_actions(state)
                    if rules.render(rules.apply(state, b, check=False), self.seat) == mine
                ]
        self.state = nxt

    def visible_events(
        self,
        state: Hashable,
        action: int,
        nxt: Hashable,
        events: Sequence[Event],
        alternatives: Sequence[int],
    ) -> tuple[Event, ...] | None:
        """``None`` if the human may see which action or outcome was taken, else what they see.

        The choice is hidden when another alternative leads to a state the human's view
        (``render(s, seat)``) cannot tell apart although the full view (``render(s, None)``)
        can; the events shown are then those every such alternative also reports.
        """
        shown = hidden_move_events(self.rules, self.seat, state, action, nxt, events, alternatives)
        if shown is not None and (
            self.rules.current_player(state) == CHANCE
            or self.rules.simultaneous_info(state) is None
        ):
            self.hidden_seen = True
        return shown

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
        Editions with hidden information use the information-set search, which reads only what
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
        if self.hidden_seen:
            return self._search_hint(state)
        lookahead = self._lookahead()
        if lookahead is not None:
            values = lookahead.action_values(rules, state)
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
            try:
                from psygym_agents.solvers.search import LookaheadPolicy
            except ImportError:
                self._hint_search = False
            else:
                self._hint_search = LookaheadPolicy(self.rules)
        return self._hint_search or None

    def _search_hint(self, state: Hashable) -> dict[str, Any]:
        try:
            from psygym_agents.solvers.ismcts import SearchPolicy
        except ImportError:
            return self._hint_answer({}, False, "no search is installed")
        search = SearchPolicy(self.rules, iterations=HINT_ITERATIONS, seed=len(self.entries))
        _, means = search.search(self.rules, state, self.seat)
        note = (
            f"estimated: mean score of {HINT_ITERATIONS} searches over hands you cannot see "
            "(hidden information has no exact value)"
        )
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
            for a in rules.legal_actions(state):
                actions.append(
                    {
                        "action": int(a),
                        "label": rules.action_label(state, a),
                        "odds": self._odds(a),
                    }
                )
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
            "actions": actions,
            "hidden": self.hidden_seen,
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

    def _odds(self, action: int) -> str:
        """The odds shown on one of the human's buttons.

        After the AI's secret choice (a Rogue Trader bid) the odds of the true state would tell
        that choice: they are computed for every choice the AI might have made and shown as a
        range when they differ.
        """
        rules = self.rules
        if self._secret_parent is None:
            return odds_text(rules, self.state, action)
        per_kind: dict[str, list[float]] = {}
        for b in self._secret_twins:
            twin = rules.apply(self._secret_parent, b, check=False)
            if action not in rules.legal_actions(twin):
                continue
            for k, p in action_odds(rules, twin, action).items():
                per_kind.setdefault(k, []).append(p)
        words = dict(ODDS_KINDS)
        parts = []
        for k, ps in per_kind.items():
            lo, hi = min(ps), max(ps)
            shown = percent(lo) if math.isclose(lo, hi) else f"{percent(lo)}-{percent(hi)}"
            parts.append(f"{words[k]} {shown}")
        return ", ".join(parts)

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


# ----------------------------------------------------------------------------- the store
def _utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


ID_RE = re.compile(r"[0-9a-f]{16}")
"""Shape of game and upload ids (the server makes them; anything else is refused)."""


class GameStore:
    """The games in memory, the uploaded scenarios and the safe models of a ``runs`` folder.

    Args:
        runs_dir: logs go to ``<runs_dir>/serve/games/<id>.jsonl``, scenario files the server
            writes (uploads, overrides) to ``<runs_dir>/serve/scenarios/``.
        idle_seconds: a game untouched this long is closed (its log gets its end line) and
            dropped from memory; its log stays downloadable.
        max_games: most games kept in memory at once (more: 503 until some expire).
    """

    def __init__(self, runs_dir: str | Path, *, idle_seconds: float = 1800, max_games: int = 500):
        self.runs_dir = Path(runs_dir)
        self.games_dir = self.runs_dir / "serve" / "games"
        self.scenarios_dir = self.runs_dir / "serve" / "scenarios"
        self.games_dir.mkdir(parents=True, exist_ok=True)
        self.scenarios_dir.mkdir(parents=True, exist_ok=True)
        self.idle_seconds = idle_seconds
        self.max_games = max_games
        self._games: dict[str, Game] = {}
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ options
    def models(self, edition_id: str) -> list[dict[str, str]]:
        """Models in formats that run no code from the file, for an edition.

        Trained networks in psygym's safe format (``.safetensors`` weights with a ``.json``
        description of the same stem: the shipped pretrained models and those under the runs
        folder) and tuned-parameter files (``best.json``, except those that point at a pickled
        SB3 archive). Each gets an id ``model:<sha>`` the page may send; the page never sends
        a path, and an SB3 ``.zip`` (pickles) is never offered.
        """
        found: list[tuple[Path, str, str]] = []  # (file, spec prefix, title)
        folders = [self.runs_dir]
        try:
            from psygym_agents.sb3 import PRETRAINED_DIR

            folders.insert(0, Path(PRETRAINED_DIR))
        except ImportError:  # the agents package is optional
            pass
        for folder in folders:
            for weights in sorted(folder.glob("**/*.safetensors")):
                doc = _read_json(weights.with_suffix(".json"))
                if doc is None or doc.get("edition") != edition_id or not _fits(doc):
                    continue
                where = "shipped" if folder != self.runs_dir else weights.relative_to(folder)
                title = (
                    f"trained model ({doc.get('algo', 'sb3')}, scenario "
                    f"{doc.get('scenario', '?')}, {where})"
                )
                found.append((weights, "sb3:", title))
        for path in sorted(self.runs_dir.glob("**/best.json")):
            doc = _read_json(path)
            if doc is None or doc.get("edition") != edition_id:
                continue
            if "family" not in doc or doc["family"] in UNSAFE_FAMILIES:
                continue
            title = f"tuned parameters ({path.relative_to(self.runs_dir)})"
            found.append((path, "tuned:", title))
        out = []
        for path, prefix, title in found:
            digest = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:16]
            out.append({"name": f"model:{digest}", "title": title, "spec": prefix + str(path)})
        return out

    def options(self) -> list[dict[str, Any]]:
        """Per edition: id, title, shipped scenarios, opponents (built-in agents, safe models)."""
        out = []
        for ed in registry.editions():
            scenarios = ed.scenario_names()
            try:
                rules = load(ed.id, ed.default_scenario)
            except ScenarioError:
                continue
            agents = [
                {"name": n, "description": describe_agent(n, rules)}
                for n in agent_names(rules)
                if n not in UNSAFE_AGENTS
            ]
            agents += [{"name": m["name"], "description": m["title"]} for m in self.models(ed.id)]
            out.append(
                {
                    "id": ed.id,
                    "title": ed.title,
                    "summary": ed.summary,
                    "information": str(ed.information),
                    "scenarios": scenarios,
                    "default_scenario": ed.default_scenario,
                    "agents": agents,
                    "default_agent": _reference_name(ed.id, agents),
                }
            )
        return out

    # ------------------------------------------------------------------ uploads
    def upload(self, text: str | bytes) -> dict[str, str]:
        """Validate an uploaded scenario TOML as ``psygym`` does and keep it under an id.

        Raises:
            BadRequest: too large, not UTF-8 TOML, or not a valid scenario (the message names
                the field and what is allowed).
        """
        raw = text.encode() if isinstance(text, str) else bytes(text)
        if len(raw) > MAX_UPLOAD_BYTES:
            raise BadRequest(f"the scenario file is larger than {MAX_UPLOAD_BYTES} bytes", 413)
        upload_id = secrets.token_hex(8)
        path = self.scenarios_dir / f"upload-{upload_id}.toml"
        path.write_bytes(raw)
        try:
            data = _read_scenario(raw, path)
            ed = read_edition(data, "uploaded scenario")
            rules = load(ed, path)
        except (ScenarioError, ValueError) as exc:
            path.unlink(missing_ok=True)
            raise BadRequest(_one_line(str(exc).replace(str(path), "uploaded scenario"))) from None
        return {
            "upload": upload_id,
            "edition": ed,
            "name": str(getattr(rules.scenario, "name", "uploaded")),
        }

    # ------------------------------------------------------------------ games
    def create(self, request: Mapping[str, Any]) -> Game:
        """Start a game from the page's choices.

        Keys: ``edition``, ``scenario`` (a shipped name) or ``upload`` (an upload id),
        ``opponent`` (a listed name), ``seat`` (0 or 1), ``seed`` (an integer), ``rounds``
        (optional: a shorter or longer game, setting the scenario's battle rounds or turns).

        Raises:
            BadRequest: any choice not among those offered.
        """
        self.sweep()
        with self._lock:
            if len(self._games) >= self.max_games:
                raise BadRequest("too many games in progress; try again later", 503)
        if not isinstance(request, Mapping):
            raise BadRequest("the request body must be a JSON object")
        seat = request.get("seat", 0)
        if seat not in (0, 1) or isinstance(seat, bool):
            raise BadRequest(f"seat must be 0 or 1, got {seat!r}")
        seed = request.get("seed", 0)
        if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2**63:
            raise BadRequest(f"seed must be a non-negative integer, got {seed!r}")
        rounds = request.get("rounds")
        if rounds is not None and (
            not isinstance(rounds, int) or isinstance(rounds, bool) or not 1 <= rounds <= 50
        ):
            raise BadRequest(f"rounds must be an integer from 1 to 50, got {rounds!r}")
        ed, path, scenario_label = self._scenario(request)
        data = _read_scenario(path.read_bytes(), path)
        if rounds is not None:
            game = dict(data.get("game", {}))
            keys = [k for k in LENGTH_KEYS if k in game] or [LENGTH_KEYS[0]]
            game[keys[0]] = rounds
            data = {**data, "game": game}
            try:
                text = toml_text(data)
            except ValueError as exc:
                raise BadRequest(f"cannot apply rounds to this scenario: {exc}") from None
            path = self.scenarios_dir / f"{path.stem}-rounds{rounds}-{secrets.token_hex(4)}.toml"
            path.write_text(text, encoding="utf-8")
        try:
            rules = load(ed.id, path)
        except ScenarioError as exc:
            raise BadRequest(_one_line(str(exc))) from None
        opponent_name = request.get("opponent") or _reference_name(ed.id, None)
        opponent = self._opponent(str(opponent_name), rules)
        shown_name = str(opponent_name)
        if shown_name.startswith("model:"):
            titles = {m["name"]: m["title"] for m in self.models(ed.id)}
            shown_name = titles.get(shown_name, shown_name)
        shipped = path.resolve().parent == Path(ed.scenario_dir).resolve()
        game_id = secrets.token_hex(8)
        header = {
            "edition": ed.id,
            "scenario": str(getattr(rules.scenario, "name", scenario_label)),
            "scenario_arg": path.stem if shipped else str(path.resolve()),
            "scenario_path": str(path.resolve()),
            "scenario_sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
            "seed": seed,
            "seat": seat,
            "opponent": str(getattr(opponent, "name", opponent_name)),
            "command": "psygym serve",
            "started": _utc_now(),
        }
        log = LogWriter(self.games_dir / f"{game_id}.jsonl", header)
        info = {
            "edition": ed.id,
            "edition_title": ed.title,
            "scenario": header["scenario"],
            "seed": seed,
            "rounds": rounds,
        }
        try:
            game = Game(
                game_id, rules, opponent, shown_name,
                seat=seat, seed=seed, log=log, info=info,
            )  # fmt: skip
        except Exception:
            log.close()
            raise
        with self._lock:
            self._games[game_id] = game
        return game

    def _scenario(self, request: Mapping[str, Any]) -> tuple[Any, Path, str]:
        upload = request.get("upload")
        if upload:
            if not isinstance(upload, str) or not ID_RE.fullmatch(upload):
                raise BadRequest(f"unknown upload {upload!r}", 404)
            path = self.scenarios_dir / f"upload-{upload}.toml"
            if not path.is_file():
                raise BadRequest(f"unknown upload {upload!r}", 404)
            data = _read_scenario(path.read_bytes(), path)
            return registry.get(read_edition(data, "uploaded scenario")), path, "uploaded"
        name = request.get("edition")
        try:
            ed = registry.get(str(name)) if name else registry.default()
        except ValueError as exc:
            raise BadRequest(str(exc)) from None
        scenario = request.get("scenario") or ed.default_scenario
        if scenario == "default":
            scenario = ed.default_scenario
        if scenario not in ed.scenario_names():
            raise BadRequest(
                f"unknown scenario {scenario!r} for {ed.title}; "
                f"shipped: {', '.join(ed.scenario_names())}"
            )
        return ed, Path(ed.scenario_dir) / f"{scenario}.toml", str(scenario)

    def _opponent(self, name: str, rules: Any) -> Any:
        if name.startswith("model:"):
            found = [m for m in self.models(rules.edition) if m["name"] == name]
            if not found:
                raise BadRequest(f"unknown model {name!r}")
            spec = found[0]["spec"]
        elif name in UNSAFE_AGENTS or name not in agent_names(rules):
            allowed = [n for n in agent_names(rules) if n not in UNSAFE_AGENTS]
            raise BadRequest(f"unknown opponent {name!r}; allowed: {', '.join(allowed)}")
        else:
            spec = name
        try:
            return resolve_policy(spec, rules)
        except (ValueError, OSError, ImportError) as exc:
            raise BadRequest(_one_line(f"cannot load opponent {name!r}: {exc}")) from None

    def get(self, game_id: str) -> Game:
        """The game with this id (touching it resets its idle time).

        Raises:
            BadRequest: no such game in memory (404).
        """
        self.sweep()
        with self._lock:
            game = self._games.get(game_id)
        if game is None:
            raise BadRequest(f"unknown game {game_id!r} (it may have expired)", 404)
        game.touched = time.monotonic()
        return game

    def log_path(self, game_id: str) -> Path:
        """The log of a game that is over (also after it expired or the server restarted).

        Raises:
            BadRequest: a malformed id or no such log (404), or the game is still being
                played (409: the log holds what the player may not see yet).
        """
        if not ID_RE.fullmatch(game_id):
            raise BadRequest(f"unknown game {game_id!r}", 404)
        with self._lock:
            game = self._games.get(game_id)
        if game is not None and not game.over:
            raise BadRequest("the game log is served once the game is over", 409)
        path = self.games_dir / f"{game_id}.jsonl"
        if not path.is_file():
            raise BadRequest(f"unknown game {game_id!r}", 404)
        if game is None and not _has_end_line(path):
            raise BadRequest("the game log is served once the game is over", 409)
        return path

    def sweep(self) -> int:
        """Close and drop games idle longer than ``idle_seconds``; returns how many."""
        now = time.monotonic()
        with self._lock:
            idle = [g for g in self._games.values() if now - g.touched > self.idle_seconds]
            for g in idle:
                del self._games[g.id]
        for g in idle:
            g.expire()
        return len(idle)

    def close(self) -> None:
        """Close every game's log (at server shutdown)."""
        with self._lock:
            games = list(self._games.values())
            self._games.clear()
        for g in games:
            g.expire()

    def __len__(self) -> int:
        with self._lock:
            return len(self._games)


def _reference_name(edition_id: str, agents: list[dict[str, str]] | None) -> str:
    """The default AI: ``search`` where the players see the whole board, else the reference."""
    from psygym.policies import bots_for

    if not registry.get(edition_id).hidden_information and (
        agents is None or any(a["name"] == "search" for a in agents)
    ):
        return "search"
    bots = bots_for(edition_id)
    if bots is not None:
        return bots.reference
    return agents[0]["name"] if agents else "random"


def _read_scenario(raw: bytes, path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise BadRequest("the scenario file is not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise BadRequest(_one_line(f"the scenario file is not valid TOML: {exc}")) from None


def _fits(doc: Mapping[str, Any]) -> bool:
    """Whether a safe model's spaces match its scenario's rules today (stale models are hidden)."""
    try:
        rules = load(str(doc["edition"]), str(doc["scenario"]))
        obs = list(doc["observation_space"]["shape"])
        n = int(doc["action_space"]["n"])
    except (KeyError, TypeError, ValueError):
        return False
    return obs == [rules.observation_size] and n == rules.num_actions


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def _has_end_line(path: Path) -> bool:
    try:
        last = path.read_text(encoding="utf-8").strip().rsplit("\n", 1)[-1]
        return json.loads(last).get("type") == "end"
    except (OSError, ValueError, AttributeError):
        return False


def _one_line(text: str) -> str:
    return " ".join(text.split())


__all__ = [
    "BadRequest", "Entry", "Game", "GameStore", "LogWriter", "toml_text",
]  # fmt: skip
