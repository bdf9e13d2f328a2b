"""Loads exported policies with TensorFlow alone (no `rl`) and writes their actions.

Run as `python load_exported.py CASES.json`: for each case {"path", "format", "observations",
"output", and for TFLite "signature"} it loads the export (a SavedModel, or a .tflite file
through LiteRT's interpreter, by signature name), acts on the observations (.npy: the one
"observation" input; .npz: one input per key of a Dict observation, by name) and writes
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


Inputs = dict[str, np.ndarray]  # observation input name -> values: "observation", or one per key


def constants(inputs: Inputs, rows: slice = slice(None), reverse: bool = False) -> dict:
    return {k: tf.constant(v[::-1].copy() if reverse else v[rows]) for k, v in inputs.items()}


def saved_model_actions(path: str, inputs: Inputs) -> dict[str, np.ndarray]:
    loaded = tf.saved_model.load(path)
    out: dict[str, np.ndarray] = {"metadata": np.array(loaded.metadata().numpy().decode())}
    signatures = loaded.signatures
    out["signatures"] = np.array(sorted(signatures))
    greedy = signatures["greedy_action"]
    batch = len(next(iter(inputs.values())))
    if "initial_state" in signatures:  # recurrent: two steps from the initial state
        state = signatures["initial_state"](batch_size=tf.constant(batch))["state"]
        first = greedy(**constants(inputs), state=state)
        second = greedy(**constants(inputs, reverse=True), state=first["state"])
        out["greedy"] = first["action"].numpy()
        out["greedy_second"] = second["action"].numpy()
        out["state"] = second["state"].numpy()
        if "sample_action" in signatures:
            out["samples"] = np.stack(
                [
                    signatures["sample_action"](
                        **constants(inputs), state=state, seed=tf.constant(s, tf.int64)
                    )["action"].numpy()
                    for s in SEEDS
                ]
            )
    else:
        out["greedy"] = greedy(**constants(inputs))["action"].numpy()
        out["greedy_one"] = greedy(**constants(inputs, slice(0, 1)))["action"].numpy()
        if "sample_action" in signatures:
            sample = signatures["sample_action"]
            out["samples"] = np.stack(
                [
                    sample(**constants(inputs), seed=tf.constant(s, tf.int64))["action"].numpy()
                    for s in SEEDS
                ]
            )
    return out


def tflite_actions(path: str, inputs: Inputs, signature: str) -> dict[str, np.ndarray]:
    interpreter = Interpreter(model_path=path)
    details = {d["name"]: d for d in interpreter.get_input_details()}
    runner = interpreter.get_signature_runner(signature)
    first = next(iter(sorted(details)))
    return {
        "signatures": np.array(sorted(interpreter.get_signature_list())),
        "input_names": np.array(sorted(interpreter.get_signature_list()[signature]["inputs"])),
        "input_shape": details[first]["shape_signature"],  # -1: a dynamic dimension
        "greedy": runner(**inputs)["action"],
        "greedy_one": runner(**{k: v[:1] for k, v in inputs.items()})["action"],  # resized down
    }


def read_inputs(path: str) -> Inputs:
    """An .npy file is the one "observation" input; an .npz holds one array per input name."""
    if path.endswith(".npz"):
        return dict(np.load(path))
    return {"observation": np.load(path)}


def main(cases_path: str) -> None:
    with open(cases_path) as f:
        cases = json.load(f)
    for case in cases:
        inputs = read_inputs(case["observations"])
        if case["format"] == "tflite":
            out = tflite_actions(case["path"], inputs, case["signature"])
        else:
            out = saved_model_actions(case["path"], inputs)
        np.savez(case["output"], **out)
    print(json.dumps({"rl_imported": any(m == "rl" or m.startswith("rl.") for m in sys.modules)}))


if __name__ == "__main__":
    main(sys.argv[1])
