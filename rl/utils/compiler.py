"""Which compiler runs an agent's functions: XLA or TensorFlow's own (oneDNN) kernels.

The `jit_compile` hparam is true, false or `auto`. Explicit values win. `auto` is resolved here,
once per agent, by a rule measured with `benchmarks/atari_throughput.py` (tables in
docs/benchmarks.md, "Choosing the compiler: XLA or TF's kernels"):

- on a GPU or TPU: XLA for the learner and for acting. On an H200 (measured through JAX, as
  the GPU image has no TensorFlow: benchmarks/xla_gpu_compiler_proxy.py) XLA ran every torso's
  gradient steps 2.8-49x faster than library kernels, convolutions in the learner's loop
  included; TPUs run XLA anyway;
- on CPU, models with convolutions (image observations, the Nature CNN): TF's kernels for both.
  XLA:CPU's convolution kernels -- above all the kernel gradient inside the learner's loop over
  minibatches -- made `ppo_breakout`'s whole training loop ~25x slower; acting was a tie;
- on CPU, all other models (MLPs, recurrent cells): XLA for the learner (it won for every
  such set measured) and TF's kernels for acting: XLA acting was 15-25% faster per env step,
  but XLA draws different random numbers from the same generator state, so it would change
  every seeded result already published (docs/benchmarks.md).

"Convolutional" means the torso is the Nature CNN (`model=cnn`) or the observation is an image
([H, W, C]: `model=auto` then builds that CNN). It is decided before the agent builds its
networks, because the learner's `tf.function` is created with them.
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
    """Whether the torso named `model` (the `model` hparam) convolves over observations of
    `obs_shape`: the Nature CNN by name, or `auto` (like every torso) on image observations
    ([H, W, C]), for which `auto` picks that CNN."""
    return model == "cnn" or len(obs_shape) == 3


def choose_compiler(setting: bool | str, convolutional: bool, device: str) -> CompilerChoice:
    """The compiler for an agent's functions: `setting` is the `jit_compile` hparam (an explicit
    bool applies to the learner and leaves acting on TF's kernels, as before `auto` existed)."""
    if isinstance(setting, bool):
        return CompilerChoice(setting, False, f"jit_compile={setting}")
    if setting != AUTO:
        raise ValueError(f"jit_compile must be true, false or {AUTO!r}, got {setting!r}")
    if device != "CPU":
        return CompilerChoice(True, True, f"auto: {device}")
    if convolutional:
        return CompilerChoice(False, False, "auto: convolutional model on CPU")
    return CompilerChoice(True, False, "auto: non-convolutional model on CPU")


def whole_program_xla(setting: bool | str) -> bool:
    """The compiled path (rl/compiled: TF-ops envs, MLPs) is one program written for XLA: `auto`
    keeps it there (an explicit false still turns XLA off)."""
    return setting is not False
