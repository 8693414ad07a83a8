"""psygym's safe model format: SB3 policy weights as safetensors plus a JSON description.

A trained stable-baselines3 policy is stored as two files with the same stem, side by side:

- ``<stem>.safetensors``: every tensor of the policy network's ``state_dict`` (float32), in the
  safetensors format (a JSON header and raw bytes: reading it runs no code);
- ``<stem>.json``: what is needed to rebuild the network, plus the model's metadata. The
  ``"format"`` key is :data:`FORMAT`. ``"policy"`` holds the SB3 policy class name
  (``MaskableActorCriticPolicy``, ``ActorCriticPolicy`` or ``DQNPolicy``), ``net_arch``, the
  activation's name (``tanh``, ``relu``, ``elu``, ``leaky_relu``) and the few other constructor
  options; ``"observation_space"`` (``Box``: shape, dtype, low, high) and ``"action_space"``
  (``Discrete``: n, start); ``"weights_sha256"`` the SHA-256 of the weights file; and the
  metadata ``psygym train`` writes (edition, scenario, seat, algo, steps, opponent,
  hyperparameters, evaluation scores, ...).

In a run folder the pair is ``model.safetensors`` + ``model.json``; a shipped model is
``agents/pretrained/<edition>-<scenario>-seat<seat>.safetensors`` + ``.json``.
:func:`load_safe` accepts the ``.safetensors`` path, the ``.json`` path, the stem
(``runs/x/model``) or a folder holding ``model.safetensors``.

:func:`load_safe` never unpickles: it builds a fresh policy of a known class (a fixed table, no
class is imported by name from the file) from the JSON, with a constant learning-rate
schedule, reads the tensors with ``safetensors`` and loads them with ``strict=True``. A JSON that
does not describe the weights (other shapes, missing or extra tensors, a changed weights file)
is refused with a one-line :class:`SafeModelError`. Every size the JSON states (observation,
actions, layers, the network's weight count, the files themselves) is checked against a stated
maximum (:data:`MAX_OBSERVATION_SIZE` ...) before anything is built or read whole, every weight
must be a finite number, and a recorded ``seat`` must be 0, 1 or ``"both"``.

Saves are byte-deterministic: the same tensors and metadata give the same files
(:func:`write_safetensors`).
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any

from psygym.file_writes import obstacle, replace_with

FORMAT = "psygym-safe-model/1"
"""Value of the ``"format"`` key of a safe model's JSON."""

WEIGHTS_SUFFIX = ".safetensors"
"""Suffix of the weights file."""

DEFAULT_STEM = "model"
"""Stem looked for when :func:`load_safe` is given a folder."""

POLICY_CLASSES: dict[str, tuple[str, str]] = {
    "MaskableActorCriticPolicy": ("sb3_contrib.common.maskable.policies", "maskable-ppo"),
    "ActorCriticPolicy": ("stable_baselines3.common.policies", "ppo"),
    "DQNPolicy": ("stable_baselines3.dqn.policies", "dqn"),
}
"""Policy classes the format can hold: name -> (module, algorithm CLI name)."""

ACTIVATIONS = ("tanh", "relu", "elu", "leaky_relu")
"""Activation names the format can hold (``torch.nn`` Tanh, ReLU, ELU, LeakyReLU)."""

HYPERPARAMETERS = (
    "learning_rate", "n_steps", "batch_size", "n_epochs", "gamma", "gae_lambda", "ent_coef",
    "vf_coef", "max_grad_norm", "normalize_advantage", "target_kl", "buffer_size",
    "learning_starts", "tau", "gradient_steps", "target_update_interval", "exploration_fraction",
    "exploration_initial_eps", "exploration_final_eps", "n_envs",
)  # fmt: skip
"""Algorithm attributes recorded under ``"hyperparameters"`` when they are plain numbers."""

# Bounds checked on a model's JSON before anything is built or read whole: a tampered JSON can
# ask for any size, and a Box or network of that size would be allocated before its weights are
# compared (the shipped models have at most 795 inputs, 1,323 actions and two layers of 128).
MAX_OBSERVATION_SIZE = 100_000
"""Most entries in a model's observation (the product of ``observation_space.shape``)."""
MAX_OBSERVATION_DIMS = 4
"""Most dimensions of ``observation_space.shape``."""
MAX_ACTIONS = 100_000
"""Largest ``action_space.n``."""
MAX_LAYERS = 16
"""Most hidden layers in ``policy.net_arch`` (per head)."""
MAX_WIDTH = 4096
"""Widest hidden layer in ``policy.net_arch``."""
MAX_PARAMETERS = 10_000_000
"""Most weights the described network may have (40 MB of float32)."""
MAX_JSON_BYTES = 4 << 20
"""Largest model JSON read (4 MiB; per-entry Box bounds of the biggest observation fit)."""
MAX_WEIGHTS_BYTES = 8 * MAX_PARAMETERS + (1 << 20)
"""Largest weights file read: :data:`MAX_PARAMETERS` float32 twice (DQN's target network),
plus the header."""
SEATS = (0, 1, "both")
"""Values a model JSON's ``seat`` may hold (``psygym train --seat``)."""


class SafeModelError(ValueError):
    """A safe model that cannot be saved or loaded; the message is one line."""


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _activation_classes() -> dict[str, Any]:
    from torch import nn

    return {"tanh": nn.Tanh, "relu": nn.ReLU, "elu": nn.ELU, "leaky_relu": nn.LeakyReLU}


def _policy_class(name: str) -> Any:
    import importlib

    module, _ = POLICY_CLASSES[name]
    return getattr(importlib.import_module(module), name)


def _constant_schedule(_progress: float) -> float:
    """Learning-rate schedule of a rebuilt policy (it is never trained here)."""
    return 0.0


def _no_optimizer(*_args: Any, **_kwargs: Any) -> None:
    """The optimiser "class" of a rebuilt policy: none (it plays; training builds its own).

    SB3 policies build an Adam optimiser in their constructor; torch's first one imports its
    compiler (over a second per process) for nothing here.
    """
    return None


# ----------------------------------------------------------------------------- paths
def safe_paths(path: str | Path) -> tuple[Path, Path]:
    """The (weights, JSON) files of a safe model named by ``path``.

    ``path`` may be the ``.safetensors`` file, its ``.json``, the stem without suffix, or a folder
    (then ``model.safetensors`` inside it). Nothing is checked for existence.
    """
    p = Path(path)
    if p.is_dir():
        p = p / DEFAULT_STEM
    elif p.suffix in (WEIGHTS_SUFFIX, ".json"):
        p = p.with_suffix("")
    return p.with_name(p.name + WEIGHTS_SUFFIX), p.with_name(p.name + ".json")


def is_safe_model(path: str | Path) -> bool:
    """Whether ``path`` names an existing safe model (its weights file exists)."""
    if Path(path).suffix not in ("", WEIGHTS_SUFFIX, ".json") and not Path(path).is_dir():
        return False
    return safe_paths(path)[0].is_file()


def file_sha256(path: Path) -> str:
    """SHA-256 of a file, read in blocks (never whole into memory)."""
    with path.open("rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def canonical_safetensors(blob: bytes) -> bytes:
    """A safetensors file's bytes with its JSON header written with sorted keys.

    ``safetensors`` writes the header's ``__metadata__`` in hash-map order, which changes from
    one save to the next; with the keys sorted, two saves of the same tensors and metadata are
    byte-identical. The data offsets are relative to the end of the header, so they still hold.
    """
    size = int.from_bytes(blob[:8], "little")
    header = json.loads(blob[8 : 8 + size])
    text = json.dumps(header, sort_keys=True, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # the format pads the header to 8 bytes with spaces
    return len(text).to_bytes(8, "little") + text + blob[8 + size :]


def write_safetensors(path: str | Path, blob: bytes) -> None:
    """Write the bytes of a safetensors file to ``path``, canonical and through a temporary file.

    ``blob`` is what ``safetensors.torch.save`` or ``safetensors.numpy.save`` returns; it is
    written as :func:`canonical_safetensors` gives it. Every safetensors file psygym writes goes
    through here, so saves are byte-deterministic.
    """
    _replace_file(Path(path), canonical_safetensors(blob))


def _replace_file(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a fresh temporary file moved into place.

    ``path`` must not be a symbolic link (nor a folder, FIFO or device): a model is never
    written through a link (:func:`psygym.file_writes.replace_with` says how the temporary
    file is made).

    Raises:
        SafeModelError: ``path`` is a link or not a regular file (one line naming it).
    """
    _check_writable(path)
    replace_with(path, data, mode=0o644)  # models are shared files, whatever the umask


def _check_writable(path: Path) -> None:
    """Refuse to write ``path`` if it is a symbolic link or there but not a regular file.

    Raises:
        SafeModelError: one line naming the file and what it is.
    """
    what = obstacle(path)
    if what is not None:
        raise SafeModelError(f"refusing to write {path}: it is {what}; a model is written only "
                             "as a regular file, never through a link")  # fmt: skip


# ----------------------------------------------------------------------------- JSON encoding
def _num(x: float) -> float | str:
    """A float for JSON; infinities as the strings ``"inf"``/``"-inf"`` (strict JSON)."""
    x = float(x)
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def _bound(values: Any) -> float | str | list[float | str]:
    """A Box bound: one number when all entries are equal, else the flat list."""
    import numpy as np

    arr = np.asarray(values, dtype=np.float64).reshape(-1)
    if arr.size and bool(np.all(arr == arr[0])):
        return _num(arr[0])
    return [_num(v) for v in arr]


def _space_to_json(space: Any, what: str) -> dict[str, Any]:
    from gymnasium import spaces

    if what == "observation_space" and type(space) is spaces.Box:
        return {"type": "Box", "shape": [int(d) for d in space.shape],
                "dtype": str(space.dtype), "low": _bound(space.low),
                "high": _bound(space.high)}  # fmt: skip
    if what == "action_space" and isinstance(space, spaces.Discrete):
        return {"type": "Discrete", "n": int(space.n), "start": int(space.start)}
    kind = "Box" if what == "observation_space" else "Discrete"
    raise SafeModelError(f"the safe format holds a {kind} {what}, not {space!r}")


def _net_arch_json(net_arch: Any) -> list[int] | dict[str, list[int]]:
    if isinstance(net_arch, dict):
        return {str(k): [int(w) for w in v] for k, v in net_arch.items()}
    return [int(w) for w in (net_arch or [])]


def describe_policy(net: Any) -> dict[str, Any]:
    """The ``"policy"``, ``"observation_space"`` and ``"action_space"`` entries of a network.

    Raises:
        SafeModelError: a policy class, activation, features extractor or space the format
            cannot describe.
    """
    from stable_baselines3.common.torch_layers import FlattenExtractor

    cls_name = type(net).__name__
    if cls_name not in POLICY_CLASSES or type(net) is not _policy_class(cls_name):
        raise SafeModelError(
            f"the safe format holds {', '.join(POLICY_CLASSES)} policies, not {type(net).__name__}"
        )
    params = net._get_constructor_parameters()
    act_names = {cls: name for name, cls in _activation_classes().items()}
    activation = act_names.get(params["activation_fn"])
    if activation is None:
        raise SafeModelError(
            f"the safe format holds the activations {', '.join(ACTIVATIONS)}, "
            f"not {params['activation_fn'].__name__}"
        )
    if params.get("features_extractor_class") is not FlattenExtractor or params.get(
        "features_extractor_kwargs"
    ):
        raise SafeModelError("the safe format holds policies with SB3's default FlattenExtractor")
    policy: dict[str, Any] = {
        "class": cls_name,
        "net_arch": _net_arch_json(params.get("net_arch")),
        "activation_fn": activation,
        "normalize_images": bool(params.get("normalize_images", True)),
    }
    if cls_name != "DQNPolicy":
        if params.get("use_sde"):
            raise SafeModelError("the safe format does not hold gSDE policies (use_sde=True)")
        policy["ortho_init"] = bool(params.get("ortho_init", True))
        policy["share_features_extractor"] = bool(params.get("share_features_extractor", True))
    return {
        "policy": policy,
        "observation_space": _space_to_json(net.observation_space, "observation_space"),
        "action_space": _space_to_json(net.action_space, "action_space"),
    }


def _hyperparameters(model: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in HYPERPARAMETERS:
        value = getattr(model, key, None)
        if isinstance(value, bool):
            out[key] = value
        elif isinstance(value, int | float) and math.isfinite(float(value)):
            out[key] = value
    return out


# ----------------------------------------------------------------------------- save
def save_safe(
    model_or_policy: Any, path_stem: str | Path, metadata: dict[str, Any] | None = None
) -> Path:
    """Write a model in the safe format: ``<stem>.safetensors`` and ``<stem>.json``.

    Args:
        model_or_policy: an SB3 algorithm (its ``policy`` is saved and its plain-number
            hyperparameters recorded) or a policy network.
        path_stem: the files' path without suffix (a ``.safetensors``/``.json`` suffix is
            dropped; a folder means ``<folder>/model``).
        metadata: JSON-serialisable facts kept in the JSON (edition, scenario, seat, algo,
            steps, ...). Its ``algo`` defaults to the policy class's algorithm.

    Returns:
        The weights file written.

    Raises:
        SafeModelError: a network the format cannot describe, or a file to write that is a
            symbolic link or not a regular file.
    """
    from safetensors.torch import save

    net = getattr(model_or_policy, "policy", model_or_policy)
    described = describe_policy(net)
    weights, meta_path = safe_paths(path_stem)
    for target in (weights, meta_path):  # both refused before either is written
        _check_writable(target)
    weights.parent.mkdir(parents=True, exist_ok=True)
    tensors = {k: v.detach().to("cpu").contiguous().clone() for k, v in net.state_dict().items()}
    header = {"format": FORMAT, "policy": described["policy"]["class"]}
    write_safetensors(weights, save(tensors, metadata=header))
    doc: dict[str, Any] = dict(metadata or {})
    doc.setdefault("algo", POLICY_CLASSES[described["policy"]["class"]][1])
    hyper = dict(doc.get("hyperparameters") or {})
    if model_or_policy is not net:
        hyper = {**_hyperparameters(model_or_policy), **hyper}
    doc["hyperparameters"] = hyper
    doc.update(described)
    doc["format"] = FORMAT
    doc["weights_sha256"] = file_sha256(weights)
    _replace_file(meta_path, (json.dumps(doc, indent=2) + "\n").encode())
    return weights


# ----------------------------------------------------------------------------- load
def read_safe_metadata(path: str | Path) -> dict[str, Any]:
    """The JSON of a safe model, checked to be one.

    Raises:
        FileNotFoundError: no weights file or no JSON beside it.
        SafeModelError: the JSON is unreadable or not in :data:`FORMAT`.
    """
    weights, meta_path = safe_paths(path)
    if not weights.is_file():
        raise FileNotFoundError(f"no model weights {weights}")
    if not meta_path.is_file():
        raise FileNotFoundError(f"no {meta_path.name} beside {weights} (the model's description)")
    size = meta_path.stat().st_size
    if size > MAX_JSON_BYTES:
        raise SafeModelError(
            f"{meta_path} is {size} bytes; a model JSON is at most {MAX_JSON_BYTES} bytes"
        )
    try:
        doc = json.loads(meta_path.read_text())
    except (OSError, ValueError, RecursionError) as exc:
        raise SafeModelError(f"{meta_path} is not readable JSON: {_one_line(exc)}") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise SafeModelError(
            f"{meta_path} does not describe a psygym safe model (its 'format' is not {FORMAT!r}); "
            f"export the model again: psygym export --trust-pickle MODEL.zip"
        )
    check_seats(doc, meta_path)
    return doc


def check_seats(doc: dict[str, Any], where: str | Path) -> None:
    """Check the seats a model's JSON records.

    ``seat`` is one of :data:`SEATS` and ``seats`` a list of 0 and 1; either may be absent.

    Raises:
        SafeModelError: another value, naming ``where`` (the JSON file).
    """
    seat = doc.get("seat")
    if "seat" in doc and (isinstance(seat, bool) or seat not in SEATS):
        raise SafeModelError(f"{where}: seat is {seat!r}; a model's seat is 0, 1 or \"both\"")
    seats = doc.get("seats")
    if "seats" in doc and not (
        isinstance(seats, list) and seats
        and all(type(x) is int and x in (0, 1) for x in seats)
    ):  # fmt: skip
        raise SafeModelError(f"{where}: seats is {seats!r}; a model's seats are a list of 0 and 1")


def _field(doc: dict[str, Any], where: str, key: str, kind: Any, meta_path: Path) -> Any:
    value = doc.get(key)
    ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
    if not ok:
        raise SafeModelError(f"{meta_path}: {where}{key} is {value!r}; expected {kind.__name__}")
    return value


def _float_bound(value: Any, meta_path: Path, key: str) -> Any:
    import numpy as np

    def one(v: Any) -> float:
        if isinstance(v, str) and v in ("inf", "-inf"):
            return float(v)
        if isinstance(v, int | float) and not isinstance(v, bool) and not math.isnan(v):
            return float(v)
        raise SafeModelError(
            f"{meta_path}: observation_space.{key} holds {v!r}; expected numbers, \"inf\" or "
            "\"-inf\""
        )

    if isinstance(value, list):
        return np.array([one(v) for v in value], dtype=np.float64)
    return one(value)


def _spaces_from_json(doc: dict[str, Any], meta_path: Path) -> tuple[Any, Any]:
    import numpy as np
    from gymnasium import spaces

    obs = _field(doc, "", "observation_space", dict, meta_path)
    act = _field(doc, "", "action_space", dict, meta_path)
    if obs.get("type") != "Box" or act.get("type") != "Discrete":
        raise SafeModelError(
            f"{meta_path}: the observation space must be a Box and the action space Discrete "
            f"(found {obs.get('type')!r} and {act.get('type')!r})"
        )
    shape = _field(obs, "observation_space.", "shape", list, meta_path)
    if not shape or not all(isinstance(d, int) and not isinstance(d, bool) and d > 0
                            for d in shape):  # fmt: skip
        raise SafeModelError(f"{meta_path}: observation_space.shape {shape!r} is not a shape")
    size = math.prod(shape)  # Python integers: no overflow to a small number
    if len(shape) > MAX_OBSERVATION_DIMS or size > MAX_OBSERVATION_SIZE:
        raise SafeModelError(
            f"{meta_path}: observation_space.shape {shape} holds {size} entries in {len(shape)} "
            f"dimensions; a model reads at most {MAX_OBSERVATION_SIZE} entries in at most "
            f"{MAX_OBSERVATION_DIMS} dimensions"
        )
    if obs.get("dtype", "float32") != "float32":
        raise SafeModelError(f"{meta_path}: observation_space.dtype must be float32")
    low = _float_bound(obs.get("low", "-inf"), meta_path, "low")
    high = _float_bound(obs.get("high", "inf"), meta_path, "high")
    for key, bound in (("low", low), ("high", high)):
        if isinstance(bound, np.ndarray) and bound.size != size:
            raise SafeModelError(
                f"{meta_path}: observation_space.{key} has {bound.size} values for shape {shape}"
            )
    if isinstance(low, np.ndarray):
        low = low.reshape(shape)
    if isinstance(high, np.ndarray):
        high = high.reshape(shape)
    n = _field(act, "action_space.", "n", int, meta_path)
    start = act.get("start", 0)
    if not 0 < n <= MAX_ACTIONS or not isinstance(start, int) or isinstance(start, bool):
        raise SafeModelError(
            f"{meta_path}: action_space n={n!r} start={start!r} is not valid (n is 1 to "
            f"{MAX_ACTIONS}, start a whole number)"
        )
    try:
        obs_space = spaces.Box(low, high, tuple(shape), dtype=np.float32)
    except (ValueError, TypeError) as exc:
        raise SafeModelError(f"{meta_path}: bad observation_space: {_one_line(exc)}") from None
    return obs_space, spaces.Discrete(n, start=start)


def _widths(value: Any, meta_path: Path) -> list[int]:
    if not isinstance(value, list) or not all(
        isinstance(w, int) and not isinstance(w, bool) and 0 < w for w in value
    ):
        raise SafeModelError(f"{meta_path}: policy.net_arch {value!r} is not a list of widths")
    if len(value) > MAX_LAYERS or max(value, default=0) > MAX_WIDTH:
        raise SafeModelError(
            f"{meta_path}: policy.net_arch has {len(value)} layers up to {max(value)} wide; at "
            f"most {MAX_LAYERS} layers of at most {MAX_WIDTH}"
        )
    return value


def _policy_kwargs(doc: dict[str, Any], obs_size: int, n: int, meta_path: Path) -> tuple[str, dict]:
    """The policy class name and its constructor kwargs, checked, from the JSON."""
    pol = _field(doc, "", "policy", dict, meta_path)
    cls_name = pol.get("class")
    if cls_name not in POLICY_CLASSES:
        raise SafeModelError(
            f"{meta_path}: policy.class {cls_name!r} is not one of {', '.join(POLICY_CLASSES)}"
        )
    activation = pol.get("activation_fn")
    if activation not in ACTIVATIONS:
        raise SafeModelError(
            f"{meta_path}: policy.activation_fn {activation!r} is not one of "
            f"{', '.join(ACTIVATIONS)}"
        )
    arch = pol.get("net_arch", [])
    if isinstance(arch, dict) and cls_name != "DQNPolicy":
        if set(arch) != {"pi", "vf"}:
            raise SafeModelError(f"{meta_path}: policy.net_arch must have exactly 'pi' and 'vf'")
        heads = {"pi": _widths(arch["pi"], meta_path), "vf": _widths(arch["vf"], meta_path)}
        net_arch: Any = dict(heads)
    else:
        widths = _widths(arch, meta_path)
        heads = {"pi": widths, "vf": widths}
        net_arch = list(widths)
    outs = {"pi": n, "vf": 1}
    total = 0
    for head, widths in heads.items():
        dims = [obs_size, *widths, outs[head] if cls_name != "DQNPolicy" else n]
        total += sum(a * b for a, b in zip(dims, dims[1:], strict=False))
    if total > MAX_PARAMETERS:
        raise SafeModelError(
            f"{meta_path}: the described network has about {total} weights; at most "
            f"{MAX_PARAMETERS}"
        )
    kwargs: dict[str, Any] = {
        "net_arch": net_arch,
        "activation_fn": activation,
        "normalize_images": bool(pol.get("normalize_images", True)),
    }
    if cls_name != "DQNPolicy":
        kwargs["ortho_init"] = bool(pol.get("ortho_init", True))
        kwargs["share_features_extractor"] = bool(pol.get("share_features_extractor", True))
    return str(cls_name), kwargs


def check_finite(tensors: dict[str, Any], weights: str | Path) -> None:
    """Check that every tensor holds finite numbers only (no NaN, no infinity).

    A NaN weight makes every answer of the network NaN: the game would stop on the first
    decision with a message from torch naming neither the file nor the cause.

    Raises:
        SafeModelError: naming ``weights`` (the file), the tensor and what it holds.
    """
    import numpy as np

    for key in sorted(tensors):
        t = tensors[key]
        if hasattr(t, "is_floating_point"):  # a torch tensor (bfloat16 has no NumPy twin)
            bad = t.is_floating_point() and not bool(t.isfinite().all())
            nan = bad and bool(t.isnan().any())
        else:
            bad = np.issubdtype(t.dtype, np.floating) and not bool(np.isfinite(t).all())
            nan = bad and bool(np.isnan(t).any())
        if bad:
            what = "NaN" if nan else "infinite"
            raise SafeModelError(
                f"{weights}: tensor {key} holds {what} values; a model's weights are finite "
                "numbers (train or export the model again)"
            )


def checked_model(path: str | Path, rules: Any = None) -> tuple[Any, ...]:
    """Read and check a safe model's JSON and weights file, before any network is built.

    Every check but the tensors' names and shapes: the file sizes, the weights' SHA-256, the
    spaces (and that they fit ``rules``), the policy's class, activation and size.

    Returns:
        ``(weights, meta_path, doc, obs_space, act_space, cls_name, kwargs)``: the two paths,
        the JSON, the gymnasium spaces, the SB3 policy class name and its constructor
        arguments (the activation as its name, ``kwargs["activation_fn"]``).

    Raises:
        FileNotFoundError: no weights file or JSON.
        SafeModelError: what is wrong, in one line naming the file.
    """
    weights, meta_path = safe_paths(path)
    doc = read_safe_metadata(path)
    size = weights.stat().st_size
    if size > MAX_WEIGHTS_BYTES:
        raise SafeModelError(
            f"{weights} is {size} bytes; a model's weights file is at most "
            f"{MAX_WEIGHTS_BYTES} bytes"
        )
    digest = doc.get("weights_sha256")
    if not isinstance(digest, str) or digest != file_sha256(weights):
        raise SafeModelError(
            f"{weights} is not the weights file {meta_path.name} was written with (SHA-256 "
            "differs): export the model again"
        )
    obs_space, act_space = _spaces_from_json(doc, meta_path)
    obs_size = int(math.prod(obs_space.shape))
    if rules is not None and (
        tuple(obs_space.shape) != (rules.observation_size,) or act_space.n != rules.num_actions
    ):
        raise SafeModelError(
            f"{weights} was trained on observations of size {obs_size} with {act_space.n} "
            f"actions, but {rules.edition} {rules.scenario.name} has {rules.observation_size} and "
            f"{rules.num_actions}: use a model trained for this edition and scenario"
        )
    cls_name, kwargs = _policy_kwargs(doc, obs_size, int(act_space.n), meta_path)
    return weights, meta_path, doc, obs_space, act_space, cls_name, kwargs


def read_tensors(weights: Path, device: str | None = "cpu") -> dict[str, Any]:
    """The tensors of a weights file: torch tensors on ``device``, or NumPy arrays (``None``).

    Raises:
        SafeModelError: not a safetensors file, or a weight that is not a finite number.
    """
    from safetensors import SafetensorError

    try:
        if device is None:
            from safetensors.numpy import load_file

            tensors = load_file(str(weights))
        else:
            from safetensors.torch import load_file

            tensors = load_file(str(weights), device=device)
    except (SafetensorError, OSError, ValueError, TypeError) as exc:
        raise SafeModelError(f"{weights} is not a safetensors file: {_one_line(exc)}") from None
    check_finite(tensors, weights)
    return tensors


def mismatch(weights: Path, meta_path: Path, tensors: dict[str, Any],
             expected: dict[str, tuple[tuple[int, ...], str]]) -> None:  # fmt: skip
    """Refuse weights whose tensors are not exactly the ``expected`` names, shapes and dtypes.

    Raises:
        SafeModelError: the first difference, naming both files.
    """
    missing = sorted(set(expected) - set(tensors))
    extra = sorted(set(tensors) - set(expected))
    if missing or extra:
        raise SafeModelError(
            f"{weights} does not match {meta_path.name}: "
            + (f"missing tensors {', '.join(missing[:3])}" if missing else "")
            + ("; " if missing and extra else "")
            + (f"unexpected tensors {', '.join(extra[:3])}" if extra else "")
        )
    for key, (shape, dtype) in expected.items():
        got = tensors[key]
        got_dtype = str(got.dtype).removeprefix("torch.")
        if tuple(got.shape) != tuple(shape) or got_dtype != dtype:
            raise SafeModelError(
                f"{weights} does not match {meta_path.name}: tensor {key} is "
                f"{tuple(got.shape)} {got_dtype}, the described network needs "
                f"{tuple(shape)} {dtype}"
            )


def load_safe(path: str | Path, rules: Any = None) -> Any:
    """Rebuild a policy network from a safe model, for inference on CPU; nothing is unpickled.

    Args:
        path: the ``.safetensors`` file, its ``.json``, the stem, or a folder holding
            ``model.safetensors``.
        rules: if given, the network's spaces must fit them (observation size, action count).

    Returns:
        A fresh SB3 policy network (``MaskableActorCriticPolicy``, ``ActorCriticPolicy`` or
        ``DQNPolicy``) in evaluation mode with the saved weights and no optimiser
        (``optimizer`` is ``None``; a run that trains it copies the weights into its own);
        wrap it in :class:`psygym_agents.sb3.SB3Policy` to play. Its ``psygym_metadata``
        attribute is the JSON. To play without torch, :func:`psygym_agents.policy_net.load_net`
        reads the same files into a NumPy network.

    Raises:
        FileNotFoundError: no weights file or JSON.
        SafeModelError: the JSON is not a safe model's, does not describe the weights, or
            the model does not fit ``rules``.
    """
    import torch

    weights, meta_path, doc, obs_space, act_space, cls_name, kwargs = checked_model(path, rules)
    kwargs = {**kwargs, "activation_fn": _activation_classes()[kwargs["activation_fn"]]}
    tensors = read_tensors(weights)
    net = _policy_class(cls_name)(obs_space, act_space, _constant_schedule,
                                  optimizer_class=_no_optimizer, **kwargs)  # fmt: skip
    expected = {k: (tuple(v.shape), str(v.dtype).removeprefix("torch."))
                for k, v in net.state_dict().items()}  # fmt: skip
    mismatch(weights, meta_path, tensors, expected)
    with torch.no_grad():
        net.load_state_dict(tensors, strict=True)
    net.set_training_mode(False)
    net.psygym_metadata = doc
    return net


__all__ = [
    "ACTIVATIONS", "DEFAULT_STEM", "FORMAT", "MAX_ACTIONS", "MAX_JSON_BYTES", "MAX_LAYERS",
    "MAX_OBSERVATION_DIMS", "MAX_OBSERVATION_SIZE", "MAX_PARAMETERS", "MAX_WEIGHTS_BYTES",
    "MAX_WIDTH", "POLICY_CLASSES", "SEATS", "SafeModelError", "WEIGHTS_SUFFIX",
    "canonical_safetensors", "check_finite", "check_seats", "checked_model", "describe_policy",
    "file_sha256", "is_safe_model", "load_safe", "mismatch", "read_safe_metadata", "read_tensors",
    "safe_paths", "save_safe", "write_safetensors",
]  # fmt: skip
