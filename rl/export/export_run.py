"""A run's checkpoint as a policy that lives without `rl`: a SavedModel or a TFLite file, restored
as test mode restores it and traced into `ExportedPolicy`. Every check comes before any write.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from typing import Any

import numpy as np
import tensorflow as tf

from rl.agents.build import build_agent
from rl.errors import UserError
from rl.evaluation import make_eval_env
from rl.export.policy_module import GREEDY, ExportedPolicy, observation_specs
from rl.hparams import HParams
from rl.hparams.compiled_path import runs_compiled
from rl.registry import get_hparams
from rl.utils.checkpoint_choice import select_checkpoint
from rl.utils.files import atomic_write_bytes, atomic_write_json, join, read_json
from rl.utils.run_dir import MANIFEST_FILE, saved_hparams

FORMATS = ("saved_model", "tflite")
METADATA_FORMAT = "rl.export/1"
TFLITE_FILE = "policy.tflite"
METADATA_FILE = "metadata.json"  # beside policy.tflite; in assets.extra/ of a SavedModel


@dataclass(frozen=True)
class Exported:
    """Where the export went, what it holds."""

    path: str
    step: int
    signatures: tuple[str, ...]


def export_run(
    run_dir: str, step: str = "latest", output: str | None = None, fmt: str = "saved_model"
) -> Exported:
    """Exports checkpoint `step` ("latest", "best" or an env step) of `run_dir` to `output` (default
    `RUN_DIR/export/<step>`, TF Serving's layout, or `RUN_DIR/export/tflite_<step>`)."""
    if fmt not in FORMATS:
        raise UserError(f"--format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    if not tf.io.gfile.isdir(run_dir):
        raise UserError(f"{run_dir} is not a directory; give a run dir, e.g. runs/dqn/run_0")
    manifest_path = join(run_dir, MANIFEST_FILE)
    manifest = read_json(manifest_path) if tf.io.gfile.exists(manifest_path) else {}
    hparams = _run_hparams(run_dir, manifest.get("hparams_set"))
    if runs_compiled(hparams.env):
        raise UserError(
            f"{run_dir} was trained on the compiled path ({hparams.env!r}), whose checkpoints "
            "hold a seed stack; export handles runs of gymnasium envs (train one without tf/)"
        )
    store, pointer = _checkpoint(run_dir, step)
    env, spec = make_eval_env(hparams, 1, 0)
    env.close()
    agent = build_agent(hparams, spec, int(manifest.get("seed", 0)))
    if fmt == "tflite" and agent.policy_state_size > 0:
        raise UserError(
            f"--format tflite holds feed-forward policies; agent {hparams.agent!r} carries a "
            "recurrent state: export it with --format saved_model"
        )
    output = output or join(
        run_dir, "export", f"{'tflite_' if fmt == 'tflite' else ''}{pointer['step']}"
    )
    if tf.io.gfile.exists(output) and tf.io.gfile.listdir(output):
        raise UserError(f"--output {output} exists and is not empty; choose another directory")
    store.restore(tf.train.Checkpoint(agent=agent), pointer)
    metadata = _metadata(manifest, hparams, agent, int(pointer["step"]))
    # TFLite holds the greedy policy alone: sampling's stateless random ops are no TFLite
    # built-ins (they would need the TF "flex" ops, which LiteRT's interpreter lacks).
    metadata["signatures"] = (
        [GREEDY] if fmt == "tflite" else sorted(ExportedPolicy(agent, metadata).signatures())
    )
    module = ExportedPolicy(agent, metadata)  # again: the metadata names its signatures
    signatures = {k: f for k, f in module.signatures().items() if k in metadata["signatures"]}
    if fmt == "tflite":
        content = _tflite(module, signatures)
        tf.io.gfile.makedirs(output)
        atomic_write_bytes(join(output, TFLITE_FILE), content)
        atomic_write_json(join(output, METADATA_FILE), metadata)
        return Exported(join(output, TFLITE_FILE), int(pointer["step"]), tuple(signatures))
    tf.saved_model.save(module, output, signatures=signatures)
    tf.io.gfile.makedirs(join(output, "assets.extra"))
    atomic_write_json(join(output, "assets.extra", METADATA_FILE), metadata)
    return Exported(output, int(pointer["step"]), tuple(sorted(signatures)))


def _run_hparams(run_dir: str, name: str | None) -> HParams:
    try:
        defaults = get_hparams(name)() if name else None
    except UserError:  # a set registered by a module not imported here: saved keys only
        defaults = None
    hparams = saved_hparams(run_dir, defaults=defaults)
    if hparams is None:
        raise UserError(
            f"{run_dir} has no hparams.json; give a run dir train.py wrote (e.g. runs/x/run_0)"
        )
    return hparams


def _checkpoint(run_dir: str, step: str) -> tuple[Any, dict[str, Any]]:
    try:
        return select_checkpoint(run_dir, step)
    except UserError as error:
        if step == "latest":  # test mode's wording names --training; say it for export
            raise UserError(
                f"{run_dir} has no checkpoint to export; train it first (train.py ... "
                f"--output_dir {os.path.dirname(run_dir.rstrip('/')) or '.'})"
            ) from None
        raise UserError(str(error).replace("--checkpoint", "--step")) from None


def _metadata(manifest: dict[str, Any], hparams: HParams, agent, step: int) -> dict[str, Any]:
    """What a user of the exported policy needs to feed it and read its actions."""
    spec = agent.spec

    def listed(bound: np.ndarray | None) -> list | None:
        return None if bound is None else np.asarray(bound, np.float64).tolist()

    return {
        "format": METADATA_FORMAT,
        "agent": hparams.agent,
        "hparams_set": manifest.get("hparams_set"),
        "hparams": json.loads(hparams.to_json())["hparams"],
        "env_id": hparams.env,
        "env_kwargs": json.loads(json.dumps(dict(hparams.env_kwargs), default=str)),
        "step": step,
        "git_revision": manifest.get("git", {}).get("revision"),
        "observation": {
            "shape": list(spec.obs_shape),
            "dtype": np.dtype(spec.obs_dtype).name,
            "frame_stack": spec.frame_stack,
            # The functions' observation inputs: "observation" alone, or one per Dict/Tuple key.
            "inputs": [
                {"name": s.name, "shape": s.shape.as_list(), "dtype": s.dtype.name}
                for s in observation_specs(spec)
            ],
        },
        "action": {
            "type": spec.action_type,
            "shape": list(spec.action_shape),
            "dtype": "int64" if spec.discrete else "float32",
            "num_actions": spec.num_actions,
            "low": listed(spec.action_low),
            "high": listed(spec.action_high),
        },
        "recurrent_state_size": agent.policy_state_size,
        "stochastic": agent.stochastic_policy,
        "tensorflow": tf.__version__,
    }


def _tflite(module: ExportedPolicy, signatures: dict[str, Any]) -> bytes:
    """`signatures` as a TFLite flatbuffer (built-in ops, float32, dynamic batch), converted from a
    SavedModel: from a lone concrete function the converter would name it `serving_default`."""
    with tempfile.TemporaryDirectory(prefix="rl-export-tflite-") as saved:
        tf.saved_model.save(module, saved, signatures=signatures)
        converter = tf.lite.TFLiteConverter.from_saved_model(saved, list(signatures))
        try:
            return converter.convert()
        except Exception as error:  # the converter's ConverterError and friends: ops TFLite lacks
            text = str(error).strip()
            first = next((line for line in text.splitlines() if "error" in line.lower()), text)
            raise UserError(
                f"TFLite cannot hold this policy ({first.strip()[:160]}); use --format saved_model"
            ) from None
