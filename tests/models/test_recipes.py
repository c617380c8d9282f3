"""Every TTS/VC recipe loads, and its model builds with the sizes it claims."""

from __future__ import annotations

from pathlib import Path

import pytest

from aligner.config import load_config
from aligner.models.tacotron.model import Tacotron
from aligner.tasks.speech import model_config

RECIPES = [  # the Tacotron family's (tests/models/test_fastpitch.py: the FastPitch's)
    p
    for p in sorted((Path(__file__).parents[2] / "recipes").glob("[tv][tc]*/*.yaml"))
    if load_config(p).family == "tacotron"
]


def test_recipes_found() -> None:
    names = {p.stem for p in RECIPES}
    for base in (
        "tts/tacotron_lsa",
        "tts/tacotron_dca",
        "tts/tacotron_forward",
        "vc/seq2seq_vc_lsa",
    ):
        stem = base.split("/")[1]
        assert {stem, f"{stem}_small"} <= names


@pytest.mark.parametrize("path", RECIPES, ids=lambda p: p.stem)
def test_recipe_builds(path: Path) -> None:
    cfg = load_config(path)
    n_mels = cfg.data["mel"]["n_mels"]
    tacotron, loss = model_config(cfg.model, n_mels, 0 if cfg.task == "vc" else 60)
    model = Tacotron.from_config(tacotron)
    params = sum(p.numel() for p in model.parameters())
    assert (params < 5e6) == ("_small" in path.stem)
    # guided attention: location-sensitive recipes, the small DCA one (to align in 20 min),
    # and the recipe guided by the alignment model's durations
    guided = "lsa" in path.stem or path.stem in (
        "tacotron_dca_small",
        "tacotron_forward_small_guided",
    )
    assert (loss.guided is not None) == guided
    assert tacotron.encoder.kind == ("mel" if cfg.task == "vc" else "text")


def test_old_attention_keys_in_a_recipe_load_with_a_one_line_note(capsys) -> None:
    """Recipes kept the TTS/VC attention under model.decoder before every model family
    spelled it model.attention / model.attn_dim / model.attention_options."""
    new = load_config(RECIPES[0]).model
    old = {
        **new,
        "decoder": {
            **new["decoder"],
            "attention": new["attention"],
            "attention_opts": new["attention_options"],
        },
    }
    del old["attention"], old["attention_options"]
    assert model_config(old, 80, 60) == model_config(new, 80, 60)
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "note: the recipe uses old attention keys; rename model.decoder.attention -> "
        "model.attention, model.decoder.attention_opts -> model.attention_options"
    ]
