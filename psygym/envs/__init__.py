"""Gymnasium and PettingZoo environments over any edition's rules."""

from __future__ import annotations

ENV_IDS: dict[str, str] = {
    "7th": "psygym/Seventh-v0",
    "8th": "psygym/Eighth-v0",
    "2nd": "psygym/Second-v0",
    "rt": "psygym/RogueTrader-v0",
}
"""Edition id -> registered Gymnasium id."""


def register_envs() -> None:
    """Register one Gymnasium id per installed edition (idempotent)."""
    import gymnasium as gym

    from psygym.editions import available

    for edition in available():
        env_id = ENV_IDS[edition]
        if env_id not in gym.registry:
            gym.register(
                id=env_id,
                entry_point="psygym.envs.psychic:PsychicPhaseEnv",
                kwargs={"edition": edition},
            )
