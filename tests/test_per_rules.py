"""Memos kept per rules object: bounded to the rules objects used last, so lists can come and go.

A process that plays a new generated army list every game (a general value's self-play) must
free the lists it is done with, although a solver refers back to the rules it solves.
"""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest
from psygym_agents.solvers.search import LookaheadPolicy

from psygym.core import play_game
from psygym.editions import load
from psygym.per_rules import KEEP, PerRules


class _Key:
    """A stand-in rules object (hashable by identity, weakly referable)."""


def test_the_least_recently_used_entry_goes_first():
    memo: PerRules[str] = PerRules(keep=2)
    a, b, c = _Key(), _Key(), _Key()
    memo[a] = "a"
    assert memo.setdefault(b, "b") == "b" and memo.setdefault(b, "other") == "b"
    assert memo.get(a) == "a"  # a is now the most recent, so b goes when c comes
    memo[c] = "c"
    assert a in memo and c in memo and b not in memo and len(memo) == 2
    assert memo.get(b) is None and memo.get(b, "none") == "none" and b not in memo
    with pytest.raises(KeyError):
        memo[b]
    memo.clear()
    assert len(memo) == 0


def test_a_memo_keeps_at_least_one():
    with pytest.raises(ValueError, match="at least 1"):
        PerRules(keep=0)


def test_a_dropped_entry_frees_the_rules_it_refers_back_to():
    memo: PerRules[list] = PerRules(keep=1)
    first = _Key()
    memo[first] = [first]  # the entry refers back to its key, as a solver to its rules
    gone = weakref.ref(first)
    del first
    memo[_Key()] = []
    gc.collect()
    assert gone() is None


@pytest.mark.parametrize("edition", ["rt", "7th", "8th"])
def test_search_on_many_lists_frees_all_but_the_last_few(edition):
    """``search`` (exact solves, phase searches, compiled twins) on a new list every game."""
    n, alive = KEEP + 4, []
    for seed in range(n):
        rules = load(edition, f"random:{seed},rounds=1,psykers=1")
        agent = LookaheadPolicy(rules)
        play_game(rules, [agent, agent], np.random.default_rng(seed))
        alive.append(weakref.ref(rules))
        del rules, agent
    gc.collect()
    assert [ref() is None for ref in alive[:-KEEP]] == [True] * (n - KEEP)
