"""Learning tests (`-m slow`) of action masking (docs/masking.md) and Dict observations
(docs/observations.md): seed 0, greedy evaluation of 20 episodes, training stops at the first
evaluation that reaches the threshold.

LegalMoves-v0: the best policy earns about 12.9 per episode, a uniformly random legal action 10,
a policy that plays illegal moves loses its episodes early; 12.0 needs the values read and the
mask kept. MiniGrid-Empty-8x8: 0.96 is the 11-step shortest path, 0.9 at most 29 steps;
DoorKey-5x5: 0.9 is key, door and goal within 27 of its 250 steps.
Measured on the shared 2-core dev machine (seeds 0, 1, 2 at the end of the budget): see each
comment; docs/masking.md and docs/observations.md have the commands.
"""

import pytest
from test_learning import train_and_read_state


@pytest.mark.slow
@pytest.mark.parametrize(
    ("hparams_set", "threshold", "budget"),
    [
        ("ppo_legal_moves", 12.0, 50_000),  # 12.9, 12.9, 12.7 (~15 s a seed)
        ("dqn_legal_moves", 12.0, 20_000),  # 12.8, 12.9, 12.5 (~50 s a seed)
        # gymnasium's Taxi-v4, the mask in info; the best policy earns about 8
        ("ppo_taxi", 7.0, 200_000),
        ("ppo_minigrid_empty8x8", 0.9, 100_000),  # 0.96 at 40,960 (seed 0), 20,480 (1, 2)
        # 0.96 at 30,720 (seeds 0, 1), 92,160 (2): campaign minigrid_doorkey's records
        ("ppo_minigrid_doorkey", 0.9, 100_000),
    ],
)
def test_seed0_reaches_the_threshold(tmp_path, hparams_set, threshold, budget):
    if hparams_set.startswith("ppo_minigrid"):
        pytest.importorskip("minigrid")
    state = train_and_read_state(
        tmp_path, hparams_set, 0, f"stop_at_eval_return={threshold},train_steps={budget}"
    )
    assert state["first_step_at_threshold"] is not None, state
    assert state["last_eval_return"] >= threshold
