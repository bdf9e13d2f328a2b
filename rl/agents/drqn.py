"""DRQN: Q-learning with a recurrent Q-network, trained on replayed sequences with burn-in.

Hausknecht & Stone 2015, "Deep Recurrent Q-Learning for Partially Observable MDPs",
https://arxiv.org/abs/1507.06527; Kapturowski et al. 2019, R2D2,
https://openreview.net/forum?id=r1lyTjAqYX (sequences stored with the actor's recurrent state at
their start, and a burn-in that refreshes that stale state). Double Q-learning's target.

Online and target networks are unrolled over an item's T + 1 observations from the stored state;
no gradient flows into the burn-in. The loss is the TD loss over the `mask` steps; an item's
priority is R2D2's eta * max |delta| + (1 - eta) * mean |delta|.
"""

from __future__ import annotations

import tensorflow as tf

from rl.agents.action_functions import greedy
from rl.agents.base import Agent
from rl.agents.function_slots import resolve_function
from rl.agents.q_learning import QLearning
from rl.agents.recurrent import RecurrentStateMixin
from rl.agents.replay_agent import mean_over_batches
from rl.errors import UserError
from rl.hparams import as_schedule
from rl.memory.sequence_replay import SequenceReplay
from rl.models.recurrent import RecurrentQNetwork, check_cell
from rl.registry import register_agent
from rl.types import Batch, LossAndAux, Metrics, VectorStep


def sequence_priority(td_error: tf.Tensor, mask: tf.Tensor, eta: float | tf.Tensor) -> tf.Tensor:
    """R2D2's priority of each sequence [..., T] -> [...]: eta * max |delta| + (1 - eta) *
    mean |delta|, over the learning steps only."""
    abs_error = tf.abs(td_error) * mask
    mean = tf.reduce_sum(abs_error, -1) / tf.maximum(tf.reduce_sum(mask, -1), 1.0)
    return eta * tf.reduce_max(abs_error, -1) + (1.0 - eta) * mean


def sequence_n_step_targets(
    reward: tf.Tensor, discount: tf.Tensor, valid: tf.Tensor, values: tf.Tensor, n: int
) -> tf.Tensor:
    """n-step TD targets for time-major sequences: reward, discount, valid [T, B] (real steps
    first), values [T + 1, B] (index T: after the last step). m = min(n, valid steps left from t):
    near a sequence's end the return is shortened and bootstraps from the last observation it has
    (as R2D2 does). Padding steps get 0."""
    steps, batch = tf.shape(reward)[0], tf.shape(reward)[1]
    pad = tf.zeros([n, batch], reward.dtype)
    reward, discount = tf.concat([reward, pad], 0), tf.concat([discount, pad], 0)
    valid, values = tf.concat([valid, pad], 0), tf.concat([values, pad], 0)
    n_step_return = tf.zeros([steps, batch], reward.dtype)
    scale = tf.ones([steps, batch], reward.dtype)  # product of the discounts taken so far
    bootstrap = tf.zeros([steps, batch], reward.dtype)
    taking = tf.ones([steps, batch], reward.dtype)
    for k in range(n):  # n is small and static: a Python loop over shifted views
        taking = taking * valid[k : k + steps]  # step t + k is real (and so were the earlier)
        n_step_return += taking * scale * reward[k : k + steps]
        scale = tf.where(taking > 0, scale * discount[k : k + steps], scale)
        bootstrap = tf.where(taking > 0, values[k + 1 : k + 1 + steps], bootstrap)
    return n_step_return + scale * bootstrap * valid[:steps]


def time_major(x: tf.Tensor) -> tf.Tensor:
    """[B, T, ...] -> [T, B, ...]."""
    return tf.transpose(x, [1, 0, *range(2, len(x.shape))])


@register_agent("drqn")
class DRQN(QLearning, RecurrentStateMixin, Agent):
    """Recurrent Q-network agent for discrete actions (DRQN with R2D2's sequence replay)."""

    supports_strategies = True  # `loss` is a masked mean over items on axis 0

    # ---------------------------------------------------------------------- building
    def _build(self) -> None:
        hp, spec = self.hparams, self.spec
        if not spec.discrete:
            raise UserError(
                f"agent 'drqn' needs a discrete action space; env {spec.env_id!r} has Box "
                "actions (use ppo_recurrent)"
            )
        check_cell(hp.recurrent_cell)
        if hp.memory not in ("uniform", "prioritized"):
            raise UserError(f"drqn: memory must be uniform or prioritized, got {hp.memory!r}")

        def q_network(name: str) -> RecurrentQNetwork:
            net = RecurrentQNetwork(
                spec.num_actions, hp.model, hp.hidden_sizes, hp.activation, hp.dueling,
                hp.recurrent_cell, hp.recurrent_units, name=name,
            )  # fmt: skip
            net.step(tf.zeros([1, *spec.obs_shape], spec.obs_dtype), net.initial_state(1))
            return net

        self.q_network = q_network("q_network")
        self.target_network = q_network("target_network")
        self._sync_target(1.0)
        self.epsilon = as_schedule(hp.epsilon)
        self.action_function = resolve_function(self, "action_function")
        self.loss_function = resolve_function(self, "loss")
        self.per_beta = as_schedule(hp.per_beta)
        self.per_alpha = as_schedule(hp.per_alpha)  # of the env step, like per_beta
        self.per_epsilon = as_schedule(hp.per_epsilon)
        self._build_recurrent_state(self.q_network.state_size)

    def _build_learning(self) -> None:
        """The sequence replay (which also takes `observe`'s steps) and the compiled update."""
        hp, spec = self.hparams, self.spec
        self.replay = SequenceReplay(
            capacity=hp.buffer_size,
            num_envs=spec.num_envs,
            sequence_length=hp.sequence_length,
            burn_in=hp.burn_in,
            obs_shape=spec.obs_shape,
            obs_dtype=spec.obs_dtype,
            state_size=self.state_size,
            gamma=hp.gamma,
            seed=self.seed,
            prioritized=hp.memory == "prioritized",
            alpha=float(self.per_alpha(self.env_steps)),
            epsilon=float(self.per_epsilon(self.env_steps)),
        )
        lead = [None, None]  # [K batches, B items]
        batch_spec = {
            key: tf.TensorSpec([*lead, *shape], tf.as_dtype(dtype))
            for key, (shape, dtype) in self.replay.builder.fields().items()
        }
        batch_spec["weights"] = tf.TensorSpec(lead, tf.float32)
        self.train_on_batch = self.learner.function(self._train_on_batches, [batch_spec])

    # ------------------------------------------------------------------------ acting
    def _act_with_info(self, obs: tf.Tensor) -> LossAndAux:
        state_in = self.recurrent_state.read_value()  # before `_act` advances it
        return self._act(obs, explore=True), {"state_in": state_in}

    def _act(self, obs: tf.Tensor, explore: bool) -> tf.Tensor:
        q_values, state_out = self.q_network.step(obs, self.recurrent_state.read_value())
        self.recurrent_state.assign(state_out)
        if not explore:
            return greedy(q_values)
        return self.action_function(q_values, self.generator, self._current_epsilon())

    def _greedy_step(self, obs: tf.Tensor, state: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        q_values, state = self.q_network.step(obs, state)
        return greedy(q_values), state

    def _observe(self, transition: Batch) -> None:
        self.replay.add(VectorStep.of(transition), transition["state_in"])

    def _end_all_episodes(self) -> None:
        self.replay.end_all_episodes()
        self._reset_recurrent_state()

    def _numpy_state_parts(self) -> dict[str, object]:
        return {"replay": self.replay}

    # ---------------------------------------------------------------------- learning
    def _ready_to_update(self) -> bool:
        return len(self.replay) >= 1 and int(self.env_steps.numpy()) >= self.hparams.learning_starts

    def _update(self) -> Metrics:
        hp = self.hparams
        beta = float(self.per_beta(self.env_steps))
        batch = self.replay.sample(hp.batch_size, num_batches=hp.gradient_steps, beta=beta)
        indices = batch.pop("indices")
        out = self.train_on_batch(batch)
        if self.replay.prioritized:
            alpha = float(self.per_alpha(self.env_steps))
            epsilon = float(self.per_epsilon(self.env_steps))
            self.replay.update_priorities(indices, out["priority"].numpy(), alpha, epsilon)
        return {f"train/{key}": float(out[key]) for key in ("loss", "grad_norm", "q_mean")}

    def _train_on_batches(self, batch: dict[str, tf.Tensor]) -> dict[str, tf.Tensor]:
        def train_step(sample: dict[str, tf.Tensor]) -> dict[str, tf.Tensor]:
            self._sync_target_when_due()
            eta = self.hparam_values.now(
                "priority_eta", self.learner.gradient_steps
            )  # before the step counts
            loss, grad_norm, aux = self.learner.gradient_step(
                self.loss, self.q_network.trainable_variables, sample
            )
            priority = sequence_priority(aux["td_error"], sample["mask"], eta)
            return {
                "loss": loss,
                "grad_norm": grad_norm,
                "q_mean": aux["q_mean"],
                "priority": priority,
            }

        return mean_over_batches(batch, train_step, ("loss", "grad_norm", "q_mean"), "priority")

    def _loss_weight(self, batch: dict[str, tf.Tensor]) -> tf.Tensor:
        return tf.reduce_sum(batch["mask"])

    def loss(self, sample: dict[str, tf.Tensor]) -> LossAndAux:
        """Masked TD loss of one batch of items [B, T]; aux "td_error" is [B, T]."""
        obs = time_major(sample["obs"])  # [T + 1, B, ...]
        steps = tf.shape(obs)[0] - 1
        # Detach the state before the first learning step: the burn-in only produces it.
        detach = tf.equal(tf.range(steps + 1)[:, None], sample["burn_in"][None, :])
        q_all, _ = self.q_network.unroll(obs, sample["state"], detach=detach)
        target_all, _ = self.target_network.unroll(obs, sample["state"])
        mask = time_major(sample["mask"])  # [T, B]
        n = tf.size(mask)

        def flat(x: tf.Tensor) -> tf.Tensor:  # [T, B, ...] -> [T * B, ...]: the losses' batch
            return tf.reshape(x, tf.concat([[n], tf.shape(x)[2:]], 0))

        # Bootstrap value of every observation: double Q (online picks, target evaluates).
        if self.hparams.double_q:
            best = tf.argmax(tf.stop_gradient(q_all), axis=-1, output_type=tf.int64)
            values = tf.gather(target_all, best, axis=2, batch_dims=2)  # [T + 1, B]
        else:
            values = tf.reduce_max(target_all, axis=-1)
        # Real steps: the burn-in ones and the learning ones (padding follows them).
        in_burn_in = tf.range(steps)[:, None] < sample["burn_in"][None, :]
        valid = tf.maximum(mask, tf.cast(in_burn_in, tf.float32))
        reward, discount = time_major(sample["reward"]), time_major(sample["discount"])
        td_target = sequence_n_step_targets(reward, discount, valid, values, self.hparams.n_step)
        q_values = flat(q_all[:-1])  # [T * B, A]
        weights = flat(mask * sample["weights"][None, :])
        loss, td_error = self.loss_function(
            q_values, flat(time_major(sample["action"])), flat(td_target), weights
        )
        # The loss averages over all T * B entries; the mean over the learning steps is wanted.
        learning_steps = tf.maximum(tf.reduce_sum(mask), 1.0)
        loss = loss * tf.cast(n, tf.float32) / learning_steps
        td_error = tf.transpose(tf.reshape(td_error, tf.shape(mask)))  # [B, T]
        q_mean = tf.reduce_sum(tf.reduce_max(q_values, -1) * flat(mask)) / learning_steps
        return loss, {"td_error": td_error, "q_mean": q_mean}
