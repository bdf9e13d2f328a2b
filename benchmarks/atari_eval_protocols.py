#!/usr/bin/env python3
"""One Atari checkpoint under several evaluation protocols, beside its own training games.

Why an Atari evaluation can score below the training games of the same policy: a greedy
(argmax) policy can stall a game (never pressing FIRE after a lost life, a paddle that
oscillates), which sampling or a little epsilon breaks. This plays `--games` full games of a
checkpoint of RUN_DIR (a train.py run dir of an Atari set) under each protocol, all
else as the set's evaluation (sticky actions, time limit), plus the training policy step itself
on the same games, and prints per protocol the raw score, the mean game length and how many
games ran into the time limit (stalls), then the training games' raw scores at the log points
up to the checkpoint (TensorBoard `raw_score_mean` in its train/ dir, over each log window).

    .venv/bin/python train.py --hparams ppo_breakout --output_dir runs/breakout
    .venv/bin/python -m benchmarks.atari_eval_protocols runs/breakout/run_0
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
# (name, epsilon, sample_actions); "training's acting": the exploring policy step that
# plays the training games (`Agent.act_with_info`), here on the evaluation's env and seeds.
PROTOCOLS = (
    ("greedy", 0.0, False),
    ("greedy, epsilon 0.001", 0.001, False),
    ("greedy, epsilon 0.05", 0.05, False),
    ("sampled", 0.0, True),
    ("training's acting", 0.0, None),
)


class TrainingActing:
    """`evaluate`'s view of an agent whose every action comes from its training policy step."""

    recurrent = False

    def __init__(self, agent) -> None:
        self.agent = agent

    def greedy_actions(self, obs: np.ndarray) -> np.ndarray:
        return self.agent.act_with_info(obs)[0].numpy()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--games", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1000, help="evaluation seed (every protocol)")
    parser.add_argument("--last", type=int, default=5, help="training log points shown")
    parser.add_argument("--checkpoint", default="latest", help="latest, best or an env step")
    parser.add_argument(
        "--protocols", default="all", help="comma-separated protocol names (default: all)"
    )
    args = parser.parse_args()
    import tensorflow as tf

    from rl.agents.build import build_agent
    from rl.evaluation import evaluate, make_eval_env
    from rl.utils.checkpoint_choice import select_checkpoint
    from rl.utils.run_dir import saved_hparams

    hparams = saved_hparams(str(args.run_dir))
    store, pointer = select_checkpoint(str(args.run_dir), args.checkpoint)
    limit = hparams.eval.max_episode_steps
    print(f"{hparams.env}, checkpoint at {pointer['step']:,} agent steps, {args.games} full games")
    print("\n| protocol | raw score | mean game length | games at the time limit |")
    print("|---|---|---|---|")
    chosen = [p for p in PROTOCOLS if args.protocols == "all" or p[0] in args.protocols.split(",")]
    if not chosen:
        parser.error(f"--protocols: choose from {', '.join(p[0] for p in PROTOCOLS)}")
    for name, epsilon, sample in chosen:
        env, spec = make_eval_env(hparams, args.games, args.seed)
        agent = build_agent(hparams, spec, 0)
        store.restore(tf.train.Checkpoint(agent=agent), pointer)
        player = agent if sample is not None else TrainingActing(agent)
        result = evaluate(
            player, env, args.seed, epsilon, full_games=True, sample_actions=bool(sample)
        )
        env.close()
        stalls = int(np.sum(result.lengths >= limit)) if limit else "-"
        print(
            f"| {name} | {result.return_mean:.1f} ± {result.return_std:.1f} | "
            f"{np.mean(result.lengths):,.0f} | {stalls} |",
            flush=True,
        )
    print("\nTraining games (raw score, mean of the games that ended by each log point):")
    points = [p for p in _train_scalars(args.run_dir, "raw_score_mean") if p[0] <= pointer["step"]]
    for step, score in points[-args.last :]:
        print(f"  {step:,} agent steps: {score:.2f}")


def _train_scalars(run_dir: Path, tag: str) -> list[tuple[int, float]]:
    """(env steps, value of `tag`) at every log point of train.py's TensorBoard train/ dir."""
    import tensorflow as tf

    tf.get_logger().setLevel("ERROR")  # summary_iterator's deprecation notice
    points = []
    for path in sorted((run_dir / "train").glob("events.out.tfevents.*")):
        for event in tf.compat.v1.train.summary_iterator(str(path)):
            for value in event.summary.value:
                if value.tag == tag:
                    points.append((int(event.step), float(tf.make_ndarray(value.tensor))))
    return sorted(points)


if __name__ == "__main__":
    main()
