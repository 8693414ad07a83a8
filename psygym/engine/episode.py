"""The single env's game in the compiled core: one episode against the random opponent.

:class:`~psygym.envs.psychic.PsychicPhaseEnv` steps its game here when the scenario has a
compiled twin with an observation and the opponent is one the core plays (a policy that
declares ``uniform = True``: it draws uniformly among the legal actions). The core makes the
same draws from the same generator state as the reference env (:mod:`psygym.engine.vector`
says how), so the env's observations, rewards, masks and states are the reference's;
``tests/test_engine_episode.py`` holds them together step by step.

The core builds no events. Each step keeps its path instead (the state it started from and
every action applied: the agent's, the opponent's, each chance outcome), and
:class:`ReplayedEvents` replays that path on the reference rules when ``info["events"]`` is
first read, so the events and texts are the reference's own, paid for only when read.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Sequence
from typing import Any

import numpy as np

from psygym.core import Event
from psygym.engine import compiled_game
from psygym.engine.compiled import (
    CompiledGame,
    class_methods,
    generator_words,
    untouched,
    write_generator,
)


class ReplayedEvents(Sequence[Event]):
    """The events of one env step, replayed on the reference from the core's path when read.

    A read-only sequence equal to the list the reference env builds (``==`` compares it with
    any sequence of events).

    Args:
        rules: the reference rules.
        compiled: the scenario's compiled twin (its codec decodes the start).
        start: the core's bytes of the state the step started from.
        path: every action applied from ``start``, in order.
    """

    __slots__ = ("_compiled", "_events", "_path", "_rules", "_start")

    def __init__(self, rules: Any, compiled: CompiledGame, start: bytes, path: Sequence[int]):
        self._rules = rules
        self._compiled = compiled
        self._start = start
        self._path = tuple(path)
        self._events: list[Event] | None = None

    def _replayed(self) -> list[Event]:
        events = self._events
        if events is None:
            events = []
            state = self._compiled.decode(self._start)
            apply = self._rules.apply_with_events
            for action in self._path:
                state, happened = apply(state, action, check=False)
                events.extend(happened)
            self._events = events
        return events

    def __getitem__(self, index: Any) -> Any:
        return self._replayed()[index]

    def __len__(self) -> int:
        return len(self._replayed())

    def __iter__(self) -> Iterator[Event]:
        return iter(self._replayed())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str | bytes):
            return self._replayed() == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # equal to a list, so unhashable like one

    def __repr__(self) -> str:
        return repr(self._replayed())

    def __copy__(self) -> ReplayedEvents:
        return self.__deepcopy__({})

    def __deepcopy__(self, memo: dict[int, Any]) -> ReplayedEvents:
        # The path and the events are immutable and the rules are shared services, so a copy
        # stays lazy: SB3's DummyVecEnv deep-copies every step's infos.
        twin = ReplayedEvents(self._rules, self._compiled, self._start, self._path)
        twin._events = self._events
        return twin

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # Pickled (to another process) as the plain list of events: the core stays here.
        return (list, (self._replayed(),))


class CompiledEpisode:
    """One env's game in the core, with the generator kept in step with the env's.

    The core holds the generator while it steps; :meth:`release` writes its state back into
    the env's ``np_random`` before anyone else draws from it, and :meth:`adopt` hands the core
    the env's generator again.

    Args:
        rules: the reference rules.
        compiled: the scenario's compiled twin (it has an observation).
        seat: the agent's player.
    """

    def __init__(self, rules: Any, compiled: CompiledGame, seat: int):
        self.rules = rules
        self.compiled = compiled
        core = compiled.core
        self._pcg = core.Pcg64
        self._episode = core.Episode(compiled.game, rules.num_actions, seat, core.Pcg64(0, 0, 0, 1))
        self._episode.recording = True
        self.holds_generator = False
        self._methods = class_methods(rules)

    def serves(self, opponent: Any) -> bool:
        """Whether the core plays this step as the reference would.

        Not while a method of the rules is replaced on the instance (a test's spy or a
        replayed chance) or the opponent is one the core does not play (set after creation).
        """
        return getattr(opponent, "uniform", False) and untouched(self.rules, self._methods)

    @property
    def seat(self) -> int:
        """The agent's player."""
        return self._episode.seat

    @seat.setter
    def seat(self, value: int) -> None:
        self._episode.seat = value

    def adopt(self, rng: np.random.Generator) -> None:
        """Draw from ``rng``'s state on (the core takes the generator over)."""
        self._episode.generator = self._pcg(*generator_words(rng))
        self.holds_generator = True

    def release(self, rng: np.random.Generator) -> None:
        """Write the core generator's state into ``rng`` (it draws on from there)."""
        if not self.holds_generator:
            return
        write_generator(self._episode.generator.words, rng)
        self.holds_generator = False

    def reset(self) -> tuple[np.ndarray, np.ndarray, int]:
        """To the agent's first decision: ``(obs, mask, current player)``.

        Raises:
            RuntimeError: the agent never gets a decision (as the reference env says it).
        """
        try:
            obs, mask = self._episode.reset()
        except ValueError as err:
            raise RuntimeError(str(err)) from None
        return obs, mask, self._episode.player

    def step(self, action: int) -> tuple[np.ndarray, float, int, np.ndarray]:
        """The agent's legal action, then chance and the opponent: ``(obs, score, player, mask)``.

        ``score`` is the agent's score at the state reached.
        """
        obs, score, _ended, mask = self._episode.step(action)
        return obs, score, self._episode.player, mask

    def events(self) -> ReplayedEvents:
        """What the last reset or step did, replayed on the reference when read."""
        start, path = self._episode.path
        return ReplayedEvents(self.rules, self.compiled, start, path)

    def state(self) -> Hashable:
        """The reference state the episode stands at."""
        return self.compiled.decode(self._episode.state)

    def place(self, state: Hashable) -> bool:
        """Continue from ``state`` (set by the env's caller); False where the twin refuses it."""
        try:
            self._episode.set_state(self.compiled.encode(state))
        except ValueError:
            return False
        return True

    def score(self) -> float:
        """The agent's score at the episode's state."""
        return self._episode.score


def compiled_episode(rules: Any, opponent: Any, seat: int) -> CompiledEpisode | None:
    """The core's episode for an env of ``rules`` against ``opponent``, or ``None``.

    ``None`` where the env stays on the reference: ``PSYGYM_ENGINE=python`` or no core, no
    twin (or one without an observation) for the scenario, or an opponent the core does not
    play (only policies declaring ``uniform = True``).
    """
    if not getattr(opponent, "uniform", False):
        return None
    compiled = compiled_game(rules)
    if compiled is None or not compiled.game.observation_size:
        return None
    return CompiledEpisode(rules, compiled, seat)


__all__ = ["CompiledEpisode", "ReplayedEvents", "compiled_episode"]
