"""The family registry (`aligner.families`): every role's parts exist, every shipped recipe
names a family that serves its task, old configs find their family, and nothing outside
the registry compares task names to decide behaviour."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from aligner.config import ConfigError, ExperimentConfig, load_config
from aligner.families import DEFAULT_FAMILY, FAMILIES, FamilyError, family_name, role

RECIPES = sorted((Path(__file__).resolve().parents[1] / "aligner" / "recipes").glob("*/*.yaml"))
ROLES = [(f, t, r) for f, fam in FAMILIES.items() for t, r in fam.roles.items()]


@pytest.mark.parametrize(("family", "task", "found"), ROLES, ids=lambda v: str(v)[:20])
def test_every_role_names_parts_that_exist(family, task, found) -> None:
    module = importlib.import_module(found.task_module)
    assert callable(module.build)
    name, attr = found.runtime.split(":")
    assert callable(getattr(importlib.import_module(name), attr).from_checkpoint)


@pytest.mark.parametrize("recipe", RECIPES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_recipe_names_a_family_that_serves_its_task(recipe: Path) -> None:
    text = recipe.read_text()
    names = re.search(r"^(family: \w+|base: )", text, re.M)  # its own, or its base's
    assert names, f"{recipe} names no family"
    cfg = load_config(recipe)
    assert cfg.task in FAMILIES[cfg.family].roles


def test_configs_written_before_families_find_theirs() -> None:
    assert family_name({"task": "tts"}) == "tacotron"
    assert family_name({"task": "align"}) == "forward_sum"
    assert family_name({"task": "vocoder", "model": {"kind": "hifigan"}}) == "hifigan"
    assert family_name({"task": "vocoder"}) == "vocos"
    old = ExperimentConfig.from_dict({"task": "vocoder", "model": {"kind": "hifigan", "a": 1}})
    assert old.family == "hifigan" and old.model == {"a": 1}
    assert family_name({"task": "mypkg.mytask"}) == ""  # a user's own task module
    assert set(DEFAULT_FAMILY) <= {t for f in FAMILIES.values() for t in f.roles}


def test_a_family_that_does_not_serve_the_task_is_one_line() -> None:
    with pytest.raises(ConfigError, match="the forward_sum family does not train task 'tts'"):
        ExperimentConfig.from_dict({"task": "tts", "family": "forward_sum"})
    with pytest.raises(FamilyError, match="unknown model family 'wavenet'; choose one of"):
        role("wavenet", "vocoder")


def test_no_task_name_decides_behaviour_outside_the_registry() -> None:
    """No module compares a task name (``task == "tts"``, ``.task != "vc"``, ...) except
    the registry and the config that fills in a family."""
    package = Path(__file__).resolve().parents[1] / "aligner"
    allowed = {"families.py", "config.py"}
    pattern = re.compile(r"\btask\w*\s*(==|!=|in)\s*[\"'(]|[\"'](tts|vc|align)[\"']\s*(==|!=)")
    found = [
        f"{p.relative_to(package)}:{n}"
        for p in package.rglob("*.py")
        if str(p.relative_to(package)) not in allowed
        for n, line in enumerate(p.read_text().splitlines(), 1)
        if pattern.search(line)
    ]
    assert found == []
