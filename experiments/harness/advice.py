"""Advice on one decision, in player terms: every legal choice with its expected final score.

The values come from the ``search`` agent (:class:`psygym_agents.solvers.search.LookaheadPolicy`):
exact within the current cast (7th, 8th) or turn (Rogue Trader) with every chance outcome
weighted by its probability, the board beyond valued by the scenario's shipped board value
(``V = 0`` when none is shipped), or exact for the whole game on a scenario the edition declares
solvable. The agent's ``note`` says which, with the value's error estimate. With secret hands
(2nd edition) the values are estimates of the information-set search.

- :func:`advise_state`: the choices at a state, best first, labelled with ``rules.describe``
  text (never action numbers), each with the same player's best follow-up decisions in the same
  cast ("which power first" -> "then roll 5 dice"), and the heuristics' choices.
- :func:`generation_advice`: 7th power generation (round 0 of ``rules.horizon``): the value of
  each discipline and, for each power it may roll, of keeping it or swapping it.
- :func:`decision_from_log`: the state before the N-th decision of a game log
  (:mod:`.gamelog`), replayed and checked step by step, which decision that is, and what the
  deciding player was shown since its previous decision (:class:`.player_view.PlayerView`, the
  view of play and serve: never the other hand's cards nor a pending secret bid).
- :func:`question`: what a decision asks, from the edition's ``question`` tool.
"""

from __future__ import annotations

from collections.abc import Hashable
from pathlib import Path
from typing import Any

from psygym.core import CHANCE, TERMINAL

FOLLOW_DEPTH = 3
"""How many follow-up decisions of the same player :func:`advise_state` chains after a choice."""


def tool(rules: Any, name: str) -> Any:
    """The edition agents' tool ``name`` (``Bots.tools``), or ``None``."""
    from psygym.edition import resolve
    from psygym.policies import bots_for

    bots = bots_for(rules.edition)
    target = None if bots is None else bots.tools.get(name)
    return None if target is None else resolve(target)


def question(rules: Any, state: Hashable) -> str:
    """What the decision at ``state`` asks, in player words (the edition's ``question`` tool)."""
    ask = tool(rules, "question")
    if ask is not None:
        return str(ask(rules, state))
    player = rules.current_player(state)
    return f"{rules.scenario.sides[player].name} (player {player}) to decide"


class _HiddenSearch:
    """``search`` for hidden hands with the ``note``/``action_values`` face of ``search``.

    :func:`~psygym_agents.solvers.search.hidden_search`: the phase searched in deals of the
    unseen cards where the board value asks for it, else the information-set search.
    """

    exact = False

    def __init__(self, rules: Any, iterations: int, seed: int):
        from psygym_agents.solvers.search import hidden_search

        self.search = hidden_search(rules, f"iterations={iterations},seed={seed}")
        self.note = self.search.note

    def action_values(self, rules: Any, state: Hashable) -> dict[int, float]:
        """Estimated final score of each legal action, from the mover's view."""
        _, values = self.search.search(rules, state, rules.current_player(state))
        return {a: values.get(a, float("-inf")) for a in rules.legal_actions(state)}


def search_agent(rules: Any, *, iterations: int = 2000, seed: int = 0) -> Any:
    """The ``search`` agent advice uses: ``note``, ``exact``, ``action_values(rules, state)``.

    :class:`~psygym_agents.solvers.search.LookaheadPolicy` (it loads the shipped board value
    itself; the whole Psychic phase searched wherever it fits), or for hidden hands the
    hidden-hand ``search`` (:func:`~psygym_agents.solvers.search.hidden_search`) with
    ``iterations`` and ``seed``.
    """
    from psygym_agents.solvers import has_hidden_information

    if has_hidden_information(rules):
        return _HiddenSearch(rules, iterations, seed)
    return lookahead_agent(rules)


def lookahead_agent(rules: Any) -> Any:
    """The ``search`` agent that advice and hints use where everything is seen.

    :class:`~psygym_agents.solvers.search.LookaheadPolicy` with the whole Psychic phase
    searched wherever it fits (``phase=True``).

    Raises:
        ImportError: the agents package is not installed.
    """
    from psygym_agents.solvers.search import LookaheadPolicy

    return LookaheadPolicy(rules, phase=True)


def _ranked(rules: Any, state: Hashable, values: dict[int, float]) -> list[tuple[int, float]]:
    return sorted(values.items(), key=lambda kv: (-kv[1], rules.action_label(state, kv[0])))


def _strategy(agent: Any, rules: Any, state: Hashable) -> dict[int, float] | None:
    """The equilibrium mix at a secret move (Rogue Trader bids), else ``None``."""
    if getattr(rules, "simultaneous_info", None) is None or not hasattr(agent, "solver"):
        return None
    if rules.simultaneous_info(state) is None and not _after_secret(rules, state):
        return None
    probs = agent.action_probabilities(rules, state, rules.current_player(state))
    return probs if len(probs) > 1 else None


def _after_secret(rules: Any, state: Hashable) -> bool:
    parent = getattr(rules, "simultaneous_parent", None)
    return parent is not None and parent(state) is not None


def follow_ups(agent: Any, rules: Any, state: Hashable, action: int) -> list[dict[str, Any]]:
    """The same player's next decisions after ``action`` with no chance roll in between.

    Up to :data:`FOLLOW_DEPTH` of them, each ``{"question", "best", "value", "choices":
    [{"label", "value"}...] best first}``, following the best choice each time.
    """
    player = rules.current_player(state)
    out: list[dict[str, Any]] = []
    s = rules.apply(state, action)
    while len(out) < FOLLOW_DEPTH and rules.current_player(s) == player:
        values = agent.action_values(rules, s)
        ranked = _ranked(rules, s, values)
        if len(ranked) < 2:
            break
        best, value = ranked[0]
        out.append(
            {
                "question": question(rules, s),
                "best": rules.action_label(s, best),
                "value": value,
                "choices": [{"label": rules.action_label(s, a), "value": v} for a, v in ranked],
            }
        )
        s = rules.apply(s, best)
    return out


def advise_state(
    rules: Any,
    state: Hashable,
    *,
    agent: Any = None,
    heuristics: list[str] | None = None,
    follow: bool = True,
) -> dict[str, Any]:
    """Every legal choice at ``state`` with its expected final score, best first.

    Args:
        rules: the rules.
        state: a decision state.
        agent: from :func:`search_agent` (default: made here).
        heuristics: names of heuristics whose choice (and what it gives up) to show.
        follow: add each choice's follow-up decisions (:func:`follow_ups`).

    Returns:
        ``{"player", "side", "question", "note", "exact", "actions": [{"label", "value",
        "loss", "probability"?, "then": [...]}...], "heuristics": [{"name", "label", "loss",
        "mixed"}...]}``; values are the expected final score of the player to move (score so
        far plus what it still gains).

    Raises:
        ValueError: ``state`` is not a decision.
    """
    from psygym.policies import resolve_policy

    player = rules.current_player(state)
    if player < 0:
        raise ValueError("advice is for a decision; this state is a chance roll or the game's end")
    agent = agent if agent is not None else search_agent(rules)
    values = agent.action_values(rules, state)
    ranked = _ranked(rules, state, values)
    best = ranked[0][1]
    mix = _strategy(agent, rules, state)
    hidden = isinstance(agent, _HiddenSearch)
    actions = []
    for a, v in ranked:
        row: dict[str, Any] = {"label": rules.action_label(state, a), "value": v, "loss": best - v}
        if mix is not None:
            row["probability"] = float(mix.get(a, 0.0))
        if follow and not hidden:
            row["then"] = follow_ups(agent, rules, state, a)
        actions.append(row)
    picks = []
    for name in heuristics or []:
        policy = resolve_policy(name, rules)
        probs = policy.action_probabilities(rules, state, player)
        chosen = max(probs, key=lambda a: (probs[a], -a))
        expected = sum(p * values[a] for a, p in probs.items())
        picks.append(
            {
                "name": name,
                "label": rules.action_label(state, chosen),
                "loss": best - expected,
                "mixed": len(probs) > 1,
            }
        )
    return {
        "player": player,
        "side": rules.scenario.sides[player].name,
        "question": question(rules, state),
        "note": agent.note,
        "exact": bool(agent.exact),
        "actions": actions,
        "heuristics": picks,
    }


def generation_advice(rules: Any, state: Hashable, *, agent: Any = None) -> dict[str, Any]:
    """The value of each generation choice at ``state`` and of each keep-or-swap after its roll.

    Returns:
        ``{"question", "side", "note", "choices": [{"label", "value", "rolls": [{"label",
        "probability", "question", "choices": [{"label", "value"}...]}...]}...]}``: a roll
        whose next decision is not the same player's (nothing to keep or swap) has no
        ``choices``. Values are the mover's expected final score.
    """
    agent = agent if agent is not None else search_agent(rules)

    def rolls_of(rolled: Hashable) -> tuple[list[dict[str, Any]], int | None]:
        rolls, who = [], None
        if rules.current_player(rolled) != CHANCE:
            return rolls, who
        for o, p in rules.chance_outcomes(rolled):
            after = rules.apply(rolled, o)
            row: dict[str, Any] = {"label": rules.action_label(rolled, o), "probability": p}
            mover = rules.current_player(after)
            if mover >= 0 and len(rules.legal_actions(after)) > 1:
                who = mover
                ranked = _ranked(rules, after, agent.action_values(rules, after))
                row["question"] = question(rules, after)
                row["choices"] = [
                    {"label": rules.action_label(after, b), "value": w} for b, w in ranked
                ]
            rolls.append(row)
        return rolls, who

    player = rules.current_player(state)
    out = []
    if player == CHANCE:  # nothing to choose before the roll (one discipline)
        rolls, player = rolls_of(state)
        if player is None:
            raise ValueError("--generation: this roll leads to no choice to advise on")
        value = sum(r["probability"] * r["choices"][0]["value"] for r in rolls if "choices" in r)
        out.append({"label": "(one discipline: no choice before the roll)", "value": value,
                    "rolls": rolls})  # fmt: skip
    else:
        for a, v in _ranked(rules, state, agent.action_values(rules, state)):
            rolls, _ = rolls_of(rules.apply(state, a))
            out.append({"label": rules.action_label(state, a), "value": v, "rolls": rolls})
    return {
        "question": question(rules, state),
        "side": rules.scenario.sides[player].name,
        "note": agent.note,
        "choices": out,
    }


def _read_log(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """Every line of the game log ``path``, its hash chain and header format checked."""
    from psygym_experiments.harness.gamelog import (
        check_format,
        check_log_path,
        read_json_lines,
        verify_chain,
    )

    try:
        check_log_path(path)  # the check replay makes: a folder or nothing there
    except (OSError, ValueError) as exc:
        raise type(exc)(f"--from-log: {exc}") from None
    lines = list(verify_chain(list(read_json_lines(path)), str(path)))
    if lines and lines[0][1].get("type") == "header":
        check_format(lines[0][1], f"{path}: line 1")
    return lines


def decision_from_log(path: str | Path, at: int) -> tuple[Any, Hashable, dict[str, Any]]:
    """The rules and the state before decision ``at`` (from 1) of a game log, and what it was.

    Chance steps are not decisions. The log's hash chain and every step are checked.

    Returns:
        ``(rules, state, info)`` with ``info = {"decision", "decisions", "line", "step",
        "side", "played", "edition", "scenario", "seen"}`` (``played``: the label of the choice
        the game made there; ``seen``: the :class:`~.player_view.Shown` steps the deciding
        player was shown since its previous decision, for the caller to print).

    Raises:
        ValueError: a folder or not a game log, a broken chain, a header format other than
            this psygym's, a step the rules refuse, or ``at`` out of range (the message gives
            the number of decisions).
        FileNotFoundError: no such file.
    """
    from psygym_experiments.harness.player_view import PlayerView

    from psygym.editions import load

    p = Path(path)
    lines = _read_log(p)
    if not lines or lines[0][1].get("type") != "header":
        raise ValueError(f"{p}: line 1: expected the game header (not a psygym game log)")
    header = lines[0][1]
    edition = header.get("edition")
    if not edition:
        raise ValueError(f"{p}: line 1: the header has no edition")
    rules = load(str(edition), str(header.get("scenario_arg") or header.get("scenario") or ""))
    steps = [(n, obj) for n, obj in lines[1:] if obj.get("type") == "step"]
    state = rules.initial_state()
    count = sum(1 for _, obj in steps if obj.get("player") != "chance")
    if count == 0:
        raise ValueError(f"--from-log: {p} holds no decision (the game ended or was quit first)")
    if not 1 <= at <= count:
        raise ValueError(f"--at: {p} holds {count} decisions, so --at is 1..{count}, got {at}")
    views = [PlayerView(rules, seat) for seat in (0, 1)]
    shown: list[list[Any]] = [[], []]  # per player: what it was shown since its last decision
    seen = 0
    for n, obj in steps:
        action = obj.get("action")
        mover = rules.current_player(state)
        if mover == TERMINAL or not isinstance(action, int):
            raise ValueError(f"{p}: line {n}: the step does not follow from the rules")
        if mover >= 0:
            seen += 1
            if seen == at:
                info = {
                    "decision": at,
                    "decisions": count,
                    "line": n,
                    "step": obj.get("n"),
                    "side": rules.scenario.sides[mover].name,
                    "played": rules.action_label(state, action),
                    "edition": rules.edition,
                    "scenario": rules.scenario.name,
                    "seen": tuple(shown[mover]),
                }
                return rules, state, info
        chance = dict(rules.chance_outcomes(state)).get(action) if mover == CHANCE else None
        try:
            nxt, events = rules.apply_with_events(state, action)
        except ValueError as exc:
            raise ValueError(f"{p}: line {n}: {exc}") from None
        for seat, view in enumerate(views):
            if seat == mover:
                shown[seat].clear()
            step = view.see(state, action, events, chance)
            if seat != mover:
                shown[seat].append(step)
        state = nxt
    raise AssertionError("unreachable: the decision count was checked")


__all__ = [
    "FOLLOW_DEPTH", "advise_state", "decision_from_log", "follow_ups", "generation_advice",
    "lookahead_agent", "question", "search_agent", "tool",
]  # fmt: skip
