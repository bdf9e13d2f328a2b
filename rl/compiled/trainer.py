"""The training loop of the compiled path: `rl.trainer.Trainer`'s interface and outputs, for
environments written in TF ops ("tf/CartPole-v1", `rl.envs.tf`).

train.py builds a `CompiledTrainer` instead of a `Trainer` when `hparams.env` starts with "tf/"
(and calls `train_copies` for `--copies N`); the constructor arguments and the `.train()` /
`.test(episodes)` results are the same, and so is each run directory: hparams.json,
manifest.json, checkpoints/ (CheckpointStore), TensorBoard `train/` `eval/` (`test/`) events,
progress.csv, the console line.

What differs from the Python-env trainer:
- one host call per iteration (one XLA program: T steps x N envs + the update; which program is
  decided by `rl.compiled.engines`) and one per evaluation (greedy, in-graph, `eval.episodes`
  envs);
- iterations are whole: training runs ceil(train_steps / (T * N)) iterations, so env_steps ends
  at the first multiple of T * N >= train_steps (a partial last rollout would retrace);
- checkpoints hold the envs' state (and an in-graph replay) too, so saving cuts no episode and a
  resumed run continues exactly as if uninterrupted (tests/compiled/test_compiled_resume.py);
- `--copies N` trains the N seeds as ONE program when the agent has a multi-seed path
  (`rl.compiled.seeds`): each copy still gets its own run dir, logs, evaluations, early stop
  and checkpoints (the same files as a single-seed run's, interchangeable with them). Copies
  resuming from different steps (or already complete) are grouped by the step they resume at;
- --record_video / --render are not available (TF envs do not render).
"""

from __future__ import annotations

import time

from rl.compiled.engines import SeedGroup, build_group, multi_seed_class, single_seed_class
from rl.compiled.seed_shards import ShardedSeeds, shard_count
from rl.compiled.seed_stack import NotStackable
from rl.envs.tf import TFEnv, make_tf_env
from rl.errors import UserError
from rl.evaluation import EvalResult
from rl.hparams import HParams
from rl.trainer import TrainResult, _copy_index, _next_multiple, initial_state
from rl.utils.checkpoint import CheckpointStore
from rl.utils.files import join, read_json
from rl.utils.logger import ConsoleSink, CSVSink, Logger, TensorBoardSink
from rl.utils.run_dir import manifest, write_run_files
from rl.utils.seeding import derive_seed

# Iteration outputs the trainer consumes itself rather than logging as train/<name>.
EPISODE_KEYS = ("episodes_done", "episode_return_sum", "episode_length_sum")


def make_env(hparams: HParams) -> TFEnv:
    return make_tf_env(
        hparams.env, max_episode_steps=hparams.max_episode_steps, **hparams.env_kwargs
    )


def _refuse_rendering(hparams: HParams, record_video: bool, render: bool) -> None:
    if record_video or render:
        raise UserError(
            f"env {hparams.env!r} is written in TF ops and cannot render; "
            "--record_video/--render need a gymnasium env"
        )


class CompiledTrainer:
    """Runs one copy (seed) of an experiment on a TF-ops env in one run directory."""

    def __init__(
        self,
        hparams: HParams,
        run_dir: str,
        seed: int,
        hparams_set: str,
        record_video: bool = False,
        render: bool = False,
    ) -> None:
        _refuse_rendering(hparams, record_video, render)
        single_seed_class(hparams)  # an agent without a compiled path fails here, first
        self.hp = hparams
        self.run_dir = run_dir
        self.seed = seed
        self.hparams_set = hparams_set
        self.label = _label(run_dir)
        self.store = CheckpointStore(join(run_dir, "checkpoints"), hparams.keep_checkpoints)

    def train(self) -> TrainResult:
        return train_copies(self.hp, [self.run_dir], [self.seed], self.hparams_set)[0]

    def test(self, episodes: int) -> EvalResult:
        """Restores the latest checkpoint and plays `episodes` greedy episodes (in-graph)."""
        run = single_seed_class(self.hp)(self.hp, make_env(self.hp), self.seed)
        pointer = self.store.latest()
        self.store.restore(run.checkpoint, pointer)
        returns, lengths = run.evaluate(derive_seed(self.seed, "test"), episodes)
        result = EvalResult(returns=returns, lengths=lengths)
        tensorboard = TensorBoardSink(self.run_dir)
        for i, (ret, length) in enumerate(zip(result.returns, result.lengths, strict=True)):
            tensorboard.write({"test/episode_return": ret, "test/episode_length": length}, i)
        tensorboard.close()
        print(f"[{self.label}] checkpoint at {pointer['step']:,} env steps")
        print(f"{'episode':>8} {'return':>10} {'length':>8}")
        for i, (ret, length) in enumerate(zip(result.returns, result.lengths, strict=True)):
            print(f"{i:>8} {ret:>10.2f} {length:>8}")
        print(
            f"[{self.label}] test return {result.return_mean:.2f} ± {result.return_std:.2f} "
            f"over {len(result.returns)} episodes"
        )
        return result


def train_copies(
    hparams: HParams,
    run_dirs: list[str],
    seeds: list[int],
    hparams_set: str,
    record_video: bool = False,
) -> list[TrainResult]:
    """Trains every copy (`run_dirs[i]` with `seeds[i]`); returns their results in order.

    Copies that are complete are reported; the others are grouped by the env step they resume
    from, and each group is one program (S seeds) when the agent has a multi-seed path, else
    its copies train one after another.
    """
    _refuse_rendering(hparams, record_video, False)
    single_seed_class(hparams)
    runs = [
        _Run(hparams, run_dir, seed, hparams_set)
        for run_dir, seed in zip(run_dirs, seeds, strict=True)
    ]
    groups: dict[int, list[_Run]] = {}
    for run in runs:
        if not run.complete:
            groups.setdefault(run.state["env_steps"], []).append(run)
    together = multi_seed_class(hparams) is not None
    env = make_env(hparams)
    for _, group in sorted(groups.items()):
        if together:
            try:
                _train_group(hparams, env, group)
                continue
            except NotStackable:  # raised while building, before anything was written
                pass
        # One program per seed: as many at a time as there are shards (CPU cores by default).
        at_once = shard_count(hparams, len(group))
        for start in range(0, len(group), at_once):
            _train_group(hparams, env, group[start : start + at_once], one_program_per_seed=True)
    return [run.result() for run in runs]


class _Run:
    """One copy's run dir, checkpoint store, trainer state and sinks."""

    def __init__(self, hparams: HParams, run_dir: str, seed: int, hparams_set: str) -> None:
        self.hp = hparams
        self.run_dir = run_dir
        self.seed = seed
        self.hparams_set = hparams_set
        self.label = _label(run_dir)
        self.store = CheckpointStore(join(run_dir, "checkpoints"), hparams.keep_checkpoints)
        self.pointer = self.store.latest()
        self.state = initial_state()
        if self.pointer is not None:
            directory = join(self.store.directory, self.pointer["directory"])
            self.state = read_json(join(directory, "trainer.json"))
        self.complete = self.pointer is not None and (
            self.state["env_steps"] >= hparams.train_steps or self.state["stopped_early"]
        )
        self.already_complete = self.complete
        if self.complete:
            print(
                f"[{self.label}] already complete at {self.state['env_steps']:,} env steps "
                f"(last eval {self.state['last_eval_return']}); nothing to do"
            )

    def start(self, member) -> None:
        """Restores `member` from the checkpoint (if any), writes the run files, opens sinks."""
        hp = self.hp
        if self.pointer is not None:
            _, self.state = self.store.restore(member.checkpoint, self.pointer)
            steps = self.state["env_steps"]
            print(f"[{self.label}] resuming from checkpoint at {steps:,} env steps")
        write_run_files(
            self.run_dir, hp, manifest(self.seed, _copy_index(self.label), self.hparams_set)
        )
        tensorboard = TensorBoardSink(self.run_dir)
        if self.pointer is None:
            tensorboard.write_hparams(hp.flat_scalars(), trial_id=self.label)
        self.logger = Logger(
            [
                tensorboard,
                CSVSink(join(self.run_dir, "progress.csv"), resume_at_step=self.state["env_steps"]),
            ]
        )
        self.console = ConsoleSink(hp.train_steps, self.label)
        steps = self.state["env_steps"]
        self.next_eval = _next_multiple(steps, hp.eval.every_steps)
        self.next_checkpoint = _next_multiple(steps, hp.checkpoint_every)
        self.next_log = _next_multiple(steps, hp.log_every)
        self.wall_start = time.monotonic() - self.state["wall_seconds"]
        self.rate_start, self.rate_steps = time.monotonic(), steps

    @property
    def active(self) -> bool:
        return self.state["env_steps"] < self.hp.train_steps and not self.state["stopped_early"]

    def finish(self) -> None:
        self.logger.close()
        if self.state["stopped_early"]:
            print(
                f"[{self.label}] eval return {self.state['last_eval_return']:.1f} reached "
                f"stop_at_eval_return={self.hp.stop_at_eval_return}: stopped at "
                f"{self.state['env_steps']:,} env steps"
            )

    def result(self) -> TrainResult:
        state = self.state
        return TrainResult(
            env_steps=state["env_steps"],
            wall_seconds=state["wall_seconds"],
            last_eval_return=state["last_eval_return"],
            first_step_at_threshold=state["first_step_at_threshold"],
            already_complete=self.already_complete,
        )


def _train_group(
    hparams: HParams, env: TFEnv, runs: list[_Run], one_program_per_seed: bool = False
) -> None:
    """Trains `runs` (all resuming from the same env step) in lockstep until each is done."""
    seeds = [run.seed for run in runs]
    if one_program_per_seed and len(runs) > 1:
        group = ShardedSeeds([build_group(hparams, env, [seed]) for seed in seeds])
    else:
        group = build_group(hparams, env, seeds)
    for run, member in zip(runs, group.members, strict=True):
        run.start(member)
    group.load_from_members()
    try:
        while any(run.active for run in runs):
            outs = group.run_iteration()
            steps = int(group.members[0].agent.env_steps.numpy())
            live = [(i, run) for i, run in enumerate(runs) if run.active]
            for i, run in live:
                _record_iteration(run, outs[i], steps)
            finished = steps >= hparams.train_steps
            due = [(i, run) for i, run in live if steps >= run.next_eval or finished]
            if due:
                _evaluate(group, due, steps)
            saving = []
            for i, run in live:
                _log(run, steps, group.members[i].agent)
                if (
                    steps >= run.next_checkpoint
                    or steps >= hparams.train_steps
                    or run.state["stopped_early"]
                ):
                    saving.append((i, run))
            if saving:
                # No episode cut: the envs' state is in the checkpoint (see module docstring).
                group.store_to_members()
                for i, run in saving:
                    run.store.save(steps, group.members[i].checkpoint, {}, dict(run.state))
                    run.next_checkpoint = _next_multiple(steps, hparams.checkpoint_every)
    finally:
        if isinstance(group, ShardedSeeds):
            group.close()
        for run in runs:
            run.finish()


def _record_iteration(run: _Run, out: dict[str, float], steps: int) -> None:
    state, logger = run.state, run.logger
    state["env_steps"] = steps
    state["wall_seconds"] = time.monotonic() - run.wall_start
    finished, return_sum, length_sum = (out.pop(key) for key in EPISODE_KEYS)
    state["episodes"] += int(finished)
    if finished:
        logger.record("train/episode_return", return_sum / finished)
        logger.record("train/episode_length", length_sum / finished)
    if out.pop("learned", 1.0):  # an off-policy iteration before learning starts logs no loss
        logger.record_many({f"train/{name}": value for name, value in out.items()})
    run.now = time.monotonic()
    run.steps_per_second = (steps - run.rate_steps) / max(run.now - run.rate_start, 1e-9)
    logger.record("time/steps_per_second", run.steps_per_second)
    logger.record("time/wall_seconds", state["wall_seconds"])
    run.evaluation = {}


def _evaluate(group: SeedGroup, due: list[tuple[int, _Run]], steps: int) -> None:
    """One compiled greedy evaluation of every seed; recorded for the runs that are due."""
    hp = due[0][1].hp
    runs = dict(due)
    seeds = [
        derive_seed(member.seed, "eval", runs[i].state["evaluations"] if i in runs else 0)
        for i, member in enumerate(group.members)
    ]
    results = group.evaluate(seeds, hp.eval.episodes)
    for i, run in due:
        returns, lengths = results[i]
        result = EvalResult(returns=returns, lengths=lengths)
        state = run.state
        state["evaluations"] += 1
        state["last_eval_return"] = result.return_mean
        threshold = hp.stop_at_eval_return
        if threshold is not None and result.return_mean >= threshold:
            if state["first_step_at_threshold"] is None:
                state["first_step_at_threshold"] = steps
            state["stopped_early"] = True
        # Wall time to a threshold includes the evaluation that found it (as in SB3).
        state["wall_seconds"] = time.monotonic() - run.wall_start
        if state["first_step_at_threshold"] == steps:
            state["first_wall_at_threshold"] = state["wall_seconds"]
        run.evaluation = result.metrics("eval")
        run.logger.record_many(run.evaluation)
        run.logger.record("time/wall_seconds", state["wall_seconds"])
        run.next_eval = _next_multiple(steps, hp.eval.every_steps)


def _log(run: _Run, steps: int, agent) -> None:
    hp, state = run.hp, run.state
    finished = steps >= hp.train_steps
    if steps >= run.next_log or finished or run.evaluation:
        run.logger.record_many(agent.metrics())
        run.logger.record("train/episodes", state["episodes"])
        run.logger.dump(steps)
        run.next_log = _next_multiple(steps, hp.log_every)
        run.rate_start, run.rate_steps = run.now, steps
    run.console.write({"time/steps_per_second": run.steps_per_second, **run.evaluation}, steps)


def _label(run_dir: str) -> str:
    return run_dir.rstrip("/").split("/")[-1]
