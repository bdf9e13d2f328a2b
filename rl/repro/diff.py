"""`python -m rl.repro diff RUN_A RUN_B`: what differs between two runs (hparams, manifest facts,
where their eval curves part), on one screen.
"""

from __future__ import annotations

from typing import Any

from rl.repro.run_info import RunInfo, eval_curve, read_run
from rl.utils.run_dir import open_one_level

MAX_LINES = 8  # per section: one screen for the whole report


def _show(value: Any) -> str:
    return "(absent)" if value is None else str(value)


def _section(title: str, lines: list[str], same: str) -> list[str]:
    if not lines:
        return [f"{title}: {same}"]
    out = [f"{title}: {len(lines)} difference{'s' if len(lines) > 1 else ''}"]
    out += [f"  {line}" for line in lines[:MAX_LINES]]
    if len(lines) > MAX_LINES:
        out.append(f"  ... and {len(lines) - MAX_LINES} more")
    return out


def _dict_lines(a: dict[str, Any] | None, b: dict[str, Any] | None) -> list[str]:
    a, b = a or {}, b or {}
    return [
        f"{key}: {_show(a.get(key))} -> {_show(b.get(key))}"
        for key in sorted(set(a) | set(b))
        if a.get(key) != b.get(key)
    ]


def _code(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """The git revision and dirty state of each run."""
    ga, gb = a.get("git") or {}, b.get("git") or {}
    lines = []
    for key in ("revision", "dirty", "diff_sha256"):
        if ga.get(key) != gb.get(key):
            lines.append(f"git {key}: {_show(ga.get(key))} -> {_show(gb.get(key))}")
    return lines


def _curves(a: RunInfo, b: RunInfo) -> str:
    curve_a, curve_b = eval_curve(a.path), eval_curve(b.path)
    if curve_a is None or curve_b is None:
        missing = " and ".join(r.path for r, c in ((a, curve_a), (b, curve_b)) if c is None)
        return f"eval curves: not compared ({missing} has no progress.csv)"
    for step in sorted(set(curve_a) | set(curve_b)):
        if step not in curve_a or step not in curve_b:
            which = "A" if step in curve_a else "B"
            return f"eval curves: part at step {step} (only {which} evaluated there)"
        if curve_a[step] != curve_b[step]:
            return (
                f"eval curves: part at step {step} "
                f"(eval_return_mean {curve_a[step]} -> {curve_b[step]})"
            )
    if not curve_a:
        return "eval curves: none yet in either run"
    return f"eval curves: identical at all {len(curve_a)} evaluations (to step {max(curve_a)})"


def diff_lines(a: RunInfo, b: RunInfo) -> list[str]:
    ma, mb = a.manifest, b.manifest
    lines = [
        f"A: {a.path} ({a.hparams_set or '?'}, seed {a.seed})",
        f"B: {b.path} ({b.hparams_set or '?'}, seed {b.seed})",
    ]
    lines += _section("hparams", a.hparams.diff(b.hparams), "same")
    run = ("hparams_set", "seed")
    run_lines = _dict_lines({k: ma.get(k) for k in run}, {k: mb.get(k) for k in run})
    run_lines += [f"--{line}" for line in _dict_lines(ma.get("overrides"), mb.get("overrides"))]
    lines += _section("seed and command", run_lines, f"same (seed {a.seed})")
    git = ma.get("git") or {}
    state = {True: ", dirty", False: ", clean"}.get(git.get("dirty"), "")
    lines += _section("code", _code(ma, mb), f"same ({_show(git.get('revision'))[:12]}{state})")
    packages = _dict_lines(ma.get("packages"), mb.get("packages"))
    lines += _section("packages", packages, f"same ({len(ma.get('packages') or {})} installed)")
    determinism = [open_one_level(m.get("tf_determinism")) for m in (ma, mb)]
    lines += _section("tf determinism", _dict_lines(*determinism), "same")
    devices = []
    if ma.get("devices") != mb.get("devices"):
        devices.append(f"devices: {_names(ma.get('devices'))} -> {_names(mb.get('devices'))}")
    devices += [f"cpu {line}" for line in _dict_lines(ma.get("cpu"), mb.get("cpu"))]
    lines += _section("devices", devices, f"same ({_names(ma.get('devices'))})")
    lines += _section("env", _dict_lines(ma.get("env"), mb.get("env")), "same")
    lines.append(_curves(a, b))
    return lines


def _names(devices: list[dict[str, Any]] | None) -> str:
    if devices is None:
        return "(absent)"
    return ", ".join(
        d.get("name", "?").replace("/physical_device:", "")
        + (f" ({d['device_name']})" if d.get("device_name") else "")
        for d in devices
    )


def diff(path_a: str, path_b: str) -> int:
    """Prints the report; 0 (a difference is an answer, not a failure)."""
    a, b = read_run(path_a), read_run(path_b)
    print("\n".join(diff_lines(a, b)))
    return 0
