"""No import cycle in the package, counting the imports inside functions: a module's
graph edge is every ``import`` anywhere in it. The command line's lazy command table
(`aligner.cli.COMMANDS`, imported by name with importlib) is the one place a module is
imported late, and it is not an ``import`` statement."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "aligner"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def resolve(name: str) -> str | None:
    """The module of the package that `name` (a module, or a name in one) lies in."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def edges(module: str) -> set[str]:
    """The package's modules that `module` imports, anywhere in it."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, *([node.module] if node.module else [])])
            names = [base, *(f"{base}.{a.name}" for a in node.names)]
        else:
            continue
        found.update(r for n in names if (r := resolve(n)) and r != module)
    return found


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_the_package_has_no_import_cycle() -> None:
    graph = {m: edges(m) for m in MODULES}
    assert cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle_through_a_function_level_import(tmp_path) -> None:
    """The check could fail: a cycle closed by an import inside a function is found."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
    source = "def f():\n    from aligner.inference.loading import load_model\n"
    tree = ast.parse(source)
    inner = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert inner and resolve(inner[0].module) == "aligner.inference.loading"


def test_the_command_list_loads_no_torch() -> None:
    """Why the command modules import the library inside their functions, the one place
    function-level imports stay: ``aligner --help`` imports every command module to list
    its help, and should not wait for torch."""
    import subprocess
    import sys

    code = (
        "import sys; from aligner.cli import COMMANDS, main; import click; "
        "ctx = click.Context(main); [main.get_command(ctx, n) for n in COMMANDS]; "
        "print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_only_the_command_modules_import_the_package_inside_functions() -> None:
    late = [
        f"{module}:{node.lineno}"
        for module, path in MODULES.items()
        if not module.startswith("aligner.cli")
        for fn in ast.walk(ast.parse(path.read_text()))
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
        for node in ast.walk(fn)
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("aligner")
    ]
    assert late == []
