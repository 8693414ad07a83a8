"""The games and boards of a board-value run: played, stored, replayed, labelled.

A *board* is where the ``search`` agent's exact lookahead ends (:func:`is_board`); a stage of
a run plays games (:func:`play_boards`) and keeps each board's observation, round, score so far
and Monte-Carlo target in a :class:`Boards` shard (``data/*.npz``, no pickles). The boards'
states are rebuilt by replaying the games' recorded actions (:func:`replay_states`), and
:func:`backup` is the one-step label of the fitted value iteration (:mod:`.value_training`).
"""

from __future__ import annotations

import io
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np
from psygym_experiments.harness.output import write_bytes
from psygym_experiments.harness.train_config import load_rules

from psygym.core import CHANCE, TERMINAL, EventKind, sample_action

TRAIN, VAL, TEST = 0, 1, 2
"""A game's share: training, validation (early stopping) or test (metrics)."""


def write_npz(path: Path, *, root: Path | None = None, **arrays: np.ndarray) -> None:
    """Write ``arrays`` as a compressed ``.npz`` (plain arrays), atomically and never via a link.

    ``root``: the output folder the file must stay inside (default: its own folder).
    """
    data = io.BytesIO()
    np.savez_compressed(data, **arrays)
    write_bytes(path, data.getvalue(), root=root)


@dataclass
class Boards:
    """The boards of one stage of play, and the games that reached them.

    Attributes:
        x: ``rules.observe(board, 0)`` per board (float32 rows).
        round: battle round of each board (``rules.horizon(board)[0]``).
        score: player 0's score so far at each board.
        target: final score minus score so far (the Monte-Carlo target).
        game: index (within this stage) of the game each board comes from.
        ply: the board is the state after the game's actions ``0..ply``.
        split: per board: 0 training, 1 validation, 2 test (the split of its game).
        actions, offsets: the games' actions (decisions and chance outcomes), game ``g`` being
            ``actions[offsets[g]:offsets[g + 1]]``.
        agents: ``"seat0 vs seat1"`` agent names per game.
    """

    x: np.ndarray
    round: np.ndarray
    score: np.ndarray
    target: np.ndarray
    game: np.ndarray
    ply: np.ndarray
    split: np.ndarray
    actions: np.ndarray
    offsets: np.ndarray
    agents: np.ndarray

    def save(self, path: Path) -> None:
        """Write the shard as a compressed ``.npz`` (plain arrays), atomically."""
        write_npz(path, **{f.name: getattr(self, f.name) for f in fields(self)})

    @classmethod
    def load(cls, path: Path) -> Boards:
        """Read a shard written by :meth:`save` (no pickles allowed)."""
        with np.load(path, allow_pickle=False) as data:
            return cls(**{f.name: data[f.name] for f in fields(cls)})

    def __len__(self) -> int:
        return len(self.round)


def game_split(n_games: int, rng: np.random.Generator, test: float, val: float) -> np.ndarray:
    """Per game: 0 training, 1 validation, 2 test; at least one of each from 3 games on."""
    split = np.zeros(n_games, np.int8)
    if n_games < 3:
        return split
    n_test = max(1, round(n_games * test)) if test > 0 else 0
    n_val = max(1, round(n_games * val)) if val > 0 else 0
    order = rng.permutation(n_games)
    split[order[:n_test]] = TEST
    split[order[n_test : n_test + n_val]] = VAL
    return split


def is_board(rules: Any, before: Hashable, after: Hashable) -> bool:
    """Whether ``after = apply(before, a)`` is a board: not terminal, on another horizon."""
    return rules.current_player(after) != TERMINAL and rules.horizon(after) != rules.horizon(before)


def play_boards(
    rules: Any, n_games: int, *, seed: int, stage: int, value: Any = None,
    search_share: float = 0.0, random_move: float = 0.1, split: np.ndarray | None = None,
    on_game: Callable[[], bool] | None = None, agents: Sequence[str] | None = None,
    first: int = 0,
) -> tuple[Boards, list[Hashable]]:  # fmt: skip
    """Play ``n_games`` games among the edition's heuristics (and ``search``), keep the boards.

    Game ``g`` draws its seats' agents from ``default_rng((seed, stage, g, 1))`` (``search``
    with probability ``search_share``, else a uniform heuristic) and its dice and random moves
    from ``default_rng((seed, stage, g, 2))``, so a stage is reproducible.

    Args:
        rules: the rules to play.
        n_games: games to play.
        seed: the run's seed.
        stage: the stage's number (each stage of a run plays other games).
        value: the board value of the ``search`` seats.
        search_share: probability that a seat is ``search``.
        random_move: probability that a move is uniformly random.
        split: per game 0/1/2 (training, validation, test); default all training.
        on_game: called after each game; a true return value stops early (the games played
            so far are returned).
        agents: agent specs the seats draw from instead of the edition's heuristics.
        first: the stage's number of the first game (games ``first..first + n_games - 1`` are
            played, numbered from 0 in the result: a part of a stage, see :func:`join_boards`).

    Returns:
        The boards, and the board states in the same order.
    """
    from psygym_agents.solvers.search import LookaheadPolicy

    from psygym.policies import bots_for, resolve_policy

    if agents:
        names = list(agents)
        made = {n: resolve_policy(n, rules) for n in names}
    else:
        bots = bots_for(rules.edition)
        if bots is None:
            raise ValueError(f"edition {rules.edition} has no heuristics to play the games with")
        names = list(bots.heuristics)
        made = {n: bots.heuristics[n](rules) for n in names}
    search = LookaheadPolicy(rules, value, steps=1) if search_share > 0 else None
    split = np.zeros(n_games, np.int8) if split is None else split
    cols: dict[str, list[Any]] = {k: [] for k in ("x", "round", "score", "target", "game", "ply")}
    states: list[Hashable] = []
    actions: list[int] = []
    offsets = [0]
    agents: list[str] = []
    for g in range(n_games):
        pick = np.random.default_rng((seed, stage, first + g, 1))
        seats, labels = [], []
        for _ in range(rules.num_players):
            if search is not None and pick.random() < search_share:
                seats.append(search)
                labels.append(search.name)
            else:
                name = names[int(pick.integers(len(names)))]
                seats.append(made[name])
                labels.append(name)
        rng = np.random.default_rng((seed, stage, first + g, 2))
        s = rules.initial_state()
        game_states, game_plies, ply = [], [], 0
        while (p := rules.current_player(s)) != TERMINAL:
            if p == CHANCE:
                a = rules.sample_chance(s, rng)
            elif random_move > 0 and rng.random() < random_move:
                legal = rules.legal_actions(s)
                a = legal[int(rng.integers(len(legal)))]
            else:
                a = sample_action(seats[p], rules, s, p, rng)
            s2 = rules.apply(s, a, check=False)
            actions.append(int(a))
            if is_board(rules, s, s2):
                game_states.append(s2)
                game_plies.append(ply)
            s, ply = s2, ply + 1
        final = rules.returns(s)[0]
        for b, bp in zip(game_states, game_plies):
            so_far = rules.returns(b)[0]
            cols["x"].append(rules.observe(b, 0))
            cols["round"].append(rules.horizon(b)[0])
            cols["score"].append(so_far)
            cols["target"].append(final - so_far)
            cols["game"].append(g)
            cols["ply"].append(bp)
        states.extend(game_states)
        offsets.append(len(actions))
        agents.append(" vs ".join(labels))
        if on_game is not None and on_game():
            break
    played = len(agents)
    game = np.asarray(cols["game"], np.int32)
    boards = Boards(
        x=np.asarray(cols["x"], np.float32).reshape(-1, rules.observation_size),
        round=np.asarray(cols["round"], np.int32),
        score=np.asarray(cols["score"], np.float64),
        target=np.asarray(cols["target"], np.float64),
        game=game,
        ply=np.asarray(cols["ply"], np.int32),
        split=np.asarray(split[:played], np.int8)[game] if len(game) else np.zeros(0, np.int8),
        actions=np.asarray(actions, np.int32),
        offsets=np.asarray(offsets, np.int64),
        agents=np.asarray(agents, dtype=str),
    )
    return boards, states


def join_boards(parts: Sequence[Boards]) -> Boards:
    """The boards of consecutive parts of a stage as one shard (games renumbered in order)."""
    games = np.cumsum([0] + [len(p.offsets) - 1 for p in parts])
    moves = np.cumsum([0] + [len(p.actions) for p in parts])
    joined = {f.name: np.concatenate([getattr(p, f.name) for p in parts])
              for f in fields(Boards) if f.name not in ("game", "offsets")}  # fmt: skip
    return Boards(
        **joined,
        game=np.concatenate([p.game + games[k] for k, p in enumerate(parts)]).astype(np.int32),
        offsets=np.concatenate([[0]] + [p.offsets[1:] + moves[k] for k, p in enumerate(parts)])
        .astype(np.int64),
    )  # fmt: skip


def play_part(edition: str, scenario: str, first: int, stop: int, kw: dict[str, Any]) -> Boards:
    """Games ``first..stop - 1`` of a stage in a pool worker (:func:`play_boards`'s ``kw``)."""
    return play_boards(load_rules(edition, scenario), stop - first, first=first, **kw)[0]


PART = 50
"""Games of one pool task of a stage's play (a value run's play with a pool)."""


def replay_states(rules: Any, boards: Boards) -> list[Hashable]:
    """The board states of a shard, rebuilt by replaying its games' recorded actions."""
    wanted: dict[int, list[int]] = {}
    for i, g in enumerate(boards.game.tolist()):
        wanted.setdefault(g, []).append(i)
    out: list[Hashable] = [None] * len(boards)
    for g, rows in wanted.items():
        acts = boards.actions[boards.offsets[g] : boards.offsets[g + 1]].tolist()
        at = {int(boards.ply[i]): i for i in rows}
        s = rules.initial_state()
        for ply, a in enumerate(acts):
            s = rules.apply(s, a, check=False)
            if ply in at:
                out[at[ply]] = s
    return out


def phase_index(rules: Any, boards: Boards) -> np.ndarray:
    """Per board, how many Psychic phases had begun when its game reached it.

    Replays the games' recorded actions; a transition with an ``EventKind.PHASE`` event begins
    a phase (so the count is edition-blind).
    """
    out = np.zeros(len(boards), np.int64)
    rows: dict[int, list[int]] = {}
    for i, g in enumerate(boards.game.tolist()):
        rows.setdefault(g, []).append(i)
    for g, members in rows.items():
        acts = boards.actions[boards.offsets[g] : boards.offsets[g + 1]].tolist()
        at = {int(boards.ply[i]): i for i in members}
        s, phases = rules.initial_state(), 0
        for ply, a in enumerate(acts):
            s, events = rules.apply_with_events(s, a, check=False)
            phases += any(e.kind == EventKind.PHASE for e in events)
            if ply in at:
                out[at[ply]] = phases
    return out


def next_phase_board(boards: Boards, phase: np.ndarray) -> np.ndarray:
    """Per board, the row of the first board of a later phase of the same game (-1: none)."""
    first: dict[tuple[int, int], int] = {}
    for i in np.lexsort((-boards.ply, boards.game)).tolist():  # within a game, last ply first
        first[(int(boards.game[i]), int(phase[i]))] = i  # so the earliest board stays
    later: dict[int, list[int]] = {}
    for g, p in sorted(first):
        later.setdefault(g, []).append(p)
    out = np.full(len(boards), -1, np.int64)
    for i, (g, p) in enumerate(zip(boards.game.tolist(), phase.tolist())):
        for q in later[g]:
            if q > p:
                out[i] = first[(g, q)]
                break
    return out


def backup(rules: Any, value: Any, state: Hashable) -> float:
    """One-step backup of a board: what player 0 still gains, as ``V`` predicts it.

    The exact search of the board's step with ``score + V`` at its edge, minus the score so far.
    """
    from psygym_agents.solvers.search import LookaheadPolicy

    return LookaheadPolicy(rules, value, steps=1).value_of(rules, state) - rules.returns(state)[0]


def zero_value(rules: Any) -> Any:
    """A board value that is 0 everywhere (the ``search`` leaf is then the score so far)."""
    from psygym_agents.value import BoardValue

    n = rules.observation_size
    return BoardValue([(np.zeros((n, 1)), np.zeros(1))], np.zeros(n), np.ones(n))


__all__ = [
    "PART", "TEST", "TRAIN", "VAL", "Boards", "backup", "game_split", "is_board", "join_boards",
    "next_phase_board", "phase_index", "play_boards", "play_part", "replay_states", "write_npz",
    "zero_value",
]  # fmt: skip
