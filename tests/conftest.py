"""Shared fixtures: the toy plug-in edition (``tests/toy_edition``), a small Rogue Trader duel."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(scope="session", autouse=True)
def sb3_logs_in_tmp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Keep stable-baselines3's default log folders out of the system temp folder.

    A model trained without ``tensorboard_log`` makes an ``SB3-<time>`` folder under
    ``tempfile.gettempdir()`` unless ``SB3_LOGDIR`` names one; the tests' go to pytest's own.
    """
    mp = pytest.MonkeyPatch()
    mp.setenv("SB3_LOGDIR", str(tmp_path_factory.mktemp("sb3-logs")))
    yield
    mp.undo()


@pytest.fixture
def toy_edition() -> Iterator[object]:
    """Register the toy edition, its bots and its Gymnasium id; unregister them afterwards.

    Yields the toy's :class:`~psygym.edition.Edition`.
    """
    import gymnasium as gym
    from toy_edition import BOTS, EDITION

    from psygym.edition import register, unregister
    from psygym.envs import register_envs
    from psygym.policies import register_bots, unregister_bots

    register(EDITION)
    register_bots(BOTS)
    register_envs()
    try:
        yield EDITION
    finally:
        unregister_bots(BOTS.edition)
        unregister(EDITION.id)
        gym.registry.pop(EDITION.env_id, None)


@pytest.fixture
def small_rt(tmp_path: Path) -> Path:
    """Rogue Trader's duel cut to 2 player turns: 11,769 states solved whole, with secret bids."""
    from psygym.edition import get

    text = (Path(get("rt").scenario_dir) / "duel.toml").read_text()
    path = tmp_path / "small-duel.toml"
    path.write_text(text.replace("turns = 6", "turns = 2"))
    return path
