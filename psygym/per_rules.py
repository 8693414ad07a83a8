"""What a module keeps per rules object, for the few rules objects used most recently.

Solvers, compiled twins and searches keep memos per rules object. A
:class:`weakref.WeakKeyDictionary` would drop an entry with its rules object, but an entry that
refers back to its rules (a solver holds the rules it solves) keeps that rules object alive for
as long as the module lives: a process that plays a new army list every game (a general board
value's self-play) kept every list's rules and memos and grew by gigabytes within minutes.

:class:`PerRules` keeps the entries of the :data:`KEEP` rules objects used most recently and
drops the oldest entry when another rules object arrives; the dropped rules object, and
whatever its entry held, is then freed once nothing else holds it. A dropped entry is built
again if its rules object comes back, which costs time and never changes a result.

:func:`memo_per_rules` memoises a function of a rules object and plain values (numbers): its
results live as long as the rules object does. (``functools.lru_cache`` keyed by the rules
object would hold every rules object it met until its size bound pushed it out.)
"""

from __future__ import annotations

import functools
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Generic, TypeVar

T = TypeVar("T")

KEEP = 4
"""Rules objects whose entries a :class:`PerRules` keeps (a process plays one or two at a time;
a server a few)."""


class PerRules(Generic[T]):
    """A mapping from rules objects to entries, holding the ``keep`` most recently used.

    Reading or writing an entry makes its rules object the most recent. Safe to use from several
    threads (a server's).

    Args:
        keep: how many rules objects' entries are kept (at least 1).
    """

    def __init__(self, keep: int = KEEP):
        if keep < 1:
            raise ValueError(f"PerRules keeps at least 1 rules object, not {keep}")
        self.keep = keep
        self._entries: OrderedDict[Any, T] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, rules: Any, default: T | None = None) -> T | None:
        """The entry of ``rules``, or ``default`` (which is not stored)."""
        with self._lock:
            if rules not in self._entries:
                return default
            self._entries.move_to_end(rules)
            return self._entries[rules]

    def setdefault(self, rules: Any, default: T) -> T:
        """The entry of ``rules``; ``default`` is stored and returned when it has none."""
        with self._lock:
            if rules in self._entries:
                self._entries.move_to_end(rules)
                return self._entries[rules]
            self._store(rules, default)
            return default

    def __getitem__(self, rules: Any) -> T:
        with self._lock:
            self._entries.move_to_end(rules)
            return self._entries[rules]

    def __setitem__(self, rules: Any, entry: T) -> None:
        with self._lock:
            self._store(rules, entry)

    def __contains__(self, rules: Any) -> bool:
        with self._lock:
            return rules in self._entries

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def clear(self) -> None:
        """Drop every entry."""
        with self._lock:
            self._entries.clear()

    def _store(self, rules: Any, entry: T) -> None:
        self._entries[rules] = entry
        self._entries.move_to_end(rules)
        while len(self._entries) > self.keep:
            self._entries.popitem(last=False)


def memo_per_rules(f: Callable[..., T]) -> Callable[..., T]:
    """``f(rules, *args)`` memoised per rules object, for as long as that object lives.

    ``args`` must be hashable and the results must not refer to the rules object (numbers do
    not), or the rules object would outlive its last user.
    """
    memo: weakref.WeakKeyDictionary[Any, dict[tuple[Any, ...], T]] = weakref.WeakKeyDictionary()

    @functools.wraps(f)
    def memoised(rules: Any, *args: Any) -> T:
        per = memo.get(rules)
        if per is None:
            per = memo[rules] = {}
        if args not in per:
            per[args] = f(rules, *args)
        return per[args]

    return memoised


__all__ = ["KEEP", "PerRules", "memo_per_rules"]
