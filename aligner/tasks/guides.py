"""The durations that guide a Tacotron's attention (``model.loss.guided.source:
durations``): the alignment model's records (``ID.durations.json`` from `aligner align`)
read from the folders ``data.durations`` names, matched to the task's items, and turned
into per-batch guides (`aligner.attention.guides`). A TTS item may instead have another
tool's ``ID.TextGrid`` there (the Montreal Forced Aligner's, Festival's, a corpus's own),
and so may either voice of a VC pair: its phones are paired with the item's tokens (or
with the other voice's phones; `aligner.alignment.transfer`); an item whose phones do not
pair trains with the diagonal guide and is counted.

TTS: the record's tokens must be the TTS's tokens (the same ``data.tokenizer``); the
record's ``<s>`` and ``</s>`` frames (the silence at the edges) go to the TTS's own
``<s>``/``</s>`` when it has them, else to its first and last token. VC: the records of
the source audio (``data.source_durations``) and of the target audio (``data.durations``)
of each pair give the target-frame to source-position path (`pair_positions`). An item
without records trains with the diagonal guide and is counted; a record whose frames do
not add up to the item's mel frames, or whose tokens differ from the item's, is a
ConfigError naming the item.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch

from aligner.alignment.reading import read_record, sub_frame_durations
from aligner.alignment.record import RECORD_SUFFIX
from aligner.alignment.tiers import SPECIALS
from aligner.attention.guides import duration_positions, pair_positions, path_guide
from aligner.audio.features import MelConfig
from aligner.config import ConfigError
from aligner.tasks.textgrid_guides import (
    TARGET_SUFFIX,
    folder_textgrids,
    report_unpaired,
    textgrid_frames,
    textgrid_phones,
)

SPECIAL = SPECIALS - {"<unk>"}  # the markers; <unk> stands for a token of the text


def folders_of(value: str | Sequence[str] | None, data_dir: Path, key: str) -> list[Path]:
    """``data.durations`` as folders (one path or a list; relative to the data folder)."""
    if value in (None, "", []):
        return []
    names = [value] if isinstance(value, str) else list(value)
    folders = [p if p.is_absolute() else Path(data_dir) / p for p in map(Path, names)]
    for folder in folders:
        if not folder.is_dir():
            raise ConfigError(
                f"data.{key}: {folder} is not a folder; give the output folders of `aligner "
                "align --checkpoint ALIGNMENT_MODEL` on the train and valid manifests"
            )
    return folders


def guide_folders(loss_cfg: Any, value: Any, data_dir: Path, key: str) -> list[Path]:
    """The folders of ``data.<key>`` when ``model.loss.guided.source`` is ``durations``
    (ConfigError when none are given); none otherwise."""
    guided = loss_cfg.guided
    if guided is None or guided.source != "durations":
        if value not in (None, "", []):
            print(
                f"note: data.{key} is not used: model.loss.guided.source is not durations",
                file=sys.stderr,
            )
        return []
    folders = folders_of(value, data_dir, key)
    if not folders:
        raise ConfigError(
            f"model.loss.guided.source: durations needs data.{key}: the folders that `aligner "
            "align --checkpoint ALIGNMENT_MODEL` wrote for the train and valid manifests"
        )
    return folders


def read_records(
    folders: list[Path], mel_cfg: MelConfig, key: str, target: bool = False
) -> dict[str, dict[str, Any]]:
    """Every ``ID.durations.json`` in `folders` and their subfolders (e.g. ``durations/``
    holding ``train/`` and ``valid/``), by item id, and ``{"textgrid": path}`` for an item
    with an ``ID.TextGrid`` in a folder that holds no record (read when used; `target`: the
    target voice of a VC pair, whose ``ID_target.TextGrid`` comes first, as `aligner
    prepare` names them); ConfigError for a record of other mel frames (hop or sample rate)
    than the task's."""
    records: dict[str, dict[str, Any]] = {}
    for folder in folders:
        found = sorted(folder.rglob(f"*{RECORD_SUFFIX}"))
        for path in found:
            try:
                record = read_record(path)
            except ValueError as err:
                raise ConfigError(f"data.{key}: {err}") from None
            frames = (record.get("hop_length"), record.get("sample_rate"))
            if frames != (mel_cfg.hop_length, mel_cfg.sample_rate):
                raise ConfigError(
                    f"data.{key}: {path} counts frames of hop {frames[0]} at {frames[1]} Hz; "
                    f"the recipe's are hop {mel_cfg.hop_length} at {mel_cfg.sample_rate} Hz: "
                    "align with an alignment model of the same data.mel"
                )
            records[str(record.get("id", path.name[: -len(RECORD_SUFFIX)]))] = record
        if not found:  # `aligner align`'s TextGrids say what its records say
            for uid, path in folder_textgrids(folder, key, target).items():
                records.setdefault(uid, {"textgrid": path})
    return records


def tts_durations(
    record: dict[str, Any], tokens: list[str], uid: str, values: Sequence[float] | None = None
) -> torch.Tensor:
    """The frames of each of the TTS item's `tokens` from the alignment model's `record`
    (long), or its per-token `values` in their place (float: `sub_frame_durations`).

    The tokens other than ``<s>``/``</s>`` must match one to one (``<unk>`` matches any);
    the record's edge tokens go to the TTS's own or to its first and last token.
    """
    given = record["frames"] if values is None else values
    pairs = list(zip(record["tokens"], given))
    lead = sum(f for t, f in pairs[:1] if t == "<s>")
    trail = sum(f for t, f in pairs[-1:] if t == "</s>")
    core = [(t, f) for t, f in pairs if t not in SPECIAL]
    mine = [k for k, t in enumerate(tokens) if t not in SPECIAL]
    theirs = [t for t, _ in core]
    differ = (n for n, (k, t) in enumerate(zip(mine, theirs)) if tokens[k] not in (t, "<unk>"))
    at = next(differ, None if len(mine) == len(theirs) else min(len(mine), len(theirs)))
    if at is not None:
        raise ConfigError(
            f"item {uid}: the durations' tokens differ from the model's at token {at + 1} "
            f"({theirs[at] if at < len(theirs) else 'end'!r} vs "
            f"{tokens[mine[at]] if at < len(mine) else 'end'!r}): align with an alignment model "
            "of the same data.tokenizer"
        )
    if not mine:
        raise ConfigError(f"item {uid}: no tokens to guide")
    out = torch.zeros(len(tokens), dtype=torch.long if values is None else torch.float64)
    for k, (_, frames) in zip(mine, core):
        out[k] = int(frames) if values is None else float(frames)
    first = tokens.index("<s>") if "<s>" in tokens else mine[0]
    last = len(tokens) - 1 - tokens[::-1].index("</s>") if "</s>" in tokens else mine[-1]
    out[first] += lead
    out[last] += trail
    return out if values is None else out.float()


def check_frames(durations: torch.Tensor, n_frames: int, uid: str, where: str) -> None:
    """ConfigError naming the item when `durations` do not add up to its mel frames."""
    if int(durations.sum()) != n_frames:
        raise ConfigError(
            f"item {uid}: the durations in {where} add up to {int(durations.sum())} frames, its "
            f"audio has {n_frames}: align the same audio with the same data.mel"
        )


class Guides:
    """Paths of the items that have durations, by item id, and the guides of batches.

    Args:
        paths: item id -> ``(T,)`` source position of each target frame.
        r: frames per decoder step.
        width: soft edges, in frames (`path_guide`).
    """

    def __init__(self, paths: dict[str, torch.Tensor], r: int, width: float) -> None:
        self.paths, self.r, self.width = paths, r, width

    def batch(
        self, ids: list[str], n_sources: torch.Tensor, n_frames: int, n_cols: int
    ) -> dict[str, torch.Tensor]:
        """``guide (B, ceil(n_frames / r), n_cols)`` and ``guided (B,)`` bool (the items
        with a path; the others' rows are zero and train with the diagonal guide)."""
        steps = -(-n_frames // self.r)
        guided = torch.tensor([uid in self.paths for uid in ids])
        paths = [self.paths.get(uid, torch.zeros(0)) for uid in ids]
        guide = path_guide(paths, n_sources, steps, n_cols, self.r, self.width)
        return {"guide": guide, "guided": guided}


def report(name: str, have: int, total: int) -> None:
    """One line on how many of a split's items have durations."""
    if have < total:
        print(
            f"note: {total - have} of {total} {name} items have no durations: they train with "
            "the diagonal guide",
            file=sys.stderr,
        )


def side_frames(
    record: dict[str, Any],
    tokens: list[str],
    n_frames: int,
    frame_seconds: float,
    uid: str,
    key: str,
) -> torch.Tensor | None:
    """The frames of each of `tokens` in one recording: from `record`'s own (its tokens
    must be `tokens`, its frames the recording's) or from the phones of its TextGrid
    (`transferred_frames`; None when they do not pair with `tokens`)."""
    if "textgrid" in record:
        return textgrid_frames(record["textgrid"], tokens, n_frames, frame_seconds, uid, key)
    if list(record["tokens"]) != list(tokens):
        raise ConfigError(
            f"item {uid}: the source's and the target's durations have other tokens; "
            "align both sides with one alignment model"
        )
    durations = torch.tensor(record["frames"])
    check_frames(durations, n_frames, uid, f"data.{key}")
    return durations


def dataset_durations(
    dataset: Any,
    decode: Callable[[list[int]], list[str]],
    records: dict[str, dict[str, Any]],
    frame_seconds: float,
    split: str,
) -> dict[int, torch.Tensor]:
    """Frames per token (N,) of the items of a TTS dataset (`TTSDataset`) that have a record
    or a TextGrid whose phones pair with their tokens, by item index (the unpaired
    TextGrids reported); ConfigError naming the item for a record of other tokens or
    frames. What a Tacotron's guide and a duration model's targets both read."""
    out, unpaired = {}, []
    for index, item in enumerate(dataset.items):
        uid = str(item["id"])
        if uid not in records:
            continue
        tokens = decode(dataset.tokens[index].tolist())
        n_frames = len(dataset.cache.get(item["audio"]))
        if "textgrid" in records[uid]:
            found = side_frames(records[uid], tokens, n_frames, frame_seconds, uid, "durations")
            if found is None:
                unpaired.append(f"{uid} ({records[uid]['textgrid']})")
                continue
        else:
            found = tts_durations(records[uid], tokens, uid)
            check_frames(found, n_frames, uid, "data.durations")
        out[index] = found
    report_unpaired(unpaired, len(out), split, "durations")
    return out


def dataset_sub_frames(
    dataset: Any,
    decode: Callable[[list[int]], list[str]],
    records: dict[str, dict[str, Any]],
    durations: dict[int, torch.Tensor],
) -> dict[int, torch.Tensor]:
    """Frames per token (N,) float of the items of `durations` (`dataset_durations`), each
    boundary between two phones that meet below one frame where the alignment model's
    record has it (`aligner.alignment.reading.sub_frame_durations`): what a duration
    model learns from with ``model.loss.duration_target: sub_frame``. Another tool's
    TextGrid gives its whole frames."""
    out = {}
    for index, frames in durations.items():
        uid = str(dataset.items[index]["id"])
        record = records[uid]
        if "textgrid" in record:
            out[index] = frames.float()
            continue
        tokens = decode(dataset.tokens[index].tolist())
        out[index] = tts_durations(record, tokens, uid, sub_frame_durations(record).tolist())
    return out


def tts_guides(
    dataset: Any,
    decode: Callable[[list[int]], list[str]],
    records: dict[str, dict[str, Any]],
    r: int,
    width: float,
    split: str,
    frame_seconds: float,
) -> Guides:
    """The guides of a TTS dataset (`aligner.data.datasets.TTSDataset`) from `records`
    (frames of ``frame_seconds`` each)."""
    found = dataset_durations(dataset, decode, records, frame_seconds, split)
    paths = {str(dataset.items[i]["id"]): duration_positions(d) for i, d in found.items()}
    report(split, len(paths), len(dataset.items))
    return Guides(paths, r, width)


def vc_tokens(source: dict[str, Any], target: dict[str, Any], uid: str) -> list[str]:
    """The tokens both voices of a pair are timed over: a durations record's (the source's
    first), else the source TextGrid's phones with a separator between each two (where
    either voice may pause)."""
    for record in (source, target):
        if "tokens" in record:
            return list(record["tokens"])
    phones = textgrid_phones(source["textgrid"], uid, "source_durations")
    spaced = [x for k, phone in enumerate(phones) for x in ([" "] if k else []) + [phone.label]]
    return ["<s>", *spaced, "</s>"]


def pair_durations(
    dataset: Any,
    source_records: dict[str, dict[str, Any]],
    target_records: dict[str, dict[str, Any]],
    split: str,
    frame_seconds: float,
) -> dict[int, tuple[list[str], torch.Tensor, torch.Tensor]]:
    """The tokens (`vc_tokens`) and frames per token (N,) of both voices of each pair of a
    VC dataset (`aligner.data.datasets.VCDataset`) that has them, by item index: records
    of one alignment model, or TextGrids whose phones pair (the unpaired ones reported)."""
    out, unpaired = {}, []
    for index, item in enumerate(dataset.items):
        uid = str(item["id"])
        if uid not in source_records or uid not in target_records:
            continue
        src, tgt = source_records[uid], target_records[uid]
        if "textgrid" in src and src.get("textgrid") == tgt.get("textgrid"):
            raise ConfigError(
                f"item {uid}: data.source_durations and data.durations give one TextGrid "
                f"({src['textgrid']}) for both voices: give each voice's (the target's as "
                f"ID{TARGET_SUFFIX}.TextGrid, or in a folder of its own)"
            )
        tokens = vc_tokens(src, tgt, uid)
        sides = [
            side_frames(
                record, tokens, len(dataset.cache.get(item[audio])), frame_seconds, uid, key
            )
            for record, audio, key in (
                (src, "audio", "source_durations"),
                (tgt, "target_audio", "durations"),
            )
        ]
        if sides[0] is None or sides[1] is None:
            unpaired.append(f"{uid} ({'source' if sides[0] is None else 'target'} voice)")
            continue
        out[index] = (tokens, sides[0], sides[1])
    report_unpaired(unpaired, len(out), split, "durations")
    return out


def vc_guides(
    dataset: Any,
    source_records: dict[str, dict[str, Any]],
    target_records: dict[str, dict[str, Any]],
    reduction: int,
    r: int,
    width: float,
    split: str,
    frame_seconds: float,
) -> Guides:
    """The guides of a VC dataset (`aligner.data.datasets.VCDataset`): each pair's target
    frames mapped to source encoder positions through the durations of both sides
    (`pair_durations`)."""
    pairs = pair_durations(dataset, source_records, target_records, split, frame_seconds)
    paths = {
        str(dataset.items[i]["id"]): pair_positions(src, tgt, reduction)
        for i, (_, src, tgt) in pairs.items()
    }
    report(split, len(paths), len(dataset.items))
    return Guides(paths, r, width)
