"""Replay game logs through the rules (``psygym replay``): no random numbers, every step checked.

:func:`replay_log` applies the logged actions and chance outcomes of a log written by
:class:`psygym_experiments.play_session.GameLog`, checks every step against the rules and the
end line against the state reached (format in :mod:`psygym_experiments.harness.gamelog`). Every
line's chained hash is checked first: a changed, removed, reordered or cut-off line is refused
with the number of the first bad line, and so is a log without an end line or without a chain.

A log holds everything, so a replay shows everything by default. ``as_player`` shows it as that
player was shown the game (:class:`~psygym_experiments.harness.player_view.PlayerView`, the same
view as ``psygym play`` and ``psygym serve``): a card dealt to the other hand is not named, a
secret bid is revealed only with that player's own, and the final board is the player's view
unless the game ended.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Hashable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from psygym_experiments.harness.gamelog import ChainError, read_json_lines, verify_chain
from psygym_experiments.harness.player_view import PlayerView
from psygym_experiments.play_session import Narrator, state_digest, state_text
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


def read_log(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for every non-blank line of a game log.

    Raises:
        ReplayError: a line is not a JSON object.
    """
    return read_json_lines(path, ReplayError)


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
    """Rules of a logged game: the shipped scenario by name, else the scenario file's path."""
    from psygym.editions import load

    edition = header.get("edition")
    if not edition:
        raise ReplayError(f"{where}: the header has no edition")
    arg = header.get("scenario_arg") or header.get("scenario") or "default"
    return load(str(edition), str(arg))


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
        on_warning: called with warnings (the scenario file changed since the game).
        as_player: show the game as this player (0 or 1) was shown it, not everything.

    Raises:
        ReplayError: the log does not match the rules: an illegal action or chance outcome, a
            wrong player or label at line N, or a final state or score other than logged.
    """
    console = console or Console(highlight=False, soft_wrap=True)
    lines = read_chained_log(path)
    first = next(lines, None)
    if first is None or first[1].get("type") != "header":
        raise ReplayError(
            f'{path}: line 1: expected the game header ({{"type": "header", "edition": ..., ...}})'
        )
    _, header = first
    rules = load_logged_rules(header, f"{path}: line 1")
    sha = header.get("scenario_sha256")
    spath = header.get("scenario_path")
    if sha and spath and Path(spath).is_file() and on_warning is not None:
        if hashlib.sha256(Path(spath).read_bytes()).hexdigest() != sha:
            on_warning(f"the scenario file {spath} changed since the game was played")
    seat = header.get("seat")
    if as_player not in (None, 0, 1):
        raise ReplayError(f"--as-player {as_player} is not a player; allowed: 0, 1")
    other = "human" if seat in (0, 1) and seat != as_player else f"AI: {header.get('opponent')}"
    narrator = Narrator(rules, console, as_player, other, human=seat if seat in (0, 1) else None)
    view = None if as_player is None else PlayerView(rules, as_player)
    if not quiet:
        console.print(
            f"[bold]Replay[/bold] of {escape(str(path))}: {escape(str(rules.edition))}, scenario "
            f"{escape(str(header.get('scenario')))}, seed {header.get('seed')}, human seat "
            f"{seat}, opponent {escape(str(header.get('opponent')))}",
            highlight=False,
            soft_wrap=True,
        )
    state = rules.initial_state()
    steps = 0
    end: dict[str, Any] | None = None
    for n, obj in lines:
        where = f"{path}: line {n}"
        kind = obj.get("type")
        if end is not None:
            raise ReplayError(f"{where}: a line after the end line")
        if kind == "end":
            end = obj
            continue
        if kind != "step":
            raise ReplayError(f"{where}: unknown line type {kind!r} (allowed: step, end)")
        state = _replay_step(rules, state, obj, where, None if quiet else narrator, view)
        steps += 1
    score = tuple(float(x) for x in rules.returns(state))
    if end is None:
        raise ReplayError(
            f"{path}: line {steps + 2}: no end line after {steps} steps (a complete log ends "
            'with {"type": "end", ...}; the file was cut off or the game was interrupted)'
        )
    _check_end(rules, state, steps, end, str(path))
    if not quiet:
        console.print()
        everything = as_player is None or rules.is_terminal(state)
        narrator.text(rules.render(state, None if everything else as_player))
        status = "finished" if rules.is_terminal(state) else "not finished"
        console.print(
            f"Replayed {steps} steps ({status}): score {score[0]:+.2f} for player 0, "
            f"state {state_digest(state)[:12]}; matches the log.",
            highlight=False,
            soft_wrap=True,
        )
    return ReplayResult(state, score, steps, dict(header), end)


def _replay_step(
    rules: Any,
    state: Hashable,
    obj: Mapping[str, Any],
    where: str,
    narrator: Narrator | None,
    view: PlayerView | None,
) -> Hashable:
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


def _check_end(rules: Any, state: Hashable, steps: int, end: Mapping[str, Any], path: str) -> None:
    where = f"{path}: end line"
    if "steps" in end and end["steps"] != steps:
        raise ReplayError(f"{where}: logs {end['steps']} steps, the file holds {steps}")
    score = [float(x) for x in rules.returns(state)]
    logged = end.get("score")
    if logged is not None and (
        len(logged) != len(score)
        or not all(
            math.isclose(a, float(b), rel_tol=1e-9, abs_tol=1e-9) for a, b in zip(score, logged)
        )
    ):
        raise ReplayError(f"{where}: the replay scores {score}, the log says {logged}")
    if end.get("terminal") is not None and bool(end["terminal"]) != rules.is_terminal(state):
        raise ReplayError(
            f"{where}: the log says terminal={end['terminal']}, the replay "
            f"reached terminal={rules.is_terminal(state)}"
        )
    sha = end.get("state_sha256")
    if sha and sha != state_digest(state):
        raise ReplayError(
            f"{where}: the replay reached another final state than the log's\n"
            f"  replay: {state_text(state)}\n  log:    {end.get('state')}"
        )


__all__ = ["ReplayError", "ReplayResult", "read_chained_log", "read_log", "replay_log"]
