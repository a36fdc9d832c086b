"""The import graph of the project's own modules has no cycle.

Every ``import`` and ``from ... import`` statement counts, function-local ones included: a
cycle held together by an import inside a function is still a cycle.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
PACKAGES = {
    "bla_metric": REPO_ROOT / "bla_metric",
    "bla_eval": REPO_ROOT / "space" / "bla_eval",
    "bla_space": REPO_ROOT / "space" / "bla_space",
    "builders": REPO_ROOT / "builders",
}


def project_modules() -> dict[str, Path]:
    """Dotted module name -> file, for every module of the project's packages."""
    modules = {}
    for package, base in PACKAGES.items():
        for path in base.rglob("*.py"):
            parts = [package, *path.relative_to(base).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join(parts)] = path
    return modules


def imported_names(module: str, path: Path) -> Iterator[str]:
    """Every dotted name an import statement of the module names (relative ones resolved)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = module.split(".")
                if path.name != "__init__.py":
                    parent = parent[:-1]
                parent = parent[: len(parent) - node.level + 1]
                base = ".".join([*parent, *([node.module] if node.module else [])])
            yield base
            yield from (f"{base}.{alias.name}" for alias in node.names)


def import_graph() -> dict[str, set[str]]:
    """Module -> the project modules it imports (a name is mapped to its longest module)."""
    modules = project_modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for target in imported_names(name, path):
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                graph[name].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_graph_sees_every_package_and_function_local_imports():
    graph = import_graph()
    assert {name.split(".")[0] for name in graph} == set(PACKAGES)
    assert sum(len(targets) for targets in graph.values()) > 300
    # bla_eval.cli imports its subcommands inside functions (to keep --help free of torch)
    assert any(target.startswith("bla_eval.") for target in graph["bla_eval.cli"])


def test_cycles_are_found():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert cycles(graph) == [["a", "b", "c"]]


def test_no_import_cycle_in_the_project():
    found = cycles(import_graph())
    assert not found, "import cycles: " + "; ".join(" <-> ".join(c) for c in found)


def test_the_engine_never_imports_the_builders():
    graph = import_graph()
    bad = sorted(
        f"{name} -> {target}"
        for name, targets in graph.items()
        if not name.startswith("builders")
        for target in targets
        if target.startswith("builders")
    )
    assert not bad


def test_the_metric_imports_only_itself():
    graph = import_graph()
    bad = sorted(
        f"{name} -> {target}"
        for name, targets in graph.items()
        if name.startswith("bla_metric")
        for target in targets
        if not target.startswith("bla_metric")
    )
    assert not bad
