"""Play a game against an agent in the terminal, log it, and replay logs through the rules.

The loop is edition-generic: it only uses the Rules API (``render``, ``legal_actions``,
``describe``, ``chance_outcomes``, ``apply_with_events``, ``returns``, ``current_player``,
``private_to``). It never uses live displays, so it works the same when standard input and
output are pipes (tests drive whole games that way).

What the human is shown of every step comes from
:class:`~psygym_experiments.harness.player_view.PlayerView`, the one home of that question for
play, serve, replays and advice: it is computed from the human's information only, through the
edition's ``rules.private_to`` (a warp card dealt to the AI in 2nd edition is never named, even
when the deck could hold only one kind; the AI's secret bid in Rogue Trader is revealed right
after the human's own bid). Where hands are secret (``rules.information``) no chance probability
is printed (the chance of a draw would tell what the other hand holds) and hints are estimated
by the information-set search, which reads only what the human may know.

The odds next to an action (``PlayerView.option_odds``) come only from public information: the
dice law of the roll the action leads to, or "depends on the response" when the other player
answers it next (2E-5.2), since odds from the true state would follow that player's hidden hand;
after the AI's secret bid, the range over every bid it could have made. So the screen is a
function of what the human may see: re-dealing what they have not seen at any decision leaves
every line identical (``tests/test_hidden_leaks.py``, ``tests/test_play_hidden.py``). Logs hold
everything: they are for after the game (``psygym replay --as-player`` shows one as a player
saw it).

Game logs are JSON Lines (one JSON object per line):

1. ``{"type": "header", "format": 2, "edition", "scenario", "scenario_path",
   "scenario_sha256", "seed", "seat", "opponent", "command", "started"}``;
2. one ``{"type": "step", "n", "player", "action", "label"}`` per transition, where ``player`` is
   0, 1 or ``"chance"`` and ``action`` the action or chance outcome applied;
3. ``{"type": "end", "result": "finished" | "quit", "steps", "score", "terminal",
   "state_sha256", "state"}``: the zero-sum score (player 0, player 1), and a canonical text of
   the final state with its SHA-256 (:func:`state_text`, independent of Python's hash seed).

Every line carries ``"hash"``, chained to the previous line's
(:mod:`psygym_experiments.harness.gamelog`, the one writer, also used by ``psygym serve``).

``psygym_experiments.play_replay.replay_log`` applies the logged actions and chance outcomes (no
random numbers), checks every step against the rules and the end line against the state reached.
"""

from __future__ import annotations

import hashlib
import math
import shlex
import sys
import time
import zlib
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from psygym_experiments.harness.gamelog import LOG_FORMAT, state_digest, state_text
from psygym_experiments.harness.gamelog import GameLog as _ChainedLog
from psygym_experiments.harness.odds_view import action_odds, format_odds, percent
from psygym_experiments.harness.player_view import (
    HIDDEN_OUTCOME,
    SECRET_CHOICE,
    PlayerView,
    Shown,
)
from psygym_experiments.harness.runs import free_name, timestamp
from rich.console import Console
from rich.markup import escape

from psygym.core import CHANCE, Event, EventKind, sample_action

HINT_BUDGET = 4.0
"""Seconds the ``--hint`` advice may take (the search stops deepening once it is spent)."""

SEARCH_ITERATIONS = 1500
"""Information-set search iterations of one hint where hands are secret (about a second; every
``h`` typed at the prompt doubles them). A count, not a time, so a hint is reproducible."""


# ----------------------------------------------------------------------------- advice
@dataclass
class Advice:
    """The solver's values of the options at one decision.

    Attributes:
        values: legal action -> expected final score of the player to move (empty if none).
        exact: whether the values are exact (no depth limit cut the search).
        depth: the depth limit (Psychic phases) of the search that gave ``values``, when not
            exact.
        message: why there is no advice, or a note about it.
        iterations: the information-set search iterations behind ``values`` when they are
            estimated by search (secret hands), else ``None``.
        note: what the ``search`` agent's values are, in one sentence (its ``note``), when
            they come from it and are not exact.
    """

    values: dict[int, float] = field(default_factory=dict)
    exact: bool = True
    depth: int | None = None
    message: str = ""
    iterations: int | None = None
    note: str = ""


def _solver_parts() -> tuple[Any, Any, type[BaseException], Callable[[Any], bool]] | str:
    """(Solver, Cache, NotSolvable, has_hidden_information) or why no solver can be used."""
    try:
        from psygym_agents.solvers import NotSolvable, has_hidden_information
        from psygym_agents.solvers.expectiminimax import Cache, Solver
    except ImportError as exc:  # the solvers are optional
        return f"no exact solver is installed ({exc})"
    return Solver, Cache, NotSolvable, has_hidden_information


class Advisor:
    """Values of every option of a decision from the ``search`` agent.

    Perfect- and simultaneous-information editions get the values of
    :class:`psygym_agents.solvers.search.LookaheadPolicy`: exact where the edition declares the
    scenario solvable whole, else exact within the cast (or turn) in progress with the board
    beyond it valued by a learned board value (an estimate; the agent's ``note`` says what is
    exact). A hint takes about a second at most on the shipped duels, so ``budget`` only
    bounds the older depth-limited solver, which :meth:`advise` uses when the search agent is
    not installed.
    Editions with secret hands (``rules.information``) have no exact advice: their values are
    estimated by the information-set search of the edition's ``optimal`` agent
    (:class:`psygym_agents.solvers.ismcts.SearchPolicy`), :data:`SEARCH_ITERATIONS` iterations
    (``search_iterations``), doubled by every further request. The search deals again what the
    human has not seen before each iteration, and its seed is taken from the human's
    observation, so the values are a function of what the human may see.

    At the second decision of a secret pair (Rogue Trader's bids, ``simultaneous_info``) the
    values are those of the matrix game at ``parent``: each bid's expected value against the
    opponent's optimal mixed bid, so the advice never uses the opponent's secret choice.
    """

    MAX_MEMO = 500_000
    """A search memo larger than this is dropped (memory bound)."""

    MAX_ITERATIONS_FACTOR = 16
    """Further requests double the search iterations up to this many times the first count."""

    def __init__(
        self,
        rules: Any,
        *,
        budget: float = HINT_BUDGET,
        search_iterations: int = SEARCH_ITERATIONS,
    ):
        self.rules = rules
        self.budget = budget
        self.search_iterations = search_iterations
        self.searches = False  # secret hands: values estimated by the information-set search
        self.rate = 5_000.0  # states per second, updated after every search
        self._answers: dict[tuple[Hashable, Hashable | None], Advice] = {}
        self._caches: dict[int | None, Any] = {}
        parts = _solver_parts()
        self.unavailable: str | None = None
        if isinstance(parts, str):
            self.unavailable = parts
            return
        self._solver_cls, self._cache_cls, self._not_solvable, hidden = parts
        if hidden(rules):
            self.searches = True
        self._lookahead: Any = None
        if not self.searches:
            from psygym_experiments.harness.advice import lookahead_agent

            try:
                self._lookahead = lookahead_agent(rules)
            except ImportError:
                pass

    @property
    def note(self) -> str:
        """What the values are, in one sentence (the ``search`` agent's note), if it is used."""
        return "" if self._lookahead is None else str(self._lookahead.note)

    def advise(
        self,
        state: Hashable,
        parent: Hashable | None = None,
        *,
        hidden: bool = False,
        further: bool = True,
    ) -> Advice:
        """Values of the options of the player to move in ``state``.

        Args:
            state: a decision node of the human.
            parent: the opponent's secret decision node before ``state`` (simultaneous bids),
                if any.
            hidden: the caller has seen hidden information in this game (cards the human may
                not see), even if the edition does not declare ``hidden_information``.
            further: search again when the last answer for ``state`` was not exact (else
                return that answer).
        """
        if self.unavailable is not None:
            return Advice(message=self.unavailable)
        if self.searches:
            return self._search_advice(state, further)
        if hidden:
            return Advice(
                message=f"no exact advice exists for {self.rules.edition} edition: "
                "part of the game is hidden from you (hidden information)"
            )
        key = (state, parent)
        hit = self._answers.get(key)
        if hit is not None and (not further or (hit.exact and hit.values) or hit.note):
            return hit
        if self._lookahead is not None:
            answer = self._lookahead_advice(state, parent)
        else:
            answer = self._search(state, parent, hit)
        self._answers[key] = answer
        return answer

    def _lookahead_advice(self, state: Hashable, parent: Hashable | None) -> Advice:
        """The ``search`` agent's values (exact within the cast or turn, or whole)."""
        search = self._lookahead
        solver = search.solver(self.rules, state if parent is None else parent)
        values = self._values(solver, state, parent)
        exact = bool(search.exact)
        return Advice(values=values, exact=exact, note="" if exact else search.note)

    def _search_advice(self, state: Hashable, further: bool) -> Advice:
        """Values estimated by the information-set search from the mover's view only."""
        rules = self.rules
        player = rules.current_player(state)
        seen = rules.observe(state, player).tobytes()
        key = (player, seen)
        hit = self._answers.get(key)
        if hit is not None and (not further or hit.iterations is None):
            return hit
        if hit is None:
            iterations = self.search_iterations
        else:
            top = self.search_iterations * self.MAX_ITERATIONS_FACTOR
            iterations = min(2 * (hit.iterations or 0), top)
            if iterations == hit.iterations:
                return hit
        try:
            from psygym_agents.solvers.search import make_search
        except ImportError as exc:
            return Advice(message=f"no search is installed ({exc})")
        search = make_search(rules, f"iterations={iterations},seed={zlib.crc32(seen)}")
        _, means = search.search(rules, state, player)
        answer = Advice(
            values={int(a): float(v) for a, v in means.items()},
            exact=False,
            iterations=iterations,
        )
        self._answers[key] = answer
        return answer

    def _solver(self, depth: int | None, chunk: int) -> Any:
        cache = self._caches.get(depth)
        if cache is None or len(cache.values) > self.MAX_MEMO:
            cache = self._caches[depth] = self._cache_cls()
        return self._solver_cls(
            self.rules, max_depth=depth, cache=cache, max_states=len(cache.values) + chunk
        )

    def _values(self, solver: Any, state: Hashable, parent: Hashable | None) -> dict[int, float]:
        if parent is None:
            return {int(a): float(v) for a, v in solver.action_values(state).items()}
        rules = self.rules
        player = rules.current_player(state)
        sign = 1.0 if player == 0 else -1.0
        mixed = solver.strategy(parent)  # the opponent's optimal mixed secret choice
        out = {}
        for b in rules.legal_actions(state):
            total = 0.0
            for a, p in mixed.items():
                child = rules.apply(rules.apply(parent, a, check=False), b, check=False)
                total += p * solver.value(child)
            out[int(b)] = sign * total
        return out

    def _search(self, state: Hashable, parent: Hashable | None, previous: Advice | None) -> Advice:
        """Search the Psychic phase in progress, then the whole game with the time left.

        The first search is the quick answer (exact when the game ends within the phase); the
        exact values win when the second search finishes. When the phase alone does not fit in
        the budget the whole game does not either, so the second search is skipped.
        """
        start = time.perf_counter()
        found = previous if previous is not None and previous.values else None
        for depth in (1, None):
            left = self.budget - (time.perf_counter() - start)
            if left <= 0 or (depth is None and found is None):
                break
            solver = self._solver(depth, max(200, int(self.rate * left)))
            before, t0 = solver.states, time.perf_counter()
            try:
                values = self._values(solver, state, parent)
            except self._not_solvable:
                continue
            finally:
                spent, grown = time.perf_counter() - t0, solver.states - before
                if spent > 0.2 and grown > 0:
                    self.rate = 0.5 * self.rate + 0.5 * grown / spent
            exact = depth is None or bool(solver.exact)
            found = Advice(values=values, exact=exact, depth=None if exact else depth)
            if exact:
                break
        if found is not None:
            return found
        return Advice(
            message="the game from here is too large to solve exactly within "
            f"{self.budget:g} s; type h to search further"
        )


# ----------------------------------------------------------------------------- game log
class GameLog(_ChainedLog):
    """Writes one game as hash-chained JSON Lines (see the module docstring); flushed per line."""

    @classmethod
    def create(cls, runs_dir: str | Path, header: Mapping[str, Any]) -> GameLog:
        """Open ``<runs_dir>/games/<timestamp>.jsonl`` (``-2``, ``-3``... if taken).

        Raises:
            UnsafeOutputError: ``games/`` is a link leading out of ``runs_dir``.
        """
        from psygym_experiments.harness.output import output_folder

        folder = output_folder(Path(runs_dir) / "games", runs_dir)
        stem = timestamp()
        while True:
            try:  # another process may take the free name first: then try the next one
                return cls(free_name(folder, stem, ".jsonl"), header, root=runs_dir)
            except FileExistsError:
                continue


def scenario_info(rules: Any, edition: str, scenario: str) -> dict[str, Any]:
    """Header fields naming the scenario: its name, the argument given, the file and its hash.

    A generated scenario (``random:SEED...``) has no file: its argument is written in the
    canonical form (which replays it) and the hash is that of its TOML text.
    """
    from psygym.edition import get
    from psygym.generator import generate, is_random, parse, scenario_name
    from psygym.scenario import resolve_path, toml_text

    ed = get(edition)
    if is_random(scenario):
        seed, options = parse(str(scenario))
        text = toml_text(generate(ed, seed, options))
        return {
            "scenario": getattr(rules.scenario, "name", str(scenario)),
            "scenario_arg": scenario_name(seed, options),
            "scenario_path": None,
            "scenario_sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
        }
    arg = ed.default_scenario if str(scenario) == "default" else str(scenario)
    path = resolve_path(arg, Path(ed.scenario_dir), rules.edition)
    shipped = Path(path).resolve().parent == Path(ed.scenario_dir).resolve()
    return {
        "scenario": getattr(rules.scenario, "name", arg),
        "scenario_arg": Path(path).stem if shipped else str(Path(path).resolve()),
        "scenario_path": str(Path(path).resolve()),
        "scenario_sha256": hashlib.sha256(Path(path).read_bytes()).hexdigest(),
    }


# ----------------------------------------------------------------------------- transcript
class Narrator:
    """Prints transitions as readable lines (shared by play and replay)."""

    def __init__(
        self,
        rules: Any,
        console: Console,
        seat: int | None = None,
        opponent_name: str = "AI",
        human: int | None = None,
    ):
        self.rules = rules
        self.console = console
        self.seat = seat
        self.opponent_name = opponent_name
        self.human = human  # in replays: the seat the human played

    def side(self, player: int) -> str:
        """Name of a player's side (``"You (Ultramarines)"`` for the human)."""
        sides = getattr(self.rules.scenario, "sides", None)
        name = sides[player].name if sides else f"player {player}"
        if self.seat is None:
            who = ", human" if player == self.human else ""
            return f"{name} (player {player}{who})"
        if player == self.seat:
            return f"You ({name})"
        return f"{name} ({self.opponent_name})"

    def text(self, line: str, style: str | None = None) -> None:
        """Print rules text verbatim (no markup interpretation, no wrapping)."""
        self.console.print(line, style=style, markup=False, highlight=False, soft_wrap=True)

    def events(self, events: Sequence[Event]) -> None:
        """One indented line per event."""
        for e in events:
            style = "bold red" if e.kind in (EventKind.PERILS, EventKind.SLAIN) else None
            self.text(f"    {e.text}", style)

    def decision(self, player: int, label: str, events: Sequence[Event]) -> None:
        """A player's decision and what it caused."""
        style = "bold green" if player == self.seat else "bold cyan"
        self.console.print(
            f"[{style}]{escape(self.side(player))}:[/{style}] {escape(label)}",
            highlight=False,
            soft_wrap=True,
        )
        self.events(events)

    def chance(self, label: str, p: float | None, events: Sequence[Event]) -> None:
        """A chance outcome, its probability and what it caused."""
        odds = f" (chance {percent(p)})" if p is not None else ""
        self.console.print(
            f"[yellow]Chance:[/yellow] {escape(label)}{odds}", highlight=False, soft_wrap=True
        )
        self.events(events)

    def show(self, shown: Shown) -> None:
        """One step as a player was shown it (:class:`~.harness.player_view.PlayerView`)."""
        if shown.player == CHANCE:
            self.chance(shown.label or HIDDEN_OUTCOME, shown.probability, shown.events)
        elif shown.label is None:
            self.decision(shown.player, SECRET_CHOICE, shown.events)
        elif shown.revealed:
            self.decision(shown.player, shown.label, ())
            for earlier in shown.revealed:
                self.decision(earlier.player, f"{earlier.label} (revealed now)", ())
            self.events(shown.events)
        else:
            label = f"{shown.label}  [{shown.odds}]" if shown.odds else shown.label
            self.decision(shown.player, label, shown.events)


# ----------------------------------------------------------------------------- the session
class QuitGame(Exception):
    """The human asked to stop (``q``) or standard input ended."""


@dataclass
class SessionResult:
    """How a session ended."""

    state: Hashable
    result: str  # "finished" or "quit"
    score: tuple[float, float]
    steps: int
    log_path: Path | None


class PlaySession:
    """One game in the terminal: a human at ``seat`` against ``opponent``.

    Args:
        rules: the edition's rules.
        opponent: the AI's policy (any :class:`~psygym.core.Policy`).
        seat: the human's player number (0 or 1).
        seed: seeds the dice and the opponent's random choices (two independent streams).
        console: where to print (and read, through ``console.input``).
        hint: show the solver's value of every option at each decision.
        log: the game log to write, if any.
        opponent_name: how the AI is named in the transcript.
        advisor: the hint provider (default: :class:`Advisor` over ``rules``).
        echo_input: print what was read (default: when standard input is not a terminal).
    """

    def __init__(
        self,
        rules: Any,
        opponent: Any,
        *,
        seat: int = 0,
        seed: int = 0,
        console: Console | None = None,
        hint: bool = False,
        log: GameLog | None = None,
        opponent_name: str | None = None,
        advisor: Advisor | None = None,
        echo_input: bool | None = None,
    ):
        if seat not in (0, 1):
            raise ValueError(f"--seat {seat} is not a player; allowed: 0, 1")
        self.rules = rules
        self.opponent = opponent
        self.seat = seat
        self.console = console or Console(highlight=False, soft_wrap=True)
        self.hint = hint
        self.log = log
        chance_seq, policy_seq = np.random.SeedSequence(seed).spawn(2)
        self.chance_rng = np.random.default_rng(chance_seq)
        self.policy_rng = np.random.default_rng(policy_seq)
        name = opponent_name or f"AI: {getattr(opponent, 'name', 'opponent')}"
        self.narrator = Narrator(rules, self.console, seat, name)
        self._advisor = advisor
        self.echo_input = (not _isatty(sys.stdin)) if echo_input is None else echo_input
        self._rendered: Hashable | None = None
        self.player_view = PlayerView(rules, seat)
        """What the human is shown (the one home of hidden information)."""
        self._noted = False  # the search's note was shown under a menu

    @property
    def advisor(self) -> Advisor:
        """The hint provider (built on first use)."""
        if self._advisor is None:
            self._advisor = Advisor(self.rules)
        return self._advisor

    # ------------------------------------------------------------------ main loop
    def run(self) -> SessionResult:
        """Play until the game ends or the human quits; the log is closed either way."""
        rules = self.rules
        state = rules.initial_state()
        result = "error"
        try:
            while not rules.is_terminal(state):
                state = self.step(state)
            result = "finished"
        except QuitGame:
            result = "quit"
        except KeyboardInterrupt:
            result = "quit"
            self.console.print()
        finally:
            if self.log is not None and not self.log.closed:
                self.log.end(rules, state, result)
        self.finish(state, result)
        return SessionResult(
            state,
            result,
            tuple(rules.returns(state)),
            self.log.steps if self.log else 0,
            self.log.path if self.log else None,
        )

    def step(self, state: Hashable) -> Hashable:
        """Play one transition (chance, AI or human) and return the next state."""
        rules = self.rules
        player = rules.current_player(state)
        p = None
        if player == CHANCE:
            a = rules.sample_chance(state, self.chance_rng)
            p = dict(rules.chance_outcomes(state)).get(a)
        elif player == self.seat:
            a = self.ask(state)
        else:
            a = sample_action(self.opponent, rules, state, player, self.policy_rng)
        nxt, events = rules.apply_with_events(state, a, check=player != CHANCE)
        if self.log is not None:
            self.log.step(player, a, rules.action_label(state, a))
        self.narrator.show(self.player_view.see(state, a, events, p))
        return nxt

    # ------------------------------------------------------------------ the human's turn
    def show_state(self, state: Hashable, *, everything: bool = False) -> None:
        """Print the state as the human may see it (``everything``: hidden parts too)."""
        self.console.print()
        self.console.rule(style="dim")
        self.narrator.text(self.rules.render(state, None if everything else self.seat))

    def menu(self, state: Hashable, legal: Sequence[int]) -> None:
        """Print the numbered legal actions with their odds (and values with ``--hint``)."""
        rules = self.rules
        options = self.player_view.options(state)
        labels = [label for _, label, _ in options]
        extras = [odds for _, _, odds in options]
        advice = None
        if self.hint:
            advice = self.advisor.advise(state, self.player_view.pending, further=False)
        width = max(len(lbl) for lbl in labels)
        sides = getattr(rules.scenario, "sides", None)
        mine = f" ({sides[self.seat].name})" if sides else ""
        self.console.print(
            f"[bold]Your move{escape(mine)}:[/bold]", highlight=False, soft_wrap=True
        )
        best = None
        if advice is not None and advice.values:
            best = max(advice.values.values())
        odds_width = max(len(x) for x in extras)
        for i, (a, lbl, extra) in enumerate(zip(legal, labels, extras), start=1):
            line = f"  {i:>2}. {lbl:<{width}}"
            if odds_width:
                line += f"  {f'[{extra}]' if extra else '':<{odds_width + 2}}"
            if advice is not None and a in advice.values:
                v = advice.values[a]
                mark = " (best)" if best is not None and math.isclose(v, best, abs_tol=1e-9) else ""
                word = "value" if advice.exact else "estimated value"
                line += f"  {word} {v:+.3f}{mark}"
            self.narrator.text(line.rstrip())
        if advice is not None:
            self._advice_note(advice)

    def _advice_note(self, advice: Advice, *, again: bool = False) -> None:
        """The line under the values: what they are (the search's note in full only once)."""
        if not advice.values:
            self.narrator.text(f"  Hint: {advice.message}", "dim")
        elif advice.note:
            if not self._noted or again:
                self._noted = True
                self.narrator.text(
                    f"  Hint: values are your expected final score, estimated by search: "
                    f"{advice.note}.",
                    "dim",
                )
        elif advice.iterations is not None:
            self.narrator.text(
                "  Hint: values are estimated (search), not exact: your mean score at the end "
                f"of this Psychic phase over {advice.iterations} searches, each with the cards "
                "you have not seen dealt again (hands are secret). Type h to search further.",
                "dim",
            )
        elif advice.exact:
            against = (
                " (against the opponent's optimal mixed secret choice)"
                if self.player_view.pending is not None
                else ""
            )
            self.narrator.text(
                "  Hint: values are your exact expected final score under best "
                f"play by both sides{against}.",
                "dim",
            )
        else:
            phases = (
                "this Psychic phase"
                if advice.depth == 1
                else f"the next {advice.depth} Psychic phases"
            )
            self.narrator.text(
                f"  Hint: values are depth-limited, not exact: your expected "
                f"score looking {phases} ahead, later phases counted at the "
                "score reached. Type h to search further.",
                "dim",
            )

    def ask(self, state: Hashable) -> int:
        """Read the human's choice; bad input is re-prompted with what is allowed."""
        legal = self.rules.legal_actions(state)
        if self._rendered != state:
            self.show_state(state)
            self.menu(state, legal)
            self._rendered = state
        n = len(legal)
        numbers = "1 (the only choice)" if n == 1 else f"a number from 1 to {n}"
        allowed = f"{numbers}, ? to list the actions, h for a hint, q to quit"
        prompt = "Choose 1, the only choice" if n == 1 else f"Choose 1-{n}"
        while True:
            try:
                raw = self.console.input(f"{prompt} (? list, h hint, q quit): ")
            except EOFError:
                self.console.print()
                self.console.print(
                    "Standard input ended: the game stops here.", highlight=False, soft_wrap=True
                )
                raise QuitGame from None
            if self.echo_input:
                self.console.print(raw, markup=False, highlight=False, soft_wrap=True)
            answer = raw.strip().lower()
            if answer in ("q", "quit", "exit"):
                raise QuitGame
            if answer in ("?", "l", "list", "help"):
                self.show_state(state)
                self.menu(state, legal)
                continue
            if answer in ("h", "hint"):
                self._show_hint(state, legal)
                continue
            if answer.isdigit() and 1 <= int(answer) <= n:
                return legal[int(answer) - 1]
            what = "nothing" if not answer else repr(raw.strip())
            self.console.print(
                f"[red]Not a valid choice:[/red] {escape(what)}. Enter {allowed}.",
                highlight=False,
                soft_wrap=True,
            )

    def _show_hint(self, state: Hashable, legal: Sequence[int]) -> None:
        advice = self.advisor.advise(state, self.player_view.pending)
        if advice.values:
            ranked = sorted(advice.values.items(), key=lambda kv: -kv[1])
            for a, v in ranked:
                i = legal.index(a) + 1 if a in legal else "?"
                word = "value" if advice.exact else "estimated value"
                self.narrator.text(f"  {i}. {self.rules.action_label(state, a)}: {word} {v:+.3f}")
        self._advice_note(advice, again=True)

    # ------------------------------------------------------------------ the end
    def finish(self, state: Hashable, result: str) -> None:
        """Print the final state and score."""
        rules = self.rules
        score = rules.returns(state)[self.seat] + 0.0  # no "-0.00"
        self.show_state(state, everything=rules.is_terminal(state))
        if result == "quit":
            self.console.print(
                f"You quit. Score so far: {score:+.2f} for you.", highlight=False, soft_wrap=True
            )
        else:
            verdict = "You win" if score > 0 else "You lose" if score < 0 else "A draw"
            self.console.print(
                f"[bold]Game over.[/bold] Final score {score:+.2f} for you: {verdict}.",
                highlight=False,
                soft_wrap=True,
            )
        if self.log is not None:
            self.console.print("Game log: ", end="", highlight=False, soft_wrap=True)
            self.narrator.text(str(self.log.path))
            self.console.print("Replay it with: ", end="", highlight=False, soft_wrap=True)
            self.narrator.text(f"psygym replay {shlex.quote(str(self.log.path))}")


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


__all__ = [
    "LOG_FORMAT",
    "Advice",
    "Advisor",
    "GameLog",
    "Narrator",
    "PlaySession",
    "QuitGame",
    "SessionResult",
    "action_odds",
    "format_odds",
    "scenario_info",
    "state_digest",
    "state_text",
]
