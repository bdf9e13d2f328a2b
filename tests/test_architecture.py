"""The layering of `rl/`, read from the source with `ast` (docs/architecture.md, "Layers").

- every package of `rl/` has a rank (`RANKS`), and imports only packages of a lower rank: a
  helper that two layers need moves down, it is not imported upward (imports inside functions
  count: they are the usual way an upward import is hidden);
- no import circle between modules of `rl/`;
- no module imports another module's private (`_name`) function or class;
- code outside `rl/agents` never touches a protected member (`x._name`) of an agent;
- only rl/utils/private_apis.py reaches into another library's internals (`tensorflow.python`,
  `ray._private`, `model._flatten_layers`, ...), behind its version check;
- no module cites a file outside the repository (DESIGN.md);
- docs/architecture.md's layer table is `RANKS` with what each package imports; after a change
  to either, `.venv/bin/python tests/test_architecture.py` writes it anew.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "rl"
# Which package may import which: a package imports only packages of a lower rank (and its own
# modules). Packages of one rank do not import each other. `rl/__init__.py` imports the
# registries' packages to fill them and is no layer. The one definition of the layers:
# docs/architecture.md shows it in a table generated from here.
RANKS = {
    # names every layer shares
    "types": 0,
    "errors": 0,
    "registry": 1,
    "preemption": 1,
    "hparams": 2,
    "utils": 3,
    # what an algorithm is made of
    "envs": 4,
    "distribute": 5,
    "models": 5,
    "memory": 5,
    "rollout": 6,
    "agents": 7,
    # what runs the agents
    "evaluation": 8,
    "compiled": 8,
    "workers": 8,
    "engines": 9,
    "loop": 10,
    "test_mode": 10,
    "training": 11,
    # entry points and tools
    "cli": 12,
    "systems": 13,
    "export": 14,
    "plot": 14,
    "repro": 14,
    "tune": 14,
}
# Names under which code outside rl/agents holds an agent.
AGENT_NAMES = {"agent", "agents", "template", "learner", "member_agent"}


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@functools.cache  # one parse of rl/ for every check here (the trees are only read)
def modules() -> dict[str, ast.Module]:
    return {
        module_name(path): ast.parse(path.read_text(), str(path))
        for path in sorted(PACKAGE.rglob("*.py"))
    }


def imported_modules(name: str, tree: ast.Module, known: set[str]) -> set[str]:
    """The `rl` modules `name` imports (`from rl.x import y` counts rl.x.y if it is a module)."""
    out: set[str] = set()
    package = name if name in known and (PACKAGE / "/".join(name.split(".")[1:])).is_dir() else ""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative import
                anchor = (package or name).split(".")
                anchor = anchor[: len(anchor) - node.level + (1 if package else 0)]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [base] + [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        for target in targets:
            if target in known and target != name:
                out.add(target)
    return out


def import_graph() -> dict[str, set[str]]:
    trees = modules()
    known = set(trees)
    return {name: imported_modules(name, tree, known) for name, tree in trees.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle (as a list of modules, first == last), or None."""
    WHITE, GREY, BLACK = 0, 1, 2
    color = dict.fromkeys(graph, WHITE)
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        color[node] = GREY
        stack.append(node)
        for nxt in sorted(graph[node]):
            # A package importing its own submodules (its __init__ re-exporting them) is how
            # registries fill; a submodule importing its package back is the circle we look for.
            if node == nxt.rsplit(".", 1)[0] and nxt.startswith(node + "."):
                continue
            if color[nxt] == GREY:
                return [*stack[stack.index(nxt) :], nxt]
            if color[nxt] == WHITE:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        color[node] = BLACK
        return None

    for node in sorted(graph):
        if color[node] == WHITE:
            found = visit(node)
            if found:
                return found
    return None


def test_the_cycle_finder_finds_a_cycle_and_skips_package_init_reexports():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None
    assert find_cycle({"p": {"p.x"}, "p.x": set()}) is None


def test_no_import_circle_inside_rl():
    graph = import_graph()
    assert len(graph) > 100  # every module was read
    cycle = find_cycle(graph)
    assert cycle is None, "import circle: " + " -> ".join(cycle)


def package_of(module: str) -> str:
    """`rl.agents.dqn` -> "agents", `rl.loop` -> "loop"."""
    return module.split(".")[1]


def upward_imports(graph: dict[str, set[str]], ranks: dict[str, int]) -> list[str]:
    """Every import of a package of the same or a higher rank than the importer's."""
    return sorted(
        f"{name} imports {target} ({package_of(name)} {ranks[package_of(name)]} -> "
        f"{package_of(target)} {ranks[package_of(target)]})"
        for name, targets in graph.items()
        if name != "rl"
        for target in targets
        if target != "rl"
        and package_of(target) != package_of(name)
        and ranks[package_of(target)] >= ranks[package_of(name)]
    )


def test_the_rank_check_refuses_upward_and_sideways_imports():
    graph = {"rl.a.x": {"rl.b", "rl.a.y"}, "rl.b": {"rl.c.z"}, "rl.c.z": set(), "rl.a.y": set()}
    assert upward_imports(graph, {"a": 1, "b": 0, "c": 0}) == ["rl.b imports rl.c.z (b 0 -> c 0)"]
    assert upward_imports(graph, {"a": 2, "b": 1, "c": 0}) == []


def test_every_package_has_a_rank():
    packages = {package_of(name) for name in import_graph() if name != "rl"}
    assert packages == set(RANKS), (packages - set(RANKS), set(RANKS) - packages)


def test_packages_import_only_lower_ranks():
    offenders = upward_imports(import_graph(), RANKS)
    assert not offenders, "\n".join(offenders)


# docs/architecture.md shows RANKS, and what each package imports, in a block made here.
ARCHITECTURE_DOC = ROOT / "docs" / "architecture.md"
REGENERATE = ".venv/bin/python tests/test_architecture.py"
TABLE_BEGIN = (
    "<!-- generated from RANKS in tests/test_architecture.py and the imports of rl/; "
    f"regenerate with `{REGENERATE}` -->"
)
TABLE_END = "<!-- end of the generated layers -->"


def first_sentence(docstring: str) -> str:
    """What a docstring says first: up to its first `. `, `: ` or `; ` (or its end)."""
    text = " ".join(docstring.split())
    cuts = [i for i in (text.find(". "), text.find(": "), text.find("; ")) if i >= 0]
    return text[: min(cuts)] if cuts else text.rstrip(".")


def package_path(package: str) -> Path:
    """`agents` -> rl/agents/, `loop` -> rl/loop.py."""
    return PACKAGE / package if (PACKAGE / package).is_dir() else PACKAGE / f"{package}.py"


def layers_table(graph: dict[str, set[str]], ranks: dict[str, int]) -> str:
    """The markdown table of the layers, top rank first: each package with the first sentence
    of its docstring and the packages its modules import (highest rank first)."""
    imports: dict[str, set[str]] = {package: set() for package in ranks}
    for name, targets in graph.items():
        for target in targets:
            if "rl" not in (name, target) and package_of(target) != package_of(name):
                imports[package_of(name)].add(package_of(target))
    lines = ["| rank | package | what it is | imports (read from the code) |", "|---:|---|---|---|"]
    for package in sorted(ranks, key=lambda p: (-ranks[p], p)):
        path = package_path(package)
        init = path / "__init__.py" if path.is_dir() else path
        shown = f"rl/{package}/" if path.is_dir() else f"rl/{package}.py"
        what = first_sentence(ast.get_docstring(modules()[module_name(init)]) or "")
        below = sorted(imports[package], key=lambda p: (-ranks[p], p))
        lines.append(
            f"| {ranks[package]} | `{shown}` | {what} | {', '.join(below) or '(nothing of rl)'} |"
        )
    return "\n".join(lines) + "\n"


def with_layers_table(doc: str, table: str) -> str:
    """`doc` with the text between its two markers replaced by `table`."""
    before, begin, rest = doc.partition(TABLE_BEGIN + "\n")
    _, end, after = rest.partition(TABLE_END)
    assert begin and end, f"{ARCHITECTURE_DOC.name} lacks the markers of the layer table"
    return before + begin + table + end + after


def test_first_sentence_stops_at_the_first_full_stop_or_colon():
    assert first_sentence("Engines: what turns env steps\ninto updates.") == "Engines"
    assert first_sentence("Network factories, by name (explicit). More.") == (
        "Network factories, by name (explicit)"
    )
    assert first_sentence("Replays; built by name.") == "Replays"
    assert first_sentence("Learning curves.") == "Learning curves"


def test_the_docs_show_the_ranks_and_what_each_package_imports():
    doc = ARCHITECTURE_DOC.read_text(encoding="utf-8")
    table = layers_table(import_graph(), RANKS)
    assert all(f"`rl/{p}" in table for p in RANKS)  # every package has its row
    assert doc == with_layers_table(doc, table), (
        f"{ARCHITECTURE_DOC.relative_to(ROOT)}: the layer table differs from RANKS or from the "
        f"imports of rl/; regenerate it from the repository root with:\n    {REGENERATE}"
    )


def private_imports(name: str, tree: ast.Module) -> list[str]:
    """`from rl.x import _y` in module `name`, where rl.x is another module."""
    return [
        f"{name} imports {node.module}.{alias.name}"
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("rl")
        and node.module != name
        for alias in node.names
        if alias.name.startswith("_") and not alias.name.startswith("__")
    ]  # fmt: skip


def test_no_module_imports_a_private_name_of_another():
    offenders = [line for name, tree in modules().items() for line in private_imports(name, tree)]
    assert not offenders, offenders


def protected_agent_accesses(tree: ast.Module) -> list[tuple[int, str]]:
    """(line, text) of every `<agent>._name` where <agent> is a name or attribute that holds an
    agent by this codebase's naming (`agent`, `agents[i]`, `self.agent`, `member.agent`, ...)."""
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and node.attr.startswith("_")):
            continue
        if node.attr.startswith("__"):
            continue
        holder = node.value
        if isinstance(holder, ast.Subscript):
            holder = holder.value
        held_name = holder.id if isinstance(holder, ast.Name) else getattr(holder, "attr", None)
        if held_name in AGENT_NAMES:
            found.append((node.lineno, ast.unparse(node)))
    return found


def test_the_protected_access_finder_sees_the_usual_shapes():
    source = "agent._train(b)\nself.agent._x\nagents[0]._y\nrun.member_agent._z\nself._ok\n"
    found = sorted(text for _, text in protected_agent_accesses(ast.parse(source)))
    assert found == ["agent._train", "agents[0]._y", "run.member_agent._z", "self.agent._x"]


@pytest.mark.parametrize("where", ["rl", "benchmarks", "train.py"])
def test_nothing_outside_rl_agents_touches_a_protected_agent_member(where):
    root = ROOT / where
    paths = [root] if root.is_file() else sorted(root.rglob("*.py"))
    offenders = []
    for path in paths:
        if (PACKAGE / "agents") in path.parents:
            continue
        for line, text in protected_agent_accesses(ast.parse(path.read_text())):
            offenders.append(f"{path.relative_to(ROOT)}:{line}: {text}")
    assert not offenders, offenders


# Protected members a test may reach, each (file, `holder._name` as written) with its reason
# (none today: add one only where no public API should exist for it).
TESTS_REACHING_INSIDE: dict[tuple[str, str], str] = {}


def test_tests_use_public_behaviour_only():
    """Tests read rl (and other libraries) through what users and algorithm authors use: an
    agent's `train_on_batch`, `loss`, `learner_variables`, a replay's `storage`, a registry's
    `unregister`, ... so a refactor inside a class breaks no test. A test's own class reaches its
    own members (`self._x`) and its parent's hooks (`super()._update()`)."""
    offenders, reached = [], set()
    for path in sorted((ROOT / "tests").rglob("*.py")):
        name = str(path.relative_to(ROOT))
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.Attribute) and node.attr.startswith("_")):
                continue
            if node.attr.startswith("__") or node.attr in PUBLIC_UNDERSCORED:
                continue
            holder = node.value
            if isinstance(holder, ast.Name) and holder.id in ("self", "cls"):
                continue
            if isinstance(holder, ast.Call) and getattr(holder.func, "id", None) == "super":
                continue
            if (name, ast.unparse(node)) in TESTS_REACHING_INSIDE:
                reached.add((name, ast.unparse(node)))
                continue
            offenders.append(f"{name}:{node.lineno}: {ast.unparse(node)}")
    assert not offenders, offenders
    assert reached == set(TESTS_REACHING_INSIDE), "an exception that no test needs any more"


def test_no_module_cites_a_file_outside_the_repository():
    offenders = [
        str(path.relative_to(ROOT))
        for path in sorted([*PACKAGE.rglob("*.py"), *(ROOT / "benchmarks").rglob("*.py")])
        if "DESIGN.md" in path.read_text()
    ]
    assert not offenders, offenders


# Another library's private API is reached only through rl/utils/private_apis.py, which checks
# the library's version first: an upgrade then fails there, in one line.
PRIVATE_APIS_MODULE = "rl.utils.private_apis"
# Packages whose modules are their libraries' internals (the public API is `tf.*`, `keras.*`).
INTERNAL_PACKAGES = ("tensorflow.python", "tensorflow.core", "tensorflow.compiler", "keras.src")
# Underscored names that their owners document as public, with the owner.
PUBLIC_UNDERSCORED = {
    "_replace": "collections.namedtuple",
    "_asdict": "collections.namedtuple",
    "_fields": "collections.namedtuple",
    "_exit": "os._exit",
    "_request_timeout": "every call of the kubernetes client (its docstrings list it)",
    "_headers": "every call of the kubernetes client (its docstrings list it)",
    "_final_obs": "gymnasium's vector-env infos: `_<key>` masks the envs that report <key>",
    "_game_score": "gymnasium's vector-env infos: `_<key>` masks the envs that report <key>",
}
# Underscored names that rl defines for itself and a library too: on anything but `self` and
# `cls` they are the library's (the finder goes by name, not by type).
SHADOWED = {"_actions": "argparse.ArgumentParser._actions (rl/rollout/driver.py has its own)"}


def own_names(trees: dict[str, ast.Module]) -> set[str]:
    """The underscored names rl defines itself: functions, classes, module and class-body
    names, arguments, and attributes assigned on `self` or `cls` (also by `setattr`)."""
    names: set[str] = set()
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
            elif (
                isinstance(node, ast.Attribute)
                and isinstance(node.ctx, ast.Store)
                and isinstance(node.value, ast.Name)
                and node.value.id in ("self", "cls")
            ):
                names.add(node.attr)
            elif (
                isinstance(node, ast.Call)
                and getattr(node.func, "id", getattr(node.func, "attr", None))
                in ("setattr", "__setattr__")
                and len(node.args) > 1
                and isinstance(node.args[1], ast.Constant)
            ):
                names.add(str(node.args[1].value))
    return {name for name in names if name.startswith("_")}


def is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_api_uses(tree: ast.Module, own: set[str]) -> list[tuple[int, str]]:
    """(line, text) of every reach into another library's internals in `tree`: an import of an
    internal package or of an underscored module or name; `x._name`, a `_name=` keyword or a
    `"_name"` key where `_name` is neither rl's own nor a documented public name."""

    def foreign(name: str) -> bool:
        return is_private(name) and name not in own and name not in PUBLIC_UNDERSCORED

    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            if isinstance(node, ast.ImportFrom) and (node.level or node.module == "__future__"):
                continue
            if isinstance(node, ast.Import):
                modules, names = [alias.name for alias in node.names], []
            else:
                modules, names = [node.module], [alias.name for alias in node.names]
            if any(
                m.split(".")[0] != "rl"
                and (
                    m.startswith(INTERNAL_PACKAGES)
                    or any(is_private(part) for part in m.split("."))
                    or any(is_private(name) for name in names)
                )
                for m in modules
            ):
                found.append((node.lineno, ast.unparse(node)))
        elif isinstance(node, ast.Attribute) and (
            foreign(node.attr)
            or (node.attr in SHADOWED and getattr(node.value, "id", None) not in ("self", "cls"))
        ):
            found.append((node.lineno, ast.unparse(node)))
        elif isinstance(node, ast.keyword) and node.arg and foreign(node.arg):
            found.append((node.lineno, f"{node.arg}="))
        else:
            keys = node.keys if isinstance(node, ast.Dict) else []
            if isinstance(node, ast.Subscript):
                keys = [node.slice]
            for key in keys:
                if isinstance(key, ast.Constant) and isinstance(key.value, str):
                    if key.value.isidentifier() and foreign(key.value):
                        found.append((node.lineno, repr(key.value)))
    return sorted(found)


def test_the_private_api_finder_sees_the_usual_shapes():
    source = (
        "from tensorflow.python.framework import config\n"
        "from tensorflow.python.ops.parallel_for.control_flow_ops import pfor\n"
        "from some_lib.ops import _hidden\n"
        "from ray._private import state\n"
        "import keras.src.layers\n"
        "from rl.utils import private_apis\n"
        "from . import _sibling\n"
        "model._flatten_layers()\n"
        "self._get_variable_index(v)\n"
        "self._mine\n"
        "for action in parser._actions: self._actions.append(action)\n"
        "options['_system_config'] = {}\n"
        "ray.init(_system_config={}, address=a)\n"
        "state._replace(x=1)\n"
        "info['_final_obs']\n"
        "{'_mine': 1, 'public': 2}\n"
    )
    found = [text for _, text in private_api_uses(ast.parse(source), own={"_mine", "_actions"})]
    assert found == [
        "from tensorflow.python.framework import config",
        "from tensorflow.python.ops.parallel_for.control_flow_ops import pfor",
        "from some_lib.ops import _hidden",
        "from ray._private import state",
        "import keras.src.layers",
        "model._flatten_layers",
        "self._get_variable_index",
        "parser._actions",
        "'_system_config'",
        "_system_config=",
    ]


def test_only_private_apis_touches_other_libraries_internals():
    trees = modules()
    assert PRIVATE_APIS_MODULE in trees
    own = own_names(trees)
    offenders = [
        f"{name}:{line}: {text}"
        for name, tree in trees.items()
        if name != PRIVATE_APIS_MODULE
        for line, text in private_api_uses(tree, own)
    ]
    assert not offenders, "\n".join(offenders)


# Sizes a reader takes in at once: a function on one screen, a class without scrolling for long.
MAX_FUNCTION_LINES = 60
MAX_CLASS_LINES = 350


def oversized(tree: ast.Module) -> list[tuple[int, str, int]]:
    """(line, name, lines) of every function over MAX_FUNCTION_LINES and class over
    MAX_CLASS_LINES in `tree`, nested ones included (decorators not counted)."""
    found = []
    for node in ast.walk(tree):
        limit = (
            MAX_FUNCTION_LINES
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            else MAX_CLASS_LINES
            if isinstance(node, ast.ClassDef)
            else None
        )
        if limit is not None and node.end_lineno - node.lineno + 1 > limit:
            found.append((node.lineno, node.name, node.end_lineno - node.lineno + 1))
    return found


def test_the_size_check_sees_a_long_function_and_a_long_class():
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    assert oversized(ast.parse(f"def f():\n{body}\n")) == [(1, "f", MAX_FUNCTION_LINES + 1)]
    assert oversized(ast.parse(f"def f():\n{body[:-9]}\n")) == []
    methods = "\n".join(f"    def m{i}(self):\n        pass" for i in range(MAX_CLASS_LINES // 2))
    assert [name for _, name, _ in oversized(ast.parse(f"class C:\n{methods}\n"))] == ["C"]


def test_no_function_over_60_lines_and_no_class_over_350_in_rl():
    offenders = [
        f"{name}:{line}: {what} has {lines} lines"
        for name, tree in modules().items()
        for line, what, lines in oversized(tree)
    ]
    assert not offenders, "\n".join(offenders)


if __name__ == "__main__":  # rewrites the layer table of docs/architecture.md
    text = ARCHITECTURE_DOC.read_text(encoding="utf-8")
    ARCHITECTURE_DOC.write_text(with_layers_table(text, layers_table(import_graph(), RANKS)))
    print(f"{ARCHITECTURE_DOC.relative_to(ROOT)}: layer table written")
