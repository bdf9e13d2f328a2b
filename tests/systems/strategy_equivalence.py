"""Run by tests/systems/test_strategy_training.py in a fresh process: one learner update under
MirroredStrategy over 2 logical CPU devices against the same update without a strategy.

The logical devices must be configured before TensorFlow initializes, hence a separate process.
For each case both agents start from the same checkpoint (weights, optimizer slots, counters,
generator state) and get the same batch; the script prints one JSON line with, per case, the
largest differences of the update's outputs and of every variable, and facts about the
replicas. The test asserts on them.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # this checkout's rl

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)

import rl  # noqa: E402,F401
from rl import registry  # noqa: E402
from rl.envs import make_vector_env  # noqa: E402
from rl.utils.seeding import seed_everything  # noqa: E402

# (case name, hparams set, overrides). SGD without clipping makes any error in the loss scaling
# visible in the weights (Adam is almost invariant to the gradient's scale); Adam with a small
# max_grad_norm checks that clipping uses the whole batch's gradient norm.
# Cases whose update draws random numbers (the on-policy minibatch shuffle, NoisyNet noise) turn
# XLA off for the one-device agent too: XLA's random-number algorithm differs from the CPU
# kernel's (other random numbers, not other math); under a strategy the learner is not XLA.
NO_XLA = "jit_compile=False"
CASES = [
    ("dqn_sgd", "dqn_tiny", "optimizer=sgd,lr=0.05,max_grad_norm=0.0"),
    ("dqn_adam_clip", "dqn_tiny", "max_grad_norm=0.05"),
    # Rainbow (C51 + NoisyNet noise drawn in the learner, dueling, PER, n-step, double Q).
    ("rainbow_sgd", "rainbow_tiny", f"optimizer=sgd,lr=0.05,max_grad_norm=0.0,{NO_XLA}"),
    ("ppo_sgd", "ppo_tiny", f"optimizer=sgd,lr=0.05,max_grad_norm=0.0,{NO_XLA}"),
    # PPO's target_kl stop: the KL check is one replicated forward pass of the whole minibatch.
    ("ppo_target_kl_sgd", "ppo_tiny",
     f"optimizer=sgd,lr=0.5,max_grad_norm=0.0,target_kl=1e-4,{NO_XLA}"),
    # REINFORCE without a baseline masks out unfinished episodes: masked means over replicas.
    ("reinforce_masked_sgd", "reinforce_tiny", f"optimizer=sgd,lr=0.05,max_grad_norm=0.0,{NO_XLA}"),
    # TD3: two optimizers (critics, then the actor every policy_delay steps) and target smoothing
    # noise from the generator; policy_delay 1 and 2 so that both branches are taken.
    ("td3_sgd", "td3_tiny", f"optimizer=sgd,lr=0.05,max_grad_norm=0.0,policy_delay=2,{NO_XLA}"),
    ("ddpg_adam_clip", "ddpg_tiny", f"max_grad_norm=0.05,{NO_XLA}"),
    # SAC: three optimizers (critics, actor, temperature), reparameterization noise drawn outside.
    ("sac_sgd", "sac_tiny", f"optimizer=sgd,lr=0.05,max_grad_norm=0.0,{NO_XLA}"),
    # DRQN: sequences of items split across replicas; masked mean over learning steps whose
    # count differs between the two halves; prioritized replay, n-step, target syncs.
    ("drqn_sgd", "drqn_tiny", "optimizer=sgd,lr=0.05,max_grad_norm=0.0"),
    ("drqn_adam_clip_xla", "drqn_tiny", "max_grad_norm=0.05,jit_compile=True"),
    # Recurrent PPO: minibatches of whole sequences (LSTM, in-sequence resets, obs and reward
    # normalization), split along sequences.
    ("ppo_recurrent_sgd", "ppo_recurrent_tiny",
     f"optimizer=sgd,lr=0.05,max_grad_norm=0.0,{NO_XLA}"),
    # IMPALA: whole unrolls per minibatch; advantages normalized over the whole minibatch.
    ("impala_sgd", "impala_tiny",
     f"optimizer=sgd,lr=0.05,max_grad_norm=0.0,normalize_advantage=True,{NO_XLA}"),
    # Off-PAC: replayed segments; advantages normalized over the whole batch. No random numbers
    # in its learner, so also with XLA: the one device's whole learner against the replicas on
    # TF's kernels (a loss with a collective inside is not compiled per replica).
    ("offpac_sgd", "offpac_tiny",
     f"optimizer=sgd,lr=0.05,max_grad_norm=0.0,normalize_advantage=True,{NO_XLA}"),
    ("offpac_adam_clip_xla", "offpac_tiny",
     "max_grad_norm=0.05,normalize_advantage=True,jit_compile=True"),
    # MADDPG: critics' and actors' optimizers, 2 agents' joint actions.
    ("maddpg_sgd", "maddpg_tiny", f"optimizer=sgd,lr=0.05,max_grad_norm=0.0,{NO_XLA}"),
    ("maddpg_adam_clip", "maddpg_tiny", f"max_grad_norm=0.05,{NO_XLA}"),
]  # fmt: skip


def dqn_batch(hp, spec, rng: np.random.Generator) -> dict[str, np.ndarray]:
    k, b = hp.gradient_steps, hp.batch_size
    obs_shape = [k, b, *spec.obs_shape]
    return {
        "obs": rng.normal(size=obs_shape).astype(np.float32),
        "action": (
            rng.integers(0, spec.num_actions, size=[k, b]).astype(np.int64)
            if spec.discrete
            else rng.uniform(spec.action_low, spec.action_high, [k, b, *spec.action_shape])
        ).astype(np.int64 if spec.discrete else np.float32),
        "reward": rng.normal(size=[k, b]).astype(np.float32),
        "next_obs": rng.normal(size=obs_shape).astype(np.float32),
        "discount": (0.99 * (rng.random([k, b]) > 0.2)).astype(np.float32),
        "weights": rng.uniform(0.3, 1.0, size=[k, b]).astype(np.float32),
    }


def rollout_batch(agent, spec, rng: np.random.Generator) -> dict[str, np.ndarray]:
    t, n = agent.steps_per_iteration, spec.num_envs
    obs_shape = [t, n, *spec.obs_shape]
    # Episode ends only in env 0, early: env 1's samples are all unfinished, so REINFORCE's
    # mask differs between the two halves of a minibatch.
    terminated = np.zeros([t, n], bool)
    terminated[[3, t // 4], 0] = True
    truncated = np.zeros([t, n], bool)
    truncated[t // 3, 0] = True
    return {
        "obs": rng.normal(size=obs_shape).astype(np.float32),
        "action": rng.integers(0, spec.num_actions, size=[t, n]).astype(np.int64),
        "reward": rng.normal(size=[t, n]).astype(np.float32),
        "terminated": terminated,
        "truncated": truncated,
        "log_prob": np.zeros([t, n], np.float32),
        "value": np.zeros([t, n], np.float32),
        "final_obs": rng.normal(size=obs_shape).astype(np.float32),
        "last_next_obs": rng.normal(size=[n, *spec.obs_shape]).astype(np.float32),
    }


def drqn_batch(hp, agent, spec, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """K batches of B replayed items of burn_in + sequence_length steps. Each item's burn-in and
    number of learning steps are random, so the two replicas' halves hold different numbers of
    learning steps (the masked mean's weights differ)."""
    k, b = hp.gradient_steps, hp.batch_size
    steps = hp.burn_in + hp.sequence_length
    burn_in = rng.integers(0, hp.burn_in + 1, size=[k, b]).astype(np.int32)
    length = rng.integers(1, hp.sequence_length + 1, size=[k, b])
    t = np.arange(steps)
    mask = (t >= burn_in[..., None]) & (t < (burn_in + length)[..., None])
    discount = np.full([k, b, steps], hp.gamma, np.float32)
    discount[rng.random([k, b, steps]) < 0.1] = 0.0
    return {
        "obs": rng.normal(size=[k, b, steps + 1, *spec.obs_shape]).astype(np.float32),
        "action": rng.integers(0, spec.num_actions, size=[k, b, steps]).astype(np.int64),
        "reward": rng.normal(size=[k, b, steps]).astype(np.float32),
        "discount": discount,
        "mask": mask.astype(np.float32),
        "burn_in": burn_in,
        "state": rng.normal(scale=0.5, size=[k, b, agent.state_size]).astype(np.float32),
        "weights": rng.uniform(0.3, 1.0, size=[k, b]).astype(np.float32),
    }


def segment_batch(hp, spec, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Off-PAC's K x B replayed segments of T steps ([K, B, T, ...])."""
    k, b, t = hp.gradient_steps, hp.batch_size, hp.train_every // hp.num_envs
    obs_shape = [k, b, t, *spec.obs_shape]
    return {
        "obs": rng.normal(size=obs_shape).astype(np.float32),
        "action": rng.integers(0, spec.num_actions, size=[k, b, t]).astype(np.int64),
        "reward": rng.normal(size=[k, b, t]).astype(np.float32),
        "terminated": rng.random([k, b, t]) < 0.1,
        "truncated": rng.random([k, b, t]) < 0.05,
        "final_obs": rng.normal(size=obs_shape).astype(np.float32),
        "log_prob": np.log(rng.uniform(0.2, 0.8, size=[k, b, t])).astype(np.float32),
        "last_next_obs": rng.normal(size=[k, b, *spec.obs_shape]).astype(np.float32),
    }


def learner_batch(hp, agent, spec, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """A batch for the agent's `train_on_batch`, with the keys of its input signature."""
    if hp.agent in ("dqn", "c51", "td3", "ddpg", "sac", "maddpg"):
        return dqn_batch(hp, spec, rng)
    if hp.agent == "drqn":
        return drqn_batch(hp, agent, spec, rng)
    if hp.agent == "offpac":
        return segment_batch(hp, spec, rng)
    batch = rollout_batch(agent, spec, rng)
    if hp.agent == "impala":  # the behaviour policy's log-probs: rho = pi / mu varies
        batch["log_prob"] = np.log(rng.uniform(0.2, 0.8, size=batch["reward"].shape))
        batch["log_prob"] = batch["log_prob"].astype(np.float32)
    if hp.agent == "ppo_recurrent":  # the acting-time state each step started from
        shape = [*batch["reward"].shape, agent.state_size]
        batch["state_in"] = rng.normal(scale=0.5, size=shape).astype(np.float32)
    keys = agent.train_on_batch.input_signature[0].keys()
    return {key: batch[key] for key in keys}


def variables(agent) -> dict[str, np.ndarray]:
    """Every checkpointed variable, by its checkpoint key (the primary replica's value)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = tf.train.Checkpoint(agent=agent).write(os.path.join(tmp, "ckpt"))
        reader = tf.train.load_checkpoint(path)
        return {
            key: reader.get_tensor(key)
            for key in reader.get_variable_to_shape_map()
            if key != "_CHECKPOINTABLE_OBJECT_GRAPH"
        }


def run_case(strategy, hparams_set: str, override: str, seed: int = 3) -> dict:
    hp = registry.get_hparams(hparams_set)()
    hp.override(override)
    hp.freeze()
    env, spec = make_vector_env(hp.env, hp.num_envs, 0)
    env.close()
    agent_class = registry.get_agent(hp.agent)
    seed_everything(seed, hp.deterministic)
    single = agent_class(spec, hp, seed)
    seed_everything(seed + 1, hp.deterministic)  # other initial weights: the restore matters
    with strategy.scope():
        mirrored = agent_class(spec, hp, seed + 1)
    with tempfile.TemporaryDirectory() as tmp:
        path = tf.train.Checkpoint(agent=single).write(os.path.join(tmp, "start"))
        tf.train.Checkpoint(agent=mirrored).read(path).assert_consumed()
    before = variables(single)
    rng = np.random.default_rng(seed)
    batch = learner_batch(hp, single, spec, rng)
    out_single = {k: v.numpy() for k, v in single.train_on_batch(batch).items()}
    out_mirrored = {k: v.numpy() for k, v in mirrored.train_on_batch(batch).items()}
    after_single, after_mirrored = variables(single), variables(mirrored)
    kernel = mirrored.learner_variables()[0]
    replicas = [v.numpy() for v in kernel.value.values]
    return {
        "outputs": {
            key: {
                "single": out_single[key].tolist(),
                "max_abs_diff": float(np.max(np.abs(out_single[key] - out_mirrored[key]))),
            }
            for key in out_single
        },
        "variable_keys_equal": sorted(after_single) == sorted(after_mirrored),
        "variables_max_abs_diff": {
            key: float(np.max(np.abs(after_single[key] - after_mirrored[key]), initial=0.0))
            for key in after_single
            if after_single[key].dtype.kind == "f"
        },
        "variables_changed": {
            key: float(np.max(np.abs(after_single[key] - before[key]), initial=0.0))
            for key in after_single
            if after_single[key].dtype.kind == "f"
        },
        "int_variables_equal": all(
            np.array_equal(after_single[key], after_mirrored[key])
            for key in after_single
            if after_single[key].dtype.kind != "f"
        ),
        "gradient_steps": [
            int(single.learner.gradient_steps.numpy()),
            int(mirrored.learner.gradient_steps.numpy()),
        ],
        "replica_devices": [v.device for v in kernel.value.values],
        "replicas_equal": all(np.array_equal(replicas[0], r) for r in replicas[1:]),
    }


def masked_mean_by_hand(strategy) -> dict:
    """`replicated_minimize` on loss = sum(m (x.w - y)^2) / sum(m) with SGD, where replica 0 gets
    rows 0-1 (mask sum 2) and replica 1 rows 2-3 (mask sum 1), against numpy by hand. The
    residuals x.w0 - y are -1, 1.5, -3, -4.5, so the loss is (1 + 2.25 + 9) / 3 = 4.083; averaging
    the two replicas' masked means instead would give ((1 + 2.25) / 2 + 9) / 2 = 5.3125."""
    from rl.distribute import replicated_minimize

    x = np.array([[1.0, 2.0], [0.5, -1.0], [2.0, 0.0], [-1.0, 1.0]], np.float32)
    y = np.array([2.0, -2.0, 3.0, 5.0], np.float32)
    mask = np.array([1.0, 1.0, 1.0, 0.0], np.float32)
    w0 = np.array([0.0, 0.5], np.float32)
    lr = 0.1
    with strategy.scope():
        w = tf.Variable(w0)
        optimizer = tf.keras.optimizers.SGD(learning_rate=lr)
        optimizer.build([w])

    def loss_fn(batch):
        residual = tf.linalg.matvec(batch["x"], w) - batch["y"]
        weighted = tf.reduce_sum(batch["mask"] * tf.square(residual))
        loss = weighted / tf.maximum(tf.reduce_sum(batch["mask"]), 1.0)
        return loss, {"residual": residual, "max_residual": tf.reduce_max(residual)}

    @tf.function
    def step(batch):
        return replicated_minimize(
            strategy, optimizer, loss_fn, [w], batch, 0.0, lambda b: tf.reduce_sum(b["mask"])
        )

    loss, grad_norm, aux = step({"x": x, "y": y, "mask": mask})
    residual = x @ w0 - y
    expected_loss = float(np.sum(mask * residual**2) / mask.sum())
    grad = 2.0 * (mask * residual) @ x / mask.sum()
    return {
        "loss": [float(loss), expected_loss],
        "grad_norm": [float(grad_norm), float(np.linalg.norm(grad))],
        "weights": [w.numpy().tolist(), (w0 - lr * grad).tolist()],
        "residual": [aux["residual"].numpy().tolist(), residual.tolist()],
    }


class CountingReductions(tf.distribute.ReductionToOneDevice):
    """The cross-device ops of a MirroredStrategy that records each reduction the strategy asks
    for (one `reduce` or `batch_reduce` call: one collective, however many tensors it carries)."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, int]] = []

    def reduce(self, reduce_op, per_replica_value, destinations, options=None):
        self.calls.append(("reduce", 1))
        return super().reduce(reduce_op, per_replica_value, destinations, options)

    def batch_reduce(self, reduce_op, value_destination_pairs, options=None):
        self.calls.append(("batch_reduce", len(value_destination_pairs)))
        return super().batch_reduce(reduce_op, value_destination_pairs, options)


def collectives_per_step() -> dict:
    """The reductions one `replicated_minimize` step (3 variables, clipping on) asks the
    strategy for, counted while the step is traced: [(kind, tensors carried), ...]."""
    from rl.distribute import replicated_minimize

    counting = CountingReductions()
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"], cross_device_ops=counting)
    with strategy.scope():
        w = tf.Variable(tf.zeros([2]))
        b = tf.Variable(0.0)
        c = tf.Variable(1.0)
        optimizer = tf.keras.optimizers.Adam(learning_rate=0.1)
        optimizer.build([w, b, c])

    def loss_fn(batch):
        residual = tf.linalg.matvec(batch["x"], w) + b * c - batch["y"]
        return tf.reduce_mean(tf.square(residual)), {"residual": residual}

    @tf.function
    def step(batch):
        return replicated_minimize(
            strategy, optimizer, loss_fn, [w, b, c], batch, 0.5, lambda x: tf.shape(x["y"])[0]
        )

    batch = {"x": np.ones([4, 2], np.float32), "y": np.arange(4, dtype=np.float32)}
    step.get_concrete_function(batch)  # trace only
    traced = list(counting.calls)
    step(batch)  # and it runs
    return {"calls": traced, "weights_moved": bool(np.any(w.numpy() != 0.0))}


def main() -> None:
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    # Case names to run, or `--shard I/N`: every N-th case from the I-th (N processes at once).
    names = ["masked_mean_by_hand", "collectives_per_step", *(name for name, _, _ in CASES)]
    if sys.argv[1:2] == ["--shard"]:
        index, count = map(int, sys.argv[2].split("/"))
        names = names[index::count]
    elif sys.argv[1:]:
        names = sys.argv[1:]
    results = {"num_replicas_in_sync": strategy.num_replicas_in_sync}
    if "masked_mean_by_hand" in names:
        results["masked_mean_by_hand"] = masked_mean_by_hand(strategy)
    if "collectives_per_step" in names:
        results["collectives_per_step"] = collectives_per_step()
    for name, hparams_set, override in CASES:
        if name in names:
            results[name] = run_case(strategy, hparams_set, override)
    print("RESULT " + json.dumps(results))


if __name__ == "__main__":
    main()
