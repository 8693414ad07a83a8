"""The games on a real Ray cluster of two nodes on loopback: the same numbers as locally, and
a node killed mid-run changes nothing.

The cluster is started here (``ray start --head``, then a node joined to it), one CPU a node, on
loopback addresses only, and every process of it (each node's process group, and the worker
processes its raylet started) is killed at the end, whatever the outcome. Ray turns
``127.0.0.1`` into the machine's outward address, so the nodes take other loopback addresses
(``127.0.0.2``, ``127.0.0.3``...), which it keeps as given.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("ray", reason='Ray is an extra: pip install -e ".[ray]"')

CLI = [sys.executable, "-m", "psygym_experiments.cli"]
START_SECONDS = 60
"""Longest wait for a node to join (two cores shared with other work)."""
STORE = 100_000_000
"""Bytes of shared memory for a node's object store (Ray's least is 75 MB; results are small)."""
RUN_SECONDS = 240
"""Longest any command of these tests may take before it is killed."""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ray() -> str:
    return str(Path(sys.executable).with_name("ray"))


def _processes() -> dict[int, tuple[int, str, str]]:
    """Every live process: pid -> (parent pid, state, command line), from /proc."""
    out = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
                cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if fields[0] != "Z":
                out[int(d.name)] = (int(fields[1]), fields[0], cmd)
    return out


def _descendants(pid: int) -> dict[int, str]:
    """The live processes started by ``pid`` (at any depth): pid -> command line.

    A raylet starts its worker processes in sessions of their own, so a node's process group
    does not hold them: they are found by parentage.
    """
    procs = _processes()
    out: dict[int, str] = {}
    todo = [pid]
    while todo:
        parent = todo.pop()
        for child, (ppid, _, cmd) in procs.items():
            if ppid == parent and child not in out:
                out[child] = cmd
                todo.append(child)
    return out


class LoopbackCluster:
    """A Ray cluster of nodes on this machine's loopback addresses, each its own process group.

    Args:
        temp: the cluster's temporary folder (short: Ray's socket paths must fit in 107 bytes).
    """

    def __init__(self, temp: Path):
        self.temp, self.port = temp, _free_port()
        self.address = f"127.0.0.2:{self.port}"
        self.nodes: list[subprocess.Popen] = []
        self.seen: set[int] = set()  # every process of a node killed so far
        self.env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}

    def _start(self, *args: str, ip: str) -> subprocess.Popen:
        with (self.temp / f"node-{len(self.nodes)}.log").open("w") as log:
            node = subprocess.Popen(
                [_ray(), "start", "--block", "--num-cpus=1", f"--object-store-memory={STORE}",
                 f"--node-ip-address={ip}", f"--temp-dir={self.temp / 'ray'}",
                 "--disable-usage-stats", *args],
                stdout=log, stderr=subprocess.STDOUT, env=self.env, start_new_session=True,
            )  # fmt: skip
        self.nodes.append(node)
        return node

    def start_head(self) -> None:
        """The head node on 127.0.0.2 (no dashboard: the plain ``ray`` package has none)."""
        self._start("--head", f"--port={self.port}", "--include-dashboard=false",
                    f"--dashboard-port={_free_port()}", f"--ray-client-server-port={_free_port()}",
                    ip="127.0.0.2")  # fmt: skip
        self.wait_for(1)

    def add_node(self) -> subprocess.Popen:
        """One more node of one CPU, joined to the head; returns its ``ray start`` process."""
        node = self._start(f"--address={self.address}", ip=f"127.0.0.{len(self.nodes) + 2}")
        self.wait_for(len(self.alive()))
        return node

    def alive(self) -> list[subprocess.Popen]:
        """The nodes whose ``ray start`` still runs."""
        return [n for n in self.nodes if n.poll() is None]

    def wait_for(self, nodes: int) -> None:
        """Wait until the cluster counts ``nodes`` live nodes (a driver process asks it)."""
        ask = (f"import ray; ray.init(address='{self.address}', logging_level='ERROR'); "
               "print(sum(n['Alive'] for n in ray.nodes()))")  # fmt: skip
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            if any(n.poll() is not None for n in self.nodes[-1:]):
                break
            out = subprocess.run([sys.executable, "-c", ask], capture_output=True, text=True,
                                 timeout=START_SECONDS, env=self.env)  # fmt: skip
            if out.returncode == 0 and out.stdout.strip().splitlines()[-1:] == [str(nodes)]:
                return
            time.sleep(1)
        logs = "\n".join(p.read_text()[-2000:] for p in sorted(self.temp.glob("node-*.log")))
        raise RuntimeError(f"the Ray cluster did not reach {nodes} nodes:\n{logs}")

    def kill(self, node: subprocess.Popen) -> None:
        """Kill a node at once: its ``ray start``, raylet, agents and worker processes."""
        pids = set(_descendants(node.pid))
        self.seen |= pids
        try:
            os.killpg(node.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        node.wait(timeout=30)

    def stop(self) -> None:
        """Kill every node, then any process left that names this cluster's folder."""
        for node in self.nodes:
            self.kill(node)
        for pid in self.leftovers():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def leftovers(self) -> list[int]:
        """Live processes of this cluster: of a killed node, or naming the cluster's folder."""
        return [pid for pid, (_, _, cmd) in _processes().items()
                if pid in self.seen or str(self.temp) in cmd]  # fmt: skip

    def busy_workers(self, node: subprocess.Popen) -> list[int]:
        """Pids of ``node``'s worker processes running a task now (titled ``ray::<task>``)."""
        return [pid for pid, cmd in _descendants(node.pid).items()
                if cmd.startswith("ray::_call")]  # fmt: skip


@pytest.fixture(scope="module")
def cluster() -> Iterator[LoopbackCluster]:
    """A head and one more node, one CPU each, on loopback; killed whole at the end."""
    if not sys.platform.startswith("linux"):
        pytest.skip("reads /proc and uses process groups")
    with tempfile.TemporaryDirectory(prefix="rt", dir="/tmp") as temp:
        c = LoopbackCluster(Path(temp))
        try:
            c.start_head()
            c.add_node()
            yield c
        finally:
            c.stop()
            deadline = time.monotonic() + 10  # a killed process takes a moment to be gone
            while (left := c.leftovers()) and time.monotonic() < deadline:
                time.sleep(0.2)
        assert not left, f"Ray processes left behind: {left}"


def _run(args: list[str], **kw) -> subprocess.CompletedProcess:
    out = subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=RUN_SECONDS, **kw)
    assert out.returncode == 0, out.stderr[-3000:]
    return out


FIELD = ["evaluate", "--edition", "7th", "--scenario", "single-phase", "--agents",
         "double-wc,all-in,minimum", "--seed", "4", "--format", "json"]  # fmt: skip
EVALUATE = [*FIELD, "--episodes", "40"]
"""A round-robin with exact values (its solves are tasks too)."""
LONG = [*FIELD[:4], "duel", *FIELD[5:], "--episodes", "1500", "--no-exact"]
"""A round-robin of games only, long enough to be cut in the middle."""
VALUE_CHECK = ["value-check", "--edition", "rt", "--scenario", "duel", "--boards", "1",
               "--continuations", "60", "--agent", "bid-all", "--seed", "2"]  # fmt: skip
"""A value check of several chunks per board."""


def _results(runs: Path) -> bytes:
    (run,) = runs.glob("evaluate-*")
    return (run / "results.json").read_bytes()


def test_evaluate_and_value_check_on_ray_equal_the_local_pool(cluster, tmp_path):
    _run([*EVALUATE, "--runs-dir", str(tmp_path / "local"), "--workers", "2"])
    _run([*EVALUATE, "--runs-dir", str(tmp_path / "ray"), "--ray", cluster.address])
    assert _results(tmp_path / "ray") == _results(tmp_path / "local")
    (run,) = (tmp_path / "ray").glob("evaluate-*")
    config = json.loads((run / "config.json").read_text())
    assert config["ray"] == cluster.address and config["workers"] == 2  # the cluster's CPUs

    _run([*VALUE_CHECK, "--out", str(tmp_path / "vc-local")])
    _run([*VALUE_CHECK, "--out", str(tmp_path / "vc-ray")],
         env={**os.environ, "PSYGYM_RAY_ADDRESS": cluster.address})  # fmt: skip
    local = json.loads((tmp_path / "vc-local" / "summary.json").read_text())
    ray = json.loads((tmp_path / "vc-ray" / "summary.json").read_text())
    assert ray == local and ray["finished"] == ray["total"] == 3


VALUE_CONFIG = (
    "sweeps: 1\nsweep_games: 60\nrelabel: 5\neval_boards: 2\nmax_epochs: 5\n"
    "refit_epochs: 2\npatience: 2\n"
)
"""A board-value run of a few seconds whose stages are each played in several pool tasks."""


def test_value_training_on_ray_has_the_local_data_and_model(cluster, tmp_path):
    import numpy as np

    (tmp_path / "tiny.yml").write_text(VALUE_CONFIG)
    args = ["train", "--algo", "value", "--edition", "8th", "--scenario", "duel", "--steps",
            "120", "--seed", "3", "--config", str(tmp_path / "tiny.yml"),
            "--no-progress"]  # fmt: skip
    _run([*args, "--runs-dir", str(tmp_path / "local")])
    _run([*args, "--runs-dir", str(tmp_path / "ray"), "--ray", cluster.address])
    local, ray = (tmp_path / k / "8th" / "duel" / "value_1" for k in ("local", "ray"))
    for name in ("games-0.npz", "games-1.npz"):  # three pool tasks, then two
        with np.load(local / "data" / name) as a, np.load(ray / "data" / name) as b:
            assert sorted(a) == sorted(b)
            for key in a:
                assert np.array_equal(a[key], b[key]), (name, key)
    assert (ray / "value.safetensors").read_bytes() == (local / "value.safetensors").read_bytes()


def test_general_value_on_ray_measures_what_the_local_run_does(cluster, tmp_path):
    # Its measurement plays a round robin of the heuristics (the list's best) in the pool too.
    (tmp_path / "tiny.yml").write_text("iterations: 0\neval_lists: 2\neval_games: 1\n"
                                       "max_epochs: 2\npatience: 1\n")  # fmt: skip
    args = ["train", "--algo", "value", "--edition", "8th", "--scenario", "random,rounds=1",
            "--steps", "30", "--config", str(tmp_path / "tiny.yml"), "--no-progress"]  # fmt: skip
    _run([*args, "--runs-dir", str(tmp_path / "local")])
    _run([*args, "--runs-dir", str(tmp_path / "ray"), "--ray", cluster.address])
    local, ray = (tmp_path / k / "8th" / "random" / "value_1" for k in ("local", "ray"))
    metrics = json.loads((local / "metrics.json").read_text())
    assert len(metrics[0]["best_heuristics"]) == 2
    assert json.loads((ray / "metrics.json").read_text()) == metrics


TRAIN = ["train", "--edition", "7th", "--scenario", "single-phase", "--opponent", "double-wc",
         "--eval-every", "256", "--eval-episodes", "10", "--seed", "5",
         "--no-progress"]  # fmt: skip
"""A MaskablePPO run of a few seconds (512 steps: two rollouts, two updates, episodes reset)."""


def _run_dir(runs: Path) -> Path:
    (run,) = (runs / "7th" / "single-phase").glob("maskable-ppo_*")
    return run


def test_training_envs_on_ray_train_the_local_model(cluster, tmp_path):
    args = [*TRAIN, "--steps", "512", "--n-envs", "2"]
    _run([*args, "--runs-dir", str(tmp_path / "local")])
    _run([*args, "--runs-dir", str(tmp_path / "ray"), "--ray", cluster.address])
    local, ray = _run_dir(tmp_path / "local"), _run_dir(tmp_path / "ray")
    assert (ray / "model.safetensors").read_bytes() == (local / "model.safetensors").read_bytes()
    scores = [[row.split(",")[:4] for row in (run / "metrics.csv").read_text().splitlines()]
              for run in (local, ray)]  # fmt: skip
    assert scores[0] == scores[1] and len(scores[0]) == 4  # a header, steps 0, 256 and 512


def test_a_node_lost_mid_training_stops_the_run_in_one_line_and_resume_continues(
    cluster, tmp_path
):  # fmt: skip
    doomed = cluster.add_node()  # three nodes of one CPU: one env's actor is on each
    runs = tmp_path / "ray"
    proc = subprocess.Popen([*CLI, *TRAIN, "--steps", "100000", "--n-envs", "3", "--runs-dir",
                             str(runs), "--ray", cluster.address], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        deadline = time.monotonic() + RUN_SECONDS
        while not list(runs.glob("7th/single-phase/*/checkpoints/last.json")):
            assert proc.poll() is None and time.monotonic() < deadline, "no checkpoint came"
            time.sleep(0.1)
        actors = [c for c in _descendants(doomed.pid).values() if c.startswith("ray::_EnvHost")]
        assert actors, "no env ran on that node"
        cluster.kill(doomed)
        _, err = proc.communicate(timeout=RUN_SECONDS)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
    run = _run_dir(runs)
    lines = [line for line in err.splitlines() if line.strip()]
    assert proc.returncode == 1 and "Traceback" not in err and len(lines) == 1, err[-3000:]
    step = json.loads((run / "checkpoints" / "last.json").read_text())["steps"]
    assert lines[0].startswith("error: env ") and "was lost with its worker or node" in lines[0]
    assert lines[0].endswith(f"the run stopped. Continue it from its last checkpoint (step {step}) "
                             f"with: psygym train --resume {run}")  # fmt: skip
    _run(["train", "--resume", str(run), "--steps", str(step + 256), "--no-progress"])
    meta = json.loads((run / "model.json").read_text())
    assert meta["steps"] >= step + 256


def test_a_stage_played_in_parts_is_the_stage_played_whole():
    from dataclasses import fields

    import numpy as np
    from psygym_experiments.harness.value_boards import (
        Boards,
        game_split,
        join_boards,
        play_boards,
    )

    from psygym.editions import load

    rules = load("8th", "duel")
    split = game_split(7, np.random.default_rng(1), 0.15, 0.1)
    kw = {"seed": 3, "stage": 1, "random_move": 0.2}
    whole = play_boards(rules, 7, split=split, **kw)[0]
    parts = [play_boards(rules, 3, split=split[:3], **kw)[0],
             play_boards(rules, 4, split=split[3:], first=3, **kw)[0]]  # fmt: skip
    joined = join_boards(parts)
    assert len(whole.offsets) == 8 and len(whole) > 0
    for f in fields(Boards):
        mine, theirs = getattr(joined, f.name), getattr(whole, f.name)
        assert mine.dtype == theirs.dtype and np.array_equal(mine, theirs), f.name


def test_a_node_killed_mid_run_changes_no_number(cluster, tmp_path):
    args = LONG
    _run([*args, "--runs-dir", str(tmp_path / "local"), "--workers", "2"])
    doomed = cluster.add_node()
    proc = subprocess.Popen([*CLI, *args, "--runs-dir", str(tmp_path / "ray"), "--ray",
                             cluster.address], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        deadline = time.monotonic() + RUN_SECONDS
        while not cluster.busy_workers(doomed):  # a task is running on that node
            assert proc.poll() is None and time.monotonic() < deadline, "no task ran there"
            time.sleep(0.05)
        cluster.kill(doomed)
        _, err = proc.communicate(timeout=RUN_SECONDS)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err[-3000:]
    assert _results(tmp_path / "ray") == _results(tmp_path / "local")
    (run,) = (tmp_path / "ray").glob("evaluate-*")
    assert len((run / "tasks.jsonl").read_text().splitlines()) >= 2


def test_a_killed_driver_resumes_on_the_local_pool(cluster, tmp_path):
    args = LONG
    _run([*args, "--runs-dir", str(tmp_path / "whole"), "--workers", "2"])
    proc = subprocess.Popen([*CLI, *args, "--runs-dir", str(tmp_path / "ray"), "--ray",
                             cluster.address], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        deadline = time.monotonic() + RUN_SECONDS
        tasks: list[str] = []
        while len(tasks) < 2:
            assert proc.poll() is None and time.monotonic() < deadline, "no task finished"
            time.sleep(0.05)
            tasks = [p.read_text() for p in (tmp_path / "ray").glob("evaluate-*/tasks.jsonl")]
            tasks = tasks[0].splitlines() if tasks else []
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait(timeout=30)
    (run,) = (tmp_path / "ray").glob("evaluate-*")
    assert not (run / "results.json").exists()
    _run(["evaluate", "--resume", str(run), "--workers", "2", "--format", "json"])
    assert _results(tmp_path / "ray") == _results(tmp_path / "whole")


def test_ray_errors_are_one_line(tmp_path):
    bad = _fail(["evaluate", "--episodes", "2", "--ray", "nowhere", "--runs-dir", str(tmp_path)])
    assert "--ray 'nowhere' is not a cluster address" in bad
    fake = tmp_path / "without-ray" / "ray"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('no Ray here')\n")
    missing = _fail(["evaluate", "--episodes", "2", "--ray", "auto"],
                    env={**os.environ, "PYTHONPATH": str(fake.parent)})  # fmt: skip
    assert missing == 'error: --ray needs Ray, which is not installed: pip install -e ".[ray]"'
    rl = _fail(["train", "--edition", "7th", "--ray", "auto", "--subproc", "--runs-dir",
                str(tmp_path)])  # fmt: skip
    assert rl.startswith("error: --subproc starts local processes; with --ray")
    both = _fail(["evaluate", "--episodes", "2", "--ray", "auto", "--workers", "2"])
    assert "with --ray (or PSYGYM_RAY_ADDRESS) the cluster's CPUs play the games" in both


def _fail(args: list[str], **kw) -> str:
    out = subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=RUN_SECONDS, **kw)
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, out.stderr
    return lines[0]
