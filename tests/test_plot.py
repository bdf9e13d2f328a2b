"""rl.plot: learning curves across copies; every number checked against hand arithmetic."""

from __future__ import annotations

import json

import imageio.v3 as iio
import numpy as np
import pytest
import tensorflow as tf

from rl import plot
from rl.utils.logger import CSVSink

HEADER = ",".join(CSVSink.COLUMNS)


def write_progress(run_dir, rows: list[tuple[int, float]], train: str = "1.0") -> None:
    """A progress.csv with the real columns; rows are (env_steps, eval_return_mean)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    lines = [HEADER] + [f"{s},1.00,{r:.4f},0.0000,10.00,10,{train}" for s, r in rows]
    (run_dir / "progress.csv").write_text("\n".join(lines) + "\n")


@pytest.fixture
def three_copies(tmp_path):
    """Final returns 100, 200, 600; run_1 evaluates at other steps than run_0 and run_2."""
    out = tmp_path / "runs"
    write_progress(out / "run_0", [(1000, 10), (2000, 50), (3000, 100)])
    write_progress(out / "run_1", [(1000, 20), (2500, 100), (3000, 200)])
    write_progress(out / "run_2", [(1000, 30), (2000, 300), (3000, 600)])
    return out


def test_interquartile_mean_by_hand():
    # n divisible by 4: drop the lowest and highest quarter (rliable / trim_mean(x, 0.25)).
    assert plot.interquartile_mean([1000, 10, 30, 20]) == pytest.approx((20 + 30) / 2)
    assert plot.interquartile_mean([1, 2, 3, 4, 5, 6, 7, 100]) == pytest.approx(4.5)
    # n=3: quantile intervals [0,1/3], [1/3,2/3], [2/3,1] overlap [1/4,3/4] by 1/12, 1/3, 1/12;
    # /0.5 -> weights 1/6, 2/3, 1/6: 100/6 + 200*2/3 + 600/6 = 250.
    assert plot.interquartile_mean([600, 100, 200]) == pytest.approx(250.0)
    # n=5: overlaps 0, .15, .2, .15, 0 -> weights .3, .4, .3: .3*2 + .4*3 + .3*4 = 3.
    assert plot.interquartile_mean([1, 2, 3, 4, 100]) == pytest.approx(3.0)
    assert plot.interquartile_mean([7.0]) == pytest.approx(7.0)


def test_bootstrap_ci_three_values_is_their_range():
    # Resampling 3 copies, "all three the lowest" has probability 1/27 = 3.7% > 2.5%, so the
    # 2.5th percentile of the resampled means is 100; likewise the 97.5th is 600.
    low, high = plot.bootstrap_mean_ci(np.array([100.0, 200.0, 600.0]), resamples=2000, seed=0)
    assert (float(low), float(high)) == (100.0, 600.0)
    again = plot.bootstrap_mean_ci(np.array([100.0, 200.0, 600.0]), resamples=2000, seed=0)
    assert (float(again[0]), float(again[1])) == (100.0, 600.0)  # fixed seed: reproducible


def test_three_copies_curve_summary_and_png(three_copies, capsys):
    assert plot.main([str(three_copies)]) == 0
    printed = capsys.readouterr().out
    assert "300.00" in printed and "250.00" in printed and "[100.00, 600.00]" in printed
    for name, final in (("run_0", "100.00"), ("run_1", "200.00"), ("run_2", "600.00")):
        assert any(line.startswith(name) and line.endswith(final) for line in printed.splitlines())

    result = plot.plot_runs(str(three_copies))
    s = result.summary
    assert (s.n, s.mean, s.iqm) == (3, pytest.approx(300.0), pytest.approx(250.0))
    assert (s.ci_low, s.ci_high) == (100.0, 600.0)
    # Grid: every eval step of any copy -> 1000, 2000, 2500, 3000.
    np.testing.assert_array_equal(result.grid, [1000, 2000, 2500, 3000])
    # run_1 at 2000: 20 + (100 - 20) * 1000/1500 = 73.33; run_0 at 2500: (50 + 100)/2 = 75;
    # run_2 at 2500: (300 + 600)/2 = 450.
    expected_mean = [
        (10 + 20 + 30) / 3,
        (50 + 20 + 80 * 1000 / 1500 + 300) / 3,
        (75 + 100 + 450) / 3,
        (100 + 200 + 600) / 3,
    ]
    np.testing.assert_allclose(result.mean, expected_mean)
    assert np.all(result.band_low <= result.mean) and np.all(result.mean <= result.band_high)
    assert np.all(result.band_low < result.band_high)  # the copies differ at every step

    png_path = three_copies / "learning_curve.png"
    assert result.png_path == f"{three_copies}/learning_curve.png" and png_path.exists()
    assert png_path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    image = iio.imread(png_path)
    assert image.shape[:2] == (500, 800) and image.shape[2] in (3, 4)
    assert image[..., :3].std() > 10  # not a blank canvas


def test_four_copies_iqm_and_other_metric(tmp_path, capsys):
    out = tmp_path / "runs"
    for i, final in enumerate([10, 1000, 20, 30]):
        write_progress(out / f"run_{i}", [(500, 0.0), (1000, final)], train=str(final / 10))
    png = tmp_path / "elsewhere" / "curve.png"
    assert plot.main([str(out), "--out", str(png)]) == 0
    printed = capsys.readouterr().out
    # mean (10+20+30+1000)/4 = 265; IQM drops 10 and 1000: (20+30)/2 = 25.
    lines = printed.splitlines()
    header = next(k for k, line in enumerate(lines) if line.split()[:3] == ["n", "mean", "IQM"])
    n, mean, iqm = lines[header + 1].split()[:3]
    assert (int(n), float(mean), float(iqm)) == (4, 265.0, 25.0)
    assert png.exists() and not (out / "learning_curve.png").exists()

    result = plot.plot_runs(str(out), str(png), metric="train_return_mean")
    assert result.summary.mean == pytest.approx(26.5) and result.summary.iqm == pytest.approx(2.5)


def test_copies_sorted_by_index_and_shortest_copy_ends_the_mean(tmp_path, capsys):
    out = tmp_path / "runs"
    for i in (10, 2):
        write_progress(out / f"run_{i}", [(100, 1.0), (200, 2.0), (300 if i == 2 else 200, 3.0)])
    result = plot.plot_runs(str(out))
    assert [c.name for c in result.curves] == ["run_2", "run_10"]
    np.testing.assert_array_equal(result.grid, [100, 200])  # run_10 stops at 200
    assert plot.main([str(out)]) == 0
    assert "the curve's mean stops at 200" in capsys.readouterr().out


def test_empty_train_return_cells_are_skipped(tmp_path):
    out = tmp_path / "runs"
    write_progress(out / "run_0", [(100, 1.0), (200, 2.0)], train="")
    (out / "run_0" / "progress.csv").write_text(
        HEADER + "\n100,1.0,1.0,0,1,1,\n200,2.0,2.0,0,1,1,5.0\n300,3.0,3.0,0,1,1,7.0\n"
    )
    curve = plot.read_curve(str(out / "run_0" / "progress.csv"), "train_return_mean")
    np.testing.assert_array_equal(curve.steps, [200, 300])
    np.testing.assert_array_equal(curve.values, [5.0, 7.0])


def test_title_names_the_hparams_set_and_env(three_copies):
    (three_copies / "run_0" / "manifest.json").write_text(json.dumps({"hparams_set": "dqn_x"}))
    hparams = {"hparams": {"env": {"type": "str", "value": "CartPole-v1", "doc": ""}}}
    (three_copies / "run_0" / "hparams.json").write_text(json.dumps(hparams))
    assert plot.experiment_title(str(three_copies)) == "dqn_x · CartPole-v1"
    (three_copies / "run_0" / "manifest.json").write_text("{}")
    assert plot.experiment_title(str(three_copies)) == "runs"


def test_reads_and_writes_through_gfile():
    out = "ram://plot_test/runs"
    for i, final in enumerate([1.0, 3.0]):
        with tf.io.gfile.GFile(f"{out}/run_{i}/progress.csv", "w") as f:
            f.write(f"{HEADER}\n10,1,0,0,1,1,\n20,1,{final},0,1,1,\n")
    result = plot.plot_runs(out)
    assert result.summary.mean == pytest.approx(2.0)
    with tf.io.gfile.GFile(f"{out}/learning_curve.png", "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"


def _error_line(argv, capsys) -> str:
    assert plot.main(argv) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and captured.out == "", captured
    assert lines[0].startswith("rl.plot: error: ")
    return lines[0]


def test_error_no_progress_files(tmp_path, capsys):
    line = _error_line([str(tmp_path / "nothing")], capsys)
    assert "no run_*/progress.csv" in line


def test_error_single_run_dir_points_to_parent(three_copies, capsys):
    line = _error_line([str(three_copies / "run_0")], capsys)
    assert f"pass its parent, {three_copies}" in line


@pytest.mark.parametrize("content", ["", HEADER + "\n"])
def test_error_empty_csv(tmp_path, capsys, content):
    (tmp_path / "run_0").mkdir()
    (tmp_path / "run_0" / "progress.csv").write_text(content)
    assert "is empty" in _error_line([str(tmp_path)], capsys)
    assert not (tmp_path / "learning_curve.png").exists()


def test_error_unknown_metric_suggests_close_name(three_copies, capsys):
    line = _error_line([str(three_copies), "--metric", "eval_retrun_mean"], capsys)
    assert "no column 'eval_retrun_mean'" in line and "did you mean 'eval_return_mean'" in line
    assert not (three_copies / "learning_curve.png").exists()


def test_error_bad_number(tmp_path, capsys):
    (tmp_path / "run_0").mkdir()
    (tmp_path / "run_0" / "progress.csv").write_text(f"{HEADER}\n10,1,abc,0,1,1,\n")
    assert "line 2" in _error_line([str(tmp_path)], capsys)


def test_one_copy_has_a_zero_width_ci_and_one_common_step(tmp_path, capsys):
    out = tmp_path / "runs"
    write_progress(out / "run_0", [(100, 5.0), (200, 89.0)])
    result = plot.plot_runs(str(out))
    s = result.summary
    assert (s.n, s.mean, s.iqm, s.ci_low, s.ci_high) == (1, 89.0, 89.0, 89.0, 89.0)
    np.testing.assert_array_equal(result.band_low, result.mean)
    # Two copies that share only step 200: the curve is one point, drawn as an error bar.
    write_progress(out / "run_1", [(200, 11.0), (300, 20.0)])
    result = plot.plot_runs(str(out))
    np.testing.assert_array_equal(result.grid, [200])
    np.testing.assert_allclose(result.mean, [50.0])
    assert iio.imread(result.png_path).shape[:2] == (500, 800)


def test_the_best_evaluation_is_the_first_highest(tmp_path):
    write_progress(tmp_path / "run_0", [(1000, 10), (2000, 80), (3000, 80), (4000, 5)])
    curve = plot.read_curve(str(tmp_path / "run_0" / "progress.csv"), "eval_return_mean")
    assert curve.best() == (2000.0, 80.0)  # ties keep the earlier, as checkpoints/best/ does
