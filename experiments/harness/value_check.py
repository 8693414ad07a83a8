"""A board value against sampled continuations: is ``V(board)`` what play from the board gains?

The Bellman error of :mod:`.value_training` checks ``V`` against one exact search with ``V`` at
its edge, so a value that is wrong the same way everywhere can pass it. This check plays the
game out instead: for up to ``boards`` distinct boards per battle round (the first board of the
round in games of the edition's reference heuristic, seeded; a round that has fewer boards, such
as the first round of a duel that always starts from one board, gets all it reaches), it plays
``continuations`` games from the board with an agent (``search`` by default) in both seats, and
compares ``V(board)`` with the mean score player 0 still gains, beside that mean's standard error
(dice luck: with 200 continuations the error of the mean, not of ``V``). Per round it reports
the RMSE of ``V`` against the means and the mean standard error: an RMSE near the standard error
says ``V`` is within the sampling noise.

Runs resume: the continuations of a board are played in chunks of :data:`CHUNK` games, every
finished chunk is one line of ``chunks.jsonl`` (its gains) and every finished board one line of
``boards.jsonl``; a run started again with the same settings plays only what is missing (the
boards and every continuation's dice are fixed by the seed, so the figures do not depend on
where a run stopped or on ``workers``). A board from the first battle round of a duel costs
about half a CPU hour, so a chunk is what a stop can lose. Boards are taken in turn over the
rounds (the first board of every round, then the second, ...), so a run stopped early covers
each round. Chunks are played in worker processes that die with their parent. The output
folder also gets ``config.json``, ``summary.json`` and ``value-check.png`` (``V`` against the
continuations' mean per round, with two standard errors).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Annotated, Any

import numpy as np
from psygym_experiments.harness.output import atomic_write, save_figure, write_json
from psygym_experiments.harness.runs import (
    ResumeRecord,
    check_new_or_own,
    check_resumable,
    check_run_folder,
    check_score,
    score_bounds,
    shape_error,
)
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from psygym.core import play_game

BOARDS_FILE = "boards.jsonl"
"""One JSON line per finished board (the resume record)."""
CHUNKS_FILE = "chunks.jsonl"
"""One JSON line per finished chunk of a board's continuations (the finer resume record)."""
CHUNK = 20
"""Continuations per chunk: the work a stopped run can lose, and what a worker takes at a time."""
CONFIG_FILE = "config.json"
"""The settings of the run; a resumed run must match them."""
SETTINGS = ("edition", "scenario", "boards", "continuations", "agent", "value", "seed")
"""The settings a resumed run must share with the first one."""


def sample_boards(rules: Any, per_round: int, seed: int, max_games: int = 2000) -> list[Any]:
    """``(round, index, state)``: up to ``per_round`` distinct first boards of each battle round.

    Boards come from games of the reference heuristic in both seats with dice seeded by
    ``seed``; a game's board of a round is its first state whose ``rules.horizon`` round is that
    round (round 0, before the first battle round, is left out). A board already taken for its
    round is not taken again, so a round that only has a few boards (a duel whose every game
    starts from one board) gets all of those reached in ``max_games`` games, not one board many
    times over.
    """
    from psygym.policies import reference_policy

    ref = reference_policy(rules)
    found: dict[int, dict[Hashable, None]] = {}  # round -> its boards, in the order found
    rng = np.random.default_rng((seed, 0))
    seen: set[int] = set()  # the rounds of the game being played

    def keep(state: Hashable, action: int, events: Any) -> None:
        rnd = rules.horizon(state)[0]
        if rnd >= 1 and rnd not in seen:
            seen.add(rnd)
            mine = found.setdefault(rnd, {})
            if len(mine) < per_round:
                mine.setdefault(state)

    for _ in range(max_games):
        seen.clear()
        play_game(rules, [ref, ref], rng, on_step=keep)
        if found and all(len(found[r]) >= per_round for r in found):
            break
    return [(r, i, b) for r in sorted(found) for i, b in enumerate(found[r])]


def board_ids(boards: list[Any], per_round: int) -> dict[int, Any]:
    """Board number -> ``(round, index, state)``.

    Board ``index`` of round ``r`` is number ``(r - 1) * per_round + index``, so a round with
    fewer boards leaves the others' numbers (and the dice of their continuations) as they are.
    """
    return {(r - 1) * per_round + i: (r, i, b) for r, i, b in boards}


def continuation_gains(
    rules: Any, board: Hashable, policies: list[Any], n: int, seed: tuple[int, ...],
    first: int = 0,
) -> np.ndarray:  # fmt: skip
    """What player 0 still gains from ``board`` in seeded games ``first`` to ``first + n - 1``.

    Game ``k``'s dice are seeded by ``(*seed, k)``, so any split of the games into chunks
    plays the same games.
    """
    start = rules.returns(board)[0]
    gains = np.empty(n)
    for i, k in enumerate(range(first, first + n)):
        end = play_game(rules, policies, np.random.default_rng((*seed, k)), state=board)
        gains[i] = rules.returns(end)[0] - start
    return gains


_WORKER: dict[str, Any] = {}


def _setup(cfg: dict[str, Any]) -> tuple[Any, dict[int, Any], Any, list[Any]]:
    """Rules, boards (by number, :func:`board_ids`), board value and agents of ``cfg``.

    Built once per process.
    """
    key = json.dumps(cfg, sort_keys=True)
    if _WORKER.get("key") != key:
        from psygym_agents.value import load_value, shipped_value

        from psygym.editions import load
        from psygym.policies import resolve_policy

        rules = load(cfg["edition"], cfg["scenario"])
        value = load_value(rules, cfg["value"]) if cfg["value"] else shipped_value(rules)
        if value is None:
            raise ValueError(
                f"no board value for {cfg['edition']} {cfg['scenario']}: give --value PATH"
            )
        value.check_rules(rules)
        boards = board_ids(sample_boards(rules, cfg["boards"], cfg["seed"]), cfg["boards"])
        agents = [resolve_policy(cfg["agent"], rules) for _ in (0, 1)]
        _WORKER.update(key=key, setup=(rules, boards, value, agents))
    return _WORKER["setup"]


def play_chunk(cfg: dict[str, Any], k: int, start: int, stop: int) -> dict[str, Any]:
    """Continuations ``start`` to ``stop - 1`` of board ``k`` (the chunk's resume record)."""
    rules, boards, _, agents = _setup(cfg)
    board = boards[k][2]
    gains = continuation_gains(rules, board, agents, stop - start, (cfg["seed"], 1, k), start)
    return {"board": k, "start": start, "gains": gains.tolist()}


def board_row(cfg: dict[str, Any], k: int, gains: list[float]) -> dict[str, Any]:
    """Board ``k``'s row: ``V`` against the mean (and its standard error) of ``gains``."""
    rules, boards, value, _ = _setup(cfg)
    rnd, i, board = boards[k]
    g = np.asarray(gains, float)
    se = float(g.std(ddof=1) / math.sqrt(len(g))) if len(g) > 1 else math.nan
    return {
        "board": k, "round": rnd, "index": i, "V": float(value(rules, board)),
        "mean": float(g.mean()), "se": se, "sd": float(g.std(ddof=1)), "continuations": len(g),
    }  # fmt: skip


def summarize(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per battle round (and ``all``): boards, RMSE of ``V`` against the means, mean error."""
    out = []
    groups = sorted({r["round"] for r in rows})
    for rnd in [*groups, "all"]:
        mine = [r for r in rows if rnd == "all" or r["round"] == rnd]
        if not mine:
            continue
        d = np.array([r["V"] - r["mean"] for r in mine])
        out.append({
            "round": rnd, "boards": len(mine), "rmse": float(np.sqrt((d**2).mean())),
            "bias": float(d.mean()), "mean_se": float(np.mean([r["se"] for r in mine])),
        })  # fmt: skip
    return out


_Count = Annotated[int, Field(ge=0, strict=True)]
_Number = Annotated[float, Field(strict=True, allow_inf_nan=False)]


class _Chunk(BaseModel):
    """One line of :data:`CHUNKS_FILE` (:func:`play_chunk`)."""

    model_config = ConfigDict(extra="forbid")
    board: _Count
    start: _Count
    gains: list[_Number]


class _Board(BaseModel):
    """One line of :data:`BOARDS_FILE` (:func:`board_row`)."""

    model_config = ConfigDict(extra="forbid")
    board: _Count
    round: _Count
    index: _Count
    V: _Number
    mean: _Number
    se: _Number
    sd: _Number
    continuations: _Count


CHUNK_SHAPE = '{"board": n, "start": first game, "gains": [number, ...]}'
"""How a line of :data:`CHUNKS_FILE` looks, for the error that refuses one."""
BOARD_SHAPE = '{"board", "round", "index", "V", "mean", "se", "sd", "continuations"}'
"""The fields of a line of :data:`BOARDS_FILE`, for the error that refuses one."""


def _records(out: Path, cfg: dict[str, Any], rules: Any) -> tuple[ResumeRecord, ResumeRecord]:
    """The boards and chunks records of ``out``, their lines checked against ``cfg``.

    A gain is what player 0 still gains from a board, so it lies within the scenario's score
    range taken both ways (:func:`.runs.score_bounds`); a chunk holds the games it names.
    """
    lo, hi = score_bounds(rules)
    gain = (lo - hi, hi - lo)
    n = cfg["continuations"]

    def chunk(row: dict[str, Any]) -> None:
        try:
            c = _Chunk.model_validate(row)
        except ValidationError as exc:
            raise ValueError(shape_error(exc, CHUNK_SHAPE)) from None
        want = max(0, min(c.start + CHUNK, n) - c.start)
        if len(c.gains) != want:
            raise ValueError(f"board {c.board}: {len(c.gains)} gains from game {c.start}, "
                             f"where the chunk plays {want}")  # fmt: skip
        for k, g in enumerate(c.gains):
            check_score(g, gain, f"board {c.board}: the gain of game {c.start + k}")

    def board(row: dict[str, Any]) -> None:
        try:
            b = _Board.model_validate(row)
        except ValidationError as exc:
            raise ValueError(shape_error(exc, BOARD_SHAPE)) from None
        if b.continuations != n:
            raise ValueError(f"board {b.board}: {b.continuations} continuations, where the run "
                             f"plays {n}")  # fmt: skip
        check_score(b.mean, gain, f"board {b.board}: the mean gain")

    return ResumeRecord(out / BOARDS_FILE, board), ResumeRecord(out / CHUNKS_FILE, chunk)


def read_rows(out_dir: Path) -> list[dict[str, Any]]:
    """The boards finished so far (a torn last line from a killed run is skipped).

    Raises:
        ValueError: a line that this command did not write (its hash chain), naming it.
    """
    return ResumeRecord(Path(out_dir) / BOARDS_FILE).read()


def run_value_check(
    cfg: dict[str, Any], out_dir: str | Path, *, workers: int = 1,
    on_board: Callable[[int, int, dict[str, Any]], None] | None = None,
    on_chunk: Callable[[int, int], None] | None = None, pool: Any = None,
) -> list[dict[str, Any]]:  # fmt: skip
    """Check every board of ``cfg`` not yet in ``out_dir``; returns all rows, board order.

    Args:
        cfg: the :data:`SETTINGS` (``value``: a board-value path, or ``None`` for the shipped
            one; ``agent``: the spec played in both seats).
        out_dir: the output folder (created; resumed when it holds the same settings;
            refused when it holds files but no ``config.json``, so not a value check's).
        workers: processes (the figures do not depend on it).
        pool: a running pool to play the chunks in (:mod:`.pools`, a Ray one say), left open;
            ``None``: ``workers`` local processes.
        on_board: called with ``(done, total, row)`` after each board (progress).
        on_chunk: called with ``(continuations done, all continuations)`` after each chunk.
    """
    out = Path(out_dir)
    cfg = {k: cfg.get(k) for k in SETTINGS}
    if out.is_dir():
        check_run_folder(out)
        check_new_or_own(out, CONFIG_FILE, "value-check")
    check_resumable(out / CONFIG_FILE, cfg, SETTINGS, "or another --out")
    rules, boards, _, _ = _setup(cfg)  # a bad edition, scenario or value fails before any file
    out.mkdir(parents=True, exist_ok=True)
    board_record, chunk_record = _records(out, cfg, rules)
    # Read before anything is written: a line this command did not write stops the run here.
    old_rows, old_chunks = board_record.read(), chunk_record.read()
    write_json(out / CONFIG_FILE, cfg)
    # Rows and chunks of boards the settings no longer sample (a repeat of an earlier board of its
    # round, taken by runs before boards were distinct) are dropped here.
    done = {r["board"]: r for r in old_rows if r.get("board") in boards}
    board_record.rewrite([done[k] for k in sorted(done)])
    n = cfg["continuations"]
    starts = range(0, n, CHUNK)
    chunks = {(c["board"], c["start"]): c["gains"] for c in old_chunks
              if c.get("board") in boards and c.get("start") in starts
              and c["board"] not in done}  # fmt: skip
    chunk_record.rewrite([{"board": k, "start": j, "gains": g}
                          for (k, j), g in sorted(chunks.items())])  # fmt: skip

    def complete(k: int) -> bool:
        return all((k, j) in chunks for j in starts)

    def finish(k: int) -> None:
        row = board_row(cfg, k, [g for j in starts for g in chunks[(k, j)]])
        done[k] = row
        board_record.append(row)
        write_summary(out, cfg, [done[b] for b in sorted(done)], len(boards))
        if on_board is not None:
            on_board(len(done), len(boards), row)

    def add_chunk(chunk: dict[str, Any]) -> None:
        k = chunk["board"]
        chunks[(k, chunk["start"])] = chunk["gains"]
        chunk_record.append(chunk)
        if on_chunk is not None:
            played = n * len(done) + sum(len(g) for (b, _), g in chunks.items() if b not in done)
            on_chunk(played, n * len(boards))
        if complete(k):
            finish(k)

    # Board i of every round before board i + 1 of any, so a run stopped early has every round.
    order = sorted(boards, key=lambda k: (boards[k][1], boards[k][0]))
    for k in order:  # every chunk recorded before a stop, the board's row not yet
        if k not in done and complete(k):
            finish(k)
    todo = [(k, j, min(j + CHUNK, n)) for k in order if k not in done for j in starts
            if (k, j) not in chunks]  # fmt: skip
    if pool is not None and todo:
        for chunk in pool.map(play_chunk, *zip(*[(cfg, *t) for t in todo], strict=True)):
            add_chunk(chunk)
    elif workers <= 1 or len(todo) <= 1:
        for k, j, stop in todo:
            add_chunk(play_chunk(cfg, k, j, stop))
    else:
        from psygym_experiments.harness.tournament import worker_pool

        with worker_pool(workers, len(todo)) as pool:
            for chunk in pool.map(play_chunk, *zip(*[(cfg, *t) for t in todo], strict=True)):
                add_chunk(chunk)
    rows = [done[k] for k in sorted(done)]
    write_summary(out, cfg, rows, len(boards))
    return rows


def write_summary(out: Path, cfg: dict[str, Any], rows: list[dict[str, Any]], total: int) -> None:
    """``summary.json``, ``summary.md`` and ``value-check.png`` of the boards finished so far.

    Written after every finished board, so a run stopped early (or still going) shows its figures.
    """
    write_json(out / "summary.json", {"config": cfg, "finished": len(rows), "total": total,
                                      "rounds": summarize(rows), "boards": rows})  # fmt: skip
    agent = str(cfg["agent"]).split(":", 1)[0]
    title = f"{cfg['edition']} {cfg['scenario']}, {agent} in both seats"
    plot_value_check(rows, out / "value-check.png", title)
    atomic_write(out / "summary.md", summary_markdown(cfg, rows, total))


def summary_markdown(cfg: dict[str, Any], rows: list[dict[str, Any]], total: int) -> str:
    """A value check's per-round table and its boards' rows, as Markdown.

    Args:
        cfg: the run's settings.
        rows: the finished boards' rows.
        total: boards the settings sample (more than ``len(rows)`` while the run is unfinished).
    """
    lines = [
        f"# Board value against continuations: {cfg['edition']} {cfg['scenario']}",
        "",
        f"Up to {cfg['boards']} distinct boards per battle round, {cfg['continuations']} "
        "continuations each "
        f"with `{cfg['agent']}` in both seats, seed {cfg['seed']}.",
        "",
    ]
    if len(rows) < total:
        lines += [f"Unfinished: {len(rows)} of {total} boards so far (the same command resumes "
                  "the run).", ""]  # fmt: skip
    lines += [
        "| round | boards | RMSE of V | bias of V | mean se of the continuations |",
        "|---|---|---|---|---|",
    ]
    lines += [f"| {r['round']} | {r['boards']} | {r['rmse']:.3f} | {r['bias']:+.3f} | "
              f"{r['mean_se']:.3f} |" for r in summarize(rows)]  # fmt: skip
    lines += [
        "",
        "| round | board | V | continuations' mean | se | V - mean | in se |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in sorted(rows, key=lambda r: (r["round"], r["index"])):
        d = r["V"] - r["mean"]
        z = f"{d / r['se']:+.1f}" if r["se"] > 0 else ""
        lines.append(f"| {r['round']} | {r['index']} | {r['V']:+.3f} | {r['mean']:+.3f} | "
                     f"{r['se']:.3f} | {d:+.3f} | {z} |")  # fmt: skip
    return "\n".join(lines) + "\n"


def plot_value_check(rows: list[dict[str, Any]], path: Path, title: str) -> Path | None:
    """``V`` against the continuations' mean (two standard errors), one colour per round."""
    if not rows:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 5))
    for rnd in sorted({r["round"] for r in rows}):
        mine = [r for r in rows if r["round"] == rnd]
        ax.errorbar([r["mean"] for r in mine], [r["V"] for r in mine],
                    xerr=[2 * r["se"] for r in mine], fmt="o", capsize=2,
                    label=f"round {rnd}")  # fmt: skip
    lo = min(min(r["mean"] - 2 * r["se"], r["V"]) for r in rows)
    hi = max(max(r["mean"] + 2 * r["se"], r["V"]) for r in rows)
    ax.plot([lo, hi], [lo, hi], color="grey", lw=1, ls="--")
    ax.set_xlabel("mean gain of the continuations (± 2 se)")
    ax.set_ylabel("V(board)")
    ax.set_title(f"{title}: board value against continuations")
    ax.legend(fontsize=8)
    fig.tight_layout()
    save_figure(fig, path, dpi=110)
    plt.close(fig)
    return path


__all__ = [
    "CHUNK", "board_ids", "board_row", "continuation_gains", "play_chunk", "plot_value_check",
    "read_rows", "run_value_check", "sample_boards", "summarize", "summary_markdown",
    "write_summary",
]  # fmt: skip
