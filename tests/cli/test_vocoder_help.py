"""The `--vocoder` help of every command that plays mels names each form the option takes:
griffin-lim, a HiFi-GAN release (hifigan:DIR) and a vocoder trained here (its experiment
folder or checkpoint), as `aligner.models.vocoders.base.load_vocoder` accepts them."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from aligner.cli import main

FORMS = ["griffin-lim", "hifigan:DIR", "experiment folder", "checkpoint"]


@pytest.mark.parametrize("command", ["synthesize", "convert", "vocode", "demo"])
def test_the_help_names_every_vocoder_form(command):
    result = CliRunner().invoke(main, [command, "--help"], terminal_width=100)
    assert result.exit_code == 0, result.output
    cmd = main.get_command(click.Context(main), command)
    option = next(p for p in cmd.params if p.name == "vocoder")
    shown = " ".join(result.output.split())
    assert " ".join(option.help.split()) in shown  # what --help prints for --vocoder
    missing = [form for form in FORMS if form not in option.help]
    assert not missing, f"{command} --help: --vocoder does not name {missing}"
