"""The resume record of a round-robin (``tasks.jsonl``): its lines, written and checked.

:class:`TaskRecord` keeps one line per finished task of :mod:`.tournament` (a batch of games or
an exact value). Lines are hash-chained (:class:`.runs.ResumeRecord`), and each is checked on
reading (:func:`check_task_line`): its shape, its games, and its scores within the scenario's
declared bounds. A line that fails is refused with the file and its line number.
"""

from __future__ import annotations

import math
import os
from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Any, Literal

from psygym_experiments.harness.games import GameStats
from psygym_experiments.harness.runs import ResumeRecord, check_score, shape_error
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

_Count = Annotated[int, Field(ge=0, strict=True)]
_Pair = Annotated[list[_Count], Field(min_length=2, max_length=2)]
_Number = Annotated[float, Field(strict=True, allow_inf_nan=False)]
_Limit = Annotated[int, Field(ge=1, strict=True)] | None


class _Stats(BaseModel):
    """A game batch's :class:`~.games.GameStats` as a ``tasks.jsonl`` line holds it."""

    model_config = ConfigDict(extra="forbid")
    games: _Count
    scores: list[_Number]
    attempts: _Pair
    perils: _Pair
    manifests: _Pair
    dice: _Pair
    deny_attempts: _Pair
    denied: _Pair


class _Batch(BaseModel):
    """The result of a ``games`` task: the statistics and which seats chose at random."""

    model_config = ConfigDict(extra="forbid")
    stats: _Stats
    stochastic: Annotated[
        list[Annotated[bool, Field(strict=True)]], Field(min_length=2, max_length=2)
    ]


class _Line(BaseModel):
    """One ``tasks.jsonl`` line: a task (a list starting with its kind) and its result."""

    model_config = ConfigDict(extra="forbid")
    task: Annotated[list[Any], Field(min_length=1)]
    result: Any


_TASKS = {
    "games": TypeAdapter(tuple[Literal["games"], _Count, _Count, _Count, _Count,
                               Annotated[int, Field(strict=True)]]),
    "value": TypeAdapter(tuple[Literal["value"], _Limit]),
    "exact": TypeAdapter(tuple[Literal["exact"], _Count, _Count, _Limit]),
    "br": TypeAdapter(tuple[Literal["br"], _Count, Literal[0, 1], _Limit]),
}  # fmt: skip
"""The shape of each task kind (:func:`_run_task`)."""
_SOLVED = TypeAdapter(
    tuple[Literal["ok"], _Number] | tuple[Literal["unsolvable", "absent"], str]
)  # fmt: skip
"""The result of an exact task: ``("ok", value)`` or ``(status, reason)``."""
LINE_SHAPE = '{"task": [kind, ...], "result": ...} (kind: games, value, exact or br)'
"""How a ``tasks.jsonl`` line looks, for the error that refuses one."""


def _shaped(validate: Any, value: Any, prefix: str) -> Any:
    """``validate(value)``, or a ``ValueError`` naming the field that is not of its shape."""
    try:
        return validate(value)
    except ValidationError as exc:
        raise ValueError(shape_error(exc, LINE_SHAPE, prefix)) from None


def check_task_line(row: dict[str, Any], bounds: tuple[float, float]) -> None:
    """Refuse a ``tasks.jsonl`` line that :class:`TaskRecord` could not have written.

    Its shape (:data:`LINE_SHAPE`, the task's fields, the result's counts), its games (a batch
    ``start..stop`` holds ``stop - start`` games and scores) and every score and exact value
    within ``bounds``, the scenario's declared lowest and highest score of seat 0.

    Raises:
        ValueError: one line saying what is wrong (the record adds file and line number).
    """
    line = _shaped(_Line.model_validate, row, "")
    kind = line.task[0]
    if not isinstance(kind, str) or kind not in _TASKS:
        raise ValueError(f"task kind {kind!r} is not one of: {', '.join(_TASKS)}")
    task = _shaped(_TASKS[kind].validate_python, line.task, "task")
    if kind != "games":
        status, value = _shaped(_SOLVED.validate_python, line.result, "result")
        if status == "ok":
            check_score(value, bounds, f"the {kind} value")
        return
    batch = _shaped(_Batch.model_validate, line.result, "result")
    start, stop = task[3], task[4]
    stats = batch.stats
    if stop <= start or stats.games != stop - start or len(stats.scores) != stats.games:
        raise ValueError(
            f"games {start} to {stop - 1}: {stats.games} games and {len(stats.scores)} scores "
            f"recorded, where {max(0, stop - start)} of each were played"
        )
    for k, score in enumerate(stats.scores):
        check_score(score, bounds, f"the score of game {start + k}")


class TaskRecord:
    """The resume record of a round-robin: one JSON line per finished task, read back on start.

    A task is a tuple of plain values (:func:`_run_task`), its result a game batch's statistics
    or an exact value, so a line holds both as JSON and a resumed tournament skips the tasks
    it finds. Game batches split by another number of workers are other tasks, played again;
    the numbers do not depend on the split. A torn last line (a killed run) is left out; any
    other line must be one this record wrote (:class:`.runs.ResumeRecord`: its hash chain) and
    of the right shape, with scores within ``bounds`` (:func:`check_task_line`).

    Raises:
        ValueError: a line that is not (the file and line number are named).
    """

    def __init__(
        self, path: str | os.PathLike[str], bounds: tuple[float, float] = (-math.inf, math.inf)
    ):  # fmt: skip
        self.path = Path(path)
        self.done: dict[tuple, Any] = {}
        self._record = ResumeRecord(self.path, lambda row: check_task_line(row, bounds))
        for row in self._record.read():
            task = tuple(row["task"])
            self.done[task] = _decode_result(task, row["result"])
        # Rewritten whole, so that no new line follows a torn one.
        self._record.rewrite([{"task": list(t), "result": _encode_result(t, r)}
                              for t, r in self.done.items()])  # fmt: skip

    def add(self, task: tuple, result: Any) -> None:
        """Record one finished task."""
        self.done[task] = result
        self._record.append({"task": list(task), "result": _encode_result(task, result)})


def _encode_result(task: tuple, result: Any) -> Any:
    """A task's result as JSON values (floats keep every bit through JSON)."""
    if task[0] == "games":
        stats, stochastic = result
        return {"stats": asdict(stats), "stochastic": list(stochastic)}
    return list(result)


def _decode_result(task: tuple, data: Any) -> Any:
    """The result :func:`_run_task` returned, from :func:`_encode_result`'s JSON."""
    if task[0] == "games":
        return GameStats(**data["stats"]), [bool(x) for x in data["stochastic"]]
    return tuple(data)


__all__ = ["LINE_SHAPE", "TaskRecord", "check_task_line"]
