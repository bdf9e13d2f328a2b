"""CMA-ES as an agent: gradient-free search over a small policy network's weights.

Hansen 2016, https://arxiv.org/abs/1604.00772 (`rl.agents.cma_es_optimizer`); policy search
with evolution strategies as in Salimans et al. 2017, https://arxiv.org/abs/1703.03864.

* Population = env copies: copy i plays candidate i (weights stacked in one [P, n] variable);
  greedy `act` uses the mean.
* Fitness = the undiscounted return of the first episode env i starts after candidate i was
  installed; episodes running at a generation switch, or cut at a checkpoint, are discarded.
* A generation ends at the first `update` that finds all P fitnesses: `tell`, `ask`, install.
* `lr` is CMA-ES's c_m (tutorial eq. 9; 1 = standard); the optimizer is never stepped.
* Full CMA costs O(n^2) memory and O(n^3) per generation; `cmaes_diagonal=True` is O(n).
* A `checkpoint_every` too short for one whole episode per env copy is refused (checkpoints cut
  running episodes, which would stall the good candidates).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import tensorflow as tf

from rl.agents.base import Agent
from rl.agents.cma_es_optimizer import CMAES
from rl.errors import UserError
from rl.registry import register_agent
from rl.types import Batch, Metrics


class EpisodeScorer:
    """Per env copy: the return of the first episode started since `new_generation` (`fitness[i]`
    NaN until then; `fresh[i]`: env i's next step begins an episode, so scoring may start)."""

    def __init__(self, num_envs: int) -> None:
        self.fitness = np.full(num_envs, np.nan)
        self.scoring = np.zeros(num_envs, bool)  # env i is playing its scored episode
        self.fresh = np.ones(num_envs, bool)  # the driver resets every env before collecting
        self.episode_return = np.zeros(num_envs)

    def new_generation(self) -> None:
        """New candidates are installed: running episodes do not count."""
        self.fitness[:] = np.nan
        self.scoring[:] = False

    def observe(self, reward: np.ndarray, done: np.ndarray) -> None:
        """One vector step: `reward` and `done` (terminated | truncated) per env."""
        begin = self.fresh & np.isnan(self.fitness) & ~self.scoring
        self.scoring |= begin
        self.episode_return[begin] = 0.0
        self.episode_return += np.where(self.scoring, reward, 0.0)
        finished = done & self.scoring
        self.fitness[finished] = self.episode_return[finished]
        self.scoring &= ~finished
        self.fresh = np.asarray(done, bool).copy()

    def cut(self) -> None:
        """The engine cut every episode and resets the envs: partial episodes do not count."""
        self.scoring[:] = False
        self.fresh[:] = True

    def complete(self) -> bool:
        return bool(not np.isnan(self.fitness).any())

    FIELDS = ("fitness", "scoring", "fresh", "episode_return")

    def state_dict(self) -> dict[str, np.ndarray]:
        return {name: getattr(self, name).copy() for name in self.FIELDS}

    def load_state_dict(self, state: Mapping[str, np.ndarray]) -> None:
        if state["fitness"].shape != self.fitness.shape:
            raise ValueError(
                f"checkpoint scores {state['fitness'].shape[0]} env copies, this run has "
                f"{self.fitness.shape[0]}"
            )
        for name in self.FIELDS:  # as their own dtypes (float64, bool, bool, float64)
            setattr(self, name, np.array(state[name], getattr(self, name).dtype))


def layer_shapes(sizes: list[int]) -> list[tuple[tuple[int, int], int]]:
    """[((fan_in, fan_out), bias size)] for an MLP whose layer widths are `sizes`."""
    return [((fan_in, fan_out), fan_out) for fan_in, fan_out in zip(sizes, sizes[1:], strict=False)]


def num_params(sizes: list[int]) -> int:
    return sum(w[0] * w[1] + b for w, b in layer_shapes(sizes))


@register_agent("cmaes")
class CMAESAgent(Agent):
    """CMA-ES over the weights of a deterministic MLP policy, one candidate per env copy."""

    structured_obs_refusal = (
        "its policy is a few matmuls over one flat Box observation; flatten it with "
        "gymnasium.wrappers.FlattenObservation"
    )
    strategy_refusal = (
        "CMA-ES is gradient-free (it ranks whole-episode returns of sampled weights), so a "
        "strategy has no gradient to all-reduce; train it with --strategy default (parallelize "
        "with more env copies: num_envs is its population)"
    )
    precision_refusal = (
        "CMA-ES has no network layers to compute in lower precision (its policy is a few "
        "float32 matmuls over sampled weights, and it takes no gradients); use "
        "precision=float32"
    )

    # ---------------------------------------------------------------------- building
    def _build(self) -> None:
        hp, spec = self.hparams, self.spec
        # From hparams, not the spec: test mode still restores a [num_envs, n] population.
        population = hp.num_envs
        if population < 2:
            raise UserError(
                f"agent 'cmaes' plays one candidate per env copy, so num_envs is its population "
                f"size and must be >= 2 (got {population}); set e.g. num_envs=16"
            )
        if not hp.cmaes_sigma0 > 0:
            raise UserError(f"cmaes_sigma0 must be > 0, got {hp.cmaes_sigma0}")
        horizon = spec.max_episode_steps
        needed = None if horizon is None else population * horizon + hp.train_every
        if needed is not None and hp.checkpoint_every < needed:
            raise UserError(
                f"agent 'cmaes' scores whole episodes and every checkpoint cuts them: "
                f"checkpoint_every={hp.checkpoint_every} is too short for episodes of up to "
                f"{horizon} steps in {population} env copies; set checkpoint_every >= {needed}"
            )
        obs_dim = int(np.prod(spec.obs_shape))
        out_dim = spec.num_actions if spec.discrete else int(np.prod(spec.action_shape))
        self._sizes = [obs_dim, *hp.hidden_sizes, out_dim]
        self._activation = tf.keras.activations.get(hp.activation)
        dimension = num_params(self._sizes)
        self.es = CMAES(
            mean=np.zeros(dimension),
            sigma=hp.cmaes_sigma0,
            popsize=population,
            seed=self.seed,
            diagonal=hp.cmaes_diagonal,
        )
        self.scorer = EpisodeScorer(population)
        self.candidate_params = tf.Variable(
            tf.zeros([population, dimension]), trainable=False, name="candidate_params"
        )
        self.mean_params = tf.Variable(tf.zeros([dimension]), trainable=False, name="mean_params")
        self._bounded = False
        if not spec.discrete:
            low, high = spec.action_low.reshape(-1), spec.action_high.reshape(-1)
            self._bounded = bool(np.all(np.isfinite(low)) and np.all(np.isfinite(high)))
            self._action_low, self._action_high = low, high
        self._install(self.es.ask())

    def _trainable_variables(self) -> list[tf.Variable]:
        return []  # no gradients: CMA-ES moves the weights (see the module docstring)

    def _install(self, population: np.ndarray) -> None:
        self.candidate_params.assign(population.astype(np.float32))
        self.mean_params.assign(self.es.mean.astype(np.float32))
        self.scorer.new_generation()

    # ------------------------------------------------------------------------ acting
    def _policy_output(self, obs: tf.Tensor, params: tf.Tensor, batched: bool) -> tf.Tensor:
        """The MLP's output for `obs` [B, ...]; `params` [B, n] when `batched`, else [n]."""
        x = tf.reshape(tf.cast(obs, tf.float32), [tf.shape(obs)[0], self._sizes[0]])
        offset = 0
        shapes = layer_shapes(self._sizes)
        for index, ((fan_in, fan_out), bias_size) in enumerate(shapes):
            size = fan_in * fan_out
            if batched:
                w = tf.reshape(params[:, offset : offset + size], [-1, fan_in, fan_out])
                b = params[:, offset + size : offset + size + bias_size]
                x = tf.einsum("bi,bio->bo", x, w) + b
            else:
                w = tf.reshape(params[offset : offset + size], [fan_in, fan_out])
                x = tf.matmul(x, w) + params[offset + size : offset + size + bias_size]
            offset += size + bias_size
            if index < len(shapes) - 1:
                x = self._activation(x)
        return x

    def _act(self, obs: tf.Tensor, explore: bool) -> tf.Tensor:
        # Exploring: row i is env copy i, played by candidate i. Greedy: the mean's weights.
        if explore:
            out = self._policy_output(obs, self.candidate_params, batched=True)
        else:
            out = self._policy_output(obs, self.mean_params, batched=False)
        if self.spec.discrete:
            return tf.argmax(out, axis=-1, output_type=tf.int64)
        if self._bounded:
            low = tf.constant(self._action_low, tf.float32)
            high = tf.constant(self._action_high, tf.float32)
            out = low + (tf.tanh(out) + 1.0) * 0.5 * (high - low)
        return tf.reshape(out, [-1, *self.spec.action_shape])

    def _observe(self, transition: Batch) -> None:
        done = np.asarray(transition["terminated"]) | np.asarray(transition["truncated"])
        self.scorer.observe(np.asarray(transition["reward"], np.float64), done)

    def _end_all_episodes(self) -> None:
        self.scorer.cut()

    def _numpy_state_parts(self) -> dict[str, object]:
        return {"cmaes": self.es, "scorer": self.scorer}

    # ---------------------------------------------------------------------- learning
    def _ready_to_update(self) -> bool:
        return self.scorer.complete()

    def _update(self) -> Metrics:
        fitness = self.scorer.fitness.copy()
        self.es.mean_lr = float(self.learner.learning_rate(self.learner.gradient_steps))
        self.es.tell(-fitness)  # CMA-ES minimizes
        self._install(self.es.ask())
        self.learner.gradient_steps.assign_add(1)
        return {
            "train/loss": -float(np.mean(fitness)),
            "train/fitness_mean": float(np.mean(fitness)),
            "train/fitness_max": float(np.max(fitness)),
            "train/fitness_min": float(np.min(fitness)),
            "train/sigma": self.es.sigma,
            "train/axis_ratio": self.es.axis_ratio,
            "train/generation": float(self.es.generation),
        }

    def _metrics(self, env_steps: tf.Variable) -> Metrics:
        return {"train/sigma": self.es.sigma, "train/search_dimension": float(self.es.dimension)}
