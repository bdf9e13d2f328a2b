"""`python -m rl.tune --population N --pbt`: population-based training (Jaderberg et al. 2017,
https://arxiv.org/abs/1711.09846) inside the compiled population program.

Why here: the N members already train as one program (`rl.compiled.population`), weights and
optimizer slots stacked on a member axis and numeric hparams in [N] variables. So exploit (a
bottom member takes a top member's weights, slots and hparams) is one gather per stacked
variable and explore one assign per key, in one traced function between iterations: no
restart, no retrace. Who copies whom is decided on the host at each `interval` boundary, with a
generator seeded by the study seed and the env step, so a resumed run decides as before. The
winner is its ancestors' hparams (lineage.json) as `piecewise` schedules of the gradient step,
which train.py replays (docs/tuning.md, PBT).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import tensorflow as tf

from rl import loop
from rl.compiled.ppo_seeds_iteration import CompiledPPOSeeds
from rl.compiled.programs import multi_seed_class
from rl.engines.base import EvalRequest, Iteration
from rl.engines.compiled import CompiledEngine
from rl.errors import Diverged, UserError
from rl.evaluation import EvalResult
from rl.tune.objective import TrialConfig, evaluations_due, run_score, trial_hparams
from rl.tune.search_space import Param, SearchSpace
from rl.utils.checkpoint_choice import select_checkpoint
from rl.utils.files import atomic_write_json, join, read_json

LINEAGE = "lineage.json"
MEMBERS_DIR = "members"
PERTURB = (0.8, 1.25)  # explore's factors, as in the paper


@dataclass(frozen=True)
class PBTConfig:
    interval: int  # env steps between exploit/explore rounds (at the first evaluation after)
    quantile: float  # the bottom and top fractions of the members
    resample: float  # explore: the chance a key is drawn afresh instead of perturbed
    seed: int  # the study seed: initial values and every round's choices derive from it


def check_pbt_space(space: SearchSpace, base: Any, population: int, pbt: PBTConfig) -> None:
    """UserError (one line) for a PBT the program cannot run: too few members, a bad quantile or
    resample chance, or a searched key that cannot change during a run."""
    if population < 4:
        raise UserError(f"--pbt needs --population >= 4 (a bottom and a top), got {population}")
    if not 0 < pbt.quantile <= 0.5:
        raise UserError(f"--pbt_quantile must lie in (0, 0.5], got {pbt.quantile}")
    if not 0 <= pbt.resample <= 1:
        raise UserError(f"--pbt_resample must lie in [0, 1], got {pbt.resample}")
    if pbt.interval < base.eval.every_steps or pbt.interval % base.eval.every_steps:
        raise UserError(
            f"--pbt_interval {pbt.interval} must be a multiple of eval.every_steps "
            f"({base.eval.every_steps}): each round ranks the members by that evaluation"
        )
    if multi_seed_class(base) is None:
        raise UserError(f"--pbt: agent {base.agent!r} has no many-seeds program; use ppo or a2c")
    if ("target_kl" in base and base.target_kl is not None) or base.seed_shards != 1:
        raise UserError(
            "--pbt trains the members as one program, which target_kl and seed_shards != 1 "
            "split: set them to None and 1 in --hparam_override"
        )
    for param in space.params:
        if param.kind == "categorical" and len(param.choices) < 2:
            raise UserError(f"--pbt: search space key {param.key} has one choice; leave it out")
        value = param.examples()[0]
        try:  # the winner is published as schedules of the step
            base.copy().override(f"{param.key}=piecewise([1], [{value}, {value}])")
        except UserError:
            raise UserError(
                f"--pbt changes {param.key} during a run, but a run fixes it (no schedule, see "
                "docs/hparams_reference.md): leave it out of --keys"
            ) from None


def sample(param: Param, rng: np.random.Generator) -> Any:
    """A value drawn from `param`'s range (log-uniform where `log`) or choices."""
    if param.kind == "categorical":
        return param.choices[int(rng.integers(len(param.choices)))]
    if param.log:
        value = math.exp(rng.uniform(math.log(param.low), math.log(param.high)))
    else:
        value = rng.uniform(param.low, param.high)
    return int(round(value)) if param.kind == "int" else float(value)


def perturb(param: Param, value: Any, rng: np.random.Generator, resample: float) -> Any:
    """Explore: a fresh draw with chance `resample`, else `value` x 0.8 or x 1.25 clipped to the
    range (a categorical key moves to a neighbouring choice)."""
    if rng.random() < resample:
        return sample(param, rng)
    if param.kind == "categorical":
        index = param.choices.index(value) + int(rng.choice((-1, 1)))
        return param.choices[min(max(index, 0), len(param.choices) - 1)]
    value = min(max(value * float(rng.choice(PERTURB)), param.low), param.high)
    return int(round(value)) if param.kind == "int" else float(value)


def initial_values(space: SearchSpace, population: int, seed: int) -> list[dict[str, Any]]:
    """Each member's starting values: random draws; a categorical key deals its choices round
    the members, so every searched key differs between members (and becomes a tensor of the
    program that explore can change)."""
    rng = np.random.default_rng([seed, 0])
    members: list[dict[str, Any]] = [{} for _ in range(population)]
    for param in space.params:
        offset = int(rng.integers(len(param.choices))) if param.kind == "categorical" else 0
        for i, values in enumerate(members):
            if param.kind == "categorical":
                values[param.key] = param.choices[(i + offset) % len(param.choices)]
            else:
                values[param.key] = sample(param, rng)
    return members


def exploit_choices(
    scores: Sequence[float | None], quantile: float, rng: np.random.Generator
) -> dict[int, int]:
    """{bottom member: the top member it copies}: the worst and best `quantile` of the members
    by `scores` (NaN ranks lowest; ties by member index), each bottom one a random top one. A
    None score (a member that diverged or stopped early) is left out of the ranking."""
    live = [i for i, score in enumerate(scores) if score is not None]
    if len(live) < 2:
        return {}
    ranked = sorted(live, key=lambda i: -math.inf if math.isnan(scores[i]) else scores[i])
    count = max(1, int(len(live) * quantile))
    return {b: int(rng.choice(ranked[-count:])) for b in ranked[:count]}


@dataclass
class Lineage:
    """Per member, its entries {step, gradient_step, copied_from, hparams, score}: from `step`
    on it trains with `hparams` (and from member `copied_from`'s weights, when not None)."""

    path: str
    members: list[list[dict[str, Any]]]

    @classmethod
    def open(cls, path: str, initial: list[dict[str, Any]], resume_step: int) -> Lineage:
        """The lineage up to `resume_step` (rounds after the checkpoint resumed from are
        decided again, identically), or a new one of the `initial` values."""
        if tf.io.gfile.exists(path):
            saved = read_json(path)["members"]
            return cls(
                path, [[e for e in entries if e["step"] <= resume_step] for entries in saved]
            )
        start = {"step": 0, "gradient_step": 0, "copied_from": None, "score": None}
        return cls(path, [[{**start, "hparams": dict(values)}] for values in initial])

    def hparams(self, member: int) -> dict[str, Any]:
        return self.members[member][-1]["hparams"]

    def last_round(self) -> int:
        return max(entries[-1]["step"] for entries in self.members)

    def write(self, winner: int | None = None) -> None:
        atomic_write_json(self.path, {"members": self.members, "winner": winner})

    def ancestry(self, member: int) -> list[dict[str, Any]]:
        """The entries whose hparams trained `member`'s final weights, oldest first: its own back
        to its last copy, then the donor's before that, and so on."""
        chain: list[dict[str, Any]] = []
        before = math.inf
        while True:
            entries = [entry for entry in self.members[member] if entry["step"] < before]
            for entry in reversed(entries):
                chain.append(entry)
                if entry["copied_from"] is not None:
                    member, before = entry["copied_from"], entry["step"]
                    break
            else:
                return chain[::-1]

    def schedules(self, member: int) -> dict[str, Any]:
        """`member`'s hparams as its ancestry trained them: a `piecewise` schedule of the
        gradient step per key that changed, else the number (what train.py replays)."""
        chain = self.ancestry(member)
        bounds = [entry["gradient_step"] for entry in chain[1:]]
        out: dict[str, Any] = {}
        for key in chain[0]["hparams"]:
            values = [entry["hparams"][key] for entry in chain]
            piecewise = f"piecewise({bounds}, {[float(v) for v in values]})"
            out[key] = values[0] if len(set(values)) == 1 else piecewise
        return out


class Rounds:
    """The exploit/explore rounds of one population: when, who copies whom, the new values,
    recorded in the lineage and in each member's TensorBoard (`<run dir>/pbt`)."""

    def __init__(
        self, space: SearchSpace, pbt: PBTConfig, lineage: Lineage, run_dirs: Sequence[str]
    ) -> None:
        self.space, self.pbt, self.lineage = space, pbt, lineage
        self.writers = [tf.summary.create_file_writer(join(d, "pbt")) for d in run_dirs]

    def due(self, step: int, train_steps: int) -> bool:
        """A round at the first evaluation past each interval boundary (none at the last)."""
        interval = self.pbt.interval
        return step < train_steps and step // interval > self.lineage.last_round() // interval

    def values(self) -> dict[str, list[float]]:
        """[member] values of every searched key, as the program's variables take them."""
        hparams = [entries[-1]["hparams"] for entries in self.lineage.members]
        return {key: [float(values[key]) for values in hparams] for key in self.space.keys()}

    def decide(self, step: int, gradient_step: int, scores: Sequence[float | None]) -> list[int]:
        """One round: records who copies whom and the explored values; returns source[member]."""
        rng = np.random.default_rng([self.pbt.seed, step])
        choices = exploit_choices(scores, self.pbt.quantile, rng)
        source = list(range(len(scores)))
        for bottom, top in sorted(choices.items()):
            source[bottom] = top
            donor = self.lineage.hparams(top)
            values = {
                p.key: perturb(p, donor[p.key], rng, self.pbt.resample) for p in self.space.params
            }
            entry = {"step": step, "gradient_step": gradient_step, "copied_from": top}
            self.lineage.members[bottom].append(
                {**entry, "hparams": values, "score": scores[bottom]}
            )
        self.lineage.write()
        self.log(step, source)
        return source

    def log(self, step: int, source: Sequence[int]) -> None:
        for member, writer in enumerate(self.writers):
            with writer.as_default(step=step):
                for key, value in self.lineage.hparams(member).items():
                    tf.summary.scalar(f"pbt/{key}", float(value))
                tf.summary.scalar("pbt/copied_from", source[member])
            writer.flush()


def resume_together(runs: list[loop.Run]) -> list[list[loop.Run]]:
    """`group_runs` of the population: one program, resuming at the oldest member's latest
    checkpoint (none once every member is complete). A kill while the members' checkpoints were
    written leaves some a checkpoint ahead, even complete; they resume from their (kept) one at
    that step, and the rounds after it replay."""
    if all(run.already_complete for run in runs):
        return []
    oldest = min(run.state["env_steps"] for run in runs)
    for run in runs:
        if run.state["env_steps"] == oldest:
            continue
        run.pointer, run.saved_step, run.state = None, None, loop.initial_state()
        run.already_complete = False
        if oldest > 0:
            store, run.pointer = select_checkpoint(run.run_dir, str(oldest))
            saved = read_json(join(store.directory, run.pointer["directory"], "trainer.json"))
            run.state = {**run.state, **saved}
            run.saved_step = oldest
    return [runs]


class PBTEngine(CompiledEngine):
    """The compiled engine of the population, with a round after each due evaluation."""

    def __init__(self, hparams: Any, runs: Sequence, rounds: Rounds) -> None:
        self.rounds = rounds
        super().__init__(hparams, runs)
        assert isinstance(self.group, CompiledPPOSeeds), "checked by check_pbt_space"
        self._evaluated_weights = False  # the members' agents hold the weights before a round

    def start(self, states: Sequence[dict[str, Any]]) -> None:
        super().start(states)
        if self.rounds.lineage.last_round() == 0:
            self.rounds.lineage.write()
            self.rounds.log(0, range(len(self.members)))
        self._apply(list(range(len(self.members))))  # the lineage's values where it resumes

    def _apply(self, source: list[int]) -> None:
        values = {k: tf.constant(v, tf.float32) for k, v in self.rounds.values().items()}
        self.group.exploit_explore(tf.constant(source, tf.int32), values)

    def iterate(self, active: Sequence[bool]) -> list[Iteration]:
        self._evaluated_weights = False
        return super().iterate(active)

    def evaluate(self, requests: Sequence[EvalRequest]) -> list[EvalResult]:
        results = super().evaluate(requests)
        step = requests[0].env_steps
        if self.rounds.due(step, self.hp.train_steps):
            self._store_members()  # a best checkpoint of this evaluation keeps these weights
            gradient_step = int(self.members[0].agent.learner.gradient_steps.numpy())
            scores: list[float | None] = [None] * len(self.members)  # None: stopped training
            for request, result in zip(requests, results, strict=True):
                scores[request.index] = float(result.return_mean)
            self._apply(self.rounds.decide(step, gradient_step, scores))
            self._evaluated_weights = True
        return results

    def prepare_checkpoint(self, index: int, state: dict[str, Any]) -> None:
        if self._evaluated_weights:  # a checkpoint holds the weights after the round
            self._members_current = self._evaluated_weights = False
        super().prepare_checkpoint(index, state)


def run_pbt(
    space: SearchSpace, config: TrialConfig, population: int, pbt: PBTConfig
) -> tuple[int, float, dict[str, Any]]:
    """Trains the population with PBT (resuming where its checkpoints are); returns the member
    with the best objective, its score and its values as schedules."""
    from rl.tune.winners import progress_returns

    path = join(config.output_dir, LINEAGE)
    initial = initial_values(space, population, pbt.seed)
    if tf.io.gfile.exists(path):
        started = [entries[0]["hparams"] for entries in read_json(path)["members"]]
        if started != initial:
            raise UserError(
                f"{path} is of another PBT (other --seed, --keys or --population); continue it "
                "with its own flags or use another --output_dir"
            )
    base = trial_hparams(config, {})
    run_dirs = [join(config.output_dir, MEMBERS_DIR, f"member_{i}") for i in range(population)]
    members = [trial_hparams(config, values) for values in initial]
    seeds = [pbt.seed + i for i in range(population)]

    def engine(runs: list[loop.Run]) -> PBTEngine:
        lineage = Lineage.open(path, initial, resume_step=runs[0].state["env_steps"])
        return PBTEngine(base, runs, Rounds(space, pbt, lineage, [run.run_dir for run in runs]))

    diverged: tuple[str, ...] = ()
    try:
        loop.train(
            base, run_dirs, seeds, config.hparams_set, engine,
            group_runs=resume_together, run_hparams=members,
        )  # fmt: skip
    except Diverged as error:  # those members stopped at their last good checkpoint
        if len(error.run_dirs) == population:
            raise
        diverged = error.run_dirs
        print(f"[tune] {len(diverged)} PBT members diverged; the winner is among the others")
    due = evaluations_due(base)
    scores = [
        math.nan if d in diverged else run_score(progress_returns(d), due, config.last_k)
        for d in run_dirs
    ]
    winner = int(np.nanargmax(scores))
    lineage = Lineage.open(path, initial, base.train_steps)
    lineage.write(winner)
    return winner, scores[winner], lineage.schedules(winner)
