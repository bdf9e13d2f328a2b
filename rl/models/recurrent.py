"""Recurrent networks: a GRU or LSTM core between the torso and the heads.

The core's state is one flat float tensor [B, state_size] (an LSTM's [h, c] concatenated): one
variable, one replay array, resets by one `tf.where`. `step` (acting) and `unroll` (a time-major
sequence with resets, only the core looping) compute the same numbers, so a learner re-creates
the acting-time outputs from a stored initial state.

Cells: Keras' GRUCell (Cho et al. 2014, https://arxiv.org/abs/1406.1078) and LSTMCell
(Hochreiter & Schmidhuber 1997). DRQN: Hausknecht & Stone 2015, https://arxiv.org/abs/1507.06527.
"""

from __future__ import annotations

from collections.abc import Sequence

import tensorflow as tf

from rl.envs.spec import EnvSpec
from rl.errors import UserError, did_you_mean
from rl.models.actor_critic import ActorCritic
from rl.models.encoders import obs_to_float
from rl.models.multi_input import refuse_keys_with_encoders
from rl.models.q_network import QNetwork
from rl.models.running_normalizer import ObservationNormalizer

CELLS = {"gru": tf.keras.layers.GRUCell, "lstm": tf.keras.layers.LSTMCell}


def check_cell(cell: str) -> None:
    if cell not in CELLS:
        raise UserError(
            f"unknown recurrent_cell {cell!r}{did_you_mean(cell, list(CELLS))}; "
            f"choose one of {sorted(CELLS)}"
        )


def reset_where(state: tf.Tensor, episode_start: tf.Tensor) -> tf.Tensor:
    """`state` [B, S] with the rows where `episode_start` [B] is set replaced by zeros."""
    return tf.where(episode_start[:, None], tf.zeros_like(state), state)


class RecurrentCore(tf.keras.layers.Layer):
    """A GRU or LSTM cell with a flat state [B, state_size] (LSTM: h and c side by side)."""

    def __init__(self, cell: str, units: int, **kwargs) -> None:
        super().__init__(**kwargs)
        check_cell(cell)
        self.kind = cell
        self.units = int(units)
        self.num_states = 2 if cell == "lstm" else 1
        self.state_size = self.units * self.num_states
        self.cell = CELLS[cell](self.units, name=cell)

    def initial_state(self, batch_size: int | tf.Tensor) -> tf.Tensor:
        return tf.zeros([batch_size, self.state_size], tf.float32)

    def call(self, inputs: tf.Tensor, state: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        """One step: features [B, F], state [B, S] -> (output [B, units], new state [B, S])."""
        states = tf.split(state, self.num_states, axis=-1)
        output, new_states = self.cell(inputs, states)
        # The state is kept and stored in float32 whatever the cell computes in (`precision`).
        return output, tf.cast(tf.concat(list(new_states), axis=-1), tf.float32)

    def unroll(
        self,
        inputs: tf.Tensor,
        state: tf.Tensor,
        episode_start: tf.Tensor | None = None,
        detach: tf.Tensor | None = None,
    ) -> tuple[tf.Tensor, tf.Tensor]:
        """Runs features [T, B, F] from `state` [B, S]: (outputs [T, B, units], states [T, B, S]).
        The state is zeroed before steps flagged in `episode_start` and detached before those in
        `detach` (R2D2's burn-in)."""
        steps, batch = tf.shape(inputs)[0], tf.shape(inputs)[1]
        if episode_start is None:
            episode_start = tf.zeros([steps, batch], tf.bool)
        if detach is None:
            detach = tf.zeros([steps, batch], tf.bool)

        def step(carry, elems):
            state, _ = carry
            x, start, stop = elems
            state = reset_where(state, start)
            state = tf.where(stop[:, None], tf.stop_gradient(state), state)
            output, state = self.call(x, state)
            return state, output

        initial = (state, tf.zeros([batch, self.units], self.compute_dtype))
        states, outputs = tf.scan(step, (inputs, episode_start, detach), initializer=initial)
        return outputs, states


def _flat_time(obs: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
    """[T, B, ...] -> ([T * B, ...], T, B)."""
    steps, batch = tf.shape(obs)[0], tf.shape(obs)[1]
    return tf.reshape(obs, tf.concat([[steps * batch], tf.shape(obs)[2:]], 0)), steps, batch


def _unflat_time(x: tf.Tensor, steps: tf.Tensor, batch: tf.Tensor) -> tf.Tensor:
    """[T * B, ...] -> [T, B, ...]."""
    return tf.reshape(x, tf.concat([[steps, batch], tf.shape(x)[1:]], 0))


class RecurrentActorCritic(ActorCritic):
    """obs, state -> (policy parameters, value, new state): torso -> core -> the heads of
    `ActorCritic`.

    With `separate_torsos` the value head gets its own torso and core (SB3-contrib's
    `enable_critic_lstm` without `shared_lstm`), so value-loss gradients do not shape the policy's
    memory; the state is then [policy | value]. `core_first`, `normalize_obs` and `torch_init`
    make it SB3-contrib's `MlpLstmPolicy` (docs/recurrent.md)."""

    def __init__(
        self,
        spec: EnvSpec,
        torso: str,
        hidden_sizes: Sequence[int],
        activation: str,
        cell: str,
        units: int,
        separate_torsos: bool = False,
        log_std_init: float = 0.0,
        core_first: bool = False,
        normalize_obs: bool = False,
        **kwargs,
    ) -> None:
        super().__init__(
            spec, torso, hidden_sizes, activation, separate_torsos=separate_torsos,
            log_std_init=log_std_init, **kwargs,
        )  # fmt: skip
        self.core_first = bool(core_first)
        if core_first:  # the core would read the packed vector before any key's encoder
            refuse_keys_with_encoders(
                spec.obs_layout, "recurrent_core_first", "set recurrent_core_first=False"
            )
        if normalize_obs:
            refuse_keys_with_encoders(spec.obs_layout, "normalize_obs", "set normalize_obs=False")
        self.core = RecurrentCore(cell, units, name="core")
        self.value_core = RecurrentCore(cell, units, name="value_core") if separate_torsos else None
        # Created after the cores (not by ActorCritic's constructor): checkpoints keep their order.
        self.obs_normalizer = (
            ObservationNormalizer(spec.obs_shape, name="obs_normalizer") if normalize_obs else None
        )

    @property
    def state_size(self) -> int:
        return self.core.state_size * (1 if self.value_core is None else 2)

    def initial_state(self, batch_size: int | tf.Tensor) -> tf.Tensor:
        return tf.zeros([batch_size, self.state_size], tf.float32)

    def call(self, obs: tf.Tensor, state: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
        return self.step(obs, state)

    def _branches(self) -> list[tuple[tf.keras.layers.Layer, RecurrentCore]]:
        """(torso, core) of the policy and, with separate cores, of the value."""
        value = [] if self.value_core is None else [(self.value_torso, self.value_core)]
        return [(self.torso, self.core), *value]

    def step(self, obs: tf.Tensor, state: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
        """One step for a batch [B, ...]: (policy params [B, P], value [B], new state)."""
        inputs = self._inputs(obs)
        branches = self._branches()
        states = tf.split(state, len(branches), axis=-1)
        outputs, new_states = [], []
        for (torso, core), branch_state in zip(branches, states, strict=True):
            if self.core_first:
                flat = tf.reshape(inputs, [tf.shape(inputs)[0], -1])
                output, branch_state = core(flat, branch_state)
                output = torso(output)
            else:
                output, branch_state = core(torso(inputs), branch_state)
            outputs.append(output)
            new_states.append(branch_state)
        return (
            self.masked_policy(self.policy_head(outputs[0]), obs),
            self._value_of(outputs[-1]),
            tf.concat(new_states, axis=-1),
        )

    def unroll(
        self, obs: tf.Tensor, state: tf.Tensor, episode_start: tf.Tensor | None = None
    ) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
        """Time-major [T, B, ...] from `state`: (params, value, state after every step)."""
        flat, steps, batch = _flat_time(obs)
        inputs = self._inputs(flat)  # [T * B, ...]: feed-forward parts run once on all steps
        branches = self._branches()
        states = tf.split(state, len(branches), axis=-1)
        outputs, all_states = [], []
        for (torso, core), branch_state in zip(branches, states, strict=True):
            if self.core_first:
                features = tf.reshape(inputs, [steps, batch, -1])
                core_outputs, branch_states = core.unroll(features, branch_state, episode_start)
                output = torso(_flat_time(core_outputs)[0])
            else:
                features = _unflat_time(torso(inputs), steps, batch)
                core_outputs, branch_states = core.unroll(features, branch_state, episode_start)
                output = _flat_time(core_outputs)[0]
            outputs.append(output)
            all_states.append(branch_states)
        params = self.masked_policy(self.policy_head(outputs[0]), flat)
        params = _unflat_time(params, steps, batch)
        value = _unflat_time(self._value_of(outputs[-1]), steps, batch)
        return params, value, tf.concat(all_states, axis=-1)

    def _value_of(self, output: tf.Tensor) -> tf.Tensor:
        return tf.squeeze(self.value_head(output), -1)

    def policy(self, obs: tf.Tensor) -> tf.Tensor:
        raise TypeError("RecurrentActorCritic needs a state: use step(obs, state) or unroll")

    def value(self, obs: tf.Tensor) -> tf.Tensor:
        raise TypeError("RecurrentActorCritic needs a state: use step(obs, state) or unroll")

    @property
    def policy_variables(self) -> list[tf.Variable]:
        return super().policy_variables + self.core.trainable_variables


class RecurrentQNetwork(QNetwork):
    """obs, state -> (Q-values [B, A], new state): torso -> core -> plain or dueling head."""

    def __init__(
        self,
        num_actions: int,
        torso: str,
        hidden_sizes: Sequence[int],
        activation: str,
        dueling: bool,
        cell: str,
        units: int,
        **kwargs,
    ) -> None:
        super().__init__(num_actions, torso, hidden_sizes, activation, dueling, **kwargs)
        self.core = RecurrentCore(cell, units, name="core")

    @property
    def state_size(self) -> int:
        return self.core.state_size

    def initial_state(self, batch_size: int | tf.Tensor) -> tf.Tensor:
        return self.core.initial_state(batch_size)

    def call(self, obs: tf.Tensor, state: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        return self.step(obs, state)

    def step(self, obs: tf.Tensor, state: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        """One step for a batch [B, ...]: (Q-values [B, A], new state [B, S])."""
        output, state = self.core(self.torso(obs_to_float(obs)), state)
        return self._head(output, noisy=False), state

    def unroll(
        self,
        obs: tf.Tensor,
        state: tf.Tensor,
        episode_start: tf.Tensor | None = None,
        detach: tf.Tensor | None = None,
    ) -> tuple[tf.Tensor, tf.Tensor]:
        """Time-major [T, B, ...] from `state`: (Q-values, the state after every step)."""
        flat, steps, batch = _flat_time(obs)
        features = _unflat_time(self.torso(obs_to_float(flat)), steps, batch)
        outputs, states = self.core.unroll(features, state, episode_start, detach)
        q_values = self._head(_flat_time(outputs)[0], noisy=False)
        return _unflat_time(q_values, steps, batch), states
