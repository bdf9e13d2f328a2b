"""User-facing errors.

A `UserError` is a mistake the person running `train.py` can fix (a bad name, a bad override, a
bad path). `train.py` turns it into one line on stderr and exit status 2, before anything is
written. Anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class UserError(Exception):
    """A mistake in the user's input; the message names the problem and the fix."""


def did_you_mean(name: str, choices: Iterable[str], n: int = 3) -> str:
    """Returns ' (did you mean X?)' for close matches of `name` in `choices`, or ''."""
    close = difflib.get_close_matches(name, list(choices), n=n, cutoff=0.6)
    if not close:
        return ""
    return " (did you mean " + " or ".join(repr(c) for c in close) + "?)"
