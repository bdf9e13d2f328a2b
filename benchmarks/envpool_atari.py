#!/usr/bin/env python3
"""envpool's Atari preprocessing against ours, frame by frame (issue 16's envpool evaluation).

Runs in a venv that has envpool beside our pins (docs/benchmarks.md, "envpool"):

    python3 -m venv /tmp/envpool-venv
    /tmp/envpool-venv/bin/pip install -r requirements.txt envpool==1.2.5
    /tmp/envpool-venv/bin/python benchmarks/envpool_atari.py

Both sides are set up so that nothing random is left on the preprocessing side: no sticky
actions, no no-op starts, no FIRE reset, no episodic life, raw rewards. For each seed it
compares the 4-frame observation after reset, then steps both with one random action sequence
and reports how many of the newest frames are identical, where the first differing frame is,
and the largest pixel difference. The frame pipeline (max over the last two frames, grayscale,
84x84 area resize, stacking) is the same if the reset observations agree; the steps agree only
while the emulators play the same game.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import envpool  # noqa: E402

from rl.envs.atari import make_atari  # noqa: E402

STEPS = 200


def compare(seed: int) -> str:
    pool = envpool.make(
        "Breakout-v5",
        env_type="gymnasium",
        num_envs=1,
        seed=seed,
        noop_max=1,  # envpool draws no-ops from [0, noop_max): 1 = none
        repeat_action_probability=0.0,
        use_fire_reset=False,
        episodic_life=False,
        reward_clip=False,
    )
    ours = make_atari(
        "ALE/Breakout-v5",
        repeat_action_probability=0.0,
        noop_max=0,
        fire_reset=False,
        clip_rewards=False,
    )
    pool_obs, _ = pool.reset()
    our_obs, _ = ours.reset(seed=seed)
    reset_equal = np.array_equal(pool_obs[0], np.moveaxis(our_obs, -1, 0))
    actions = np.random.default_rng(seed).integers(4, size=STEPS)
    identical, first_diff, max_diff = 0, None, 0
    for t, action in enumerate(actions):
        pool_obs, _, pool_term, _, _ = pool.step(np.array([action]))
        our_obs, _, our_term, _, _ = ours.step(int(action))
        diff = np.abs(pool_obs[0][-1].astype(int) - our_obs[..., -1].astype(int))
        identical += int(diff.max() == 0)
        max_diff = max(max_diff, int(diff.max()))
        if diff.max() and first_diff is None:
            first_diff = t
        if pool_term[0] or our_term:
            break
    pool.close()
    ours.close()
    return (
        f"seed {seed}: reset observation identical: {reset_equal}; newest frame identical in "
        f"{identical}/{t + 1} steps, first difference at step {first_diff}, largest pixel "
        f"difference {max_diff}"
    )


def main() -> None:
    print(f"envpool {envpool.__version__}, Breakout, {STEPS} random actions")
    for seed in range(3):
        print(compare(seed))


if __name__ == "__main__":
    main()
