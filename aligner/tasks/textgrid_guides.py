"""Another tool's TextGrids (the Montreal Forced Aligner's, Festival's, Praat's) as the
durations that guide a Tacotron's attention (`aligner.tasks.guides`): which file of a
folder is an item's (a parallel corpus's ``ID_target.TextGrid`` for its target voice), its
phones, their frames per token (`aligner.alignment.transfer`), and the count of the items
whose phones do not pair.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import torch

from aligner.alignment.textgrid import read_textgrid, textgrid_files
from aligner.alignment.tiers import optional_tokens
from aligner.alignment.transfer import MAX_EDITS, transferred_frames
from aligner.config import ConfigError

TARGET_SUFFIX = "_target"  # a parallel corpus's TextGrid of the target voice: ID_target.TextGrid


def folder_textgrids(folder: Path, key: str, target: bool) -> dict[str, Path]:
    """Item id -> TextGrid of `folder` (`textgrid_files`). A folder with ``*_target``
    TextGrids holds both voices of a parallel corpus: the `target` voice reads those, the
    other voice the rest; any other folder is read as it is, by either voice."""
    try:
        grids = textgrid_files(folder)
    except ValueError as err:
        raise ConfigError(f"data.{key}: {err}") from None
    if not any(stem.endswith(TARGET_SUFFIX) for stem in grids):
        return grids
    return {
        stem[: -len(TARGET_SUFFIX)] if target else stem: path
        for stem, path in grids.items()
        if stem.endswith(TARGET_SUFFIX) == target
    }


def textgrid_phones(path: Path, uid: str, key: str) -> list[Any]:
    """The timed phones of another tool's TextGrid, silences left out (ConfigError when it
    has no phone tier or cannot be read; an empty tier gives none)."""
    try:
        phones = read_textgrid(path).get("phones")
    except ValueError as err:
        raise ConfigError(f"data.{key}: item {uid}: {err}") from None
    if phones is None:
        raise ConfigError(
            f"data.{key}: {path} has no phone tier (tiers named phones, phone, segments "
            "or MFA's 'speaker - phones' are read): the guide needs phone times"
        )
    return phones


def textgrid_frames(
    path: Path, tokens: list[str], n_frames: int, frame_seconds: float, uid: str, key: str
) -> torch.Tensor | None:
    """The frames of each of `tokens` from the phones of the TextGrid at `path`
    (`transferred_frames`); None when they do not pair with `tokens`."""
    phones = textgrid_phones(path, uid, key)
    found = transferred_frames(phones, tokens, optional_tokens(tokens), n_frames, frame_seconds)
    return None if found is None else torch.from_numpy(found[0])


def report_unpaired(unpaired: list[str], paired: int, split: str, key: str) -> None:
    """One line on the items whose TextGrid phones did not pair with their tokens; a
    ConfigError when no training item paired."""
    if not unpaired:
        return
    if not paired and split == "training":
        raise ConfigError(
            f"data.{key}: the phones of no {split} item's TextGrid pair with its tokens (first: "
            f"{unpaired[0]}): give TextGrids of the phones data.tokenizer spells (arpabet: "
            "CMUdict's, as MFA's english_us_arpa; phonemes: eSpeak NG's IPA) and of this audio"
        )
    print(
        f"note: {len(unpaired)} {split} item(s) have TextGrid phones that do not pair with their "
        f"tokens (more than {MAX_EDITS:.0%} of the labels differ, or the times are not within "
        f"the audio; first: {unpaired[0]}): they train with the diagonal guide",
        file=sys.stderr,
    )
