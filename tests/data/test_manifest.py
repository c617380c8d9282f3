"""Manifests: round trip, relative paths, one clear error per bad line, atomic writes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aligner.data.manifest import (
    ManifestError,
    read_manifest,
    read_manifest_items,
    write_manifest,
)


def test_round_trip_resolves_paths_relative_to_manifest(tmp_path: Path) -> None:
    wav = tmp_path / "wavs" / "a.wav"
    items = [
        {"id": "a", "audio": str(wav), "text": "hello", "speaker": "s1", "duration": 1.5},
        {
            "id": "b",
            "audio": str(tmp_path / "x" / "b.wav"),
            "text": "x",
            "speaker": "s2",
            "target_audio": str(tmp_path / "y" / "b.wav"),
        },
    ]
    path = write_manifest(tmp_path / "lists" / "train.jsonl", items)
    raw = [json.loads(line) for line in path.read_text().splitlines()]
    assert raw[0]["audio"] == os.path.join("..", "wavs", "a.wav")
    assert raw[1]["target_audio"] == os.path.join("..", "y", "b.wav")
    assert read_manifest(path) == items


def test_moved_corpus_still_resolves(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    write_manifest(corpus / "train.jsonl", [{"id": "a", "audio": str(corpus / "a.wav")}])
    moved = tmp_path / "moved"
    corpus.rename(moved)
    assert read_manifest(moved / "train.jsonl")[0]["audio"] == str(moved / "a.wav")


def test_relative_input_path_is_relative_to_cwd(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    write_manifest("out/m.jsonl", [{"id": "a", "audio": "wavs/a.wav"}])
    assert json.loads((tmp_path / "out/m.jsonl").read_text())["audio"] == "../wavs/a.wav"


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "expected a JSON object"),
        ('{"text": "no id"}', "'id'"),
        ('{"id": "a", "audio": 3}', "'audio'"),
    ],
)
def test_bad_line_names_file_and_line(tmp_path: Path, line: str, reason: str) -> None:
    path = tmp_path / "m.jsonl"
    path.write_text('{"id": "ok", "text": "fine"}\n\n' + line + "\n")
    with pytest.raises(ManifestError) as err:
        read_manifest(path)
    assert f"{path}:3:" in str(err.value)
    assert reason in str(err.value)


def test_duplicate_id_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    path.write_text('{"id": "a"}\n{"id": "a"}\n')
    with pytest.raises(ManifestError, match=r"m.jsonl:2: duplicate id 'a' \(first on line 1\)"):
        read_manifest(path)


def test_every_bad_line_is_named_and_the_good_items_kept(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    path.write_text('{"id": "a"}\n{"id": "a"}\n{oops\n\n[1]\n{"id": "b"}\n{"text": "x"}\n')
    items, bad = read_manifest_items(path)
    assert [it["id"] for it in items] == ["a", "b"]
    assert [b.where for b in bad] == [f"{path}:{n}" for n in (2, 3, 5, 7)]
    assert "duplicate id" in bad[0].reason and "'id'" in bad[3].reason
    with pytest.raises(ManifestError, match=r"m.jsonl:2: duplicate id .*bad lines too: 3, 5, 7\)"):
        read_manifest(path)


def test_missing_manifest(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="manifest not found"):
        read_manifest(tmp_path / "nope.jsonl")


def test_no_overwrite_without_force_and_no_temp_left(tmp_path: Path) -> None:
    path = write_manifest(tmp_path / "m.jsonl", [{"id": "a", "source": "x", "target": "y"}])
    with pytest.raises(FileExistsError, match="--force"):
        write_manifest(path, [{"id": "b"}], force=False)
    assert read_manifest(path)[0]["id"] == "a"
    write_manifest(path, [{"id": "b"}], force=True)
    assert [i["id"] for i in read_manifest(path)] == ["b"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.jsonl"]


def test_failed_write_keeps_old_file(tmp_path: Path) -> None:
    path = write_manifest(tmp_path / "m.jsonl", [{"id": "a"}])
    with pytest.raises(TypeError):
        write_manifest(path, [{"id": "b", "bad": object()}])
    assert read_manifest(path) == [{"id": "a"}]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.jsonl"]


texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=30)


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.tuples(texts, texts), max_size=6, unique_by=lambda t: t[0]))
def test_text_pairs_round_trip_any_unicode(tmp_path: Path, pairs: list[tuple[str, str]]) -> None:
    items = [{"id": f"u{i}:{s}", "source": s, "target": t} for i, (s, t) in enumerate(pairs)]
    path = write_manifest(tmp_path / "pairs.jsonl", items)
    assert read_manifest(path) == items
