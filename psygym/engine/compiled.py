"""A rules object's compiled twin: the core game of its scenario and the edition's codec."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any


class CompiledGame:
    """The compiled rules of one scenario, speaking reference states.

    Args:
        game: the core's ``Game`` for the scenario.
        codec: the edition's :class:`~psygym.engine.Codec`.
        core: the compiled module (for its ``Solver`` and errors).
    """

    def __init__(self, game: Any, codec: Any, core: Any):
        self.game = game
        self.codec = codec
        self.core = core

    def encode(self, state: Hashable) -> bytes:
        """The state as the core's bytes."""
        return self.codec.encode(state)

    def decode(self, data: bytes) -> Hashable:
        """The core's bytes as a reference state."""
        return self.codec.decode(data)

    def solver(
        self, max_states: int | None = None, *, within: Any = None, steps: int = 1,
        value: Any = None, pairs: bool = True, phases: bool = False,
    ) -> Any:  # fmt: skip
        """A fresh memoised solver over this game (``max_states=None``: no state limit).

        Exact, or with ``within`` (a ``(round, step)`` horizon) the ``search`` agent's
        lookahead over ``steps`` units, a leaf worth the score so far plus ``value`` (the
        core's ``ValueNet``; ``None``: the score alone). ``pairs``: secret pairs of decisions
        are matrix games (else two decisions in a row, for rules that announce none).
        ``phases``: the units are Psychic phases (``Game.phase_horizon``).
        """
        limit = -1 if max_states is None else int(max_states)
        if within is None:
            return self.core.Solver(self.game, limit, pairs=pairs)
        return self.core.Solver(self.game, limit, within=within, steps=steps, value=value,
                                pairs=pairs, phases=phases)  # fmt: skip


_WORD = (1 << 64) - 1


def generator_words(rng: Any) -> tuple[int, int, int, int]:
    """A numpy PCG64 generator's state as the core's four 64-bit words.

    ``(state_hi, state_lo, inc_hi, inc_lo)``, what the core's ``Pcg64`` is made from and
    reports as ``words``: a core generator made from them draws what ``rng`` would draw next.

    Raises:
        ValueError: ``rng`` is not driven by numpy's PCG64.
    """
    state = rng.bit_generator.state
    if state.get("bit_generator") != "PCG64":
        raise ValueError(f"the compiled engine draws with numpy's PCG64, "
                         f"not {state.get('bit_generator')}")  # fmt: skip
    s, inc = state["state"]["state"], state["state"]["inc"]
    return (s >> 64, s & _WORD, inc >> 64, inc & _WORD)


def class_methods(rules: Any) -> frozenset[str]:
    """The names of the methods of ``rules``' class (for :func:`untouched`)."""
    cls = type(rules)
    return frozenset(
        name for name in dir(cls) if not name.startswith("__") and callable(getattr(cls, name))
    )


def untouched(rules: Any, methods: frozenset[str]) -> bool:
    """Whether no method of ``rules`` is replaced on the instance.

    A test's spy or a replayed chance does that; only without one does the core answer as the
    reference would.
    """
    return rules.__dict__.keys().isdisjoint(methods)


def write_generator(words: tuple[int, int, int, int], rng: Any) -> None:
    """Set numpy generator ``rng`` to the core generator state ``words`` (it draws on from there).

    ``words`` is a core ``Pcg64``'s ``(state_hi, state_lo, inc_hi, inc_lo)``; ``rng``'s other
    fields (a cached half-word) stay as they are.
    """
    s_hi, s_lo, i_hi, i_lo = words
    state = rng.bit_generator.state
    state["state"] = {"state": (s_hi << 64) | s_lo, "inc": (i_hi << 64) | i_lo}
    rng.bit_generator.state = state


def core_generator(core: Any, rng: Any) -> Any:
    """The core's ``Pcg64`` at ``rng``'s state (the two then draw the same numbers)."""
    return core.Pcg64(*generator_words(rng))


def check_capacities(game_id: str, limits: list[tuple[str, int, int, str]]) -> None:
    """Refuse a scenario past a compiled capacity, naming the field and the limit.

    Args:
        game_id: the compiled game's id (named in the error).
        limits: ``(field, value, limit, name of the limit)`` for each capacity.

    Raises:
        ScenarioError: the first value over its limit.
    """
    from psygym.scenario import ScenarioError

    for field, value, limit, name in limits:
        if value > limit:
            raise ScenarioError(f"compiled engine ({game_id})", field,
                                f"{value} is past the compiled engine's capacity",
                                f"at most {limit} ({name})")  # fmt: skip


def build_compiled(rules: Any, core: Any) -> CompiledGame | None:
    """The compiled twin of ``rules``, or ``None`` where its edition has none.

    Only the edition's own rules class is compiled: a subclass may change what the reference
    does, so it keeps running on the reference; so does a scenario past one of the twin's
    compiled capacities (the codec's ``ScenarioError`` names it).
    """
    from psygym.edition import editions, resolve

    edition = next((e for e in editions() if e.id == rules.edition), None)
    if edition is None or edition.engine is None:
        return None
    codec = resolve(edition.engine)
    if type(rules) is not codec.rules_class() or codec.game_id not in core.registered_games():
        return None
    from psygym.scenario import ScenarioError

    try:
        ints, reals = codec.encode_scenario(rules)
    except ScenarioError:
        return None  # past a compiled capacity: the reference plays it, with the same results
    game = core.Game(codec.game_id, ints, reals)
    # A codec whose state layout depends on more of the scenario than a state says binds to it.
    return CompiledGame(game, codec.bind(rules) if hasattr(codec, "bind") else codec, core)
