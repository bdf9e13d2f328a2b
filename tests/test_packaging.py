"""pyproject.toml's dependencies, read against the code and the pins, so the list cannot rot.

- every third-party module that `rl/` imports (at the top, inside a function, or by name through
  `importlib.import_module`) belongs to a distribution pyproject.toml declares, in its core list
  or an extra: a fresh `pip install -e '.[extras]'` then has everything the code reaches for;
- every exact pin of requirements.txt (and of requirements-tpu.txt, for the `tpu` extra) falls
  inside pyproject.toml's range for that distribution: ./setup.sh installs the pins and then the
  package with `--no-deps`, so a range that excludes a pin would go unnoticed there.
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "rl"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
PIN = re.compile(r"^([A-Za-z0-9._-]+)(?:\[[^\]]*\])?==(\S+)$")
# Imported by rl/ but declared nowhere, each with the reason.
UNDECLARED = {
    # CoinRun: procgen-mirror's metadata asks for numpy<2 and the old gym, which contradict the
    # core pins, so no resolver would install it beside them; ./setup.sh installs
    # requirements-procgen.txt with --no-deps and rl/envs/procgen.py imports it on first use.
    "procgen",
}


def normalized(name: str) -> str:
    """PEP 503's form of a distribution name: `PyYAML` -> `pyyaml`, `tf_keras` -> `tf-keras`."""
    return re.sub(r"[-_.]+", "-", name).lower()


def requirements(extra: str | None = None) -> list[Requirement]:
    """pyproject.toml's core requirements, or those of one extra."""
    lines = (
        PYPROJECT["dependencies"] if extra is None else PYPROJECT["optional-dependencies"][extra]
    )
    return [Requirement(line) for line in lines]


def declared_distributions() -> set[str]:
    """Every distribution the core list or an extra names (not rl itself, which extras reuse)."""
    extras = [None, *PYPROJECT["optional-dependencies"]]
    names = {normalized(req.name) for extra in extras for req in requirements(extra)}
    return names - {"rl"}


def imported_top_names(tree: ast.Module) -> set[str]:
    """The top-level names of every absolute import in `tree`, including imports inside
    functions and `importlib.import_module("x.y")` / `import_module(f"x.{y}")` by a literal."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names.add(node.module.split(".")[0])
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module"
            and node.args
        ):
            target = node.args[0]
            if isinstance(target, ast.JoinedStr) and target.values:
                target = target.values[0]
            if isinstance(target, ast.Constant) and isinstance(target.value, str):
                names.add(target.value.split(".")[0])
    return names - {""}


def third_party(names: set[str]) -> set[str]:
    return {n for n in names if n not in sys.stdlib_module_names and n not in ("rl", "__future__")}


def test_the_import_scan_sees_lazy_and_dynamic_imports():
    source = (
        "import os, numpy as np\n"
        "from tensorflow.python import x\n"
        "from . import sibling\n"
        "from rl.errors import UserError\n"
        "def f():\n"
        "    import ale_py\n"
        "    importlib.import_module(f'mpe2.{task}')\n"
        "    import_module('yaml.loader')\n"
        "    importlib.import_module(name)\n"
    )
    found = third_party(imported_top_names(ast.parse(source)))
    assert found == {"numpy", "tensorflow", "ale_py", "mpe2", "yaml"}


def test_every_third_party_import_of_rl_is_declared():
    imports: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for name in third_party(imported_top_names(ast.parse(path.read_text(encoding="utf-8")))):
            imports.setdefault(name, []).append(str(path.relative_to(ROOT)))
    assert {"tensorflow", "numpy", "gymnasium", "ray"} <= set(imports)  # the scan read rl/
    distributions = importlib.metadata.packages_distributions()
    declared = declared_distributions()
    problems = []
    for name, paths in sorted(imports.items()):
        if name in UNDECLARED:
            continue
        owners = {normalized(d) for d in distributions.get(name, [])}
        if not owners:
            problems.append(f"{name} (imported by {paths[0]}) is not installed here")
        elif not owners & declared:
            problems.append(
                f"{name} (imported by {paths[0]}) comes from {sorted(owners)}, which "
                "pyproject.toml declares neither in `dependencies` nor in an extra"
            )
    assert not problems, "\n".join(problems)


def pins(path: Path) -> dict[str, str]:
    """{normalized name: version} of a requirements file's `name==version` lines."""
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        match = PIN.match(line.strip())
        if match:
            out[normalized(match.group(1))] = match.group(2)
    return out


def outside(reqs: list[Requirement], pinned: dict[str, str]) -> list[str]:
    """`name==pin not in range` for every requirement whose distribution `pinned` pins."""
    return [
        f"{req.name}=={pinned[normalized(req.name)]} is outside {req}"
        for req in reqs
        if normalized(req.name) in pinned
        and not req.specifier.contains(pinned[normalized(req.name)], prereleases=True)
    ]


def test_the_range_check_refuses_a_pin_outside():
    reqs = [Requirement("numpy>=2.4,<3"), Requirement("gymnasium[box2d]>=1.4,<2")]
    assert outside(reqs, {"numpy": "2.4.6", "gymnasium": "1.4.0"}) == []
    assert outside(reqs, {"numpy": "3.0.0"}) == ["numpy==3.0.0 is outside numpy<3,>=2.4"]


def test_requirements_txt_pins_fall_inside_the_declared_ranges():
    pinned = pins(ROOT / "requirements.txt")
    every = requirements() + [
        req for extra in PYPROJECT["optional-dependencies"] if extra != "tpu"
        for req in requirements(extra)
    ]  # fmt: skip
    assert {"tensorflow", "gymnasium", "ray", "pytest"} <= {normalized(r.name) for r in every}
    assert not outside(every, pinned)


def test_the_tpu_image_pins_fall_inside_the_core_and_tpu_ranges():
    # The image's TensorFlow is the tensorflow-tpu distribution at the version `tensorflow` has
    # in the compat venv (setup-tpu-compat.sh): both lines must admit it.
    pinned = pins(ROOT / "requirements-tpu.txt")
    pinned["tensorflow"] = pinned.pop("tensorflow-tpu")
    assert not outside(requirements() + requirements("tpu"), pinned)
    assert {normalized(r.name) for r in requirements("tpu")} <= set(pinned)
