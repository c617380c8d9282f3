"""The README's attention-core example runs as written."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def section(text: str, heading: str) -> str:
    """The text under ``heading`` up to the next heading of the same level."""
    start = text.index(heading)
    rest = text[start + len(heading) :]
    end = re.search(r"^## ", rest, flags=re.MULTILINE)
    return rest[: end.start()] if end else rest


def python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)


def test_attention_core_example_runs() -> None:
    blocks = python_blocks(section(README.read_text(), "## The attention core"))
    assert blocks, "no python example under '## The attention core'"
    for code in blocks:
        exec(compile(code, str(README), "exec"), {"__name__": "readme"})


def test_python_api_example_names_what_exists() -> None:
    """The Python API example's imports run, and every method it names exists."""
    import aligner.inference as inference

    blocks = python_blocks(section(README.read_text(), "## Python API"))
    assert blocks, "no python example under '## Python API'"
    imports = [line for line in blocks[0].splitlines() if line.startswith(("from ", "import "))]
    exec(compile("\n".join(imports), str(README), "exec"), {"__name__": "readme"})
    for name in ("encode_text", "generate", "teacher_force", "vocode"):
        assert callable(getattr(inference.TTSModel, name))
    for name in ("source_mel", "generate", "teacher_force", "vocode"):
        assert callable(getattr(inference.VCModel, name))
    for name in ("encode", "decode", "text", "convert"):
        assert callable(getattr(inference.TextModel, name))
