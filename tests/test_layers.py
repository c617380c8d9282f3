"""The layer picture of docs/design.md: a module imports only from its own layer or the
layers below it; nothing outside train/ and cli/ imports aligner.train; the attention core
imports nothing of aligner but itself; alignment output (records, tiers, TextGrids) has
one room, which imports only the core, `aligner.files` and itself."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "aligner"
# bottom to top; the bottom floor shares one level
LEVELS = {
    "attention": 0,
    "alignment": 0,
    "audio": 0,
    "text": 0,
    "checkpoint": 0,
    "config": 0,
    "families": 0,
    "files": 0,
    "__init__": 0,
    "data": 1,
    "models": 2,
    "decode": 3,
    "tasks": 4,
    "train": 5,
    "evaluation": 6,
    "inference": 7,
    "pipeline": 8,
    "cli": 9,
}
MODULES = sorted(PACKAGE.rglob("*.py"))


def room(module: str) -> str:
    """`aligner.data.collate` -> `data`; `aligner.checkpoint` -> `checkpoint`."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def imported(path: Path) -> set[str]:
    """The aligner modules `path` imports (anywhere in it, lazy imports included)."""
    here = "aligner." + ".".join(path.relative_to(PACKAGE).with_suffix("").parts)
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against this module's package
                base = here.split(".")[: -node.level]
                found.add(".".join([*base, node.module] if node.module else base))
            elif node.module:
                found.add(node.module)
    return {m for m in found if m == "aligner" or m.startswith("aligner.")}


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_only_point_down(path: Path) -> None:
    own = room("aligner." + ".".join(path.relative_to(PACKAGE).with_suffix("").parts))
    for target in imported(path):
        other = room(target)
        assert LEVELS[other] <= LEVELS[own], f"{path.name} ({own}) imports {target} ({other})"
        if other == "train":
            assert own in ("train", "pipeline", "cli"), f"{path.name} ({own}) imports {target}"
        if own == "attention":
            assert other == "attention", f"the attention core imports {target}"
        if own == "alignment":
            assert other in ("alignment", "attention", "files"), f"{path.name} imports {target}"


def test_alignment_formats_live_in_one_room() -> None:
    """Only aligner/alignment/ writes or parses TextGrids and durations records: no other
    module opens praatio or names the record's file suffix."""
    for path in MODULES:
        if path.parent.name == "alignment":
            continue
        text = path.read_text()
        assert "praatio" not in text, f"{path.relative_to(PACKAGE)} uses praatio"
        assert '".durations.json"' not in text, f"{path.relative_to(PACKAGE)} names the record"


def test_every_room_is_placed() -> None:
    rooms = {
        room("aligner." + ".".join(p.relative_to(PACKAGE).with_suffix("").parts)) for p in MODULES
    }
    assert rooms <= set(LEVELS)
