"""CartPole-v1 in TF ops, step for step gymnasium's `CartPoleEnv`.

Mirrors gymnasium/envs/classic_control/cartpole.py (gymnasium 1.x), the cart-pole of Barto,
Sutton & Anderson (1983) with the equations of Florian, "Correct equations for the dynamics of
the cart-pole system" (2005): explicit Euler, reward +1 on every step including the terminating
one. The arithmetic keeps gymnasium's operation order, so with `dtype=tf.float64` it is the same
float64 computation.
"""

from __future__ import annotations

import math

import numpy as np
import tensorflow as tf

from rl.envs.tf.base import BoxSpec, DiscreteSpec, TFEnv, uniform_between

GRAVITY = 9.8
MASS_CART = 1.0
MASS_POLE = 0.1
TOTAL_MASS = MASS_POLE + MASS_CART
LENGTH = 0.5  # half the pole's length
POLEMASS_LENGTH = MASS_POLE * LENGTH
FORCE_MAG = 10.0
TAU = 0.02
THETA_THRESHOLD = 12 * 2 * math.pi / 360
X_THRESHOLD = 2.4
_OBS_HIGH = np.array([X_THRESHOLD * 2, np.inf, THETA_THRESHOLD * 2, np.inf], np.float32)


class CartPole(TFEnv):
    """Physics row: (x, x_dot, theta, theta_dot), gymnasium's `env.unwrapped.state`."""

    env_id = "tf/CartPole-v1"
    observation_spec = BoxSpec((4,), -_OBS_HIGH, _OBS_HIGH)
    action_spec = DiscreteSpec(2)
    num_reset_draws = 4
    default_max_episode_steps = 500

    def initial_physics(self, uniform: tf.Tensor) -> tf.Tensor:
        return uniform_between(uniform, -0.05, 0.05)

    def dynamics(self, physics, action):
        x, x_dot, theta, theta_dot = tf.unstack(physics, axis=1)
        force = tf.where(tf.equal(tf.cast(action, tf.int32), 1), FORCE_MAG, -FORCE_MAG)
        force = tf.cast(force, self.dtype)
        costheta = tf.cos(theta)
        sintheta = tf.sin(theta)
        temp = (force + POLEMASS_LENGTH * tf.square(theta_dot) * sintheta) / TOTAL_MASS
        thetaacc = (GRAVITY * sintheta - costheta * temp) / (
            LENGTH * (4.0 / 3.0 - MASS_POLE * tf.square(costheta) / TOTAL_MASS)
        )
        xacc = temp - POLEMASS_LENGTH * thetaacc * costheta / TOTAL_MASS
        x = x + TAU * x_dot
        x_dot = x_dot + TAU * xacc
        theta = theta + TAU * theta_dot
        theta_dot = theta_dot + TAU * thetaacc
        terminated = (
            (x < -X_THRESHOLD)
            | (x > X_THRESHOLD)
            | (theta < -THETA_THRESHOLD)
            | (theta > THETA_THRESHOLD)
        )
        reward = tf.ones_like(x, tf.float32)  # +1 every step, the terminating one included
        return tf.stack([x, x_dot, theta, theta_dot], axis=1), reward, terminated

    def _observe(self, physics):
        return tf.cast(physics, tf.float32)
