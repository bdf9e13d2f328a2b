"""Hparam keys that were renamed, so an old override is pointed at the new key and an old run
dir's saved hparams still load.

Why: `--hparam_override td_loss=mse` from an old command line would otherwise get only the
generic did-you-mean, and the values changed too. A run saved before the rename has the old keys
in its hparams.json; `upgrade_saved` rewrites them to the keys and values that select the same
functions, so the run resumes (no spurious hparams difference) and its test mode builds.
"""

from __future__ import annotations

from collections.abc import Container
from typing import Any

# old key -> (new key, how the old values map), for the did-you-mean of an override.
RENAMED_KEYS: dict[str, tuple[str, str]] = {
    # Issue #12: the TD loss is a registered gradient function, chosen by name.
    "td_loss": ("loss", "td_loss=huber is now loss=td_huber, td_loss=mse is loss=td_mse"),
    # Issue #12: one key names the registered action function of every agent that has a choice.
    "action_noise": ("action_function", "same values: gaussian_noise or ornstein_uhlenbeck"),
}
# What the agents called before their hparams named it (issue #12): a saved run of that agent
# without the key used exactly this function.
_LOSS_OF_TD_LOSS = {"huber": "td_huber", "mse": "td_mse"}
_FIXED_BEFORE = {
    "dqn": {"action_function": "epsilon_greedy"},
    "drqn": {"action_function": "epsilon_greedy"},
    "c51": {"action_function": "epsilon_greedy", "loss": "categorical_loss"},
    "maddpg": {"action_function": "gaussian_noise"},
}


def renamed_hint(name: str, keys: Container[str]) -> str:
    """' (did you mean NEW? ...)' if `name` was renamed to a key in `keys`, else ''."""
    if name not in RENAMED_KEYS:
        return ""
    new, values = RENAMED_KEYS[name]
    if new not in keys:
        return ""
    return f" (did you mean {new!r}? {name!r} was renamed; {values})"


def upgrade_saved(described: dict[str, Any]) -> dict[str, Any]:
    """The top level of a saved hparams description (`HParams.to_json`'s "hparams") with keys
    from before the renames replaced by today's keys and values; anything else is unchanged."""
    out = dict(described)
    agent = out.get("agent", {}).get("value")
    fixed = _FIXED_BEFORE.get(agent, {})
    if "td_loss" in out and "loss" not in out:
        old = out.pop("td_loss")
        value = fixed.get("loss", _LOSS_OF_TD_LOSS.get(old["value"], old["value"]))
        out["loss"] = {**old, "value": value}
    if "action_noise" in out and "action_function" not in out:
        out["action_function"] = out.pop("action_noise")
    for key, value in fixed.items():
        if key not in out:
            out[key] = {"type": "str", "value": value, "doc": f"{key} (saved before it existed)"}
    return out
