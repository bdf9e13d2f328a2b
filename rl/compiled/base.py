"""What every single-seed compiled run shares: the agent, its envs' variables, the checkpoint,
one compiled call per iteration and the in-graph greedy evaluation. Because the whole run state
lives in variables, a subclass's `_iteration` is traced once and a restored run continues
exactly where it stopped.
"""

from __future__ import annotations

import os
import tempfile

import numpy as np
import tensorflow as tf

from rl.agents.base import Agent
from rl.agents.build import build_agent
from rl.compiled.collect import collect, greedy_episodes
from rl.compiled.env_variables import EnvVariables
from rl.envs.tf import TFEnv
from rl.hparams import HParams
from rl.utils import private_apis
from rl.utils.compiler import whole_program_xla
from rl.utils.seeding import derive_seed


class CompiledRun:
    """One seed: the agent, the training envs' variables and the compiled iteration/evaluation;
    init, generator and env seeds derive from `seed` exactly as in the in-process engine."""

    def __init__(self, hparams: HParams, env: TFEnv, seed: int) -> None:
        self.hp = hparams
        self.env = env
        self.seed = seed
        num_envs = hparams.num_envs
        self.spec = env.spec(num_envs)
        self.agent: Agent = build_agent(hparams, self.spec, seed)
        self._check_agent()
        self.env_vars = EnvVariables(env, num_envs, derive_seed(seed, "train_env", 0))
        self.num_steps = self.agent.steps_per_iteration  # T vector steps per iteration
        self.steps_per_iteration = self.num_steps * num_envs  # env steps per call
        self.checkpoint = tf.train.Checkpoint(
            agent=self.agent, env=self.env_vars, **self._extra_state()
        )
        self.iteration = tf.function(
            self._iteration,
            jit_compile=whole_program_xla(hparams.jit_compile),
            autograph=False,  # TF code as written: autograph's conversion costs seconds
        )
        self.evaluators: dict[int, tf.types.experimental.GenericFunction] = {}

    # --------------------------------------------------------------------------- hooks
    def _check_agent(self) -> None:
        """Raises UserError when the agent has no compiled path of this kind."""

    def _extra_state(self) -> dict[str, tf.Module]:
        """Checkpointed objects besides the agent and the envs (e.g. an in-graph replay)."""
        return {}

    def _iteration(self) -> dict[str, tf.Tensor]:
        raise NotImplementedError

    # ------------------------------------------------------------------------ training
    def _collect(self, after_step=None):
        """T exploring steps from the envs' variables, then updated (`collect`'s output)."""
        return collect(
            self.env,
            self.spec,
            self.env_vars,
            lambda obs: self.agent.act(obs, explore=True),
            self.num_steps,
            after_step=after_step,
        )

    def run_iteration(self) -> dict[str, float]:
        """One compiled iteration; its metrics as Python floats (one host sync)."""
        return {k: float(v) for k, v in self.iteration().items()}

    # ---------------------------------------------------------------------- evaluation
    def evaluate(self, seed: int, num_envs: int) -> tuple[np.ndarray, np.ndarray]:
        """(returns, lengths) of one greedy episode in each of `num_envs` fresh envs reset with
        `seed`: one compiled call (traced once per `num_envs`, the seed is a tensor)."""
        if num_envs not in self.evaluators:
            self.evaluators[num_envs] = tf.function(
                lambda s, n=num_envs: self._evaluate(s, n),
                input_signature=[tf.TensorSpec([], tf.int64)],
                jit_compile=whole_program_xla(self.hp.jit_compile),
                autograph=False,
            )
        returns, lengths = self.evaluators[num_envs](tf.constant(seed, tf.int64))
        return returns.numpy().astype(np.float64), lengths.numpy().astype(np.int64)

    def _evaluate(self, seed: tf.Tensor, num_envs: int) -> tuple[tf.Tensor, tf.Tensor]:
        state, obs = self.env.reset(seed, num_envs)
        return greedy_episodes(self.env, state, obs, lambda o: self.agent.act(o, explore=False))

    # ---------------------------------------------------------------------- inspection
    def variables(self) -> dict[str, np.ndarray]:
        """Every value a checkpoint of the run holds (agent, optimizer, envs, ...), by key."""
        return checkpoint_values(self.checkpoint)


def checkpoint_values(checkpoint: tf.train.Checkpoint) -> dict[str, np.ndarray]:
    """{checkpoint key: value} of everything `checkpoint` saves (a scratch write, read back)."""
    with tempfile.TemporaryDirectory(prefix="compiled_vars_") as scratch:
        path = checkpoint.write(os.path.join(scratch, "ckpt"))
        return {
            name: tf.train.load_variable(path, name)
            for name, _ in tf.train.list_variables(path)
            if name != private_apis.CHECKPOINT_GRAPH_KEY
        }
