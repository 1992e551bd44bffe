"""Import hygiene that the concurrent runner depends on.

Checks import their heavy modules lazily, inside `run`, from worker threads. Two threads importing modules
that depend on each other at the top level (a cycle) can deadlock in the import system; Python then raises
`_DeadlockError` in one of them and that check crashes. A package `__init__` that imports its own
submodules is the usual way such a cycle appears (parent → child, and child → parent). These tests keep the
top-level import graph of capdoctor acyclic, so lazy imports from threads are safe.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _top_level_imports(path: Path) -> set[str]:
    """Modules a file imports while it is being imported (not in functions, not under TYPE_CHECKING)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()

    def visit(nodes: list[ast.stmt]) -> None:
        for node in nodes:
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.add(node.module)
                found.update(f"{node.module}.{alias.name}" for alias in node.names)
            elif isinstance(node, ast.If):
                if "TYPE_CHECKING" not in ast.unparse(node.test):
                    visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                visit(node.body)
                for handler in node.handlers:
                    visit(handler.body)

    visit(tree.body)
    return {name for name in found if name.startswith("capdoctor")}


def _graph() -> dict[str, set[str]]:
    files = {_module_name(p): p for p in SRC.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        deps = {d for d in _top_level_imports(path) if d in files and d != name}
        parent = name.rpartition(".")[0]
        if parent and parent in files:
            deps.add(parent)  # importing a.b runs a's __init__ first
        graph[name] = deps
    return graph


def test_no_package_init_imports_its_own_submodules() -> None:
    graph = _graph()
    offenders = {
        pkg: sorted(d for d in deps if d.startswith(pkg + "."))
        for pkg, deps in graph.items()
        if (SRC / pkg.replace(".", "/") / "__init__.py").exists()
    }
    assert {k: v for k, v in offenders.items() if v} == {}


def test_top_level_import_graph_is_acyclic() -> None:
    graph = _graph()
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for dep in sorted(graph.get(node, ())):
            if state.get(dep) == 1:
                raise AssertionError("import cycle: " + " -> ".join([*trail[trail.index(dep) :], dep]))
            if dep not in state:
                visit(dep, [*trail, dep])
        state[node] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
