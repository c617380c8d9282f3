"""The documents a user reads hold up: every `aligner ...` command line of the README names a
command and options that exist, every link leads to a file (and heading) of the repository,
no document sends the reader to a file outside it, and the README stays a short guide."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import click
import pytest

from aligner.cli import main

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCUMENTS = sorted(
    [README, *ROOT.glob("docs/**/*.md"), *ROOT.glob("egs/**/*.md")],
    key=lambda p: str(p),
)
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def readme_commands() -> list[str]:
    """Every `aligner ...` command of the README's shell blocks and inline code, one string
    each (continuation lines joined, comments and `[optional]` brackets dropped)."""
    text = README.read_text(encoding="utf-8")
    lines = []
    for block in re.findall(r"```bash\n(.*?)```", text, flags=re.DOTALL):
        lines += block.replace("\\\n", " ").splitlines()
    lines += re.findall(r"`(aligner [^`]+)`", text.replace("\n", " "))
    commands = []
    for line in lines:
        line = line.split(" #")[0].strip()
        if "aligner " in line and not line.startswith(("cd ", "pip ", "python")):
            line = line[line.index("aligner ") :]
            commands.append(re.sub(r"[\[\]]", "", line))
    return commands


def command_of(words: list[str]) -> tuple[click.Command, list[str]]:
    """The (sub)command the words name and the words after its name."""
    command: click.Command = main
    rest = words[1:]
    while isinstance(command, click.Group) and rest and not rest[0].startswith("-"):
        found = command.get_command(click.Context(command), rest[0])
        assert found is not None, f"no command {rest[0]!r} in: {' '.join(words)}"
        command, rest = found, rest[1:]
    return command, rest


def test_the_readme_has_commands_to_check():
    assert len(readme_commands()) >= 20


@pytest.mark.parametrize("line", readme_commands())
def test_each_readme_command_names_a_command_and_its_options(line):
    words = shlex.split(line)
    command, rest = command_of(words)
    assert not isinstance(command, click.Group), f"{line}: names a group, not a command"
    known = {opt for p in command.params for opt in (*p.opts, *p.secondary_opts)} | {"--help"}
    used = {w.split("=")[0] for w in rest if w.startswith("--")}
    assert used <= known, f"{line}: {sorted(used - known)} not options of {command.name}"


def test_several_voices_parse_as_the_readme_writes_them(tmp_path):
    """`prepare espeak OUT --voices V1 V2` parses as the README spells it (tests/cli has more)."""
    line = next(c for c in readme_commands() if "--parallel" in c)
    words = shlex.split(line.replace("--parallel", "--voices"))
    command, rest = command_of(words)
    ctx = command.make_context(command.name, [str(tmp_path / "out"), *rest[1:]])
    assert len(ctx.params["voices"]) == 2


def anchors(path: Path) -> set[str]:
    """GitHub's anchors of a Markdown file's headings."""
    found = set()
    for heading in re.findall(r"^#+ (.+)$", path.read_text(encoding="utf-8"), flags=re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        found.add(slug)
    return found


@pytest.mark.parametrize("doc", DOCUMENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_leads_to_a_file_of_the_repository(doc):
    text = re.sub(r"```.*?```", "", doc.read_text(encoding="utf-8"), flags=re.DOTALL)
    for target in LINK.findall(text):
        if target.startswith(("http://", "https://", "mailto:")):
            continue
        file, _, anchor = target.partition("#")
        path = (doc.parent / file).resolve() if file else doc
        assert path.is_relative_to(ROOT), f"{doc.name}: {target} leads outside the repository"
        assert path.exists(), f"{doc.name}: {target} does not exist"
        if anchor and path.suffix == ".md":
            assert anchor in anchors(path), f"{doc.name}: no heading #{anchor} in {file}"


@pytest.mark.parametrize("doc", DOCUMENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_document_names_a_file_outside_the_repository(doc):
    text = doc.read_text(encoding="utf-8")
    outside = re.findall(r"(?:^|[\s(`'\"])(/wor[k]/\S*|/home/\S*|\.\./shared\S*|DESIGN\.md)", text)
    assert not outside, f"{doc.name} names files outside the repository: {outside}"


def test_the_readme_is_a_short_guide_that_starts_with_the_two_set_up_commands():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) < 300
    first = re.search(r"```bash\n(.*?)```", text, flags=re.DOTALL).group(1).splitlines()
    assert [line.split()[:2] for line in first] == [["make", "demo"], ["make", "test"]]
    results = text[text.index("## Results") :]
    pages = re.findall(r"\]\(([^)#]+)", results)
    assert {p for p in pages if p.endswith("RESULTS.md")} and "docs/results.md" in pages
