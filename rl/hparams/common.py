"""Keys every experiment has (`base()`) and the key groups several families share (`add_*`),
declared once so that a key means the same thing wherever it appears."""

from __future__ import annotations

from typing import Any

from rl.errors import UserError
from rl.hparams.compiled_path import runs_compiled
from rl.hparams.hparams import HParams
from rl.hparams.schedules import Schedule


def evaluation_protocol() -> HParams:
    """How evaluation is done; a nested object so it is declared, logged and compared as one."""
    hp = HParams()
    hp.add("every_steps", 5000, "Evaluate every this many env steps (and at the end).")
    hp.add("episodes", 10, "Episodes per evaluation (full games on Atari), in parallel env copies.")
    hp.add(
        "epsilon",
        0.0,
        "Probability of a uniformly random action at each evaluation step (0: greedy; Atari "
        "protocols use 0.001 to 0.05).",
        fixed_because="is the same at every evaluation, so that scores compare across a run",
    )
    hp.add(
        "sample_actions",
        False,
        "Sample actions from a stochastic policy (PPO, A2C, SAC, ...) instead of its mode (argmax, "
        "Gaussian mean), as rl-baselines3-zoo evaluates Atari PPO (docs/evaluation_protocol.md).",
    )
    hp.add(
        "max_episode_steps",
        None,
        "Evaluation time limit (None: training's); on Atari it caps the whole game in agent steps.",
        type=int | None,
    )
    hp.add(
        "sticky_actions",
        None,
        "Atari only: sticky actions while evaluating, True (training's repeat probability, or "
        "0.25 if that is 0), False (none) or None (as in training).",
        type=bool | None,
    )
    hp.add(
        "step_budget",
        None,
        "Most env steps one evaluation may take, summed over its env copies (Atari: agent steps, "
        "x frame_skip for frames); episodes still running then are cut, count with their score so "
        "far and are reported (eval/truncated_episodes). None: no budget, as published protocols.",
        type=int | None,
    )
    hp.add("video_every", 5, "With --record_video: film one episode every this many evaluations.")
    return hp.add(
        "env_kwargs",
        {},
        "Changes to env_kwargs for evaluation, test mode and videos only ({}: the training "
        "env), e.g. procgen's unseen levels {'num_levels': 0} to measure generalization.",
    )


# The `eval` values the compiled path's evaluation is fixed at (rl/compiled).
_COMPILED_PATH_EVAL = dict(
    epsilon=0.0, sample_actions=False, max_episode_steps=None, step_budget=None, env_kwargs={}
)


def check_evaluation_protocol(protocol: HParams, env: str | None = None) -> None:
    """Value ranges of the `eval` group that its types cannot express (UserError); with `env`,
    also what the compiled path's evaluation cannot change (sticky actions: the env's check)."""
    for key in ("every_steps", "episodes", "video_every"):
        if getattr(protocol, key) < 1:
            raise UserError(f"eval.{key} must be >= 1, got {getattr(protocol, key)}")
    if not 0.0 <= protocol.epsilon <= 1.0:
        raise UserError(f"eval.epsilon must be in [0, 1] (0: greedy), got {protocol.epsilon}")
    for key in ("max_episode_steps", "step_budget"):
        if getattr(protocol, key) is not None and getattr(protocol, key) < 1:
            raise UserError(f"eval.{key} must be >= 1 or None, got {getattr(protocol, key)}")
    if env is not None and runs_compiled(env):
        changed = [k for k, fixed in _COMPILED_PATH_EVAL.items() if getattr(protocol, k) != fixed]
        if changed:
            raise UserError(
                ", ".join(f"eval.{k}={getattr(protocol, k)}" for k in changed)
                + f": the compiled path (env {env!r}) evaluates greedily within max_episode_steps "
                "on the training env; leave "
                + ", ".join(f"eval.{k}={fixed}" for k, fixed in _COMPILED_PATH_EVAL.items())
            )


def parallel_workers() -> HParams:
    """How `--num_workers N` (N > 1) runs replay agents' Ape-X actors (docs/workers.md)."""
    hp = HParams()
    hp.add("policy_refresh_every", 1, "Learner update calls between weight publications to actors.")
    hp.add(
        "exploration",
        "apex",
        "apex: actor i of N uses epsilon = apex_epsilon^(1 + apex_alpha * i / (N - 1)) after "
        "learning_starts (agents with an epsilon; others keep their own exploration); agent: "
        "every actor follows the agent's own exploration schedule.",
    )
    actors_start = "fixes each actor's epsilon when the actors start"
    hp.add("apex_epsilon", 0.4, "Ape-X base epsilon (the paper's 0.4).", fixed_because=actors_start)
    hp.add("apex_alpha", 7.0, "Ape-X exponent alpha (the paper's 7).", fixed_because=actors_start)
    hp.add("block_steps", 50, "Vector-env steps an actor collects before sending them as a block.")
    hp.add("queue_blocks", 4, "Blocks each actor may have waiting for the learner before it waits.")
    return hp.add(
        "rate_limit",
        True,
        "Cap learning at the set's replay ratio (gradient_steps per train_every env steps); "
        "False: the learner trains as fast as it can, as in Ape-X.",
    )


def base() -> HParams:
    """Keys shared by every agent. Runtime facts (obs shapes, counters) never live here."""
    hp = HParams()
    hp.add("agent", "dqn", "Registered agent name (train.py --list).")
    _add_env_keys(hp)
    _add_run_keys(hp)
    _add_network_keys(hp)
    _add_optimizer_keys(hp)
    return hp.add(
        "gamma",
        0.99,
        "Discount factor.",
        fixed_because="defines the return every value estimate of the run is of (n-step "
        "replay also discounts rewards with it as it stores them)",
    )


def _add_env_keys(hp: HParams) -> None:
    """The training env: which one, its copies and its reward."""
    hp.add("env", "CartPole-v1", "Gymnasium id, registered env name or module.path:EnvClass.")
    hp.add("env_kwargs", {}, "Keyword arguments for the env constructor.")
    hp.add("max_episode_steps", None, "Episode time limit (None: the env's own).", type=int | None)
    hp.add(
        "reward_augmentation",
        None,
        "Registered reward augmentation of the TRAINING envs, e.g. mountain_car_energy (None: "
        "the env's reward). Evaluation and test always report the env's own reward.",
        type=str | None,
    )
    hp.add(
        "reward_augmentation_kwargs",
        {},
        "Keyword arguments of the reward augmentation (shaping takes gamma from `gamma`).",
    )
    hp.add("num_envs", 1, "Training env copies stepped together (a gymnasium vector env).")


def _add_run_keys(hp: HParams) -> None:
    """The run's length, cadence (evaluation, checkpoints, logs) and how it computes."""
    hp.add("train_steps", 100_000, "Total env steps (summed over env copies).")
    hp.add("train_every", 4, "Env steps collected between two agent update calls.")
    hp.add("eval", evaluation_protocol(), "Evaluation protocol.")
    hp.add("workers", parallel_workers(), "Parallel workers (train.py --num_workers > 1).")
    hp.add(
        "stop_at_eval_return",
        None,
        "Stop once an evaluation's mean return reaches this (None: train to train_steps).",
        type=float | None,
        fixed_because="is the training loop's threshold for each evaluation's return",
    )
    hp.add("checkpoint_every", 10_000, "Checkpoint every this many env steps (and at the end).")
    hp.add("keep_checkpoints", 3, "How many recent checkpoints to keep.")
    hp.add(
        "halt_on_nonfinite",
        True,
        "Stop a run at its first non-finite loss (checked every update) or parameter (checked "
        "before every checkpoint), keeping its last good checkpoint as the latest; False trains "
        "on (research on divergence).",
    )
    hp.add("log_every", 1000, "Write training scalars every this many env steps.")
    hp.add("deterministic", True, "Deterministic TF ops (exact resume; costs little on CPU).")
    hp.add(
        "jit_compile",
        "auto",
        "XLA-compile the learner's update (and the acting) functions: true, false or auto (XLA on "
        "GPU/TPU and for non-convolutional models on CPU; TF's own kernels for convolutional "
        "models on CPU, where XLA is slower: rl/utils/compiler.py).",
        type="auto[bool]",
    )
    hp.add(
        "seed_shards",
        1,
        "--copies on a TF-ops env: concurrent programs (one thread each) the seeds are split "
        "into; 0: one per usable CPU core (one when a GPU/TPU is visible).",
    )


def _add_network_keys(hp: HParams) -> None:
    """The torso network and the precision it computes in."""
    hp.add(
        "model",
        "auto",
        "Registered torso network (train.py --list); auto: the Nature CNN for image "
        "observations ([H, W, C]), the MLP otherwise.",
    )
    hp.add("hidden_sizes", [64, 64], "Units of each hidden layer of the torso.")
    hp.add("activation", "relu", "Keras activation of the hidden layers.")
    hp.add(
        "precision",
        "float32",
        "What the torsos and recurrent cores compute in: float32, mixed_bfloat16 or mixed_float16 "
        "(Keras mixed precision: variables, heads, distributions and losses stay float32; "
        "mixed_float16 adds dynamic loss scaling). Not for cmaes.",
    )


def _add_optimizer_keys(hp: HParams) -> None:
    """The optimizer, its learning rate and gradient clipping."""
    hp.add(
        "optimizer",
        "adam",
        "Registered optimizer (train.py --list): adam, rmsprop (Keras': rho 0.9, epsilon in the "
        "root), rmsprop_torch (PyTorch's, SB3's A2C: alpha 0.99, epsilon outside the root) or sgd.",
    )
    hp.add("lr", 1e-3, "Learning rate: a number or a schedule of the gradient step.", type=Schedule)
    hp.add("adam_epsilon", 1e-7, "Optimizer epsilon (Adam/RMSprop).")
    hp.add(
        "max_grad_norm",
        10.0,
        "Clip gradients to this global norm (0: no clipping); a number or a schedule of the "
        "gradient step (no clipping at the steps where it is <= 0).",
        type=Schedule,
    )


def add_replay_keys(
    hp: HParams, *, buffer_size: int, batch_size: int, learning_starts: int
) -> HParams:
    """Replay keys of the transition-replay agents: defaults differ per family, meanings do not."""
    hp.add(
        "memory",
        "uniform",
        "Replay memory: uniform, prioritized or her (hindsight replay of a goal-conditioned "
        "env; docs/goal_conditioned.md).",
    )
    hp.add("buffer_size", buffer_size, "Replay capacity in transitions.")
    hp.add("batch_size", batch_size, "Transitions per gradient step.")
    hp.add("learning_starts", learning_starts, "Uniformly random env steps before learning.")
    hp.add(
        "her_strategy",
        "future",
        "memory=her: which achieved goal replaces a transition's goal: future (one reached later "
        "in its episode), final (the episode's last) or episode (any of the episode's).",
    )
    return hp.add(
        "her_n_sampled_goal",
        4,
        "memory=her: relabelled transitions per real one; a batch has a fraction "
        "1 - 1/(her_n_sampled_goal + 1) of them (0.8 at 4).",
    )


def add_prioritized_replay_keys(hp: HParams) -> HParams:
    """The prioritized-replay keys, with Schaul et al. 2015's defaults (memory=prioritized)."""
    hp.add(
        "per_alpha",
        0.6,
        "Prioritized replay: priority exponent alpha, a schedule of the env step (new |TD "
        "errors| are raised to its value at the update; stored priorities keep theirs).",
        type=Schedule,
    )
    hp.add(
        "per_beta",
        "linear(0.4, 1.0, 100000)",
        "Prioritized replay: importance-sampling exponent beta, a schedule of the env step.",
        type=Schedule,
    )
    return hp.add(
        "per_epsilon",
        1e-6,
        "Prioritized replay: added to |TD error| before alpha; a number or a schedule of the "
        "env step (as per_alpha: stored priorities keep theirs until replayed).",
        type=Schedule,
    )


CARTPOLE_SOLVED = 475.0  # CartPole-v1's "solved" mean return (gymnasium's reward_threshold)


def cartpole_protocol(hp: HParams, *, eval_every_steps: int, env: str = "CartPole-v1") -> HParams:
    """CartPole-v1 (or a variant with its reward), stopping at the "solved" mean return: the
    last checkpoint is then the solved agent, and runs do not go on to a later collapse."""
    hp.eval.every_steps = eval_every_steps
    return hp.update(env=env, stop_at_eval_return=CARTPOLE_SOLVED)


def smoke_test_settings(
    hp: HParams, *, every: int, log_every: int, eval_episodes: int = 2, **updates: Any
) -> HParams:
    """What every `*_tiny` set shares: a run of a few hundred steps passes through evaluation,
    checkpointing and resume (`updates`, e.g. max_episode_steps, make episodes end inside it),
    with the learner on TF's kernels. XLA-compiling a tiny learner costs 2-6 CPU-seconds, more than
    the whole run otherwise, and the test tier builds each set many times; the tests that are about
    XLA set `jit_compile` themselves (tests/agents/test_every_learner_lowers_to_xla.py lowers every
    agent's learner, tests/compiled/ runs the XLA programs)."""
    hp.eval.update(every_steps=every, episodes=eval_episodes)
    return hp.update(checkpoint_every=every, log_every=log_every, jit_compile=False, **updates)


def rollouts(hp: HParams, *, num_envs: int, steps_per_env: int, **updates: Any) -> HParams:
    """Updates every `steps_per_env` steps of each of `num_envs` env copies (SB3's n_envs x n_steps,
    as papers and the zoo state them), with the rollout's other keys (batch_size, n_epochs)."""
    return hp.update(num_envs=num_envs, train_every=num_envs * steps_per_env, **updates)
