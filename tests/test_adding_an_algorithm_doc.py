"""docs/adding_an_algorithm.md, executed: its examples must work as written.

- Example 1 (Expected SARSA, not part of the repository): its four files are written into a
  copy of `rl/`, the registration edits the guide describes are applied (and its excerpts of
  the edited `__init__.py` files checked against the result), then, in that copy, the guide's
  hand-computed test runs under pytest, `train.py --list` must print what the guide's sample
  shows, and the guide's smoke-run commands (a training run, then test mode) must succeed.
- Example 2 (QR-DQN, part of the repository): each section links the file it describes and
  names only functions that file defines, its calls are the file's, and its one code block is
  the agent's code (its lines appear in order in the file), so the guide cannot drift from the
  files that tests/agents/test_qrdqn.py and the learning test exercise.
- The `--show_hparams` command and its sample output, run in-process.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import stderr_lines

import train

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "adding_an_algorithm.md").read_text(encoding="utf-8")

# "`path/to/file.py`<prose without backticks>" followed by a python block: a whole file.
FILE_BLOCK = re.compile(r"`((?:rl|tests)/[\w/]+\.py)`[^`]*?\n\n```python\n(.*?)```", re.S)


def section(title: str) -> str:
    """The text of the `## title` section, up to the next `## ` heading."""
    start = DOC.index(f"\n## {title}")
    end = DOC.find("\n## ", start + 1)
    return DOC[start : end if end != -1 else len(DOC)]


def blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", text, re.S)


def block_after(text: str, marker: str, language: str = "python") -> str:
    """The first `language` block after the first occurrence of `marker`."""
    return blocks(text[text.index(marker) :], language)[0]


def assert_lines_in_order(excerpt: str, target: str, what: str) -> None:
    """Every line of `excerpt` that is not `...` or blank is a line of `target`, in order."""
    lines = target.splitlines()
    position = 0
    for line in excerpt.splitlines():
        if not line.strip() or line.strip() == "...":
            continue
        try:
            position = lines.index(line, position) + 1
        except ValueError:
            raise AssertionError(f"{what}: line not found (in order): {line!r}") from None


def commands(bash: str) -> list[list[str]]:
    """The `train.py` argument lists of a bash block (continuation lines joined)."""
    joined = bash.replace("\\\n", " ")
    out = []
    for line in joined.splitlines():
        words = shlex.split(line)
        if "train.py" in words:
            out.append(words[words.index("train.py") + 1 :])
    return out


def assert_list_sample(sample: str, printed: str) -> None:
    """The guide's `--list` excerpt: lines without `...` are printed as they are; in a
    `kind: a, ..., b` line each run of names between `...` is a contiguous run of the real
    line's names."""
    printed_lines = printed.splitlines()
    by_kind = {line.split(":", 1)[0]: line for line in printed_lines if ": " in line}
    for line in sample.splitlines():
        if line.strip() == "..." or line in printed_lines:
            continue
        if "..." not in line:
            assert line in printed_lines, f"--list sample line not printed: {line!r}"
            continue
        kind, names = line.split(": ", 1)
        real = by_kind[kind].split(": ", 1)[1].split(", ")
        for run in names.split("..."):
            run_names = [name for name in run.strip(", ").split(", ") if name]
            if not run_names:
                continue
            start = real.index(run_names[0])
            assert real[start : start + len(run_names)] == run_names, (kind, run_names)


# --------------------------------------------------------------- Example 1: Expected SARSA


def apply_registration(copy: Path, example: str) -> None:
    """The edits the guide describes: the loss import and `__all__` names, and the module name
    in the sorted imports of rl/agents/__init__.py and rl/hparams/__init__.py."""
    registration = block_after(example, "Register it by importing it")
    import_statement, all_block = registration.split("\n\n", 1)
    names = re.findall(r'"(\w+)"', all_block)
    path = copy / "rl/agents/gradient_functions/__init__.py"
    text = path.read_text()
    anchor = "from rl.agents.gradient_functions.maddpg import"  # sorted: after c51
    text = text.replace(anchor, import_statement.strip() + "\n" + anchor)
    text = text.replace("__all__ = [\n", "__all__ = [\n" + "".join(f'    "{n}",\n' for n in names))
    path.write_text(text)
    assert_lines_in_order(import_statement, text, "gradient_functions/__init__.py")
    for package, after in (("rl/agents/__init__.py", "    drqn,\n"),
                           ("rl/hparams/__init__.py", "    dqn_family,\n")):  # fmt: skip
        path = copy / package
        text = path.read_text()
        assert after in text, package
        path.write_text(text.replace(after, after + "    expected_sarsa,\n"))
    assert_lines_in_order(
        block_after(example, "Register the agent in"),
        (copy / "rl/agents/__init__.py").read_text(),
        "rl/agents/__init__.py excerpt",
    )
    assert_lines_in_order(
        block_after(example, "Register the module by adding"),
        (copy / "rl/hparams/__init__.py").read_text(),
        "rl/hparams/__init__.py excerpt",
    )


def files_of(files: dict[str, str], prefix: str) -> list[str]:
    return sorted(path for path in files if path.startswith(prefix))


def run(copy: Path, argv: list[str], timeout: int = 300) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(copy), "TF_CPP_MIN_LOG_LEVEL": "3"}
    return subprocess.run(
        [sys.executable, *argv], cwd=copy, env=env, capture_output=True, text=True,
        timeout=timeout,
    )  # fmt: skip


@pytest.mark.e2e  # the guide's commands run as a user types them, in a copy of the repository
def test_expected_sarsa_example_runs_as_written(tmp_path):
    example = section("Example 1: Expected SARSA (a new target)")
    # Whole files; the `__init__.py` blocks are excerpts (applied by `apply_registration`).
    files = {p: code for p, code in FILE_BLOCK.findall(example) if not p.endswith("__init__.py")}
    assert sorted(files) == [
        "rl/agents/expected_sarsa.py",
        "rl/agents/gradient_functions/expected_sarsa.py",
        "rl/hparams/expected_sarsa.py",
        "tests/agents/test_expected_sarsa.py",
    ]
    copy = tmp_path / "repo"
    shutil.copytree(ROOT / "rl", copy / "rl", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "train.py", copy / "train.py")
    for path, code in files.items():
        (copy / path).parent.mkdir(parents=True, exist_ok=True)
        (copy / path).write_text(code)
    apply_registration(copy, example)

    # The hand-computed test, `--list` and the smoke run are independent: run them together.
    smoke = commands(block_after(example, "A smoke run, then its test mode", "bash"))
    assert len(smoke) == 2 and "--training" in smoke[1]
    env = {**os.environ, "PYTHONPATH": str(copy), "TF_CPP_MIN_LOG_LEVEL": "3"}
    pytest_argv = ["-m", "pytest", "-q", "-p", "no:cacheprovider", *files_of(files, "tests/")]
    started = [
        subprocess.Popen(
            [sys.executable, *argv],
            cwd=copy,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        for argv in (pytest_argv, ["train.py", "--list"], ["train.py", *smoke[0]])
    ]
    (tested, _), (listed, listed_err), (_, trained_err) = [
        p.communicate(timeout=300) for p in started
    ]
    assert started[0].returncode == 0 and "2 passed" in tested, tested[-3000:]

    assert started[1].returncode == 0 and not stderr_lines(listed_err), listed_err[-2000:]
    assert commands(block_after(example, "### Run it", "bash")) == [["--list"]]
    assert_list_sample(block_after(example, "An excerpt (`...` marks", ""), listed)

    # The smoke run, then its test mode, as the guide writes them.
    assert started[2].returncode == 0, trained_err[-3000:]
    assert not stderr_lines(trained_err), trained_err[-2000:]
    assert (copy / "runs/expected_sarsa_tiny/run_0/checkpoints/latest.json").is_file()
    played = run(copy, ["train.py", *smoke[1]])
    assert played.returncode == 0, played.stderr[-3000:]
    last = played.stdout.strip().splitlines()[-1]
    assert re.fullmatch(r"\[run_0\] test return -?\d+\.\d\d ± \d+\.\d\d over 3 episodes", last)
    assert "`[run_0] test return 10.00 ± 0.82 over 3 episodes`" in example


# ---------------------------------------------------------------------- Example 2: QR-DQN

# Each section links its file and names what the file defines; the agent's block is its code.
QRDQN_FILES = {
    "The loss": (
        "rl/agents/gradient_functions/qrdqn.py",
        ["quantile_midpoints", "quantile_q_values", "quantile_target", "quantile_huber_loss"],
    ),
    "A test computed by hand": ("tests/agents/test_qrdqn.py", ["test_quantile_huber_loss_by_hand"]),
    "The agent": ("rl/agents/qrdqn.py", ["_build"]),  # its hooks: the block below
    "The hparams sets": ("rl/hparams/qrdqn.py", ["with_qrdqn", "qrdqn", "qrdqn_cartpole"]),
}


def test_qrdqn_sections_are_the_repositorys_code():
    example = section("Example 2: QR-DQN (a new network output, acting and loss)")
    parts = re.split(r"\n### ", example)
    for heading, (path, names) in QRDQN_FILES.items():
        (text,) = [part for part in parts if part.startswith(heading + "\n")]
        source = (ROOT / path).read_text()
        assert f"[`{path}`](../{path})" in text, heading
        for name in names:
            assert f"`{name}`" in text and re.search(rf"def {name}\(", source), (heading, name)
        for call in re.findall(r"`(\w+\([^`]*\))`", text):  # `with_qrdqn(dqn())` and the like
            assert call in source, (heading, call)
    (agent,) = blocks(example, "python")
    assert len(agent.splitlines()) >= 10
    assert_lines_in_order(agent, (ROOT / "rl/agents/qrdqn.py").read_text(), "rl/agents/qrdqn.py")
    assert commands(block_after(example, "### Learning", "bash")) == [
        ["--hparams", "qrdqn_cartpole", "--seed", "0", "--output_dir", "runs/qrdqn_cartpole"]
    ]


def test_function_slots_excerpt_is_dqns_code():
    excerpt = block_after(DOC, "### Choosing a registered function by name")
    source = "".join((ROOT / f"rl/agents/{name}.py").read_text() for name in ("q_learning", "dqn"))
    assert_lines_in_order(excerpt, source, "rl/agents/q_learning.py + dqn.py")


def test_show_hparams_sample_is_what_train_prints(capsys):
    pitfalls = section("Parent sets carry their settings")
    (argv,) = commands(block_after(pitfalls, "--show_hparams", "bash"))
    sample = block_after(pitfalls, "An excerpt of its output", "")
    capsys.readouterr()
    assert train.main(argv) == 0
    out, err = capsys.readouterr()
    assert err == ""
    assert_lines_in_order(sample, out, "--show_hparams output")


FAMILY_MODULES = [
    "rl/agents/base.py",
    "rl/agents/dqn.py",
    "rl/agents/q_learning.py",
    "rl/agents/replay_agent.py",
    "rl/agents/on_policy.py",
    "rl/agents/actor_critic_agent.py",
    "rl/agents/off_policy_continuous.py",
    "rl/agents/recurrent.py",
]


def test_every_extension_point_in_the_table_is_a_method_of_its_family():
    table = section("Extension points")
    for path in FAMILY_MODULES:
        assert f"`{path}`" in table, path
    sources = [(ROOT / path).read_text() for path in FAMILY_MODULES]
    names = set(re.findall(r"`(_\w+)", table)) | set(re.findall(r"`([a-z]\w*)\(", table))
    assert {"_q_network_options", "_q_values", "loss", "_train_step", "_greedy_step"} <= names
    for name in names:
        assert any(re.search(rf"def {name}\b", text) for text in sources), name
