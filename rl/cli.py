"""Command-line flags of train.py, parsed so that every mistake is one line and exit 2."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from dataclasses import fields
from typing import Any

from rl.errors import UserError
from rl.hparams.compiled_path import runs_compiled
from rl.preemption import DEFAULT_GRACE_SECONDS
from rl.utils.command_line import UserErrorParser, add_bool_flag
from rl.workers.flags import WorkerFlags
from rl.workers.waiting import DEFAULT_ACTOR_WAIT_SECONDS


def build_parser() -> argparse.ArgumentParser:
    p = UserErrorParser(
        prog="train.py",
        description="Train, evaluate or test an RL agent composed from registered parts.",
    )
    _run_flags(p)
    _worker_flags(p)
    _process_flags(p)
    _launch_flags(p)
    return p


def _run_flags(p: argparse.ArgumentParser) -> None:
    """What to train or test, where its run directory is, and what it shows."""
    p.add_argument(
        "--sys",
        default="local",
        help="Where to run: local, tpu (a GKE TPU Job) or gke (CPU/GPU workers); see below.",
    )
    p.add_argument("--hparams", help="Registered hparams set, e.g. dqn_cartpole (see --list).")
    p.add_argument(
        "--winner",
        help="A study's winner.json (python -m rl.tune --output_dir DIR writes DIR/winner.json): "
        "the tuned values, applied to the --hparams set it tuned before --hparam_override.",
    )
    p.add_argument("--env", help="Override the set's env (gymnasium id or module:Class).")
    p.add_argument(
        "--hparam_override",
        default="",
        help='Comma-separated key=value, e.g. "lr=3e-4,hidden_sizes=[128,128]".',
    )
    p.add_argument("--output_dir", help="Run directory root; copies go to run_<i>/.")
    p.add_argument("--train_steps", type=int, help="Override the set's train_steps.")
    p.add_argument("--eval_episodes", type=int, help="Override the set's eval.episodes.")
    p.add_argument(
        "--test_episodes", type=int, default=10, help="Episodes played with --training False."
    )
    add_bool_flag(
        p, "training", True, "True: train (or resume); False: test the latest checkpoint."
    )
    p.add_argument(
        "--checkpoint",
        default="latest",
        help="With --training False: which checkpoint to play: latest, best (the best-evaluated "
        "policy, checkpoints/best/) or an env step whose checkpoint is kept.",
    )
    p.add_argument("--copies", type=int, default=1, help="Independent runs with seeds seed+i.")
    add_bool_flag(p, "render", False, "With --training False: show test episodes in a window.")
    add_bool_flag(
        p, "record_video", False, "Write mp4s of evaluation/test episodes to run_<i>/videos/."
    )


def _worker_flags(p: argparse.ArgumentParser) -> None:
    """Actors and env workers: how many, and on which Ray cluster (docs/workers.md)."""
    p.add_argument(
        "--num_workers",
        type=int,
        default=1,
        help="Ape-X actors for replay agents and IMPALA actors (Ray actors: in a Ray runtime "
        "started by the run, or on --ray_address), env worker processes for the others "
        "(docs/workers.md).",
    )
    p.add_argument(
        "--ray_address",
        help="With --num_workers: the Ray cluster the actors run on, e.g. 10.0.0.5:6379 (its "
        "head node; default: $RAY_ADDRESS, else a Ray runtime inside this run).",
    )
    p.add_argument(
        "--actor_resources",
        type=_resources,
        help="With --ray_address: Ray resources each actor needs besides one CPU, as JSON, e.g. "
        "'{\"actor_node\": 1}' (nodes declare them: ray start --resources).",
    )
    p.add_argument(
        "--max_actor_restarts",
        type=int,
        default=3,
        help="With --num_workers: restarts of an actor that failed (an exception, its process "
        "or node lost) before the run fails.",
    )
    p.add_argument(
        "--actor_wait_timeout",
        type=float,
        default=DEFAULT_ACTOR_WAIT_SECONDS,
        help="With --num_workers: seconds the learner waits while no live node of the Ray "
        "cluster could hold an actor (every actor node lost) before every run checkpoints and "
        "train.py exits 69; 0: wait without end (docs/workers.md).",
    )


def _process_flags(p: argparse.ArgumentParser) -> None:
    """Seeds, devices, logging, preemption and the commands that only print."""
    p.add_argument("--seed", type=int, default=0, help="Seed of run_0; run_i uses seed+i.")
    p.add_argument(
        "--strategy",
        help="tf.distribute strategy of the learner: default, mirrored (this machine's devices), "
        "multi_worker_mirrored (TF_CONFIG) or tpu; default: $RL_STRATEGY, else default "
        "(docs/distributed.md).",
    )
    p.add_argument(
        "--log_level",
        default="INFO",
        type=str.upper,
        choices=("DEBUG", "INFO", "WARNING"),
        help="DEBUG: also log every update's loss on its batch before and after the step and "
        "the gradient norm (console and TensorBoard debug/); WARNING: no progress line.",
    )
    p.add_argument(
        "--preemption_grace",
        type=float,
        default=DEFAULT_GRACE_SECONDS,
        help="Seconds from SIGTERM (a Kubernetes preemption: 30 s before SIGKILL) to exit: the "
        "runs checkpoint where they stand and train.py exits 75 (docs/run_directory.md).",
    )
    add_bool_flag(
        p, "allow_hparams_change", False, "Resume even if the saved hparams differ from these."
    )
    p.add_argument(
        "--list",
        action="store_true",
        help="Print every registry, and each hparams set's parent chain, and exit.",
    )
    p.add_argument(
        "--show_hparams",
        action="store_true",
        help="With --hparams: print the resolved set (after --hparam_override, --env, ...) with "
        "where each value came from, and exit without writing anything.",
    )


def _resources(text: str) -> dict[str, float]:
    """A JSON object of Ray resource names and positive amounts (--actor_resources)."""
    try:
        resources = json.loads(text)
    except json.JSONDecodeError:
        resources = None
    if not isinstance(resources, dict) or not all(
        isinstance(v, int | float) and not isinstance(v, bool) and v > 0 for v in resources.values()
    ):
        example = '{"actor_node": 1}'
        raise argparse.ArgumentTypeError(
            f"expected a JSON object of resource names and positive amounts, e.g. '{example}', "
            f"got {text!r}"
        )
    return resources


def _launch_flags(parser: argparse.ArgumentParser) -> None:
    """Flags of `--sys tpu` and `--sys gke` (docs/tpu_gke.md), an error with another --sys."""
    g = parser.add_argument_group("--sys tpu and --sys gke (Kubernetes Jobs on GKE)")
    g.add_argument("--image", help="Container image built from k8s/Dockerfile.{tpu,cpu,gpu}.")
    g.add_argument("--namespace", help="Kubernetes namespace of the Job (default: default).")
    g.add_argument("--kube_context", help="kubeconfig context (default: the current one).")
    g.add_argument("--job_name", help="Job name (default: rl-<hparams>-<time>-<random>).")
    add_bool_flag(g, "dry_run", False, "Print the manifests as YAML and send nothing.")
    t = parser.add_argument_group("--sys tpu (Cloud TPU slice)")
    t.add_argument("--tpu", help="TPU slice type, e.g. v5e-4, v6e-8, v4-8 or v4-32:2x2x4.")
    add_bool_flag(
        t,
        "experimental_multihost",
        False,
        "Allow multi-host TPU slices (Indexed Job + headless Service; untested on a cluster).",
    )
    w = parser.add_argument_group("--sys gke (MultiWorkerMirroredStrategy on CPU/GPU nodes)")
    w.add_argument(
        "--workers",
        type=int,
        help="Worker Pods of the Indexed Job (default 1); separate from --num_workers.",
    )
    w.add_argument(
        "--gpus_per_worker", type=int, help="GPUs per worker Pod (default 0: CPU workers)."
    )
    w.add_argument("--gpu_type", help="GKE GPU type (node label), e.g. nvidia-l4, nvidia-tesla-t4.")
    w.add_argument(
        "--actor_nodes",
        type=int,
        help="With --num_workers N > 1 (Ray actors): CPU Pods of the RayJob's actor group "
        "(default: as many as N actors need).",
    )
    w.add_argument(
        "--actor_node_cpus",
        type=int,
        help="With --num_workers N > 1: CPUs of each actor Pod, one actor each (default: "
        "min(N, 8)).",
    )


def hparams_from_args(args: argparse.Namespace, check_values: Callable[[Any], None]) -> Any:
    """The run's frozen hparams: the set, then --winner, --hparam_override, --env, --train_steps and
    --eval_episodes, checked, with every registered name looked up. The one place that does this,
    so `--sys local`, the Kubernetes launchers and the tuner cannot drift apart."""
    from rl import registry
    from rl.envs import check_env_name

    hparams = registry.get_hparams(args.hparams)()
    if args.winner is not None:
        tuned = winner_override(args.winner, args.hparams)
        try:
            hparams.override(tuned)
        except UserError as error:  # e.g. a key renamed since the study
            raise UserError(f"--winner {args.winner}: {error}") from None
    hparams.override(args.hparam_override)
    if args.env is not None:
        hparams.env = args.env
    if args.train_steps is not None:
        hparams.train_steps = args.train_steps
    if args.eval_episodes is not None:
        hparams.eval.episodes = args.eval_episodes
    check_values(hparams)
    hparams.freeze()
    if runs_compiled(hparams.env):  # TF-ops env: the compiled engine (rl.engines.compiled)
        registry.envs.get(hparams.env)  # an unknown tf/ name lists the registered ones
    else:
        check_env_name(hparams.env)
        if hparams.eval.env_kwargs:  # a misspelled evaluation-only option: one line, now
            check_env_name(hparams.env, {**hparams.env_kwargs, **hparams.eval.env_kwargs})
    parts = {
        "agent": registry.agents,
        "model": registry.models,
        "memory": registry.memory,
        "optimizer": registry.optimizers,
    }
    for key, part_registry in parts.items():
        if key in hparams.keys():
            part_registry.get(getattr(hparams, key))
    if "agent" in hparams.keys():  # the agent's registered functions, right kind for each slot
        from rl.agents.function_slots import check_function_slots

        check_function_slots(registry.agents.get(hparams.agent), hparams)
    return hparams


def winner_override(path: str, hparams_set: str) -> str:
    """The `--hparam_override` text of a study's winner.json (local or gs://), which must be a
    winner of `hparams_set`; nothing is written into this package to train it."""
    import tensorflow as tf

    from rl.utils.files import read_json

    if not tf.io.gfile.exists(path) or tf.io.gfile.isdir(path):
        raise UserError(
            f"--winner {path}: no such file; give the winner.json in a study's --output_dir"
        )
    try:
        winner = read_json(path)
        tuned_set, override = winner["hparams_set"], winner["hparam_override"]
    except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError):
        override = None
    if not isinstance(override, str):
        raise UserError(
            f"--winner {path} is not a winner.json of python -m rl.tune (JSON with "
            "hparams_set and hparam_override)"
        )
    if tuned_set != hparams_set:
        raise UserError(
            f"--winner {path} was tuned on hparams set {tuned_set!r}, not {hparams_set!r}; "
            f"give --hparams {tuned_set}"
        )
    return override


# The flags that set one hparam each, applied after --hparam_override (see hparams_from_args).
_FLAG_OF_KEY = {"env": "env", "train_steps": "train_steps", "eval.episodes": "eval_episodes"}


def worker_flags(args: argparse.Namespace) -> WorkerFlags:
    """The worker and Ray-actor flags of a parsed train.py command line (each field of
    WorkerFlags is the flag of the same name)."""
    return WorkerFlags(**{field.name: getattr(args, field.name) for field in fields(WorkerFlags)})


def overrides_as_given(args: argparse.Namespace) -> dict[str, Any]:
    """The flags that change the registered set, as typed (`winner`, `hparam_override`, `env`,
    `train_steps`, `eval_episodes`; unset ones left out): manifest.json's `overrides`."""
    given = {"winner": args.winner, "hparam_override": args.hparam_override or None}
    given.update({flag: getattr(args, flag) for flag in _FLAG_OF_KEY.values()})
    return {flag: value for flag, value in given.items() if value is not None}


def show_hparams_lines(args: argparse.Namespace, check_values: Callable[[Any], None]) -> list[str]:
    """`--show_hparams`: the hparams as `hparams_from_args` resolves them (the same one-line
    errors), each value with the set or flag it came from."""
    from rl.hparams.inheritance import describe_resolved
    from rl.hparams.override_parser import split_items

    hparams = hparams_from_args(args, check_values)
    tuned = "" if args.winner is None else winner_override(args.winner, args.hparams)
    winner_keys = {key for key, _ in split_items(tuned)}
    override_keys = {key for key, _ in split_items(args.hparam_override)}

    def flag_for_key(key: str) -> str:
        flag = _FLAG_OF_KEY.get(key)
        if flag is not None and getattr(args, flag) is not None:
            return f"--{flag}"
        if key in winner_keys and key not in override_keys:
            return "--winner"
        return "--hparam_override"

    return describe_resolved(args.hparams, hparams, flag_for_key)


def hparams_chain_lines() -> list[str]:
    """`--list`: every registered hparams set with its parent chain (`set <- parent <- ...`)."""
    from rl import registry
    from rl.hparams.inheritance import parent_chain

    lines = ["hparams parent chains (set <- parent <- ...; train.py --hparams X --show_hparams):"]
    lines += [f"  {' <- '.join(parent_chain(name))}" for name in registry.hparams.names()]
    return lines


def check_values(hparams: Any) -> None:
    """Value ranges the type system cannot express; each a UserError naming the key (train.py
    and `python -m rl.tune` check every run's hparams with this)."""
    from rl import registry
    from rl.envs.atari import check_sticky_actions
    from rl.envs.reward_augmentation import check_reward_augmentation
    from rl.hparams.common import check_evaluation_protocol

    positive = ["train_steps", "num_envs", "checkpoint_every", "log_every", "keep_checkpoints"]
    for key in positive:
        if getattr(hparams, key) < 1:
            raise UserError(f"{key} must be >= 1, got {getattr(hparams, key)}")
    check_evaluation_protocol(hparams.eval, hparams.env)
    check_sticky_actions(hparams.env, hparams.eval.sticky_actions)
    if hparams.eval.sample_actions and not registry.agents.get(hparams.agent).stochastic_policy:
        raise UserError(
            f"eval.sample_actions=True: agent {hparams.agent!r} has no policy distribution "
            "to sample from; leave it False (eval.epsilon adds random actions)"
        )
    check_reward_augmentation(hparams)  # unknown name, kwargs it does not take, tf/ env
