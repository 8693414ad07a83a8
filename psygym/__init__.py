"""psygym: the Warhammer 40,000 psychic phase as a laboratory.

Exact rules per edition (``psygym.editions``), one generic Gymnasium env (``psygym.envs``) and
the shared game API (``psygym.core``). Importing ``psygym`` registers the Gymnasium ids
``psygym/Seventh-v0``, ``psygym/Eighth-v0``, ``psygym/Second-v0`` and ``psygym/RogueTrader-v0``.
"""

from psygym.core import CHANCE, TERMINAL, IllegalActionError, check_rules
from psygym.editions import load
from psygym.envs import ENV_IDS, register_envs
from psygym.scenario import ScenarioError

__all__ = [
    "CHANCE", "TERMINAL", "ENV_IDS", "IllegalActionError", "ScenarioError", "check_rules", "load",
]  # fmt: skip
__version__ = "0.1.0"

register_envs()
