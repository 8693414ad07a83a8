"""The files of a trained policy: the safe model, optimizer state, replay buffer, checkpoints.

Everything is safetensors + JSON (or plain ``.npz`` arrays), never a pickle, each with its
SHA-256 recorded in ``checkpoints/last.json`` and checked before it is loaded; no file is
written through a link (:func:`.output.check_output`). The run that writes them is
:mod:`.training`.
"""

from __future__ import annotations

import io
import json
import os
import re
from pathlib import Path
from typing import Any

from psygym_experiments.harness.output import check_output, write_bytes
from psygym_experiments.harness.runs import read_metrics as _read_csv

from psygym.file_writes import obstacle


def save_model(model: Any, path: Path, meta: dict[str, Any]) -> Path:
    """Save an SB3 model's policy in the safe format: ``<stem>.safetensors`` + ``<stem>.json``.

    ``path`` is the stem (a ``.zip``/``.safetensors``/``.json`` suffix is dropped); ``meta`` goes
    into the JSON (:func:`psygym_agents.safe_model.save_safe`). Nothing written is a pickle, and
    neither file may be a link (:func:`.output.check_output`).
    """
    from psygym_agents.safe_model import safe_paths, save_safe

    p = Path(path)
    stem = p.with_suffix("") if p.suffix in (".zip", ".safetensors", ".json") else p
    for file in safe_paths(stem):
        check_output(file)
    return save_safe(model, stem, meta)


def check_new_model(
    stem: Path, command: str, other: str, *, reused: Path | None = None
) -> tuple[Path, Path]:
    """The safe model's files at ``stem`` (weights, JSON), once shown free for a new model.

    Every command that writes a model to a name the user gave (``psygym export``, ``psygym
    train --export``) checks it here before its work starts: a model is written as new files
    only (no command has a ``--force``), so an earlier model there, a link or folder where a file
    would go, or a file where a folder would go is refused in one line naming it. A missing
    folder is fine (the writer makes it).

    Args:
        stem: the model's path without suffix (:func:`psygym_agents.safe_model.safe_paths`).
        command: the command, as the message names it (``"export"``).
        other: what else the user can do, ending the message (``"give another --out folder"``).
        reused: a file that may be there because the command reads it and writes it again.

    Raises:
        ValueError: one line naming the file, what is there, and ``other``.
    """
    from psygym_agents.safe_model import safe_paths

    weights, meta = safe_paths(stem)
    for target in (weights, meta):
        what = obstacle(target)
        if what is not None:
            raise ValueError(f"refusing to write {target}: it is {what}; {command} writes new "
                             f"regular files only: remove {target.name}, or {other}")  # fmt: skip
        if target.exists() and not (reused is not None and target.samefile(reused)):
            raise ValueError(
                f"{target} exists already (an earlier export?); {command} writes new files only: "
                f"remove {weights.name} and {meta.name} there, or {other}"
            )
    folder = next(p for p in weights.absolute().parents if os.path.lexists(p))
    if not folder.is_dir():
        what = "a file, not a folder" if folder.is_file() else "not a folder"
        raise ValueError(f"cannot write {weights}: {folder} is {what}; {other}")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ValueError(f"cannot write {weights}: no permission to make files in {folder}; "
                         f"{other}")  # fmt: skip
    return weights, meta


def sha256_of(path: Path) -> str:
    """The SHA-256 of a file's bytes, as hex (what ``checkpoints/last.json`` records)."""
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def save_optimizer(optimizer: Any, path: Path) -> str:
    """Write a torch optimizer's state as safetensors (tensors) + JSON (groups); return its SHA-256.

    No pickle: the tensors are ``state.<param index>.<name>``, the parameter groups and any
    non-tensor state are JSON in the file's metadata.
    """
    import torch
    from psygym_agents.safe_model import write_safetensors
    from safetensors.torch import save

    sd = optimizer.state_dict()
    tensors, scalars = {}, {}
    for idx, state in sd["state"].items():
        for key, value in state.items():
            if torch.is_tensor(value):
                tensors[f"state.{idx}.{key}"] = value.detach().to("cpu").contiguous().clone()
            else:
                scalars[f"{idx}.{key}"] = value
    doc = json.dumps({"param_groups": sd["param_groups"], "scalars": scalars})
    write_safetensors(check_output(path), save(tensors, metadata={"optimizer": doc}))
    return sha256_of(path)


def load_optimizer(optimizer: Any, path: Path, sha256: str) -> None:
    """Load :func:`save_optimizer`'s file into ``optimizer`` after checking its SHA-256.

    Raises:
        ValueError: the file is not the one the run recorded (SHA-256 differs) or is unreadable.
    """
    from safetensors import safe_open

    if not path.is_file() or sha256_of(path) != sha256:
        raise ValueError(
            f"{path} is not the optimizer state this run recorded (missing, or its SHA-256 "
            "differs from checkpoints/last.json): the checkpoint was changed"
        )
    try:
        with safe_open(str(path), "pt") as f:
            doc = json.loads(f.metadata()["optimizer"])
            tensors = {k: f.get_tensor(k) for k in f.keys()}  # noqa: SIM118 - not a dict
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{path} is not an optimizer state file: {exc}") from None
    state: dict[int, dict[str, Any]] = {}
    for key, value in tensors.items():
        _, idx, name = key.split(".", 2)
        state.setdefault(int(idx), {})[name] = value
    for key, value in doc["scalars"].items():
        idx, name = key.split(".", 1)
        state.setdefault(int(idx), {})[name] = value
    groups = doc["param_groups"]
    for g in groups:
        if isinstance(g.get("betas"), list):
            g["betas"] = tuple(g["betas"])
    optimizer.load_state_dict({"state": state, "param_groups": groups})


BUFFER_ARRAYS = ("observations", "next_observations", "actions", "rewards", "dones", "timeouts")


def save_buffer(buffer: Any, path: Path) -> str:
    """Write a replay buffer's arrays as ``.npz`` (no object arrays); return its SHA-256."""
    import numpy as np

    arrays = {k: getattr(buffer, k) for k in BUFFER_ARRAYS if getattr(buffer, k, None) is not None}
    arrays["position"] = np.array([buffer.pos, int(buffer.full)], dtype=np.int64)
    data = io.BytesIO()
    np.savez(data, **arrays)
    write_bytes(path, data.getvalue())
    return sha256_of(path)


def load_buffer(buffer: Any, path: Path, sha256: str) -> None:
    """Load :func:`save_buffer`'s file into ``buffer`` (``allow_pickle=False``) after its SHA-256.

    Raises:
        ValueError: a changed file, or arrays of other shapes than the buffer's.
    """
    import numpy as np

    if not path.is_file() or sha256_of(path) != sha256:
        raise ValueError(f"{path} is not the replay buffer this run recorded (SHA-256 differs)")
    with np.load(path, allow_pickle=False) as data:
        for key in BUFFER_ARRAYS:
            if key in data.files:
                if data[key].shape != getattr(buffer, key).shape:
                    raise ValueError(f"{path}: {key} has shape {data[key].shape}, not the buffer's")
                setattr(buffer, key, data[key].copy())
        buffer.pos, buffer.full = int(data["position"][0]), bool(data["position"][1])


def final_model(run_dir: str | Path) -> Path | None:
    """The safe-format final model of a run folder (``model.safetensors``), or ``None``.

    Only what ``psygym train`` writes: a stray ``model.zip`` (pickles) in the folder is ignored.
    """
    from psygym_agents.safe_model import is_safe_model, safe_paths

    weights = safe_paths(Path(run_dir) / "model")[0]
    return weights if is_safe_model(weights) else None


def trained_models(folder: str | Path) -> list[Path]:
    """Safe-format final models of the runs under ``folder``, oldest first (``compare`` picks one).

    Only ``model.safetensors`` files with their JSON are listed, never SB3 ``.zip`` archives, so
    a ``runs/`` folder received from someone else cannot make ``compare`` unpickle anything.
    """
    from psygym_agents.safe_model import is_safe_model

    found = [p for p in Path(folder).glob("**/model.safetensors") if is_safe_model(p)]
    return sorted(found, key=lambda p: p.stat().st_mtime)


def export_model(run_dir: str | Path, dest: str | Path) -> Path:
    """Copy a run's final model to ``dest`` (safe format), with its final evaluation in the JSON.

    The copy holds the policy weights only (``<dest stem>.safetensors`` + ``.json``); a
    ``.zip``/``.safetensors``/``.json`` suffix of ``dest`` is dropped.

    Raises:
        FileNotFoundError: the run has no ``model.safetensors`` yet.
    """
    from psygym_agents.safe_model import load_safe, read_safe_metadata

    src = final_model(run_dir)
    if src is None:
        raise FileNotFoundError(f"{run_dir} has no model.safetensors to export")
    meta = read_safe_metadata(src)
    net = load_safe(src)  # checks the weights' SHA-256 against the JSON
    rows = _read_csv(Path(run_dir) / "metrics.csv")
    last = rows[-1] if rows else {}
    if last:  # the final evaluation, as metrics.csv recorded it
        meta.update(
            mean_eval_score=float(last["mean_score"]), eval_episodes=int(last["episodes"]),
            eval_ci95=float(last["ci95"]),
            exact_eval_score=float(last["exact_score"]) if last.get("exact_score") else None,
        )  # fmt: skip
    command = Path(run_dir) / "command.txt"
    if command.is_file():
        meta["trained_with"] = command.read_text().splitlines()[0]
    return save_model(net, Path(dest), meta)


CHECKPOINT_FORMAT = "psygym-checkpoint/1"
"""The ``format`` of ``checkpoints/last.json`` (safe-format checkpoints, no pickles)."""


def checkpoint_record(run_dir: Path) -> dict[str, Any] | None:
    """The run's ``checkpoints/last.json`` if it names a safe checkpoint, else ``None``.

    Raises:
        ValueError: ``last.json`` is unreadable, or names a folder other than ``step_<n>``.
    """
    path = Path(run_dir) / "checkpoints" / "last.json"
    if not path.is_file():
        return None
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise ValueError(
            f"{path} is not readable JSON ({exc}); the checkpoint is damaged"
        ) from None
    if not isinstance(doc, dict) or doc.get("format") != CHECKPOINT_FORMAT:
        return None
    if not re.fullmatch(r"step_\d+", str(doc.get("dir", ""))):
        raise ValueError(
            f"{path} names the checkpoint folder {doc.get('dir')!r}; allowed: step_<n>"
        )
    return doc


def load_checkpoint(model: Any, run_dir: Path, record: dict[str, Any]) -> None:
    """Load a safe checkpoint (weights, optimizer, buffer) into a fresh ``model``, hashes checked.

    Raises:
        ValueError: a file of the checkpoint is missing or not the one ``last.json`` recorded.
    """
    from psygym_agents.safe_model import load_safe, safe_paths

    folder = Path(run_dir) / "checkpoints" / record["dir"]
    weights = safe_paths(folder / "model")[0]
    if not weights.is_file() or sha256_of(weights) != record.get("weights_sha256"):
        raise ValueError(
            f"{weights} is not the checkpoint this run recorded (missing, or its SHA-256 differs "
            "from checkpoints/last.json)"
        )
    net = load_safe(folder / "model")
    model.policy.load_state_dict(net.state_dict(), strict=True)
    load_optimizer(model.policy.optimizer, folder / "optimizer.safetensors",
                   str(record.get("optimizer_sha256")))  # fmt: skip
    if record.get("buffer_sha256") and getattr(model, "replay_buffer", None) is not None:
        load_buffer(model.replay_buffer, folder / "replay_buffer.npz", record["buffer_sha256"])
    model.num_timesteps = int(record["steps"])
    if hasattr(model, "_n_updates"):
        model._n_updates = int(record.get("n_updates", 0))
    if hasattr(model, "_n_calls"):
        model._n_calls = int(record.get("n_calls", 0))


def load_init(model: Any, path: str) -> None:
    """Start ``model``'s policy from the weights of the safe model ``path`` (``--init``).

    Raises:
        ValueError: the saved network does not have the run's shape (one line).
    """
    from psygym_agents.safe_model import load_safe

    net = load_safe(path)
    try:
        model.policy.load_state_dict(net.state_dict(), strict=True)
    except RuntimeError as exc:
        first = str(exc).strip().splitlines()[0]
        raise ValueError(f"--init {path} does not fit this run's network: {first}") from None


__all__ = [
    "BUFFER_ARRAYS", "CHECKPOINT_FORMAT", "check_new_model", "checkpoint_record", "export_model",
    "final_model", "load_buffer", "load_checkpoint", "load_init", "load_optimizer", "save_buffer",
    "save_model", "save_optimizer", "sha256_of", "trained_models",
]  # fmt: skip
