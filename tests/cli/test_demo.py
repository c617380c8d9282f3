"""aligner demo's choices: which checkpoint it synthesizes with, and the TensorBoard command."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from aligner.checkpoint import atomic_save
from aligner.pipeline.demo import DemoError, chosen_checkpoint
from aligner.train.run import tensorboard_command


def _save(path: Path, step: int) -> None:
    atomic_save({"model": {}, "step": step, "config": {}}, path)


def test_best_checkpoint_is_used_and_named(tmp_path, capsys):
    folder = tmp_path / "checkpoints"
    _save(folder / "ckpt-00000300.pt", 300)
    _save(folder / "ckpt-00000200.pt", 200)
    assert chosen_checkpoint(tmp_path) == folder / "ckpt-00000300.pt"
    assert "the latest checkpoint (no best.pt" in capsys.readouterr().out
    _save(folder / "best.pt", 200)
    assert chosen_checkpoint(tmp_path) == folder / "best.pt"
    assert "lowest validation loss, at step 200 (the last is step 300)" in capsys.readouterr().out
    with pytest.raises(DemoError, match="no usable checkpoint in"):
        chosen_checkpoint(tmp_path / "empty")


def test_tensorboard_command_is_next_to_this_python():
    command = tensorboard_command("demo/exp/tb", "demo")
    program = Path(sys.executable).parent / "tensorboard"
    expected = str(program) if program.is_file() else "tensorboard"
    assert command == f"{expected} --logdir_spec demo:demo/exp/tb"


@pytest.mark.slow
def test_the_demo_runs_its_stages_as_library_calls_from_any_folder(tmp_path, monkeypatch):
    """`aligner demo` from a folder without recipes/ (as after `pip install .`): corpus,
    training, synthesis, alignment and its score; a second run keeps what is done."""
    from click.testing import CliRunner

    from aligner.cli import main

    monkeypatch.chdir(tmp_path)
    args = ["demo", "--minutes", "0.2", "--utterances", "20", "--out", "d"]
    args += ["--align-minutes", "0.1", "--vocoder-minutes", "0.1"]
    first = CliRunner().invoke(main, args)
    assert first.exit_code == 0, first.output
    d = tmp_path / "d"
    assert (d / "demo.wav").is_file() and (d / "exp" / ".done").exists()
    assert (d / "aligner" / ".done").exists() and (d / "vocoder" / ".done").exists()
    assert len(list((d / "data" / "durations" / "valid").glob("*.durations.json"))) > 0
    assert (d / "alignment_score.json").is_file()
    assert "[7/7]" in first.output and "Done." in first.output
    assert "The Tacotron's alignment" in first.output and "words " in first.output
    # the line to synthesize more names the vocoder the demo trained, not Griffin-Lim
    assert "aligner synthesize --checkpoint d/exp --vocoder d/vocoder --text" in first.output
    import yaml

    config = yaml.safe_load((d / "exp" / "config.yaml").read_text())
    guided = config["model"]["loss"]["guided"]
    assert (guided["source"], guided["mode"], guided["weight"], guided["width"]) == (
        "durations",
        "constant",
        0.3,
        3,
    )
    assert config["model"]["decoder"]["feedback"] == 0.5
    again = CliRunner().invoke(main, args)
    assert again.exit_code == 0, again.output
    assert "exists, kept" in again.output and again.output.count("is trained") == 3
    readme_example_plays_the_demo_through_its_vocoder(Path("d"))


def readme_example_plays_the_demo_through_its_vocoder(out: Path) -> None:
    """The README's Python example, on this demo's folder (its `demo/` read as `out`): it
    synthesizes through the vocoder the demo trained, not Griffin-Lim."""
    import re

    import soundfile as sf

    from aligner.models.vocoders.base import ToolkitVocoder

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    api = readme[readme.index("## Python API") :]
    code = re.search(r"```python\n(.*?)```", api, flags=re.DOTALL).group(1)
    code = code[: code.index("g2p = ")].replace('"demo/', f'"{out}/')
    assert 'vocoder="' in code
    names: dict = {}
    exec(compile(code, "README.md", "exec"), names)
    assert sf.info("lanterns.wav").duration > 0
    from aligner.inference.vocoders import load_vocoder

    vocoder = load_vocoder(names["played"].vocoder, names["tts"].mel_cfg)
    assert isinstance(vocoder, ToolkitVocoder)
