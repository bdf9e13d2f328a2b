"""MountainCar-v0 and MountainCarContinuous-v0 in TF ops, step for step gymnasium's.

Mirrors gymnasium/envs/classic_control/mountain_car.py and continuous_mountain_car.py, the task
of Moore, "Efficient memory-based learning for robot control" (PhD thesis, 1990). The
continuous env's reward charges 0.1 a^2 on the unclipped action, and gymnasium stores its state
as float32 after each step, so `dtype=tf.float32` is its own precision.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import tensorflow as tf

from rl.envs.tf.base import BoxSpec, DiscreteSpec, TFEnv, uniform_between

MIN_POSITION = -1.2
MAX_POSITION = 0.6
MAX_SPEED = 0.07
GRAVITY = 0.0025
_LOW = np.array([MIN_POSITION, -MAX_SPEED], np.float32)
_HIGH = np.array([MAX_POSITION, MAX_SPEED], np.float32)


class _Car(TFEnv):
    """What both tasks share: the (position, velocity) physics row, gymnasium's
    `env.unwrapped.state`, its reset, and the move after the velocity update."""

    observation_spec = BoxSpec((2,), _LOW, _HIGH)
    num_reset_draws = 1
    GOAL_POSITION: ClassVar[float]

    def initial_physics(self, uniform):
        position = uniform_between(uniform[:, 0], -0.6, -0.4)
        return tf.stack([position, tf.zeros_like(position)], axis=1)

    def _move(self, position: tf.Tensor, velocity: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        """Clips the updated velocity, moves the car and stops it at the left wall; returns the
        next physics and `terminated` (goal reached moving right)."""
        velocity = tf.clip_by_value(velocity, -MAX_SPEED, MAX_SPEED)
        position = tf.clip_by_value(position + velocity, MIN_POSITION, MAX_POSITION)
        # gymnasium: `if position == min_position and velocity < 0: velocity = 0`.
        stuck = tf.logical_and(tf.equal(position, MIN_POSITION), velocity < 0)
        velocity = tf.where(stuck, tf.zeros_like(velocity), velocity)
        terminated = tf.logical_and(position >= self.GOAL_POSITION, velocity >= 0)
        return tf.stack([position, velocity], axis=1), terminated

    def _observe(self, physics):
        return tf.cast(physics, tf.float32)


class MountainCar(_Car):
    """Actions {0, 1, 2}: push left, none, right."""

    env_id = "tf/MountainCar-v0"
    action_spec = DiscreteSpec(3)
    default_max_episode_steps = 200

    FORCE = 0.001
    GOAL_POSITION = 0.5

    def dynamics(self, physics, action):
        position, velocity = tf.unstack(physics, axis=1)
        push = tf.cast(tf.cast(action, tf.int32) - 1, self.dtype)
        velocity = velocity + (push * self.FORCE + tf.cos(3 * position) * (-GRAVITY))
        physics, terminated = self._move(position, velocity)
        return physics, tf.fill(tf.shape(terminated), -1.0), terminated


class MountainCarContinuous(_Car):
    """Actions [N, 1] float32."""

    env_id = "tf/MountainCarContinuous-v0"
    action_spec = BoxSpec((1,), np.array([-1.0], np.float32), np.array([1.0], np.float32))
    default_max_episode_steps = 999

    POWER = 0.0015
    GOAL_POSITION = 0.45

    def dynamics(self, physics, action):
        position, velocity = tf.unstack(physics, axis=1)
        action = tf.cast(action[:, 0], self.dtype)
        force = tf.clip_by_value(action, -1.0, 1.0)
        velocity = velocity + (force * self.POWER - GRAVITY * tf.cos(3 * position))
        physics, terminated = self._move(position, velocity)
        reward = tf.where(terminated, 100.0, 0.0) - tf.cast(tf.square(action) * 0.1, tf.float32)
        return physics, reward, terminated
