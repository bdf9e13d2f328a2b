"""The documentation cannot drift from the code: the generated reference is current, and the
README's commands are the ones setup and CI actually run."""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path

from rl.hparams.reference import reference_markdown

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
CI_SCRIPT = ROOT / ".ci" / "run"
REFERENCE = ROOT / "docs" / "hparams_reference.md"

TRAIN_COMMAND = (
    "./setup.sh && .venv/bin/python train.py --hparams dqn_cartpole --output_dir runs/dqn_cartpole"
)
TEST_COMMAND = "./setup.sh && .venv/bin/python -m pytest"
REGENERATE = ".venv/bin/python -m rl.hparams.reference > docs/hparams_reference.md"


def test_hparams_reference_is_generated_from_the_current_sets():
    expected = reference_markdown()
    actual = REFERENCE.read_text(encoding="utf-8") if REFERENCE.exists() else ""
    assert actual == expected, (
        f"{REFERENCE.relative_to(ROOT)} is out of date with the registered hparams sets; "
        f"regenerate it from the repository root with:\n    {REGENERATE}"
    )


def _lines(path: Path) -> list[str]:
    return [line.strip() for line in path.read_text(encoding="utf-8").splitlines()]


def test_readme_has_the_two_quickstart_commands_verbatim():
    lines = _lines(README)
    for command in (TRAIN_COMMAND, TEST_COMMAND):
        assert command in lines, (
            f"README.md must contain this command on a line of its own:\n{command}"
        )


def test_ci_runs_the_readme_test_command():
    assert TEST_COMMAND in _lines(README)
    ci_lines = _lines(CI_SCRIPT)
    assert TEST_COMMAND in ci_lines, f".ci/run must run README's test command: {TEST_COMMAND}"


def test_ci_runs_the_e2e_tier_after_the_default_one():
    # README's command runs the default tier (pyproject.toml deselects `e2e` and `slow`); the
    # tests about the process run next, so every test but the long learning ones runs in CI.
    ci = CI_SCRIPT.read_text(encoding="utf-8")
    assert '.venv/bin/python -m pytest -m "e2e and not slow"' in _lines(CI_SCRIPT)
    assert ci.index(TEST_COMMAND) < ci.index('-m "e2e and not slow"')
    addopts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]
    assert "-m 'not slow and not e2e'" in addopts["ini_options"]["addopts"]


def test_ci_runs_the_side_steps_beside_the_e2e_tier():
    # Started after the default tier and waited for after the e2e tier, every one of them failing
    # CI on its exit status: the `tpu_compat` tests again under the TPU image's TensorFlow, our
    # exported XLA programs replayed by jax/jaxlib alone, the peers venv's tests.
    ci = CI_SCRIPT.read_text(encoding="utf-8")
    assert "side_steps=(tpu-compat xla-replay)" in ci and "side_steps+=(peers)" in ci
    assert '(nice -n 10 ".ci/$1" >"$logs/$1.out" 2>&1; echo $? >"$logs/$1.status") &' in ci
    started = ci.index('for step in "${side_steps[@]}"; do side_step "$step"; done')
    assert ci.index(TEST_COMMAND) < started < ci.index('-m "e2e and not slow"')
    assert ci.index('-m "e2e and not slow"') < ci.index("wait  # the side steps")
    assert '[[ "$(cat "$logs/$step.status" 2>/dev/null)" == 0 ]] || failed+=(' in ci


def test_the_tpu_compat_step_builds_its_venv_and_fails_on_no_tests():
    step = _lines(CI_SCRIPT.parent / "tpu-compat")
    command = '.venv-tpu-compat/bin/python -m pytest -m "tpu_compat and not slow"'
    assert f"./setup-tpu-compat.sh && {command}" in step
    assert "if ((status == 5)); then" in step


def test_the_peers_step_runs_what_needs_sb3():
    # The peers venv (SB3, rl-zoo3, rliable) and what needs it: the campaign statistics' tests
    # and the SB3 cell's kill-and-resume test.
    step = (CI_SCRIPT.parent / "peers").read_text(encoding="utf-8")
    assert "benchmarks/peers/setup.sh" in step
    assert "tests/benchmarks/test_campaign_stats.py tests/benchmarks/test_sb3_cell.py" in step
    assert (
        "test_campaign_resume.py::test_killed_cell_resumes_to_the_uninterrupted_result[sb3]" in step
    )


def test_the_xla_replay_step_runs_without_tensorflow():
    # Our exported XLA programs, replayed by jax/jaxlib alone and checked against TF's run
    # (benchmarks/xla_programs.py), in a venv without TensorFlow.
    step = (CI_SCRIPT.parent / "xla-replay").read_text(encoding="utf-8")
    assert '"$VENV/bin/python" -m benchmarks.xla_programs run --backend cpu --check' in step
    lines = (ROOT / "requirements-xla.txt").read_text(encoding="utf-8").splitlines()
    pins = [line for line in lines if line.strip() and not line.startswith("#")]
    assert sorted(pin.split("==")[0] for pin in pins) == ["jax", "jaxlib", "numpy"]


# Paths that lie outside a clone: a shared folder beside the checkout, a venv in the home
# directory or /tmp, data folders of one machine. Scripts and docs use in-repo equivalents
# (.venv-peers/bin/python, benchmarks/peers/..., runs/...).
OUTSIDE_THE_REPO = re.compile(
    r"shared/bench|\.\./shared|\"shared\" / \"bench\"|rl-peers-venv|PEERS_VENV"
    r"|/tmp/envpool|/work/atari|/tmp/atari"
)
# In a doc, also any home or /tmp path: a reader cannot follow one to the repository's files.
OUTSIDE_THE_REPO_IN_DOCS = re.compile(r"~/|/tmp/")


def test_no_script_or_doc_names_a_path_outside_the_repo():
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.splitlines()  # fmt: skip
    found = []
    for name in listed:
        path = ROOT / name
        if name.startswith(".venv") or path.suffix not in (".py", ".md", ".sh", ".toml"):
            continue
        if path.resolve() == Path(__file__).resolve() or not path.is_file():
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            in_doc = path.suffix == ".md" and OUTSIDE_THE_REPO_IN_DOCS.search(line)
            if OUTSIDE_THE_REPO.search(line) or in_doc:
                found.append(f"{name}:{number}: {line.strip()}")
    assert not found, "paths outside the repository:\n" + "\n".join(found)


def test_benchmarks_page_is_generated_from_the_records():
    # Every generated section of docs/benchmarks.md equals what benchmarks/pages.py makes of
    # the records in benchmarks/results/ now.
    from benchmarks import pages

    generated = pages.sections()
    text = pages.DOC.read_text(encoding="utf-8")
    assert pages.render(text, generated) == text, (
        f"docs/benchmarks.md differs from the records; regenerate it: {pages.REGENERATE}"
    )


def test_the_architecture_walkthroughs_name_code_that_exists():
    # docs/architecture.md follows one training step and one test episode through the modules as
    # `module:qualified.name`; a rename that leaves the page behind fails here.
    import importlib

    page = (ROOT / "docs" / "architecture.md").read_text()
    start = page.index("## One training step, through the modules")
    end = page.index("## Engines")
    walkthroughs = page[start:end]
    references = re.findall(r"`((?:rl|train)\b[\w.]*):([\w.]+)`", walkthroughs)
    assert len(references) >= 20, references
    missing = []
    for module_name, qualified_name in references:
        target = importlib.import_module(module_name)
        for part in qualified_name.split("."):
            target = getattr(target, part, None)
        if target is None:
            missing.append(f"{module_name}:{qualified_name}")
    assert not missing, f"docs/architecture.md names what the code lacks: {missing}"
    steps = [len(re.findall(r"^\d+\. ", part, re.M)) for part in walkthroughs.split("\n## ")]
    assert steps == [7, 5]  # at most 10 steps each
