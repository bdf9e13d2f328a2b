"""The training loop of the compiled path: `rl.trainer.Trainer`'s interface and outputs, for
environments written in TF ops ("tf/CartPole-v1", `rl.envs.tf`).

train.py builds a `CompiledTrainer` instead of a `Trainer` when `hparams.env` starts with "tf/";
the constructor arguments and the `.train()` / `.test(episodes)` results are the same, and so is
the run directory: hparams.json, manifest.json, checkpoints/ (CheckpointStore), TensorBoard
`train/` `eval/` (`test/`) events, progress.csv, the console line.

What differs from the Python-env trainer:
- one host call per iteration (`CompiledPPO.iteration`: T steps x N envs + all update epochs,
  one XLA program) and one per evaluation (greedy, in-graph, `eval.episodes` envs);
- iterations are whole: training runs ceil(train_steps / (T * N)) iterations, so env_steps ends
  at the first multiple of T * N >= train_steps (a partial last rollout would retrace);
- checkpoints hold the envs' state too, so saving cuts no episode and a resumed run continues
  exactly as if uninterrupted (tests/compiled/test_resume.py);
- --record_video / --render are not available (TF envs do not render).
"""

from __future__ import annotations

import time
from typing import Any

from rl.compiled.ppo_iteration import CompiledPPO
from rl.envs.tf import make_tf_env
from rl.errors import UserError
from rl.evaluation import EvalResult
from rl.hparams import HParams
from rl.trainer import TrainResult, _copy_index, _next_multiple, initial_state
from rl.utils.checkpoint import CheckpointStore
from rl.utils.files import join
from rl.utils.logger import ConsoleSink, CSVSink, Logger, TensorBoardSink
from rl.utils.run_dir import manifest, write_run_files
from rl.utils.seeding import derive_seed


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
        if record_video or render:
            raise UserError(
                f"env {hparams.env!r} is written in TF ops and cannot render; "
                "--record_video/--render need a gymnasium env"
            )
        self.hp = hparams
        self.run_dir = run_dir
        self.seed = seed
        self.hparams_set = hparams_set
        self.label = run_dir.rstrip("/").split("/")[-1]
        self.store = CheckpointStore(join(run_dir, "checkpoints"), hparams.keep_checkpoints)

    def build(self) -> CompiledPPO:
        hp = self.hp
        env = make_tf_env(hp.env, max_episode_steps=hp.max_episode_steps, **hp.env_kwargs)
        return CompiledPPO(hp, env, self.seed)

    # ------------------------------------------------------------------------ training
    def train(self) -> TrainResult:
        hp = self.hp
        ppo = self.build()
        state = initial_state()
        pointer = self.store.latest()
        if pointer is not None:
            _, state = self.store.restore(ppo.checkpoint, pointer)
            if state["env_steps"] >= hp.train_steps or state["stopped_early"]:
                print(
                    f"[{self.label}] already complete at {state['env_steps']:,} env steps "
                    f"(last eval {state['last_eval_return']}); nothing to do"
                )
                return _result(state, already_complete=True)
            print(f"[{self.label}] resuming from checkpoint at {state['env_steps']:,} env steps")
        write_run_files(
            self.run_dir, hp, manifest(self.seed, _copy_index(self.label), self.hparams_set)
        )
        tensorboard = TensorBoardSink(self.run_dir)
        if pointer is None:
            tensorboard.write_hparams(hp.flat_scalars(), trial_id=self.label)
        logger = Logger(
            [
                tensorboard,
                CSVSink(join(self.run_dir, "progress.csv"), resume_at_step=state["env_steps"]),
            ]
        )
        console = ConsoleSink(hp.train_steps, self.label)
        try:
            self._loop(ppo, logger, console, state)
            if state["stopped_early"]:
                print(
                    f"[{self.label}] eval return {state['last_eval_return']:.1f} reached "
                    f"stop_at_eval_return={hp.stop_at_eval_return}: stopped at "
                    f"{state['env_steps']:,} env steps"
                )
        finally:
            logger.close()
        return _result(state, already_complete=False)

    def _loop(self, ppo: CompiledPPO, logger, console, state) -> None:
        hp = self.hp
        next_eval = _next_multiple(state["env_steps"], hp.eval.every_steps)
        next_checkpoint = _next_multiple(state["env_steps"], hp.checkpoint_every)
        next_log = _next_multiple(state["env_steps"], hp.log_every)
        wall_start = time.monotonic() - state["wall_seconds"]
        rate_start, rate_steps = time.monotonic(), state["env_steps"]
        steps = state["env_steps"]
        while steps < hp.train_steps and not state["stopped_early"]:
            out = ppo.run_iteration()
            steps = int(ppo.agent.env_steps.numpy())
            state["env_steps"] = steps
            state["wall_seconds"] = time.monotonic() - wall_start
            finished_episodes = int(out.pop("episodes_done"))
            return_sum, length_sum = out.pop("episode_return_sum"), out.pop("episode_length_sum")
            state["episodes"] += finished_episodes
            if finished_episodes:
                logger.record("train/episode_return", return_sum / finished_episodes)
                logger.record("train/episode_length", length_sum / finished_episodes)
            logger.record_many({f"train/{name}": value for name, value in out.items()})
            now = time.monotonic()
            steps_per_second = (steps - rate_steps) / max(now - rate_start, 1e-9)
            logger.record("time/steps_per_second", steps_per_second)
            logger.record("time/wall_seconds", state["wall_seconds"])
            finished = steps >= hp.train_steps
            evaluation: dict[str, float] = {}
            if steps >= next_eval or finished:
                evaluation = self._evaluate(ppo, state)
                state["wall_seconds"] = time.monotonic() - wall_start
                if state["first_step_at_threshold"] == steps:
                    state["first_wall_at_threshold"] = state["wall_seconds"]
                logger.record_many(evaluation)
                logger.record("time/wall_seconds", state["wall_seconds"])
                next_eval = _next_multiple(steps, hp.eval.every_steps)
            if steps >= next_log or finished or evaluation:
                logger.record_many(ppo.agent.metrics())
                logger.record("train/episodes", state["episodes"])
                logger.dump(steps)
                next_log = _next_multiple(steps, hp.log_every)
                rate_start, rate_steps = now, steps
            console.write({"time/steps_per_second": steps_per_second, **evaluation}, steps)
            if steps >= next_checkpoint or finished or state["stopped_early"]:
                # No episode cut: the envs' state is in the checkpoint (see module docstring).
                self.store.save(steps, ppo.checkpoint, {}, dict(state))
                next_checkpoint = _next_multiple(steps, hp.checkpoint_every)

    def _evaluate(self, ppo: CompiledPPO, state: dict[str, Any]) -> dict[str, float]:
        hp = self.hp
        eval_seed = derive_seed(self.seed, "eval", state["evaluations"])
        returns, lengths = ppo.evaluate(eval_seed, hp.eval.episodes)
        result = EvalResult(returns=returns, lengths=lengths)
        state["evaluations"] += 1
        state["last_eval_return"] = result.return_mean
        threshold = hp.stop_at_eval_return
        if threshold is not None and result.return_mean >= threshold:
            if state["first_step_at_threshold"] is None:
                state["first_step_at_threshold"] = state["env_steps"]
            state["stopped_early"] = True
        return result.metrics("eval")

    # ---------------------------------------------------------------------------- test
    def test(self, episodes: int) -> EvalResult:
        """Restores the latest checkpoint and plays `episodes` greedy episodes (in-graph)."""
        ppo = self.build()
        pointer = self.store.latest()
        self.store.restore(ppo.checkpoint, pointer)
        returns, lengths = ppo.evaluate(derive_seed(self.seed, "test"), episodes)
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


def _result(state: dict[str, Any], already_complete: bool) -> TrainResult:
    return TrainResult(
        env_steps=state["env_steps"],
        wall_seconds=state["wall_seconds"],
        last_eval_return=state["last_eval_return"],
        first_step_at_threshold=state["first_step_at_threshold"],
        already_complete=already_complete,
    )
