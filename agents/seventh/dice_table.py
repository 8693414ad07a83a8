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


def dice_table_rules(
    *, power_value: float = 2.0, caster_wounds: int = 2, caster_value_per_wound: float = 1.0
) -> SeventhRules:
    """The synthetic 7th-edition rules of the dice table (see the module docstring)."""
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
                    "psyker": {"mastery": 1, "powers": list(_POWER_NAMES.values())},
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


def _states(rules: SeventhRules, wc: int, pool: int, enemy: int) -> tuple[State, State]:
    """The SELECT state (only the WC ``wc`` power left) and its DICE state."""
    from psygym.editions.seventh.state import Cast, Stage

    s = rules.initial_state()
    p = rules.power_index[_POWER_NAMES[wc]]
    attempted = frozenset((0, q) for q in s.units[0].powers if q != p)
    select = evolve(s, stage=Stage.SELECT, pools=(pool, enemy), attempted=attempted)
    return select, evolve(select, stage=Stage.DICE, cast=Cast(0, p, 1))


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


__all__ = ["DENY_THRESHOLD", "dice_table_rules", "optimal_dice_table", "plot_dice_table"]
