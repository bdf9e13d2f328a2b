"""The TPU image and CI's TF 2.20 venv install one set of pins: requirements-tpu.txt.

`tensorflow-tpu` stops at 2.20, so TPU Pods run an older TF than .venv. CI guards that TF in
.venv-tpu-compat (setup-tpu-compat.sh, .ci/run), which only means something while that venv
holds what the image holds. The image cannot be built here (no Docker daemon), but what it
installs can be read: its install RUN is executed with a `pip` that records instead of
installing, and the result is compared with requirements-tpu.txt and with the compat venv's
requirements (the same, but plain `tensorflow` for tensorflow-tpu and no libtpu).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO_ROOT

DOCKERFILE = REPO_ROOT / "k8s" / "Dockerfile.tpu"
TPU_PINS = REPO_ROOT / "requirements-tpu.txt"
PIN = re.compile(r"^([A-Za-z0-9._\[\],-]+)==(\S+)$")

# A `pip` for the Dockerfile's RUN: appends one JSON line per call (its arguments and the pins
# of every `-r FILE`) to $PIP_RECORD, installs nothing.
FAKE_PIP = """\
import json, os, sys
args = sys.argv[1:]
files = [args[i + 1] for i, a in enumerate(args) if a == "-r"]
lines = [line.strip() for f in files for line in open(f)]
direct = [a for i, a in enumerate(args) if "==" in a and (i == 0 or args[i - 1] != "-r")]
with open(os.environ["PIP_RECORD"], "a") as out:
    out.write(json.dumps({"args": args, "pins": lines + direct}) + "\\n")
"""


def pins(lines: list[str]) -> dict[str, str]:
    """{name: version} of the `name==version` lines; comments and blank lines are skipped."""
    out: dict[str, str] = {}
    for line in lines:
        match = PIN.match(line.strip())
        if match:
            assert match.group(1) not in out, f"{match.group(1)} pinned twice"
            out[match.group(1)] = match.group(2)
    return out


def requirement_file(path: Path) -> dict[str, str]:
    return pins(path.read_text(encoding="utf-8").splitlines())


def instructions(dockerfile: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of a Dockerfile, continuation lines joined, comments dropped."""
    joined: list[str] = []
    pending = ""
    for line in dockerfile.splitlines():
        if line.lstrip().startswith("#") or not line.strip():
            continue
        if line.endswith("\\"):
            pending += line[:-1]
            continue
        joined.append(pending + line)
        pending = ""
    assert not pending, "the Dockerfile ends in a continuation line"
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1]) for line in joined]


@pytest.fixture(scope="module")
def image_pip_calls(tmp_path_factory) -> list[dict]:
    """The `pip install` calls of Dockerfile.tpu's dependency RUN, run in a copy of the build
    context with the recording `pip` first on PATH (its /tmp files in a temp dir)."""
    root = tmp_path_factory.mktemp("tpu_image")
    steps = instructions(DOCKERFILE.read_text(encoding="utf-8"))
    copied = [args.split()[:-1] for name, args in steps if name == "COPY"]
    assert any("requirements-tpu.txt" in files for files in copied), (
        "k8s/Dockerfile.tpu must COPY requirements-tpu.txt into the image"
    )
    runs = [args for name, args in steps if name == "RUN" and "requirements-tpu.txt" in args]
    assert len(runs) == 1, f"expected one RUN that installs requirements-tpu.txt, got {runs}"
    app, scratch, bin_dir = root / "app", root / "tmp", root / "bin"
    for directory in (app, scratch, bin_dir):
        directory.mkdir()
    for name in ("requirements.txt", "requirements-tpu.txt"):
        shutil.copy(REPO_ROOT / name, app / name)
    fake = bin_dir / "pip"
    fake.write_text(f"#!{sys.executable}\n{FAKE_PIP}", encoding="utf-8")
    fake.chmod(0o755)
    record = root / "pip.jsonl"
    proc = subprocess.run(
        ["/bin/sh", "-c", runs[0].replace("/tmp/", f"{scratch}/")],
        cwd=app,
        env={"PATH": f"{bin_dir}:/usr/bin:/bin", "PIP_RECORD": str(record)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in record.read_text().splitlines()]


def test_requirements_tpu_is_exact_pins_only():
    # The Dockerfile and setup-tpu-compat.sh read `name==version` lines and nothing else, so a
    # range (`libtpu~=0.0.14`) or a marker would be dropped silently: refuse it here.
    lines = TPU_PINS.read_text(encoding="utf-8").splitlines()
    for line in lines:
        if line.strip() and not line.startswith("#"):
            assert PIN.match(line), f"requirements-tpu.txt: not an exact pin: {line!r}"
    stack = requirement_file(TPU_PINS)
    assert {"tensorflow-tpu", "libtpu", "tf-keras"} <= set(stack), stack
    assert "tensorflow" not in stack  # tensorflow-tpu *is* the image's TensorFlow


def test_image_installs_requirements_txt_with_the_tpu_stack_in_place_of_its_tf(image_pip_calls):
    stack = requirement_file(TPU_PINS)
    base = requirement_file(REPO_ROOT / "requirements.txt")
    expected = {k: v for k, v in base.items() if k not in stack and k != "tensorflow"} | stack

    installed: dict[str, str] = {}
    for call in image_pip_calls:
        assert call["args"][0] == "install", call
        for name, version in pins(call["pins"]).items():
            assert name not in installed, f"the image installs {name} twice"
            installed[name] = version
    assert installed == expected

    # tf-keras alone, last and without its dependencies (else pip adds CPU `tensorflow`).
    *with_deps, last = image_pip_calls
    assert "--no-deps" in last["args"] and pins(last["pins"]) == {"tf-keras": stack["tf-keras"]}
    assert all("--no-deps" not in call["args"] for call in with_deps)


def test_dockerfile_writes_no_version_of_its_own():
    # The versions live in requirements-tpu.txt only; no ARG, ENV or RUN may repeat one.
    stack = requirement_file(TPU_PINS)
    for name, args in instructions(DOCKERFILE.read_text(encoding="utf-8")):
        assert name != "ARG", f"Dockerfile.tpu: a build argument would override the pins: {args}"
        for package, version in stack.items():
            written = re.search(rf"{re.escape(package)}==[0-9]", args) or version in args
            assert not written, f"Dockerfile.tpu repeats the {package} pin: {name} {args}"


def test_compat_venv_is_the_image_with_cpu_tensorflow(image_pip_calls):
    proc = subprocess.run(
        ["bash", str(REPO_ROOT / "setup-tpu-compat.sh"), "--print-requirements"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    compat = pins(proc.stdout.splitlines())
    image = {k: v for call in image_pip_calls for k, v in pins(call["pins"]).items()}
    expected = {k: v for k, v in image.items() if k not in ("tensorflow-tpu", "libtpu")}
    expected["tensorflow"] = image["tensorflow-tpu"]
    assert compat == expected


def test_docs_quote_the_pinned_versions():
    stack = requirement_file(TPU_PINS)
    quoted = re.compile(rf"\b({'|'.join(map(re.escape, stack))})==([0-9][0-9A-Za-z.]*)")
    tf_minor = ".".join(stack["tensorflow-tpu"].split(".")[:2])
    for doc in ("docs/tpu_gke.md", "k8s/README.md"):
        text = (REPO_ROOT / doc).read_text(encoding="utf-8")
        found = quoted.findall(text)
        assert found, f"{doc} quotes none of the TPU image's pins"
        for package, version in found:
            assert version.rstrip(".") == stack[package], f"{doc}: {package}=={version}"
        assert f"TF {tf_minor}" in text or f"TensorFlow {tf_minor}" in text, doc
