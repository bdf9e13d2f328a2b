"""The layering of `rl/`, read from the source with `ast` (docs/architecture.md, "Layers").

- no import circle between modules of `rl/` (imports inside functions count: they are the
  usual way a circle is hidden);
- `rl/agents` never imports the loop, the engines, the compiled programs or the workers;
- code outside `rl/agents` never touches a protected member (`x._name`) of an agent;
- no module cites a file outside the repository (DESIGN.md).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "rl"
# What the algorithm layer must never reach up into.
ABOVE_AGENTS = ("rl.loop", "rl.training", "rl.engines", "rl.compiled", "rl.workers", "rl.driver")
# Names under which code outside rl/agents holds an agent.
AGENT_NAMES = {"agent", "agents", "template", "learner", "member_agent"}


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


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


def test_agents_never_import_the_layers_above_them():
    graph = import_graph()
    offenders = sorted(
        f"{name} imports {target}"
        for name, targets in graph.items()
        if name.startswith("rl.agents")
        for target in targets
        if target.startswith(ABOVE_AGENTS)
    )
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


def test_no_module_cites_a_file_outside_the_repository():
    offenders = [
        str(path.relative_to(ROOT))
        for path in sorted(PACKAGE.rglob("*.py"))
        if "DESIGN.md" in path.read_text()
    ]
    assert not offenders, offenders
