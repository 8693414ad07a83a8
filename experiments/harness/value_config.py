"""The settings of a board-value run (``psygym train --algo value``): resolved, checked, written.

:class:`ValueConfig` is what defines a run (its ``config.yml``); :func:`make_value_config`
resolves one from the command line and a ``--config`` YAML and refuses a bad setting in one
line; :func:`start_value_run` creates the run's folder. The method itself is in
:mod:`.value_training`, the games and boards in :mod:`.value_boards`.
"""

from __future__ import annotations

import shlex
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from psygym_experiments.harness.runs import atomic_write, inside, numbered_run_dir
from psygym_experiments.harness.train_config import load_rules, read_yaml

ALGO = "value"
"""The ``--algo`` name of board-value training."""
FINAL = "value"
"""Stem of a finished run's model (``value.safetensors`` + ``value.json``)."""


@dataclass
class ValueConfig:
    """Everything that defines a board-value run (written to ``config.yml``).

    Attributes:
        edition, scenario: what is valued.
        algo: always ``"value"`` (tells ``--resume`` which kind of run this is).
        steps: games of the Monte-Carlo stage (heuristics only).
        seed: seeds the games, splits, samples and fits.
        phase_td: phase-TD refits after the Monte-Carlo fit (labels: the gain to the next
            Psychic phase's first board plus ``V`` there).
        sweeps: fitted value-iteration sweeps after the Monte-Carlo fit (and phase-TD refits).
        sweep_games: games played at the start of each sweep (``search`` among the agents);
            ``None``: a tenth of ``steps``.
        search_share: probability that a seat of a sweep game is ``search``.
        random_move: probability that a move is uniformly random instead of the agent's.
        relabel: distinct boards re-labelled by a backup per round and sweep.
        eval_boards: distinct test boards per round for the Bellman error.
        eval_initial: also measure the Monte-Carlo fit (before any sweep) on the test boards.
        label_weight: weight of a backed-up board in the fit (a Monte-Carlo board has 1).
        hidden: hidden layer widths of the MLP.
        lr, batch, max_epochs, refit_epochs, patience: fitting (``refit_epochs`` bounds the
            refits of the sweeps, which start from the current weights).
        max_fit_boards: at most this many training boards in a fit (backed-up ones always).
        test_fraction, val_fraction: shares of each stage's games held out.
        agents: agent specs (names, ``tuned:PATH``, ...) each seat of a game draws from;
            ``None``: every heuristic of the edition.
    """

    edition: str
    scenario: str
    algo: str = ALGO
    steps: int = 2000
    seed: int = 0
    phase_td: int = 0
    sweeps: int = 2
    sweep_games: int | None = None
    search_share: float = 0.5
    random_move: float = 0.1
    relabel: int = 200
    eval_boards: int = 50
    eval_initial: bool = True
    label_weight: float = 10.0
    hidden: list[int] = field(default_factory=lambda: [64, 64])
    lr: float = 1e-3
    batch: int = 256
    max_epochs: int = 200
    refit_epochs: int = 40
    patience: int = 10
    max_fit_boards: int = 60_000
    test_fraction: float = 0.15
    val_fraction: float = 0.10
    agents: list[str] | None = None

    @property
    def games_per_sweep(self) -> int:
        """Games played at the start of each sweep."""
        return max(1, self.steps // 10) if self.sweep_games is None else self.sweep_games


TUNABLE = tuple(
    f.name
    for f in fields(ValueConfig)
    if f.name not in ("edition", "scenario", "algo", "steps", "seed")
)
"""Keys a ``--config`` YAML file may set for a value run."""


def make_value_config(
    edition: str, scenario: str, steps: int = 2000, seed: int = 0, *,
    config: str | Path | None = None, overrides: dict[str, Any] | None = None,
) -> ValueConfig:  # fmt: skip
    """Resolve and validate a board-value configuration.

    Args:
        edition: the edition id or alias.
        scenario: a shipped scenario name or a TOML path.
        steps: games of the Monte-Carlo stage.
        seed: the run's seed.
        config: a YAML file whose keys (:data:`TUNABLE`) override the defaults.
        overrides: more overrides, applied last.

    Raises:
        ValueError: unknown edition or scenario, hidden hands, a bad number or an unknown key.
    """
    from psygym_agents.solvers import has_hidden_information

    if steps < 3:
        raise ValueError(
            f"--steps must be at least 3 games for --algo value (training, validation and "
            f"test games), not {steps}"
        )
    rules = load_rules(edition, scenario)
    extra: dict[str, Any] = {}
    if config:
        doc = read_yaml(config)
        if not isinstance(doc, dict):
            raise ValueError(f"--config {config}: expected a mapping of settings")
        extra.update(doc)
    extra.update(overrides or {})
    unknown = sorted(set(extra) - set(TUNABLE))
    if unknown:
        raise ValueError(
            f"--config: unknown setting {', '.join(unknown)} for --algo value; allowed: "
            f"{', '.join(TUNABLE)}"
        )
    name = rules.scenario.name if str(scenario) == "default" else str(scenario)
    cfg = ValueConfig(edition=rules.edition, scenario=name, steps=steps, seed=seed)
    for key, value in extra.items():
        setattr(cfg, key, value)
    check_value_config(cfg)
    if has_hidden_information(rules) and (cfg.sweeps or cfg.eval_boards):
        # A backup solves the next phase exactly over the true state, so it would see both
        # hands: with hidden hands only the Monte-Carlo fit is honest.
        raise ValueError(
            f"--algo value: edition {rules.edition} has hidden hands, and exact backups would "
            "see both; set sweeps: 0 and eval_boards: 0 (a Monte-Carlo fit only), as "
            f"experiments/configs/value/{rules.edition}-{rules.scenario.name}.yml does"
        )
    if cfg.agents is not None:
        from psygym.policies import resolve_policy

        for spec in cfg.agents:
            try:
                resolve_policy(spec, rules)
            except Exception as exc:  # noqa: BLE001 - any bad agent spec is one clear line
                raise ValueError(f"agents: {exc}") from None
    return cfg


def check_value_config(cfg: ValueConfig) -> None:
    """Raise ``ValueError`` (one line: which setting, what is allowed) for a bad setting."""

    def need(ok: bool, text: str) -> None:
        if not ok:
            raise ValueError(text)

    def whole(name: str, low: int) -> None:
        v = getattr(cfg, name)
        need(isinstance(v, int) and not isinstance(v, bool) and v >= low,
             f"{name} must be a whole number of at least {low}, not {v!r}")  # fmt: skip

    def share(name: str, high: float = 1.0) -> None:
        v = getattr(cfg, name)
        need(isinstance(v, int | float) and not isinstance(v, bool) and 0 <= v <= high,
             f"{name} must be a number from 0 to {high}, not {v!r}")  # fmt: skip

    for name in ("steps",):
        whole(name, 3)
    for name in ("seed", "phase_td", "sweeps", "relabel", "eval_boards"):
        whole(name, 0)
    for name in ("batch", "max_epochs", "refit_epochs", "patience", "max_fit_boards"):
        whole(name, 1)
    if cfg.sweep_games is not None:
        whole("sweep_games", 0)
    share("search_share")
    share("random_move")
    share("test_fraction", 0.5)
    share("val_fraction", 0.5)
    need(isinstance(cfg.eval_initial, bool), f"eval_initial must be true or false, not "
         f"{cfg.eval_initial!r}")  # fmt: skip
    for name in ("label_weight", "lr"):
        v = getattr(cfg, name)
        need(isinstance(v, int | float) and not isinstance(v, bool) and v > 0,
             f"{name} must be a positive number, not {v!r}")  # fmt: skip
    need(isinstance(cfg.hidden, list) and len(cfg.hidden) >= 1
         and all(isinstance(h, int) and not isinstance(h, bool) and h >= 1 for h in cfg.hidden),
         f"hidden must be a list of layer widths such as [64, 64], not {cfg.hidden!r}")  # fmt: skip
    agents = cfg.agents
    need(agents is None or (isinstance(agents, list) and len(agents) >= 1
                            and all(isinstance(a, str) and a for a in agents)),
         f"agents must be a list of agent names such as [pass], not {agents!r}")  # fmt: skip


def is_value_run(run_dir: str | Path) -> bool:
    """Whether ``run_dir`` holds a board-value run (its ``config.yml`` says ``algo: value``)."""
    path = Path(run_dir) / "config.yml"
    if not path.is_file():
        return False
    import yaml

    try:
        doc = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError):
        return False
    return isinstance(doc, dict) and doc.get("algo") == ALGO


def config_from_run(run_dir: str | Path) -> ValueConfig:
    """The configuration recorded in a value run's ``config.yml``.

    Raises:
        FileNotFoundError: not a value run.
    """
    import yaml

    path = Path(run_dir) / "config.yml"
    if not is_value_run(run_dir):
        raise FileNotFoundError(f"{run_dir} is not a board-value run (no config.yml with algo "
                                "value)")  # fmt: skip
    doc = yaml.safe_load(path.read_text())
    names = {f.name for f in fields(ValueConfig)}
    cfg = ValueConfig(**{k: v for k, v in doc.items() if k in names})
    check_value_config(cfg)
    return cfg


def write_value_config(run_dir: Path, cfg: ValueConfig) -> None:
    """Write the resolved configuration as ``config.yml``."""
    import yaml

    text = "# Resolved configuration of this board-value run (psygym train --algo value).\n"
    text += "# Resume: psygym train --resume <this folder>\n"
    text += yaml.safe_dump(asdict(cfg), sort_keys=False)
    atomic_write(run_dir / "config.yml", text)


def value_command_line(cfg: ValueConfig, runs_dir: str | Path, config: str | None = None) -> str:
    """The ``psygym train`` command equivalent to a configuration (for API-started runs)."""
    args = [
        "psygym", "train", "--algo", ALGO, "--edition", cfg.edition, "--scenario",
        cfg.scenario, "--steps", str(cfg.steps), "--seed", str(cfg.seed), "--runs-dir",
        str(runs_dir),
    ]  # fmt: skip
    if config:
        args += ["--config", str(config)]
    return shlex.join(args)


def start_value_run(cfg: ValueConfig, runs_dir: str | Path) -> Path:
    """Create ``<runs-dir>/<edition>/<scenario>/value_<n>`` with its config and seed."""
    rules = load_rules(cfg.edition, cfg.scenario)
    run_dir = numbered_run_dir(inside(runs_dir, cfg.edition, rules.scenario.name), ALGO)
    write_value_config(run_dir, cfg)
    atomic_write(run_dir / "seed.txt", f"{cfg.seed}\n")
    return run_dir


__all__ = [
    "ALGO", "FINAL", "TUNABLE", "ValueConfig", "check_value_config", "config_from_run",
    "is_value_run", "make_value_config", "start_value_run", "value_command_line",
    "write_value_config",
]  # fmt: skip
