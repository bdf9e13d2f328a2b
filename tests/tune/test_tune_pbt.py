"""`python -m rl.tune --population N --pbt` (`rl.tune.pbt`): explore stays inside the space, the
bottom quantile copies the top, the lineage is recorded (lineage.json, TensorBoard) and the
winner's ancestry is published as `piecewise` schedules that a fresh run trains with."""

from __future__ import annotations

import csv
import json
import math

import numpy as np
import pytest
import tensorflow as tf

from rl import loop, registry
from rl.hparams.override_parser import override_text
from rl.hparams.schedules import as_schedule
from rl.tune import cli
from rl.tune.pbt import (
    Lineage,
    PBTConfig,
    Rounds,
    exploit_choices,
    initial_values,
    perturb,
)
from rl.tune.search_space import Param, SearchSpace

LR = Param("lr", "float", 1e-4, 3e-3, log=True)
VF = Param("vf_coef", "float", 0.2, 1.0)
CLIP = Param("clip_range", "categorical", choices=(0.1, 0.2, 0.3))
EPOCHS = Param("n_epochs", "int", 2, 9)


@pytest.mark.parametrize("param", [LR, VF, CLIP, EPOCHS], ids=lambda p: p.key)
def test_explore_stays_inside_the_space(param):
    rng = np.random.default_rng(0)
    value = param.low if param.kind != "categorical" else param.choices[0]
    seen = set()
    for _ in range(500):
        value = perturb(param, value, rng, resample=0.25)
        seen.add(value)
        if param.kind == "categorical":
            assert value in param.choices
        else:
            assert param.low <= value <= param.high and type(value) is type(param.low)
    assert len(seen) > 2  # it moves


def test_explore_multiplies_by_0_8_or_1_25_without_resampling():
    rng = np.random.default_rng(1)
    steps = sorted({perturb(LR, 1e-3, rng, resample=0.0) for _ in range(50)})
    assert steps == pytest.approx([8e-4, 1.25e-3], rel=1e-12)
    at_high = sorted({perturb(LR, 3e-3, np.random.default_rng(s), 0.0) for s in range(20)})
    assert at_high == pytest.approx([2.4e-3, 3e-3], rel=1e-12) and at_high[1] == 3e-3  # clipped
    neighbours = {perturb(CLIP, 0.2, np.random.default_rng(s), 0.0) for s in range(20)}
    assert neighbours == {0.1, 0.3}


def test_initial_values_differ_in_every_key_and_repeat_with_the_seed():
    space = SearchSpace("s", "", (LR, CLIP))
    members = initial_values(space, 4, seed=3)
    assert len({m["lr"] for m in members}) == 4 and len({m["clip_range"] for m in members}) == 3
    assert members == initial_values(space, 4, seed=3) != initial_values(space, 4, seed=4)


def test_the_bottom_quantile_copies_the_top_quantile():
    scores = [5.0, 1.0, 9.0, float("nan"), 7.0, 3.0, 8.0, 2.0]
    choices = exploit_choices(scores, 0.25, np.random.default_rng(0))  # 2 of 8
    assert sorted(choices) == [1, 3]  # NaN and 1.0
    assert set(choices.values()) <= {2, 6}  # 9.0 and 8.0
    assert exploit_choices([1.0, 2.0, 3.0, 4.0], 0.25, np.random.default_rng(0)) == {0: 3}


def test_a_member_that_stopped_training_is_outside_the_ranking():
    # None: diverged or stopped early. Of the 3 live members, 0 copies 3; 1 neither copies
    # (a copy spent on it would train nothing) nor donates.
    for seed in range(10):
        assert exploit_choices([1.0, None, 3.0, 4.0], 0.25, np.random.default_rng(seed)) == {0: 3}
        assert exploit_choices([1.0, 9.0, None, None], 0.5, np.random.default_rng(seed)) == {0: 1}
    assert exploit_choices([None, None, 5.0, None], 0.5, np.random.default_rng(0)) == {}


def _entry(step, gradient_step, copied_from, lr):
    return {"step": step, "gradient_step": gradient_step, "copied_from": copied_from,
            "hparams": {"lr": lr, "vf_coef": 0.5}, "score": None}  # fmt: skip


def test_the_winners_schedule_follows_its_ancestry():
    """Member 0 copied member 2 at step 200, which had copied member 1 at step 100: its weights
    trained with 1's lr, then 2's, then its own."""
    lineage = Lineage(
        "unused",
        [
            [_entry(0, 0, None, 1e-3), _entry(200, 20, 2, 4e-4)],
            [_entry(0, 0, None, 2e-3)],
            [_entry(0, 0, None, 3e-3), _entry(100, 10, 1, 5e-4), _entry(300, 30, 0, 6e-4)],
        ],
    )
    assert [e["hparams"]["lr"] for e in lineage.ancestry(0)] == [2e-3, 5e-4, 4e-4]
    assert lineage.schedules(0) == {"lr": "piecewise([10, 20], [0.002, 0.0005, 0.0004])",
                                    "vf_coef": 0.5}  # fmt: skip
    assert lineage.schedules(1) == {"lr": 2e-3, "vf_coef": 0.5}
    # The set takes it as override text (train.py --winner's path), and replays the lineage.
    hp = registry.get_hparams("ppo_tf_tiny")()
    hp.override(override_text(lineage.schedules(0)))
    lr = as_schedule(hp.lr)
    at = [float(lr(tf.constant(step, tf.int64))) for step in (0, 9, 10, 19, 20, 1000)]
    assert at == pytest.approx([2e-3, 2e-3, 5e-4, 5e-4, 4e-4, 4e-4], rel=1e-6)


def _pbt_scalars(run_dir) -> dict[str, list[tuple[int, float]]]:
    points: dict[str, list[tuple[int, float]]] = {}
    for path in sorted((run_dir / "pbt").glob("events.out.tfevents.*")):
        for event in tf.compat.v1.train.summary_iterator(str(path)):
            for value in event.summary.value:
                scalar = float(tf.make_ndarray(value.tensor))
                points.setdefault(value.tag, []).append((int(event.step), scalar))
    return points


def _evaluations(run_dir) -> dict[int, float]:
    with open(run_dir / "progress.csv") as f:
        return {int(r["env_steps"]): float(r["eval_return_mean"]) for r in csv.DictReader(f)}


def test_a_round_records_who_copied_whom_in_the_lineage_and_tensorboard(tmp_path):
    space = SearchSpace("s", "", (LR, CLIP))
    initial = initial_values(space, 4, seed=0)
    runs = [tmp_path / f"member_{m}" for m in range(4)]
    rounds = Rounds(space, PBTConfig(128, 0.25, 0.0, 0), Lineage.open(
        str(tmp_path / "lineage.json"), initial, 0), [str(r) for r in runs])  # fmt: skip
    assert rounds.due(128, 512) and not rounds.due(64, 512) and not rounds.due(512, 512)
    source = rounds.decide(128, 8, [3.0, 1.0, 9.0, 5.0])
    assert source == [0, 2, 2, 3] and not rounds.due(192, 512) and rounds.due(256, 512)
    members = json.loads((tmp_path / "lineage.json").read_text())["members"]
    assert [len(entries) for entries in members] == [1, 2, 1, 1]
    entry = members[1][1]
    assert (entry["step"], entry["gradient_step"], entry["copied_from"]) == (128, 8, 2)
    assert entry["score"] == 1.0
    donor_lr, lr = initial[2]["lr"], entry["hparams"]["lr"]  # x0.8 or x1.25 within the range
    assert lr in (pytest.approx(donor_lr * 0.8), pytest.approx(min(donor_lr * 1.25, 3e-3)))
    moved = CLIP.choices.index(entry["hparams"]["clip_range"])
    assert abs(moved - CLIP.choices.index(initial[2]["clip_range"])) <= 1  # a neighbour (or edge)
    assert rounds.values()["lr"][1] == entry["hparams"]["lr"]
    scalars = _pbt_scalars(runs[1])
    assert scalars["pbt/lr"] == [(128, pytest.approx(entry["hparams"]["lr"], rel=1e-6))]
    assert scalars["pbt/copied_from"] == [(128, 2.0)]
    assert _pbt_scalars(runs[0])["pbt/copied_from"] == [(128, 0.0)]


# Trains 4 members to 384 env steps and the winner's replay: ~30 s on 2 busy cores.
@pytest.mark.slow
def test_a_pbt_study_records_its_lineage_and_publishes_a_replayable_winner(capsys, tmp_path):
    out = tmp_path / "pbt"
    argv = ["--hparams", "ppo_tf_tiny", "--space", "ppo", "--keys", "lr,ent_coef"]
    argv += ["--population", "4", "--pbt", "--pbt_interval", "128", "--train_steps", "384"]
    argv += ["--last_k", "1", "--fresh_seeds", "1", "--output_dir", str(out)]
    assert cli.main(argv) == 0
    assert capsys.readouterr().err == ""
    lineage = json.loads((out / "lineage.json").read_text())
    members = lineage["members"]
    runs = [out / "members" / f"member_{m}" for m in range(4)]
    evaluations = [_evaluations(run) for run in runs]
    for step in (128, 256):  # a round at each evaluation but the last (384)
        copies = [(m, e) for m, entries in enumerate(members) for e in entries if e["step"] == step]
        assert len(copies) == 1  # a quarter of 4
        (bottom, entry), scores = copies[0], [evaluations[m][step] for m in range(4)]
        assert scores[bottom] == min(scores) == entry["score"]
        assert scores[entry["copied_from"]] == max(scores)
        assert 1e-4 <= entry["hparams"]["lr"] <= 3e-3 and 1e-8 <= entry["hparams"]["ent_coef"]
        assert entry["gradient_step"] == step // 64 * 4  # 2 epochs x 2 minibatches a rollout
    for m, run in enumerate(runs):  # TensorBoard: each member's values at 0 and every round
        scalars = _pbt_scalars(run)
        hparams_at = {e["step"]: e["hparams"]["lr"] for e in members[m]}
        lr = dict(scalars["pbt/lr"])
        assert sorted(lr) == [0, 128, 256]
        for step, value in lr.items():
            latest = max(s for s in hparams_at if s <= step)
            assert value == pytest.approx(hparams_at[latest], rel=1e-6)
    winner = lineage["winner"]
    assert winner == int(np.argmax([e[384] for e in evaluations]))
    schedules = Lineage("", members).schedules(winner)
    published = json.loads((out / "winner.json").read_text())
    assert published["params"] == schedules and published["trial"] == winner
    # The replay: a fresh run of the set with the schedules, trained to the end.
    fresh = out / "fresh" / f"trial_{winner:04d}_seed_10000"
    saved = json.loads((fresh / "hparams.json").read_text())["hparams"]
    chain = Lineage("", members).ancestry(winner)
    lr = as_schedule(saved["lr"]["value"])
    for entry in chain:
        assert float(lr(tf.constant(entry["gradient_step"], tf.int64))) == pytest.approx(
            entry["hparams"]["lr"], rel=1e-6
        )
    assert max(_evaluations(fresh)) == 384


# Trains 4 members to 256 env steps: ~30 s on 2 busy cores (the ranking itself is checked above).
@pytest.mark.slow
def test_a_diverged_member_stops_alone_and_the_others_finish_the_schedule(
    capsys, monkeypatch, tmp_path
):
    """Member 1's loss turns non-finite in its first iteration (injected where the loop checks
    it, as `halt_on_nonfinite` stops a run): the round at 128 ranks the other three, the study
    ends (exit 0, nothing on stderr) and the winner is one of them; if all diverge, exit 3."""
    check = loop.check_finite_loss

    def member_1_diverges(run, metrics):
        check(run, {**metrics, "loss": math.nan} if run.run_dir.endswith("member_1") else metrics)

    monkeypatch.setattr(loop, "check_finite_loss", member_1_diverges)
    out = tmp_path / "pbt"
    argv = ["--hparams", "ppo_tf_tiny", "--space", "ppo", "--keys", "lr", "--population", "4"]
    argv += ["--pbt", "--pbt_interval", "128", "--train_steps", "256", "--last_k", "1"]
    assert cli.main([*argv, "--select", "False", "--output_dir", str(out)]) == 0
    stdout, stderr = capsys.readouterr()
    assert stderr == ""
    assert "member_1 diverged at 64 env steps (non-finite loss = nan)" in stdout
    assert "[tune] 1 PBT members diverged; the winner is among the others" in stdout
    lineage = json.loads((out / "lineage.json").read_text())
    copies = [(m, e) for m, entries in enumerate(lineage["members"]) for e in entries[1:]]
    assert len(copies) == 1  # a quarter of the 3 live members, at 128
    (bottom, entry), scores = (
        copies[0],
        [_evaluations(out / "members" / f"member_{m}") for m in (0, 2, 3)],
    )
    assert entry["step"] == 128 and 1 not in (bottom, entry["copied_from"])
    assert entry["score"] == min(s[128] for s in scores)
    assert lineage["winner"] in (0, 2, 3)
    assert not (out / "members" / "member_1" / "progress.csv").exists()  # never evaluated

    monkeypatch.setattr(loop, "check_finite_loss", lambda run, m: check(run, {"loss": math.nan}))
    assert cli.main([*argv, "--select", "False", "--output_dir", str(tmp_path / "all")]) == 3
    stderr = capsys.readouterr().err
    assert stderr.startswith("python -m rl.tune: ") and stderr.count("\n") == 1
    assert "member_3 diverged at 64 env steps" in stderr


def test_a_pbt_of_other_values_refuses_an_existing_lineage(capsys, tmp_path):
    out = tmp_path / "pbt"
    out.mkdir()
    lineage = {"members": [[_entry(0, 0, None, 1e-3)]] * 4, "winner": None}
    (out / "lineage.json").write_text(json.dumps(lineage))
    argv = ["--hparams", "ppo_tf_tiny", "--space", "ppo", "--keys", "lr"]
    argv += ["--population", "4", "--pbt", "--last_k", "1", "--output_dir", str(out)]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "is of another PBT" in err and err.count("\n") == 1
    assert sorted(p.name for p in out.iterdir()) == ["lineage.json"]
