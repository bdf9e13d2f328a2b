"""`python -m rl.repro check RUN_DIR [--steps N]`: is this run reproducible here?

Trains the first N env steps twice, each in a fresh process, and compares every variable,
array and counter at each checkpoint between the reruns and with the run dir. The reruns
checkpoint at the run's own `checkpoint_every`, because every checkpoint is an episode boundary
and another spacing would train on other data; only when that gives nothing to compare does the
check checkpoint four times in the stretch instead, to say *where* two reruns part.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from rl.errors import UserError
from rl.repro.compare import (
    EVAL_KEYS,
    Difference,
    checkpoint_steps,
    first_difference,
    read_checkpoint,
)
from rl.repro.run_info import RunInfo, read_run
from rl.utils.files import join
from rl.utils.run_dir import HPARAMS_FILE, manifest_changes, open_one_level

# Manifest keys that, when they differ from now, explain a difference from the run dir.
_ENVIRONMENT_KEYS = ("git.revision", "git.diff_sha256", "packages.", "devices", "cpu.model")


@dataclass(frozen=True)
class Plan:
    """How the reruns train: how far, and how often they checkpoint."""

    steps: int
    checkpoint_every: int
    compare_run_dir: bool


def plan(run: RunInfo, steps: int | None) -> Plan:
    hp = run.hparams
    if steps is not None and steps < 1:
        raise UserError(f"--steps must be >= 1, got {steps}")
    n = steps if steps is not None else min(hp.train_steps, 2 * hp.checkpoint_every)
    in_stretch = [s for s in checkpoint_steps(run.path) if s <= n]
    if n >= hp.checkpoint_every or in_stretch:
        return Plan(n, hp.checkpoint_every, compare_run_dir=True)
    return Plan(n, max(1, n // 4), compare_run_dir=False)


def _rerun_hparams(run: RunInfo, p: Plan) -> str:
    data = json.loads(run.hparams.to_json())
    values = data["hparams"]
    values["train_steps"]["value"] = p.steps
    values["checkpoint_every"]["value"] = p.checkpoint_every
    values["keep_checkpoints"]["value"] = p.steps // p.checkpoint_every + 2
    return json.dumps(data)


def _subprocess_env() -> dict[str, str]:
    """This environment, with this checkout's `rl` first on PYTHONPATH (the reruns must run the
    code being checked) and TF's C++ logging off."""
    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    env["PYTHONUNBUFFERED"] = "1"
    return env


def _rerun(hparams_path: str, run_dir: str, run: RunInfo) -> tuple[int, str]:
    """Trains one rerun in a fresh process; (exit status, its output)."""
    os.makedirs(os.path.dirname(run_dir), exist_ok=True)
    log_path = run_dir + ".log"
    command = [sys.executable, "-m", "rl.repro.rerun", hparams_path, run_dir]
    command += [str(run.seed), run.hparams_set]
    with open(log_path, "w", encoding="utf-8") as log:
        status = subprocess.run(
            command, env=_subprocess_env(), stdout=log, stderr=subprocess.STDOUT
        ).returncode
    with open(log_path, encoding="utf-8", errors="replace") as log:
        return status, log.read()


def environment_notes(run: RunInfo) -> list[str]:
    """Lines naming what differs between the run's manifest and this process (code, packages,
    devices): the likely cause when the reruns agree with each other but not with the run."""
    from rl.utils.run_dir import manifest

    now = manifest(run.seed, run.copy_index, run.hparams_set)
    changed = [
        key
        for key in manifest_changes(run.manifest, now)
        if key.startswith(_ENVIRONMENT_KEYS) and key in open_one_level(run.manifest)
    ]
    notes = []
    if changed:
        more = f" and {len(changed) - 6} more" if len(changed) > 6 else ""
        shown = ", ".join(changed[:6]) + more
        notes.append(f"note: the run dir was made with other code, packages or devices ({shown})")
    workers = run.manifest.get("num_workers") or 1
    if workers > 1:
        notes.append(
            f"note: the run used --num_workers {workers} (asynchronous actors); the reruns use "
            "one process"
        )
    return notes


def _first_difference(
    steps: list[int],
    a: dict[int, str],
    b: dict[int, str],
    original: dict[int, str],
    last_step_extra_eval: bool,
) -> tuple[int, Difference, str] | None:
    """(step, difference, between what) at the first step where the reruns differ from each other or
    from the run dir. `last_step_extra_eval`: the reruns' last evaluation was not the run's, so
    counters are not compared with the run dir there (weights and replay still are)."""
    for step in steps:
        if step not in a or step not in b:
            which = "first" if step in a else "second"
            missing = Difference("checkpoint", f"step {step}", f"only the {which} rerun has it")
            return step, missing, "the two reruns"
        ckpt_a = read_checkpoint(a[step])
        difference = first_difference(ckpt_a, read_checkpoint(b[step]))
        if difference is not None:
            return step, difference, "the two reruns"
        if step in original:
            ignore = EVAL_KEYS if last_step_extra_eval and step == steps[-1] else frozenset()
            difference = first_difference(read_checkpoint(original[step]), ckpt_a, ignore)
            if difference is not None:
                return step, difference, "the run dir"
    return None


def check(run_path: str, steps: int | None) -> int:
    """Runs the check and prints its verdict; 0 deterministic, 1 not (or a rerun failed)."""
    run = read_run(run_path)
    p = plan(run, steps)
    scratch = tempfile.mkdtemp(prefix="rl_repro_check_")
    try:
        hparams_path = join(scratch, HPARAMS_FILE)
        with open(hparams_path, "w", encoding="utf-8") as f:
            f.write(_rerun_hparams(run, p))
        run_dirs = [join(scratch, name, f"run_{run.copy_index}") for name in ("a", "b")]
        print(
            f"retraining the first {p.steps:,} env steps of {run_path} twice (seed {run.seed}, "
            f"checkpoint every {p.checkpoint_every:,})",
            flush=True,
        )
        with ThreadPoolExecutor(max_workers=2) as pool:
            results = list(pool.map(lambda d: _rerun(hparams_path, d, run), run_dirs))
        for status, output in results:
            if status != 0:
                last = [line for line in output.splitlines() if line.strip()][-1:] or ["(none)"]
                print(f"a rerun failed (exit {status}): {last[0]}", file=sys.stderr)
                return 2 if status == 2 else 1
        a, b = (checkpoint_steps(d) for d in run_dirs)
        original = checkpoint_steps(run.path) if p.compare_run_dir else {}
        original = {s: d for s, d in original.items() if s <= p.steps}
        hp = run.hparams
        extra_eval = p.steps != hp.train_steps and p.steps % hp.eval.every_steps != 0
        found = _first_difference(sorted(set(a) | set(b)), a, b, original, extra_eval)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if found is not None:
        step, difference, between = found
        if between == "the two reruns":
            print(
                f"not deterministic: at step {step}, {difference.describe()} differs between "
                "the two reruns"
            )
            return 1
        for line in environment_notes(run):
            print(line)
        print(
            f"not reproduced: the two reruns agree, but at step {step} {difference.describe()} "
            "differs between the run dir and the reruns"
        )
        return 1
    compared = ", ".join(map(str, sorted(a)))
    with_run = ", ".join(map(str, sorted(original)))
    ending = "; the run dir has no checkpoint in this stretch to compare with"
    if with_run:
        ending = f", and with the run dir at step {with_run}"
    print(
        f"deterministic: the two reruns agree bit for bit at every checkpoint (steps {compared})"
        + ending
    )
    return 0
