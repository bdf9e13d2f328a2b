"""Actors on other machines, simulated: a Ray cluster of three nodes on this machine
(`ray.cluster_utils.Cluster`: a head node and two worker nodes that alone declare the `actor`
resource), joined by train.py with --ray_address. The actors run on the worker nodes, not the
learner's; one worker node is removed mid-run, Ray restarts its actor on the other one, the
restart is counted and the run trains on: impala_tiny for 4,000 more steps, then stopped by
SIGTERM (a run with a fixed end could finish before Ray notices the node is gone), and, slow,
impala_cartpole to the end, solving CartPole. Then both worker nodes are removed (a whole actor
node pool preempted): the Ape-X learner says what it waits for, again and again, and after
--actor_wait_timeout checkpoints and exits 69; the same command resumes from that checkpoint,
and, as an IMPALA run on a cluster without actor nodes, ends by the same rule.
"""

from __future__ import annotations

import csv
import json
import re
import signal
import time
from pathlib import Path

import pytest
from conftest import stderr_lines
from process_tools import TrainProcess
from ray.cluster_utils import Cluster

pytestmark = pytest.mark.e2e  # a cluster's processes, a node that disappears

TIMEOUT = 300
NODE_LINE = re.compile(r"actor (\d) runs on node ([0-9a-f]+) \(pid \d+\)")
STEP_LINE = re.compile(r"step ([\d,]+)/")
PREEMPTED_EXIT = 75  # rl/errors.py
ACTORS_UNAVAILABLE_EXIT = 69  # rl/errors.py
ACTORS = ["--num_workers", "2", "--actor_resources", '{"actor": 1}']
WAIT_TIMEOUT = 8  # --actor_wait_timeout: a waiting line every 2 s (a quarter of it)
WAITING_LINE = re.compile(
    r"waiting for actors 0, 1 \((?:RESTARTING|PENDING_CREATION)\): no block for \d+ s; "
    r'each needs \{"CPU": 1, "actor": 1\}, which no live node of the Ray cluster has '
    rf"\(for (\d+) s\): checkpoint and exit 69 in \d+ s \(--actor_wait_timeout {WAIT_TIMEOUT}\)"
)
CHECKPOINT_LINE = re.compile(r"no node for the actors: checkpoint at ([\d,]+) env steps")
GAVE_UP_LINE = (
    'train.py: no node of the Ray cluster could hold actors 0, 1 ({"CPU": 1, "actor": 1} '
    f"each) for {WAIT_TIMEOUT} s (--actor_wait_timeout); every run saved a checkpoint (status "
    "69): the same command continues it once the cluster has such nodes"
)


@pytest.fixture(scope="module")
def head_only_cluster():
    """A Ray cluster of one head node with 1 CPU (the learner's), shared by the module's tests:
    each test gives it the worker nodes it needs (starting a cluster costs tens of seconds).
    Its workers run at niceness 0, as the learner does and as the actors of a cluster that
    train.py starts do: at Ray's default of 15 they starved beside CI's other steps (nice 10),
    and a test took three times as long there as alone."""
    with pytest.MonkeyPatch.context() as env:
        env.setenv("RAY_worker_niceness", "0")  # read by each node's raylet at its start
        cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
        try:
            yield cluster
        finally:
            cluster.shutdown()


@pytest.fixture
def cluster(head_only_cluster, request):
    """The module's cluster with two worker nodes (or as many as an indirect parameter says)
    that alone declare the `actor` resource, 2 each (`cluster.worker_nodes`): fresh nodes for
    each test, since a test removes some."""
    cluster = head_only_cluster
    for node in list(cluster.worker_nodes):
        cluster.remove_node(node)
    for _ in range(getattr(request, "param", 2)):
        cluster.add_node(num_cpus=2, resources={"actor": 2})
    cluster.wait_for_nodes()
    return cluster


@pytest.mark.parametrize(
    ("hparams_set", "settings"),
    [
        pytest.param(
            "impala_tiny",
            ["--train_steps", "10000000", "--hparam_override", "eval.every_steps=2000"],
            id="impala_tiny",
        ),
        pytest.param(  # a whole training (~2 min on 2 busy cores)
            "impala_cartpole",
            ["--hparam_override", "stop_at_eval_return=475.0"],
            id="impala_cartpole_solves_cartpole",
            marks=pytest.mark.slow,
        ),
    ],
)
def test_actors_on_worker_nodes_come_back_when_a_node_is_removed(
    cluster, tmp_path, hparams_set, settings
):
    by_id = {node.node_id: node for node in cluster.worker_nodes}
    out = tmp_path / "out"
    args = ["--hparams", hparams_set, "--num_workers", "2", "--output_dir", out, *settings]
    args += ["--ray_address", cluster.address, "--actor_resources", '{"actor": 1}']
    (tmp_path / "run").mkdir()
    run = TrainProcess(args, tmp_path / "run")

    def placements() -> list[tuple[int, str]]:
        return [(int(i), node) for i, node in NODE_LINE.findall(run.stdout)]

    assert run.wait_for(lambda: {i for i, _ in placements()} == {0, 1}, TIMEOUT), run.describe()
    learner = re.search(r"this learner on node ([0-9a-f]+)", run.stdout).group(1)
    first = dict(placements())
    assert set(first.values()) <= set(by_id) and learner not in first.values(), run.describe()
    cluster.remove_node(by_id[first[0]])  # actor 0's node (and actor 1's, if they share it)
    survivor = next(node for node in by_id if node != first[0])

    def moved() -> bool:
        return sum(node == survivor for i, node in placements() if i == 0) >= 1

    assert run.wait_for(moved, TIMEOUT), run.describe()
    if hparams_set == "impala_tiny":  # 4,000 steps more with the moved actor, then SIGTERM

        def steps() -> int:
            found = STEP_LINE.findall(run.stdout)
            return max((int(s.replace(",", "")) for s in found), default=0)

        moved_at = steps()
        assert run.wait_for(lambda: steps() >= moved_at + 4000, TIMEOUT), run.describe()
        run.proc.send_signal(signal.SIGTERM)
        assert run.finish(timeout=60) == PREEMPTED_EXIT, run.describe()
        assert len(stderr_lines(run.stderr)) == 1, run.describe()  # "stopped by SIGTERM; ..."
    else:
        run.wait_for(lambda: False, TIMEOUT)  # until it exits
        assert run.finish(timeout=60) == 0, run.describe()
        assert stderr_lines(run.stderr) == [], run.describe()
        assert "reached stop_at_eval_return=475.0" in run.stdout, run.describe()
    with open(out / "run_0" / "progress.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert int(rows[-1]["actor_restarts"]) >= 1, rows[-1]
    if hparams_set == "impala_tiny":  # an evaluation (every 2,000 steps) after the move
        assert int(rows[-1]["env_steps"]) >= moved_at + 2000, rows[-1]


def test_losing_every_actor_node_is_said_and_ends_the_run_checkpointed(cluster, tmp_path):
    """Ape-X: both worker nodes go once the actors run. The learner names the actors, the
    resource they need and the time left at a steady interval, then checkpoints and exits 69
    once no node could hold an actor for --actor_wait_timeout seconds (before: nothing more was
    printed, and it never ended). The same command resumes from that checkpoint."""
    out = tmp_path / "out"
    args = ["--hparams", "dqn_tiny", "--output_dir", out, "--train_steps", "10000000", *ACTORS]
    args += ["--ray_address", cluster.address, "--actor_wait_timeout", WAIT_TIMEOUT]
    (tmp_path / "run").mkdir()
    run = TrainProcess(args, tmp_path / "run")

    def placed() -> bool:
        return {i for i, _ in NODE_LINE.findall(run.stdout)} == {"0", "1"}

    assert run.wait_for(placed, TIMEOUT), run.describe()
    for node in list(cluster.worker_nodes):
        cluster.remove_node(node)
    removed_at = time.monotonic()
    assert run.finish(timeout=120) == ACTORS_UNAVAILABLE_EXIT, run.describe()
    assert time.monotonic() - removed_at >= WAIT_TIMEOUT, run.describe()  # not before the rule
    saved = _said_and_saved(run, out / "run_0")
    assert saved > 0, run.describe()
    # The same command resumes from that checkpoint (the learner and its replay), and with no
    # actor node from its start the same rule ends it.
    (tmp_path / "resume").mkdir()
    resume = TrainProcess(args, tmp_path / "resume")
    assert resume.finish(timeout=120) == ACTORS_UNAVAILABLE_EXIT, resume.describe()
    assert f"resuming from checkpoint at {saved:,} env steps" in resume.stdout, resume.describe()
    assert _said_and_saved(resume, out / "run_0") == saved


@pytest.mark.parametrize("cluster", [0], indirect=True)  # no node declares `actor`
def test_impala_without_an_actor_node_ends_by_the_same_rule(cluster, tmp_path):
    """IMPALA's learner waits for its actors as Ape-X's does: here no node could ever hold one,
    so the run says so, checkpoints at 0 env steps and exits 69 after --actor_wait_timeout."""
    out = tmp_path / "out"
    args = ["--hparams", "impala_tiny", "--output_dir", out, "--train_steps", "10000000"]
    args += [*ACTORS, "--ray_address", cluster.address, "--actor_wait_timeout", WAIT_TIMEOUT]
    (tmp_path / "run").mkdir()
    run = TrainProcess(args, tmp_path / "run")
    assert run.finish(timeout=120) == ACTORS_UNAVAILABLE_EXIT, run.describe()
    assert _said_and_saved(run, out / "run_0") == 0


def _said_and_saved(run: TrainProcess, run_dir: Path) -> int:
    """Checks what a run that gave up on its actors said and saved; the checkpoint's step."""
    # Said at a steady interval (every 2 s), the time without a node growing each time.
    waited = [int(seconds) for seconds in WAITING_LINE.findall(run.stdout)]
    assert len(waited) >= 3 and waited == sorted(set(waited)), run.describe()
    assert stderr_lines(run.stderr) == [GAVE_UP_LINE], run.describe()
    (saved,) = (int(s.replace(",", "")) for s in CHECKPOINT_LINE.findall(run.stdout))
    assert json.loads((run_dir / "checkpoints" / "latest.json").read_text())["step"] == saved
    return saved
