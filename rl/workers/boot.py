"""Entry point of an Ape-X actor process, run BY PATH (`runpy.run_path`), not imported.

Importing anything under `rl` first runs rl/__init__.py, which imports TensorFlow (with file
descriptor 2 muted: rl/utils/muted_stderr.py). Run by path, this file gets to set the process up
before that: ignore SIGINT and SIGTERM (they belong to the main process), die with the parent
(Linux PR_SET_PDEATHSIG), mark the process with RL_WORKER_INDEX (envs may read it) and act on
CPU. Then it hands over
to the actor's main function (`rl.workers.actor.run_actor` unless ACTOR_ARGS["entry"] names
another, e.g. IMPALA's). Its arguments arrive as the global ACTOR_ARGS: builtins and
multiprocessing objects only, so unpickling them imports nothing from `rl`.
"""

import contextlib
import ctypes
import ctypes.util
import importlib
import os
import signal
import sys

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def _die_with_parent() -> None:
    name = ctypes.util.find_library("c")
    if name is not None:
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(name).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def _forget_learners_compile_cache() -> None:
    """The learner's private XLA cache directory (rl/utils/compile_cache.py) is its own: an
    actor that inherited the flag would write into it. (`compile_cache.forget_inherited`,
    written out here because importing rl would import TensorFlow first.)"""
    private = os.environ.pop("RL_XLA_CACHE_PRIVATE", None)
    if private:
        own = f"--tf_xla_persistent_cache_directory={private}"
        flags = " ".join(p for p in os.environ.get("TF_XLA_FLAGS", "").split() if p != own)
        os.environ["TF_XLA_FLAGS"] = flags


def _main(args: dict) -> None:
    for number in (signal.SIGINT, signal.SIGTERM):  # the learner's to handle
        signal.signal(number, signal.SIG_IGN)
    _die_with_parent()
    _forget_learners_compile_cache()
    os.environ["RL_WORKER_INDEX"] = str(args["index"])
    os.environ["CUDA_VISIBLE_DEVICES"] = ""  # actors act on CPU; accelerators are the learner's
    # The actor's main function, "module:function": Ape-X's by default, IMPALA's
    # (rl.workers.impala_actor) when the pool says so.
    module, _, function = args.pop("entry", "rl.workers.actor:run_actor").partition(":")
    run_actor = getattr(importlib.import_module(module), function)
    sys.exit(run_actor(**args))


_main(globals()["ACTOR_ARGS"])
