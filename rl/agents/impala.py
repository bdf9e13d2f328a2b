"""IMPALA: an actor-critic learner on data of lagging behaviour policies, corrected by V-trace.

Espeholt et al. 2018, "IMPALA: Scalable Distributed Deep-RL with Importance Weighted
Actor-Learner Architectures", https://arxiv.org/abs/1802.01561.

Acting records log mu(a|x), since pi will have moved on by the time the step is learned from.
`update` is one compiled call of `n_epochs` passes over groups of whole unrolls, every step
recomputing pi, V and the V-trace targets with the current weights ("discounted_returns" /
"gae" estimators: the paper's no-correction ablation).
"""

from __future__ import annotations

import inspect

import numpy as np
import tensorflow as tf

from rl.agents.actor_critic_agent import ActorCriticAgent
from rl.agents.gradient_functions.impala import impala_loss
from rl.agents.on_policy import normalize, update_epochs
from rl.errors import UserError
from rl.registry import get_advantage_estimator, register_agent
from rl.rollout import Rollout, bootstrap_values, minibatch_indices, reevaluate
from rl.rollout.returns import fold_truncation
from rl.types import LossAndAux, Metrics, TensorBatch

# The rollout fields the learner reads; `log_prob` is the behaviour policy's.
UNROLL_FIELDS = (
    "obs",
    "action",
    "reward",
    "terminated",
    "truncated",
    "log_prob",
    "final_obs",
    "last_next_obs",
)


@register_agent("impala")
class Impala(ActorCriticAgent):
    """V-trace actor-critic for discrete (categorical) and Box (diagonal Gaussian) actions."""

    masks_actions = True  # the model masks illegal logits (acting and loss alike)

    loss_metrics = ("policy_loss", "value_loss", "entropy", "rho_mean", "rho_clip_fraction",
                    "approx_kl")  # fmt: skip
    asynchronous_actors = True  # train.py --num_workers N: actor processes feed this learner
    records_log_prob = True  # mu(a|x) of the acting weights, for V-trace
    supports_strategies = True  # the loss is a mean over whole unrolls (env-major minibatches)

    # ---------------------------------------------------------------------- building
    def _build(self) -> None:
        hp = self.hparams
        # hp.num_envs: test mode and export build the agent for other env counts, never training.
        if not 1 <= hp.num_minibatches <= hp.num_envs:
            raise UserError(
                f"num_minibatches={hp.num_minibatches} splits the num_envs={hp.num_envs} env "
                f"copies of an unroll; use 1 <= num_minibatches <= {hp.num_envs}"
            )
        self._build_actor_critic()
        self.estimator = get_advantage_estimator(hp.advantage_estimator)
        self._estimator_options = set(inspect.signature(self.estimator).parameters)
        self.unroll_length = self.steps_per_iteration
        self.batch_spec = self._build_rollout(self.unroll_length, with_value=False)

    def _loss_sums_across_replicas(self) -> bool:
        return self.hparams.normalize_advantage  # whole-minibatch mean and std (`normalize`)

    def _learner_batch_size(self) -> int:
        return self.spec.num_envs // self.hparams.num_minibatches

    # ---------------------------------------------------------------------- learning
    def _update(self) -> Metrics:
        data = self.rollout.data()
        out = self.train_on_batch({key: data[key] for key in UNROLL_FIELDS})
        self.rollout.reset()
        return {f"train/{name}": float(value) for name, value in out.items()}

    def _train(self, batch: TensorBatch) -> dict[str, tf.Tensor]:
        hp = self.hparams
        rollout = Rollout.from_batch(batch)

        def step(envs: tf.Tensor, k: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor, dict]:
            # Whole unrolls of the chosen env copies, env-major: a strategy never splits time.
            rows = rollout.select_envs(envs[k]).batch_major()
            return self.learner.gradient_step(
                self._env_major_loss, self._trainable_variables(), rows
            )

        return update_epochs(
            hp.n_epochs,
            hp.num_minibatches,
            lambda: minibatch_indices(self.generator, self.spec.num_envs, hp.num_minibatches),
            step,
            (*self.loss_metrics, "advantage_mean", "vs_mean"),
            tf.constant(0.0),
        )

    def _env_major_loss(self, rows: TensorBatch) -> LossAndAux:
        """`minibatch_loss` of env-major rows (`Rollout.batch_major`: the gradient step's)."""
        return self.minibatch_loss(Rollout.from_batch_major(rows).as_batch())

    def minibatch_loss(self, minibatch: TensorBatch) -> LossAndAux:
        hp = self.hparams
        rollout = Rollout.from_batch(minibatch)  # [T, B]; its log_prob is mu's, recorded
        now = reevaluate(rollout, self.model)  # pi(a|x), V(x), H(pi(.|x)) with the current weights
        # V-trace's bootstrap values use the current V too: V(final_obs) and V(x_T).
        final_values, bootstrap = bootstrap_values(rollout, self.model)
        rewards = fold_truncation(rollout.reward, rollout.truncated, final_values, hp.gamma)
        discounts = rollout.discounts(hp.gamma)
        log_prob, value = now.log_prob, now.value
        log_rhos = tf.stop_gradient(log_prob) - rollout.log_prob
        step = self.learner.gradient_steps
        rho_bar = self.hparam_values.now("vtrace_rho_bar", step)
        options = {
            "log_rhos": log_rhos,
            "rho_bar": rho_bar,
            "c_bar": self.hparam_values.now("vtrace_c_bar", step),
            "lambda_": self.hparam_values.now("vtrace_lambda", step),
        }
        options = {k: v for k, v in options.items() if k in self._estimator_options}
        value_const, bootstrap_const = tf.stop_gradient(value), tf.stop_gradient(bootstrap)
        advantages, vs = self.estimator(rewards, value_const, discounts, bootstrap_const, **options)
        advantages, vs = tf.stop_gradient(advantages), tf.stop_gradient(vs)
        if hp.normalize_advantage:
            advantages = normalize(advantages, tf.ones_like(advantages))
        vf_coef, ent_coef = (
            self.hparam_values.at("vf_coef", step),
            self.hparam_values.at("ent_coef", step),
        )
        loss, aux = impala_loss(log_prob, now.entropy, value, advantages, vs, vf_coef, ent_coef)
        rhos = tf.exp(log_rhos)
        rho_bar = np.inf if rho_bar is None else rho_bar
        aux["rho_mean"] = tf.reduce_mean(rhos)
        aux["rho_clip_fraction"] = tf.reduce_mean(tf.cast(rhos > rho_bar, tf.float32))
        # E_mu[rho - 1 - log rho] = KL(mu || pi): how far the learner moved from the actors.
        aux["approx_kl"] = tf.reduce_mean(rhos - 1.0 - log_rhos)
        aux["advantage_mean"] = tf.reduce_mean(advantages)
        aux["vs_mean"] = tf.reduce_mean(vs)
        return loss, aux
