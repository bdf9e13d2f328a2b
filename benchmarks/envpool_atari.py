#!/usr/bin/env python3
"""envpool's Atari preprocessing against ours, frame by frame.

Runs in a venv that has envpool beside our pins, .venv-envpool at the repo root (git ignores
it; docs/benchmarks.md, "Env stacks"):

    python3 -m venv .venv-envpool
    .venv-envpool/bin/pip install -r requirements.txt envpool==1.2.5
    .venv-envpool/bin/python -m benchmarks.envpool_atari

Both sides are set up so that nothing random is left: no sticky actions, no no-op starts, no
FIRE reset, no episodic life, raw rewards (with those off, Breakout plays the same game for
every seed on either side). Both are stepped with one random action sequence, and for each
step the newest 84x84 frame, the reward and the game-over flag are compared:

  make_atari          our stack as train.py builds it (rl/envs/atari.py, options as above);
  one NOOP frame      the same gymnasium wrappers over an ALE env that plays one NOOP frame
                      after each reset: envpool's reset plays one emulator frame more than
                      gymnasium's, and with it the two games agree.
"""

from __future__ import annotations

import os

import gymnasium as gym
import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import envpool  # noqa: E402

from rl.envs.atari import make_atari  # noqa: E402

STEPS = 300


class NoopFrameAfterReset(gym.Wrapper):
    """Plays one NOOP emulator frame after each reset (the frame envpool's reset adds)."""

    def reset(self, **kwargs):
        self.env.reset(**kwargs)
        obs, _, _, _, info = self.env.step(0)
        return obs, info


def one_noop_frame_stack() -> gym.Env:
    env = gym.make("ALE/Breakout-v5", frameskip=1, repeat_action_probability=0.0)
    env = gym.wrappers.AtariPreprocessing(
        NoopFrameAfterReset(env), noop_max=0, frame_skip=4, screen_size=84
    )
    return gym.wrappers.FrameStackObservation(env, 4)


def our_stack() -> gym.Env:
    return make_atari(
        "ALE/Breakout-v5",
        repeat_action_probability=0.0,
        noop_max=0,
        fire_reset=False,
        clip_rewards=False,
    )


def compare(name: str, ours: gym.Env, seed: int) -> str:
    pool = envpool.make(
        "Breakout-v5",
        env_type="gymnasium",
        num_envs=1,
        seed=seed,
        noop_max=1,  # envpool draws its no-ops below noop_max: none
        repeat_action_probability=0.0,
        use_fire_reset=False,
        episodic_life=False,
        reward_clip=False,
    )
    pool_obs, _ = pool.reset()
    our_obs, _ = ours.reset(seed=seed)
    newest = (lambda o: o[..., -1]) if our_obs.shape[-1] == 4 else (lambda o: o[-1])
    reset_equal = np.array_equal(pool_obs[0][-1], newest(our_obs))
    actions = np.random.default_rng(seed).integers(4, size=STEPS)
    same_frames = same_rewards = steps = 0
    first_diff, max_diff = None, 0
    for t, action in enumerate(actions):
        pool_obs, pool_reward, pool_term, _, _ = pool.step(np.array([action]))
        our_obs, our_reward, our_term, _, _ = ours.step(int(action))
        diff = np.abs(pool_obs[0][-1].astype(int) - newest(our_obs).astype(int)).max()
        steps += 1
        same_frames += int(diff == 0)
        same_rewards += int(float(pool_reward[0]) == float(our_reward))
        max_diff = max(max_diff, int(diff))
        if diff and first_diff is None:
            first_diff = t
        if pool_term[0] or our_term:
            if bool(pool_term[0]) != bool(our_term):
                first_diff = t if first_diff is None else first_diff
            break
    pool.close()
    ours.close()
    return (
        f"{name:<16} seed {seed}: reset frame equal {reset_equal}; newest frame identical in "
        f"{same_frames}/{steps} steps, rewards equal in {same_rewards}/{steps}, first "
        f"difference at step {first_diff}, largest pixel difference {max_diff}"
    )


def main() -> None:
    print(f"envpool {envpool.__version__} vs ours, Breakout, up to {STEPS} random actions")
    for seed in range(3):
        print(compare("make_atari", our_stack(), seed))
        print(compare("one NOOP frame", one_noop_frame_stack(), seed))


if __name__ == "__main__":
    main()
