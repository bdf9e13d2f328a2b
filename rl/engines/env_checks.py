"""What train.py checks about the env before anything is written: that the agent takes its
observations (a Dict space, an action mask; docs/observations.md, docs/masking.md) and, for
hindsight replay, that the env has goals to relabel (docs/goal_conditioned.md). One copy of the
env is built and closed for it, since an `info["action_mask"]` shows only after a reset.
"""

from __future__ import annotations

from rl import registry
from rl.envs import single_env_spec
from rl.envs.goals import check_goal_env
from rl.errors import UserError
from rl.hparams import HParams
from rl.hparams.compiled_path import runs_compiled
from rl.memory import hindsight


def check_agent_takes_env(hparams: HParams) -> None:
    """UserError naming the problem and the fix when `hparams.agent` cannot take `hparams.env`'s
    observations; nothing for sets without an agent or agents registered by the env's module."""
    if "agent" not in hparams.keys():
        return
    spec = single_env_spec(hparams.env, hparams.env_kwargs)
    if hparams.agent not in registry.agents:  # a `module:Class` env may register it on import
        return
    registry.agents.get(hparams.agent).check_env(hparams.agent, spec)


def check_hindsight_replay(hparams: HParams, num_workers: int) -> None:
    """UserError, naming the fix, for a `memory=her` run that cannot relabel goals: an agent
    without transition replay, n-step returns, Ray actors, an env without goals."""
    if "memory" not in hparams or hparams.memory != hindsight.NAME:
        return
    if runs_compiled(hparams.env):
        raise UserError(
            f"memory=her keeps episodes in numpy, but env {hparams.env!r} runs on the compiled "
            "path, which has no hindsight replay; use a gymnasium goal env (e.g. FetchReach-v4)"
        )
    agent = hparams.agent
    if agent in registry.agents and not registry.agents.get(agent).replays_with_hindsight:
        raise UserError(
            f"agent {agent!r} cannot learn from memory=her; hindsight replay is for the agents "
            "that replay single transitions (dqn, c51, qrdqn, sac, td3, ddpg): pick one of them "
            "or set memory=uniform"
        )
    if hparams.her_strategy not in hindsight.STRATEGIES:
        raise UserError(
            f"her_strategy={hparams.her_strategy!r} is not a HER strategy; use one of "
            f"{', '.join(hindsight.STRATEGIES)}"
        )
    if hparams.her_n_sampled_goal < 0:
        raise UserError(f"her_n_sampled_goal must be >= 0, got {hparams.her_n_sampled_goal}")
    if "n_step" in hparams and hparams.n_step != 1:
        raise UserError(
            f"memory=her replays single transitions (a relabelled reward is one step's), but "
            f"n_step={hparams.n_step}; set n_step=1"
        )
    if num_workers > 1:
        raise UserError(
            "memory=her keeps whole episodes in the learner's replay, which Ray actors do not "
            "send; train it with --num_workers 1"
        )
    spec = single_env_spec(hparams.env, hparams.env_kwargs)
    check_goal_env(hparams.env, hparams.env_kwargs, spec)
    longest = hparams.max_episode_steps or spec.max_episode_steps
    if longest and hparams.buffer_size // hparams.num_envs <= longest:
        raise UserError(
            f"memory=her keeps whole episodes, up to {longest} steps per env copy here, but "
            f"buffer_size={hparams.buffer_size} holds {hparams.buffer_size // hparams.num_envs} "
            f"per copy; raise buffer_size above {longest * hparams.num_envs}"
        )
