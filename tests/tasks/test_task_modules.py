"""A task module (the ``task_module`` of a family's role, `aligner.families`) imports no other task module: what the tasks share
lives in helper modules of aligner/tasks/ (speech.py, speech_data.py, truth.py, ...)."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

from aligner.families import FAMILIES

TASK_MODULES = sorted({r.task_module for f in FAMILIES.values() for r in f.roles.values()})


def imported(module: str) -> set[str]:
    """The modules `module` imports (and the names it imports from them), lazy and
    relative imports included."""
    path = Path(importlib.util.find_spec(module).origin)
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = module.rsplit(".", node.level)[0] if node.level else ""
            name = ".".join(part for part in (base, node.module) if part)
            found.add(name)
            found.update(f"{name}.{a.name}" for a in node.names)
    return found


@pytest.mark.parametrize("module", TASK_MODULES)
def test_a_task_module_imports_no_other_task_module(module: str) -> None:
    others = set(TASK_MODULES) - {module}
    assert not imported(module) & others, f"{module} imports {imported(module) & others}"
