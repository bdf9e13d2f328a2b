"""Which compiler runs an agent's functions: XLA or TensorFlow's own (oneDNN) kernels.

`jit_compile=auto` is resolved here, once per agent and before its networks are built, by the
rule in docs/benchmarks.md, "Choosing the compiler": XLA on a GPU or TPU; on CPU, TF's kernels
for convolutional models (XLA:CPU's convolution weight gradients inside the learner's loop are
far slower than oneDNN's), XLA for every other learner, and TF's kernels for acting (XLA draws
different random numbers from the same generator state, which would change every published
seeded result).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence

import tensorflow as tf

from rl.hparams.hparams import AUTO

LOGGER = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class CompilerChoice:
    """Whether the learner's and the acting functions are XLA-compiled, and why."""

    learner: bool
    acting: bool
    reason: str

    def describe(self) -> str:
        """One line for logs: `learner XLA, acting TF kernels (auto: ...)`."""

        def name(xla: bool) -> str:
            return "XLA" if xla else "TF kernels"

        return f"learner {name(self.learner)}, acting {name(self.acting)} ({self.reason})"


def device_type() -> str:
    """ "TPU", "GPU" or "CPU": the most capable device type TensorFlow can see."""
    for kind in ("TPU", "GPU"):
        if tf.config.list_logical_devices(kind):
            return kind
    return "CPU"


def is_convolutional(model: str, obs_shape: Sequence[int]) -> bool:
    """Whether torso `model` convolves: the Nature CNN, or `auto` on [H, W, C] observations."""
    return model == "cnn" or len(obs_shape) == 3


def choose_compiler(setting: bool | str, convolutional: bool, device: str) -> CompilerChoice:
    """The compiler for an agent's functions; `setting` is the `jit_compile` hparam (an explicit
    bool applies to the learner and leaves acting on TF's kernels)."""
    if isinstance(setting, bool):
        return CompilerChoice(setting, False, f"jit_compile={setting}")
    if setting != AUTO:
        raise ValueError(f"jit_compile must be true, false or {AUTO!r}, got {setting!r}")
    if device != "CPU":
        return CompilerChoice(True, True, f"auto: {device}")
    if convolutional:
        return CompilerChoice(False, False, "auto: convolutional model on CPU")
    return CompilerChoice(True, False, "auto: non-convolutional model on CPU")


def agent_compiler(
    setting: bool | str, model: str, obs_shape: Sequence[int], agent_name: str
) -> CompilerChoice:
    """`choose_compiler` for an agent's `model` on this process's device, logged at DEBUG."""
    choice = choose_compiler(setting, is_convolutional(model, obs_shape), device_type())
    LOGGER.debug("%s: %s", agent_name, choice.describe())
    return choice


def whole_program_xla(setting: bool | str) -> bool:
    """The compiled path (rl/compiled: TF-ops envs, MLPs) is one program written for XLA: `auto`
    keeps it there (an explicit false still turns XLA off)."""
    return setting is not False
