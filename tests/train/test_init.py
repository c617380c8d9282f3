"""``train.init_from``: a new run starts from another run's weights (of the modules named),
checked against the files, and a bad checkpoint or module name is one line."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from click.testing import CliRunner

from aligner.checkpoint import CheckpointError, atomic_save, checkpoint_file, load_checkpoint
from aligner.cli import main
from aligner.config import load_config
from aligner.models.fastpitch.model import FastPitch, FastPitchConfig, PostnetSettings
from aligner.models.fastvc import FastVC, FastVCConfig
from aligner.train.init import init_weights

TRAIN = {
    "batch_size": 8,
    "max_steps": 3,
    "lr": 0.05,
    "warmup_steps": 0,
    "decay": "none",
    "eval_every": 3,
    "checkpoint_every": 3,
    "log_every": 1,
    "progress": False,
    "seed": 3,
}


@pytest.fixture
def recipe(tiny_recipe):
    return tiny_recipe(TRAIN)


def train(recipe: Path, out: Path, *sets: str):
    """`aligner train` of the tiny recipe; ``--resume`` among `sets` is passed as is."""
    args = ["train", str(recipe), "--data", str(recipe.parent), "--out", str(out)]
    for s in sets:
        args += [s] if s.startswith("--") else ["--set", s]
    return CliRunner().invoke(main, args, catch_exceptions=False)


def weights(run: Path, step: int | None = None) -> dict[str, torch.Tensor]:
    file = checkpoint_file(run) if step is None else run / "checkpoints" / f"ckpt-{step:08d}.pt"
    return load_checkpoint(file)["model"]


@pytest.fixture
def pretrained(recipe, tmp_path) -> Path:
    res = train(recipe, tmp_path / "a", "train.seed=7")
    assert res.exit_code == 0, res.output
    return tmp_path / "a"


def test_a_run_starts_from_the_weights_it_is_given(recipe, pretrained, tmp_path):
    # lr 0: the first step's checkpoint holds exactly the weights the run started from
    res = train(recipe, tmp_path / "b", f"train.init_from={pretrained}", "train.lr=0")
    assert res.exit_code == 0, res.output
    assert "initialized 4 of 4 tensors" in res.output
    theirs, ours = weights(pretrained), weights(tmp_path / "b", 3)
    assert ours.keys() == theirs.keys()
    assert all(torch.equal(ours[k], theirs[k]) for k in theirs)

    assert train(recipe, tmp_path / "c", "train.lr=0").exit_code == 0  # no init
    assert not torch.equal(weights(tmp_path / "c", 3)["net.0.weight"], theirs["net.0.weight"])


def test_only_the_named_modules_are_copied(recipe, pretrained, tmp_path):
    init = (f"train.init_from={pretrained}", "train.init_modules=[net.3]")
    res = train(recipe, tmp_path / "b", *init, "train.lr=0", "train.seed=3")
    assert res.exit_code == 0, res.output
    theirs, ours = weights(pretrained), weights(tmp_path / "b", 3)
    fresh = train(recipe, tmp_path / "c", "train.lr=0", "train.seed=3")
    assert fresh.exit_code == 0, fresh.output
    own = weights(tmp_path / "c", 3)
    assert torch.equal(ours["net.3.weight"], theirs["net.3.weight"])
    assert torch.equal(ours["net.0.weight"], own["net.0.weight"])  # its own initialization
    assert not torch.equal(ours["net.0.weight"], theirs["net.0.weight"])


def test_a_resumed_run_keeps_its_own_weights(recipe, pretrained, tmp_path):
    init = f"train.init_from={pretrained}"
    assert train(recipe, tmp_path / "b", init).exit_code == 0
    res = train(recipe, tmp_path / "b", init, "train.max_steps=6", "--resume")
    assert res.exit_code == 0, res.output
    assert "resumed from" in res.output and "initialized" not in res.output


def test_without_module_names_what_fits_is_copied(recipe, pretrained, tmp_path):
    # a hidden of 16 changes both weights' shapes; the output's bias (1,) still fits
    res = train(recipe, tmp_path / "b", f"train.init_from={pretrained}", "model.hidden=16")
    assert res.exit_code == 0, res.output
    assert "initialized 1 of 4 tensors" in res.output


@pytest.mark.parametrize(
    ("sets", "says"),
    [
        (["train.init_modules=[encoder]"], "names 'encoder', which this model does not have"),
        (
            ["model.hidden=16", "train.init_modules=[net.3]"],
            "cannot initialize net.3.weight (1, 16): it has shape (1, 8)",
        ),
    ],
)
def test_a_checkpoint_that_does_not_fit_is_one_line(recipe, pretrained, tmp_path, sets, says):
    res = train(recipe, tmp_path / "b", f"train.init_from={pretrained}", *sets)
    assert res.exit_code == 1
    assert says in res.output and "Traceback" not in res.output
    assert not (tmp_path / "b" / "checkpoints").exists()


def test_a_missing_checkpoint_is_one_line(recipe, tmp_path):
    res = train(recipe, tmp_path / "b", f"train.init_from={tmp_path / 'none.pt'}")
    assert res.exit_code == 1 and "does not exist" in res.output


def test_fastvc_takes_a_target_voice_fastpitch_s_decoder(tmp_path):
    """The TTS pretraining of voice conversion: FastVC's decoder, projection and postnet
    have FastPitch's names and, at the same sizes, its shapes."""
    sizes = dict(dim=32, decoder_layers=2, heads=2, ff_hidden=48, ff_kernel=[3, 1])
    post = PostnetSettings(channels=16, n_convs=2, kernel_size=3)
    tts = FastPitch(FastPitchConfig(n_symbols=12, n_mels=8, postnet=post, **sizes))
    atomic_save({"model": tts.state_dict(), "step": 1, "config": {}}, tmp_path / "tts.pt")
    vc = FastVC(FastVCConfig(n_mels=8, encoder_layers=1, postnet=post, **sizes))
    line = init_weights(vc, tmp_path / "tts.pt", ["decoder", "proj", "postnet"])
    assert line.startswith("initialized ")
    theirs, ours = tts.state_dict(), vc.state_dict()
    shared = [k for k in ours if k.split(".")[0] in ("decoder", "proj", "postnet")]
    assert shared and all(torch.equal(ours[k], theirs[k]) for k in shared)
    with pytest.raises(CheckpointError, match="cannot initialize encoder"):
        init_weights(vc, tmp_path / "tts.pt", ["encoder"])


@pytest.mark.parametrize("size", ["fastvc_small", "fastvc"])
def test_each_fastvc_recipe_has_a_tts_recipe_whose_decoder_fits(size, tmp_path):
    """recipes/vc/X_tts.yaml (the egs' --pretrain tts) builds a FastPitch whose decoder,
    projection and postnet (where the FastVC has one) initialize recipes/vc/X.yaml's
    FastVC."""

    def model(recipe: str) -> dict:
        return {k: v for k, v in load_config(recipe, []).model.items() if k != "loss"}

    tts = FastPitch(FastPitchConfig.from_dict({**model(f"vc/{size}_tts.yaml"), "n_symbols": 9}))
    atomic_save({"model": tts.state_dict(), "step": 1, "config": {}}, tmp_path / "tts.pt")
    vc = FastVC(FastVCConfig.from_dict(model(f"vc/{size}.yaml")))
    shared = ["decoder", "proj"] + (["postnet"] if vc.postnet is not None else [])
    assert (tts.postnet is None) == (vc.postnet is None)
    assert init_weights(vc, tmp_path / "tts.pt", shared)
    assert torch.equal(vc.state_dict()["proj.weight"], tts.state_dict()["proj.weight"])


def test_a_checkpoint_that_shares_nothing_is_refused(tmp_path):
    other = torch.nn.Sequential(torch.nn.Linear(2, 2))  # names 0.weight, 0.bias
    atomic_save({"model": other.state_dict(), "step": 1, "config": {}}, tmp_path / "o.pt")
    model = torch.nn.ModuleDict({"proj": torch.nn.Linear(2, 2)})
    before = {k: v.clone() for k, v in model.state_dict().items()}
    with pytest.raises(CheckpointError, match="shares no tensor"):
        init_weights(model, tmp_path / "o.pt")
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())
