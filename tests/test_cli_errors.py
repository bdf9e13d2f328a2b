"""Every user mistake on train.py's command line: exit status 2, ONE line on stderr naming the
problem, and nothing written (the output dir does not appear, an existing run dir is unchanged).

The cases run in-process through `train.main([...])` (a UserError returns 2 before any TF graph
work); one case runs as a real subprocess to check the process-level contract too.
"""

from __future__ import annotations

import os
from pathlib import Path

import gymnasium as gym
import pytest
from conftest import TINY_SET, describe, stderr_lines, tree_hashes

import train
from rl import loop, test_mode
from rl.cli import build_parser
from rl.errors import UserError


@pytest.fixture(autouse=True)
def _trainer_is_never_reached(monkeypatch):
    """A mistake must be caught up front, before any env, agent or file is built; reaching the
    trainer fails the test (and keeps this process free of training side effects)."""

    def refuse(*args, **kwargs):
        raise AssertionError(f"train.main reached the training loop ({args[1:3]}): not caught")

    monkeypatch.setattr(loop, "train", refuse)
    monkeypatch.setattr(test_mode, "play_and_report", refuse)


def assert_user_error(capsys, argv: list[str], keywords: list[str], watched: Path) -> str:
    """Runs `train.main(argv)`; asserts exit 2, one stderr line containing every keyword, and
    that nothing under `watched` changed (no file or directory added, removed or modified)."""
    before = tree_hashes(watched)
    capsys.readouterr()  # drop anything earlier tests left
    status = train.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    lines = stderr_lines(err)
    assert status == 2, f"exit {status} for {argv}\nstdout:\n{out}\nstderr:\n{err}"
    assert len(lines) == 1, f"expected one stderr line for {argv}, got {lines!r}"
    line = lines[0]
    assert line.startswith("train.py: error: "), line
    for word in keywords:
        assert word in line, f"{word!r} not in {line!r}"
    assert tree_hashes(watched) == before, f"{argv} wrote under {watched}"
    return line


class WrongMaskEnv(gym.Env):
    """Four actions and a three-entry action mask (`--env test_cli_errors:WrongMaskEnv`)."""

    observation_space = gym.spaces.Dict(
        {"position": gym.spaces.Box(0.0, 1.0, (2,)), "action_mask": gym.spaces.MultiBinary(3)}
    )
    action_space = gym.spaces.Discrete(4)

    def reset(self, *, seed=None, options=None):
        return self.observation_space.sample(), {}


class TextKeyEnv(gym.Env):
    """A Dict observation with a Text key, which no encoder reads."""

    observation_space = gym.spaces.Dict(
        {"position": gym.spaces.Box(0.0, 1.0, (2,)), "mission": gym.spaces.Text(20)}
    )
    action_space = gym.spaces.Discrete(4)

    def reset(self, *, seed=None, options=None):
        return self.observation_space.sample(), {}


class GoalsWithoutRewardEnv(gym.Env):
    """Goal keys in its observation but no `compute_reward` (HER cannot relabel it)."""

    observation_space = gym.spaces.Dict(
        {key: gym.spaces.Box(0.0, 1.0, (2,)) for key in ("achieved_goal", "desired_goal")}
    )
    action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        return self.observation_space.sample(), {}


# --------------------------------------------------------------------- bad names and overrides

BAD_INPUTS = {
    # id: (extra argv, key words of the message)
    "unknown_hparams_set": (
        ["--hparams", "dqn_cartpol"],
        ["unknown hparams set", "'dqn_cartpol'", "did you mean", "'dqn_cartpole'"],
    ),
    "unknown_env_flag": (
        ["--env", "CartPole-v9"],
        ["unknown env", "'CartPole-v9'", "did you mean", "'CartPole-v1'"],
    ),
    "unknown_env_override": (
        ["--hparam_override", "env=CartPole-v9"],
        ["unknown env", "'CartPole-v9'", "'CartPole-v1'"],
    ),
    "env_module_missing": (["--env", "no_such_module_xyz:Env"], ["no_such_module_xyz"]),
    "env_class_missing": (["--env", "gymnasium:NoSuchEnvXyz"], ["NoSuchEnvXyz"]),
    "unknown_model": (
        ["--hparam_override", "model=mpl"],
        ["unknown model", "'mpl'", "did you mean 'mlp'"],
    ),
    "unknown_agent": (
        ["--hparam_override", "agent=dqm"],
        ["unknown agent", "'dqm'", "did you mean 'dqn'"],
    ),
    "unknown_memory": (
        ["--hparam_override", "memory=prioritised"],
        ["unknown memory", "'prioritised'", "did you mean 'prioritized'"],
    ),
    "unknown_key": (
        ["--hparam_override", "gama=0.9"],
        ["--hparam_override", "unknown hparam 'gama'", "did you mean 'gamma'"],
    ),
    "unknown_nested_key": (
        ["--hparam_override", "eval.episodez=3"],
        ["'episodez'", "'eval'", "did you mean 'episodes'"],
    ),
    "unknown_loss": (
        ["--hparam_override", "loss=td_mce"],
        ["loss: unknown gradient function 'td_mce'", "did you mean 'td_mse'", "td_huber"],
    ),
    "unknown_action_function": (
        ["--hparam_override", "action_function=epsilon_gredy"],
        ["action_function", "'epsilon_gredy'", "did you mean 'epsilon_greedy'"],
    ),
    "action_function_of_the_wrong_role": (
        ["--hparam_override", "action_function=gaussian_noise"],
        ["action_function", "'gaussian_noise'", "role 'action_noise'", "'q_exploration'"],
    ),
    "loss_of_the_wrong_role": (
        ["--hparams", "c51_tiny", "--hparam_override", "loss=td_mse"],
        ["loss", "'td_mse'", "role 'td_loss'", "agent 'c51'", "categorical_loss"],
    ),
    "unknown_optimizer": (
        ["--hparam_override", "optimizer=adm"],
        ["unknown optimizer 'adm'", "did you mean 'adam'"],
    ),
    "float_for_int": (
        ["--hparam_override", "batch_size=1.5"],
        ["batch_size", "int", "1.5"],
    ),
    "word_for_bool": (
        ["--hparam_override", "double_q=maybe"],
        ["double_q", "bool", "maybe"],
    ),
    "float_in_int_list": (
        ["--hparam_override", "hidden_sizes=[1,2.5]"],
        ["hidden_sizes", "list[int]", "[1,2.5]"],
    ),
    "unknown_schedule": (
        ["--hparam_override", "epsilon=lnear(1.0,0.1,10)"],
        ["epsilon", "unknown schedule 'lnear'", "did you mean 'linear'"],
    ),
    "item_without_value": (["--hparam_override", "lr"], ["malformed", "'lr'", "key=value"]),
    "item_without_key": (["--hparam_override", "=0.1"], ["malformed", "empty key"]),
    "unclosed_bracket": (
        ["--hparam_override", "hidden_sizes=[1,2"],
        ["unclosed bracket", "hidden_sizes=[1,2"],
    ),
    "unclosed_call": (
        ["--hparam_override", "epsilon=linear(1.0,0.1"],
        ["unclosed bracket", "epsilon=linear(1.0,0.1"],
    ),
    "unbalanced_close": (["--hparam_override", "lr=0.1]"], ["unbalanced", "']'"]),
    "key_twice": (["--hparam_override", "lr=0.1,lr=0.2"], ["lr", "twice"]),
    "value_out_of_range": (["--hparam_override", "train_steps=0"], ["train_steps", ">= 1"]),
    "copies_zero": (["--copies", "0"], ["--copies", ">= 1", "0"]),
    "copies_not_int": (["--copies", "x"], ["--copies", "'x'"]),
    "num_workers_zero": (["--num_workers", "0"], ["--num_workers", ">= 1", "0"]),
    "sys_tpu": (["--sys", "tpu"], ["--sys tpu", "needs --tpu", "--sys local"]),
    "sys_unknown": (["--sys", "gkee"], ["unknown system", "'gkee'", "did you mean 'gke'"]),
    "sys_gke": (["--sys", "gke"], ["--sys gke needs --image", "k8s/Dockerfile.cpu"]),
    "render_maybe": (["--render", "maybe"], ["--render", "'maybe'", "True or False"]),
    "training_maybe": (["--training", "maybe"], ["--training", "'maybe'"]),
    "unknown_flag": (["--bogus_flag", "1"], ["unrecognized arguments", "--bogus_flag"]),
    "agent_cannot_mask": (
        ["--hparams", "c51_tiny", "--env", "LegalMoves-v0"],
        ["'LegalMoves-v0' masks its actions", "agent 'c51'", "dqn, ppo", "docs/masking.md"],
    ),
    "action_mask_of_the_wrong_shape": (
        ["--env", "test_cli_errors:WrongMaskEnv"],
        ["action_mask has shape (3,)", "4 actions", "shape (4,)"],
    ),
    "observation_key_without_encoder": (
        ["--env", "test_cli_errors:TextKeyEnv"],
        ["key 'mission'", "Text space", "FilterObservation"],
    ),
    "test_episodes_zero": (
        ["--training", "False", "--test_episodes", "0"],
        ["--test_episodes", ">= 1"],
    ),
    "her_on_an_env_without_goals": (
        ["--hparams", "sac_tiny", "--hparam_override", "memory=her"],
        ["memory=her", "'Pendulum-v1' has no achieved_goal or desired_goal", "memory=uniform"],
    ),
    "her_on_an_env_without_compute_reward": (
        [
            "--hparams",
            "her_tiny",
            "--env",
            "test_cli_errors:GoalsWithoutRewardEnv",
            "--hparam_override",
            "env_kwargs={}",
        ],
        ["compute_reward", "does not have", "goal-conditioned env"],
    ),
    "her_with_n_step_returns": (
        ["--hparams", "her_tiny", "--hparam_override", "n_step=3"],
        ["memory=her", "n_step=3", "set n_step=1"],
    ),
    "her_strategy_unknown": (
        ["--hparams", "her_tiny", "--hparam_override", "her_strategy=later"],
        ["her_strategy='later'", "future, final, episode"],
    ),
    "her_for_an_agent_without_transition_replay": (
        ["--hparams", "drqn_tiny", "--env", "BitFlipping-v0", "--hparam_override", "memory=her"],
        ["agent 'drqn' cannot learn from memory=her", "set memory=uniform"],
    ),
    "her_replay_smaller_than_an_episode": (
        ["--hparams", "sac_her_tiny", "--hparam_override", "buffer_size=40"],
        ["memory=her keeps whole episodes", "50 steps", "buffer_size=40", "above 50"],
    ),
    "her_with_ray_actors": (
        ["--hparams", "her_tiny", "--num_workers", "2"],
        ["memory=her", "--num_workers 1"],
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_input(case, capsys, tmp_path):
    extra, keywords = BAD_INPUTS[case]
    output_dir = tmp_path / "out"
    argv = ["--hparams", TINY_SET, "--output_dir", output_dir, *extra]
    if "--hparams" in extra:  # the case names its own set
        argv = ["--output_dir", output_dir, *extra]
    assert_user_error(capsys, argv, keywords, tmp_path)
    assert not output_dir.exists()


def test_missing_required_flags(capsys, tmp_path):
    out = tmp_path / "out"
    assert_user_error(capsys, ["--output_dir", out], ["--hparams is required"], tmp_path)
    assert_user_error(capsys, ["--hparams", TINY_SET], ["--output_dir is required"], tmp_path)
    assert not out.exists()


@pytest.mark.e2e  # the exit status and stderr of a real process
def test_bad_input_in_a_real_process(run_train, tmp_path):
    """The process-level contract: status 2 and one line even with TF's own stderr chatter."""
    output_dir = tmp_path / "out"
    proc = run_train(["--hparams", "dqn_cartpol", "--output_dir", output_dir], timeout=120)
    lines = stderr_lines(proc.stderr)
    assert proc.returncode == 2, describe(proc)
    assert len(lines) == 1, describe(proc)
    # train.py mutes TF's import-time C++ logging, so the raw stderr is that one line too.
    assert proc.stderr.strip().splitlines() == lines, describe(proc)
    assert "unknown hparams set 'dqn_cartpol'" in lines[0] and "dqn_cartpole" in lines[0]
    assert "Traceback" not in proc.stderr
    assert not output_dir.exists()


# --------------------------------------------------------------------------------- bad paths


def test_output_dir_under_a_regular_file(capsys, tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory\n")
    output_dir = blocker / "sub" / "out"
    assert_user_error(
        capsys,
        ["--hparams", TINY_SET, "--output_dir", output_dir],
        ["--output_dir", "is a file", "a_file"],
        tmp_path,
    )
    assert blocker.read_text() == "not a directory\n"


def test_output_dir_is_a_regular_file(capsys, tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("x")
    assert_user_error(
        capsys,
        ["--hparams", TINY_SET, "--output_dir", blocker],
        ["--output_dir", "is a file"],
        tmp_path,
    )


@pytest.mark.skipif(
    os.geteuid() == 0, reason="root ignores directory permissions (covered by the file cases)"
)
def test_output_dir_in_read_only_directory(capsys, tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        assert_user_error(
            capsys,
            ["--hparams", TINY_SET, "--output_dir", locked / "out"],
            ["--output_dir", "not writable"],
            tmp_path,
        )
    finally:
        locked.chmod(0o700)


def test_output_dir_under_proc(capsys, tmp_path):
    output_dir = Path("/proc/rl_test_output_dir")
    if not Path("/proc").is_dir():
        pytest.skip("no /proc on this system")
    assert_user_error(
        capsys,
        ["--hparams", TINY_SET, "--output_dir", output_dir],
        ["--output_dir", "rl_test_output_dir"],
        tmp_path,
    )
    assert not output_dir.exists()


# ------------------------------------------------------------------------ existing run dirs


def test_test_mode_without_checkpoint(capsys, tmp_path):
    argv = ["--hparams", TINY_SET, "--output_dir", tmp_path / "out", "--training", "False"]
    assert_user_error(capsys, argv, ["--training False", "checkpoint", "run_0"], tmp_path)
    assert not (tmp_path / "out").exists()
    # An existing but checkpoint-less run dir is refused too, and left alone.
    (tmp_path / "out" / "run_0").mkdir(parents=True)
    (tmp_path / "out" / "run_0" / "notes.txt").write_text("mine\n")
    assert_user_error(capsys, argv, ["--training False", "checkpoint"], tmp_path)


def test_unreadable_saved_hparams(capsys, tmp_path):
    run_dir = tmp_path / "out" / "run_0"
    run_dir.mkdir(parents=True)
    (run_dir / "hparams.json").write_text("{not json")
    argv = ["--hparams", TINY_SET, "--output_dir", tmp_path / "out"]
    assert_user_error(capsys, argv, ["hparams JSON is not readable"], tmp_path)


def test_run_dir_is_a_regular_file(capsys, tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "run_0").write_text("not a directory\n")
    argv = ["--hparams", TINY_SET, "--output_dir", tmp_path / "out"]
    assert_user_error(capsys, argv, ["run_0", "not a directory"], tmp_path)


@pytest.mark.parametrize(
    ("pointer", "training"),
    [
        ("{not json", "True"),
        ("{not json", "False"),
        ('{"step": 300, "directory": "step_000000000300"}', "True"),
        ('{"step": 300, "directory": "step_000000000300"}', "False"),
    ],
)
def test_damaged_checkpoint_pointer(capsys, tmp_path, pointer, training):
    checkpoints = tmp_path / "out" / "run_0" / "checkpoints"
    checkpoints.mkdir(parents=True)
    (checkpoints / "latest.json").write_text(pointer)
    argv = ["--hparams", TINY_SET, "--output_dir", tmp_path / "out", "--training", training]
    assert_user_error(capsys, argv, ["latest.json"], tmp_path)


def test_resume_with_different_hparams(capsys, trained_run):
    output_dir, args, proc = trained_run(TINY_SET)
    assert proc.returncode == 0, describe(proc)
    argv = [*args, "--hparam_override", "lr=0.5"]
    line = assert_user_error(
        capsys, argv, ["different hparams", "lr", "0.5", "--allow_hparams_change"], output_dir
    )
    assert "run_0" in line
    # A changed --env is a changed hparam too.
    argv = [*args, "--env", "CartPole-v0"]
    assert_user_error(capsys, argv, ["env", "CartPole-v0", "--allow_hparams_change"], output_dir)


# ----------------------------------------------------------------------- bool flag parsing


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        ([], False),
        (["--render"], True),
        (["--render", "True"], True),
        (["--render", "true"], True),
        (["--render=True"], True),
        (["--render=false"], False),
        (["--render", "False"], False),
        (["--render", "0"], False),
        (["--render", "yes"], True),
    ],
)
def test_bool_flag_parses(argv, expected):
    args = build_parser().parse_args(["--hparams", TINY_SET, *argv])
    assert args.render is expected


def test_bool_flags_defaults():
    args = build_parser().parse_args([])
    assert args.training is True
    assert args.render is False and args.record_video is False
    assert args.allow_hparams_change is False
    assert build_parser().parse_args(["--training=False"]).training is False
    assert build_parser().parse_args(["--training", "--render"]).training is True


@pytest.mark.parametrize("bad", [["--render", "maybe"], ["--render=2"], ["--training=nah"]])
def test_bool_flag_rejects(bad):
    with pytest.raises(UserError, match="expected True or False"):
        build_parser().parse_args(bad)


@pytest.mark.parametrize("grace", ["0", "-5"])
def test_preemption_grace_must_be_positive(capsys, tmp_path, grace):
    argv = ["--hparams", TINY_SET, "--output_dir", tmp_path / "out", "--preemption_grace", grace]
    assert_user_error(capsys, argv, ["--preemption_grace must be > 0"], tmp_path)
