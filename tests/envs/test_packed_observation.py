"""Dict and Tuple observations packed into one float32 vector (rl/envs/packed_observation.py) and
read back, an encoder per key, by the multi_input torso (docs/observations.md)."""

import gymnasium as gym
import numpy as np
import tensorflow as tf

import rl  # noqa: F401
from rl.envs.packed_observation import observation_layout
from rl.models.multi_input import MultiInputTorso

SPACE = gym.spaces.Dict(
    {
        "camera": gym.spaces.Box(0, 255, (36, 36, 3), np.uint8),  # large enough for the CNN
        "position": gym.spaces.Box(-1.0, 1.0, (2,), np.float32),
        "pair": gym.spaces.Tuple((gym.spaces.Discrete(3, start=1), gym.spaces.MultiBinary(2))),
    }
)


def test_keys_pack_losslessly_where_the_layout_says():
    layout = observation_layout("test", SPACE, gym.spaces.Discrete(2))
    kinds = {part.key: part.kind for part in layout.parts}
    assert kinds == {
        "camera": "image",
        "position": "vector",
        "pair/0": "one_hot",
        "pair/1": "vector",
    }
    obs = SPACE.sample()
    packed = layout.pack(obs)
    assert packed.shape == (36 * 36 * 3 + 2 + 1 + 2,) and packed.dtype == np.float32
    where = {part.key: part for part in layout.parts}

    def read(key):
        part = where[key]
        return packed[part.offset : part.offset + part.size].reshape(part.shape or (1,))

    np.testing.assert_array_equal(read("camera"), obs["camera"])  # uint8 exact in float32
    np.testing.assert_array_equal(read("position"), obs["position"])
    assert read("pair/0")[0] == obs["pair"][0] - 1  # Discrete values counted from `start`
    np.testing.assert_array_equal(read("pair/1"), obs["pair"][1])
    assert where["camera"].scale == 1 / 255 and where["position"].scale == 1


def test_a_bare_discrete_observation_and_infos_mask_pack_as_a_one_hot_and_a_mask():
    # gymnasium's Taxi: a Discrete(500) state, its action mask in info (an uncaught KeyError
    # at the first reset before: the leaf was named "" on one side, "observation" on the other).
    env = gym.make("Taxi-v4")
    obs, info = env.reset(seed=0)
    layout = observation_layout("Taxi-v4", env.observation_space, env.action_space, info)
    assert [(p.key, p.kind, p.categories) for p in layout.parts] == [
        ("observation", "one_hot", 500),
        ("action_mask", "action_mask", 0),
    ]
    packed = layout.pack(obs, info)
    assert packed[0] == obs
    np.testing.assert_array_equal(packed[1:], info["action_mask"])


def test_multi_input_torso_reads_each_key_with_its_encoder(tmp_path):
    # The camera goes through a Nature CNN (its 8x8x3x32 first kernel), the Discrete value is
    # one-hot: two observations that differ only there get different features. Every layer is
    # tracked, so checkpoints hold the CNN.
    layout = observation_layout("test", SPACE, gym.spaces.Discrete(2))
    torso = MultiInputTorso(layout, [8], "relu", name="torso")
    first = SPACE.sample()
    second = {**first, "pair": (3 if first["pair"][0] != 3 else 1, first["pair"][1])}
    batch = tf.constant(np.stack([layout.pack(first), layout.pack(second)]))
    features = torso(batch).numpy()
    assert features.shape == (2, 8)
    assert [8, 8, 3, 32] in [v.shape.as_list() for v in torso.trainable_variables]
    assert not np.allclose(features[0], features[1])
    path = tf.train.Checkpoint(torso=torso).write(str(tmp_path / "torso"))
    saved = [name for name, _ in tf.train.list_variables(path) if "OBJECT_GRAPH" not in name]
    assert len(saved) == len(torso.variables)
