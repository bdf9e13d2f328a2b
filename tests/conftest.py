"""Shared fixtures for the end-to-end tests: the repo root, train.py subprocesses, run-dir hashes.

The repo root goes on `sys.path` so tests can `import train` and call `train.main([...])`
in-process (cheap: a user mistake returns 2 before any TF graph work).
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import heapq
import itertools
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

# Lines TF/absl write to stderr on their own (C++ logging before absl::InitializeLog()).
TF_LOG_PREFIXES = ("I0000", "W0000", "E0000", "WARNING: All log messages")

# The one trained dqn_tiny run the error and smoke tests share (see `trained_run`).
TINY_SET = "dqn_tiny"
# The shared runs trained with `--copies 2` (run_0 and run_1): one set per engine that a tiny set
# trains on (the in-process engine trains copies one after another, each with an engine and agent
# of its own; the compiled one as one program), and the run tests/compiled/test_copies_train_py.py
# resumes against. Every other shared run trains one copy, half the time: how copies run does not
# depend on the agent, and tests/test_resume_every_agent.py builds each agent several times in
# one process.
COPIES_SETS = frozenset({"a2c_tiny", "dqn_tf_tiny", "ppo_tf_tiny"})

# What a TPU Pod executes, as test ids (a file, or a file::test-name prefix). They get the
# `tpu_compat` marker, and .ci/run runs `pytest -m tpu_compat` in .venv-tpu-compat too, under the
# TPU image's TensorFlow (requirements-tpu.txt; tensorflow-tpu lags behind requirements.txt).
# Kept to a few minutes of CI: the compiled trainer is left out because a Pod refuses it; the
# other agents' own unit tests are left out too (every gradient-based agent runs under strategies
# and comes in through test_tpu_sets_smoke.py's TPU_SETS and the equivalence cases of
# test_strategy_training.py), and so is the multi-worker test (TPU Pods do not use
# MultiWorkerMirroredStrategy).
TPU_COMPAT = (
    # train.py: every TPU-capable *_tiny set meets the tpu gate; one set per learner kind
    # (replay, on-policy, CNN, distributional, actor-critic) trains under a strategy, and dqn
    # and ppo resume from their checkpoint (the other sets do in the e2e tier, under .venv's TF)
    "tests/systems/test_tpu_sets_smoke.py::test_this_venv_runs_the_tpu_images_tensorflow",
    "tests/systems/test_tpu_sets_smoke.py::test_the_tpu_gate_of_train_py_agrees",
    *(
        f"tests/systems/test_tpu_sets_smoke.py::test_tpu_set_trains_under_a_strategy[{name}]"
        for name in ("dqn_tiny", "ppo_tiny", "ppo_atari_tiny", "rainbow_tiny", "td3_tiny")
    ),
    # TPUStrategy's fail-fast path without a TPU, strategy names
    "tests/systems/test_strategies.py",
    "tests/systems/test_strategy_training.py::test_tpu_strategy_without_a_tpu",
    "tests/systems/test_strategy_training.py::test_strategy_mistakes",
    "tests/systems/test_strategy_training.py::test_worker_roles",
    # agent updates under MirroredStrategy equal one-device updates: one case per optimizer
    # structure (replay with clipping, minibatch epochs with a KL stop, two and three optimizers,
    # sequences under XLA, unrolls); the e2e tier runs every case under .venv's TF
    "tests/systems/test_strategy_training.py::test_replicated_step",
    *(
        f"tests/systems/test_strategy_training.py::test_mirrored_update_equals_one_device_update[{case}]"
        for case in (
            "dqn_adam_clip-4",
            "ppo_target_kl_sgd-1",
            "td3_sgd-4",
            "sac_sgd-4",
            "drqn_adam_clip_xla-2",
            "impala_sgd-4",
        )
    ),
    # checkpoint save and restore through tf.io.gfile on a non-local filesystem (like gs://)
    "tests/systems/test_strategy_training.py::test_ram_output_dir",
    # the compiled path: tf.function + XLA over a whole iteration
    "tests/compiled/test_compiled_iteration.py",
    # populations: TF's pfor (a private entry point) and the Philox counter's steps per draw
    "tests/compiled/test_stacked_generators.py",
    "tests/compiled/test_population.py::test_the_program_does_not_grow_with_its_members",
    # the updates of the agents a Pod trains: dqn, c51 (Rainbow, NoisyNet), ppo, a2c, reinforce
    "tests/agents/test_dqn.py",
    "tests/agents/test_c51.py",
    "tests/agents/test_noisy.py",
    "tests/agents/test_td.py",
    "tests/agents/test_policy_gradient.py",
    "tests/agents/test_advantages.py",
    "tests/agents/test_a2c_sb3_settings.py",
    "tests/agents/test_torch_rmsprop.py",
    "tests/agents/test_action_functions.py",
    "tests/agents/test_diagnostics.py",
)


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marker
def pytest_configure(config: pytest.Config) -> None:
    """The test session's own XLA compile cache (rl/utils/compile_cache.py): shared by its
    train.py subprocesses, so a program compiled once loads in the next, and independent of
    whatever a developer's ~/.cache holds (a test run starts cold, as CI does)."""
    import tempfile

    if "RL_XLA_CACHE" not in os.environ:
        os.environ["RL_XLA_CACHE"] = tempfile.mkdtemp(prefix="rl-test-xla-cache-")
        config.stash[_OWN_XLA_CACHE] = os.environ["RL_XLA_CACHE"]


def pytest_unconfigure(config: pytest.Config) -> None:
    import shutil

    if _OWN_XLA_CACHE in config.stash:
        shutil.rmtree(config.stash[_OWN_XLA_CACHE], ignore_errors=True)
    if not hasattr(config, "workerinput"):  # the controller, after its workers were reaped
        print(f"\n{cpu_seconds_line()}", flush=True)


def cpu_seconds_line() -> str:
    """The tier's cost, which the test budget is set in (user + system CPU seconds of pytest and
    every process it waited for: xdist workers, train.py subprocesses, the shared trainer),
    and the machine's CPU: wall time on 2 cores varies twofold across our machines, CPU seconds
    much less, and bfloat16 is native on some CPUs and emulated on others."""
    import platform
    import resource

    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        usage = resource.getrusage(who)
        total += usage.ru_utime + usage.ru_stime
    model, flags = platform.processor() or "unknown CPU", set()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name":
                model = value.strip()
            elif key.strip() == "flags":
                flags = set(value.split())
                break
    except OSError:
        pass
    features = [f for f in ("avx2", "avx512f", "avx512_bf16", "amx_bf16") if f in flags]
    return (
        f"pytest CPU seconds: {total:.0f} (user + system, pytest and every process it waited "
        f"for) on {os.cpu_count()} x {model} [{' '.join(features) or 'no AVX2'}]"
    )


_OWN_XLA_CACHE = pytest.StashKey[str]()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Marks the TPU_COMPAT tests `tpu_compat`. An entry that matches no test of a collected
    file is an error: a renamed test would otherwise drop out of the TF 2.20 run unnoticed."""
    matched: set[str] = set()
    files = {item.nodeid.split("::", 1)[0] for item in items}
    for item in items:
        for prefix in TPU_COMPAT:
            if item.nodeid == prefix or item.nodeid.startswith((f"{prefix}::", f"{prefix}_")):
                item.add_marker(pytest.mark.tpu_compat)
                matched.add(prefix)
    stale = [p for p in TPU_COMPAT if p not in matched and p.split("::", 1)[0] in files]
    if stale:
        raise pytest.UsageError(f"tests/conftest.py TPU_COMPAT: no test matches {stale}")


def train_env() -> dict[str, str]:
    """The environment of a train.py subprocess: quiet TF, CPU only, unbuffered output."""
    env = dict(os.environ)
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    env["CUDA_VISIBLE_DEVICES"] = ""
    env["PYTHONUNBUFFERED"] = "1"
    return env


def default_signals() -> None:
    """`preexec_fn` of a train.py subprocess that tests signal: SIGINT and SIGTERM at their
    defaults. A process started as a background job of a non-interactive shell inherits SIGINT
    as *ignored* (POSIX), and then Python never raises KeyboardInterrupt; pytest started that
    way would pass its children the same, and a SIGINT test would pass or fail depending on how
    pytest itself was launched."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def train_command(args: list[str]) -> list[str]:
    return [sys.executable, "train.py", *map(str, args)]


def run_train_process(args: list[str], timeout: float = 180) -> subprocess.CompletedProcess:
    """Runs `python train.py *args` from the repo root; returns the CompletedProcess (text)."""
    return subprocess.run(
        train_command(args),
        cwd=REPO_ROOT,
        env=train_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def run_train_processes_concurrently(
    arg_lists: list[list[str]], timeout: float = 180
) -> list[subprocess.CompletedProcess]:
    """Independent `train.py` runs at the same time, results in order. A tiny train.py uses
    less than one core (TF import, Python stepping), so on CI's 2 cores two of them take little
    more wall time than one: the end-to-end tests run their independent commands this way."""
    with ThreadPoolExecutor(max_workers=len(arg_lists)) as pool:
        return list(pool.map(lambda args: run_train_process(args, timeout), arg_lists))


def stderr_lines(text: str) -> list[str]:
    """The non-empty stderr lines that are not TF/absl's own log lines."""
    return [
        line for line in text.splitlines() if line.strip() and not line.startswith(TF_LOG_PREFIXES)
    ]


def describe(proc: subprocess.CompletedProcess) -> str:
    """A failure message with the command's output."""
    return (
        f"command {proc.args} exited {proc.returncode}\n"
        f"--- stdout ---\n{proc.stdout}\n--- stderr ---\n{proc.stderr}"
    )


def tree_hashes(root: str | os.PathLike) -> dict[str, str]:
    """{relative path: sha256} for every file under `root` (directories as "<dir>")."""
    root = Path(root)
    out: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_dir():
            out[rel] = "<dir>"
        else:
            out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def run_train() -> Callable[..., subprocess.CompletedProcess]:
    """`run_train(args, timeout=180)`: `python train.py *args` as a subprocess."""
    return run_train_process


@pytest.fixture
def train_here(capsys) -> Callable[..., subprocess.CompletedProcess]:
    """`train_here(args)`: `train.main(args)` in this process, its exit status and output as a
    CompletedProcess (the shape `run_train` gives), for tests whose subject is not the process:
    no TF import or start-up per command."""
    import train

    def run(args: list) -> subprocess.CompletedProcess:
        capsys.readouterr()
        status = train.main([str(a) for a in args])
        out, err = capsys.readouterr()
        return subprocess.CompletedProcess(args, status, out, err)

    return run


@pytest.fixture(scope="session")
def run_train_concurrently() -> Callable[..., list[subprocess.CompletedProcess]]:
    """`run_train_concurrently([args, ...], timeout=180)`: independent train.py runs at once."""
    return run_train_processes_concurrently


class TrainedRuns:
    """`trained_runs(hparams_set)` -> (output_dir, args, CompletedProcess): the set trained
    once per session (with `--copies 2` for `COPIES_SETS`, so run_0 and run_1 exist), shared by
    the error tests, the smoke tests and the tests that read a trained run.

    Every run is `train.main(args)` in one long-lived process (tests/tiny_trainer.py), one run
    at a time, with its stdout and stderr in files as a `python train.py` process has them: one
    TF import for all the runs. One thread feeds that process: first what a running test waits
    for (`urgent`: its module's sets, `start` commands), then the session's other sets in the
    background, so that while tests run, the next sets already train. Under pytest-xdist each
    worker has such a process and they share the runs: a set is trained by whichever worker
    takes its lock first, and in the background a worker skips a set the other one is training
    (the workers start from opposite ends of the list) instead of waiting for it."""

    URGENT, BACKGROUND = 0, 1

    def __init__(self, tmp_path_factory: pytest.TempPathFactory) -> None:
        self._tmp = tmp_path_factory
        # Made here, in the main thread: the first call creates (or empties) the session's
        # base dir, and a feeding thread racing a test's `tmp_path` there deletes the other's.
        tmp_path_factory.getbasetemp()
        self._ready = threading.Condition()
        self._queue: list[tuple[int, int, Callable[[], object], Future]] = []  # a heap
        self._order = itertools.count()
        self._futures: dict[str, Future] = {}
        self._closed = False
        self._trainer: subprocess.Popen | None = None
        self._thread = threading.Thread(target=self._feed, name="trained_runs", daemon=True)
        self._thread.start()

    def _feed(self) -> None:
        while True:
            with self._ready:
                while not self._queue and not self._closed:
                    self._ready.wait()
                if not self._queue:
                    return
                _, _, work, future = heapq.heappop(self._queue)
            if future.done() or future.running():  # queued twice (moved up), already run
                continue
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(work())
                except BaseException as error:  # the test that reads it sees it
                    future.set_exception(error)

    def _submit(self, priority: int, work: Callable[[], object], future: Future | None = None):
        future = future or Future()
        with self._ready:
            heapq.heappush(self._queue, (priority, next(self._order), work, future))
            self._ready.notify()
        return future

    def _root(self, hparams_set: str) -> Path:
        base = self._tmp.getbasetemp()
        shared = base.parent if "PYTEST_XDIST_WORKER" in os.environ else base
        root = shared / "trained_runs" / hparams_set
        root.mkdir(parents=True, exist_ok=True)
        return root

    def _train(self, hparams_set: str, wait: bool = True):
        """The set's run, trained by whichever pytest-xdist worker takes its lock first (the
        workers of one session share a directory; one that finds the run done reads it). With
        `wait=False` a set another worker trains now is left to it: None."""
        root = self._root(hparams_set)
        output_dir, status_file = root / "out", root / "status"
        copies = "2" if hparams_set in COPIES_SETS else "1"
        args = ["--hparams", hparams_set, "--output_dir", str(output_dir), "--copies", copies]
        with open(root / "lock", "w") as lock:
            try:  # released when the file closes
                fcntl.flock(lock, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
            except BlockingIOError:
                return None
            if not status_file.exists():
                proc = self._run(args, root)
                status_file.write_text(str(proc.returncode))
                return output_dir, args, proc
        stdout, stderr = ((root / name).read_text() for name in ("stdout", "stderr"))
        status = int(status_file.read_text())
        return output_dir, args, subprocess.CompletedProcess(args, status, stdout, stderr)

    def _run(self, args: list[str], logs: Path) -> subprocess.CompletedProcess:
        """`train.main(args)` in the trainer process, its stdout and stderr in `logs`."""
        if self._trainer is None or self._trainer.poll() is not None:
            self._trainer = subprocess.Popen(
                [sys.executable, str(REPO_ROOT / "tests" / "tiny_trainer.py")],
                cwd=REPO_ROOT,
                env=train_env(),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
        request = {"args": args, "stdout": str(logs / "stdout"), "stderr": str(logs / "stderr")}
        self._trainer.stdin.write(json.dumps(request) + "\n")
        self._trainer.stdin.flush()
        reply = self._trainer.stdout.readline()
        status = int(reply) if reply.strip() else -1  # -1: the trainer process died
        stdout, stderr = ((logs / name).read_text() for name in ("stdout", "stderr"))
        return subprocess.CompletedProcess(args, status, stdout, stderr)

    def start(self, args: list[str]) -> Future:
        """Any train.py command, run in the trainer process next (after the run it is on) while
        the test goes on: a Future of its CompletedProcess."""
        logs = self._tmp.mktemp("trainer_run")
        return self._submit(self.URGENT, lambda: self._run([str(a) for a in args], logs))

    def prefetch(self, hparams_sets: list[str], urgent: bool = True) -> None:
        """Queues the sets' runs: `urgent` ahead of the background ones (a set already queued
        in the background moves up); in the background, a set another worker trains is
        skipped."""
        with self._ready:
            for name in hparams_sets:
                future = self._futures.get(name)
                if future is None:
                    future = self._futures[name] = Future()
                elif not urgent or future.done() or future.running():
                    continue
                priority = self.URGENT if urgent else self.BACKGROUND
                work = functools.partial(self._train, name, wait=urgent)
                heapq.heappush(self._queue, (priority, next(self._order), work, future))
            self._ready.notify()

    def __call__(self, hparams_set: str) -> tuple[Path, list[str], subprocess.CompletedProcess]:
        self.prefetch([hparams_set])
        run = self._futures[hparams_set].result()
        if run is None:  # another worker was training it: wait for its run, then read it
            run = self._submit(self.URGENT, lambda: self._train(hparams_set)).result()
        return run

    def close(self) -> None:
        with self._ready:
            self._closed = True
            for _, _, _, future in self._queue:
                future.cancel()
            self._queue.clear()
            self._ready.notify()
        self._thread.join()
        if self._trainer is not None:
            self._trainer.stdin.close()
            self._trainer.wait(timeout=60)


@pytest.fixture(scope="session")
def trained_run(tmp_path_factory):
    """`trained_run(hparams_set)`: see `TrainedRuns`."""
    runs = TrainedRuns(tmp_path_factory)
    yield runs
    runs.close()


def _sets_read_by(items: list[pytest.Item]) -> list[str]:
    """The sets that `items` read through `trained_run`, in the order they need them (a
    parametrized `hparams_set`, else the test module's `TRAINED_SET`, else TINY_SET; a module
    that only starts runs of its own with `trained_run.start` sets `TRAINED_SET = None`). A test
    reads `trained_run` when it or one of its fixtures names it as an argument; the two autouse
    fixtures below take it with `getfixturevalue` so that they do not put it into every test's
    fixture closure (each module would then train its parametrized sets for nothing)."""
    needed = []
    for item in items:
        if "trained_run" not in getattr(item, "fixturenames", ()):
            continue
        callspec = getattr(item, "callspec", None)
        if callspec is not None and "hparams_set" in callspec.params:
            needed.append(callspec.params["hparams_set"])
        elif getattr(item.module, "TRAINED_SET", TINY_SET) is not None:
            needed.append(getattr(item.module, "TRAINED_SET", TINY_SET))
    return list(dict.fromkeys(needed))


@pytest.fixture(scope="session", autouse=True)
def _train_the_shared_runs_in_the_background(request):
    """The sets that the selected tests read start training in the background when the session
    starts, one at a time in `trained_run`'s process: most tests leave a core free, so the runs
    are mostly done when needed. Under pytest-xdist a worker does not know which test files it
    will get, so every worker queues every set, the second one from the end of the list: the
    two trainer processes meet in the middle, each set trained once."""
    sets = _sets_read_by(request.session.items)
    if os.environ.get("PYTEST_XDIST_WORKER", "gw0") != "gw0":
        sets.reverse()
    if sets:
        request.getfixturevalue("trained_run").prefetch(sets, urgent=False)


@pytest.fixture(scope="module", autouse=True)
def _train_this_modules_runs_first(request):
    """A module's shared runs move to the front of the queue when it starts, all at once: its
    first test waits for the first run, and the next ones train while it checks."""
    module_items = [item for item in request.session.items if item.module is request.module]
    sets = _sets_read_by(module_items)
    if sets:
        request.getfixturevalue("trained_run").prefetch(sets)


def params_selected(request: pytest.FixtureRequest, argname: str) -> list[str]:
    """The values of parameter `argname` among the requesting module's tests that this session
    runs: a module fixture that prepares every case at once prepares only these (a case in the
    slow tier only under `-m slow`)."""
    values = {
        item.callspec.params[argname]
        for item in request.session.items
        if item.module is request.module
        and hasattr(item, "callspec")
        and argname in item.callspec.params
    }
    return sorted(values)


def repository_agents() -> list[str]:
    """The registered agents defined under `rl/`. Tests register agents of their own (e.g.
    tests/repro_nondeterministic_dqn.py), which tests that go over every agent must skip."""
    from rl import registry

    return [
        name
        for name in registry.agents.names()
        if registry.get_agent(name).__module__.startswith("rl.")
    ]
