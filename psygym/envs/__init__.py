"""Gymnasium and PettingZoo environments over any edition's rules."""

from __future__ import annotations


def env_ids() -> dict[str, str]:
    """Edition id -> registered Gymnasium id, for every known edition."""
    from psygym.edition import editions

    return {e.id: e.env_id for e in editions()}


def register_envs() -> None:
    """Register one Gymnasium id per known edition (idempotent; call again after a plug-in)."""
    import gymnasium as gym

    for edition, env_id in env_ids().items():
        if env_id not in gym.registry:
            gym.register(
                id=env_id,
                entry_point="psygym.envs.psychic:PsychicPhaseEnv",
                kwargs={"edition": edition},
            )
