"""Loads exported policies with TensorFlow alone (no `rl`) and writes their actions.

Run as `python load_exported.py CASES.json`: for each case {"path", "format", "observations",
"output", and for TFLite "signature"} it loads the export (a SavedModel, or a .tflite file
through LiteRT's interpreter, by signature name), acts on the observations (.npy) and writes
the actions to `output` (.npz). It never imports `rl`, and says so in its output (what a user
of an exported policy has).
"""

from __future__ import annotations

import json
import sys

import numpy as np
import tensorflow as tf
from ai_edge_litert.interpreter import Interpreter

SEEDS = (7, 7, 8)  # sample_action twice with one seed, once with another


def saved_model_actions(path: str, obs: np.ndarray) -> dict[str, np.ndarray]:
    loaded = tf.saved_model.load(path)
    out: dict[str, np.ndarray] = {"metadata": np.array(loaded.metadata().numpy().decode())}
    signatures = loaded.signatures
    out["signatures"] = np.array(sorted(signatures))
    greedy = signatures["greedy_action"]
    if "initial_state" in signatures:  # recurrent: two steps from the initial state
        state = signatures["initial_state"](batch_size=tf.constant(len(obs)))["state"]
        first = greedy(observation=tf.constant(obs), state=state)
        second = greedy(observation=tf.constant(obs[::-1].copy()), state=first["state"])
        out["greedy"] = first["action"].numpy()
        out["greedy_second"] = second["action"].numpy()
        out["state"] = second["state"].numpy()
        if "sample_action" in signatures:
            out["samples"] = np.stack(
                [
                    signatures["sample_action"](
                        observation=tf.constant(obs), state=state, seed=tf.constant(s, tf.int64)
                    )["action"].numpy()
                    for s in SEEDS
                ]
            )
    else:
        out["greedy"] = greedy(observation=tf.constant(obs))["action"].numpy()
        out["greedy_one"] = greedy(observation=tf.constant(obs[:1]))["action"].numpy()
        if "sample_action" in signatures:
            sample = signatures["sample_action"]
            out["samples"] = np.stack(
                [
                    sample(observation=tf.constant(obs), seed=tf.constant(s, tf.int64))[
                        "action"
                    ].numpy()
                    for s in SEEDS
                ]
            )
    return out


def tflite_actions(path: str, obs: np.ndarray, signature: str) -> dict[str, np.ndarray]:
    interpreter = Interpreter(model_path=path)
    (observation,) = interpreter.get_input_details()
    runner = interpreter.get_signature_runner(signature)
    return {
        "signatures": np.array(sorted(interpreter.get_signature_list())),
        "input_shape": observation["shape_signature"],  # -1: a dynamic dimension
        "greedy": runner(observation=obs)["action"],
        "greedy_one": runner(observation=obs[:1])["action"],  # resized down again
    }


def main(cases_path: str) -> None:
    with open(cases_path) as f:
        cases = json.load(f)
    for case in cases:
        obs = np.load(case["observations"])
        if case["format"] == "tflite":
            out = tflite_actions(case["path"], obs, case["signature"])
        else:
            out = saved_model_actions(case["path"], obs)
        np.savez(case["output"], **out)
    print(json.dumps({"rl_imported": any(m == "rl" or m.startswith("rl.") for m in sys.modules)}))


if __name__ == "__main__":
    main(sys.argv[1])
