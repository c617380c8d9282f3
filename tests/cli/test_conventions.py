"""One set of command-line conventions: every option explained, every command's help ends
with examples, whole descriptions in the command list, one spelling per idea (old
spellings still work, with a note), and an experiment folder as --checkpoint."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from aligner.cli import COMMANDS, main
from aligner.cli.options import resolve_checkpoint


def all_commands() -> list[tuple[str, click.Command]]:
    ctx = click.Context(main)
    out = []
    for name in sorted(COMMANDS):
        cmd = main.get_command(ctx, name)
        if isinstance(cmd, click.Group):
            out += [(f"{name} {sub}", c) for sub, c in cmd.commands.items()]
        else:
            out.append((name, cmd))
    return out


COMMAND_LIST = all_commands()


@pytest.mark.parametrize(("name", "cmd"), COMMAND_LIST, ids=[n for n, _ in COMMAND_LIST])
def test_every_option_is_explained_and_the_help_ends_with_examples(name, cmd):
    missing = [
        p.opts[0] for p in cmd.params if isinstance(p, click.Option) and not p.hidden and not p.help
    ]
    assert not missing, f"{name}: options without help: {missing}"
    text = CliRunner().invoke(main, [*name.split(), "--help"]).output
    tail = text.split("Example")[-1]
    assert "Example" in text and f"aligner {name.split()[0]}" in tail, text
    assert text.index("Example") > text.index("Usage"), text
    assert "None]" not in text, text  # an unbounded number's range, as click writes it


def test_the_command_list_shows_whole_descriptions():
    text = CliRunner().invoke(main, ["--help"]).output
    listing = " ".join(text.split("Commands:")[1].split())
    for cmd in [c for n, c in COMMAND_LIST if " " not in n]:
        first = " ".join(cmd.help.split("\n\n")[0].split())
        assert first in listing, first
    assert "..." not in listing.replace("WORD...", "")


def test_one_spelling_per_idea():
    spellings = {
        opt
        for _, cmd in COMMAND_LIST
        for p in cmd.params
        if isinstance(p, click.Option) and not p.hidden
        for opt in p.opts
    }
    for old in ("--max-len-ratio", "--manifest", "--text-file", "--force-restart"):
        assert old not in spellings
    assert "--max-length-ratio" in spellings and "--in" in spellings


def test_old_spellings_still_work_with_a_note(tmp_path):
    r = CliRunner().invoke(
        main,
        [
            "align",
            "--checkpoint",
            str(tmp_path / "x.pt"),
            "--manifest",
            str(tmp_path / "m.jsonl"),
            "--out",
            str(tmp_path / "o"),
        ],
    )
    assert "--manifest is now spelled --in" in r.stderr
    assert "m.jsonl" in r.output and "Traceback" not in r.output


def test_an_experiment_folder_as_checkpoint_is_its_best_else_its_latest(tmp_path):
    exp = tmp_path / "exp"
    (exp / "checkpoints").mkdir(parents=True)
    (exp / "checkpoints" / "avg.pt").touch()
    with pytest.raises(click.BadParameter, match="without best.pt or ckpt-STEP.pt.*avg.pt"):
        resolve_checkpoint(None, None, exp)
    (exp / "checkpoints" / "ckpt-00000010.pt").touch()
    (exp / "checkpoints" / "ckpt-00000009.pt").touch()
    assert resolve_checkpoint(None, None, exp) == exp / "checkpoints" / "ckpt-00000010.pt"
    (exp / "checkpoints" / "best.pt").touch()
    assert resolve_checkpoint(None, None, exp) == exp / "checkpoints" / "best.pt"
    assert resolve_checkpoint(None, None, exp / "checkpoints") == exp / "checkpoints" / "best.pt"
    assert resolve_checkpoint(None, None, (exp,)) == (exp / "checkpoints" / "best.pt",)
    assert resolve_checkpoint(None, None, exp / "a.pt") == exp / "a.pt"
