"""Every `*_tiny` set a TPU Pod can train, end to end through train.py, on a machine without a TPU.

A Pod of `--sys tpu` runs `train.py` with `RL_STRATEGY=tpu`. Here no TPU exists, so the smoke
run is in two parts: under `RL_STRATEGY=tpu` the set gets past every check that does not need the
TPU (agent supports strategies, not the compiled trainer) and stops at the one-line "no TPU"
error before writing anything; then it trains under `--strategy mirrored`, the same learner path
(`strategy.run`, variables under the strategy's scope, reduced metrics) on this machine's one
CPU device; dqn_tiny and ppo_tiny then resume from their checkpoint and train on, as a Pod that
replaced a lost one does. CI runs these in .venv-tpu-compat as well, under the TPU image's
TensorFlow (marker `tpu_compat`, tests/conftest.py); there the first test checks that it really
is that TF.
"""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path

import pytest
import tensorflow as tf
from conftest import (
    REPO_ROOT,
    TrainedRuns,
    describe,
    params_selected,
    run_train_process,
    stderr_lines,
)

import train
from rl import registry

TINY_SETS = sorted(name for name in registry.hparams.names() if name.endswith("_tiny"))


def runs_on_tpu(hparams_set: str) -> bool:
    """What train.py's strategy check lets through: a strategy-capable agent, no `tf/` env."""
    hparams = registry.get_hparams(hparams_set)()
    agent = registry.agents.get(hparams.agent)
    return agent.supports_strategies and not hparams.env.startswith("tf/")


TPU_SETS = [name for name in TINY_SETS if runs_on_tpu(name)]
# The sets of the agents that learned strategies last (sequences, unrolls, multi-agent): their
# train.py runs under `--strategy mirrored` are in the slow suite (~1.5 min on 2 busy cores);
# in the default one their updates are compared with one device on 2 replicas
# (test_strategy_training.py) and drqn_tiny trains end to end on 2 replicas
# (test_mirrored_train_end_to_end.py).
SLOW_SETS = ("drqn_tiny", "impala_tiny", "maddpg_tiny", "offpac_tiny", "ppo_recurrent_tiny")
# Also slow: sets whose agent class and model another set here trains under the strategy
# (rainbow_tiny: C51 with NoisyNet; td3_tiny: DDPG's class; sac_mujoco_tiny: SAC and MuJoCo;
# dqn_tiny and ppo_atari_tiny: DQN and the Atari CNN; the packed-observation sets run the
# classes of dqn_tiny and ppo_tiny).
FAMILY_DUPLICATES = (
    "c51_tiny",
    "ddpg_tiny",
    "dqn_atari_tiny",
    "dqn_legal_moves_tiny",
    "noisy_dqn_tiny",
    "ppo_minigrid_tiny",
    "ppo_mujoco_tiny",
    "sac_tiny",
)
# Also resumed from their checkpoint under the strategy: one replay agent, one on-policy agent.
RESUMED = ("dqn_tiny", "ppo_tiny")


def test_this_venv_runs_the_tpu_images_tensorflow():
    if Path(sys.prefix).name != ".venv-tpu-compat":
        pytest.skip("not in .venv-tpu-compat (setup-tpu-compat.sh)")
    pins = dict(
        line.split("==", 1)
        for line in (REPO_ROOT / "requirements-tpu.txt").read_text().splitlines()
        if "==" in line and not line.startswith("#")
    )
    assert tf.__version__ == pins["tensorflow-tpu"]


def test_the_tpu_gate_of_train_py_agrees(tmp_path, capsys, monkeypatch):
    # Each tiny set under RL_STRATEGY=tpu, as in a Pod: exit 2, one line, nothing written. The
    # sets that reach the missing-TPU line are exactly TPU_SETS (so none is left out below).
    monkeypatch.setenv("RL_STRATEGY", "tpu")
    monkeypatch.delenv("TPU_NAME", raising=False)
    reached = []
    for name in TINY_SETS:
        out = tmp_path / name
        assert train.main(["--hparams", name, "--output_dir", str(out)]) == 2, name
        lines = stderr_lines(capsys.readouterr().err)
        assert len(lines) == 1 and "strategy 'tpu'" in lines[0], (name, lines)
        assert not out.exists(), name
        if "libtpu" in lines[0] or "no TPU device" in lines[0]:
            reached.append(name)
    assert reached == TPU_SETS
    assert {"dqn_tiny", "ppo_tiny", *SLOW_SETS} <= set(TPU_SETS)


@pytest.fixture(scope="module")
def tpu_set_runs(
    request, tmp_path_factory
) -> dict[str, list[tuple[Path, subprocess.CompletedProcess]]]:
    """{set: [(output_dir, train.py run), ...]}: each TPU set trained under `--strategy
    mirrored`; RESUMED sets then continue to twice their train_steps from the checkpoint, as a
    replaced Pod does. The runs go to two trainer processes (tests/tiny_trainer.py: real file
    descriptors, one TF import each instead of one per run), one per core."""
    selected = params_selected(request, "hparams_set")
    fast = [name for name in TPU_SETS if name not in SLOW_SETS and name in selected]
    trainers = [TrainedRuns(tmp_path_factory) for _ in range(2)]

    def train_half(half: int) -> dict:
        def run(args: list[str]) -> subprocess.CompletedProcess:
            return trainers[half].start(args).result(timeout=600)

        return {
            name: _train_set(name, tmp_path_factory.mktemp(name), run) for name in fast[half::2]
        }

    try:
        with ThreadPoolExecutor(max_workers=2) as pool:
            halves = list(pool.map(train_half, (0, 1)))
    finally:
        for trainer in trainers:
            trainer.close()
    return {**halves[0], **halves[1]}


def _train_set(
    name: str, root: Path, run: Callable[[list[str]], subprocess.CompletedProcess]
) -> list[tuple[Path, subprocess.CompletedProcess]]:
    """train.py on set `name` under `--strategy mirrored` into root/out, and (RESUMED sets)
    on to twice its train_steps from a copy of that run in root/resumed."""
    out, resumed = root / "out", root / "resumed"
    args = ["--hparams", name, "--strategy", "mirrored"]
    runs = [(out, run([*args, "--output_dir", str(out)]))]
    if name in RESUMED and runs[0][1].returncode == 0:
        shutil.copytree(out, resumed)  # so the first run's files stay as it left them
        steps = str(2 * registry.get_hparams(name)().train_steps)
        more = [*args, "--output_dir", str(resumed), "--train_steps", steps]
        runs.append((resumed, run(more)))
    return runs


def _check_run(out: Path, proc: subprocess.CompletedProcess, train_steps: int) -> None:
    assert proc.returncode == 0, describe(proc)
    assert "Traceback" not in proc.stderr, describe(proc)
    run_dir = out / "run_0"
    with open(run_dir / "progress.csv", newline="") as f:
        assert int(list(csv.DictReader(f))[-1]["env_steps"]) == train_steps
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["packages"]["tensorflow"] == tf.__version__
    pointer = json.loads((run_dir / "checkpoints" / "latest.json").read_text())
    assert pointer["step"] == train_steps
    reader = tf.train.load_checkpoint(str(run_dir / "checkpoints" / pointer["directory"] / "tf"))
    assert reader.get_tensor("agent/learner/gradient_steps/.ATTRIBUTES/VARIABLE_VALUE") > 0


SLOW = pytest.mark.slow


@pytest.mark.parametrize(
    "hparams_set",
    [pytest.param(s, marks=SLOW) if s in SLOW_SETS + FAMILY_DUPLICATES else s for s in TPU_SETS],
)
# e2e: train.py as a Pod starts it (RL_STRATEGY in its environment), resumed by the next process
@pytest.mark.e2e
def test_tpu_set_trains_under_a_strategy(request, tmp_path, hparams_set):
    train_steps = registry.get_hparams(hparams_set)().train_steps
    if hparams_set in SLOW_SETS:
        run = partial(run_train_process, timeout=300)
        (out, proc), *resumed = _train_set(hparams_set, tmp_path, run)
    else:
        (out, proc), *resumed = request.getfixturevalue("tpu_set_runs")[hparams_set]
    _check_run(out, proc, train_steps)
    if hparams_set in RESUMED:
        ((out, proc),) = resumed
        _check_run(out, proc, 2 * train_steps)
        resuming = f"resuming from checkpoint at {train_steps:,} env steps"
        assert resuming in proc.stdout, describe(proc)
