"""The games of ``psygym serve`` in one place: created, found, played on and logged.

:class:`GameStore` holds every :class:`~psygym_experiments.serve.games.Game` of a server, in
memory and as logs in its folder: it checks what a request asks for (an edition, a scenario, a
shorter game, an uploaded army list, a random battle) before anything is loaded, writes the
scenario files it needs inside its folder, and finds a game again by its id.

A game is played only while it is in memory: once it expires or the server stops, its log gets
its end line, and from then on (also after a restart) the log can be downloaded and replayed
(``psygym replay``) but the game cannot be played on.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import secrets
import sys
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
from psygym.generator import MAX_SEED, RANDOM_PREFIX, Limits
from psygym.policies import resolve_policy
from psygym.scenario import ScenarioError, read_edition, read_toml, toml_text


def _utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


ID_RE = re.compile(r"[0-9a-f]{16}")
"""Shape of game and upload ids (the server makes them; anything else is refused)."""

MAX_GAME_SEED = 2**63 - 1
"""Largest ``seed`` of a game (it seeds numpy's generators)."""


@dataclasses.dataclass(frozen=True)
class Lengths:
    """The ``rounds`` a game of one edition may ask for (:func:`lengths_of`).

    The one source of the page's limit, the server's check and its message.

    Attributes:
        key: the ``[game]`` setting the override sets in a scenario file (one of
            :data:`LENGTH_KEYS`), or ``None``: the edition's scenarios declare no length.
        low, high: the values that setting allows (its ``ge`` and ``le`` in the spec).
        random_low, random_high: the battle rounds a random battle allows (the generator's
            :class:`~psygym.generator.Limits`); ``None`` without a generator.
    """

    key: str | None
    low: int
    high: int
    random_low: int | None = None
    random_high: int | None = None

    def allowed(self, random_battle: bool) -> tuple[int, int] | None:
        """The fewest and most ``rounds`` of a scenario file or of a random battle."""
        if random_battle:
            if self.random_low is None or self.random_high is None:
                return None
            return self.random_low, self.random_high
        return None if self.key is None else (self.low, self.high)

    def page(self) -> dict[str, Any]:
        """What the page needs: the setting's name and the bounds of both kinds of game."""
        return {
            "key": self.key,
            "min": self.low,
            "max": self.high,
            "random_min": self.random_low,
            "random_max": self.random_high,
        }


def lengths_of(ed: Any, rules: Any) -> Lengths:
    """The game lengths edition ``ed`` allows, read from its scenario format and generator.

    ``rules`` are the edition's rules on any scenario: the model of their scenario
    (``rules.scenario``, a pydantic spec) declares the ``[game]`` length setting and its bounds
    (``Field(ge=..., le=...)``), so the limit the page offers is the limit validation applies.
    """
    model = type(getattr(rules, "scenario", None))
    game = getattr(model, "model_fields", {}).get("game")
    fields = getattr(getattr(game, "annotation", None), "model_fields", {})
    key = next((k for k in LENGTH_KEYS if k in fields), None)
    low, high = 1, 0
    if key is not None:
        bounds = {b: getattr(m, b) for m in fields[key].metadata for b in ("ge", "le")
                  if hasattr(m, b)}  # fmt: skip
        low, high = int(bounds.get("ge", 1)), int(bounds.get("le", sys.maxsize))
    if ed.generator is None:
        return Lengths(key, low, high)
    # Each shipped generator checks its options against its module's LIMITS
    # (psygym.generator.check_options); one without them gets the shared default rounds.
    module = sys.modules.get(getattr(registry.resolve(ed.generator), "__module__", ""))
    limits = getattr(module, "LIMITS", None)
    rounds = limits.rounds if isinstance(limits, Limits) else Limits(mastery=(1, 1)).rounds
    return Lengths(key, low, high, rounds[0], rounds[1])


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
        self._lengths: dict[str, Lengths] = {}
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
            lengths = self._lengths.setdefault(ed.id, lengths_of(ed, rules))
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
                    "rounds": lengths.page(),
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

    def lengths(self, ed: Any) -> Lengths:
        """The ``rounds`` edition ``ed`` allows (:func:`lengths_of`, read once per edition).

        Raises:
            BadRequest: the edition's default scenario does not load (naming it).
        """
        found = self._lengths.get(ed.id)
        if found is None:
            try:
                rules = load(ed.id, ed.default_scenario)
            except ScenarioError as exc:
                raise BadRequest(_one_line(str(exc))) from None
            found = self._lengths.setdefault(ed.id, lengths_of(ed, rules))
        return found

    # ------------------------------------------------------------------ games
    def create(self, request: Mapping[str, Any]) -> Game:
        """Start a game from the page's choices.

        Keys: ``edition``, ``scenario`` (a shipped name) or ``upload`` (an upload id) or
        ``random`` (the seed of a random battle: the army list the edition's generator draws,
        :mod:`psygym.generator`), ``opponent`` (a listed name), ``seat`` (0 or 1), ``seed`` (an
        integer), ``rounds`` (optional: a shorter or longer game, setting the scenario's battle
        rounds or turns, within the edition's limits: :meth:`lengths`).

        Every number is checked (an integer, not a float or a boolean, in range) before
        anything is loaded or written; a request refused later (an opponent that does not fit)
        leaves no file behind.

        Raises:
            BadRequest: any choice not among those offered.
        """
        self.sweep()
        with self._lock:
            if len(self._games) >= self.max_games:
                raise BadRequest("too many games in progress; try again later", 503)
        if not isinstance(request, Mapping):
            raise BadRequest("the request body must be a JSON object")
        seat = integer_field(request, "seat", 0, (0, 1), "0 or 1")
        seed = integer_field(
            request, "seed", 0, (0, MAX_GAME_SEED), f"an integer from 0 to {MAX_GAME_SEED}"
        )
        integer_field(request, "random", None, (0, MAX_SEED), f"a seed from 0 to {MAX_SEED}")
        rounds = integer_field(request, "rounds", None, None, "an integer")
        ed, path, scenario_label = self._scenario(request)
        if rounds is not None:
            self._check_rounds(ed, rounds, random_battle=path is None)
        written: Path | None = None
        try:
            if path is None:
                rules, where = self._random_battle(ed, scenario_label, rounds)
            else:
                rules, where, written = self._shipped_or_uploaded(ed, path, rounds)
            opponent_name = request.get("opponent") or _reference_name(ed.id, None)
            opponent = self._opponent(str(opponent_name), rules, scenario_label, 1 - seat)
        except Exception:
            if written is not None:
                written.unlink(missing_ok=True)
            raise
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
            # A game that never reached the player leaves no log and no scenario file.
            log.close()
            log.path.unlink(missing_ok=True)
            if written is not None:
                written.unlink(missing_ok=True)
            raise
        with self._lock:
            self._games[game_id] = game
        return game

    def _check_rounds(self, ed: Any, rounds: int, *, random_battle: bool) -> None:
        """Refuse ``rounds`` outside what the edition's scenarios (or its generator) allow."""
        allowed = self.lengths(ed).allowed(random_battle)
        kind = "random battle" if random_battle else "scenario"
        if allowed is None:
            raise BadRequest(
                f"rounds cannot be set for a {ed.title} {kind} (allowed: leave rounds out)"
            )
        low, high = allowed
        if not low <= rounds <= high:
            what = "battle rounds" if random_battle else str(self.lengths(ed).key)
            raise BadRequest(
                f"rounds {rounds} is out of range for a {ed.title} {kind} "
                f"(allowed: {low} to {high} {what.replace('_', ' ')})"
            )

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
    ) -> tuple[Any, dict[str, Any], Path | None]:
        """The rules and log header fields of a scenario file, with ``rounds`` applied.

        Also the file written for the override (``None`` without one), which the caller
        removes if the game is not created after all.

        Raises:
            BadRequest: the scenario does not validate with ``rounds`` applied; the file
                written is removed and the message names the scenario, not a path.
        """
        data = _read_scenario(path)
        written = None
        if rounds is not None:
            game = dict(data.get("game", {}))
            limit = game.get("phase_limit")
            if limit is not None:  # the game ends after that many phases, whatever its rounds
                raise BadRequest(
                    f"rounds cannot be set for {_scenario_name(data, path)}: it ends "
                    f"after phase_limit = {limit} Psychic phase(s) (allowed: leave rounds out)"
                )
            game[self.lengths(ed).key or LENGTH_KEYS[0]] = rounds
            data = {**data, "game": game}
            try:
                text = toml_text(data)
            except ValueError as exc:
                raise BadRequest(f"cannot apply rounds to this scenario: {exc}") from None
            written = self.scenarios_dir / f"{path.stem}-rounds{rounds}-{secrets.token_hex(4)}.toml"
            written.write_text(text, encoding="utf-8")
        shown = _scenario_name(data, path)
        try:
            rules = load(ed.id, written or path)
        except ScenarioError as exc:
            if written is not None:
                written.unlink(missing_ok=True)
            message = str(exc).replace(str(written or path), shown)
            raise BadRequest(_one_line(message)) from None
        path = written or path
        shipped = path.resolve().parent == Path(ed.scenario_dir).resolve()
        return rules, {
            "scenario": str(getattr(rules.scenario, "name", path.stem)),
            "scenario_arg": path.stem if shipped else str(path.resolve()),
            "scenario_path": str(path.resolve()),
            "scenario_sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        }, written  # fmt: skip

    def _scenario(self, request: Mapping[str, Any]) -> tuple[Any, Path | None, str]:
        """The edition, the scenario file (``None`` for a random battle) and its label."""
        upload = request.get("upload")
        battle = request.get("random")  # checked by create
        if battle is not None and upload is not None:
            raise BadRequest("a game is a random battle or an uploaded scenario, not both")
        if upload is not None:
            if not isinstance(upload, str) or not ID_RE.fullmatch(upload):
                raise BadRequest(
                    f"upload must be the id POST /api/scenarios answered (16 hexadecimal "
                    f"digits), got {upload!r}"
                )
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


def integer_field(
    request: Mapping[str, Any],
    key: str,
    default: int | None,
    bounds: tuple[int, int] | None,
    allowed: str,
    *,
    required: bool = False,
) -> Any:
    """``request[key]`` (``default`` if absent): an int, not a float or a bool, in ``bounds``.

    The one check of every number a request sends (the game's choices here, the ``step`` of an
    action in :mod:`.app`). ``None`` is returned only where ``default`` is ``None`` and the
    field is not ``required`` (an optional field left out); a ``required`` one must hold an
    integer, so ``None`` is refused too.

    Raises:
        BadRequest: naming the field, what was sent and ``allowed``.
    """
    value = request.get(key, default)
    if value is None and default is None and not required:
        return None
    whole = isinstance(value, int) and not isinstance(value, bool)
    if not whole or (bounds is not None and not bounds[0] <= value <= bounds[1]):
        raise BadRequest(f"{key} must be {allowed}, got {value!r}")
    return value


def _scenario_name(data: Mapping[str, Any], path: Path) -> str:
    """How messages name a scenario file the server holds: its ``name``, never its path."""
    name = data.get("name")
    return f"scenario {name!r}" if isinstance(name, str) and name else f"scenario {path.stem!r}"


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


__all__ = ["GameStore", "integer_field", "refuse_path_fields"]
