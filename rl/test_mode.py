"""Test mode's report (`train.py --training False`): the chosen checkpoint's episodes, one line
each on the console and as TensorBoard `test/` scalars, then their mean. The engine plays them.
"""

from __future__ import annotations

from collections.abc import Callable

from rl.evaluation import EvalResult
from rl.utils.logger import TensorBoardSink
from rl.utils.run_dir import run_label
from rl.utils.seeding import derive_seed


def play_and_report(
    run_dir: str, seed: int, play: Callable[[int, TensorBoardSink], tuple[EvalResult, int]]
) -> EvalResult:
    """Test mode's report of `play(test_seed, tensorboard)`: TensorBoard `test/`, a table."""
    label = run_label(run_dir)
    tensorboard = TensorBoardSink(run_dir)
    result, step = play(derive_seed(seed, "test"), tensorboard)
    print(f"[{label}] checkpoint at {step:,} env steps")
    print(f"{'episode':>8} {'return':>10} {'length':>8}")
    for i, (ret, length) in enumerate(zip(result.returns, result.lengths, strict=True)):
        tensorboard.write({"test/episode_return": ret, "test/episode_length": length}, i)
        print(f"{i:>8} {ret:>10.2f} {length:>8}")
    tensorboard.close()
    print(
        f"[{label}] test return {result.return_mean:.2f} ± {result.return_std:.2f} "
        f"over {len(result.returns)} episodes"
    )
    return result
