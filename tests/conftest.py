"""Shared fixtures: the toy plug-in edition (``tests/toy_edition``), registered for one test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


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
