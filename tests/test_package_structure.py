"""The package's shape: no import cycles, and an engine short enough to read beside lesson 2."""
import ast
import inspect
import pathlib

import teachgrad
from teachgrad.autodiff import engine

PACKAGE = pathlib.Path(teachgrad.__file__).parent


def _module_name(path):
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path, modules):
    """The package's modules that ``path`` imports, at the top or inside a function."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")
            if node.level:
                base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module
            for alias in node.names:
                full = f"{target}.{alias.name}"
                found.add(full if full in modules else target)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found & modules - {name}


def _import_graph():
    paths = sorted(PACKAGE.rglob("*.py"))
    modules = {_module_name(p) for p in paths}
    return {_module_name(p): _imports(p, modules) for p in paths}


def _cycle(graph):
    """One import cycle as a list of modules, or None (a depth-first search)."""
    state = {}

    def visit(module, trail):
        state[module] = "open"
        for other in sorted(graph[module]):
            if state.get(other) == "open":
                return trail[trail.index(other):] + [other]
            if other not in state:
                found = visit(other, trail + [other])
                if found:
                    return found
        state[module] = "done"
        return None

    for module in sorted(graph):
        if module not in state:
            found = visit(module, [module])
            if found:
                return found
    return None


def test_the_cycle_finder_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_no_module_imports_a_module_that_imports_it_back():
    cycle = _cycle(_import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_backward_reads_on_one_screen():
    lines = inspect.getsource(engine.backward).splitlines()
    assert len(lines) <= 50, f"engine.backward has grown to {len(lines)} lines"
