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
import hashlib
import json
import math
import re
import secrets
import threading
import time
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
from psygym_experiments.harness.odds_view import percent
from psygym_experiments.harness.player_view import HIDDEN_OUTCOME, SECRET_CHOICE, PlayerView
from psygym_experiments.play_session import scenario_info
from psygym_experiments.serve.opponents import find as find_opponent
from psygym_experiments.serve.opponents import offered, saved_models, title_of

from psygym import edition as registry
from psygym.core import CHANCE, TERMINAL, Event, IllegalActionError
from psygym.editions import load
from psygym.generator import MAX_SEED, RANDOM_PREFIX
from psygym.kernel import weighted_choice
from psygym.policies import describe_agent, resolve_policy
from psygym.scenario import ScenarioError, read_edition, read_toml, toml_text

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
"""Iterations of the information-set search for hints in editions with hidden information."""


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
            text = f"{shown.label} (chance {percent(shown.probability)})"
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
        if not self.player_view.laws_public:
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
            from psygym_experiments.harness.advice import lookahead_agent

            try:
                self._hint_search = lookahead_agent(self.rules)
            except ImportError:
                self._hint_search = False
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
        from psygym_experiments.harness.output import output_folder

        for folder in (self.games_dir, self.scenarios_dir):  # no link may lead out of runs_dir
            output_folder(folder, self.runs_dir)
        self.idle_seconds = idle_seconds
        self.max_games = max_games
        self._games: dict[str, Game] = {}
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ options
    def models(self, edition_id: str) -> list[dict[str, Any]]:
        """The saved models offered for an edition (:func:`.opponents.saved_models`).

        Each has ``name`` (``model:<sha>``, what the page sends: never a path), ``title``,
        ``description``, ``spec``, and the ``scenario`` and ``seat`` it fits.
        """
        return [dataclasses.asdict(m) for m in saved_models(self.runs_dir, edition_id)]

    def options(self) -> list[dict[str, Any]]:
        """Per edition: id, title, shipped scenarios, opponents (:func:`.opponents.offered`)."""
        out = []
        for ed in registry.editions():
            scenarios = ed.scenario_names()
            try:
                rules = load(ed.id, ed.default_scenario)
            except ScenarioError:
                continue
            agents = offered(rules, self.runs_dir)
            out.append(
                {
                    "id": ed.id,
                    "title": ed.title,
                    "summary": ed.summary,
                    "information": str(ed.information),
                    "scenarios": scenarios,
                    "default_scenario": ed.default_scenario,
                    "random_battle": ed.generator is not None,
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
            data = _read_scenario(path)
            refuse_path_fields(data)
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

        Keys: ``edition``, ``scenario`` (a shipped name) or ``upload`` (an upload id) or
        ``random`` (the seed of a random battle: the army list the edition's generator draws,
        :mod:`psygym.generator`), ``opponent`` (a listed name), ``seat`` (0 or 1), ``seed`` (an
        integer), ``rounds`` (optional: a shorter or longer game, setting the scenario's battle
        rounds or turns).

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
        if path is None:
            rules, where = self._random_battle(ed, scenario_label, rounds)
        else:
            rules, where = self._shipped_or_uploaded(ed, path, rounds)
        opponent_name = request.get("opponent") or _reference_name(ed.id, None)
        opponent = self._opponent(str(opponent_name), rules, scenario_label, 1 - seat)
        shown_name = title_of(str(opponent_name), self.runs_dir, ed.id)
        game_id = secrets.token_hex(8)
        header = {
            "edition": ed.id,
            **where,
            "seed": seed,
            "seat": seat,
            "opponent": str(getattr(opponent, "name", opponent_name)),
            "command": "psygym serve",
            "started": _utc_now(),
        }
        log = LogWriter(self.games_dir / f"{game_id}.jsonl", header, root=self.runs_dir)
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

    def _random_battle(
        self, ed: Any, scenario: str, rounds: int | None
    ) -> tuple[Any, dict[str, Any]]:
        """The rules and log header fields of a random battle (``random:SEED``)."""
        if rounds is not None:
            scenario = f"{scenario},rounds={rounds}"
        try:
            rules = load(ed.id, scenario)
            return rules, scenario_info(rules, ed.id, scenario)
        except ValueError as exc:  # a ScenarioError, or an edition without a generator
            raise BadRequest(_one_line(str(exc))) from None

    def _shipped_or_uploaded(
        self, ed: Any, path: Path, rounds: int | None
    ) -> tuple[Any, dict[str, Any]]:
        """The rules and log header fields of a scenario file (``rounds`` applied)."""
        data = _read_scenario(path)
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
        shipped = path.resolve().parent == Path(ed.scenario_dir).resolve()
        return rules, {
            "scenario": str(getattr(rules.scenario, "name", path.stem)),
            "scenario_arg": path.stem if shipped else str(path.resolve()),
            "scenario_path": str(path.resolve()),
            "scenario_sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        }

    def _scenario(self, request: Mapping[str, Any]) -> tuple[Any, Path | None, str]:
        """The edition, the scenario file (``None`` for a random battle) and its label."""
        upload = request.get("upload")
        battle = request.get("random")
        if battle is not None:
            if upload:
                raise BadRequest("a game is a random battle or an uploaded scenario, not both")
            whole = isinstance(battle, int) and not isinstance(battle, bool)
            if not whole or not 0 <= battle <= MAX_SEED:
                raise BadRequest(f"random must be a seed from 0 to {MAX_SEED}, got {battle!r}")
        if upload:
            if not isinstance(upload, str) or not ID_RE.fullmatch(upload):
                raise BadRequest(f"unknown upload {upload!r}", 404)
            path = self.scenarios_dir / f"upload-{upload}.toml"
            if not path.is_file():
                raise BadRequest(f"unknown upload {upload!r}", 404)
            data = _read_scenario(path)
            return registry.get(read_edition(data, "uploaded scenario")), path, "uploaded"
        name = request.get("edition")
        try:
            ed = registry.get(str(name)) if name else registry.default()
        except ValueError as exc:
            raise BadRequest(str(exc)) from None
        if battle is not None:
            return ed, None, f"{RANDOM_PREFIX}{battle}"
        scenario = request.get("scenario") or ed.default_scenario
        if scenario == "default":
            scenario = ed.default_scenario
        if scenario not in ed.scenario_names():
            raise BadRequest(
                f"unknown scenario {scenario!r} for {ed.title}; "
                f"shipped: {', '.join(ed.scenario_names())}"
            )
        return ed, Path(ed.scenario_dir) / f"{scenario}.toml", str(scenario)

    def _opponent(self, name: str, rules: Any, scenario: str, seat: int) -> Any:
        """The AI ``name`` (one offered for ``scenario`` with the AI in ``seat``)."""
        try:
            spec = find_opponent(name, self.runs_dir, rules, scenario, seat)
        except LookupError as exc:
            raise BadRequest(_one_line(str(exc.args[0]))) from None
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


def _read_scenario(path: Path) -> dict[str, Any]:
    """The data of a scenario file the server holds (:func:`psygym.scenario.read_toml`).

    Raises:
        BadRequest: not UTF-8 TOML, too large or nested too deeply (one line naming the file).
    """
    try:
        return read_toml(path)
    except ScenarioError as exc:
        raise BadRequest(_one_line(str(exc))) from None


def refuse_path_fields(data: Mapping[str, Any]) -> None:
    """Refuse scenario data that names a file: any field ending in :data:`PATH_FIELD_SUFFIX`.

    A scenario file may name another file to read (``powers_file``), relative to itself or
    absolute; an uploaded one must not, or it could open any file on the server.

    Raises:
        BadRequest: naming the first such field (a dotted path) and what is allowed.
    """
    stack: list[tuple[str, Any]] = [("", data)]
    while stack:
        prefix, node = stack.pop()
        items = node.items() if isinstance(node, Mapping) else enumerate(node)
        for key, value in items:
            dotted = f"{prefix}.{key}" if prefix else str(key)
            if isinstance(key, str) and key.endswith(PATH_FIELD_SUFFIX):
                raise BadRequest(
                    f"uploaded scenario: field {dotted} names a file on the server, which an "
                    "upload may not (allowed: leave it out and use the shipped data, or run "
                    "psygym on this machine with --scenario for a file of your own)"
                )
            if isinstance(value, (Mapping, list)):
                stack.append((dotted, value))


def _has_end_line(path: Path) -> bool:
    try:
        last = path.read_text(encoding="utf-8").strip().rsplit("\n", 1)[-1]
        return json.loads(last).get("type") == "end"
    except (OSError, ValueError, AttributeError):
        return False


def _one_line(text: str) -> str:
    return " ".join(text.split())


__all__ = [
    "PATH_FIELD_SUFFIX", "BadRequest", "Entry", "Game", "GameStore", "LogWriter",
    "refuse_path_fields", "toml_text",
]  # fmt: skip
