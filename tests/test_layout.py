"""The package's layout as contracts over its import graph, read from the source (imports inside
functions included): no cycle, the layers' directions, short module docstrings."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "winellbot"

# The command layer: the only modules that may build the bot's collaborators from the settings.
FACTORY_USERS = ("winellbot.cli", "winellbot.commands", "winellbot.operations", "winellbot.demo",
                 "winellbot.bench.", "winellbot.editor.cli", "winellbot.outcomes.cli")
# Where a module may import another inside a function: only for what is heavy or optional, each
# import marked with its reason on the line before it or on its own line ("# lazy: ...").
LAZY_MARK = "lazy:"


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _target(module: str, node: ast.ImportFrom, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _with_parents(name: str) -> set[str]:
    """Importing ``a.b.c`` runs ``a/__init__`` and ``a/b/__init__`` first: those are edges too."""
    parts = name.split(".")
    return {".".join(parts[:i]) for i in range(2, len(parts) + 1)} & set(MODULES)


def imports(module: str) -> set[str]:
    """Every winellbot module that ``module`` imports, at the top or inside a function."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("winellbot"):
                    out |= _with_parents(alias.name)
        elif isinstance(node, ast.ImportFrom):
            name = _target(module, node, path.name == "__init__.py")
            if not name.startswith("winellbot"):
                continue
            out |= _with_parents(name)
            out |= {f"{name}.{a.name}" for a in node.names if f"{name}.{a.name}" in MODULES}
    parents = _with_parents(module) - {module}  # a module never "imports" the package it sits in
    return out - {module} - parents


GRAPH = {m: imports(m) for m in MODULES}


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
            node, edges = work[-1]
            nxt = next(edges, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
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


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_graph_sees_imports_inside_functions():
    # the bot imports the wiki reader inside a function only; the graph must still have the edge
    assert any(m.startswith("winellbot.wiki") for m in GRAPH["winellbot.factory"])
    assert "winellbot.gates.base" in GRAPH["winellbot.gates.registry"]


def test_no_import_cycle_among_the_packages_modules():
    assert cycles(GRAPH) == []


@pytest.mark.parametrize("layer, forbidden", [
    ("winellbot.search", "winellbot.pipeline"),
    ("winellbot.llm", "winellbot.editor"),
    ("winellbot.llm", "winellbot.pipeline"),
    ("winellbot.gates", "winellbot.wiki"),
    ("winellbot.state", "winellbot.pipeline"),
])
def test_a_lower_layer_does_not_import_a_higher_one(layer, forbidden):
    wrong = {m: sorted(d for d in GRAPH[m] if d == forbidden or d.startswith(forbidden + "."))
             for m in GRAPH if m == layer or m.startswith(layer + ".")}
    assert {m: d for m, d in wrong.items() if d} == {}


def test_only_the_commands_and_the_back_test_import_the_factory():
    users = sorted(m for m, deps in GRAPH.items() if "winellbot.factory" in deps)
    assert [m for m in users if not m.startswith(FACTORY_USERS)] == []


def test_the_local_wiki_is_not_part_of_the_bots_wiki_access():
    assert not any("localwiki" in m for m in MODULES if m.startswith("winellbot.wiki"))
    assert [m for m, deps in GRAPH.items() if "winellbot.localwiki" in deps] == ["winellbot.demo"]


def test_no_module_docstring_runs_over_25_lines():
    long = {}
    for module, path in MODULES.items():
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")), clean=False)
        if doc and len(doc.splitlines()) > 25:
            long[module] = len(doc.splitlines())
    assert long == {}


def _lazy_imports(path: Path) -> list[int]:
    """Line numbers of the imports of winellbot modules made inside a function."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(fn):
                if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("winellbot")):
                    found.add(node.lineno)
                elif isinstance(node, ast.Import) and any(a.name.startswith("winellbot") for a in node.names):
                    found.add(node.lineno)
    return sorted(found)


def test_an_import_inside_a_function_says_why():
    """A module imports its own package's modules at the top; one inside a function gives its reason
    (``# lazy: ...`` on the line above, or one ``# lazy imports: ...`` for a command module)."""
    unexplained = {}
    for module, path in MODULES.items():
        lines = path.read_text(encoding="utf-8").splitlines()
        if any(line.startswith("# lazy imports:") for line in lines):
            continue
        bare = [n for n in _lazy_imports(path) if LAZY_MARK not in lines[n - 1] and LAZY_MARK not in lines[n - 2]]
        if bare:
            unexplained[module] = bare
    assert unexplained == {}


def test_the_lazy_import_check_sees_an_import_inside_a_function(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("import os\n\n\ndef f():\n    from winellbot import text\n    return text\n")
    assert _lazy_imports(path) == [5]
