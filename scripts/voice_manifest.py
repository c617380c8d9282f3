"""One voice of a parallel (VC) corpus as a TTS manifest: each item's ``KEY`` recording as
its ``audio``, with that voice's timings and speaker, the same id and text. What a TTS
model of the target voice trains on, e.g. to start a FastVC's decoder from (the VC egs'
``--pretrain tts``); the durations of that voice (``aligner align --audio-key KEY``) keep
their ids.

    python scripts/voice_manifest.py --in data/train.jsonl --out data/target_train.jsonl \
        [--key target_audio] [--force]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from aligner.data.manifest import ManifestError, read_manifest, write_manifest


def voice_items(items: list[dict[str, Any]], key: str, where: str) -> list[dict[str, Any]]:
    """The items of the voice whose recordings `key` holds (``target_audio``: the target's
    ``target_timings`` and ``target_speaker`` become ``timings`` and ``speaker``);
    ManifestError naming the first item without that recording."""
    out = []
    for item in items:
        if not item.get(key):
            raise ManifestError(f"{where}: item {item.get('id')!r} has no {key!r} recording")
        voice = {"id": item["id"], "audio": item[key], "text": item.get("text", "")}
        for name in ("timings", "speaker"):  # named as `with_voices` names them
            value = item.get(key.replace("audio", name))
            if value is not None:
                voice[name] = value
        out.append(voice)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--in", dest="source", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--key", default="target_audio", help="the recordings to keep")
    parser.add_argument("--force", action="store_true", help="overwrite --out")
    args = parser.parse_args(argv)
    if args.out.exists() and not args.force:
        print(f"voice_manifest.py: {args.out} exists; pass --force to overwrite", file=sys.stderr)
        return 1
    try:
        items = voice_items(read_manifest(args.source), args.key, str(args.source))
        write_manifest(args.out, items)
    except (ManifestError, FileNotFoundError, OSError) as err:
        print(f"voice_manifest.py: {err}", file=sys.stderr)
        return 1
    print(f"{args.out}: {len(items)} items of {args.key}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
