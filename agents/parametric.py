"""Parametric policy families (searched by ``psygym tune --target parametric``) and tuned agents.

Each edition has at most one small family, named by its ``BOTS`` manifest
(``psygym_agents.<edition>.parametric.FAMILY``): a handful of numbers that shape a sensible rule
of thumb. Optuna samples them with the family's ``sample(trial, rules)``;
``build(rules, params)`` turns them into a :class:`~psygym.core.Policy`. There is no
edition-generic family: an edition without one cannot be tuned this way (the error says which
editions can). Each family's module docstring says what its parameters mean.

Tuned parameters are saved as JSON (``best.json``: edition, scenario, family, params, value) and
load as the agent ``tuned:<path>`` (:func:`make_tuned`). The parameters ``psygym compare``
tuned for each shipped scenario ship too, as ``agents/pretrained/tuned-<edition>-<scenario>.json``
(:func:`shipped_tuned`), so a fresh clone compares without tuning first. A ``best.json``
written by a ``--target maskable-ppo`` study names a trained model instead and loads it through
:func:`psygym_agents.sb3.make_sb3`: only a safe-format model (safetensors + JSON, see
:mod:`psygym_agents.safe_model`) inside the ``best.json``'s own folder, never an SB3 ``.zip``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from psygym.policies import bots_for, editions_with_bots


@dataclass(frozen=True)
class Family:
    """A parametric policy family of one edition.

    Attributes:
        name: the family's name (stored in ``best.json``).
        sample: ``(optuna trial, rules) -> params``: the search space.
        build: ``(rules, params) -> Policy``.
        defaults: ``rules -> params``: a reasonable starting point (enqueued as the first trial).
    """

    name: str
    sample: Callable[[Any, Any], dict[str, Any]]
    build: Callable[[Any, dict[str, Any]], Any]
    defaults: Callable[[Any], dict[str, Any]]


def families() -> dict[str, Family]:
    """Edition id -> its parametric family, for every edition whose bots declare one."""
    out = {}
    for edition in editions_with_bots():
        family = bots_for(edition).family
        if family is not None:
            out[edition] = family
    return out


def family_for(edition: str) -> Family:
    """The parametric family of an edition.

    Raises:
        ValueError: the edition has none; the message lists the editions that do.
    """
    bots = bots_for(edition)
    fam = bots.family if bots is not None else None
    if fam is None:
        raise ValueError(
            f"no parametric policy family for edition {edition}; families exist for: "
            f"{', '.join(sorted(families()))} (tune an RL agent instead: --target maskable-ppo)"
        )
    return fam


def check_params(params: Any, where: str = "params") -> dict[str, Any]:
    """``params`` if it is a mapping of names to finite numbers or booleans.

    Raises:
        ValueError: one line naming ``where``, the parameter and what is allowed (NaN and
            infinities are not parameters: every comparison with NaN is false, so a family
            would silently never cast, or always).
    """
    if not isinstance(params, dict):
        raise ValueError(f"{where} must be a mapping of parameter names to numbers")
    for key, value in params.items():
        if isinstance(value, bool):
            continue
        if not isinstance(value, int | float):
            raise ValueError(
                f"{where}: parameter {key!r} must be a number or true/false, got {value!r}"
            )
        if not math.isfinite(value):
            raise ValueError(f"{where}: parameter {key!r} must be a finite number, got {value}")
    return params


def build(rules: Any, params: dict[str, Any], name: str = "tuned") -> Any:
    """The family policy of ``rules``' edition with ``params``.

    Raises:
        ValueError: a parameter that is not a finite number or boolean, or parameters the
            family cannot use (the message lists the ones it takes).
    """
    fam = family_for(rules.edition)
    check_params(params)
    try:
        policy = fam.build(rules, params)
    except (KeyError, TypeError, ValueError) as exc:
        wanted = ", ".join(sorted(fam.defaults(rules)))
        raise ValueError(
            f"params do not fit family {fam.name!r} ({type(exc).__name__}: {exc}); it takes: "
            f"{wanted}"
        ) from None
    policy.name = name
    return policy


def save_best(
    path: str | Path, *, edition: str, scenario: str, family: str, params: dict[str, Any],
    value: float, **extra: Any,
) -> Path:  # fmt: skip
    """Write tuned parameters as JSON: edition, scenario, family, params, value and extras."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    doc = {"edition": edition, "scenario": scenario, "family": family, "params": params,
           "value": value, **extra}  # fmt: skip
    p.write_text(json.dumps(doc, indent=2) + "\n")
    return p


def _tuned_model(best: Path, ref: Any) -> Path:
    """The safe-format model a tuned RL file names, checked to lie inside the file's folder.

    Raises:
        ValueError: no model named, a path outside the folder, an SB3 ``.zip`` (pickles are
            never loaded from a tuned file), or no safe model there.
    """
    from psygym_agents.safe_model import is_safe_model

    if not isinstance(ref, str) or not ref.strip():
        raise ValueError(f"{best} is for an RL algorithm but names no 'model'")
    folder = best.parent.resolve()
    model = (folder / ref).resolve()  # an absolute ref stays absolute; symlinks are followed
    if not model.is_relative_to(folder):
        raise ValueError(
            f"{best} names the model {ref!r}, outside its own folder {folder}: a tuned file loads "
            "only a model inside its folder"
        )
    if model.suffix == ".zip":
        raise ValueError(
            f"{best} names the SB3 archive {ref!r}; a tuned file loads only safe-format models "
            f"(pickles can run code): convert it with `psygym export --trust-pickle {model}` and "
            "name the .safetensors file"
        )
    if not is_safe_model(model):
        raise ValueError(
            f"{best} names the model {ref!r}, which is not a safe-format model (.safetensors "
            f"with its .json) in {folder}"
        )
    return model


SHIPPED_TUNED_DIR = Path(__file__).parent / "pretrained"
"""Where the shipped tuned parameters lie (beside the shipped models)."""


def shipped_tuned(edition: str, scenario: str) -> Path | None:
    """The shipped tuned parameters of a shipped scenario (``tuned-<edition>-<name>.json``).

    ``scenario`` is a shipped name or ``"default"``. ``None`` where none ship, or where
    ``scenario`` is a path (a file of the player's, which may share a shipped scenario's name
    but not its army lists).
    """
    from psygym.edition import get

    if "/" in scenario or scenario.endswith(".toml"):
        return None
    try:
        ed = get(edition)
    except ValueError:
        return None
    name = ed.default_scenario if scenario == "default" else scenario
    path = SHIPPED_TUNED_DIR / f"tuned-{ed.id}-{name}.json"
    return path if path.is_file() else None


def make_tuned(rules: Any, path: str | None = None) -> Any:
    """The ``tuned`` agent: parameters (or a tuned model) saved in a ``best.json``.

    A file whose ``family`` is an RL algorithm (``maskable-ppo``, ``ppo``, ``dqn``) names its
    model in ``model``: a safe-format model (:mod:`psygym_agents.safe_model`) inside the file's
    own folder, relative to it. A ``.zip`` or a path leading elsewhere is refused, whatever
    ``PSYGYM_TRUST_PICKLE`` says.

    Raises:
        ValueError: no path, an unreadable file, parameters for another edition, or a model
            that is not a safe-format model inside the file's folder.
        FileNotFoundError: no such file.
    """
    if not path:
        raise ValueError("the tuned agent needs a file: tuned:runs/.../best.json")
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"no tuned parameters file {p}")
    try:
        doc = json.loads(p.read_text())
    except ValueError as exc:
        raise ValueError(f"{p} is not JSON: {exc}") from None
    if not isinstance(doc, dict) or "family" not in doc:
        raise ValueError(f"{p} is not a tuned-parameters file (no 'family' field)")
    if doc.get("edition") != rules.edition:
        raise ValueError(f"{p} holds parameters for edition {doc.get('edition')}, "
                         f"not {rules.edition}")  # fmt: skip
    if doc["family"] in ("maskable-ppo", "ppo", "dqn"):
        from psygym_agents.sb3 import make_sb3

        policy = make_sb3(rules, str(_tuned_model(p, doc.get("model"))), trust_pickle=False)
        policy.name = f"tuned:{path}"
        return policy
    fam = family_for(rules.edition)
    if doc["family"] != fam.name:
        raise ValueError(f"{p} is for family {doc['family']!r}; {rules.edition} has {fam.name!r}")
    params = check_params(doc.get("params", {}), f"{p}")
    try:
        return build(rules, dict(params), name=f"tuned:{path}")
    except ValueError as exc:
        raise ValueError(f"{p}: {exc}") from None


__all__ = [
    "Family", "build", "check_params", "families", "family_for", "make_tuned", "save_best",
    "shipped_tuned",
]  # fmt: skip
