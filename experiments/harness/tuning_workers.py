"""Which process runs an Optuna trial, which trials a killed tuner left RUNNING, and SQLite's locks.

A trial names its worker (``host:pid``, ``user_attrs["worker"]``), and each tuner process
registers itself on the study before its first trial, so a later tuner can tell a trial whose
process is gone from one still being run.
"""

from __future__ import annotations

import os
import socket
from typing import Any


def worker_id() -> str:
    """This process as a tuning worker: ``host:pid``."""
    return f"{socket.gethostname()}:{os.getpid()}"


def locked_sqlite(storage: Any) -> Any:
    """``storage``, or for a ``sqlite:`` URL a storage that locks when a transaction begins.

    Every transaction takes SQLite's write lock first (``BEGIN IMMEDIATE``). Optuna starts a
    queued trial (the defaults ``tune`` enqueues) by reading that it waits and then marking it
    running, relying on ``SELECT ... FOR UPDATE``, which SQLite ignores. Two jobs or worker
    processes could then both take the same trial, and the one that finishes second fails
    ("Trial#0 has already finished"). Taking the lock first makes the read and the write one
    step.
    """
    if not (isinstance(storage, str) and storage.startswith("sqlite:")):
        return storage
    import optuna
    from sqlalchemy import event

    rdb = optuna.storages.RDBStorage(storage)

    @event.listens_for(rdb.engine, "connect")
    def _no_implicit_begin(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # SQLAlchemy's recipe for pysqlite

    @event.listens_for(rdb.engine, "begin")
    def _begin_immediate(connection: Any) -> None:
        connection.exec_driver_sql("BEGIN IMMEDIATE")

    rdb.engine.dispose()  # connections made before the listeners would begin lazily
    return rdb


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - someone else's process
        return True
    return True


_TUNER = "psygym-tuner:"  # a study system attribute per tuner process that opened the study


def register_tuner(study: Any) -> None:
    """Record on ``study`` that this process tunes it (before it starts any trial)."""
    study._storage.set_study_system_attr(study._study_id, _TUNER + worker_id(), True)


def _gone(worker: str, host: str) -> bool:
    """True if ``worker`` (``host:pid``) is a process of ``host`` that no longer exists."""
    whose, _, pid = worker.rpartition(":")
    return whose == host and pid.isdigit() and not _alive(int(pid))


def fail_orphaned_trials(study: Any) -> list[int]:
    """Mark FAIL the RUNNING trials whose worker process is gone; return their numbers.

    A tuner killed mid-trial (SIGKILL, power loss) leaves its trial RUNNING forever. Each trial
    records its worker as ``host:pid`` (``user_attrs["worker"]``); a RUNNING trial of this host
    whose process no longer exists is marked FAIL (``orphaned: worker gone``), so it is neither
    counted as done nor waited for. Trials of other hosts, or of live processes, are left alone.

    Optuna creates a trial before its objective can name the worker, so a tuner killed in that
    moment leaves a RUNNING trial with no worker. Every tuner registers itself on the study
    before it starts a trial (:func:`register_tuner`), so such a trial is orphaned when every
    registered tuner is a gone process of this host.
    """
    import optuna

    host, failed = socket.gethostname(), []
    running = study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.RUNNING,))
    # Read after the trials: whoever created one of them had registered before.
    tuners = [k[len(_TUNER):] for k in study._storage.get_study_system_attrs(study._study_id)
              if k.startswith(_TUNER)]  # fmt: skip
    unnamed_orphaned = bool(tuners) and all(_gone(w, host) for w in tuners)
    for t in running:
        who = t.user_attrs.get("worker")
        if not (_gone(str(who), host) if who is not None else unnamed_orphaned):
            continue
        why = f"worker {who} gone" if who is not None else "its tuners are all gone"
        try:
            study._storage.set_trial_user_attr(t._trial_id, "orphaned", why)
            study._storage.set_trial_state_values(t._trial_id, optuna.trial.TrialState.FAIL)
        except (RuntimeError, optuna.exceptions.UpdateFinishedTrialError):  # finished meanwhile
            continue
        failed.append(t.number)
    return failed
