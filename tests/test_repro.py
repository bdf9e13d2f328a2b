"""`python -m rl.repro check` and `diff` end to end (docs/reproducibility.md).

- check says "deterministic" for dqn_tiny (reruns compared with each other and with the trained
  run dir's checkpoints) and ppo_tiny (reruns only);
- with a nondeterministic op injected (tests/repro_nondeterministic_dqn.py) it names the first
  step and the one variable that differ, and exits 1;
- diff on two runs whose commands differ in one override names exactly that hparams key;
- user mistakes exit 2 with one line on stderr.

Every check trains two reruns at once (two processes), and the two trained runs train at once.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import describe, run_train_processes_concurrently, stderr_lines

from rl import registry
from rl.repro.__main__ import main
from rl.utils.run_dir import manifest, run_dir_path, write_run_files

# e2e: rl.repro check reruns each run in two fresh processes
pytestmark = pytest.mark.e2e

TESTS_DIR = Path(__file__).resolve().parent
BASE_OVERRIDE = "checkpoint_every=100,keep_checkpoints=10"


@pytest.fixture(autouse=True)
def _cpu_only_quiet_subprocesses(monkeypatch):
    """The reruns inherit this environment: CPU only (bit-exactness is promised on CPU), quiet
    TF, tests/ importable (the nondeterministic agent's module)."""
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", "3")
    monkeypatch.setenv("PYTHONPATH", str(TESTS_DIR))


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory) -> tuple[Path, Path]:
    """Two trained dqn_tiny runs whose commands differ only in `lr=0.01`."""
    root = tmp_path_factory.mktemp("repro_runs")
    overrides = [BASE_OVERRIDE, BASE_OVERRIDE + ",lr=0.01"]
    args = [
        ["--hparams", "dqn_tiny", "--hparam_override", o, "--output_dir", str(root / f"r{i}")]
        for i, o in enumerate(overrides)
    ]
    for proc in run_train_processes_concurrently(args):
        assert proc.returncode == 0, describe(proc)
    return root / "r0" / "run_0", root / "r1" / "run_0"


def _untrained_run_dir(root: Path, hparams_set: str, override: str = "") -> Path:
    """A run dir as train.py starts it (hparams.json, manifest.json), without training."""
    hp = registry.get_hparams(hparams_set)()
    hp.override(override)
    hp.freeze()
    run_dir = run_dir_path(str(root), 0)
    write_run_files(run_dir, hp, manifest(0, 0, hparams_set))
    return Path(run_dir)


def test_check_dqn_tiny_is_deterministic_and_matches_the_run_dir(two_runs, capsys):
    run_a, _ = two_runs
    assert main(["check", str(run_a), "--steps", "200"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == (
        "deterministic: the two reruns agree bit for bit at every checkpoint (steps 100, 200), "
        "and with the run dir at step 100, 200"
    )


# Slow (~20 s): the check reruns any agent the same way; dqn_tiny's case above runs it here.
@pytest.mark.slow
def test_check_ppo_tiny_is_deterministic(tmp_path, capsys):
    run_dir = _untrained_run_dir(tmp_path, "ppo_tiny")  # checkpoint_every=128, 2 envs
    assert main(["check", str(run_dir), "--steps", "256"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == (
        "deterministic: the two reruns agree bit for bit at every checkpoint (steps 128, 256); "
        "the run dir has no checkpoint in this stretch to compare with"
    )


def test_check_names_the_first_nondeterministic_step_and_variable(tmp_path, capsys):
    from repro_nondeterministic_dqn import NOISE_FROM_STEP  # tests/ is on sys.path

    override = (
        "env=repro_nondeterministic_dqn:CartPoleEnv,agent=nondeterministic_dqn,"
        "checkpoint_every=100,train_steps=300"
    )
    run_dir = _untrained_run_dir(tmp_path, "dqn_tiny", override)
    assert main(["check", str(run_dir), "--steps", "300"]) == 1
    last = capsys.readouterr().out.splitlines()[-1]
    # Checkpoints at 100, 200, 300; updates every 50 steps; the noise starts with the update at
    # step 200 and touches only the online advantage bias, which the checkpoint keys as the
    # optimizer's sixth trainable variable (torso kernel, bias, value kernel, bias, advantage
    # kernel, bias).
    assert NOISE_FROM_STEP == 200
    match = re.fullmatch(
        r"not deterministic: at step 200, variable agent/q_network/head/advantage/bias "
        r"\(max abs difference ([0-9.e+-]+); checkpoint key "
        r"agent/learner/optimizer/_trainable_variables/5\) differs between the two reruns",
        last,
    )
    assert match, last
    assert 0 < float(match.group(1)) < 0.1  # noise of scale 1e-3


def test_diff_names_exactly_the_changed_key(two_runs, capsys):
    run_a, run_b = two_runs
    assert main(["diff", str(run_a), str(run_b)]) == 0
    out = capsys.readouterr().out.splitlines()
    start = out.index("hparams: 1 difference")
    assert out[start + 1] == '  lr: "constant(0.001)" -> "constant(0.01)"'
    assert not out[start + 2].startswith("  ")  # the only hparams line
    assert out[start + 3] == (f"  --hparam_override: {BASE_OVERRIDE} -> {BASE_OVERRIDE},lr=0.01")
    for same in ("code: same", "packages: same", "devices: same", "env: same"):
        assert any(line.startswith(same) for line in out), (same, out)
    assert out[-1].startswith("eval curves: ")
    assert len(out) <= 24  # one screen


@pytest.mark.parametrize(
    "argv, message",
    [
        (["check", "no/such/run_0"], "no/such/run_0 is not a directory"),
        (["check", "{tmp}", "--steps", "0"], "does not exist"),
        (["check", "{run}", "--steps", "0"], "--steps must be >= 1, got 0"),
        (["diff", "{run}"], "the following arguments are required: run_b"),
        ([], "give a command: check or diff"),
    ],
)
def test_user_mistakes_exit_2_with_one_line(tmp_path, capsys, argv, message):
    run_dir = _untrained_run_dir(tmp_path / "out", "dqn_tiny")
    argv = [a.format(tmp=tmp_path, run=run_dir) for a in argv]
    assert main(argv) == 2
    captured = capsys.readouterr()
    lines = stderr_lines(captured.err)
    assert len(lines) == 1 and lines[0].startswith("python -m rl.repro: error: "), lines
    assert message in lines[0]
    assert captured.out == ""
    assert not any(tmp_path.glob("rl_repro_check_*"))
