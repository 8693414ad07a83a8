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
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from psygym_experiments.common import printable
from psygym_experiments.harness.gamelog import LOG_FORMAT, state_digest, state_text
from psygym_experiments.harness.gamelog import GameLog as _ChainedLog
from psygym_experiments.harness.odds_view import action_odds, format_odds, outcome_note
from psygym_experiments.harness.player_view import (
    HIDDEN_OUTCOME,
    SECRET_CHOICE,
    PlayerView,
    Shown,
)
from psygym_experiments.harness.runs import free_name, timestamp
from psygym_experiments.play_advice import Advice, Advisor
from rich.console import Console
from rich.markup import escape

from psygym.core import CHANCE, Event, EventKind, sample_action


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
        odds = outcome_note(p) if p is not None else ""
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
            f"[bold]Your move{escape(mine)}, decision {self.player_view.decisions + 1}:[/bold]",
            highlight=False,
            soft_wrap=True,
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
                self.console.print(printable(raw), markup=False, highlight=False, soft_wrap=True)
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
            choice = _choice_number(answer)
            if choice is not None and 1 <= choice <= n:
                return legal[choice - 1]
            what = "nothing" if not answer else _quoted_answer(raw.strip())
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
            if self.player_view.decisions:
                self.console.print(
                    "Advice on decision N: ", end="", highlight=False, soft_wrap=True
                )
                self.narrator.text(
                    f"psygym advise --from-log {shlex.quote(str(self.log.path))} --at N"
                )


_MAX_CHOICE_DIGITS = 6  # no menu is that long; int() of thousands of digits raises
_SHOWN_ANSWER = 40  # characters of a bad answer quoted back; the rest is counted


def _choice_number(answer: str) -> int | None:
    """``answer`` as a number if it is ASCII digits only (not "²") and not too long to be one."""
    if not (answer.isascii() and answer.isdigit()):
        return None
    digits = answer.lstrip("0") or "0"
    return int(digits) if len(digits) <= _MAX_CHOICE_DIGITS else None


def _quoted_answer(answer: str) -> str:
    """A bad answer quoted back: ``repr`` (control characters escaped), a long one cut short."""
    if len(answer) <= _SHOWN_ANSWER:
        return repr(answer)
    return f"{answer[:_SHOWN_ANSWER]!r}... ({len(answer)} characters)"


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


__all__ = [
    "LOG_FORMAT",
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
