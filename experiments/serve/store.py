"""The games of ``psygym serve`` in one place: created, found, played on, saved and resumed.

:class:`GameStore` holds every :class:`~psygym_experiments.serve.games.Game` of a server, in
memory and as logs in its folder: it checks what a request asks for (an edition, a scenario, a
shorter game, an uploaded army list, a random battle) before anything is loaded, writes the
scenario files it needs inside its folder, and finds a game again by its id.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import secrets
import threading
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from psygym_experiments.harness.gamelog import (  # noqa: F401 - LOG_FORMAT re-exported
    LOG_FORMAT,
    GameLog,
    state_text,
)
from psygym_experiments.play_session import scenario_info
from psygym_experiments.serve.games import (
    LENGTH_KEYS,
    MAX_UPLOAD_BYTES,
    PATH_FIELD_SUFFIX,
    BadRequest,
    Game,
    LogWriter,
)
from psygym_experiments.serve.opponents import find as find_opponent
from psygym_experiments.serve.opponents import offered, saved_models, title_of

from psygym import edition as registry
from psygym.editions import load
from psygym.generator import MAX_SEED, RANDOM_PREFIX
from psygym.policies import resolve_policy
from psygym.scenario import ScenarioError, read_edition, read_toml, toml_text


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


__all__ = ["GameStore", "refuse_path_fields"]
