"""Policies for psygym: heuristics per edition, parametric (tuned) families, SB3 adapters, solvers.

Every policy satisfies ``psygym.core.Policy``. Names resolve through ``psygym_agents.registry``.
"""
