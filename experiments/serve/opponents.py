"""The opponents ``psygym serve`` offers: the built-in agents, then the models that fit the game.

A model is offered only for the edition, shipped scenario and seat it was made for, under a
readable title: the shipped models first (``maskable-ppo model for duel seat 1, shipped``),
then the user's own from the runs folder, each titled with its run folder
(``maskable-ppo model for duel seat 1, runs/8th/duel/maskable-ppo_2``). Only formats that run
no code from the file are offered: psygym's safe models (``.safetensors`` weights with their
``.json``) and tuned-parameter files (``best.json``) of a heuristic family. Never offered: SB3
``.zip`` archives (pickles), tuned files of an RL family (they name a model archive), the
checkpoints a training run keeps under ``checkpoints/`` (a run offers its final and best
models), models whose spaces no longer fit their scenario's rules, and a second copy of
weights already listed.

The page sends a model as ``model:<hash>`` (a hash of its path), never as a path; the server
looks the name up among the models it lists.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from psygym import edition as registry
from psygym.editions import load
from psygym.policies import agent_names, describe_agent
from psygym.scenario import ScenarioError

UNSAFE_AGENTS = frozenset({"sb3", "tuned"})
"""Built-in agents the page may not name: they load a file (``sb3`` archives hold pickles)."""

UNSAFE_FAMILIES = frozenset({"maskable-ppo", "ppo", "dqn"})
"""Tuned-parameter files of these families point at an RL model archive: never offered."""

CHECKPOINTS = "checkpoints"
"""The folder of a training run that holds its checkpoints (never offered)."""


@dataclass(frozen=True)
class Model:
    """A saved model the page may choose as the AI.

    Attributes:
        name: what the page sends, ``model:<hash of the path>``.
        title: the readable name shown (the kind of model, then ``shipped`` or its run folder).
        description: one sentence on how it plays.
        spec: the agent spec it resolves to (``sb3:<path>`` or ``tuned:<path>``).
        scenario: the shipped scenario it was made for.
        seat: the seat it was trained to play, or None when it plays either.
    """

    name: str
    title: str
    description: str
    spec: str
    scenario: str
    seat: int | None

    def fits(self, scenario: str, seat: int) -> bool:
        """Whether it may be the AI of a game on shipped ``scenario`` with the AI in ``seat``."""
        return self.scenario == scenario and self.seat in (None, seat)

    def why_not(self, scenario: str, seat: int) -> str:
        """One line on why it does not fit that game (call when :meth:`fits` is false)."""
        plays = "either seat" if self.seat is None else f"seat {self.seat}"
        return (
            f"opponent {self.title!r} was made for scenario {self.scenario!r}, {plays}; this "
            f"game's AI plays seat {seat} of {scenario!r}"
        )


def offered(rules: Any, runs_dir: Path) -> list[dict[str, Any]]:
    """The opponents of an edition for the page: built-in agents, shipped models, the user's.

    Each entry has ``name`` (what the page sends), ``title``, ``description``, and ``scenario``
    and ``seat`` (the shipped scenario and the AI seat it fits; None: any). No entry holds a
    path the page could send.
    """
    out: list[dict[str, Any]] = [
        {"name": n, "title": n, "description": describe_agent(n, rules), "scenario": None,
         "seat": None}
        for n in agent_names(rules)
        if n not in UNSAFE_AGENTS
    ]  # fmt: skip
    out += [
        {"name": m.name, "title": m.title, "description": m.description,
         "scenario": m.scenario, "seat": m.seat}
        for m in saved_models(runs_dir, rules.edition)
    ]  # fmt: skip
    return out


def saved_models(runs_dir: Path, edition_id: str) -> list[Model]:
    """The safe models and tuned files of an edition: the shipped ones first, then the user's.

    The user's are those under ``runs_dir`` outside any ``checkpoints`` folder. A model whose
    weights are already listed (the same ``weights_sha256``) is left out.
    """
    shipped = set(registry.get(edition_id).scenario_names())
    found: list[Model] = []
    weights_seen: set[str] = set()
    folders: list[tuple[Path, bool]] = [(runs_dir, True)]
    try:
        from psygym_agents.sb3 import PRETRAINED_DIR

        folders.insert(0, (Path(PRETRAINED_DIR), False))
    except ImportError:  # the agents package is optional
        pass
    for folder, own in folders:
        # A run's final model before its other files (best_model), so a copy keeps its name.
        files = folder.glob("**/*.safetensors")
        for weights in sorted(files, key=lambda p: (p.parent, p.stem != "model", p.name)):
            if own and CHECKPOINTS in weights.relative_to(folder).parts:
                continue
            doc = _read_json(weights.with_suffix(".json"))
            digest = str(doc.get("weights_sha256", ""))
            if digest and digest in weights_seen:
                continue
            model = _safe_model(weights, doc, folder if own else None, edition_id, shipped)
            if model is None:
                continue
            weights_seen.add(digest)
            found.append(model)
    for path in sorted(runs_dir.glob("**/best.json")):
        doc = _read_json(path)
        if doc.get("edition") != edition_id or doc.get("scenario") not in shipped:
            continue
        if "family" not in doc or doc["family"] in UNSAFE_FAMILIES:
            continue
        where = runs_dir / path.parent.relative_to(runs_dir)
        against = f" against {doc['opponent']}" if isinstance(doc.get("opponent"), str) else ""
        found.append(Model(
            name=_name(path),
            title=f"tuned {doc['family']} parameters for {doc['scenario']}, {where}",
            description=f"the {doc['family']} heuristic with parameters tuned{against}",
            spec=f"tuned:{path}", scenario=doc["scenario"], seat=None,
        ))  # fmt: skip
    return found


def find(name: str, runs_dir: Path, rules: Any, scenario: str, seat: int) -> str:
    """The agent spec of opponent ``name`` for a game on ``scenario`` with the AI in ``seat``.

    Raises:
        LookupError: ``name`` is not offered, or is a model made for another scenario or seat
            (the message says which, and what is allowed).
    """
    if name.startswith("model:"):
        models = [m for m in saved_models(runs_dir, rules.edition) if m.name == name]
        if not models:
            raise LookupError(f"unknown model {name!r}; /api/options lists the models offered")
        if not models[0].fits(scenario, seat):
            raise LookupError(models[0].why_not(scenario, seat))
        return models[0].spec
    allowed = [n for n in agent_names(rules) if n not in UNSAFE_AGENTS]
    if name not in allowed:
        raise LookupError(f"unknown opponent {name!r}; allowed: {', '.join(allowed)}")
    return name


def title_of(name: str, runs_dir: Path, edition_id: str) -> str:
    """The readable title of opponent ``name`` (a built-in agent's title is its name)."""
    if name.startswith("model:"):
        for m in saved_models(runs_dir, edition_id):
            if m.name == name:
                return m.title
    return name


def _safe_model(
    weights: Path, doc: Mapping[str, Any], runs_dir: Path | None, edition_id: str,
    shipped: set[str],
) -> Model | None:  # fmt: skip
    """The model of ``weights`` if it may be offered, else None.

    It may be when ``doc`` (its JSON) says it is a safe model of the edition made for one of the
    ``shipped`` scenarios, whose rules it still fits. ``runs_dir`` is the user's runs folder it
    lies in, None for a shipped model.
    """
    from psygym_experiments.harness.compare_field import ppo_text
    from psygym_experiments.harness.seats import model_seats

    if doc.get("edition") != edition_id or doc.get("scenario") not in shipped or not _fits(doc):
        return None
    spec = f"sb3:{weights}"
    try:
        seats = model_seats(spec)
    except ValueError:  # a seat other than 0, 1 or "both"
        return None
    if runs_dir is None:
        where = "shipped"
    else:
        folder = runs_dir / weights.parent.relative_to(runs_dir)
        where = str(folder if weights.stem == "model" else folder / weights.stem)
    seat = seats[0] if len(seats) == 1 else None
    plays = "either seat" if seat is None else f"seat {seat}"
    return Model(
        name=_name(weights),
        title=f"{doc.get('algo', 'trained')} model for {doc['scenario']} {plays}, {where}",
        description=ppo_text(spec), spec=spec, scenario=doc["scenario"], seat=seat,
    )  # fmt: skip


def _name(path: Path) -> str:
    """The name the page sends for the model at ``path``: a hash, never the path."""
    return "model:" + hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:16]


def _fits(doc: Mapping[str, Any]) -> bool:
    """Whether a safe model's spaces match its scenario's rules today (stale models are hidden)."""
    try:
        rules = load(str(doc["edition"]), str(doc["scenario"]))
        obs = list(doc["observation_space"]["shape"])
        n = int(doc["action_space"]["n"])
    except (KeyError, TypeError, ValueError, ScenarioError):
        return False
    return obs == [rules.observation_size] and n == rules.num_actions


def _read_json(path: Path) -> dict[str, Any]:
    """The JSON object in ``path``, or ``{}`` when there is none."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    return doc if isinstance(doc, dict) else {}


__all__ = ["Model", "UNSAFE_AGENTS", "find", "offered", "saved_models", "title_of"]
