"""Fit a :class:`~psygym_agents.value.BoardValue` with torch: a small tanh MLP, Adam, weighted MSE.

The net is ``(x - mean) / scale -> [Linear, tanh] * k -> Linear``; the input scaling is taken
from the training rows (a constant column gets scale 1), and the targets are standardised for
training and the scaling folded back into the last layer, so the result is a plain
:class:`BoardValue` whose numpy :meth:`~BoardValue.predict` equals the torch net. Every array
is rounded to float32 before it becomes the model, so a model saved and loaded again
(safetensors keeps float32) predicts exactly what the fitted one does.

Training stops early: after each epoch the weighted MSE on the validation rows is measured,
and the weights of the best epoch are kept once ``patience`` epochs brought no improvement.
A fit can start from a previous model (``init``): its input scaling and weights are kept and
training continues from them (fitted value iteration refits after each re-labelling).

Directions the rules make monotone (``monotone``) add a penalty to each minibatch's loss: the
squared shortfall of ``V(x + d) - V(x)`` below 0 on the minibatch's rows, a
"monotonicity hint" in the sense of Sill and Abu-Mostafa (1997). It is a penalty, not a
guarantee: boards far from the training rows may still break it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from psygym_agents.value.model import BoardValue


@dataclass
class FitResult:
    """What :func:`fit_value` returns.

    Attributes:
        value: the fitted model (numpy inference).
        history: one ``(epoch, train_mse, val_mse)`` per epoch, in squared points.
        best_epoch: the epoch whose weights were kept (1-based; 0: the initial weights).
        net: the torch module with the kept weights (its output equals ``value.predict``).
    """

    value: BoardValue
    history: list[tuple[int, float, float]] = field(default_factory=list)
    best_epoch: int = 0
    net: Any = None


def _as32(a: np.ndarray) -> np.ndarray:
    return np.asarray(a, np.float64).astype(np.float32).astype(np.float64)


def _weighted_mse(pred: Any, y: Any, w: Any) -> Any:
    return ((pred - y) ** 2 * w).sum() / w.sum()


def fit_value(
    x_train: np.ndarray,
    y_train: np.ndarray,
    x_val: np.ndarray,
    y_val: np.ndarray,
    *,
    w_train: np.ndarray | None = None,
    w_val: np.ndarray | None = None,
    hidden: Sequence[int] = (64, 64),
    lr: float = 1e-3,
    batch: int = 256,
    max_epochs: int = 200,
    patience: int = 10,
    seed: int = 0,
    init: BoardValue | None = None,
    meta: dict[str, Any] | None = None,
    threads: int = 1,
    monotone: np.ndarray | Sequence[np.ndarray] = (),
    monotone_weight: float = 1000.0,
    on_epoch: Callable[[int, float, float], bool | None] | None = None,
) -> FitResult:
    """Fit ``y ~ V(x)`` by weighted least squares with early stopping on the validation rows.

    Args:
        x_train: training observations (rows).
        y_train: their targets (points).
        x_val: validation rows for early stopping (must not be empty).
        y_val: their targets.
        w_train: training row weights (default 1).
        w_val: validation row weights (default 1).
        hidden: widths of the tanh hidden layers (ignored with ``init``).
        lr: Adam's learning rate.
        batch: the minibatch size.
        max_epochs: at most this many epochs.
        patience: stop after this many epochs without a better validation loss.
        seed: seeds the initial weights and the minibatch order (the fit is reproducible).
        init: continue from this model (its input scaling and weights).
        meta: JSON metadata of the returned model.
        threads: torch CPU threads during the fit.
        monotone: directions (rows as long as ``x``'s) along which ``V`` should not fall:
            ``V(x + d) >= V(x)``.
        monotone_weight: the weight of the monotonicity penalty (in squared standardised
            targets) against the mean squared error.
        on_epoch: called as ``on_epoch(epoch, train_mse, val_mse)`` after each epoch; a true
            return value stops the fit (the best weights so far are kept).

    Returns:
        The fitted model, the per-epoch losses and the kept epoch.

    Raises:
        ValueError: empty training or validation rows, or rows of different lengths.
    """
    import torch

    x_train = np.asarray(x_train, np.float64)
    x_val = np.asarray(x_val, np.float64)
    if len(x_train) == 0 or len(x_val) == 0:
        raise ValueError("fitting a board value needs training and validation boards")
    if x_train.shape[1] != x_val.shape[1]:
        raise ValueError("training and validation boards have different observation sizes")
    n_in = x_train.shape[1]
    w_train = np.ones(len(x_train)) if w_train is None else np.asarray(w_train, np.float64)
    w_val = np.ones(len(x_val)) if w_val is None else np.asarray(w_val, np.float64)

    if init is not None:
        if init.input_size != n_in:
            raise ValueError(f"the initial model reads {init.input_size} entries, not {n_in}")
        mean, scale = _as32(init.mean), _as32(init.scale)
        y_mean, y_std = 0.0, 1.0
        start = [(w, b) for w, b in init.weights]
    else:
        mean = _as32(x_train.mean(axis=0))
        std = x_train.std(axis=0)
        scale = _as32(np.where(std > 1e-6, std, 1.0))
        y_mean = float(np.average(y_train, weights=w_train))
        y_std = float(np.sqrt(np.average((y_train - y_mean) ** 2, weights=w_train))) or 1.0
        start = None

    old_threads = torch.get_num_threads()
    torch.set_num_threads(max(1, threads))
    try:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            sizes = [n_in, *hidden] if start is None else [n_in] + [w.shape[1] for w, _ in start]
            layers: list[Any] = []
            if start is None:
                for a, b in zip(sizes[:-1], sizes[1:]):
                    layers += [torch.nn.Linear(a, b), torch.nn.Tanh()]
                layers.append(torch.nn.Linear(sizes[-1], 1))
            else:
                for i, (w, b) in enumerate(start):
                    lin = torch.nn.Linear(w.shape[0], w.shape[1])
                    with torch.no_grad():
                        lin.weight.copy_(torch.as_tensor(w.T, dtype=torch.float32))
                        lin.bias.copy_(torch.as_tensor(b, dtype=torch.float32))
                    layers.append(lin)
                    if i < len(start) - 1:
                        layers.append(torch.nn.Tanh())
            net = torch.nn.Sequential(*layers)
            order = torch.Generator().manual_seed(seed)

            def tensors(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> tuple[Any, Any, Any]:
                return (
                    torch.as_tensor((x - mean) / scale, dtype=torch.float32),
                    torch.as_tensor((np.asarray(y) - y_mean) / y_std, dtype=torch.float32),
                    torch.as_tensor(w, dtype=torch.float32),
                )

            xt, yt, wt = tensors(x_train, y_train, w_train)
            shifts = [torch.as_tensor(np.asarray(d, np.float64) / scale, dtype=torch.float32)
                      for d in monotone]  # fmt: skip
            xv, yv, wv = tensors(x_val, y_val, w_val)
            opt = torch.optim.Adam(net.parameters(), lr=lr)
            unit = y_std**2  # losses are reported in squared points

            def val_loss() -> float:
                with torch.no_grad():
                    return float(_weighted_mse(net(xv)[:, 0], yv, wv)) * unit

            best, best_epoch = val_loss(), 0
            best_state = {k: v.clone() for k, v in net.state_dict().items()}
            history: list[tuple[int, float, float]] = []
            for epoch in range(1, max_epochs + 1):
                perm = torch.randperm(len(xt), generator=order)
                total, weight = 0.0, 0.0
                for i in range(0, len(xt), batch):
                    idx = perm[i : i + batch]
                    rows = xt[idx]
                    pred = net(rows)[:, 0]
                    loss = _weighted_mse(pred, yt[idx], wt[idx])
                    fit_loss = float(loss.detach())
                    for step in shifts:
                        shortfall = torch.relu(pred - net(rows + step)[:, 0])
                        loss = loss + monotone_weight * _weighted_mse(shortfall, 0.0, wt[idx])
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
                    bw = float(wt[idx].sum())
                    total += fit_loss * bw
                    weight += bw
                v = val_loss()
                history.append((epoch, total / weight * unit, v))
                stop = on_epoch(epoch, total / weight * unit, v) if on_epoch else False
                if v < best - 1e-12:
                    best, best_epoch = v, epoch
                    best_state = {k: t.clone() for k, t in net.state_dict().items()}
                if stop or epoch - best_epoch >= patience:
                    break
            net.load_state_dict(best_state)
    finally:
        torch.set_num_threads(old_threads)

    linears = [m for m in net if isinstance(m, torch.nn.Linear)]
    weights = []
    for i, lin in enumerate(linears):
        w = lin.weight.detach().numpy().T.astype(np.float64)
        b = lin.bias.detach().numpy().astype(np.float64)
        if i == len(linears) - 1:  # fold the target scaling into the output layer
            w, b = w * y_std, b * y_std + y_mean
        weights.append((_as32(w), _as32(b)))
    if y_mean != 0.0 or y_std != 1.0:  # the torch net then predicts exactly what the model does
        with torch.no_grad():
            linears[-1].weight.copy_(torch.as_tensor(weights[-1][0].T, dtype=torch.float32))
            linears[-1].bias.copy_(torch.as_tensor(weights[-1][1], dtype=torch.float32))
    value = BoardValue(weights, mean, scale, meta)
    return FitResult(value=value, history=history, best_epoch=best_epoch,
                     net=_Scaled(net, mean, scale))  # fmt: skip


class _Scaled:
    """The torch net with the model's input scaling: ``predict(x)`` like :class:`BoardValue`."""

    def __init__(self, net: Any, mean: np.ndarray, scale: np.ndarray):
        self.module, self.mean, self.scale = net, mean, scale

    def predict(self, x: np.ndarray) -> np.ndarray:
        """Values of a batch of observations, computed by torch (float32)."""
        import torch

        h = (np.atleast_2d(np.asarray(x, np.float64)) - self.mean) / self.scale
        with torch.no_grad():
            return self.module(torch.as_tensor(h, dtype=torch.float32))[:, 0].numpy()


__all__ = ["FitResult", "fit_value"]
