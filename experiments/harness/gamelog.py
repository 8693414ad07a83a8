"""The one game-log writer (terminal ``psygym play`` and the browser server) and its hash chain.

A game log is JSON Lines, one JSON object per line (format :data:`LOG_FORMAT`):

1. ``{"type": "header", "format": 2, ...}`` (edition, scenario, seed, seat, opponent, ...);
2. one ``{"type": "step", "n", "player", "action", "label"}`` per transition (``player`` is 0, 1
   or ``"chance"``);
3. ``{"type": "end", "result", "steps", "score", "terminal", "state_sha256", "state"}``.

Every line also carries ``"hash"``: the SHA-256 (hex) of the previous line's hash, a newline,
and the line's canonical JSON without its ``hash`` key (:func:`canonical_json`: keys sorted, no
spaces, ASCII only). The header's previous hash is :data:`GENESIS` (64 zeros). Changing,
removing, reordering or cutting off any line breaks the chain at the first line concerned
(:func:`verify_chain`), so a log is tamper-evident (not tamper-proof: there is no secret key).
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import json
from collections.abc import Hashable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any

import numpy as np
from psygym_experiments.harness.output import open_new

from psygym.core import CHANCE

LOG_FORMAT = 2
"""Version of the game-log format (2: every line carries a chained ``hash``)."""

GENESIS = "0" * 64
"""The "previous hash" of a log's first line."""

HASH_KEY = "hash"
"""The key of a line's chained hash."""


def state_text(obj: Any) -> str:
    """Canonical text of a state: fields in order, sets sorted, enums by name.

    Unlike ``repr`` (whose frozenset order may follow Python's per-process string hashing), two
    equal states always give the same text, so logs can be checked in another process.
    """
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        inner = ", ".join(
            f"{f.name}={state_text(getattr(obj, f.name))}" for f in dataclasses.fields(obj)
        )
        return f"{type(obj).__name__}({inner})"
    if isinstance(obj, enum.Enum):
        return f"{type(obj).__name__}.{obj.name}"
    if isinstance(obj, (frozenset, set)):
        return "{" + ", ".join(sorted(state_text(x) for x in obj)) + "}"
    if isinstance(obj, (tuple, list)):
        return "(" + ", ".join(state_text(x) for x in obj) + ("," if len(obj) == 1 else "") + ")"
    if isinstance(obj, Mapping):
        items = sorted(f"{state_text(k)}: {state_text(v)}" for k, v in obj.items())
        return "{" + ", ".join(items) + "}"
    if isinstance(obj, np.ndarray):
        return repr(obj.tolist())
    if isinstance(obj, np.generic):
        return repr(obj.item())
    return repr(obj)


def state_digest(state: Hashable) -> str:
    """SHA-256 of :func:`state_text` (hex)."""
    return hashlib.sha256(state_text(state).encode()).hexdigest()


def canonical_json(obj: Mapping[str, Any]) -> str:
    """The text a line's hash covers: ``obj`` without ``hash``, keys sorted, compact, ASCII."""
    body = {k: v for k, v in obj.items() if k != HASH_KEY}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True, default=float)


def chain_hash(previous: str, obj: Mapping[str, Any]) -> str:
    """The hash of a line: SHA-256 of the previous hash, a newline and the canonical JSON (hex)."""
    return hashlib.sha256(f"{previous}\n{canonical_json(obj)}".encode("ascii")).hexdigest()


def chained_line(previous: str, obj: Mapping[str, Any]) -> tuple[str, str]:
    """``(line text with its newline, its hash)`` of ``obj`` following the hash ``previous``."""
    body = json.loads(canonical_json(obj))  # what a reader will see, so both sides hash alike
    digest = chain_hash(previous, body)
    return json.dumps({**body, HASH_KEY: digest}, default=float) + "\n", digest


class ChainError(ValueError):
    """A game log whose hash chain is broken or missing (the message names the first bad line)."""


def verify_chain(
    lines: Iterable[tuple[int, Mapping[str, Any]]], where: str, unchained: str | None = None
) -> Iterator[tuple[int, Mapping[str, Any]]]:
    """Yield ``(line number, object)`` of ``lines`` after checking each link of the chain.

    ``unchained`` is what the error says after ``<where>: line 1:`` when the first line has no
    hash (a file written before the chain existed); by default, the game log's sentence.

    Raises:
        ChainError: a line without ``hash`` (an old unchained file when it is the first), or a
            hash that does not follow from the previous line (a changed, removed or reordered
            line); the message names the first bad line.
    """
    previous = GENESIS
    for n, obj in lines:
        got = obj.get(HASH_KEY)
        if not isinstance(got, str):
            if n == 1 or previous == GENESIS:
                raise ChainError(f"{where}: line {n}: " + (unchained or (
                    f"the log has no hash chain (written by an older psygym, format "
                    f"{obj.get('format', 1)}); only format {LOG_FORMAT} logs, whose every line "
                    "carries a chained 'hash', can be replayed"
                )))  # fmt: skip
            raise ChainError(f"{where}: line {n}: no 'hash' (every line must carry one)")
        if got != chain_hash(previous, obj):
            raise ChainError(
                f"{where}: line {n}: hash does not follow from the previous line (the line was "
                "changed, or a line before it was removed or moved)"
            )
        previous = got
        yield n, obj


def check_log_path(path: str | Path, error: type[ValueError] = ValueError) -> Path:
    """``path`` once it is shown to be a file: the one check of every reader of game logs.

    Raises:
        ValueError: (of class ``error``) ``path`` is a folder.
        FileNotFoundError: nothing at ``path``.
    """
    p = Path(path)
    if p.is_dir():
        raise error(
            f"{p} is a folder, not a game log; give one of the .jsonl files psygym play writes "
            "to <runs-dir>/games/"
        )
    if not p.is_file():
        raise FileNotFoundError(f"no game log at {p}")
    return p


def check_format(
    header: Mapping[str, Any], where: str, error: type[ValueError] = ValueError
) -> None:
    """Refuse a header whose ``format`` is not :data:`LOG_FORMAT`, the one this psygym writes.

    Raises:
        ValueError: (of class ``error``) one line naming ``where``, the format and what is allowed.
    """
    fmt = header.get("format")
    if type(fmt) is not int or fmt != LOG_FORMAT:  # not 2.0 or true: the writer writes the int
        shown = "missing" if "format" not in header else json.dumps(fmt, default=str)[:60]
        raise error(
            f"{where}: the header's format is {shown}; allowed: {LOG_FORMAT} (the only game-log "
            "format this psygym writes and reads)"
        )


def read_json_lines(
    path: str | Path, error: type[ValueError] = ValueError
) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for each non-blank line of a JSON-lines game log.

    Raises:
        FileNotFoundError: no file at ``path``.
        ValueError: (of class ``error``) ``path`` is a folder, or a line is not a JSON object.
    """
    p = check_log_path(path, error)
    with p.open(encoding="utf-8") as f:
        for n, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise error(f"{p}: line {n}: not valid JSON ({exc.msg})") from None
            if not isinstance(obj, dict):
                raise error(f"{p}: line {n}: expected a JSON object")
            yield n, obj


class GameLog:
    """Writes one game as a hash-chained JSON Lines log; flushed after every line.

    Args:
        path: the file to create (it must not exist, not even as a link).
        header: the header's fields (``type`` and ``format`` are added).
        root: the output folder the log must stay inside (its folders below ``root`` are
            checked not to lead elsewhere through a link); default: the log's own folder.

    Raises:
        FileExistsError: ``path`` exists (another game took the name).
        UnsafeOutputError: a folder of ``path`` leads outside ``root``.
    """

    def __init__(self, path: Path, header: Mapping[str, Any], root: str | Path | None = None):
        self.path = Path(path)
        self.steps = 0
        self._previous = GENESIS
        self._file: IO[str] | None = open_new(self.path, root=root)
        self._write({"type": "header", "format": LOG_FORMAT, **header})

    def _write(self, obj: Mapping[str, Any]) -> None:
        assert self._file is not None, "the log is closed"
        text, self._previous = chained_line(self._previous, obj)
        self._file.write(text)
        self._file.flush()

    def step(self, player: int, action: int, label: str) -> None:
        """Record one transition (``player`` is CHANCE for a chance outcome)."""
        self.steps += 1
        who: int | str = "chance" if player == CHANCE else int(player)
        self._write(
            {"type": "step", "n": self.steps, "player": who, "action": int(action), "label": label}
        )

    def end(self, rules: Any, state: Hashable, result: str) -> None:
        """Record the end line (``result``: ``"finished"`` or ``"quit"``) and close the file."""
        text = state_text(state)
        self._write(
            {
                "type": "end",
                "result": result,
                "steps": self.steps,
                "score": [float(x) for x in rules.returns(state)],
                "terminal": bool(rules.is_terminal(state)),
                "state_sha256": hashlib.sha256(text.encode()).hexdigest(),
                "state": text,
            }
        )
        self.close()

    @property
    def closed(self) -> bool:
        """Whether the end line was written (or the file closed)."""
        return self._file is None

    def close(self) -> None:
        """Close the file (idempotent)."""
        if self._file is not None:
            self._file.close()
            self._file = None


__all__ = [
    "GENESIS", "HASH_KEY", "LOG_FORMAT", "ChainError", "GameLog", "canonical_json", "chain_hash",
    "chained_line", "check_format", "check_log_path", "read_json_lines", "state_digest",
    "state_text", "verify_chain",
]  # fmt: skip
