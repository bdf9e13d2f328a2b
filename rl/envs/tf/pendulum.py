"""Pendulum-v1 in TF ops, step for step gymnasium's `PendulumEnv`.

Mirrors gymnasium/envs/classic_control/pendulum.py: semi-implicit Euler, the cost of the state
before the step, and the angle itself never wrapped (only the cost normalizes it). gymnasium
computes the torque terms of the cost in float32 and the rest in float64; so does
`dtype=tf.float64` here.
"""

from __future__ import annotations

import math

import numpy as np
import tensorflow as tf

from rl.envs.tf.base import BoxSpec, TFEnv, uniform_between

MAX_SPEED = 8.0
MAX_TORQUE = 2.0
DT = 0.05
G = 10.0
M = 1.0
L = 1.0
_OBS_HIGH = np.array([1.0, 1.0, MAX_SPEED], np.float32)


def angle_normalize(x: tf.Tensor) -> tf.Tensor:
    """gymnasium's `((x + pi) % (2 pi)) - pi` (floor modulo, like numpy's `%`)."""
    return tf.math.floormod(x + math.pi, 2 * math.pi) - math.pi


class Pendulum(TFEnv):
    """Physics row: (theta, thdot), gymnasium's `env.unwrapped.state`; actions [N, 1]."""

    env_id = "tf/Pendulum-v1"
    observation_spec = BoxSpec((3,), -_OBS_HIGH, _OBS_HIGH)
    action_spec = BoxSpec(
        (1,), np.array([-MAX_TORQUE], np.float32), np.array([MAX_TORQUE], np.float32)
    )
    num_reset_draws = 2
    default_max_episode_steps = 200

    def initial_physics(self, uniform):
        th = uniform_between(uniform[:, 0], -math.pi, math.pi)
        thdot = uniform_between(uniform[:, 1], -1.0, 1.0)
        return tf.stack([th, thdot], axis=1)

    def dynamics(self, physics, action):
        th, thdot = tf.unstack(physics, axis=1)
        # gymnasium's torque is a float32 scalar (`np.clip(u, ...)[0]`), so its two torque terms
        # are float32 products that join the float64 state arithmetic afterwards.
        u = tf.clip_by_value(tf.cast(action[:, 0], tf.float32), -MAX_TORQUE, MAX_TORQUE)
        torque_cost = tf.cast(0.001 * tf.square(u), self.dtype)
        torque_acc = tf.cast(3.0 / (M * L**2) * u, self.dtype)
        costs = tf.square(angle_normalize(th)) + 0.1 * tf.square(thdot) + torque_cost
        newthdot = thdot + (3 * G / (2 * L) * tf.sin(th) + torque_acc) * DT
        newthdot = tf.clip_by_value(newthdot, -MAX_SPEED, MAX_SPEED)
        newth = th + newthdot * DT
        terminated = tf.zeros_like(th, tf.bool)
        return tf.stack([newth, newthdot], axis=1), -costs, terminated

    def _observe(self, physics):
        th, thdot = tf.unstack(physics, axis=1)
        return tf.cast(tf.stack([tf.cos(th), tf.sin(th), thdot], axis=1), tf.float32)
