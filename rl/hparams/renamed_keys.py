"""Hparam keys that were renamed, so an old override or script is pointed at the new key.

Why: `--hparam_override td_loss=mse` from an old command line would otherwise get only the
generic did-you-mean, which may not name the new key, and the values changed too. Each entry is
old key -> (new key, how the old values map).
"""

from __future__ import annotations

from collections.abc import Container

RENAMED_KEYS: dict[str, tuple[str, str]] = {
    # Issue #12: the TD loss is a registered gradient function, chosen by name.
    "td_loss": ("loss", "td_loss=huber is now loss=td_huber, td_loss=mse is loss=td_mse"),
    # Issue #12: one key names the registered action function of every agent that has a choice.
    "action_noise": ("action_function", "same values: gaussian_noise or ornstein_uhlenbeck"),
}


def renamed_hint(name: str, keys: Container[str]) -> str:
    """' (did you mean NEW? ...)' if `name` was renamed to a key in `keys`, else ''."""
    if name not in RENAMED_KEYS:
        return ""
    new, values = RENAMED_KEYS[name]
    if new not in keys:
        return ""
    return f" (did you mean {new!r}? {name!r} was renamed; {values})"
