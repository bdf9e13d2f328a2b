"""Hyper-parameters every experiment has: env, run length, evaluation, checkpoints, logging.

Algorithm families start from `base()` and add their own keys (see rl/hparams/dqn.py).
"""

from __future__ import annotations

from rl.hparams.hparams import HParams
from rl.hparams.schedules import Schedule


def evaluation_protocol() -> HParams:
    """How evaluation is done; a nested object so it is declared, logged and compared as one."""
    hp = HParams()
    hp.add("every_steps", 5000, "Evaluate every this many env steps (and at the end).")
    hp.add(
        "episodes",
        10,
        "Episodes per evaluation (full games on Atari), played in parallel env copies.",
    )
    hp.add(
        "epsilon",
        0.0,
        "Probability of a uniformly random action at each evaluation step (0: greedy; Atari "
        "protocols use 0.001 to 0.05).",
    )
    hp.add(
        "max_episode_steps",
        None,
        "Time limit of evaluation episodes (None: the training one); on Atari it caps the "
        "whole game in agent steps.",
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
        "Most env steps one evaluation may take, summed over its env copies (Atari: agent "
        "steps, x frame_skip for frames); episodes still running then are cut, count with "
        "their score so far and are reported (eval/truncated_episodes). None: no budget, as "
        "the published protocols.",
        type=int | None,
    )
    hp.add("video_every", 5, "With --record_video: film one episode every this many evaluations.")
    return hp


def check_evaluation_protocol(protocol: HParams, env: str | None = None) -> None:
    """Value ranges of the `eval` group that its types cannot express (UserError); with `env`,
    also that sticky actions are only switched on or off for Atari envs."""
    from rl.errors import UserError

    for key in ("every_steps", "episodes", "video_every"):
        if getattr(protocol, key) < 1:
            raise UserError(f"eval.{key} must be >= 1, got {getattr(protocol, key)}")
    if not 0.0 <= protocol.epsilon <= 1.0:
        raise UserError(f"eval.epsilon must be in [0, 1] (0: greedy), got {protocol.epsilon}")
    for key in ("max_episode_steps", "step_budget"):
        if getattr(protocol, key) is not None and getattr(protocol, key) < 1:
            raise UserError(f"eval.{key} must be >= 1 or None, got {getattr(protocol, key)}")
    if env is not None and env.startswith("tf/"):
        changed = [
            f"eval.{key}={getattr(protocol, key)}"
            for key, default in (
                ("epsilon", 0.0),
                ("max_episode_steps", None),
                ("step_budget", None),
            )
            if getattr(protocol, key) != default
        ]
        if changed:
            raise UserError(
                f"{', '.join(changed)}: the compiled path (env {env!r}) evaluates greedily "
                "within max_episode_steps; leave eval.epsilon=0, eval.max_episode_steps=None "
                "and eval.step_budget=None"
            )
    if env is not None and protocol.sticky_actions is not None:
        from rl.envs.atari import is_atari_id  # lazily: hparams do not depend on envs

        if not is_atari_id(env):
            raise UserError(
                f"eval.sticky_actions={protocol.sticky_actions} applies to Atari envs only and "
                f"env {env!r} has no sticky actions; leave eval.sticky_actions=None"
            )


def parallel_workers() -> HParams:
    """How `train.py --num_workers N` (N > 1) runs replay agents: Ape-X actor processes feeding
    the learner's replay (docs/workers.md). On-policy agents only split their env copies over
    the N processes and read none of these keys."""
    hp = HParams()
    hp.add(
        "policy_refresh_every",
        1,
        "Learner update calls between two publications of the weights to the actors.",
    )
    hp.add(
        "exploration",
        "apex",
        "apex: actor i of N uses epsilon = apex_epsilon^(1 + apex_alpha * i / (N - 1)) after "
        "learning_starts (agents with an epsilon; others keep their own exploration); agent: "
        "every actor follows the agent's own exploration schedule.",
    )
    hp.add("apex_epsilon", 0.4, "Ape-X base epsilon (the paper's 0.4).")
    hp.add("apex_alpha", 7.0, "Ape-X epsilon exponent spread alpha (the paper's 7).")
    hp.add("block_steps", 50, "Vector-env steps an actor collects before sending them as a block.")
    hp.add(
        "queue_blocks",
        4,
        "Blocks each actor may have waiting for the learner; beyond that actors wait.",
    )
    hp.add(
        "rate_limit",
        True,
        "Cap learning at the set's replay ratio (gradient_steps per train_every env steps); "
        "False: the learner trains as fast as it can, as in Ape-X.",
    )
    return hp


def base() -> HParams:
    """Keys shared by every agent. Runtime facts (obs shapes, counters) never live here."""
    hp = HParams()
    hp.add("agent", "dqn", "Registered agent name (train.py --list).")
    hp.add("env", "CartPole-v1", "Gymnasium id, registered env name or module.path:EnvClass.")
    hp.add("env_kwargs", {}, "Keyword arguments for the env constructor.")
    hp.add(
        "max_episode_steps",
        None,
        "Time limit replacing the env's own (None: keep it).",
        type=int | None,
    )
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
    hp.add("train_steps", 100_000, "Total env steps (summed over env copies).")
    hp.add("train_every", 4, "Env steps collected between two agent update calls.")
    hp.add("eval", evaluation_protocol(), "Evaluation protocol.")
    hp.add("workers", parallel_workers(), "Parallel workers (train.py --num_workers > 1).")
    hp.add(
        "stop_at_eval_return",
        None,
        "Stop once an evaluation's mean return reaches this (None: train to train_steps).",
        type=float | None,
    )
    hp.add("checkpoint_every", 10_000, "Checkpoint every this many env steps (and at the end).")
    hp.add("keep_checkpoints", 3, "How many recent checkpoints to keep.")
    hp.add("log_every", 1000, "Write training scalars every this many env steps.")
    hp.add("deterministic", True, "Deterministic TF ops (exact resume; costs little on CPU).")
    hp.add(
        "jit_compile",
        "auto",
        "XLA-compile the learner's update (and the acting) functions: true, false or auto "
        "(XLA on GPU/TPU and for non-convolutional models on CPU; TF's own kernels for "
        "convolutional models on CPU, where XLA is slower: rl/utils/compiler.py).",
        type="auto[bool]",
    )
    hp.add(
        "seed_shards",
        1,
        "--copies on a TF-ops env: concurrent programs (one thread each) the seeds are split "
        "into; 0: one per usable CPU core (one when a GPU/TPU is visible).",
    )
    hp.add(
        "model",
        "auto",
        "Registered torso network (train.py --list); auto: the Nature CNN for image "
        "observations ([H, W, C]), the MLP otherwise.",
    )
    hp.add("hidden_sizes", [64, 64], "Units of each hidden layer of the torso.")
    hp.add("activation", "relu", "Keras activation of the hidden layers.")
    hp.add(
        "optimizer",
        "adam",
        "adam, rmsprop (Keras': rho 0.9, epsilon inside the root), rmsprop_torch (PyTorch's, "
        "as SB3's A2C: alpha 0.99, epsilon outside the root) or sgd.",
    )
    hp.add("lr", 1e-3, "Learning rate: a number or a schedule of the gradient step.", type=Schedule)
    hp.add("adam_epsilon", 1e-7, "Optimizer epsilon (Adam/RMSprop).")
    hp.add("max_grad_norm", 10.0, "Clip gradients to this global norm (0: no clipping).")
    hp.add("gamma", 0.99, "Discount factor.")
    return hp
