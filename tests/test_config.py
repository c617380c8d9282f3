from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from aligner.config import (
    ConfigError,
    ExperimentConfig,
    TrainConfig,
    apply_overrides,
    from_dict,
    load_config,
    parse_override,
    save_config,
)

RECIPE = {
    "task": "tts",
    "data": {"manifest": "train.jsonl"},
    "model": {"attention": {"name": "location", "attn_dim": 128}, "layers": 2},
    "train": {"batch_size": 8, "lr": 0.002, "decay": "cosine"},
}


@pytest.fixture
def recipe(tmp_path):
    path = tmp_path / "r.yaml"
    path.write_text(yaml.safe_dump(RECIPE))
    return path


def test_load_applies_overrides_as_yaml_scalars(recipe):
    cfg = load_config(
        recipe,
        [
            "train.lr=1e-3",
            "train.max_minutes=2.5",
            "model.attention.name=dca",
            "model.new.deep=[1, 2]",
            "train.precision=bf16",
            "train.progress=false",
        ],
    )
    assert cfg.train.lr == 1e-3 and isinstance(cfg.train.lr, float)
    assert cfg.train.max_minutes == 2.5
    assert cfg.train.batch_size == 8 and cfg.train.decay == "cosine"
    assert cfg.train.precision == "bf16" and cfg.train.progress is False
    assert cfg.model["attention"] == {"name": "dca", "attn_dim": 128}
    assert cfg.model["new"] == {"deep": [1, 2]}
    assert cfg.train.warmup_steps == TrainConfig().warmup_steps  # default kept


def test_round_trip_through_dict_and_yaml(recipe, tmp_path):
    cfg = load_config(recipe, ["train.betas=[0.8, 0.99]"])
    assert ExperimentConfig.from_dict(cfg.to_dict()) == cfg
    save_config(cfg, tmp_path / "saved.yaml")
    assert load_config(tmp_path / "saved.yaml") == cfg


def test_unknown_train_key_lists_valid_keys(recipe):
    with pytest.raises(
        ConfigError, match=r"train\.lrate.*valid keys of train: batch_size, max_steps"
    ):
        load_config(recipe, ["train.lrate=1"])


def test_unknown_key_in_file_names_file_and_key(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump({"task": "tts", "train": {"epochs": 3}}))
    with pytest.raises(ConfigError, match=r"bad\.yaml.*config\.train\.epochs.*valid keys"):
        load_config(path)


def test_unknown_top_level_override(recipe):
    with pytest.raises(ConfigError, match="unknown key 'optim'"):
        load_config(recipe, ["optim.lr=1"])


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("train.batch_size=eight", r"train\.batch_size must be of type int, got 'eight'"),
        ("train.batch_size=2.5", "must be of type int"),
        ("train.decay=linear", "must be one of noam, exponential, cosine, none"),
        ("train.precision=fp8", "must be one of fp32, bf16, fp16"),
        ("train.progress=3", "must be of type bool"),
        ("train.batch_size=0", r"train\.batch_size must be >= 1"),
        ("train.lr", "expected KEY=VALUE"),
        ("train.lr=[1", "not valid YAML"),
        ("data.manifest.x=1", "data.manifest is a value"),
        ("train.lr=nan", r"train\.lr must be a finite number"),  # NaN passes every range
        ("train.max_minutes=.inf", r"train\.max_minutes must be a finite number"),
        ("train.seed=99999999999999999999", r"train\.seed must be between 0 and 4294967295"),
    ],
)
def test_bad_values_give_one_clear_error(recipe, override, message):
    with pytest.raises(ConfigError, match=message):
        load_config(recipe, [override])


def test_missing_recipe_and_non_mapping(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "nope.yaml")
    (tmp_path / "list.yaml").write_text("- 1\n- 2\n")
    with pytest.raises(ConfigError, match="must be a YAML mapping"):
        load_config(tmp_path / "list.yaml")


def test_missing_task_is_reported(tmp_path):
    (tmp_path / "r.yaml").write_text("train: {lr: 0.1}\n")
    with pytest.raises(ConfigError, match="missing key config.task"):
        load_config(tmp_path / "r.yaml")


@dataclass
class Inner:
    dim: int = 4


@dataclass
class ModelCfg:
    name: str
    inner: Inner = field(default_factory=Inner)
    dropout: float | None = None
    sizes: list[int] = field(default_factory=list)


def test_from_dict_converts_nested_and_validates_for_tasks():
    m = from_dict(
        ModelCfg, {"name": "x", "inner": {"dim": 8}, "dropout": 1, "sizes": [1, 2]}, where="model"
    )
    assert m == ModelCfg("x", Inner(8), 1.0, [1, 2]) and isinstance(m.dropout, float)
    with pytest.raises(
        ConfigError, match=r"unknown key model\.inner\.width; valid keys of model\.inner: dim"
    ):
        from_dict(ModelCfg, {"name": "x", "inner": {"width": 8}}, where="model")
    with pytest.raises(ConfigError, match=r"model\.sizes\[1\] must be of type int"):
        from_dict(ModelCfg, {"name": "x", "sizes": [1, "b"]}, where="model")
    with pytest.raises(ConfigError, match="missing key model.name"):
        from_dict(ModelCfg, {}, where="model")


def test_yaml11_exponent_strings_accepted_for_floats():
    # PyYAML reads `1e-3` (no dot) as a string; recipes commonly write it that way.
    assert yaml.safe_load("lr: 1e-3")["lr"] == "1e-3"
    assert from_dict(TrainConfig, {"lr": "1e-3"}).lr == 1e-3


@given(st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), st.integers()), min_size=1))
def test_overrides_last_one_wins(pairs):
    raw = {"task": "t", "model": {}}
    out = apply_overrides(raw, [f"model.{k}={v}" for k, v in pairs])
    expected = {}
    for k, v in pairs:
        expected[k] = v
    assert out["model"] == expected
    assert raw == {"task": "t", "model": {}}  # input untouched


def test_parse_override_types():
    assert parse_override("a.b=true") == (["a", "b"], True)
    assert parse_override("a=null") == (["a"], None)
    assert parse_override("a='3'") == (["a"], "3")
    assert parse_override("a=x=y") == (["a"], "x=y")


def test_a_shipped_recipe_is_found_from_any_folder(tmp_path, monkeypatch):
    """Recipes are package data: `recipes/...` or `tts/...` resolve to the copy inside the
    package when the path does not exist where the command runs (a wheel install)."""
    from aligner.config import RECIPES, find_recipe, load_config

    monkeypatch.chdir(tmp_path)
    found = find_recipe("recipes/tts/tacotron_dca_small.yaml")
    assert found == RECIPES / "tts" / "tacotron_dca_small.yaml" and found.is_file()
    assert find_recipe("align/aligner.yaml") == RECIPES / "align" / "aligner.yaml"
    assert load_config("recipes/align/aligner.yaml").task == "align"
    (tmp_path / "recipes" / "tts").mkdir(parents=True)
    mine = tmp_path / "recipes" / "tts" / "tacotron_dca_small.yaml"
    mine.write_text("task: tts\n")
    assert find_recipe("recipes/tts/tacotron_dca_small.yaml") == Path(
        "recipes/tts/tacotron_dca_small.yaml"
    )
    assert find_recipe("nothing/here.yaml") == Path("nothing/here.yaml")


def test_a_recipe_names_its_base_and_overrides_some_keys(tmp_path):
    """``base:``: the base recipe with this one's keys merged section by section; lists and
    values replace; the guided demo recipe is the small one plus its guide."""
    from aligner.config import read_recipe

    (tmp_path / "a.yaml").write_text(
        "task: tts\ndata: {train: t.jsonl, mel: {n_mels: 80, hop_length: 256}}\n"
        "model: {r: 4, decoder: {dims: [1, 2]}}\ntrain: {lr: 0.001}\n"
    )
    (tmp_path / "b.yaml").write_text(
        "base: a.yaml\ndata: {mel: {n_mels: 40}}\nmodel: {decoder: {dims: [3]}}\n"
    )
    got = read_recipe(tmp_path / "b.yaml")
    assert got["data"] == {"train": "t.jsonl", "mel": {"n_mels": 40, "hop_length": 256}}
    assert got["model"] == {"r": 4, "decoder": {"dims": [3]}} and got["train"] == {"lr": 0.001}
    (tmp_path / "c.yaml").write_text("base: d.yaml\n")
    (tmp_path / "d.yaml").write_text("base: c.yaml\n")
    with pytest.raises(ConfigError, match="names itself as a base"):
        read_recipe(tmp_path / "c.yaml")
    guided = load_config("recipes/tts/tacotron_forward_small_guided.yaml")
    small = load_config("recipes/tts/tacotron_forward_small.yaml")
    assert guided.model["loss"]["guided"]["source"] == "durations"
    assert guided.data["durations"] == "durations" and guided.model["decoder"]["feedback"] == 0.5
    assert {k: v for k, v in guided.model.items() if k not in ("loss", "decoder")} == {
        k: v for k, v in small.model.items() if k not in ("loss", "decoder")
    }


@pytest.mark.parametrize(
    "model, words",
    [
        ({"encoder": 5}, "model.encoder must be a mapping"),
        ({"encoder": {"embed_dim": -1}}, "model.encoder.embed_dim must be at least 1"),
        ({"encoder": {"n_convs": -3}}, "model.encoder.n_convs must be at least 0"),
        ({"attn_dim": 0}, "model.attn_dim must be at least 1"),
    ],
)
def test_a_models_size_out_of_range_is_named_before_building(model, words):
    """A traceback (``'int' object is not iterable``, ``negative dimension``) or a model
    of nothing, before: now one ConfigError naming the key."""
    from aligner.models.tacotron.model import TacotronConfig

    with pytest.raises(ConfigError, match=words):
        TacotronConfig.from_dict(model)
    TacotronConfig.from_dict({"encoder": {"n_convs": 0}})  # no convolutions: a count of 0


@pytest.mark.parametrize(
    "mel, words",
    [
        ({"f_max": "1e9"}, r"f_max=1000000000.0, sample_rate=22050"),
        ({"sample_rate": "abc"}, "data.mel.sample_rate must be of type int"),
    ],
)
def test_mel_settings_read_numbers_as_yaml_writes_them_and_name_bad_ones(mel, words):
    """``--set data.mel.f_max=1e9`` (a string to YAML 1.1) failed on ``'<' not
    supported``; ``7e3`` is read as the number it is."""
    from types import SimpleNamespace

    from aligner.tasks.speech_data import mel_settings

    with pytest.raises(ConfigError, match=words):
        mel_settings(SimpleNamespace(mel=mel))
    assert mel_settings(SimpleNamespace(mel={"f_max": "7e3"})).f_max == 7000.0


def test_a_recipe_that_is_not_yaml_or_names_a_missing_base_says_where(tmp_path):
    from aligner.config import read_recipe

    bad = tmp_path / "bad.yaml"
    bad.write_text("task: tts\nmodel:\n  dim: 3\n  x: y: z\n")
    with pytest.raises(ConfigError, match=r"bad\.yaml at line 4, column 7: mapping values"):
        read_recipe(bad)
    child = tmp_path / "child.yaml"
    child.write_text("base: nothere.yaml\ntask: tts\n")
    with pytest.raises(ConfigError, match=r"nothere\.yaml \(the base: of .*child\.yaml\)"):
        read_recipe(child)
