"""Many seeds of an on-policy agent (PPO, A2C, REINFORCE) in ONE XLA program per iteration.

Why: `--copies N` on a TF-ops env would otherwise trace, compile and run N programs; here the
seeds share one trace, step their envs as one batch and update the stacked [S, ...] weights in
one op per variable. It is S independent runs (docs/compiled.md, "Many seeds in one program"):
each seed's loss is the agent's own code vectorized over the seed axis (`per_seed_map`), so trace
and compile barely grow with S. PPO's `target_kl` would stop seeds apart: `NotStackable`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import tensorflow as tf

from rl.agents.action_functions import sample
from rl.agents.gradient_functions import masked_mean
from rl.agents.on_policy import (
    PolicyOutputs,
    explained_variance,
    minibatch_indices,
    update_epochs,
)
from rl.compiled.base import checkpoint_values
from rl.compiled.batched_forward import StackedForward
from rl.compiled.collect import collect, greedy_episodes
from rl.compiled.env_variables import EnvVariables
from rl.compiled.population import PopulationValues
from rl.compiled.ppo_iteration import CompiledPPO
from rl.compiled.stacked_generators import StackedGenerators
from rl.compiled.stacked_variables import NotStackable, SeedStack, per_seed_map
from rl.envs.tf import TFEnv
from rl.hparams import HParams, as_schedule
from rl.types import LossAndAux
from rl.utils.compiler import whole_program_xla


class Weights(NamedTuple):
    """The stacked weights read once, and the same as [seed][variable] slices."""

    stacked: list[tf.Tensor]
    per_seed: list[list[tf.Tensor]]


class CompiledPPOSeeds:
    """S seeds (`seeds`) of one experiment: per-seed `members` and the compiled iteration."""

    def __init__(
        self,
        hparams: HParams,
        env: TFEnv,
        seeds: list[int],
        member_hparams: Sequence[HParams] | None = None,
    ) -> None:
        """`member_hparams`: each seed's own hparams (a population), else `hparams` for all."""
        self.hp = hparams
        self.env = env
        member_hparams = list(member_hparams or [hparams] * len(seeds))
        self.members = [
            CompiledPPO(member, env, seed)
            for member, seed in zip(member_hparams, seeds, strict=True)
        ]
        self.agents = [member.agent for member in self.members]
        self.population = PopulationValues(member_hparams)
        for s, agent in enumerate(self.agents):
            agent.hparam_values.read_from(self.population.reader(s))
        if self.agents[0].stops_early:
            # Stopped seeds would have to skip steps while the others take them, but the stack
            # steps its optimizer (Adam's step count) and lr schedule in lockstep for all seeds;
            # as separate programs each seed stops exactly as it would alone.
            raise NotStackable("target_kl: each seed stops on its own, so seeds train apart")
        self.num_seeds = len(self.members)
        self.spec = self.members[0].spec
        self.num_steps = self.members[0].num_steps
        self.steps_per_iteration = self.members[0].steps_per_iteration  # per seed
        self.stack = SeedStack(self.agents)
        # Every seed's envs as ONE set of variables of S * N rows (seed-major), so the program
        # reads and writes them in a few ops whatever S; the members' own are the checkpoint view.
        self.env_vars = EnvVariables(env, self.num_seeds * self.spec.num_envs, seed=0)
        self._load_env_variables()
        self.stack.use_member_values(
            lr=self.population.get("lr"), max_grad_norm=self.population.get("max_grad_norm")
        )
        # Batched matmuls for the minibatch passes when the model allows (None: per seed).
        self.forward = StackedForward.for_agents(self.agents, self.stack)
        # Discrete policies also act and compute advantages batched; Gaussian ones read their
        # own log-std, so they go through each seed's own `act`/`_advantages`.
        self.batched = self.forward is not None and self.spec.discrete
        # Their generators draw as one (the Gaussian path's agents act with their own).
        self.generators = StackedGenerators(self.agents) if self.batched else None
        self.iteration = tf.function(
            self._iteration, jit_compile=whole_program_xla(hparams.jit_compile), autograph=False
        )
        self.evaluators: dict[int, tf.types.experimental.GenericFunction] = {}
        self.exploit_explore = tf.function(self._exploit_explore, autograph=False)

    # ------------------------------------------------------------------------ acting
    def _act(self, weights: Weights, obs: tf.Tensor, explore: bool) -> tf.Tensor:
        """Each seed's `act` on its envs' rows: its model on its weights, its generator."""
        if self.batched:  # `OnPolicyAgent._act` for discrete actions, the pass batched
            logits = self.forward.policy(weights.stacked, self._by_seed(obs))
            if not explore:
                return tf.reshape(tf.argmax(logits, axis=-1, output_type=tf.int64), [-1])
            return tf.reshape(sample(logits, self.generators), [-1])
        actions = []
        for s, obs_s in enumerate(tf.split(obs, self.num_seeds)):
            with self.stack.seed_scope(s, weights.per_seed):
                actions.append(self.agents[s].act(obs_s, explore=explore))
        return tf.concat(actions, axis=0)

    # ---------------------------------------------------------------------- training
    def run_iteration(self) -> list[dict[str, float]]:
        """One compiled iteration of every seed; per-seed metrics (one host sync)."""
        out = {name: value.numpy() for name, value in self.iteration().items()}
        return [
            {name: float(value[s]) for name, value in out.items()} for s in range(self.num_seeds)
        ]

    def _iteration(self) -> dict[str, tf.Tensor]:
        num_seeds, env = self.num_seeds, self.env
        weights = self._weights()  # the acting weights: unchanged during the rollout
        out = collect(
            env,
            self.spec,
            self.env_vars,
            lambda obs: self._act(weights, obs, explore=True),
            self.num_steps,
            num_seeds,
        )
        for agent in self.agents:
            agent.env_steps.assign_add(self.steps_per_iteration)

        if self.batched:
            samples = self._samples_batched(out.transitions, env.observe(out.state), weights)
        else:
            columns = {k: tf.split(v, num_seeds, axis=1) for k, v in out.transitions.items()}
            columns["last_next_obs"] = tf.split(env.observe(out.state), num_seeds)
            per_seed = []
            for s in range(num_seeds):  # each seed's own `training_samples`
                with self.stack.seed_scope(s, weights.per_seed):
                    batch = {k: v[s] for k, v in columns.items()}
                    per_seed.append(self.agents[s].training_samples(batch))
            samples = {key: tf.stack([x[key] for x in per_seed]) for key in per_seed[0]}
        metrics = self._update(samples)
        metrics["episodes_done"] = out.episodes_done
        metrics["episode_return_sum"] = out.episode_return_sum
        metrics["episode_length_sum"] = out.episode_length_sum
        return metrics

    def _samples_batched(self, transitions: dict, last_next_obs: tf.Tensor, weights) -> dict:
        """The template's `samples_from_outputs` for all seeds at once: the forward passes
        batched over the stack, advantages on [T, S * N] columns (estimators are per column,
        gamma and gae_lambda per member's columns), then [S, T * N, ...] by seed."""
        template, stacked, by_seed = self.agents[0], weights.stacked, self._by_seed_time_major
        params, values = self.forward.actor_critic(stacked, by_seed(transitions["obs"]))
        log_prob = template.model.distribution(params).log_prob(by_seed(transitions["action"]))
        final_values = bootstrap = None
        if template.uses_value:
            final_values = self.forward.value(stacked, by_seed(transitions["final_obs"]))
            final_values = self._time_major(final_values)
            bootstrap = tf.reshape(self.forward.value(stacked, self._by_seed(last_next_obs)), [-1])
        columns = self.spec.num_envs  # per seed: a population's numbers per env column
        samples = template.samples_from_outputs(
            transitions,
            self._time_major(log_prob),
            self._time_major(values),
            final_values,
            bootstrap,
            gamma=self.population.per_column("gamma", columns),
            gae_lambda=self.population.per_column("gae_lambda", columns),
        )
        time_major = [self.num_steps, self.num_seeds * columns]  # `flatten_steps` undone
        return {
            key: by_seed(tf.reshape(x, [*time_major, *x.shape[1:]])) for key, x in samples.items()
        }

    def _by_seed(self, rows: tf.Tensor) -> tf.Tensor:
        """[S * R, ...] seed-major rows -> [S, R, ...]."""
        return tf.reshape(rows, [self.num_seeds, -1, *rows.shape[1:]])

    def _by_seed_time_major(self, x: tf.Tensor) -> tf.Tensor:
        """[T, S * N, ...] -> [S, T * N, ...], each seed's samples in `training_samples` order."""
        num_steps, rest = x.shape[0], list(x.shape[2:])
        x = tf.reshape(x, [num_steps, self.num_seeds, -1, *rest])
        x = tf.transpose(x, [1, 0, 2, *range(3, 3 + len(rest))])
        return tf.reshape(x, [self.num_seeds, -1, *rest])

    def _time_major(self, x: tf.Tensor) -> tf.Tensor:
        """[S, T * N] -> [T, S * N] (the inverse of `_by_seed_time_major` for scalars)."""
        x = tf.reshape(x, [self.num_seeds, self.num_steps, -1])
        return tf.reshape(tf.transpose(x, [1, 0, 2]), [self.num_steps, -1])

    def _weights(self) -> Weights:
        stacked = [v.read_value() for v in self.stack.stacked]
        return Weights(stacked, self.stack.unstack(stacked))

    def _update(self, samples: dict[str, tf.Tensor]) -> dict[str, tf.Tensor]:
        """The agents' own update loop (`update_epochs`) with a seed axis: each seed draws its
        own permutations, one stacked gradient step serves all seeds; [S] metrics."""
        template = self.agents[0]
        num_minibatches, n = template.num_minibatches, template.num_samples

        def step(indices: tf.Tensor, k: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor, dict]:
            rows = tf.gather(indices, k, axis=1)  # [S, size]: each seed's own permutation
            minibatch = {k: tf.gather(v, rows, batch_dims=1) for k, v in samples.items()}
            return self.stack.gradient_step(
                lambda stacked: self._minibatch_losses(stacked, minibatch)
            )

        def draw_indices() -> tf.Tensor:  # [S, num_minibatches, size]: `minibatch_indices`
            if self.generators is None:
                return tf.stack([minibatch_indices(a.generator, n, num_minibatches)
                                 for a in self.agents])  # fmt: skip
            size = n // num_minibatches
            order = tf.argsort(self.generators.uniform([self.num_seeds, n]))
            return tf.reshape(order[:, : num_minibatches * size], [-1, num_minibatches, size])

        metrics = update_epochs(
            self.hp.n_epochs,
            num_minibatches,
            draw_indices,
            step,
            template.loss_metrics,
            tf.zeros([self.num_seeds]),
        )
        returns, values = samples["return"], samples["old_value"]
        metrics["explained_variance"] = explained_variance(returns, values, axis=1)
        metrics["advantage_mean"] = per_seed_map(
            lambda x: masked_mean(*x), (samples["advantage"], samples["mask"]), self.num_seeds
        )
        return metrics

    def _minibatch_losses(
        self, stacked: list[tf.Tensor], minibatch: dict[str, tf.Tensor]
    ) -> LossAndAux:
        """[S] losses (each seed's own `loss` on its minibatch and weights) and [S] aux."""
        if self.batched:  # one batched pass, and the template's loss vectorized over seeds
            params, values = self.forward.actor_critic(stacked, minibatch["obs"])
            distribution = self.agents[0].model.distribution(params)
            log_prob = distribution.log_prob(minibatch["action"])
            members = {key: value.read_value() for key, value in self.population.values.items()}
            outputs = PolicyOutputs(log_prob, distribution.entropy(), values)
            per_seed = (minibatch, outputs, members)
            return per_seed_map(lambda args: self._member_loss(*args), per_seed, self.num_seeds)
        weights = self.stack.unstack(stacked)
        per_seed = {key: tf.unstack(value, num=self.num_seeds) for key, value in minibatch.items()}
        if self.forward is not None:  # one batched pass for all seeds
            params, values = self.forward.actor_critic(stacked, minibatch["obs"])
            params, values = tf.unstack(params), tf.unstack(values)
        losses, auxes = [], []
        for s, agent in enumerate(self.agents):
            mb = agent.normalized({key: value[s] for key, value in per_seed.items()})
            with self.stack.seed_scope(s, weights):
                if self.forward is None:
                    loss, aux = agent.minibatch_loss(mb)
                else:  # `minibatch_loss` with the batched pass's outputs
                    distribution = agent.model.distribution(params[s])
                    log_prob = distribution.log_prob(agent.model.flatten_action(mb["action"]))
                    outputs = PolicyOutputs(log_prob, distribution.entropy(), values[s])
                    loss, aux = agent.loss(mb, outputs)
            losses.append(loss)
            auxes.append(aux)
        names = self.agents[0].loss_metrics
        return tf.stack(losses), {
            name: tf.stack([tf.cast(aux.get(name, 0.0), tf.float32) for aux in auxes])
            for name in names
        }

    def _member_loss(self, minibatch, outputs: PolicyOutputs, members: dict) -> tuple:
        """One seed's loss under `per_seed_map`: the template agent's loss on the seed's own
        minibatch, with the seed's population values (`members`, key -> scalar)."""
        template = self.agents[0]
        minibatch = template.normalized(minibatch)
        loss, aux = template.loss(minibatch, outputs, member=members.get)
        return loss, {
            name: tf.cast(aux.get(name, 0.0), tf.float32) for name in template.loss_metrics
        }

    def _exploit_explore(self, source: tf.Tensor, values: dict[str, tf.Tensor]) -> None:
        """PBT between iterations (`rl.tune.pbt`): member s takes member `source[s]`'s weights,
        optimizer slots and `values[key][s]` of each population key; tensor arguments, so one
        trace serves all."""
        self.stack.copy_members(source)
        for key, value in values.items():
            self.population.values[key].assign(value)

    def use_members(self, member_hparams: Sequence[HParams]) -> None:
        """Reuses the traced program for members differing only in population values (a tuner's
        next trials, `rl.engines.compiled.ProgramCache`): their [S] values and their hparams."""

        for key, value in self.population.values.items():
            value.assign([hparams.constant_number(key) for hparams in member_hparams])
        for member, hparams in zip(self.members, member_hparams, strict=True):
            member.hp = member.agent.hparams = hparams
            member.agent.learner.learning_rate = as_schedule(
                hparams.lr
            )  # logged as train/learning_rate

    # -------------------------------------------------------------------- evaluation
    def evaluate(self, seeds: list[int], num_envs: int) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per seed (returns, lengths) of one greedy episode in each of `num_envs` fresh envs
        reset with that seed's `seeds[s]`: one compiled call for all seeds."""
        if num_envs not in self.evaluators:
            self.evaluators[num_envs] = tf.function(
                lambda s, n=num_envs: self._evaluate(s, n),
                input_signature=[tf.TensorSpec([self.num_seeds], tf.int64)],
                jit_compile=whole_program_xla(self.hp.jit_compile),
                autograph=False,
            )
        returns, lengths = self.evaluators[num_envs](tf.constant(seeds, tf.int64))
        returns = returns.numpy().astype(np.float64)
        lengths = lengths.numpy().astype(np.int64)
        return [(returns[s], lengths[s]) for s in range(self.num_seeds)]

    def _evaluate(self, seeds: tf.Tensor, num_envs: int) -> tuple[tf.Tensor, tf.Tensor]:
        # Every seed's reset in one vectorized trace; [S, N, ...] -> [S * N, ...] seed-major rows.
        resets = per_seed_map(lambda seed: self.env.reset(seed, num_envs), seeds, self.num_seeds)
        state, obs = tf.nest.map_structure(lambda x: tf.reshape(x, [-1, *x.shape[2:]]), resets)
        weights = self._weights()
        returns, lengths = greedy_episodes(
            self.env, state, obs, lambda o: self._act(weights, o, explore=False)
        )
        shape = [self.num_seeds, num_envs]
        return tf.reshape(returns, shape), tf.reshape(lengths, shape)

    # ------------------------------------------------------------------- checkpoints
    def _member_env_variables(self) -> list[tuple[tf.Variable, tuple[tf.Variable, ...]]]:
        """(joined variable, the members' variables it joins) pairs."""
        members = zip(*(member.env_vars.variables for member in self.members), strict=True)
        return list(zip(self.env_vars.variables, members, strict=True))

    def _load_env_variables(self) -> None:
        for joined, column in self._member_env_variables():
            joined.assign(tf.concat(column, axis=0))

    def store_to_members(self) -> None:
        """Makes every member's checkpoint current (before saving)."""
        for joined, column in self._member_env_variables():
            for variable, rows in zip(column, tf.split(joined, self.num_seeds), strict=True):
                variable.assign(rows)
        self.stack.store_to_agents()
        if self.generators is not None:
            self.generators.store_to_agents()

    def load_from_members(self) -> None:
        """Takes the members' (restored) state into the stack."""
        self._load_env_variables()
        self.stack.load_from_agents()
        if self.generators is not None:
            self.generators.load_from_agents()

    def variables(self, s: int) -> dict[str, np.ndarray]:
        """Every value seed s's checkpoint holds, by key (as `CompiledPPO.variables`)."""
        self.store_to_members()
        return checkpoint_values(self.members[s].checkpoint)
