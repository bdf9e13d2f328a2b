"""Actors on other machines, simulated: a Ray cluster of three nodes on this machine
(`ray.cluster_utils.Cluster`: a head node and two worker nodes that alone declare the `actor`
resource), joined by train.py with --ray_address. The actors run on the worker nodes, not the
learner's; one worker node is removed mid-run, Ray restarts its actor on the other one, the
restart is counted and the run trains on: impala_tiny for 4,000 more steps, then stopped by
SIGTERM (a run with a fixed end could finish before Ray notices the node is gone), and, slow,
impala_cartpole to the end, solving CartPole.
"""

from __future__ import annotations

import csv
import re
import signal

import pytest
from conftest import stderr_lines
from process_tools import TrainProcess
from ray.cluster_utils import Cluster

pytestmark = pytest.mark.e2e  # a cluster's processes, a node that disappears

TIMEOUT = 300
NODE_LINE = re.compile(r"actor (\d) runs on node ([0-9a-f]+) \(pid \d+\)")
STEP_LINE = re.compile(r"step ([\d,]+)/")
PREEMPTED_EXIT = 75  # rl/errors.py


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
def test_actors_on_worker_nodes_come_back_when_a_node_is_removed(tmp_path, hparams_set, settings):
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    try:
        workers = [cluster.add_node(num_cpus=2, resources={"actor": 2}) for _ in range(2)]
        cluster.wait_for_nodes()
        by_id = {node.node_id: node for node in workers}
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
    finally:
        cluster.shutdown()
