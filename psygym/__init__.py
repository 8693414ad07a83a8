"""psygym: the Warhammer 40,000 psychic phase as a laboratory.

Exact rules per edition (``psygym.editions``, declared in the registry ``psygym.edition``), one
generic Gymnasium env (``psygym.envs``) and the shared game API (``psygym.core``). Importing
``psygym`` registers one Gymnasium id per edition (``psygym.env_ids()`` lists them).
"""

from psygym.conformance import check_rules
from psygym.core import CHANCE, TERMINAL, IllegalActionError
from psygym.edition import Edition
from psygym.editions import load
from psygym.envs import env_ids, register_envs
from psygym.scenario import ScenarioError

__all__ = [
    "CHANCE", "TERMINAL", "Edition", "IllegalActionError", "ScenarioError", "check_rules",
    "env_ids", "load",
]  # fmt: skip
__version__ = "0.1.0"

register_envs()
