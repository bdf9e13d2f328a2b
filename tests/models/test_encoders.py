"""The Nature CNN, the default torso by observation type, and uint8 -> float in the graph."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

import rl  # noqa: F401  (fills the registries)
from rl import registry
from rl.envs.spec import EnvSpec
from rl.memory.frame_replay import FrameReplay
from rl.models import ActorCritic, QNetwork
from rl.models.encoders import obs_to_float


def image_spec(num_actions: int = 6, stack: int = 4, num_envs: int = 1) -> EnvSpec:
    import gymnasium as gym

    return EnvSpec.from_spaces(
        "ALE/Pong-v5",
        num_envs,
        gym.spaces.Box(0, 255, (84, 84, stack), np.uint8),
        gym.spaces.Discrete(num_actions),
        None,
    )


def test_nature_cnn_has_the_papers_parameter_count():
    net = QNetwork(6, "auto", [512], "relu", dueling=False)
    net(tf.zeros([1, 84, 84, 4], tf.uint8))
    assert net.torso.kind == "cnn"
    # conv 8x8x4x32+32 = 8,224; conv 4x4x32x64+64 = 32,832; conv 3x3x64x64+64 = 36,928;
    # 84 -> 20 -> 9 -> 7, so dense 7*7*64*512+512 = 1,606,144; head 512*6+6 = 3,078.
    expected = 8_224 + 32_832 + 36_928 + 1_606_144 + 3_078
    assert sum(int(np.prod(v.shape)) for v in net.trainable_variables) == expected == 1_687_206


def test_auto_torso_picks_by_observation_rank():
    vector = QNetwork(2, "auto", [16, 16], "relu", dueling=True)
    vector(tf.zeros([3, 4]))
    assert vector.torso.kind == "mlp"
    kernels = [v.shape for v in vector.torso.trainable_variables if len(v.shape) == 2]
    assert kernels == [(4, 16), (16, 16)]
    model = ActorCritic(image_spec(), "auto", [64], "relu")
    params, value = model(tf.zeros([2, 84, 84, 4], tf.uint8))
    assert model.torso.kind == "cnn" and params.shape == (2, 6) and value.shape == (2,)


def test_uint8_frames_are_scaled_in_the_graph():
    assert obs_to_float(tf.constant([0, 51, 255], tf.uint8)).numpy() == pytest.approx(
        [0.0, 0.2, 1.0]
    )
    assert obs_to_float(tf.constant([300.0])).numpy() == pytest.approx([300.0])  # floats as is
    net = QNetwork(4, "cnn", [32], "relu", dueling=False)
    frames = np.random.default_rng(0).integers(0, 256, (2, 84, 84, 4), dtype=np.uint8)
    from_uint8 = net(tf.constant(frames)).numpy()
    # The same network on pre-scaled floats: scaling happened inside `call`, not before.
    scaled = tf.constant(frames.astype(np.float32) / 255.0)
    from_float = net.head(net.torso(scaled)).numpy()
    np.testing.assert_allclose(from_uint8, from_float, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("memory", ["uniform", "prioritized"])
def test_dqn_on_frame_stacks_uses_the_frame_replay(memory):
    import dataclasses

    hp = registry.get_hparams("dqn_atari_tiny")()
    hp.memory = memory
    spec = dataclasses.replace(image_spec(4), frame_stack=4)
    agent = registry.get_agent("dqn")(spec, hp, seed=0)
    assert isinstance(agent.replay, FrameReplay) and agent.n_step is None
    assert agent.replay.prioritized == (memory == "prioritized")
    assert agent.q_network.torso.kind == "cnn"
    plain = registry.get_agent("dqn")(image_spec(4), hp, seed=0)  # no frame_stack declared
    assert not isinstance(plain.replay, FrameReplay)
