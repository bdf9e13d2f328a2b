"""Every registered `*_tiny` set trains through `train.main` with nothing on stderr but the
warnings listed in `ALLOWED_STDERR`, each with its reason.

What a user of train.py reads on stderr is errors; a TensorFlow warning there ("AutoGraph could
not transform ...", a retracing warning, a deprecation) is a bug of ours or a documented
exception, never noise to get used to. In-process, stderr comes three ways, all checked here:
what is written to the file descriptor (capfd), TF's Python log records (TF adds its stderr
handler only where the root logger has none, and under pytest it has pytest's: caplog) and
Python warnings (which pytest would otherwise collect; shown here under Python's own default
filters, as a user's process shows them).
"""

from __future__ import annotations

import logging
import re
import warnings

import pytest

import train
from rl import registry

TINY_SETS = sorted(name for name in registry.hparams.names() if name.endswith("_tiny"))

# One line of stderr that a tiny run may print (a regex, matched at the start of the line), and
# why that is right. Empty: no tiny set may write to stderr at all.
ALLOWED_STDERR: dict[str, str] = {}


def _python_default_warning_filters() -> None:
    """Python's default filters (docs.python.org/3/library/warnings.html#default-warning-filter):
    what a user's `python train.py` shows, instead of pytest's show-everything."""
    warnings.resetwarnings()
    warnings.simplefilter("default")
    ignored = (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning)
    for category in ignored:
        warnings.filterwarnings("ignore", category=category)
    warnings.filterwarnings("default", category=DeprecationWarning, module="__main__")


def unexpected_lines(lines: list[str]) -> list[str]:
    """The non-empty lines that no `ALLOWED_STDERR` pattern matches."""
    allowed = [re.compile(pattern) for pattern in ALLOWED_STDERR]
    return [line for line in lines if line.strip() and not any(p.match(line) for p in allowed)]


# 21 sets trained in one process: 2-3 minutes on 2 shared cores.
@pytest.mark.e2e
@pytest.mark.parametrize("hparams_set", TINY_SETS)
def test_a_tiny_run_writes_nothing_unexpected_to_stderr(hparams_set, tmp_path, capfd, caplog):
    capfd.readouterr()
    caplog.set_level(logging.WARNING)
    with warnings.catch_warnings(record=True) as caught:
        _python_default_warning_filters()
        status = train.main(["--hparams", hparams_set, "--output_dir", str(tmp_path / "out")])
    _, stderr = capfd.readouterr()
    assert status == 0, stderr
    lines = stderr.splitlines()
    lines += [
        line
        for record in caplog.records
        if record.levelno >= logging.WARNING
        for line in f"{record.levelname}:{record.name}:{record.getMessage()}".splitlines()
    ]
    lines += [f"{w.filename}:{w.lineno}: {w.category.__name__}: {w.message}" for w in caught]
    assert not unexpected_lines(lines), "\n".join(unexpected_lines(lines))


def test_the_check_sees_the_autograph_warning_that_sac_tiny_printed():
    """The lines `train.py --hparams sac_tiny` wrote before `:=` left
    rl/agents/off_policy_continuous.py (TF's logging format): none is allowed."""
    printed = [
        "WARNING:tensorflow:AutoGraph could not transform <bound method "
        "OffPolicyContinuousAgent._optimizer_step of <rl.agents.sac.SAC object at 0x7f76>> and "
        "will run it as-is.",
        "Please report this to the TensorFlow team. When filing the bug, set the verbosity to "
        "10 (on Linux, `export AUTOGRAPH_VERBOSITY=10`) and attach the full output.",
        "Cause: (<gast.gast.NamedExpr object at 0x7f76>, (limit := self.grad_clip_norm()))",
        "To silence this warning, decorate the function with "
        "@tf.autograph.experimental.do_not_convert",
    ]
    assert unexpected_lines(["", *printed]) == printed
