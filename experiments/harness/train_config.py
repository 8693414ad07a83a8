"""The settings of an RL training run (``psygym train``): resolved, checked, recorded.

:class:`TrainConfig` is everything that defines a run (its ``config.yml``). :func:`make_config`
resolves one from the command line, the shipped hyperparameters (``experiments/configs``,
layered by env and scenario) and a ``--config`` YAML, and refuses a bad value in one line
(:func:`check_hyperparams`). The run itself is :mod:`.training`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

CONFIG_DIR = Path(__file__).parents[1] / "configs"
RUN_KEYS = (
    "n_envs", "policy", "illegal_fallback", "illegal_penalty", "self_play_refresh",
    "checkpoint_buffer_mb",
)  # fmt: skip
"""Config keys that configure the run rather than the SB3 constructor."""


@dataclass
class TrainConfig:
    """Everything that defines a training run (written to ``config.yml``)."""

    edition: str
    scenario: str
    algo: str = "maskable-ppo"
    steps: int = 100_000
    seed: int = 0
    opponent: str = "random"
    eval_opponent: str = ""
    seat: str = "0"
    eval_every: int = 10_000
    eval_episodes: int = 200
    exact_eval: bool = False
    subproc: bool = False
    vec_env: str = "gym"  # resolved: "batched" or "gym" (runs from before it existed: "gym")
    env_id: str = ""
    hyperparams: dict[str, Any] = field(default_factory=dict)
    init: str = ""  # a safe model whose policy weights the run starts from ("" = fresh)

    def seats(self) -> tuple[int, ...]:
        """Seats the learner plays (and is evaluated in)."""
        return (0, 1) if self.seat == "both" else (int(self.seat),)


def _merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in (extra or {}).items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = _merge(out[k], v)
        else:
            out[k] = v
    return out


def _layered(doc: dict[str, Any], env_id: str, scenario: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in ("default", env_id, f"{env_id}:{scenario}"):
        entry = doc.get(key)
        if entry is not None:
            if not isinstance(entry, dict):
                raise ValueError(f"config entry {key!r} must be a mapping of hyperparameters")
            out = _merge(out, entry)
    return out


def read_yaml(path: str | Path) -> dict[str, Any]:
    """Read a YAML mapping (``{}`` for an empty file).

    Raises:
        FileNotFoundError: no such file.
        ValueError: not YAML, or not a mapping.
    """
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"no config file {p}")
    try:
        doc = yaml.safe_load(p.read_text()) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = "" if mark is None else f" at line {mark.line + 1}, column {mark.column + 1}"
        what = getattr(exc, "problem", None) or " ".join(str(exc).split())
        raise ValueError(f"{p} is not valid YAML: {what}{where}") from None
    if not isinstance(doc, dict):
        raise ValueError(f"{p} must hold a mapping of hyperparameters")
    return doc


def load_hyperparams(
    algo: str, env_id: str, scenario: str, config: str | Path | None = None
) -> dict[str, Any]:
    """Hyperparameters for ``algo`` on ``env_id``/``scenario`` (see experiments/configs/).

    ``config`` (optional YAML) is merged last; it may use the same env-id layout or be a flat
    mapping of overrides.

    Raises:
        ValueError: an unknown hyperparameter (the message lists the allowed ones).
    """
    from psygym_agents.sb3 import algo_class

    path = CONFIG_DIR / f"{algo}.yml"
    hp = _layered(read_yaml(path), env_id, scenario) if path.is_file() else {}
    if config is not None:
        doc = read_yaml(config)
        if "default" in doc or any(str(k).startswith("psygym/") for k in doc):
            hp = _merge(hp, _layered(doc, env_id, scenario))
        else:
            hp = _merge(hp, doc)
    import inspect

    allowed = set(inspect.signature(algo_class(algo).__init__).parameters) - {"self", "env"}
    allowed |= set(RUN_KEYS)
    unknown = sorted(set(hp) - allowed)
    if unknown:
        raise ValueError(
            f"unknown {algo} hyperparameter(s) {', '.join(unknown)}; allowed: "
            f"{', '.join(sorted(allowed))}"
        )
    check_hyperparams(algo, hp)
    return hp


VEC_ENVS = ("auto", "batched", "gym")
"""``--vec-env`` choices (see the module); a run's ``config.yml`` records ``batched`` or ``gym``."""


def batched_refusal(
    rules: Any, algo: str, opponent: str, seat: str, *, subproc: bool = False, ray: bool = False
) -> str | None:  # fmt: skip
    """Why the batched env cannot play this run (one line), or ``None`` when it plays it exactly.

    ``seat`` is the run's ``"0"``, ``"1"`` or ``"both"``.
    """
    from psygym.engine.vector import OPPONENTS

    if algo != "maskable-ppo":
        return (f"--algo {algo} has no action masks: its illegal-action fallback wraps each "
                "per-game env")  # fmt: skip
    if opponent not in OPPONENTS:
        return f"--opponent {opponent}: the batched env plays {', '.join(OPPONENTS)} only"
    if seat not in ("0", "1"):
        return ("--seat both alternates the learner's seat every episode, and a game of the "
                "batched env keeps its seat")  # fmt: skip
    if subproc:
        return "--subproc asks for SubprocVecEnv over per-game envs"
    if ray:
        return "--ray runs each per-game env in a Ray actor"
    from psygym_agents.sb3_batched import batched_refusal as twin_refusal

    return twin_refusal(rules)


def _resolve_vec_env(choice: str, rules: Any, algo: str, opponent: str, seat: str,
                     subproc: bool, ray: bool) -> str:  # fmt: skip
    """``batched`` or ``gym`` for ``--vec-env`` ``choice`` (see :data:`VEC_ENVS`).

    Raises:
        ValueError: an unknown choice, or ``batched`` where it cannot play the run (one line).
    """
    if choice not in VEC_ENVS:
        raise ValueError(f"--vec-env {choice!r} is not one of: {', '.join(VEC_ENVS)}")
    if choice == "gym":
        return choice
    why = batched_refusal(rules, algo, opponent, seat, subproc=subproc, ray=ray)
    if why is not None and choice == "batched":
        raise ValueError(f"--vec-env batched: {why}; use --vec-env gym or auto")
    return "gym" if why is not None else "batched"


RUN_KEY_TYPES: dict[str, Any] = {
    "n_envs": int, "policy": str, "illegal_fallback": str, "illegal_penalty": float,
    "self_play_refresh": int, "checkpoint_buffer_mb": float,
}  # fmt: skip
"""Types of the :data:`RUN_KEYS` (the algorithms' own keys take their constructor's types)."""


def _is_schedule(value: Any) -> bool:
    """``lin_<number>``: a linear schedule (see ``experiments/configs/``)."""
    if not (isinstance(value, str) and value.startswith("lin_")):
        return False
    try:
        return math.isfinite(float(value[4:]))
    except ValueError:
        return False


def _value_forms(annotation: Any) -> list[tuple[str, Callable[[Any], bool]]] | None:
    """(description, check) of each form a config value of this type may take in YAML.

    ``None`` when the annotation holds a form YAML cannot write (a class): not checked.
    """
    import collections.abc
    import types
    import typing

    def number(v: Any) -> bool:
        return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)

    def integer(v: Any) -> bool:
        return isinstance(v, int) and not isinstance(v, bool)

    simple: dict[Any, tuple[str, Callable[[Any], bool]]] = {
        int: ("a whole number", integer),
        float: ("a finite number", number),
        bool: ("true or false", lambda v: isinstance(v, bool)),
        str: ("a string", lambda v: isinstance(v, str)),
        dict: ("a mapping", lambda v: isinstance(v, dict)),
        type(None): ("null", lambda v: v is None),
    }
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        out: list[tuple[str, Callable[[Any], bool]]] = []
        for arg in typing.get_args(annotation):
            forms = _value_forms(arg)
            if forms is None:
                return None
            out += forms
        return out
    if annotation in simple:
        return [simple[annotation]]
    if origin is dict:
        return [simple[dict]]
    if origin is collections.abc.Callable:  # a schedule of the progress left
        return [("lin_<number> (a linear schedule)", _is_schedule)]
    if origin is tuple:  # DQN's train_freq: [4, "step"]
        return [("a [number, unit] pair", lambda v: isinstance(v, list | tuple) and len(v) == 2)]
    if getattr(annotation, "__module__", "").startswith("torch"):  # device: a name is enough
        return []
    return None


def check_hyperparams(algo: str, hp: dict[str, Any]) -> None:
    """Check that every hyperparameter has a type its algorithm accepts.

    Types come from the algorithm's constructor annotations (``learning_rate``: a number or a
    ``lin_<number>`` schedule, ``n_steps``: a whole number...) and :data:`RUN_KEY_TYPES`.

    Raises:
        ValueError: one line naming the key, its value and the types allowed.
    """
    import typing

    from psygym_agents.sb3 import algo_class

    try:
        hints = typing.get_type_hints(algo_class(algo).__init__)
    except (NameError, TypeError):  # pragma: no cover - unresolvable annotations: no check
        hints = {}
    for key, value in hp.items():
        annotation = RUN_KEY_TYPES.get(key, hints.get(key))
        forms = None if annotation is None else _value_forms(annotation)
        if not forms or any(check(value) for _, check in forms):
            continue
        allowed = " or ".join(dict.fromkeys(d for d, _ in forms))
        raise ValueError(f"config: {key} must be {allowed}, not {value!r} ({algo})")


def _schedule(value: Any) -> Any:
    if isinstance(value, str) and value.startswith("lin_"):
        from stable_baselines3.common.utils import LinearSchedule

        return LinearSchedule(float(value[4:]), 0.0, 1.0)
    return value


def algo_kwargs(hp: dict[str, Any]) -> dict[str, Any]:
    """SB3 constructor arguments from resolved hyperparameters."""
    from psygym_agents.sb3 import policy_kwargs_from_config

    kw = {k: v for k, v in hp.items() if k not in RUN_KEYS}
    for k in ("learning_rate", "clip_range", "clip_range_vf"):
        if k in kw:
            kw[k] = _schedule(kw[k])
    if "train_freq" in kw and isinstance(kw["train_freq"], list):
        kw["train_freq"] = tuple(kw["train_freq"])
    if "policy_kwargs" in kw:
        kw["policy_kwargs"] = policy_kwargs_from_config(kw["policy_kwargs"])
    return kw


def reference_opponent(edition: str) -> str:
    """The edition's first listed heuristic (a sensible fixed opponent), else ``random``."""
    from psygym.policies import bots_for

    bots = bots_for(edition)
    return bots.reference if bots is not None else "random"


def make_config(
    edition: str,
    scenario: str,
    algo: str = "maskable-ppo",
    steps: int = 100_000,
    seed: int = 0,
    opponent: str = "random",
    *,
    eval_opponent: str | None = None,
    seat: str | int | None = None,
    eval_every: int | None = None,
    eval_episodes: int = 200,
    exact_eval: bool = False,
    n_envs: int | None = None,
    subproc: bool = False,
    config: str | Path | None = None,
    overrides: dict[str, Any] | None = None,
    init: str | Path | None = None,
    vec_env: str = "auto",
    ray: bool = False,
) -> TrainConfig:
    """Resolve and validate a training configuration.

    ``init`` is a safe model (``.safetensors``) whose policy weights the run starts from instead
    of fresh ones (fine-tuning; an exploiter that starts from a competent player): it must be of
    the same algorithm and network shape and fit the scenario. Its architecture overrides the
    config's ``policy_kwargs``.

    ``vec_env`` (:data:`VEC_ENVS`) is resolved here to ``batched`` or ``gym``; ``ray``: the run
    will use ``--ray`` (its envs then are per-game ones).

    Raises:
        ValueError: bad edition, scenario, algorithm, seat or hyperparameter; unknown opponent;
            ``vec_env="batched"`` where the batched env cannot play the run.
    """
    from psygym_agents.sb3 import ALGO_NAMES

    from psygym.envs import env_ids
    from psygym.policies import resolve_policy

    if algo not in ALGO_NAMES:
        raise ValueError(f"--algo {algo!r} is not one of: {', '.join(ALGO_NAMES)}")
    if steps < 1:
        raise ValueError(f"--steps must be at least 1, not {steps}")
    rules = load_rules(edition, scenario)
    edition = rules.edition
    env_id = env_ids()[edition]
    seat_text = str(seat) if seat is not None else ("both" if opponent == "self" else "0")
    if seat_text not in ("0", "1", "both"):
        raise ValueError(f"--seat {seat_text!r} is not one of: 0, 1, both")
    if opponent != "self":
        resolve_policy(opponent, rules)
    eval_opp = eval_opponent or (reference_opponent(edition) if opponent == "self" else opponent)
    resolve_policy(eval_opp, rules)
    check_learner_decides(rules, (0, 1) if seat_text == "both" else (int(seat_text),), seed)
    envs = _resolve_vec_env(vec_env, rules, algo, opponent, seat_text, subproc, ray)
    hp = load_hyperparams(algo, env_id, rules.scenario.name, config)
    hp = _merge(hp, overrides or {})
    init_text = str(init or "")
    if init_text:
        hp = _merge(hp, {"policy_kwargs": _init_policy_kwargs(init_text, algo, rules)})
    if n_envs is not None:
        hp["n_envs"] = n_envs
    hp.setdefault("n_envs", 1)
    if int(hp["n_envs"]) < 1:
        raise ValueError(f"--n-envs must be at least 1, not {hp['n_envs']}")
    every = eval_every if eval_every is not None else max(1, min(10_000, steps // 10))
    if every < 1 or eval_episodes < 1:
        raise ValueError("--eval-every and --eval-episodes must be at least 1")
    return TrainConfig(
        edition=edition, scenario=str(scenario) if scenario != "default" else rules.scenario.name,
        algo=algo, steps=steps, seed=seed, opponent=opponent, eval_opponent=eval_opp,
        seat=seat_text, eval_every=every, eval_episodes=eval_episodes, exact_eval=exact_eval,
        subproc=subproc, vec_env=envs, env_id=env_id, hyperparams=hp, init=init_text,
    )  # fmt: skip


def _init_policy_kwargs(path: str, algo: str, rules: Any) -> dict[str, Any]:
    """The ``policy_kwargs`` that rebuild ``--init``'s network, after checking it fits the run.

    Raises:
        ValueError: not a safe model, another algorithm, or another edition or scenario's
            observations and actions (one line).
    """
    from psygym_agents.safe_model import POLICY_CLASSES, load_safe

    try:
        net = load_safe(path, rules)
    except (OSError, ValueError) as exc:
        raise ValueError(f"--init {path}: {exc}") from None
    meta = net.psygym_metadata
    cls_name = type(net).__name__
    if POLICY_CLASSES.get(cls_name, ("", ""))[1] != algo:
        raise ValueError(f"--init {path} holds a {cls_name} ({meta.get('algo', '?')}), "
                         f"not a --algo {algo} policy")  # fmt: skip
    policy = meta.get("policy", {})
    return {"net_arch": policy.get("net_arch"), "activation_fn": policy.get("activation", "tanh")}


def check_learner_decides(rules: Any, seats: tuple[int, ...], seed: int) -> None:
    """Check that the learner gets a decision in each of its seats (before any run folder).

    The training env skips games in which its agent never decides, and gives up after many
    (``PsychicPhaseEnv.reset``); one reset per seat against a random opponent (cheap, and it
    tries every kind of move) finds a scenario where that never happens.

    Raises:
        ValueError: one line naming the seat and the scenario.
    """
    from psygym.envs.psychic import PsychicPhaseEnv

    for seat in seats:
        env = PsychicPhaseEnv(rules=rules, opponent="random", seat=seat)
        try:
            env.reset(seed=seed)
        except RuntimeError:
            side = rules.scenario.sides[seat].name
            raise ValueError(
                f"--seat {seat}: the learner ({side}) never gets a decision in scenario "
                f"{rules.scenario.name!r}; train a seat that casts or denies there"
            ) from None
        finally:
            env.close()


def load_rules(edition: str, scenario: str) -> Any:
    """The rules of ``edition`` on ``scenario`` (a shipped name or a TOML path)."""
    from psygym.editions import load

    return load(edition, scenario)


def config_from_file(run_dir: Path) -> TrainConfig:
    """The configuration recorded in a run folder's ``config.yml``.

    Raises:
        FileNotFoundError: not a run folder.
    """
    path = Path(run_dir) / "config.yml"
    if not path.is_file():
        raise FileNotFoundError(f"{run_dir} is not a training run (no config.yml)")
    doc = read_yaml(path)
    names = set(TrainConfig.__dataclass_fields__)
    return TrainConfig(**{k: v for k, v in doc.items() if k in names})


def rollout_note(model: Any, done: int, target: int) -> str | None:
    """The note a run gets when SB3 will train past ``target`` steps, else None.

    SB3 checks its total only between rollouts (``n_steps`` steps of every env for PPO, or
    ``train_freq`` steps of every env for DQN), so it trains to the first whole rollout at or past
    ``target``, counted from ``done`` (the steps a resumed run has already taken).
    """
    envs = int(getattr(model, "n_envs", 1) or 1)
    freq = getattr(model, "train_freq", None)  # off-policy (DQN; its n_steps is n-step returns)
    if freq is not None:
        if getattr(freq.unit, "value", "") != "step":  # whole episodes: no length known ahead
            return None
        per, what = int(freq.frequency), f"train_freq {freq.frequency}"
    elif getattr(model, "n_steps", None):
        per, what = int(model.n_steps), f"n_steps {model.n_steps}"
    else:
        return None
    rollout = per * envs
    actual = done + -(-(target - done) // rollout) * rollout
    if target <= done or actual == target:
        return None
    envs_text = f"{envs} env" + ("" if envs == 1 else "s")
    return (
        f"note: SB3 trains in whole rollouts of {rollout:,} steps ({what} x {envs_text}): this "
        f"run trains to step {actual:,}, not {target:,}"
    )


__all__ = [
    "CONFIG_DIR", "RUN_KEYS", "VEC_ENVS", "TrainConfig", "algo_kwargs", "batched_refusal",
    "check_hyperparams", "check_learner_decides", "config_from_file", "load_hyperparams",
    "load_rules", "make_config", "read_yaml", "reference_opponent", "rollout_note",
]  # fmt: skip
