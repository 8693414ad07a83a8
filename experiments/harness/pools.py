"""Where the games of a long job are played: local worker processes, or a Ray cluster.

Every job that plays many games (``evaluate``, its ``--until-clear`` matches, ``compare``,
``value-check``, the games of ``train --algo value``) hands its tasks to a *pool* with the small
interface of :class:`concurrent.futures.Executor` that those jobs already use (:class:`Pool`):
``submit(fn, *args)`` returns a future, ``map(fn, *iterables)`` yields results in order,
``shutdown(cancel_futures=...)`` ends it, and a ``with`` block shuts it down. ``workers`` says
how many tasks run at once.

Two backends:

- **local** (the default, as before): :func:`.tournament.worker_pool`, a process pool on this
  machine whose processes die with their parent (``--workers``), made by each job as it needs.
- **Ray** (``--ray auto|ADDRESS`` or :data:`RAY_ENV`): :class:`RayPool` from :func:`ray_pool`,
  every task a Ray task on a running cluster, one CPU each; ``workers`` is the cluster's CPU
  count. A task lost with
  its worker or node is run again (:data:`RETRIES` times), which changes no number: every task
  is fixed by its arguments and its seeds (the common random numbers of :mod:`.games`), so the
  same seed gives the same results on either backend, with any number of workers.

A Ray task runs in the driver's working directory where that folder exists on its node, so agent
files and board values given by relative paths are found as they are locally (on a real cluster
every node installs the project at the same path, or shares the folder). Ray is an optional
dependency (``pip install -e ".[ray]"``); without it ``--ray`` says so in one line.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, InvalidStateError
from typing import Any, Protocol

RAY_ENV = "PSYGYM_RAY_ADDRESS"
"""Environment variable read by ``--ray`` when the option is not given."""
RETRIES = 5
"""Times a Ray task lost with its worker process or node is run again."""
INSTALL_HINT = 'pip install -e ".[ray]"'
"""What to install for ``--ray``."""
PROBE_SECONDS = 5.0
"""How long a cluster's address may take to answer before ``--ray`` gives up (Ray itself would
keep trying for minutes)."""


class Pool(Protocol):
    """What a job needs of a pool (both backends have it)."""

    workers: int
    """Tasks that run at once (sizes the work chunks; the results do not depend on it)."""

    def submit(self, fn: Callable[..., Any], /, *args: Any) -> Future:
        """Run ``fn(*args)`` in a worker; its future."""

    def map(self, fn: Callable[..., Any], *iterables: Iterable[Any]) -> Iterator[Any]:
        """``fn`` over the zipped ``iterables``, results in order."""

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """End the pool (``cancel_futures``: tasks not started yet are dropped)."""


def _call(cwd: str, fn: Callable[..., Any], args: tuple) -> tuple[bool, Any]:
    """A Ray task's body: ``fn(*args)`` from the driver's folder; ``(ok, result or error)``.

    The error is returned, not raised, so the driver raises the task's own exception (with its
    one-line message) rather than Ray's wrapper holding the worker's traceback.
    """
    if cwd and os.path.isdir(cwd) and os.getcwd() != cwd:
        os.chdir(cwd)
    try:
        return True, fn(*args)
    except Exception as exc:  # handed to the driver, which raises it
        return False, exc


class _RayFuture(Future):
    """The future of one Ray task; cancelling it cancels the task if it has not started."""

    def __init__(self, ref: Any, forget: Callable[[_RayFuture], None]):
        super().__init__()
        self._ref, self._forget = ref, forget
        ref.future().add_done_callback(self._arrived)

    def _arrived(self, done: Future) -> None:
        self._forget(self)
        try:
            ok, value = done.result()
        except BaseException as exc:  # the task failed in Ray itself (retries used up, cancelled)
            ok, value = False, exc
        try:
            if ok:
                self.set_result(value)
            else:
                self.set_exception(value)
        except InvalidStateError:  # cancelled meanwhile
            pass

    def cancel(self) -> bool:
        """Cancel the task if it has not started (a running one finishes, as locally)."""
        if self.done():
            return False
        import ray

        ray.cancel(self._ref)
        return super().cancel()


class RayPool:
    """A pool of Ray tasks on a running cluster (the Ray backend of :class:`Pool`).

    Args:
        address: ``auto`` (the cluster this machine belongs to) or the head's ``host:port``.

    Raises:
        ValueError: Ray is not installed, or no cluster answers at ``address`` (one line each).
    """

    def __init__(self, address: str):
        try:
            import ray
        except ImportError:
            raise ValueError(f"--ray needs Ray, which is not installed: {INSTALL_HINT}") from None
        self.address = address
        self._own = not ray.is_initialized()
        if self._own:
            _probe(address)
            try:
                ray.init(address=address, logging_level=logging.WARNING, log_to_driver=False)
            except (ConnectionError, RuntimeError, ValueError) as exc:
                why = " ".join(str(exc).split())[:200]
                raise ValueError(
                    f"--ray {address}: no Ray cluster answers there ({why}); start one with "
                    "`ray start --head`, or give the head's host:port"
                ) from None
        self.workers = max(1, int(ray.cluster_resources().get("CPU", 1)))
        self._remote = ray.remote(num_cpus=1, max_retries=RETRIES)(_call)
        self._cwd = os.getcwd()
        self._pending: set[_RayFuture] = set()
        self._lock = threading.Lock()

    def _forget(self, future: _RayFuture) -> None:
        with self._lock:
            self._pending.discard(future)

    def submit(self, fn: Callable[..., Any], /, *args: Any) -> Future:
        """Run ``fn(*args)`` as a Ray task (``fn`` importable on every node); its future."""
        future = _RayFuture(self._remote.remote(self._cwd, fn, args), self._forget)
        with self._lock:
            if not future.done():
                self._pending.add(future)
        return future

    def map(self, fn: Callable[..., Any], *iterables: Iterable[Any]) -> Iterator[Any]:
        """``fn`` over the zipped ``iterables`` (all submitted at once), results in order."""
        futures = [self.submit(fn, *args) for args in zip(*iterables)]

        def results() -> Iterator[Any]:
            try:
                for f in futures:
                    yield f.result()
            finally:
                for f in futures:
                    f.cancel()

        return results()

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Cancel the tasks not started (``cancel_futures``) and leave the cluster if joined here.

        ``wait`` is accepted for the executor interface; a task still running on the cluster
        is cancelled with the driver's job when it disconnects.
        """
        import ray

        if cancel_futures:
            with self._lock:
                pending = list(self._pending)
            for f in pending:
                f.cancel()
        if self._own and ray.is_initialized():
            ray.shutdown()

    def __enter__(self) -> RayPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown(cancel_futures=True)


def _probe(address: str) -> None:
    """Refuse at once an address where nothing listens (``auto`` is Ray's to find).

    Raises:
        ValueError: no connection within :data:`PROBE_SECONDS` (one line, with the reason).
    """
    if address == "auto":
        return
    import socket

    host, _, port = address.removeprefix("ray://").rpartition(":")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=PROBE_SECONDS):
            return
    except OSError as exc:
        why = exc.strerror or str(exc) or type(exc).__name__
    raise ValueError(f"--ray {address}: no Ray cluster answers there ({why.lower()}); start one "
                     "with `ray start --head`, or give the head's host:port")  # fmt: skip


def ray_address(option: str | None) -> str:
    """The Ray address of a ``--ray`` option ('' for the local pool), checked.

    Raises:
        ValueError: an address that is neither ``auto`` nor ``host:port`` (one line).
    """
    address = (option or "").strip()
    if not address or address == "auto":
        return address
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(
            f"--ray {address!r} is not a cluster address: give 'auto' or the head's host:port "
            "(e.g. 10.0.0.5:6379)"
        )
    return address


def ray_pool(option: str | None) -> RayPool | None:
    """The Ray pool of a ``--ray`` option, or ``None`` when it is not given (the local pool).

    Raises:
        ValueError: a bad address, no cluster there, or Ray missing (one line each).
    """
    address = ray_address(option)
    return RayPool(address) if address else None


def check_ray_workers(ray: str, workers: int | None) -> None:
    """Refuse ``--workers`` beside ``--ray``: there the cluster's CPUs decide.

    Raises:
        ValueError: both given (one line).
    """
    if ray and workers is not None and workers > 1:
        raise ValueError(
            f"--workers {workers} sets local processes; with --ray (or {RAY_ENV}) the cluster's "
            "CPUs play the games: leave out one of them"
        )


__all__ = [
    "INSTALL_HINT", "PROBE_SECONDS", "RAY_ENV", "RETRIES", "Pool", "RayPool", "check_ray_workers",
    "ray_address", "ray_pool",
]  # fmt: skip
