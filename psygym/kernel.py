"""The shared kernel every edition's rules use: the fast frozen-state copy and chance tables.

- :func:`evolve` is ``dataclasses.replace`` for frozen states, about five times faster: it copies
  the instance dictionary instead of calling ``__init__`` (states have no ``__post_init__``
  checks to skip), and still rejects a field name the class does not have.
- :class:`ChanceTable` holds one chance node's exact outcomes once, with the float cumulative
  table that :meth:`ChanceTable.sample` draws from, so sampling and exact solving read the same
  numbers (DESIGN: chance is an explicit node with exact outcomes).
- :func:`weighted_choice` is the one weighted random draw (policies' action probabilities,
  chance outcomes): one uniform number, one binary search.
- :class:`ChanceCache` memoises tables per chance-node key, for rules whose node distribution
  depends on a few fields of the state.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import fields, is_dataclass
from fractions import Fraction
from itertools import accumulate
from typing import Any, TypeVar

import numpy as np

T = TypeVar("T")

_new = object.__new__
_set = object.__setattr__
_FIELDS: dict[type, frozenset[str]] = {}
_SLOTTED: dict[type, tuple[str, ...]] = {}


def _field_names(cls: type) -> frozenset[str]:
    names = _FIELDS.get(cls)
    if names is None:
        if not is_dataclass(cls):
            raise TypeError(f"evolve needs a dataclass instance, got {cls.__name__}")
        names = _FIELDS[cls] = frozenset(f.name for f in fields(cls))
        if not hasattr(cls, "__dict__") or "__slots__" in cls.__dict__:
            _SLOTTED[cls] = tuple(f.name for f in fields(cls))
    return names


def evolve(obj: T, **changes: Any) -> T:
    """A copy of the frozen dataclass ``obj`` with ``changes`` applied (fast ``replace``).

    Raises:
        TypeError: a name in ``changes`` is not a field of ``obj``'s class.
    """
    cls = type(obj)
    names = _field_names(cls)
    if not names.issuperset(changes):
        unknown = ", ".join(sorted(set(changes) - names))
        raise TypeError(f"{cls.__name__} has no field(s) {unknown}")
    out = _new(cls)
    slotted = _SLOTTED.get(cls)
    if slotted is None:
        values = obj.__dict__.copy()
        values.update(changes)
        _set(out, "__dict__", values)
    else:
        get = changes.get
        for name in slotted:
            _set(out, name, get(name, getattr(obj, name)))
    return out


def weighted_choice(items: Sequence[T], weights: Sequence[float], rng: np.random.Generator) -> T:
    """One of ``items`` drawn with probability proportional to ``weights`` (one uniform draw)."""
    if len(items) == 1:
        return items[0]
    cumulative = list(accumulate(float(w) for w in weights))
    idx = bisect_right(cumulative, rng.random() * cumulative[-1])
    return items[min(idx, len(items) - 1)]


class ChanceTable:
    """The exact outcomes of one chance node and the float table sampling draws from.

    Attributes:
        exact: ``(outcome, probability)`` pairs as given (``Fraction`` or float), in order.
        outcomes: the same with float probabilities: what ``chance_outcomes`` returns. Rules'
            outcomes are action numbers; a dice sampler's may be any hashable value.
        cumulative: running sums of the float probabilities (the last is 1 up to rounding).
    """

    __slots__ = ("cumulative", "exact", "outcomes")

    def __init__(self, exact: Iterable[tuple[int, float | Fraction]]):
        self.exact: tuple[tuple[Any, float | Fraction], ...] = tuple(exact)
        if not self.exact:
            raise ValueError("a chance table needs at least one outcome")
        self.outcomes: list[tuple[Any, float]] = [(o, float(p)) for o, p in self.exact]
        self.cumulative: list[float] = list(accumulate(p for _, p in self.outcomes))

    @classmethod
    def from_weights(cls, weights: Iterable[tuple[int, int | Fraction]]) -> ChanceTable:
        """A table from whole-number (or exact) weights, normalised exactly."""
        pairs = [(o, Fraction(w)) for o, w in weights if w]
        total = sum((w for _, w in pairs), Fraction(0))
        return cls((o, w / total) for o, w in pairs)

    def sample(self, rng: np.random.Generator) -> Any:
        """One outcome drawn with ``rng`` from exactly these probabilities."""
        cumulative = self.cumulative
        idx = bisect_right(cumulative, rng.random() * cumulative[-1])
        return self.outcomes[min(idx, len(cumulative) - 1)][0]

    def probability(self, outcome: int) -> float:
        """The float probability of ``outcome`` (0 if it is not listed)."""
        for o, p in self.outcomes:
            if o == outcome:
                return p
        return 0.0

    def __len__(self) -> int:
        return len(self.outcomes)

    def __repr__(self) -> str:
        return f"ChanceTable({self.outcomes!r})"


class ChanceCache:
    """Chance tables memoised by a key that fixes the node's distribution.

    ``get(key, build)`` returns the table for ``key``, calling ``build()`` (which returns the
    exact ``(outcome, probability)`` pairs) the first time only. The cache is bounded: past
    ``max_size`` keys it is cleared, so long runs over many distinct nodes stay in memory.
    """

    __slots__ = ("_tables", "max_size")

    def __init__(self, max_size: int = 200_000):
        self._tables: dict[Hashable, ChanceTable] = {}
        self.max_size = max_size

    def get(self, key: Hashable, build: Callable[[], Iterable[tuple[int, float | Fraction]]]):
        """The table for ``key`` (built with ``build`` on a miss)."""
        table = self._tables.get(key)
        if table is None:
            if len(self._tables) >= self.max_size:
                self._tables.clear()
            table = self._tables[key] = ChanceTable(build())
        return table

    def __len__(self) -> int:
        return len(self._tables)


__all__ = ["ChanceCache", "ChanceTable", "evolve", "weighted_choice"]
