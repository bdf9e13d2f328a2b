"""One PPO iteration over TF-ops envs as ONE XLA program: rollout, GAE, all update epochs.

Why: DESIGN.md ("Speed rules", compiled path). With the env written in TF ops (`rl.envs.tf`),
nothing in an iteration needs the host, so `CompiledPPO.iteration` is a
`tf.function(jit_compile=True)` without arguments that

1. steps the N envs T times in a `tf.while_loop` (inside `tf.scan`), sampling actions from the
   policy with the agent's own `tf.random.Generator` (`agent.act(obs, explore=True)`, Gumbel-max
   for discrete actions), and keeps per-env running episode returns/lengths;
2. hands the time-major [T, N] batch to the agent's own compiled-update body
   (`OnPolicyAgent._train`: behaviour log-probs and values, truncation folded into the rewards
   with V(final_obs), the registered advantage estimator (GAE), then n_epochs x minibatches of
   PPO gradient steps shuffled with the agent's generator, lr/clip schedules evaluated at each
   gradient step). Losses, GAE, model, optimizer and schedules are the agent's, not copies.

All state lives in variables: the agent's (weights, optimizer slots, env/gradient step counters,
generator) and `EnvVariables` (the `EnvState` tensors plus running episode statistics). So one
`tf.train.Checkpoint(agent=..., env=...)` is the whole run state, a restored run continues
exactly where it stopped (no episode cut, unlike the Python-env trainer), and the iteration
function has no inputs, so it is traced once.

Greedy evaluation is compiled the same way (`CompiledPPO.evaluate(seed, num_envs)`): a fresh
reset of `num_envs` envs, each playing exactly one greedy episode, in one `tf.while_loop`.
"""

from __future__ import annotations

import os
import tempfile

import numpy as np
import tensorflow as tf

from rl.agents.base import Agent
from rl.envs.tf import EnvState, TFEnv
from rl.errors import UserError
from rl.hparams import HParams
from rl.registry import get_agent
from rl.utils.seeding import derive_seed, seed_everything


class EnvVariables(tf.Module):
    """The `EnvState` of the training envs, and running episode stats, as tf.Variables.

    uint32 RNG words are stored bit-cast to int32 (plain int32 variables checkpoint and assign
    on every device).
    """

    def __init__(self, env: TFEnv, num_envs: int, seed: int) -> None:
        super().__init__(name="env_variables")
        state, _ = env.reset(seed, num_envs)
        self.physics = tf.Variable(state.physics, trainable=False, name="physics")
        self.elapsed = tf.Variable(state.elapsed, trainable=False, name="elapsed")
        self.key = tf.Variable(tf.bitcast(state.key, tf.int32), trainable=False, name="key")
        self.episode = tf.Variable(
            tf.bitcast(state.episode, tf.int32), trainable=False, name="episode"
        )
        self.episode_return = tf.Variable(
            tf.zeros([num_envs], tf.float32), trainable=False, name="episode_return"
        )
        self.episode_length = tf.Variable(
            tf.zeros([num_envs], tf.int32), trainable=False, name="episode_length"
        )

    def read(self) -> EnvState:
        return EnvState(
            self.physics.read_value(),
            self.elapsed.read_value(),
            tf.bitcast(self.key.read_value(), tf.uint32),
            tf.bitcast(self.episode.read_value(), tf.uint32),
        )

    def write(self, state: EnvState) -> None:
        self.physics.assign(state.physics)
        self.elapsed.assign(state.elapsed)
        self.key.assign(tf.bitcast(state.key, tf.int32))
        self.episode.assign(tf.bitcast(state.episode, tf.int32))


class CompiledPPO:
    """The agent, the training envs' variables and the compiled iteration/evaluation.

    `seed` is the run's seed; the weight init, agent generator and env seeds derive from it
    exactly as in `rl.trainer.Trainer` (`derive_seed(seed, "init" | "agent" | "train_env")`).
    """

    def __init__(self, hparams: HParams, env: TFEnv, seed: int) -> None:
        self.hp = hparams
        self.env = env
        self.seed = seed
        num_envs = hparams.num_envs
        self.spec = env.spec(num_envs)
        seed_everything(derive_seed(seed, "init"), hparams.deterministic)
        self.agent: Agent = get_agent(hparams.agent)(self.spec, hparams, derive_seed(seed, "agent"))
        if not hasattr(self.agent, "_train"):
            raise UserError(
                f"agent {hparams.agent!r} has no compiled path for TF-ops envs ({hparams.env!r});"
                " use an on-policy agent (ppo, a2c, reinforce) or a gymnasium env"
            )
        self.env_vars = EnvVariables(env, num_envs, derive_seed(seed, "train_env", 0))
        self.num_steps = self.agent.steps_per_iteration  # T
        self.steps_per_iteration = self.num_steps * num_envs  # env steps per call
        self.checkpoint = tf.train.Checkpoint(agent=self.agent, env=self.env_vars)
        self.iteration = tf.function(self._iteration, jit_compile=hparams.jit_compile)
        self._evaluators: dict[int, tf.types.experimental.GenericFunction] = {}

    # ------------------------------------------------------------------ training
    def _iteration(self) -> dict[str, tf.Tensor]:
        agent, env, env_vars = self.agent, self.env, self.env_vars
        num_envs = self.spec.num_envs

        def step(carry, _):
            state, ep_return, ep_length, done_return, done_length, done_count = carry
            obs = env.observe(state)
            action = agent.act(obs, explore=True)
            state, ts = env.step(state, action)
            ep_return = ep_return + ts.reward
            ep_length = ep_length + 1
            done = tf.logical_or(ts.terminated, ts.truncated)
            done_f = tf.cast(done, tf.float32)
            done_return += tf.reduce_sum(ep_return * done_f)
            done_length += tf.reduce_sum(tf.cast(ep_length, tf.float32) * done_f)
            done_count += tf.reduce_sum(done_f)
            ep_return = tf.where(done, 0.0, ep_return)
            ep_length = tf.where(done, 0, ep_length)
            carry = (state, ep_return, ep_length, done_return, done_length, done_count)
            out = (obs, action, ts.reward, ts.terminated, ts.truncated, ts.final_obs)
            return carry, out

        zero = tf.constant(0.0)
        carry = (
            env_vars.read(),
            env_vars.episode_return.read_value(),
            env_vars.episode_length.read_value(),
            zero,
            zero,
            zero,
        )
        action_dtype = tf.int64 if self.spec.discrete else tf.float32
        obs_shape, action_shape = list(self.spec.obs_shape), list(self.spec.action_shape)
        out_init = (
            tf.zeros([num_envs, *obs_shape]),
            tf.zeros([num_envs, *action_shape], action_dtype),
            tf.zeros([num_envs]),
            tf.zeros([num_envs], tf.bool),
            tf.zeros([num_envs], tf.bool),
            tf.zeros([num_envs, *obs_shape]),
        )

        def scan_fn(acc, t):
            return step(acc[0], t)

        carries, outs = tf.scan(scan_fn, tf.range(self.num_steps), initializer=(carry, out_init))
        last = tf.nest.map_structure(lambda x: x[-1], carries)
        state, ep_return, ep_length, done_return, done_length, done_count = last
        env_vars.write(state)
        env_vars.episode_return.assign(ep_return)
        env_vars.episode_length.assign(ep_length)
        agent.env_steps.assign_add(self.steps_per_iteration)

        obs, action, reward, terminated, truncated, final_obs = outs
        batch = {
            "obs": obs,
            "action": action,
            "reward": reward,
            "terminated": terminated,
            "truncated": truncated,
            "final_obs": final_obs,
            "last_next_obs": env.observe(state),
        }
        # Recomputed by `_train` from the acting weights (unchanged during the rollout).
        batch["log_prob"] = tf.zeros_like(reward)
        batch["value"] = tf.zeros_like(reward)
        metrics = dict(agent._train(batch))  # the agent's own update body (see module doc)
        metrics["episodes_done"] = done_count
        metrics["episode_return_sum"] = done_return
        metrics["episode_length_sum"] = done_length
        return metrics

    def run_iteration(self) -> dict[str, float]:
        """One compiled iteration; its metrics as Python floats (one host sync)."""
        return {k: float(v) for k, v in self.iteration().items()}

    # ---------------------------------------------------------------- evaluation
    def evaluate(self, seed: int, num_envs: int) -> tuple[np.ndarray, np.ndarray]:
        """(returns, lengths) of one greedy episode in each of `num_envs` fresh envs reset with
        `seed`: one compiled call (traced once per `num_envs`, the seed is a tensor)."""
        if num_envs not in self._evaluators:
            self._evaluators[num_envs] = tf.function(
                lambda s, n=num_envs: self._evaluate(s, n),
                input_signature=[tf.TensorSpec([], tf.int64)],
                jit_compile=self.hp.jit_compile,
            )
        returns, lengths = self._evaluators[num_envs](tf.constant(seed, tf.int64))
        return returns.numpy().astype(np.float64), lengths.numpy().astype(np.int64)

    def _evaluate(self, seed: tf.Tensor, num_envs: int) -> tuple[tf.Tensor, tf.Tensor]:
        agent, env = self.agent, self.env
        state, obs = env.reset(seed, num_envs)
        returns = tf.zeros([num_envs])
        lengths = tf.zeros([num_envs], tf.int32)
        running = tf.ones([num_envs], tf.bool)

        def cond(state, obs, returns, lengths, running):
            return tf.reduce_any(running)

        def body(state, obs, returns, lengths, running):
            action = agent.act(obs, explore=False)
            state, ts = env.step(state, action)
            returns += tf.where(running, ts.reward, 0.0)
            lengths += tf.cast(running, tf.int32)
            running = tf.logical_and(running, tf.logical_not(ts.terminated | ts.truncated))
            return state, ts.obs, returns, lengths, running

        _, _, returns, lengths, _ = tf.while_loop(
            cond,
            body,
            (state, obs, returns, lengths, running),
            maximum_iterations=env.max_episode_steps,
        )
        return returns, lengths

    # ----------------------------------------------------------------- inspection
    def variables(self) -> dict[str, np.ndarray]:
        """Every saved value of the run state (agent, optimizer, generator, envs), by
        checkpoint key: what a checkpoint holds, read back from a scratch write."""
        with tempfile.TemporaryDirectory(prefix="compiled_ppo_vars_") as scratch:
            path = self.checkpoint.write(os.path.join(scratch, "ckpt"))
            return {
                name: tf.train.load_variable(path, name)
                for name, _ in tf.train.list_variables(path)
                if name != "_CHECKPOINTABLE_OBJECT_GRAPH"
            }
