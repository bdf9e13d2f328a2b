"""Acrobot-v1 in TF ops, step for step gymnasium's `AcrobotEnv`.

Mirrors gymnasium/envs/classic_control/acrobot.py (`step`, `_dsdt`, `_terminal`, `rk4`, `wrap`,
`bound`), the task of Sutton, "Generalization in reinforcement learning: successful examples
using sparse coarse coding" (NeurIPS 1996), in gymnasium's operation order and with its choices:
the book's equation for the second joint (`book_or_nips = "book"`), no torque noise (stepping
draws no random numbers), one RK4 step over dt = 0.2 s, and the initial state rounded to float32
(gymnasium's `.astype(np.float32)`; its steps then run in float64).

Acrobot is chaotic: float32 and float64 trajectories separate within an episode, so
`dtype=tf.float64` is the setting that reproduces gymnasium's episodes; `float32` agrees with it
step by step (from the same state) to float32 rounding.
"""

from __future__ import annotations

import math

import numpy as np
import tensorflow as tf

from rl.envs.tf.base import BoxSpec, DiscreteSpec, TFEnv, uniform_between

DT = 0.2
LINK_LENGTH_1 = 1.0
LINK_MASS_1 = 1.0
LINK_MASS_2 = 1.0
LINK_COM_POS_1 = 0.5
LINK_COM_POS_2 = 0.5
LINK_MOI = 1.0
MAX_VEL_1 = 4 * math.pi
MAX_VEL_2 = 9 * math.pi
AVAIL_TORQUE = (-1.0, 0.0, 1.0)
_OBS_HIGH = np.array([1.0, 1.0, 1.0, 1.0, MAX_VEL_1, MAX_VEL_2], np.float32)


def _dsdt(theta1, theta2, dtheta1, dtheta2, a):
    """gymnasium's `AcrobotEnv._dsdt` ("book" dynamics); returns the four state derivatives."""
    m1, m2 = LINK_MASS_1, LINK_MASS_2
    l1, lc1, lc2 = LINK_LENGTH_1, LINK_COM_POS_1, LINK_COM_POS_2
    i1 = i2 = LINK_MOI
    g = 9.8
    cos_theta2 = tf.cos(theta2)
    sin_theta2 = tf.sin(theta2)
    d1 = m1 * lc1**2 + m2 * (l1**2 + lc2**2 + 2 * l1 * lc2 * cos_theta2) + i1 + i2
    d2 = m2 * (lc2**2 + l1 * lc2 * cos_theta2) + i2
    phi2 = m2 * lc2 * g * tf.cos(theta1 + theta2 - math.pi / 2.0)
    phi1 = (
        -m2 * l1 * lc2 * tf.square(dtheta2) * sin_theta2
        - 2 * m2 * l1 * lc2 * dtheta2 * dtheta1 * sin_theta2
        + (m1 * lc1 + m2 * l1) * g * tf.cos(theta1 - math.pi / 2)
        + phi2
    )
    ddtheta2 = (a + d2 / d1 * phi1 - m2 * l1 * lc2 * tf.square(dtheta1) * sin_theta2 - phi2) / (
        m2 * lc2**2 + i2 - tf.square(d2) / d1
    )
    ddtheta1 = -(d2 * ddtheta2 + phi1) / d1
    return dtheta1, dtheta2, ddtheta1, ddtheta2


def _wrap(x: tf.Tensor, low: float, high: float) -> tf.Tensor:
    """gymnasium's `wrap`: subtract/add the period until low <= x <= high (here in one go)."""
    diff = high - low
    above = tf.math.ceil((x - high) / diff)
    below = tf.math.ceil((low - x) / diff)
    x = tf.where(x > high, x - diff * above, x)
    return tf.where(x < low, x + diff * below, x)


class Acrobot(TFEnv):
    """Physics row: (theta1, theta2, dtheta1, dtheta2), gymnasium's `env.unwrapped.state`."""

    env_id = "tf/Acrobot-v1"
    observation_spec = BoxSpec((6,), -_OBS_HIGH, _OBS_HIGH)
    action_spec = DiscreteSpec(3)
    num_reset_draws = 4
    default_max_episode_steps = 500

    def initial_physics(self, uniform):
        state = uniform_between(tf.cast(uniform, tf.float64), -0.1, 0.1)
        return tf.cast(tf.cast(state, tf.float32), self.dtype)

    def dynamics(self, physics, action):
        torque = tf.gather(tf.constant(AVAIL_TORQUE, self.dtype), tf.cast(action, tf.int32))
        y0 = tf.unstack(physics, axis=1)
        dt2 = DT / 2.0
        k1 = _dsdt(*y0, torque)
        k2 = _dsdt(*[y + dt2 * k for y, k in zip(y0, k1, strict=True)], torque)
        k3 = _dsdt(*[y + dt2 * k for y, k in zip(y0, k2, strict=True)], torque)
        k4 = _dsdt(*[y + DT * k for y, k in zip(y0, k3, strict=True)], torque)
        theta1, theta2, dtheta1, dtheta2 = [
            y + DT / 6.0 * (a + 2 * b + 2 * c + d)
            for y, a, b, c, d in zip(y0, k1, k2, k3, k4, strict=True)
        ]
        theta1 = _wrap(theta1, -math.pi, math.pi)
        theta2 = _wrap(theta2, -math.pi, math.pi)
        dtheta1 = tf.clip_by_value(dtheta1, -MAX_VEL_1, MAX_VEL_1)
        dtheta2 = tf.clip_by_value(dtheta2, -MAX_VEL_2, MAX_VEL_2)
        terminated = -tf.cos(theta1) - tf.cos(theta2 + theta1) > 1.0
        reward = tf.where(terminated, 0.0, -1.0)
        return tf.stack([theta1, theta2, dtheta1, dtheta2], axis=1), reward, terminated

    def _observe(self, physics):
        theta1, theta2, dtheta1, dtheta2 = tf.unstack(physics, axis=1)
        obs = [tf.cos(theta1), tf.sin(theta1), tf.cos(theta2), tf.sin(theta2), dtheta1, dtheta2]
        return tf.cast(tf.stack(obs, axis=1), tf.float32)
