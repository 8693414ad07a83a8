"""``psygym bench``: steps per second of every psygym env, as ratios to Blackjack-v1.

Every env takes uniformly random legal actions (from ``action_masks()``) in the same process as
the reference run of Gymnasium's ``Blackjack-v1``, so the ratios are comparable across machines.
"""

from __future__ import annotations

import time

import numpy as np
import typer
from psygym_experiments.common import check_choice, console, user_errors


def steps_per_second(env, steps: int, seed: int, masked: bool) -> float:
    """Random-action steps per second over ``steps`` steps (resetting as episodes end)."""
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    start = time.perf_counter()
    for _ in range(steps):
        if masked:
            legal = np.flatnonzero(env.unwrapped.action_masks())
            action = int(legal[rng.integers(len(legal))])
        else:
            action = int(rng.integers(env.action_space.n))
        _, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            env.reset()
    return steps / (time.perf_counter() - start)


def bench(
    steps: int = typer.Option(20000, min=100, help="Steps per env."),
    seed: int = typer.Option(0, help="Random seed."),
    fmt: str = typer.Option("table", "--format", help="table or csv."),
) -> None:
    """Random-legal-action rollouts of every psygym env and of Blackjack-v1, with ratios."""
    import gymnasium as gym

    import psygym

    with user_errors():
        check_choice(fmt, ("table", "csv"), "--format")
    rows = []
    ref = steps_per_second(gym.make("Blackjack-v1"), steps, seed, masked=False)
    rows.append(("Blackjack-v1", ref))
    for env_id in psygym.env_ids().values():
        if env_id in gym.registry:
            env = gym.make(env_id, opponent="random")
            rows.append((env_id, steps_per_second(env, steps, seed, masked=True)))
    if fmt == "csv":
        typer.echo("env,steps_per_s,ratio_to_blackjack")
        for name, sps in rows:
            typer.echo(f"{name},{sps:.0f},{sps / ref:.4f}")
        return
    console.print(f"{'env':<26}{'steps/s':>12}{'ratio to Blackjack-v1':>24}")
    for name, sps in rows:
        console.print(f"{name:<26}{sps:>12.0f}{sps / ref:>24.4f}", highlight=False)


def register(app: typer.Typer) -> None:
    """Add the ``bench`` command."""
    app.command("bench")(bench)
