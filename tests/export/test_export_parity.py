"""Exported policies act like the agent in memory: a fresh process that imports only TensorFlow
loads each export and returns bit-equal greedy actions on 1,000 fixed observations, for one
agent of each family (DQN, C51, PPO discrete and continuous, SAC, recurrent PPO, an Atari CNN),
each trained for a few steps by the real loop into a real run dir. TFLite files of the
feed-forward policies, run by LiteRT's interpreter through the signature name rl.export
reports, on a batch of TFLITE_BATCH observations, give the same discrete actions and continuous
actions within TFLITE_TOLERANCE.

Every test here reads what that TensorFlow-only process loaded, so the module is e2e. In the
default tier, tests/export/test_export_cli.py covers the CLI's mistakes and
tests/test_precision.py exports and loads SavedModels in process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
from conftest import describe, params_selected, train_env

import rl  # noqa: F401
from rl import training
from rl.agents.build import build_agent
from rl.errors import UserError
from rl.evaluation import make_eval_env
from rl.export import export_run
from rl.export.policy_module import input_name
from rl.registry import get_hparams
from rl.utils.checkpoint import CheckpointStore

NUM_OBS = 1000
TFLITE_TOLERANCE = 1e-5  # absolute, on continuous actions (TFLite's kernels are not TF's)
TFLITE_BATCH = 256  # a batch the converter's default input shape [1, ...] does not hold
LOADER = Path(__file__).with_name("load_exported.py")
pytestmark = pytest.mark.e2e  # a process where rl cannot be imported

# family: (hparams set, overrides, train_steps): a few iterations of the real loop each.
FAMILIES = {
    "dqn": ("dqn_tiny", {}, 200),
    "c51": ("c51_tiny", {}, 200),
    "ppo_discrete": ("ppo_tiny", {}, 128),
    "ppo_continuous": ("ppo_tiny", {"env": "Pendulum-v1"}, 128),
    "sac": ("sac_tiny", {}, 200),
    "ppo_recurrent": ("ppo_recurrent_tiny", {}, 128),
    "atari_cnn": ("ppo_atari_tiny", {"eval.step_budget": 200}, 64),
    # A Dict observation with an action mask: one input per key, packed in the graph.
    "dict_obs": ("dqn_legal_moves_tiny", {}, 200),
}
FEED_FORWARD_TFLITE = ("dqn", "ppo_discrete", "ppo_continuous", "sac", "atari_cnn", "dict_obs")
# Families whose policy head another family here exports (discrete argmax: dqn; the rest of
# C51's head is its learner's): with -m slow only.
SLOW_FAMILIES = ("c51", "ppo_discrete")


def families(names) -> list:
    """`names` as parameters, those in SLOW_FAMILIES marked slow."""
    return [pytest.param(n, marks=pytest.mark.slow) if n in SLOW_FAMILIES else n for n in names]


def family_hparams(name: str):
    set_name, overrides, steps = FAMILIES[name]
    hp = get_hparams(set_name)().copy()
    hp.train_steps = steps
    # TF's kernels for the learner too: XLA compiling seven learners costs more than the few
    # updates they run, and acting on CPU (what the export holds) is TF's kernels either way.
    hp.jit_compile = False
    for key, value in overrides.items():
        group, _, leaf = key.rpartition(".")
        setattr(getattr(hp, group) if group else hp, leaf, value)
    hp.freeze()
    return set_name, hp


def fixed_observations(spec) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """(the export's inputs by name, the packed observations the agent in memory reads): the one
    "observation", or one input per key of a Dict observation (a mask with a legal action)."""
    rng = np.random.default_rng(2026)
    if spec.obs_layout is None:
        shape = (NUM_OBS, *spec.obs_shape)
        if spec.obs_dtype == np.uint8:
            obs = rng.integers(0, 256, shape, dtype=np.uint8)
        else:
            obs = rng.normal(size=shape).astype(spec.obs_dtype)
        return {"observation": obs}, obs
    inputs, pieces = {}, []
    for part in spec.obs_layout.parts:
        name = input_name(part.key)
        if part.kind == "one_hot":
            value = rng.integers(part.start, part.start + part.categories, NUM_OBS)
            inputs[name], packed = value, (value - part.start)[:, None]
        elif part.kind == "action_mask":
            mask = rng.random((NUM_OBS, *part.shape)) < 0.5
            mask[np.arange(NUM_OBS), rng.integers(0, part.shape[-1], NUM_OBS)] = True
            inputs[name] = packed = mask.astype(np.float32)
        else:
            inputs[name] = packed = rng.normal(size=(NUM_OBS, *part.shape)).astype(np.float32)
        pieces.append(packed.reshape(NUM_OBS, -1).astype(np.float32))
    return inputs, np.concatenate(pieces, axis=1)


def save_inputs(path: Path, inputs: dict[str, np.ndarray], rows: int = NUM_OBS) -> str:
    """The loader's observations file: .npy for the one "observation", else .npz by name."""
    if list(inputs) == ["observation"]:
        np.save(path.with_suffix(".npy"), inputs["observation"][:rows])
        return str(path.with_suffix(".npy"))
    np.savez(path.with_suffix(".npz"), **{k: v[:rows] for k, v in inputs.items()})
    return str(path.with_suffix(".npz"))


@pytest.fixture(scope="module")
def exported(request, tmp_path_factory):
    """{family: {...}}: each family that this session's tests read trained, exported, its
    in-memory actions, and what the TF-only process returned for the export (and the TFLite
    file)."""
    root = tmp_path_factory.mktemp("export_parity")
    results, cases = {}, []
    # ppo_recurrent also for test_tflite_refuses_a_recurrent_policy_before_writing
    selected = sorted({*params_selected(request, "family"), "ppo_recurrent"})
    for name in selected:
        set_name, hp = family_hparams(name)
        run_dir = str(root / name / "run_0")
        training.train(hp, [run_dir], [0], set_name)
        saved = export_run(run_dir)
        env, spec = make_eval_env(hp, 1, 0)
        env.close()
        agent = build_agent(hp, spec, 0)
        store = CheckpointStore(f"{run_dir}/checkpoints", 1)
        store.restore(tf.train.Checkpoint(agent=agent), store.latest())
        inputs, obs = fixed_observations(spec)
        obs_path = save_inputs(root / f"{name}_obs", inputs)
        memory = {"greedy": agent.greedy_actions(obs, np.ones(NUM_OBS, bool))}
        if agent.recurrent:
            memory["greedy_second"] = agent.greedy_actions(obs[::-1].copy())
        if agent.stochastic_policy:
            zeros = tf.zeros([NUM_OBS, agent.policy_state_size])
            memory["sample"] = tf.function(agent.sampled_policy_step)(
                tf.constant(obs), zeros, tf.constant(7, tf.int64)
            )[0].numpy()
        results[name] = {"memory": memory, "export": saved, "agent": agent, "spec": spec}
        results[name].update(run_dir=run_dir, inputs=inputs)
        cases.append(
            {
                "name": name,
                "path": saved.path,
                "format": "saved_model",
                "observations": obs_path,
                "output": str(root / f"{name}.npz"),
            }
        )
        if name in FEED_FORWARD_TFLITE:
            lite = export_run(run_dir, fmt="tflite")
            results[name]["tflite_export"] = lite
            lite_obs = save_inputs(root / f"{name}_obs_{TFLITE_BATCH}", inputs, TFLITE_BATCH)
            cases.append(
                {
                    "name": name,
                    "path": lite.path,
                    "format": "tflite",
                    "signature": lite.signatures[0],  # what python -m rl.export prints
                    "observations": lite_obs,
                    "output": str(root / f"{name}_tflite.npz"),
                }
            )
    (root / "cases.json").write_text(json.dumps(cases))
    proc = subprocess.run(
        [sys.executable, str(LOADER), str(root / "cases.json")],
        cwd=root,  # not the repo root: `rl` is not importable there
        env={k: v for k, v in train_env().items() if k != "PYTHONPATH"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, describe(proc)
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == {"rl_imported": False}
    for name in selected:
        results[name]["loaded"] = dict(np.load(root / f"{name}.npz"))
        lite = root / f"{name}_tflite.npz"
        results[name]["tflite"] = dict(np.load(lite)) if lite.exists() else None
    return results


@pytest.mark.parametrize("family", families(FAMILIES))
def test_greedy_actions_are_bit_equal_in_a_tensorflow_only_process(exported, family):
    result = exported[family]
    memory, loaded, spec = result["memory"], result["loaded"], result["spec"]
    assert loaded["greedy"].shape == (NUM_OBS, *spec.action_shape)
    np.testing.assert_array_equal(loaded["greedy"], memory["greedy"])
    if spec.discrete:
        # a trained policy, not a constant: several actions among the 1,000 (the recurrent
        # one, 128 steps in, still answers 0 everywhere; its state is checked below)
        assert result["agent"].recurrent or len(np.unique(loaded["greedy"])) > 1
    else:
        assert np.all(loaded["greedy"] >= spec.action_low)
        assert np.all(loaded["greedy"] <= spec.action_high)
        assert np.std(loaded["greedy"]) > 0
    if "greedy_second" in memory:  # recurrent: the carried state reaches the second step
        np.testing.assert_array_equal(loaded["greedy_second"], memory["greedy_second"])
        assert loaded["state"].shape == (NUM_OBS, result["agent"].policy_state_size)
        assert np.abs(loaded["state"]).max() > 0
    else:  # any batch size
        assert loaded["greedy_one"].shape == (1, *spec.action_shape)
    if spec.action_masked:  # the mask fed as its own input reached the masked argmax
        mask = result["inputs"]["action_mask"]
        assert mask[np.arange(NUM_OBS), loaded["greedy"]].all()


@pytest.mark.parametrize("family", families(FAMILIES))
def test_signatures_and_metadata(exported, family):
    result = exported[family]
    loaded, agent, spec = result["loaded"], result["agent"], result["spec"]
    expected = {"greedy_action"}
    if agent.stochastic_policy:
        expected.add("sample_action")
    if agent.recurrent:
        expected.add("initial_state")
    assert set(loaded["signatures"].tolist()) == expected
    metadata = json.loads(str(loaded["metadata"]))
    set_name, hp = family_hparams(family)
    assert metadata["hparams_set"] == set_name
    assert metadata["env_id"] == hp.env
    assert metadata["agent"] == hp.agent
    assert metadata["step"] == result["export"].step == hp.train_steps
    assert metadata["hparams"]["train_steps"]["value"] == hp.train_steps
    assert metadata["observation"]["shape"] == list(spec.obs_shape)
    assert metadata["observation"]["dtype"] == np.dtype(spec.obs_dtype).name
    inputs = [i["name"] for i in metadata["observation"]["inputs"]]
    assert inputs == list(result["inputs"])  # "observation", or the Dict's keys in order
    assert metadata["action"]["type"] == spec.action_type
    assert len(metadata["git_revision"] or "0" * 40) == 40
    assert sorted(metadata["signatures"]) == sorted(expected)


@pytest.mark.parametrize(
    "family", families(f for f in FAMILIES if f not in ("dqn", "c51", "dict_obs"))
)  # the stochastic policies (dict_obs is a DQN)
def test_sample_action_depends_on_the_seed_alone(exported, family):
    samples = exported[family]["loaded"]["samples"]  # seeds 7, 7, 8
    np.testing.assert_array_equal(samples[0], samples[1])
    assert not np.array_equal(samples[0], samples[2])
    np.testing.assert_array_equal(samples[0], exported[family]["memory"]["sample"])


@pytest.mark.parametrize("family", families(FEED_FORWARD_TFLITE))
def test_litert_runs_the_tflite_file_by_its_signature_name_at_any_batch(exported, family):
    result = exported[family]
    lite, spec = result["tflite"], result["spec"]
    # The SavedModel's greedy actions (bit-equal to the agent's, above) on the same observations.
    saved = result["loaded"]["greedy"][:TFLITE_BATCH]
    assert result["tflite_export"].signatures == ("greedy_action",)
    assert lite["signatures"].tolist() == ["greedy_action"]
    with open(Path(result["tflite_export"].path).with_name("metadata.json")) as f:
        assert json.load(f)["signatures"] == ["greedy_action"]
    assert lite["input_names"].tolist() == sorted(result["inputs"])
    if spec.obs_layout is None:
        assert lite["input_shape"].tolist() == [-1, *spec.obs_shape]
    assert lite["greedy"].shape == (TFLITE_BATCH, *spec.action_shape)
    assert lite["greedy_one"].shape == (1, *spec.action_shape)
    for actions in (lite["greedy"], lite["greedy_one"]):
        expected = saved[: len(actions)]
        if spec.discrete:
            np.testing.assert_array_equal(actions, expected)
        else:
            np.testing.assert_allclose(actions, expected, rtol=0, atol=TFLITE_TOLERANCE)


def test_tflite_refuses_a_recurrent_policy_before_writing(exported, tmp_path):
    out = tmp_path / "lite"
    with pytest.raises(UserError, match="--format tflite holds feed-forward policies"):
        export_run(exported["ppo_recurrent"]["run_dir"], output=str(out), fmt="tflite")
    assert not out.exists()
