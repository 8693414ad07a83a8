"""Exact values of every scenario of a comparison, computed beside the games in one process.

A single side process (:class:`ExactSide`) builds each scenario's state graph
(:mod:`.compare_graph`) in the order given, as soon as the comparison starts, and keeps the
graphs in memory. Once a scenario's field is known the caller asks for the exact scores of
all its pairings and the best responses of its agents (:meth:`ExactSide.submit_field`); they
are computed over the graph already built, while the games are played in the worker pool.
A build stops at the state limit or the CPU-time limit, so no caller ever waits on a solve that
cannot succeed: it asks :meth:`ExactSide.ready` and goes on without the optimum if the graph
is not there yet.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from psygym_experiments.harness.lifecycle import pool_initializer

_GRAPHS: dict[tuple[str, str], Any] = {}
"""Graphs built in the side process, by (edition, scenario)."""


@dataclass
class Built:
    """What building a scenario's graph gave.

    Attributes:
        value: the game's value for seat 0, both players optimal (``None``: not solved).
        note: why it is not solved.
        states: decision and chance nodes of the graph (or enumerated before giving up).
        seconds: CPU seconds the build took.
    """

    value: float | None
    note: str = ""
    states: int = 0
    seconds: float = 0.0


@dataclass
class FieldValues:
    """Exact values of one field (indices are the field's agent order).

    Attributes:
        pairs: (seat-0 index, seat-1 index) -> exact expected score of seat 0.
        best_response: agent index -> [best response's seat-0 score with the agent in seat 0,
            the same with the agent in seat 1] (``None`` for a seat it does not play).
        seconds: CPU seconds spent on the agents' decisions and the backward passes.
        note: why nothing was computed, if nothing was.
    """

    pairs: dict[tuple[int, int], float] = field(default_factory=dict)
    best_response: dict[int, list[float | None]] = field(default_factory=dict)
    seconds: float = 0.0
    note: str = ""


def _build(edition: str, scenario: str, max_states: int | None, cpu_seconds: float) -> Built:
    """Side-process task: build and keep the graph of one scenario."""
    from psygym_experiments.harness.compare_graph import GraphTooLarge, build_graph

    from psygym.editions import load

    t0 = time.process_time()
    rules = load(edition, scenario)
    try:
        graph = build_graph(rules, max_states, cpu_seconds, clock=time.process_time)
    except GraphTooLarge as exc:
        return Built(None, str(exc), 0, time.process_time() - t0)
    _GRAPHS[(edition, scenario)] = graph
    return Built(graph.value(None, None), "", graph.size, time.process_time() - t0)


def _field(
    edition: str,
    scenario: str,
    specs: Sequence[str],
    pairs: Sequence[tuple[int, int]],
    br_agents: Sequence[int],
    optimal: str,
    seats: dict[int, tuple[int, ...]] | None = None,
) -> FieldValues:
    """Side-process task: exact scores and best responses of a field over the kept graph."""
    from psygym_experiments.harness.compare_graph import exact_field

    from psygym.policies import resolve_policy

    graph = _GRAPHS.get((edition, scenario))
    if graph is None:
        return FieldValues(note="the game is not solved")
    t0 = time.process_time()
    policies = [None if s == optimal else resolve_policy(s, graph.rules) for s in specs]
    done = exact_field(graph, policies, pairs, br_agents, seats)
    return FieldValues(done.pairs, done.best_response, time.process_time() - t0)


class ExactSide:
    """One side process that builds scenario graphs in order and evaluates fields over them.

    Args:
        scenarios: (edition, scenario) pairs to build, in the order to build them.
        max_states: the state limit of a graph.
        cpu_seconds: the CPU-time limit of one build.
    """

    def __init__(
        self, scenarios: Sequence[tuple[str, str]], max_states: int | None, cpu_seconds: float
    ):
        from concurrent.futures import ProcessPoolExecutor

        self._pool = ProcessPoolExecutor(
            max_workers=1, initializer=pool_initializer, initargs=(os.getpid(),)
        )
        self.builds = {
            sc: self._pool.submit(_build, *sc, max_states, cpu_seconds) for sc in scenarios
        }

    def ready(self, edition: str, scenario: str) -> Built | None:
        """The build of a scenario if it has finished, else ``None`` (never waits)."""
        fut = self.builds.get((edition, scenario))
        if fut is None or not fut.done():
            return None
        return self._result(fut)

    def built(self, edition: str, scenario: str) -> Built | None:
        """The build of a scenario, waiting for it (``None``: it was never asked for)."""
        fut = self.builds.get((edition, scenario))
        return None if fut is None else self._result(fut)

    @staticmethod
    def _result(fut: Any) -> Built:
        try:
            return fut.result()
        except Exception as exc:  # noqa: BLE001 - reported with the scenario
            return Built(None, f"{type(exc).__name__}: {exc}")

    def submit_field(
        self,
        edition: str,
        scenario: str,
        specs: Sequence[str],
        pairs: Sequence[tuple[int, int]],
        br_agents: Sequence[int],
        optimal: str = "optimal",
        seats: dict[int, tuple[int, ...]] | None = None,
    ) -> Any:
        """Start the exact values of a field (a future of :class:`FieldValues`).

        ``seats``: agent index -> the only seats it plays (see ``exact_field``).
        """
        return self._pool.submit(
            _field, edition, scenario, list(specs), list(pairs), list(br_agents), optimal,
            seats,
        )  # fmt: skip

    def close(self) -> None:
        """Stop the side process (builds not started are cancelled)."""
        self._pool.shutdown(wait=False, cancel_futures=True)


__all__ = ["Built", "ExactSide", "FieldValues"]
