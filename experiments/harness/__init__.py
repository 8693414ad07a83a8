"""The experiment harness: the one library every ``psygym`` command is a thin layer over.

- :mod:`.games`: the one evaluation protocol (common random numbers) and game statistics;
- :mod:`.tournament`: round robin over pairings and seats, results with confidence intervals;
- :mod:`.solving`: exact solving with one budget, exact pairing values, best responses;
- :mod:`.runs`: the run-folder convention (naming, config, command line, metrics);
- :mod:`.progress`: the one progress display;
- :mod:`.output`: strict JSON, CSV and table rendering;
- :mod:`.training` and :mod:`.tuning`: RL training runs and Optuna studies.

Submodules import their heavy libraries lazily, so ``import psygym_experiments.harness`` is cheap.
"""
