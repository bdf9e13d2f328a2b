"""Actor-critic network: a registered torso feeding a policy head and a value head.

The torso runs ONCE per input for both heads (A3C, https://arxiv.org/abs/1602.01783);
`separate_torsos=True` gives the value head its own (SB3's PPO default on vectors). Box actions
get a diagonal Gaussian with a state-independent learned log std (PPO,
https://arxiv.org/abs/1707.06347). Heads: orthogonal init, gain 0.01 (policy) and 1 (value).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import tensorflow as tf

from rl.envs.spec import EnvSpec
from rl.models.action_mask import legal_actions, mask_illegal
from rl.models.continuous import num_action_dims
from rl.models.encoders import obs_to_float
from rl.models.multi_input import make_torso, refuse_keys_with_encoders
from rl.models.running_normalizer import ObservationNormalizer
from rl.utils import private_apis

if TYPE_CHECKING:
    from tensorflow_probability import distributions as tfd


class ActorCritic(tf.keras.Model):
    """obs -> (policy parameters [B, A], value [B]); `distribution` turns the former into a
    `tfp.distributions` object whose `log_prob` sums over action dimensions."""

    def __init__(
        self,
        spec: EnvSpec,
        torso: str,
        hidden_sizes: Sequence[int],
        activation: str,
        separate_torsos: bool = False,
        log_std_init: float = 0.0,
        normalize_obs: bool = False,
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        self.discrete = spec.discrete
        if normalize_obs:
            refuse_keys_with_encoders(spec.obs_layout, "normalize_obs", "set normalize_obs=False")
        self.obs_normalizer = (
            ObservationNormalizer(spec.obs_shape, name="obs_normalizer") if normalize_obs else None
        )
        layout = spec.obs_layout
        self.torso = make_torso(torso, hidden_sizes, activation, layout, name="torso")
        self.value_torso = (
            make_torso(torso, hidden_sizes, activation, layout, name="value_torso")
            if separate_torsos
            else None
        )
        # Observations carry the legal actions: illegal logits are masked in acting and loss.
        self.obs_layout = layout if spec.action_masked else None
        num_outputs = spec.num_actions if self.discrete else num_action_dims(spec)
        self.action_shape = tuple(spec.action_shape)
        self.policy_head = tf.keras.layers.Dense(
            num_outputs, kernel_initializer=tf.keras.initializers.Orthogonal(0.01), name="policy"
        )
        self.value_head = tf.keras.layers.Dense(
            1, kernel_initializer=tf.keras.initializers.Orthogonal(1.0), name="value"
        )
        # A Keras weight: Keras 3 leaves plain tf.Variables out of `trainable_variables`.
        self.log_std = None
        if not self.discrete:
            init = tf.keras.initializers.Constant(float(log_std_init))
            self.log_std = self.add_weight(shape=(num_outputs,), initializer=init, name="log_std")

    def orthogonal_torsos(self, gain: float) -> None:
        """SB3's `ortho_init`: the built torsos' Dense and Conv2D kernels orthogonal with `gain`,
        biases 0 (Keras' default is Glorot). Call after the first forward pass."""
        initializer = tf.keras.initializers.Orthogonal(gain)
        for torso in (self.torso, self.value_torso):
            if torso is None:
                continue
            # Keras' recursive layer walk: reaches the Dense layers inside AutoTorso/Sequential.
            for layer in private_apis.nested_layers(torso, include_self=False):
                if isinstance(layer, tf.keras.layers.Dense | tf.keras.layers.Conv2D):
                    layer.kernel.assign(initializer(layer.kernel.shape))
                    if layer.bias is not None:
                        layer.bias.assign(tf.zeros_like(layer.bias))

    def _inputs(self, obs: tf.Tensor, normalized: bool = False) -> tf.Tensor:
        """`obs` as the torsos take it; `normalized`: already standardized (NormalizedInputs)."""
        obs = obs_to_float(obs)  # uint8 frames -> [0, 1], in the graph
        return obs if self.obs_normalizer is None or normalized else self.obs_normalizer(obs)

    def update_obs_statistics(self, obs: tf.Tensor) -> None:
        """Adds observations the agent acts on to the running statistics (no-op without)."""
        if self.obs_normalizer is not None:
            self.obs_normalizer.update(obs_to_float(obs))

    def call(self, obs: tf.Tensor, normalized: bool = False) -> tuple[tf.Tensor, tf.Tensor]:
        inputs = self._inputs(obs, normalized)
        features = self.torso(inputs)
        value_features = features if self.value_torso is None else self.value_torso(inputs)
        params = self.masked_policy(self.policy_head(features), obs)
        return params, tf.squeeze(self.value_head(value_features), -1)

    def policy(self, obs: tf.Tensor) -> tf.Tensor:
        """Policy parameters alone (skips the value head and torso): what acting needs."""
        return self.masked_policy(self.policy_head(self.torso(self._inputs(obs))), obs)

    def masked_policy(self, params: tf.Tensor, obs: tf.Tensor) -> tf.Tensor:
        """`params` [B, A] with the logits of actions illegal in `obs` (the raw packed batch,
        [B, ...]) at ILLEGAL_VALUE; as they are without a mask."""
        if self.obs_layout is None:
            return params
        return mask_illegal(params, legal_actions(obs, self.obs_layout))

    def value(self, obs: tf.Tensor, normalized: bool = False) -> tf.Tensor:
        """V(obs) alone (skips the policy head)."""
        obs = self._inputs(obs, normalized)
        features = self.torso(obs) if self.value_torso is None else self.value_torso(obs)
        return tf.squeeze(self.value_head(features), -1)

    def distribution(self, policy_params: tf.Tensor) -> tfd.Distribution:
        """Categorical(logits) or Independent(Normal(mean, exp(log_std))) over flat actions. TFP is
        imported on first use: it adds ~1.2 s and 60 MB to `import rl`."""
        from tensorflow_probability import distributions as tfd

        if self.discrete:
            return tfd.Categorical(logits=policy_params)
        std = tf.exp(self.log_std) * tf.ones_like(policy_params)
        return tfd.Independent(tfd.Normal(policy_params, std), reinterpreted_batch_ndims=1)

    def flatten_action(self, action: tf.Tensor) -> tf.Tensor:
        """Box actions [B, *action_shape] -> [B, D] (the distribution's event); discrete as is."""
        if self.discrete:
            return action
        return tf.reshape(tf.cast(action, tf.float32), [tf.shape(action)[0], -1])

    def unflatten_action(self, action: tf.Tensor) -> tf.Tensor:
        if self.discrete:
            return action
        return tf.reshape(action, [tf.shape(action)[0], *self.action_shape])

    @property
    def policy_variables(self) -> list[tf.Variable]:
        """What the policy loss reaches: torso, policy head (and log_std)."""
        variables = self.torso.trainable_variables + self.policy_head.trainable_variables
        return variables + ([self.log_std] if self.log_std is not None else [])


class NormalizedInputs:
    """An `ActorCritic` whose passes take observations its normalizer has already standardized:
    what a rollout holds when it stores each observation normalized with the statistics of its
    own time, as SB3's VecNormalize does (`normalize_obs_at=collection`), instead of raw
    observations normalized with the statistics at update time. Everything else is the model's."""

    def __init__(self, model: ActorCritic) -> None:
        self.model = model

    def __call__(self, obs: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        return self.model(obs, normalized=True)

    def value(self, obs: tf.Tensor) -> tf.Tensor:
        return self.model.value(obs, normalized=True)

    def __getattr__(self, name: str):
        return getattr(self.model, name)
