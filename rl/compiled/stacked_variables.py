"""S agents' trainable variables stacked on a leading seed axis, with one optimizer over the stack.

Why: S separate programs pay S times every op's fixed cost (and S tracings and compilations).
Stacked, each optimizer update is one element-wise op per variable over [S, ...], with the
semantics of S independent runs (docs/compiled.md, "Many seeds in one program"). The per-seed
agents stay the checkpoint view (`store_to_agents` / `load_from_agents`); `seed_scope(s, weights)`
runs agent s's own code on its slice through a `keras.StatelessScope`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence

import keras
import tensorflow as tf

from rl.agents.base import Agent
from rl.agents.optimizers import make_optimizer
from rl.types import LossAndAux
from rl.utils import private_apis


class NotStackable(TypeError):
    """The agents' trainable variables cannot be stacked (e.g. a raw tf.Variable that a Keras
    StatelessScope cannot map); their seeds then train one at a time."""


class SeedStack(tf.Module):
    """The stacked trainable variables of `agents` (one agent per seed, same hparams)."""

    def __init__(self, agents: Sequence[Agent]) -> None:
        super().__init__(name="seed_stack")
        self.agents = list(agents)
        self.num_seeds = len(self.agents)
        template = self.agents[0]
        self.hparams = template.hparams
        self.per_seed = [list(agent.learner_variables()) for agent in self.agents]
        for variables in self.per_seed:
            for variable in variables:
                if not isinstance(variable, keras.Variable):
                    raise NotStackable(
                        f"{variable.name} is not a Keras variable: it cannot be mapped to a "
                        "slice of the seed stack"
                    )
        self.stacked = [
            tf.Variable(tf.stack([v.value for v in column]), name=f"stacked_{i}")
            for i, column in enumerate(zip(*self.per_seed, strict=True))
        ]
        self.learning_rate = template.learner.learning_rate
        hp = self.hparams
        self.optimizer = make_optimizer(hp.optimizer, self.learning_rate.value(0), hp.adam_epsilon)
        self.optimizer.build(self.stacked)
        self._check_optimizer_layout()
        # Per-seed [S] learning rates and clip norms of a population (`use_member_values`).
        self.member_lr: tf.Tensor | None = None
        self.member_max_grad_norm: tf.Tensor | None = None

    def use_member_values(
        self, lr: tf.Variable | None = None, max_grad_norm: tf.Variable | None = None
    ) -> None:
        """Each seed its own constant learning rate and/or clip norm ([S] tensors; a population).
        The optimizer steps with lr 1 and seed s's update is scaled by lr[s]: exactly its own
        optimizer, since Adam's, RMSprop's and SGD's updates are linear in a constant lr."""
        self.member_lr = lr
        self.member_max_grad_norm = max_grad_norm

    # ------------------------------------------------------------------ per-seed views
    def unstack(self, stacked: Sequence[tf.Tensor]) -> list[list[tf.Tensor]]:
        """[variable] tensors [S, ...] -> [seed][variable] slices (gradients flow through)."""
        columns = [tf.unstack(value, num=self.num_seeds) for value in stacked]
        return [list(row) for row in zip(*columns, strict=True)]

    @contextlib.contextmanager
    def seed_scope(self, seed_index: int, weights: list[list[tf.Tensor]]) -> Iterator[None]:
        """Inside, agent `seed_index`'s trainable Keras variables read `weights[seed_index]`."""
        mapping = list(zip(self.per_seed[seed_index], weights[seed_index], strict=True))
        with keras.StatelessScope(state_mapping=mapping):
            yield

    # ---------------------------------------------------------------------- learning
    def gradient_step(
        self, loss_fn: Callable[[list[tf.Tensor]], LossAndAux]
    ) -> tuple[tf.Tensor, tf.Tensor, dict[str, tf.Tensor]]:
        """One optimizer step for every seed (`Learner.gradient_step` per seed): `loss_fn(stacked
        weights)` -> ([S] losses, aux); returns ([S] losses, [S] gradient norms, aux)."""
        template = self.agents[0]
        if self.member_lr is None:
            self.optimizer.learning_rate.assign(self.learning_rate(template.learner.gradient_steps))
        else:  # scaled per seed below
            self.optimizer.learning_rate.assign(1.0)
        with tf.GradientTape() as tape:
            weights = [v.read_value() for v in self.stacked]
            losses, aux = loss_fn(weights)
            total = tf.reduce_sum(losses)
        grads = tape.gradient(total, self.stacked)
        norms = per_seed_global_norm(grads)
        limit = self.member_max_grad_norm
        if limit is None:
            limit = template.learner.clip_norm()  # a number, a schedule's tensor, or None (off)
        if limit is not None:
            grads = clip_per_seed(grads, limit, norms)
        self.optimizer.apply_gradients(zip(grads, self.stacked, strict=True))
        if self.member_lr is not None:
            for variable, before in zip(self.stacked, weights, strict=True):
                scale = tf.reshape(self.member_lr, [-1] + [1] * (before.shape.rank - 1))
                variable.assign(before + scale * (variable - before))
        for agent in self.agents:
            agent.learner.gradient_steps.assign_add(1)
        return losses, norms, aux

    def copy_members(self, source: tf.Tensor) -> None:
        """Seed s takes seed `source[s]`'s weights and optimizer slots (PBT's exploit): one gather
        per stacked variable, so a traced caller serves every choice of who copies whom."""
        pairs = zip(
            self.optimizer.variables, self.agents[0].learner.optimizer.variables, strict=True
        )
        slots = [stacked for stacked, single in pairs if _is_stacked(stacked, single)]
        for variable in [*self.stacked, *slots]:
            variable.assign(tf.gather(variable, source))

    # -------------------------------------------------------------------- checkpoints
    def store_to_agents(self) -> None:
        """Copies each seed's slice of the weights and optimizer state into its agent. Each variable
        is split once (`tf.unstack`), not sliced per seed: this runs eagerly at every evaluation and
        checkpoint, where each op costs dispatch time."""
        weights = [tf.unstack(stacked, num=self.num_seeds) for stacked in self.stacked]
        slots = [
            tf.unstack(stacked, num=self.num_seeds) if _is_stacked(stacked, single) else stacked
            for stacked, single in zip(
                self.optimizer.variables, self.agents[0].learner.optimizer.variables, strict=True
            )
        ]
        for s, agent in enumerate(self.agents):
            for variable, column in zip(self.per_seed[s], weights, strict=True):
                variable.assign(column[s])
            for variable, value in zip(agent.learner.optimizer.variables, slots, strict=True):
                variable.assign(value[s] if isinstance(value, list) else value)
            if self.member_lr is not None:  # the stack steps with lr 1 (`use_member_values`)
                agent.learner.optimizer.learning_rate.assign(self.member_lr[s])

    def load_from_agents(self) -> None:
        """The inverse of `store_to_agents` (after the agents were restored)."""
        for i, stacked in enumerate(self.stacked):
            stacked.assign(tf.stack([variables[i].value for variables in self.per_seed]))
        per_agent = [agent.learner.optimizer.variables for agent in self.agents]
        for stacked, column in zip(
            self.optimizer.variables, zip(*per_agent, strict=True), strict=True
        ):
            if _is_stacked(stacked, column[0]):
                stacked.assign(tf.stack([_value(v) for v in column]))
            elif self.member_lr is not None and stacked is self.optimizer.learning_rate:
                stacked.assign(1.0)  # each member's own lr is `member_lr` (a population)
            else:  # shared scalars (step counter, learning rate): equal in lockstep seeds
                values = [_value(v).numpy() for v in column]
                if any(value != values[0] for value in values):
                    raise ValueError(
                        f"optimizer variable {column[0].name} differs between seeds {values}; "
                        "seeds trained together must be at the same gradient step"
                    )
                stacked.assign(values[0])

    def _check_optimizer_layout(self) -> None:
        for agent in self.agents:
            mine, theirs = self.optimizer.variables, agent.learner.optimizer.variables
            if len(mine) != len(theirs) or any(
                a.shape != ([self.num_seeds, *b.shape] if _is_stacked(a, b) else b.shape)
                for a, b in zip(mine, theirs, strict=False)
            ):
                raise TypeError("the stacked optimizer's variables do not match the agents'")


def per_seed_global_norm(grads: Sequence[tf.Tensor]) -> tf.Tensor:
    """[S] global norms: sqrt of the sum of squares of each seed's slice of every gradient."""
    squares = [tf.reduce_sum(tf.square(g), axis=list(range(1, g.shape.rank))) for g in grads]
    return tf.sqrt(tf.add_n(squares))


def clip_per_seed(
    grads: Sequence[tf.Tensor], clip_norm: float | tf.Tensor, norms: tf.Tensor
) -> list:
    """`tf.clip_by_global_norm` per seed: seed s's slices scaled by clip / max(norm_s, clip), where
    `clip_norm` is a number, a schedule's tensor (no clipping where <= 0) or [S] per seed."""
    if isinstance(clip_norm, float | int):
        scale = clip_norm * tf.minimum(1.0 / norms, 1.0 / clip_norm)
    else:
        scale = tf.where(clip_norm > 0, clip_norm * tf.minimum(1.0 / norms, 1.0 / clip_norm), 1.0)
    scale = scale + (norms - norms)  # NaN/inf norms propagate, as tf.clip_by_global_norm does
    return [g * tf.reshape(scale, [-1] + [1] * (g.shape.rank - 1)) for g in grads]


def _is_stacked(stacked, single) -> bool:
    return stacked.shape.rank == single.shape.rank + 1


def _value(variable) -> tf.Tensor:
    return variable.value if isinstance(variable, keras.Variable) else variable.read_value()


def per_seed_map(fn, elems, num_seeds: int):
    """`tf.vectorized_map(fn, elems)` (one trace of `fn`, batched ops), its ops in the caller's
    graph: under XLA `vectorized_map` wraps them in a nested function, and XLA then compiles the
    program anew at every call (its variables become compile-time constants; TF 2.21)."""
    return private_apis.pfor(
        lambda i: fn(tf.nest.map_structure(lambda x: tf.gather(x, i), elems)), num_seeds
    )
