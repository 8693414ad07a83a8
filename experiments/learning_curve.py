"""How close does MaskablePPO get to the exact optimum of the default edition's ``single-phase``?

Run: ``python -m psygym_experiments.learning_curve --steps 200000`` (add ``--runs-dir``, ``--seed``,
``--opponent``). It trains MaskablePPO in seat 0 (the casting Ultramarines) against a fixed
denier (default ``double-wc``, the reference heuristic, which denies with the fewest dice that
give an even chance) with ``psygym train`` and then reports, explicitly:

- **With the solver installed** (``psygym_agents.solvers``): the optimum is the *best-response
  value* against the same denier the agent trained with (``best_response_value(rules, denier, 1)``:
  the most any seat-0 policy can score against it, computed exactly), and the agent's score is its
  exact expected score against that denier (``policy_value``). The fraction is agent / optimum. It
  also reports the game value (optimal caster vs optimal denier) and the agent's exact score against
  a denier that best-responds to it (``best_response_value(rules, agent, 0)``), as a second
  fraction.
- **Without the solver**: the reference is the best edition heuristic's simulated mean score
  against the same denier, and the agent's simulated mean score (same dice for both).

It prints the fraction, the steps and the wall time, and writes ``learning_curve.json`` (and the
run's ``learning_curve.png``) in the run folder.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from pathlib import Path
from typing import Any

SCENARIO = "single-phase"
"""The scenario trained on (of the default edition, ``psygym.edition.default()``)."""


def exact_report(rules: Any, agent: Any, opponent: Any, *, vs_optimal: bool) -> dict[str, Any]:
    """Exact scores (see the module docstring). Raises ImportError/NotSolvable if unavailable."""
    from psygym_experiments.harness.solving import best_response, pairing_value

    t0 = time.monotonic()
    optimum = best_response(rules, opponent, 1, max_states=None)
    agent_value = pairing_value(rules, [agent, opponent], max_states=None)
    out: dict[str, Any] = {
        "method": "exact",
        "reference": "best response to the training opponent (exact)",
        "optimum_vs_opponent": optimum,
        "agent_vs_opponent": agent_value,
        "fraction": agent_value / optimum if optimum else float("nan"),
    }
    if vs_optimal:
        from psygym_agents.solvers.expectiminimax import Solver

        game_value = Solver(rules).value()
        agent_vs_best_denier = best_response(rules, agent, 0, max_states=None)
        out.update(
            game_value=game_value, agent_vs_optimal_denier=agent_vs_best_denier,
            fraction_of_game_value=agent_vs_best_denier / game_value if game_value else None,
        )  # fmt: skip
    out["solve_seconds"] = time.monotonic() - t0
    return out


def simulated_report(rules: Any, agent: Any, opponent: Any, episodes: int, seed: int) -> dict:
    """Agent vs the best heuristic, both simulated against ``opponent`` with the same dice."""
    from psygym_experiments.harness.games import seat_split_score

    from psygym.policies import bots_for, resolve_policy

    def mean(policy: Any) -> float:
        return seat_split_score(rules, policy, opponent, (0,), episodes, seed)[0]

    bots = bots_for(rules.edition)
    heuristics = list(bots.heuristics) if bots is not None else ["random"]
    scores = {name: mean(resolve_policy(name, rules)) for name in heuristics}
    best = max(scores, key=scores.get)
    agent_mean = mean(agent)
    return {
        "method": "simulation", "reference": f"best heuristic ({best})", "episodes": episodes,
        "heuristics": scores, "optimum_vs_opponent": scores[best],
        "agent_vs_opponent": agent_mean,
        "fraction": agent_mean / scores[best] if scores[best] else float("nan"),
    }  # fmt: skip


def _parser() -> argparse.ArgumentParser:
    """The command-line options of :func:`main`."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--opponent", default="double-wc", help="the fixed denier (seat 1)")
    parser.add_argument("--runs-dir", default="runs")
    parser.add_argument("--eval-every", type=int, default=20_000)
    parser.add_argument("--eval-episodes", type=int, default=2_000)
    parser.add_argument("--config", default=None, help="YAML hyperparameter overrides")
    parser.add_argument("--no-exact", action="store_true", help="skip the solver")
    parser.add_argument(
        "--sim-episodes",
        type=int,
        default=20_000,
        help="games per policy for the simulated comparison (without solver)",
    )
    parser.add_argument(
        "--vs-optimal",
        action="store_true",
        help="also solve the game value and the agent vs an optimal denier",
    )
    return parser


def _print_report(report: dict[str, Any]) -> None:
    """Print the fraction of the optimum, the steps and the wall time."""
    print(
        f"MaskablePPO on {report['edition']} {report['scenario']}, seat 0 vs {report['opponent']}:"
    )
    print(f"  agent score        {report['agent_vs_opponent']:+.4f} ({report['method']})")
    print(f"  optimum            {report['optimum_vs_opponent']:+.4f} ({report['reference']})")
    print(f"  fraction           {report['fraction']:.1%}")
    if "fraction_of_game_value" in report:
        print(
            f"  vs optimal denier  {report['agent_vs_optimal_denier']:+.4f} of game value "
            f"{report['game_value']:+.4f} = {report['fraction_of_game_value']:.1%}"
        )
    print(f"  steps              {report['steps']} (first evaluation at >= 95%: "
          f"{report['steps_to_95_percent']})")  # fmt: skip
    print(f"  wall time          {report['train_wall_seconds']:.0f} s training, "
          f"{report['total_wall_seconds']:.0f} s in all")  # fmt: skip


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Train, evaluate and print the fraction of the optimum, the steps and the wall time."""
    args = _parser().parse_args(argv)

    import importlib.util

    from psygym_agents.sb3 import SB3Policy, load_policy
    from psygym_experiments.common import default_edition
    from psygym_experiments.harness.train_config import make_config
    from psygym_experiments.harness.training import run_training
    from psygym_experiments.harness.training_files import read_metrics, start_run

    from psygym.editions import load
    from psygym.policies import resolve_policy

    edition = default_edition()
    exact = (
        not args.no_exact and importlib.util.find_spec("psygym_agents.solvers.evaluate") is not None
    )
    cfg = make_config(edition, SCENARIO, "maskable-ppo", args.steps, args.seed, args.opponent,
                      eval_every=args.eval_every, eval_episodes=args.eval_episodes,
                      exact_eval=exact, config=args.config)  # fmt: skip
    run_dir = start_run(cfg, args.runs_dir)
    args_text = shlex.join(sys.argv[1:] if argv is None else argv)
    (run_dir / "command.txt").write_text(
        f"python -m psygym_experiments.learning_curve {args_text}\n"
    )
    print(f"run folder: {run_dir}", flush=True)
    t0 = time.monotonic()
    summary = run_training(cfg, run_dir, show_progress=True)
    train_seconds = time.monotonic() - t0

    rules = load(edition, SCENARIO)
    agent = SB3Policy(load_policy(run_dir / "model.safetensors", rules), rules, deterministic=True)
    opponent = resolve_policy(args.opponent, rules)
    report: dict[str, Any]
    try:
        if args.no_exact:
            raise ImportError("--no-exact")
        report = exact_report(rules, agent, opponent, vs_optimal=args.vs_optimal)
    except (ImportError, ValueError) as exc:  # no solver, or NotSolvable
        report = simulated_report(rules, agent, opponent, args.sim_episodes, args.seed + 99)
        report["why_not_exact"] = str(exc)
    report.update(
        edition=edition, scenario=SCENARIO, opponent=args.opponent, seat=0,
        steps=summary["steps"], train_wall_seconds=train_seconds,
        total_wall_seconds=time.monotonic() - t0, run_dir=str(run_dir),
        last_eval_score=summary["final_score"],
    )  # fmt: skip
    optimum = report["optimum_vs_opponent"]
    curve = [
        (int(r["step"]), float(r["exact_score"] or r["mean_score"]) / optimum)
        for r in read_metrics(run_dir)
    ]
    report["curve"] = curve  # (step, fraction of the optimum) at each evaluation
    report["steps_to_95_percent"] = next((st for st, f in curve if f >= 0.95), None)
    Path(run_dir / "learning_curve.json").write_text(json.dumps(report, indent=2) + "\n")
    _print_report(report)
    return report


if __name__ == "__main__":
    main()
