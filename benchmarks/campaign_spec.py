"""A campaign file, read into the cells it declares.

A campaign (benchmarks/campaigns/NAME.toml; docs/campaigns.md) lists entries: an env, our
hparams set and/or an rl-zoo3 entry, seeds, an env-step budget, an evaluation protocol and,
optionally, a return to stop at (`stop_at`: both sides end at the first evaluation whose mean
reaches it, and the cell's score is the env steps it took). A top-level `baseline` names the
entry whose `ours` side the others change one setting of (a factor campaign). Each
(entry, side, seed) is a cell, run and recorded on its own. A cell's key is the hash of
everything that decides its result, so a record or a half-trained cell is only reused by a cell
asking for exactly the same thing; a changed budget or override makes a new cell.

Standard library only: the campaign runner imports this under any venv.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CAMPAIGNS = ROOT / "benchmarks" / "campaigns"
SIDES = ("ours", "sb3")
# Defaults: the MuJoCo protocol (10 deterministic episodes every 10k env steps).
DEFAULTS: dict[str, Any] = {
    "seeds": [0],
    "eval_every": 10_000,
    "eval_episodes": 10,
    "checkpoint_every": 50_000,
    "torch_threads": 1,
}
ENTRY_KEYS = {"name", "env", "ours", "sb3", "budget", "stop_at", *DEFAULTS}
SB3_KEYS = {"algo", "zoo_key", "hyperparams", "torch_threads", "horizon"}


@dataclass(frozen=True)
class Cell:
    """One run: an entry's side (ours or sb3) on one seed."""

    campaign: str
    entry: str
    side: str
    env: str
    seed: int
    budget: int
    eval_every: int
    eval_episodes: int
    checkpoint_every: int
    # ours: {"set", "override"} and `env` if ours runs another env id (a TF-ops twin);
    # sb3: {"algo", "zoo_key", "hyperparams", "torch_threads"} and `horizon` if given ("zoo":
    # the schedules span the entry's n_timesteps, not the budget)
    agent: dict[str, Any] = field(hash=False)
    stop_at: float | None = None

    @property
    def spec(self) -> dict[str, Any]:
        """What decides the cell's result (hashed into `key`); `stop_at` only where it is set, so
        the cells of campaigns without it keep their keys."""
        stop = {} if self.stop_at is None else {"stop_at": self.stop_at}
        return stop | {
            "side": self.side,
            "env": self.env,
            "seed": self.seed,
            "budget": self.budget,
            "eval_every": self.eval_every,
            "eval_episodes": self.eval_episodes,
            "checkpoint_every": self.checkpoint_every,
            "agent": self.agent,
        }

    @property
    def key(self) -> str:
        return hashlib.sha256(json.dumps(self.spec, sort_keys=True).encode()).hexdigest()[:12]

    @property
    def id(self) -> str:
        return f"{self.entry}/{self.side}/seed{self.seed}"


def campaign_path(name_or_path: str) -> Path:
    """A campaign's file: a path, or a name in benchmarks/campaigns/."""
    path = Path(name_or_path)
    if path.suffix == ".toml" and path.exists():
        return path
    found = CAMPAIGNS / f"{name_or_path}.toml"
    if not found.exists():
        known = ", ".join(sorted(p.stem for p in CAMPAIGNS.glob("*.toml")))
        raise SystemExit(f"no campaign {name_or_path!r} (known: {known})")
    return found


def _agent(side: str, entry: dict[str, Any], merged: dict[str, Any]) -> dict[str, Any]:
    value = entry[side]
    if side == "ours":
        spec = {"set": value} if isinstance(value, str) else dict(value)
        spec.setdefault("override", "")
        unknown = set(spec) - {"set", "override", "env"}
    else:
        spec = {"algo": value} if isinstance(value, str) else dict(value)
        spec.setdefault("zoo_key", None)
        spec.setdefault("hyperparams", {})
        spec.setdefault("torch_threads", merged["torch_threads"])
        unknown = set(spec) - SB3_KEYS
    if unknown:
        raise SystemExit(f"entry {entry.get('name')!r}, {side}: unknown keys {sorted(unknown)}")
    return spec


def load(name_or_path: str) -> tuple[str, dict[str, Any], list[Cell]]:
    """(campaign name, its file's content, its cells in the file's order: entry, seed, side)."""
    path = campaign_path(name_or_path)
    data = tomllib.loads(path.read_text())
    name = path.stem
    top = {**DEFAULTS, **{k: v for k, v in data.items() if k in DEFAULTS or k == "budget"}}
    cells: list[Cell] = []
    seen: set[str] = set()
    for entry in data.get("entry", []):
        unknown = set(entry) - ENTRY_KEYS
        if unknown:
            raise SystemExit(f"{path}: entry {entry.get('name')!r}: unknown keys {sorted(unknown)}")
        merged = {**top, **{k: v for k, v in entry.items() if k in DEFAULTS or k == "budget"}}
        stop_at = entry.get("stop_at", data.get("stop_at"))
        if "budget" not in merged:
            raise SystemExit(f"{path}: entry {entry.get('name')!r} has no budget")
        if merged["checkpoint_every"] % merged["eval_every"]:
            raise SystemExit(f"{path}: checkpoint_every must be a multiple of eval_every")
        label = entry.get("name") or entry.get("ours") or entry["env"]
        label = label if isinstance(label, str) else label["set"]
        if label in seen:
            raise SystemExit(f"{path}: two entries named {label!r}")
        seen.add(label)
        for seed in merged["seeds"]:
            for side in SIDES:
                if side not in entry:
                    continue
                cells.append(
                    Cell(
                        campaign=name,
                        entry=label,
                        side=side,
                        env=entry["env"],
                        seed=int(seed),
                        budget=int(merged["budget"]),
                        eval_every=int(merged["eval_every"]),
                        eval_episodes=int(merged["eval_episodes"]),
                        checkpoint_every=int(merged["checkpoint_every"]),
                        agent=_agent(side, entry, merged),
                        stop_at=None if stop_at is None else float(stop_at),
                    )
                )
    if not cells:
        raise SystemExit(f"{path}: no [[entry]] with an `ours` or `sb3` side")
    baseline = data.get("baseline")
    if baseline is not None and not any(c.entry == baseline and c.side == "ours" for c in cells):
        raise SystemExit(f"{path}: baseline {baseline!r} is not an entry with an `ours` side")
    return name, data, cells
