"""How many dice to commit to one 7th-edition power, solved exactly, beside ``double-wc``.

The situation is a small synthetic 7th-edition scenario built in code: one psyker (mastery 1,
2 wounds, Leadership 10, 1 point per wound) with one power still to cast this phase, a
malediction of warp charge ``wc`` worth ``power_value`` (2 by default) on an enemy squad that has
no psyker, so the enemy denies on 6+ (7E-5.2: no modifier, the target is not a psyker). The
caster has ``n`` dice (1-12), the denier ``d`` (0-6). The real rules decide everything else:
casting on 4+ (7E-4.3), Perils on two 6s with its table, wounds and Leadership tests (7E-4.4,
7E-6), the deny decision of an optimal denier (7E-5). The value of committing ``k`` dice is the
exact expected score of the caster when both sides play optimally afterwards; not casting is
worth 0.

:func:`optimal_dice_table` returns one row per (pool, warp charge, enemy dice);
:func:`plot_dice_table` draws it as a heatmap (one panel per warp charge).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from psygym.kernel import evolve

if TYPE_CHECKING:
    from psygym.editions.seventh.rules import SeventhRules
    from psygym.editions.seventh.state import State

DENY_THRESHOLD = 6
"""The synthetic target has no psyker, so the deny needs 6+ (7E-5.2)."""

_POWER_NAMES = {1: "Hex (WC 1)", 2: "Hex (WC 2)", 3: "Hex (WC 3)"}


FOLLOW_UP = "Follow-up (WC 2)"
"""The power still to come in the situations with another power after this one."""


def dice_table_rules(
    *,
    power_value: float = 2.0,
    caster_wounds: int = 2,
    caster_value_per_wound: float = 1.0,
    follow_up: bool = False,
) -> SeventhRules:
    """The synthetic 7th-edition rules of the dice table (see the module docstring).

    With ``follow_up`` the psyker also knows :data:`FOLLOW_UP`, a malediction of warp charge 2
    worth 2 on the same target, which it may cast after the power of the table (7E-4.1).
    """
    from psygym.editions.seventh.rules import SeventhRules
    from psygym.editions.seventh.spec import PowerFile, Scenario, load_perils
    from psygym.scenario import validate

    powers = {
        "power": [
            {
                "name": name, "discipline": "", "number": -1, "warp_charge": wc,
                "kind": "malediction", "target": "enemy", "range": 24,
                "effect": {"value": power_value},
            }
            for wc, name in _POWER_NAMES.items()
        ]
    }  # fmt: skip
    if follow_up:
        powers["power"].append({
            "name": FOLLOW_UP, "discipline": "", "number": -1, "warp_charge": 2,
            "kind": "malediction", "target": "enemy", "range": 24, "effect": {"value": 2.0},
        })  # fmt: skip
    data = {
        "edition": "7th",
        "name": "dice-table",
        "description": "One psyker, one power of warp charge 1-3, a denier without a psyker.",
        "game": {"battle_rounds": 1, "phase_limit": 1, "generate_powers": False},
        "sides": [
            {
                "name": "Caster",
                "pool_bonus": 6,  # room for pools of up to 13 dice in the action layout
                "units": [{
                    "name": "Psyker", "wounds": caster_wounds, "toughness": 4, "save": 3,
                    "leadership": 10, "position": [0, 0],
                    "value_per_wound": caster_value_per_wound,
                    "psyker": {"mastery": 1, "powers": [
                        *_POWER_NAMES.values(), *([FOLLOW_UP] if follow_up else [])]},
                }],
            },
            {
                "name": "Denier",
                "units": [{
                    "name": "Squad", "models": 5, "wounds": 1, "toughness": 4, "save": 3,
                    "leadership": 8, "position": [0, 12],
                }],
            },
        ],
    }  # fmt: skip
    scenario = validate(Scenario, data, "<dice table>")
    return SeventhRules(scenario, validate(PowerFile, powers, "<dice table powers>"), load_perils())


def _states(
    rules: SeventhRules, wc: int, pool: int, enemy: int, *, target_psyker: bool = False
) -> tuple[State, State]:
    """The SELECT state (the WC ``wc`` power left, and the follow-up) and its DICE state.

    ``target_psyker`` puts a psyker in the target (deny on 5+, 7E-5.2).
    """
    from psygym.editions.seventh.state import Cast, Stage

    s = rules.initial_state()
    if target_psyker:
        s = s.with_unit(1, psyker=True)
    p = rules.power_index[_POWER_NAMES[wc]]
    keep = {p, rules.power_index.get(FOLLOW_UP, -1)}
    attempted = frozenset((0, q) for q in s.units[0].powers if q not in keep)
    select = evolve(s, stage=Stage.SELECT, pools=(pool, enemy), attempted=attempted)
    return select, evolve(select, stage=Stage.DICE, cast=Cast(0, p, 1))


def commit_table(
    max_pool: int = 12,
    max_enemy_dice: int = 6,
    *,
    follow_up: bool = False,
    target_psyker: bool = False,
) -> list[dict[str, Any]]:
    """Exact best dice to commit by pool, warp charge and enemy dice, in four situations.

    The power (worth 2) is the last one of the phase, or (``follow_up``) the
    :data:`FOLLOW_UP` power (WC 2, worth 2) may still be cast with the dice left; the target has
    no psyker (deny on 6+) or (``target_psyker``) has one (deny on 5+, 7E-5.2). Both sides play
    optimally afterwards (7E-4, 7E-5, 7E-6).

    Returns:
        One dict per (warp charge, pool, enemy dice): ``warp_charge``, ``pool``, ``enemy_dice``,
        ``deny_threshold``, ``best_dice`` (0: do not cast), ``best_value``, ``double_wc_dice``,
        ``double_wc_value``, ``loss``, ``follow_up``, ``target_psyker``.
    """
    from psygym_agents.seventh import HEURISTICS
    from psygym_agents.solvers.expectiminimax import Solver

    rules = dice_table_rules(follow_up=follow_up)
    solver = Solver(rules)
    heuristic = HEURISTICS["double-wc"](rules)
    rows = []
    for wc in (1, 2, 3):
        for pool in range(1, max_pool + 1):
            for enemy in range(0, max_enemy_dice + 1):
                select, dice_state = _states(rules, wc, pool, enemy, target_psyker=target_psyker)
                p = rules.power_index[_POWER_NAMES[wc]]
                skip = evolve(select, attempted=select.attempted | {(0, p)})
                rest = solver.value(skip)  # not casting this power (the follow-up may be)
                by_action = solver.action_values(dice_state)
                values = [by_action[rules.actions.dice(k)] for k in range(1, pool + 1)]
                best_k = max(range(1, pool + 1), key=lambda k: (values[k - 1], -k))
                best_value = values[best_k - 1]
                # Casting wins a tie when it can succeed (a power of the same worth still to
                # come is as good cast first as last); a hopeless cast never does.
                if best_value < rest - 1e-12 or (best_value <= rest + 1e-12 and best_k < wc):
                    best_k, best_value = 0, rest
                if heuristic.choose(rules, select, 0) == 0:
                    dwc = 0
                else:
                    dwc = rules.actions.dice_of(heuristic.choose(rules, dice_state, 0))
                dwc_value = values[dwc - 1] if dwc else rest
                rows.append({
                    "warp_charge": wc, "pool": pool, "enemy_dice": enemy,
                    "deny_threshold": 5 if target_psyker else DENY_THRESHOLD,
                    "best_dice": best_k, "best_value": best_value, "double_wc_dice": dwc,
                    "double_wc_value": dwc_value, "loss": best_value - dwc_value,
                    "follow_up": follow_up, "target_psyker": target_psyker,
                })  # fmt: skip
    return rows


def deny_table(
    max_successes: int = 4,
    max_dice: int = 6,
    values: tuple[float, ...] = (1.0, 2.0, 3.0, 4.0),
    *,
    caster_dice_left: int = 3,
) -> list[dict[str, Any]]:
    """Exact best deny by the cast's successes, the denier's dice and the power's value.

    The situation: a malediction of warp charge 1 worth ``value`` has just been cast on the
    denier's squad (no psyker: deny on 6+, 7E-5.2) with ``successes`` successes; the caster
    keeps ``caster_dice_left`` dice for the :data:`FOLLOW_UP` power (WC 2, worth 2), which the
    denier may also deny with the dice it keeps (7E-5.1, 7E-5.3). Both sides play optimally.

    Returns:
        One dict per (value, successes, dice): ``value``, ``successes``, ``dice``,
        ``best_deny`` (dice to deny with, 0: let it through), ``deny_value`` and
        ``pass_value`` (the denier's expected score with the best deny and with none),
        ``caster_dice_left``.
    """
    from psygym_agents.solvers.expectiminimax import Solver

    from psygym.editions.seventh.state import Cast, Stage

    rows = []
    for value in values:
        rules = dice_table_rules(power_value=value, follow_up=True)
        solver = Solver(rules)
        select, _ = _states(rules, 1, caster_dice_left, 0)
        p = rules.power_index[_POWER_NAMES[1]]
        for succ in range(1, max_successes + 1):
            for dice in range(1, max_dice + 1):
                cast = Cast(0, p, 1, dice=max(succ, 1), successes=succ)
                deny = evolve(select, stage=Stage.DENY, cast=cast, pools=(caster_dice_left, dice))
                by_action = solver.action_values(deny)  # the denier's view
                opts = [by_action[rules.actions.deny(m)] for m in range(dice + 1)]
                best = max(range(dice + 1), key=lambda m: (opts[m], -m))
                rows.append({
                    "value": value, "successes": succ, "dice": dice, "best_deny": best,
                    "deny_value": opts[best], "pass_value": opts[0],
                    "caster_dice_left": caster_dice_left,
                })  # fmt: skip
    return rows


def optimal_dice_table(
    max_pool: int = 12,
    max_enemy_dice: int = 6,
    *,
    power_value: float = 2.0,
    caster_wounds: int = 2,
    caster_value_per_wound: float = 1.0,
) -> list[dict[str, Any]]:
    """Exact best number of dice for each pool size, warp charge and enemy dice.

    Args:
        max_pool: largest pool (1..``max_pool`` dice, at most 12).
        max_enemy_dice: largest deny pool (0..``max_enemy_dice``).
        power_value: value of the power when it takes effect.
        caster_wounds: wounds of the casting psyker (Perils can kill it).
        caster_value_per_wound: value of each of its wounds.

    Returns:
        One dict per (warp charge, pool, enemy dice) with keys ``warp_charge``, ``pool``,
        ``enemy_dice``, ``deny_threshold``, ``best_dice`` (0: do not cast), ``best_value``,
        ``double_wc_dice`` (what the ``double-wc`` heuristic commits, 0: it does not cast),
        ``double_wc_value``, ``loss`` (best - double-wc value) and ``values`` (value of
        committing 1..pool dice). Values are the caster's expected score.
    """
    from psygym_agents.seventh import HEURISTICS
    from psygym_agents.solvers.expectiminimax import Solver

    if not 1 <= max_pool <= 12:
        raise ValueError(f"max_pool must be 1..12, got {max_pool}")
    if not 0 <= max_enemy_dice <= 12:
        raise ValueError(f"max_enemy_dice must be 0..12, got {max_enemy_dice}")
    rules = dice_table_rules(
        power_value=power_value,
        caster_wounds=caster_wounds,
        caster_value_per_wound=caster_value_per_wound,
    )
    solver = Solver(rules)
    heuristic = HEURISTICS["double-wc"](rules)
    rows = []
    for wc in (1, 2, 3):
        for pool in range(1, max_pool + 1):
            for enemy in range(0, max_enemy_dice + 1):
                select, dice_state = _states(rules, wc, pool, enemy)
                by_action = solver.action_values(dice_state)
                values = [by_action[rules.actions.dice(k)] for k in range(1, pool + 1)]
                best_k = max(range(1, pool + 1), key=lambda k: (values[k - 1], -k))
                best_value = values[best_k - 1]
                if best_value <= 1e-12:  # not casting scores 0
                    best_k, best_value = 0, 0.0
                if heuristic.choose(rules, select, 0) == 0:
                    dwc = 0
                else:
                    dwc = rules.actions.dice_of(heuristic.choose(rules, dice_state, 0))
                dwc_value = values[dwc - 1] if dwc else 0.0
                rows.append({
                    "warp_charge": wc, "pool": pool, "enemy_dice": enemy,
                    "deny_threshold": DENY_THRESHOLD, "best_dice": best_k,
                    "best_value": best_value, "double_wc_dice": dwc,
                    "double_wc_value": dwc_value, "loss": best_value - dwc_value,
                    "values": values,
                })  # fmt: skip
    return rows


def plot_dice_table(rows: list[dict[str, Any]], path: str | Path) -> Path:
    """Save the table as a PNG heatmap: one panel per warp charge, pool by enemy dice.

    Each cell shows the optimal number of dice and, in brackets, what ``double-wc`` commits
    where it differs; the colour is the optimal number of dice.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    wcs = sorted({r["warp_charge"] for r in rows})
    pools = sorted({r["pool"] for r in rows})
    enemies = sorted({r["enemy_dice"] for r in rows})
    fig, axes = plt.subplots(
        1, len(wcs), figsize=(4.2 * len(wcs) + 1, 6), squeeze=False, layout="constrained"
    )
    vmax = max(pools)
    image = None
    for ax, wc in zip(axes[0], wcs):
        grid = np.full((len(pools), len(enemies)), np.nan)
        for r in rows:
            if r["warp_charge"] != wc:
                continue
            i, j = pools.index(r["pool"]), enemies.index(r["enemy_dice"])
            grid[i, j] = r["best_dice"]
            text = str(r["best_dice"])
            if r["double_wc_dice"] != r["best_dice"]:
                text += f" ({r['double_wc_dice']})"
            ax.text(
                j,
                i,
                text,
                ha="center",
                va="center",
                fontsize=7,
                color="white" if r["best_dice"] > vmax / 2 else "black",
                in_layout=False,  # inside its cell: the layout need not measure it
            )
        image = ax.imshow(grid, origin="lower", cmap="viridis", vmin=0, vmax=vmax, aspect="auto")
        ax.set_xticks(range(len(enemies)), [str(e) for e in enemies])
        ax.set_yticks(range(len(pools)), [str(p) for p in pools])
        ax.set_xlabel("enemy deny dice")
        if ax is axes[0][0]:
            ax.set_ylabel("dice in pool")
        ax.set_title(f"warp charge {wc}")
    threshold = rows[0]["deny_threshold"] if rows else DENY_THRESHOLD
    fig.suptitle(
        f"Optimal dice to commit (double-wc in brackets where it differs); deny on {threshold}+",
        fontsize=10,
    )
    if image is not None:
        fig.colorbar(image, ax=axes[0].tolist(), label="optimal dice (0: do not cast)")
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


ANSWER_SIZES = {"quick": (6, 2, 4, 2), "full": (12, 6, 7, 3), "sheet": (12, 6, 8, 4)}
"""Table sizes of :func:`answer_tables`: (largest pool and enemy dice of the last-power tables,
the same of the tables with a power still to come)."""


def _ranges(values: list[int]) -> str:
    """``"3 vs 0-1 enemy dice, 4 vs 2-6"``: runs of equal best dice by enemy dice."""
    runs: list[list[int]] = []
    for e, v in enumerate(values):
        if runs and runs[-1][2] == v:
            runs[-1][1] = e
        else:
            runs.append([e, e, v])
    parts = []
    for a, b, v in runs:
        what = "do not cast" if v == 0 else f"commit {v}"
        parts.append(f"{what} against {a if a == b else f'{a}-{b}'} enemy dice")
    return ", ".join(parts)


def _commit_answer(rows: list[dict[str, Any]], title: str, assumes: str) -> dict[str, Any]:
    pools = sorted({r["pool"] for r in rows})
    enemies = sorted({r["enemy_dice"] for r in rows})
    cell = {(r["warp_charge"], r["pool"], r["enemy_dice"]): r for r in rows}
    body = []
    for pool in pools:
        line = [str(pool)]
        for wc in (1, 2, 3):
            line.append(" ".join(str(cell[(wc, pool, e)]["best_dice"]) for e in enemies))
        body.append(line)
    pool = 7 if 7 in pools else pools[-1]
    example = _ranges([cell[(2, pool, e)]["best_dice"] for e in enemies])
    same = sum(r["best_dice"] == r["double_wc_dice"] for r in rows)
    return {
        "kind": "commit",
        "title": title,
        "assumes": assumes,
        "question": f"How many dice for warp charge 2 with {pool} dice?",
        "answer": f"{example}. double-wc (twice the warp charge) is optimal in {same} of "
        f"{len(rows)} cells of this table and loses {max(r['loss'] for r in rows):.2f} at worst.",
        "header": ["dice", "WC 1", "WC 2", "WC 3"],
        "note": "Each cell lists the optimal dice to commit against "
        + ", ".join(map(str, enemies))
        + " enemy deny dice, in that order (0: do not cast this power).",
        "rows": body,
        "data": rows,
    }


def _deny_answer(rows: list[dict[str, Any]]) -> dict[str, Any]:
    values = sorted({r["value"] for r in rows})
    succ = sorted({r["successes"] for r in rows})
    dice = sorted({r["dice"] for r in rows})
    cell = {(r["value"], r["successes"], r["dice"]): r for r in rows}
    body = [
        [f"{v:g}", str(s), *(str(cell[(v, s, d)]["best_deny"] or "-") for d in dice)]
        for v in values
        for s in succ
    ]
    left = rows[0]["caster_dice_left"]
    never = [
        s for s in succ if all(cell[(v, s, d)]["best_deny"] == 0 for v in values for d in dice)
    ]
    full = [
        s for s in succ if s not in never
        and all(cell[(v, s, d)]["best_deny"] in (0, d) for v in values for d in dice)
    ]  # fmt: skip
    answer = "Deny with every die you have whenever you have at least as many dice as the cast "
    answer += "has successes" if full else "has successes, but not always with all of them"
    if never:
        answer += f"; let a cast with {', '.join(map(str, never))} successes through"
    answer += " (the table gives the exact exceptions)."
    return {
        "kind": "deny",
        "title": "When to deny (7th edition)",
        "assumes": f"A warp charge 1 malediction was just cast on your squad (no psyker: each "
        f"die negates a success on 6+); the caster keeps {left} dice for one more power (warp "
        f"charge 2, worth 2), which your remaining dice may also deny; both sides optimal.",
        "question": "When should I deny, and with how many dice?",
        "answer": answer,
        "header": ["worth", "successes", *(f"{d} dice" if d > 1 else "1 die" for d in dice)],
        "note": "Each cell: the dice to deny with (-: do not deny).",
        "rows": body,
        "data": rows,
    }


def answer_tables(size: str = "full") -> list[dict[str, Any]]:
    """The player's questions answered exactly, as tables for reports and the cheat sheet.

    Args:
        size: ``quick`` (small tables, last power only), ``full`` or ``sheet`` (see
            :data:`ANSWER_SIZES`).

    Returns:
        One dict per table: ``kind`` (``commit`` or ``deny``), ``title``, ``assumes`` (the
        situation, in words), ``question``, ``answer`` (one sentence), ``header``, ``rows``
        (strings), ``note`` (how to read a cell) and ``data`` (the solver's rows: a commit
        table's are :func:`commit_table`'s, which :func:`plot_dice_table` draws).
    """
    pool, enemy, pool2, enemy2 = ANSWER_SIZES[size]
    out = []
    cases = [(False, False), (False, True)]
    if size != "quick":
        cases += [(True, False), (True, True)]
    for follow, psyker in cases:
        p, e = (pool2, enemy2) if follow else (pool, enemy)
        rows = commit_table(p, e, follow_up=follow, target_psyker=psyker)
        when = (
            "one more power still to come this phase (WC 2, worth 2, cast with the dice left)"
            if follow
            else "the last power of the phase"
        )
        target = "a target with a psyker (deny on 5+)" if psyker else (
            "a target without a psyker (deny on 6+)")  # fmt: skip
        out.append(_commit_answer(
            rows,
            f"Dice to commit: {'a power with another to come' if follow else 'the last power'}, "
            f"{'psyker' if psyker else 'non-psyker'} target",
            f"One psyker (mastery 1, 2 wounds, Ld 10) casts a malediction worth 2 on an enemy "
            f"squad; {when}; {target}; both sides optimal afterwards.",
        ))  # fmt: skip
    succ, dice = (2, 3) if size == "quick" else (4, 6)
    out.append(_deny_answer(deny_table(succ, dice, (1.0, 2.0, 3.0) if size == "quick" else
                                       (1.0, 2.0, 3.0, 4.0))))  # fmt: skip
    return out


__all__ = [
    "ANSWER_SIZES", "DENY_THRESHOLD", "FOLLOW_UP", "answer_tables", "commit_table",
    "deny_table", "dice_table_rules", "optimal_dice_table", "plot_dice_table",
]  # fmt: skip
