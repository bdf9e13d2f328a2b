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
    hp.add("episodes", 10, "Greedy episodes per evaluation, played in parallel env copies.")
    hp.add("video_every", 5, "With --record_video: film one episode every this many evaluations.")
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
    hp.add("num_envs", 1, "Training env copies stepped together (a gymnasium vector env).")
    hp.add("train_steps", 100_000, "Total env steps (summed over env copies).")
    hp.add("train_every", 4, "Env steps collected between two agent update calls.")
    hp.add("eval", evaluation_protocol(), "Evaluation protocol.")
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
    hp.add("jit_compile", True, "XLA-compile the learner's update function.")
    hp.add("model", "mlp", "Registered torso network (train.py --list).")
    hp.add("hidden_sizes", [64, 64], "Units of each hidden layer of the torso.")
    hp.add("activation", "relu", "Keras activation of the hidden layers.")
    hp.add("optimizer", "adam", "adam, rmsprop or sgd.")
    hp.add("lr", 1e-3, "Learning rate: a number or a schedule of the gradient step.", type=Schedule)
    hp.add("adam_epsilon", 1e-7, "Optimizer epsilon (Adam/RMSprop).")
    hp.add("max_grad_norm", 10.0, "Clip gradients to this global norm (0: no clipping).")
    hp.add("gamma", 0.99, "Discount factor.")
    return hp
