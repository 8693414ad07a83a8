"""Replay game logs through the rules (``psygym replay``): no random numbers, every step checked.

:func:`replay_log` applies the logged actions and chance outcomes of a log written by
:class:`psygym_experiments.play_session.GameLog`, checks every step against the rules and the
end line against the state reached (format in :mod:`psygym_experiments.harness.gamelog`). Every
line's chained hash is checked first, over the whole file: a changed, removed, reordered or
cut-off line is refused with the number of the first bad line, and so is a log without an end
line or without a chain. Then every field the writer writes is checked: the header's ``format``,
each step's count ``n`` and the end line's ``result`` (``"finished"`` exactly when the replay
reached the end of the game).

The scenario is loaded as the game loaded it: from the header's ``scenario_arg`` (a shipped
name, a random battle, or the full path of a scenario file of one's own). ``scenario_path`` is
where that file was; it is never read. For a file of one's own it is the same path as
``scenario_arg`` and for a random battle it is ``null``: anything else is refused. For a
shipped scenario it is where the game's psygym was installed, so another path (a log from
another installation) is ignored with a warning. ``scenario_sha256`` is compared with the hash
of the scenario replayed (a warning when it changed).

A log holds everything, so a replay shows everything by default. ``as_player`` shows it as that
player was shown the game (:class:`~psygym_experiments.harness.player_view.PlayerView`, the same
view as ``psygym play`` and ``psygym serve``): a card dealt to the other hand is not named, a
secret bid is revealed only with that player's own, and the final board is the player's view
unless the game ended.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Callable, Hashable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from psygym_experiments.common import printable
from psygym_experiments.harness.gamelog import (
    ChainError,
    check_format,
    check_log_path,
    read_json_lines,
    verify_chain,
)
from psygym_experiments.harness.player_view import PlayerView
from psygym_experiments.play_session import (
    Narrator,
    scenario_info,
    state_digest,
    state_text,
)
from rich.console import Console
from rich.markup import escape

from psygym.core import CHANCE, TERMINAL


class ReplayError(ValueError):
    """A game log that does not match the rules (or is not a game log)."""


@dataclass
class ReplayResult:
    """The state a replay reached and what the log said about it."""

    state: Hashable
    score: tuple[float, float]
    steps: int
    header: dict[str, Any]
    end: dict[str, Any] | None
    finished: bool = False
    """Whether the replay reached the end of the game (from the rules, not the log's claim)."""


def read_log(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for every non-blank line of a game log.

    Raises:
        ReplayError: ``path`` is a folder, or a line is not a JSON object (not UTF-8 text, not
            JSON, nested too deeply or holding a number too long to read); the message names the
            file and the line.
        FileNotFoundError: no file at ``path``.
    """
    p = check_log_path(path, ReplayError)
    try:
        yield from read_json_lines(p, ReplayError)
    except ReplayError:
        raise
    except (ValueError, RecursionError):  # raised by decoding or json.loads, outside its checks
        n, why = _unreadable_line(p)
        raise ReplayError(f"{p}: line {n}: {why}; a game log is JSON Lines text") from None


def _unreadable_line(path: Path) -> tuple[int | str, str]:
    """The first line of ``path`` that :func:`read_log` cannot read, and why."""
    with path.open(encoding="utf-8", errors="surrogateescape") as f:
        for n, line in enumerate(f, start=1):
            if not line.strip():
                continue
            if any("\udc80" <= ch <= "\udcff" for ch in line):  # bytes that are not UTF-8
                return n, "not UTF-8 text"
            try:
                json.loads(line)
            except RecursionError:
                return n, "JSON nested too deeply"
            except json.JSONDecodeError as exc:
                return n, f"not valid JSON ({exc.msg})"
            except ValueError:
                limit = sys.get_int_max_str_digits()
                return n, f"a number longer than {limit} digits"
    return "?", "unreadable"


def read_chained_log(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """:func:`read_log` with every line's hash checked against the previous line's.

    Raises:
        ReplayError: a line is not a JSON object, or the hash chain is missing or broken.
    """
    try:
        yield from verify_chain(read_log(path), str(path))  # type: ignore[misc]
    except ChainError as exc:
        raise ReplayError(str(exc)) from None


def load_logged_rules(header: Mapping[str, Any], where: str) -> Any:
    """Rules of a logged game, loaded as the game loaded them (:func:`_scenario_arg`)."""
    from psygym.editions import load

    edition = header.get("edition")
    if not edition:
        raise ReplayError(f"{where}: the header has no edition")
    if not isinstance(edition, str):
        raise ReplayError(
            f"{where}: the header's edition is {_json(edition)}; allowed: an edition id such "
            'as "7th" (a string)'
        )
    return load(str(edition), _scenario_arg(header))


def _scenario_arg(header: Mapping[str, Any]) -> str:
    """The scenario argument the game was played with: a shipped name, random battle or path."""
    return str(header.get("scenario_arg") or header.get("scenario") or "default")


def replay_log(
    path: str | Path,
    console: Console | None = None,
    *,
    quiet: bool = False,
    on_warning: Callable[[str], None] | None = None,
    as_player: int | None = None,
) -> ReplayResult:
    """Replay a game log through the rules and check it reaches the logged final state.

    Args:
        path: the ``.jsonl`` log.
        console: where the transcript goes (nothing is printed when ``quiet``).
        quiet: print no transcript.
        on_warning: called with warnings (the scenario file changed since the game, or the
            log names a shipped scenario's file where this psygym does not have it).
        as_player: show the game as this player (0 or 1) was shown it, not everything.

    Raises:
        ReplayError: the log does not match the rules: an illegal action or chance outcome, a
            wrong player, label or step count ``n`` at line N, or a final state, score, step
            count, game end or result other than logged; or a header or end line field that is
            not of the allowed kind (a format other than this psygym's, a seat that is not a
            player, a scenario_path other than its scenario's, a score that is not two
            numbers...).
    """
    console = console or Console(highlight=False, soft_wrap=True)
    for _ in read_chained_log(path):  # the whole chain first, then what the lines say
        pass
    lines = read_chained_log(path)
    first = next(lines, None)
    if first is None or first[1].get("type") != "header":
        raise ReplayError(
            f'{path}: line 1: expected the game header ({{"type": "header", "edition": ..., ...}})'
        )
    _, header = first
    check_format(header, f"{path}: line 1", ReplayError)
    rules = load_logged_rules(header, f"{path}: line 1")
    _check_scenario(rules, header, f"{path}: line 1", on_warning or (lambda _: None))
    seat = header.get("seat")
    if seat not in (0, 1) or isinstance(seat, bool):
        shown = "missing" if "seat" not in header else _json(seat)
        raise ReplayError(
            f"{path}: line 1: the header's seat is {shown}; allowed: 0 or 1 (the player the "
            "human played)"
        )
    game_seed = header.get("seed")
    if not isinstance(game_seed, int) or isinstance(game_seed, bool) or game_seed < 0:
        shown = "missing" if "seed" not in header else _json(game_seed)
        raise ReplayError(
            f"{path}: line 1: the header's seed is {shown}; allowed: a whole number 0 or more "
            "(the game's seed, as play and serve write it)"
        )
    if as_player not in (None, 0, 1):
        raise ReplayError(f"--as-player {as_player} is not a player; allowed: 0, 1")
    other = "human" if seat != as_player else f"AI: {header.get('opponent')}"
    narrator = Narrator(rules, console, as_player, other, human=seat)
    view = None if as_player is None else PlayerView(rules, as_player)
    if not quiet:
        console.print(
            f"[bold]Replay[/bold] of {_shown(path)}: {_shown(rules.edition)}, scenario "
            f"{_shown(header.get('scenario'))}, seed {_shown(header.get('seed'))}, human seat "
            f"{seat}, opponent {_shown(header.get('opponent'))}",
            highlight=False,
            soft_wrap=True,
        )
    state = rules.initial_state()
    steps = 0
    end: dict[str, Any] | None = None
    end_line = 0
    for n, obj in lines:
        where = f"{path}: line {n}"
        kind = obj.get("type")
        if end is not None:
            raise ReplayError(f"{where}: a line after the end line")
        if kind == "end":
            end, end_line = obj, n
            continue
        if kind != "step":
            raise ReplayError(f"{where}: unknown line type {kind!r} (allowed: step, end)")
        state = _replay_step(rules, state, obj, where, None if quiet else narrator, view, steps + 1)
        steps += 1
    score = tuple(float(x) for x in rules.returns(state))
    if end is None:
        raise ReplayError(
            f"{path}: line {steps + 2}: no end line after {steps} steps (a complete log ends "
            'with {"type": "end", ...}; the file was cut off or the game was interrupted)'
        )
    _check_end(rules, state, steps, end, f"{path}: line {end_line} (the end line)")
    finished = bool(rules.is_terminal(state))
    if not quiet:
        console.print()
        everything = as_player is None or finished
        narrator.text(rules.render(state, None if everything else as_player))
        status = "finished" if finished else "not finished"
        console.print(
            f"Replayed {steps} steps ({status}): score {score[0]:+.2f} for player 0, "
            f"state {state_digest(state)[:12]}; matches the log.",
            highlight=False,
            soft_wrap=True,
        )
    return ReplayResult(state, score, steps, dict(header), end, finished)


def _check_scenario(
    rules: Any, header: Mapping[str, Any], where: str, on_warning: Callable[[str], None]
) -> None:
    """Check the header's scenario fields against the scenario replayed (``rules``).

    The fields are made again from the scenario as :func:`load_logged_rules` loaded it, by the
    writer's own :func:`~psygym_experiments.play_session.scenario_info` (a scenario file hashed
    as it is now, a random battle generated again), so ``scenario_path`` is compared, never read.

    Raises:
        ReplayError: ``scenario_path`` is not the file of a scenario of one's own that
            ``scenario_arg`` names, or not ``null`` for a random battle; ``scenario_sha256`` is
            not a SHA-256 in hex.
    """
    arg = _scenario_arg(header)
    now = scenario_info(rules, str(rules.edition), arg)
    path = now["scenario_path"]
    # The writer logs a shipped scenario by name and any other file by its full path.
    shipped = path is not None and now["scenario_arg"] != path
    if "scenario_path" in header and header["scenario_path"] != path:
        logged = _json(header["scenario_path"])
        if path is None:
            raise ReplayError(
                f"{where}: the header's scenario_path is {logged}, but a random battle "
                f"({printable(arg)}) has no file; allowed: null"
            )
        if not shipped:
            raise ReplayError(
                f"{where}: the header's scenario_path is {logged}, but its scenario_arg names "
                f"the file {printable(path)}; allowed: {printable(path)} (the game's scenario "
                "file, which replay loads)"
            )
        on_warning(
            f"the header's scenario_path {logged} is not where this psygym has the shipped "
            f"scenario {printable(arg)} ({printable(path)}): ignored, the shipped one is "
            "replayed (the log comes from another installation, or was edited)"
        )
    sha = header.get("scenario_sha256")
    if sha is None:
        return
    if not isinstance(sha, str) or not re.fullmatch(r"[0-9a-f]{64}", sha):
        raise ReplayError(
            f"{where}: the header's scenario_sha256 is {_json(sha)}; allowed: a SHA-256 in hex "
            "(64 lowercase hexadecimal digits, as the writer writes it)"
        )
    if sha == now["scenario_sha256"]:
        return
    if path is None:
        on_warning(
            f"the random battle {printable(arg)} is not the army list the game was played on "
            "(its scenario_sha256 differs): this psygym generates it differently, or the log "
            "was edited"
        )
    elif shipped:
        on_warning(
            f"the shipped scenario {printable(arg)} ({printable(path)}) is not the one the game "
            "was played on (its sha256 differs from the log's scenario_sha256): this psygym "
            "ships another version of it, or the log was edited"
        )
    else:
        on_warning(
            f"the scenario file {printable(path)} changed since the game was played (its "
            "sha256 differs from the log's scenario_sha256)"
        )


def _replay_step(
    rules: Any,
    state: Hashable,
    obj: Mapping[str, Any],
    where: str,
    narrator: Narrator | None,
    view: PlayerView | None,
    count: int,
) -> Hashable:
    """The state after the step ``obj`` (the ``count``-th), checked against the rules."""
    if "n" not in obj or type(obj["n"]) is not int or obj["n"] != count:
        shown = "missing" if "n" not in obj else _json(obj["n"])
        raise ReplayError(
            f'{where}: "n" is {shown}; allowed: {count} (the writer counts the steps from 1, '
            "one by one)"
        )
    player = rules.current_player(state)
    logged = obj.get("player")
    action = obj.get("action")
    if not isinstance(action, int) or isinstance(action, bool):
        raise ReplayError(f"{where}: action {action!r} is not an integer")
    if player == TERMINAL:
        raise ReplayError(f"{where}: the game is already over, but the log goes on")
    expected = "chance" if player == CHANCE else player
    if logged != expected:
        raise ReplayError(f"{where}: the log says {logged!r} moves, the rules say {expected!r}")
    try:
        nxt, events = rules.apply_with_events(state, action)
    except ValueError as exc:  # IllegalActionError
        raise ReplayError(f"{where}: {exc}") from None
    label = rules.action_label(state, action)
    if "label" in obj and obj["label"] != label:
        raise ReplayError(
            f"{where}: action {action} is {label!r} under the rules, "
            f"but the log says {obj['label']!r}"
        )
    if narrator is not None:
        p = dict(rules.chance_outcomes(state)).get(action) if player == CHANCE else None
        if view is not None:
            narrator.show(view.see(state, action, events, p))
        elif player == CHANCE:
            narrator.chance(label, p, events)
        else:
            narrator.decision(player, label, events)
    return nxt


_RESULTS = ("finished", "quit", "error")
"""The ``result`` values the game-log writer puts on the end line."""


def _check_end(rules: Any, state: Hashable, steps: int, end: Mapping[str, Any], where: str) -> None:
    """Check the end line's fields are of the kind the writer puts there and match the replay."""
    _end_field(end, "steps", where, _is_count, "a whole number of steps")
    _end_field(end, "score", where, _is_score, "a list of two numbers (player 0's, player 1's)")
    _end_field(end, "terminal", where, lambda v: isinstance(v, bool), "true or false")
    _end_field(end, "result", where, lambda v: v in _RESULTS, ", ".join(_RESULTS))
    _end_field(end, "state_sha256", where, lambda v: isinstance(v, str), "a SHA-256 in hex")
    if end["steps"] != steps:
        raise ReplayError(f"{where}: logs {end['steps']} steps, the file holds {steps}")
    score = [float(x) for x in rules.returns(state)]
    logged = end["score"]
    if not all(
        math.isclose(a, float(b), rel_tol=1e-9, abs_tol=1e-9) for a, b in zip(score, logged)
    ):
        raise ReplayError(f"{where}: the replay scores {score}, the log says {logged}")
    terminal = bool(rules.is_terminal(state))
    if end["terminal"] != terminal:
        raise ReplayError(
            f"{where}: the log says terminal={_json(end['terminal'])}, the replay "
            f"reached terminal={_json(terminal)}"
        )
    if end["result"] == "finished" and not terminal:
        raise ReplayError(
            f'{where}: the log says the game "finished", but after its {steps} steps the replay '
            "reached a game that goes on"
        )
    if end["result"] != "finished" and terminal:
        raise ReplayError(
            f'{where}: the log says the game ended by "{end["result"]}", but after its {steps} '
            'steps the replay reached the end of the game; allowed: "finished" (the result '
            "the writer gives a game played to its end)"
        )
    if end["state_sha256"] != state_digest(state):
        raise ReplayError(
            f"{where}: the replay reached another final state than the log's\n"
            f"  replay: {state_text(state)}\n  log:    {end.get('state')}"
        )


def _end_field(
    end: Mapping[str, Any], key: str, where: str, ok: Callable[[Any], bool], allowed: str
) -> None:
    if key not in end:
        raise ReplayError(f'{where}: no "{key}" (every end line has one); allowed: {allowed}')
    if not ok(end[key]):
        raise ReplayError(f'{where}: "{key}" is {_json(end[key])}; allowed: {allowed}')


def _is_number(value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an int too large for a float
        return False


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _is_score(value: Any) -> bool:
    return isinstance(value, list) and len(value) == 2 and all(_is_number(x) for x in value)


def _shown(value: Any) -> str:
    """A header field for the transcript's first line: no markup, control characters escaped."""
    return escape(printable(str(value)))


def _json(value: Any, limit: int = 60) -> str:
    """``value`` as the JSON it was read from, cut short when long."""
    text = json.dumps(value, default=str)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


__all__ = ["ReplayError", "ReplayResult", "read_chained_log", "read_log", "replay_log"]
