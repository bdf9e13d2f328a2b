"""The learner under tf.distribute strategies (rl/distribute, docs/distributed.md).

- MirroredStrategy over 2 logical CPU devices: one update equals the one-device update on the
  same batch from the same state (DQN, PPO, REINFORCE with a mask), and the core step matches a
  hand-computed masked-mean gradient (tests/systems/strategy_equivalence.py, own process: the
  logical devices must be set before TF initializes).
- MultiWorkerMirroredStrategy: 2 train.py processes on 127.0.0.1 (TF_CONFIG) end with identical
  weights and optimizer slots while their replays differ; only the chief writes the run dir.
- `--output_dir ram://...` (a non-local filesystem) works end to end, resume included.
- `--strategy` mistakes (no TPU, unknown name, unsupported agent or trainer) exit 2 with one line
  before anything is written.
"""

from __future__ import annotations

import csv
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
from conftest import REPO_ROOT, params_selected, stderr_lines, train_env

import train
from rl.distribute.worker import WorkerRole, tpu_host_role, worker_role
from rl.hparams import HParams
from rl.utils.checkpoint import read_numpy_state

HERE = Path(__file__).resolve().parent


def _result(proc: subprocess.CompletedProcess) -> dict:
    assert proc.returncode == 0, (
        f"exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, proc.stdout[-3000:]
    return json.loads(lines[-1][len("RESULT ") :])


def _close(actual: float, expected: float, tol: float = 1e-5) -> bool:
    return abs(actual - expected) <= tol * (1.0 + abs(expected))


# --------------------------------------------------------------------------- MirroredStrategy
@pytest.fixture(scope="module")
def mirrored_results(request) -> dict:
    """The script's cases that this session's tests read (the slow tier's only under `-m slow`),
    split over two processes at once: they trace and build agents, one core each."""
    names = ["masked_mean_by_hand", "collectives_per_step", *params_selected(request, "case")]
    procs = [
        subprocess.Popen(
            [sys.executable, str(HERE / "strategy_equivalence.py"), *names[shard::2]],
            cwd=REPO_ROOT,
            env=train_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for shard in (0, 1)
    ]
    results = {}
    for proc in procs:
        stdout, stderr = proc.communicate(timeout=600)
        results.update(
            _result(subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr))
        )
    return results


@pytest.mark.e2e  # logical CPU devices exist only if set before TF starts: a fresh process
def test_replicated_step_matches_a_masked_mean_by_hand(mirrored_results):
    assert mirrored_results["num_replicas_in_sync"] == 2
    hand = mirrored_results["masked_mean_by_hand"]
    # (actual, expected) pairs; the expected numbers are numpy's (see the script's docstring).
    assert _close(*hand["loss"], tol=1e-6) and _close(hand["loss"][1], 12.25 / 3, tol=1e-6)
    assert _close(*hand["grad_norm"], tol=1e-6)
    np.testing.assert_allclose(*hand["weights"], rtol=1e-6, atol=1e-7)
    # Per-example outputs come back in batch order: replica 0's rows, then replica 1's.
    np.testing.assert_allclose(*hand["residual"], rtol=1e-6)
    np.testing.assert_allclose(hand["residual"][1], [-1.0, 1.5, -3.0, -4.5])


@pytest.mark.e2e  # logical CPU devices exist only if set before TF starts: a fresh process
def test_one_collective_per_gradient_step(mirrored_results):
    # The weights, the loss and the 3 gradients travel in ONE batched all-reduce; the optimizer
    # does not sum the gradients again, and the norm for clipping needs no all-reduce of its own
    # (before: 3 reductions, [1, 3, 3] tensors).
    counted = mirrored_results["collectives_per_step"]
    assert counted["calls"] == [["batch_reduce", 5]]
    assert counted["weights_moved"]


# Slow: the cases whose update another case here runs with the other optimizer settings (an
# SGD case beside an Adam-with-clipping one, or TD3's beside DDPG's).
SLOW = pytest.mark.slow


@pytest.mark.parametrize(
    ("case", "gradient_steps"),
    [
        pytest.param("dqn_sgd", 4, marks=SLOW),  # dqn_tiny: gradient_steps=4
        ("dqn_adam_clip", 4),
        ("rainbow_sgd", 4),  # rainbow_tiny: gradient_steps=4
        # ppo_tiny: 2 epochs x (train_every 64 / batch_size 32) minibatches
        pytest.param("ppo_sgd", 4, marks=SLOW),
        ("ppo_target_kl_sgd", 1),  # the KL check before the second step stops the update
        ("reinforce_masked_sgd", 4),  # reinforce_tiny: 2 epochs x (200 / 100)
        ("td3_sgd", 4),  # td3_tiny: gradient_steps=4 (critic steps; 2 actor steps)
        # ddpg_tiny: gradient_steps=4, an actor step after each
        pytest.param("ddpg_adam_clip", 4, marks=SLOW),
        ("sac_sgd", 4),  # sac_tiny: gradient_steps=4, actor and temperature steps after each
        pytest.param("drqn_sgd", 2, marks=SLOW),  # drqn_tiny: 2 batches of 4 sequences
        ("drqn_adam_clip_xla", 2),  # XLA: one device whole, mirrored per replica
        ("ppo_recurrent_sgd", 4),  # 2 epochs x 2 minibatches of 2 sequences of 16 steps
        ("impala_sgd", 4),  # impala_tiny: 2 epochs x 2 minibatches of 2 unrolls
        pytest.param("offpac_sgd", 2, marks=SLOW),  # offpac_tiny: 2 batches of 4 segments
        ("offpac_adam_clip_xla", 2),
        # maddpg_tiny: gradient_steps=4, an actors' step after each
        pytest.param("maddpg_sgd", 4, marks=SLOW),
        ("maddpg_adam_clip", 4),
    ],
)
@pytest.mark.e2e  # logical CPU devices exist only if set before TF starts: a fresh process
def test_mirrored_update_equals_one_device_update(mirrored_results, case, gradient_steps):
    result = mirrored_results[case]
    assert len(set(result["replica_devices"])) == 2
    assert all("CPU" in device for device in result["replica_devices"])
    assert result["replicas_equal"], "the two replicas' weights drifted apart"
    assert result["gradient_steps"] == [gradient_steps, gradient_steps]
    assert result["variable_keys_equal"] and result["int_variables_equal"]
    for name, output in result["outputs"].items():
        scale = float(np.max(np.abs(output["single"]), initial=0.0))
        assert output["max_abs_diff"] <= 1e-5 * (1.0 + scale), (name, output)
    # The update moved the weights (so equality means something), identically on both sides.
    assert max(result["variables_changed"].values()) > 1e-3
    for key, diff in result["variables_max_abs_diff"].items():
        assert diff <= 1e-6, (key, diff)
    if case.startswith(("td3", "ddpg", "sac", "maddpg")):  # the second optimizer moved the actor
        changed = result["variables_changed"]
        assert (
            max(v for k, v in changed.items() if k.startswith(("agent/actor/", "agent/actor_0/")))
            > 1e-3
        )
    else:
        assert result["outputs"]["grad_norm"]["single"] > 0.0


# ---------------------------------------------------------------- MultiWorkerMirroredStrategy
def _free_ports(count: int) -> list[int]:
    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def _start_two_workers(tmp_path, script: str, args: list[str]) -> list[subprocess.Popen]:
    """`script *args --strategy multi_worker_mirrored` as workers 0 and 1 on 127.0.0.1, logging
    to worker<i>.log; worker i dumps its state to worker<i>.npz (strategy_worker.py) and keeps
    its scratch dir in tmp<i>/."""
    workers = [f"127.0.0.1:{port}" for port in _free_ports(2)]
    procs = []
    for index in range(2):
        env = train_env()
        env["TF_CONFIG"] = json.dumps(
            {"cluster": {"worker": workers}, "task": {"type": "worker", "index": index}}
        )
        env["RL_TEST_DUMP"] = str(tmp_path / f"worker{index}.npz")
        env["TMPDIR"] = str(tmp_path / f"tmp{index}")  # where a non-chief's scratch dir goes
        os.makedirs(env["TMPDIR"])
        log = open(tmp_path / f"worker{index}.log", "w")  # a file: a full pipe would stall
        command = [sys.executable, script, *args, "--strategy", "multi_worker_mirrored"]
        procs.append(subprocess.Popen(command, cwd=REPO_ROOT, env=env, stdout=log, stderr=log))
        log.close()
    return procs


def _two_workers(tmp_path, hparams_set: str) -> tuple[list, list[str], list[dict]]:
    """`train.py --strategy multi_worker_mirrored` for 300 env steps on 2 local workers:
    (processes, logs, each worker's final state dumped by strategy_worker.py)."""
    out = tmp_path / "out"
    args = ["--hparams", hparams_set, "--train_steps", "300", "--output_dir", str(out)]
    procs = _start_two_workers(tmp_path, str(HERE / "strategy_worker.py"), args)
    try:
        for proc in procs:
            proc.wait(timeout=240)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
    logs = [(tmp_path / f"worker{i}.log").read_text() for i in range(2)]
    for proc, log in zip(procs, logs, strict=True):
        assert proc.returncode == 0, log[-4000:]
    return procs, logs, [dict(np.load(tmp_path / f"worker{i}.npz")) for i in range(2)]


@pytest.mark.e2e  # two train.py processes in one MultiWorkerMirroredStrategy collective
def test_two_workers_keep_identical_weights_and_only_the_chief_writes(tmp_path):
    out = tmp_path / "out"
    procs, logs, (chief, worker) = _two_workers(tmp_path, "dqn_tiny")
    assert "[run_0] step 300/300" in logs[0] and "[run_0 worker 1] step 300/300" in logs[1]

    assert chief.keys() == worker.keys()
    tf_keys = [k for k in chief if k.startswith("tf/")]
    # The Q-network's weights are saved under the optimizer's `_trainable_variables` (the first
    # path to them in the object graph), the Adam slots under its `_variables`.
    weights = [k for k in tf_keys if "_trainable_variables" in k or "target_network" in k]
    slots = [k for k in tf_keys if "optimizer/_variables" in k]
    assert len(weights) >= 12 and len(slots) >= 12
    for key in tf_keys:
        if "generator" in key:  # each worker explores with its own random stream
            assert not np.array_equal(chief[key], worker[key]), key
        else:  # weights, target network, optimizer slots, counters: all-reduced updates
            np.testing.assert_array_equal(chief[key], worker[key], err_msg=key)
    assert int(chief["tf/agent/learner/gradient_steps/.ATTRIBUTES/VARIABLE_VALUE"]) > 0
    # Each worker learned from its own envs (other seeds): their replays differ.
    assert not np.array_equal(chief["replay/replay/field/obs"], worker["replay/replay/field/obs"])

    # Only the chief wrote the run dir, and its last checkpoint is the final state.
    assert sorted(p.name for p in out.iterdir()) == ["run_0"]
    run_dir = out / "run_0"
    pointer = json.loads((run_dir / "checkpoints" / "latest.json").read_text())
    assert pointer["step"] == 300
    reader = tf.train.load_checkpoint(str(run_dir / "checkpoints" / pointer["directory"] / "tf"))
    for key in tf_keys:
        np.testing.assert_array_equal(reader.get_tensor(key[len("tf/") :]), chief[key], key)
    events = list(run_dir.glob("*/events.out.tfevents.*"))
    assert {p.parent.name for p in events} == {"train", "eval"}
    # Event file names end in <host>.<pid>.<n>.v2: every one is the chief's.
    assert {p.name.split(".")[-3] for p in events} == {str(procs[0].pid)}
    with open(run_dir / "progress.csv") as f:
        assert [row["env_steps"] for row in csv.DictReader(f)] == ["300"]
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert "resumed" not in manifest
    # The non-chief's scratch dir is gone; the chief never made one.
    assert not any((tmp_path / "tmp1").iterdir()) and not any((tmp_path / "tmp0").iterdir())


# Slow (~25 s): the collective is the one test_two_workers_keep_identical_weights_... runs; TD3's
# two optimizers under it are checked against one device by test_mirrored_update_... (td3_sgd).
@pytest.mark.slow
@pytest.mark.e2e  # two train.py processes in one MultiWorkerMirroredStrategy collective
def test_two_workers_train_td3_with_identical_weights(tmp_path):
    # An off-policy continuous agent with two optimizers (critics; actor every policy_delay).
    _, logs, (chief, worker) = _two_workers(tmp_path, "td3_tiny")
    assert "[run_0] step 300/300" in logs[0] and "[run_0 worker 1] step 300/300" in logs[1]
    assert chief.keys() == worker.keys()
    tf_keys = [k for k in chief if k.startswith("tf/")]
    assert any("actor_optimizer" in k for k in tf_keys)
    for key in tf_keys:
        if "generator" in key:  # each worker explores with its own random stream
            assert not np.array_equal(chief[key], worker[key]), key
        else:  # critics, actor, targets, both optimizers, counters: all-reduced updates
            np.testing.assert_array_equal(chief[key], worker[key], err_msg=key)
    assert int(chief["tf/agent/learner/gradient_steps/.ATTRIBUTES/VARIABLE_VALUE"]) > 0
    assert not np.array_equal(chief["replay/replay/field/obs"], worker["replay/replay/field/obs"])


def test_worker_roles():
    assert worker_role(tf.distribute.get_strategy()) == WorkerRole(index=0, count=1)
    assert tpu_host_role({}) == WorkerRole() and tpu_host_role({"TPU_WORKER_ID": "0"}).is_chief
    role = tpu_host_role({"TPU_WORKER_HOSTNAMES": "h-0.s,h-1.s,h-2.s,h-3.s", "TPU_WORKER_ID": "2"})
    assert role == WorkerRole(index=2, count=4)
    assert role.multi_worker and not role.is_chief
    scratch = role.scratch_dir()
    try:
        assert os.path.isdir(scratch) and "rl_worker2_" in scratch
    finally:
        os.rmdir(scratch)


# ----------------------------------------------------------------------------- ram:// output
@pytest.mark.e2e  # ram:// lives in one process: train, exit, resume in the next process
def test_ram_output_dir_train_and_resume(tmp_path):
    copy = tmp_path / "copy"
    proc = subprocess.run(
        [sys.executable, str(HERE / "ram_run.py"), "ram://rl_test/out", str(copy), "dqn_tiny"]
        + ["300", "400"],
        cwd=tmp_path,
        env=train_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    result = _result(proc)
    assert result["statuses"] == [0, 0]
    assert "resuming from checkpoint at 300 env steps" in proc.stdout
    files = result["files"]
    for name in ("hparams.json", "manifest.json", "progress.csv", "checkpoints/latest.json"):
        assert f"run_0/{name}" in files
    assert any(f.startswith("run_0/train/events.out.tfevents") for f in files)
    assert any(f.startswith("run_0/eval/events.out.tfevents") for f in files)
    # Nothing went to a local path named after the URL.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["copy"]

    run_dir = copy / "run_0"
    assert HParams.from_json((run_dir / "hparams.json").read_text()).train_steps == 400
    pointer = json.loads((run_dir / "checkpoints" / "latest.json").read_text())
    assert pointer["step"] == 400
    step_dir = run_dir / "checkpoints" / pointer["directory"]
    reader = tf.train.load_checkpoint(str(step_dir / "tf"))
    assert reader.get_tensor("agent/learner/gradient_steps/.ATTRIBUTES/VARIABLE_VALUE") > 0
    assert json.loads((step_dir / "trainer.json").read_text())["env_steps"] == 400
    assert read_numpy_state(str(step_dir))["replay/field/obs"].shape[1:] == (4,)
    with open(run_dir / "progress.csv") as f:
        assert [row["env_steps"] for row in csv.DictReader(f)] == ["300", "400"]
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert len(manifest["resumed"]) == 1
    tags = set()
    for path in (run_dir / "train").glob("events.out.tfevents.*"):
        for event in tf.compat.v1.train.summary_iterator(str(path)):
            tags.update(value.tag for value in event.summary.value)
    assert {"loss", "episode_return"} <= tags


# ------------------------------------------------------------------------------- mistakes
def _train_error(capsys, args: list[str]) -> str:
    assert train.main(args) == 2
    lines = stderr_lines(capsys.readouterr().err)
    assert len(lines) == 1, lines
    return lines[0]


def test_tpu_strategy_without_a_tpu_exits_2_before_writing(tmp_path, capsys, monkeypatch):
    out = tmp_path / "out"
    line = _train_error(
        capsys, ["--hparams", "dqn_tiny", "--output_dir", str(out), "--strategy", "tpu"]
    )
    assert "strategy 'tpu'" in line and ("libtpu" in line or "no TPU device" in line)
    # The Pods of --sys tpu name the strategy in $RL_STRATEGY instead of the flag.
    monkeypatch.setenv("RL_STRATEGY", "tpu")
    assert _train_error(capsys, ["--hparams", "dqn_tiny", "--output_dir", str(out)]) == line
    assert not out.exists()


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--hparams", "dqn_tiny", "--strategy", "mirored"], "did you mean 'mirrored'"),
        (["--hparams", "cmaes_tiny", "--strategy", "mirrored"], "CMA-ES is gradient-free"),
        (["--hparams", "ppo_tf_tiny", "--strategy", "mirrored"], "compiled trainer"),
        (["--hparams", "dqn_tiny", "--strategy", "multi_worker_mirrored"], "TF_CONFIG"),
    ],
)
def test_strategy_mistakes_exit_2_before_writing(tmp_path, capsys, monkeypatch, args, expected):
    for key in ("TF_CONFIG", "JOB_COMPLETION_INDEX", "RL_STRATEGY"):
        monkeypatch.delenv(key, raising=False)
    out = tmp_path / "out"
    assert expected in _train_error(capsys, [*args, "--output_dir", str(out)])
    assert not out.exists()


@pytest.mark.slow  # two TF processes training for a while (~1 min on 2 busy cores)
def test_sigterm_to_one_worker_stops_both_at_the_same_step(tmp_path):
    """A preemption reaches one Pod: the workers vote at every iteration, so both save (the
    chief into the run dir) at the same env step and exit 75."""
    out = tmp_path / "out"
    args = ["--hparams", "dqn_tiny", "--train_steps", "100000", "--output_dir", str(out)]
    args += ["--hparam_override", "checkpoint_every=100"]
    procs = _start_two_workers(tmp_path, "train.py", args)
    pointer_path = out / "run_0" / "checkpoints" / "latest.json"
    try:
        deadline = time.monotonic() + 240
        while not pointer_path.exists() and time.monotonic() < deadline:
            assert all(p.poll() is None for p in procs), "a worker exited early"
            time.sleep(0.1)
        procs[1].send_signal(signal.SIGTERM)  # the non-chief's Pod is preempted
        for proc in procs:
            proc.wait(timeout=120)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
    logs = [(tmp_path / f"worker{i}.log").read_text() for i in range(2)]
    assert [p.returncode for p in procs] == [75, 75], logs
    steps = [re.findall(r"SIGTERM: checkpoint at ([\d,]+) env steps", log) for log in logs]
    assert len(steps[0]) == 1 and steps[0] == steps[1], logs
    assert json.loads(pointer_path.read_text())["step"] == int(steps[0][0].replace(",", ""))
