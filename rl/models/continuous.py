"""Networks of the continuous-control actor-critics (DDPG, TD3, SAC) on a registered torso.

- `DeterministicActor`: obs -> tanh -> rescaled to the Box bounds (Lillicrap et al. 2015,
  https://arxiv.org/abs/1509.02971; Fujimoto et al. 2018, https://arxiv.org/abs/1802.09477).
- `GaussianActor`: obs -> (mean, log_std) of the pre-tanh Gaussian, log_std clipped to
  [-20, 2] as in SAC's reference code (Haarnoja et al. 2018, https://arxiv.org/abs/1801.01290).
- `Critics`: C independent Q(s, a) networks, each on concat(obs, action); outputs [C, B].

Each may read its observations through an `ObservationNormalizer` (`normalize_obs`): one layer
that the actor, the critics and their targets share, so the statistics are one set of variables
and the replay keeps raw observations, as SB3's replay keeps them under VecNormalize.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import tensorflow as tf

from rl.envs.packed_observation import ObsLayout
from rl.envs.spec import EnvSpec
from rl.models.multi_input import make_torso
from rl.models.running_normalizer import ObservationNormalizer

LOG_STD_MIN, LOG_STD_MAX = -20.0, 2.0


def num_action_dims(spec: EnvSpec) -> int:
    return math.prod(int(dim) for dim in spec.action_shape)


def observed(obs: tf.Tensor, normalizer: ObservationNormalizer | None) -> tf.Tensor:
    """The float32 observations a network reads: normalized where it has a normalizer."""
    return normalizer(obs) if normalizer is not None else tf.cast(obs, tf.float32)


class ActorTorso(tf.keras.Model):
    """What both actors share: a registered torso over the observations, normalized first where
    the agent normalizes them (`normalize_obs`); each actor adds its heads in `_build_heads`."""

    def __init__(
        self,
        spec: EnvSpec,
        torso: str,
        hidden_sizes: Sequence[int],
        activation: str,
        obs_normalizer: ObservationNormalizer | None = None,
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        self.obs_normalizer = obs_normalizer
        self.torso = make_torso(torso, hidden_sizes, activation, spec.obs_layout)
        self._build_heads(spec)

    def _build_heads(self, spec: EnvSpec) -> None:
        raise NotImplementedError

    def features(self, obs: tf.Tensor) -> tf.Tensor:
        return self.torso(observed(obs, self.obs_normalizer))


class DeterministicActor(ActorTorso):
    """mu(s) in [low, high]: center + half_range * tanh(head(torso(obs)))."""

    def _build_heads(self, spec: EnvSpec) -> None:
        self.head = tf.keras.layers.Dense(num_action_dims(spec), name="action")
        self.action_shape = tuple(spec.action_shape)
        low = tf.constant(spec.action_low, tf.float32)
        high = tf.constant(spec.action_high, tf.float32)
        self.center = tf.reshape((high + low) / 2.0, [-1])
        self.scale = tf.reshape((high - low) / 2.0, [-1])

    def call(self, obs: tf.Tensor) -> tf.Tensor:
        flat = self.center + self.scale * tf.tanh(self.head(self.features(obs)))
        return tf.reshape(flat, [tf.shape(obs)[0], *self.action_shape])


class GaussianActor(ActorTorso):
    """obs -> (mean [B, A], log_std [B, A]) of the Gaussian before the tanh squashing."""

    def _build_heads(self, spec: EnvSpec) -> None:
        self.mean_head = tf.keras.layers.Dense(num_action_dims(spec), name="mean")
        self.log_std_head = tf.keras.layers.Dense(num_action_dims(spec), name="log_std")

    def call(self, obs: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        features = self.features(obs)
        log_std = tf.clip_by_value(self.log_std_head(features), LOG_STD_MIN, LOG_STD_MAX)
        return self.mean_head(features), log_std


class Critics(tf.keras.Model):
    """`num_critics` independent Q(s, a) networks; call -> [num_critics, B]."""

    def __init__(
        self,
        torso: str,
        hidden_sizes: Sequence[int],
        activation: str,
        num_critics: int = 2,
        obs_layout: ObsLayout | None = None,
        obs_normalizer: ObservationNormalizer | None = None,
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        self.num_critics = num_critics
        self.obs_normalizer = obs_normalizer
        torso_name = torso
        # Named attributes: tf.train.Checkpoint would silently miss layers in a Keras list.
        for i in range(num_critics):
            name = f"q{i}_torso"
            torso = make_torso(torso_name, hidden_sizes, activation, obs_layout, name=name)
            setattr(self, f"torso_{i}", torso)
            setattr(self, f"head_{i}", tf.keras.layers.Dense(1, name=f"q{i}"))

    def _inputs(self, obs: tf.Tensor, action: tf.Tensor) -> tf.Tensor:
        """Every critic reads [B, obs features + action features], both flattened, float32."""
        batch = tf.shape(obs)[0]
        obs = observed(obs, self.obs_normalizer)
        flat = [tf.reshape(tf.cast(x, tf.float32), [batch, -1]) for x in (obs, action)]
        return tf.concat(flat, axis=-1)

    def _q(self, i: int, inputs: tf.Tensor) -> tf.Tensor:
        return tf.squeeze(getattr(self, f"head_{i}")(getattr(self, f"torso_{i}")(inputs)), -1)

    def call(self, obs: tf.Tensor, action: tf.Tensor) -> tf.Tensor:
        inputs = self._inputs(obs, action)
        return tf.stack([self._q(i, inputs) for i in range(self.num_critics)])

    def first(self, obs: tf.Tensor, action: tf.Tensor) -> tf.Tensor:
        """Q_1(s, a) alone [B] (TD3's actor loss reads only the first critic)."""
        return self._q(0, self._inputs(obs, action))
