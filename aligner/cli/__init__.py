"""The `aligner` command line: a click group whose sub-commands are imported lazily.

Each sub-command lives in its own module of this package and only handles arguments;
the work is done by the library. Errors the user can fix are raised as
``click.ClickException`` (one line, exit code 1), never as a traceback.
"""

from __future__ import annotations

import importlib
import sys

import click

from aligner import __version__
from aligner.cli.errors import describe_os_error
from aligner.files import OutputError

# name -> "module:attribute"; a module is imported only when its command runs.
COMMANDS: dict[str, str] = {
    "prepare": "aligner.cli.prepare:prepare",
    "train": "aligner.cli.train:train",
    "evolution": "aligner.cli.train:evolution",
    "synthesize": "aligner.cli.speech:synthesize",
    "convert": "aligner.cli.speech:convert",
    "vocode": "aligner.cli.speech:vocode",
    "align": "aligner.cli.align:align",
    "plot": "aligner.cli.align:plot",
    "demo": "aligner.cli.demo:demo",
    "g2p": "aligner.cli.text:g2p",
    "translate": "aligner.cli.text:translate",
    "average": "aligner.cli.average:average",
    "score": "aligner.cli.score:score",
    "score-alignment": "aligner.cli.score:score_alignment",
    "segment": "aligner.cli.segment:segment",
}


class LazyGroup(click.Group):
    """A click group that imports a sub-command's module only when it is used."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(name for name in COMMANDS if self._available(name))

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        module_name, attr = COMMANDS[name].split(":")
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as err:
            if err.name == module_name:
                return None
            raise
        return getattr(module, attr, None)

    def invoke(self, ctx: click.Context):
        """Run the command; an operating-system error (a full disk, a read-only folder) or
        exhausted memory that no command caught becomes one line, never a traceback."""
        try:
            return super().invoke(ctx)
        except BrokenPipeError:  # `aligner g2p ... | head`: the reader left
            sys.stderr.close()
            raise click.exceptions.Exit(1) from None
        except OSError as err:
            raise click.ClickException(describe_os_error(err)) from None
        except OutputError as err:
            raise click.ClickException(str(err)) from None
        except MemoryError:
            raise click.ClickException(
                "out of memory: use a smaller --batch-size or shorter inputs"
            ) from None

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list with each command's whole first paragraph (click cuts it at
        about 45 characters)."""
        rows = []
        for name in self.list_commands(ctx):
            cmd = self.get_command(ctx, name)
            if cmd is not None and not cmd.hidden:
                rows.append((name, " ".join((cmd.help or "").split("\n\n")[0].split())))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows, col_max=16)

    @staticmethod
    def _available(name: str) -> bool:
        module_name = COMMANDS[name].split(":")[0]
        return importlib.util.find_spec(module_name) is not None


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="aligner")
def main() -> None:
    """aligner: attention-based sequence-to-sequence alignment for speech and text."""


if __name__ == "__main__":  # pragma: no cover
    main()
