#!/usr/bin/env python
"""A long-form test set from a corpus's utterances, and its scores.

``build``: utterances of a manifest (with reference ``timings``) joined with natural pauses
(``--edges BEFORE AFTER``: that much silence at the recording's ends; ``--noise SNR_DB``:
white noise that far below the speech) into recordings of
the given lengths, the references shifted to match; for each length
three versions: ``full`` (audio and text agree), ``noaudio`` (one sentence spoken in
no audio, still in the text) and ``notext`` (one sentence spoken, not in the text), and
``wrongword`` (a word replaced by another sentence's); with ``--foreign``, ``foreign`` too
(the word that ``wrongword`` replaces written in Cyrillic letters: what the audio says, in
a script an English model cannot read); with ``--music SECONDS``, ``music`` too (the full
version after that much of an instrumental intro: chords of harmonic tones at the speech's
level, audio not in the text); with ``--cut``, ``cut``, ``cutlast`` and ``cutfirst`` too
(the full version's audio stopped in the middle of a word two thirds into the recording,
or a third into its last utterance: the text goes on past the audio, the recording's last
sentence cut; or begun in the middle of a word a third into its first utterance: the text
begins before the audio); with ``--clause``, ``noclause`` too (the full version without
the audio of three words of a sentence, or ``--clause-words N``: its first, middle or last
ones by the seed, a reader who left out a clause; the text has them); with
``--replaced``, ``replaced`` too (the full version's audio, its text saying another
utterance of the corpus in place of the one ``noaudio`` lacks). Writes
``long.jsonl`` (``id, audio, text, timings, mismatch``) and ``parts_MIN.jsonl`` (the
utterances used, for the utterance-by-utterance baseline) into OUT.

``score``: the word boundaries of `aligner align --long-form`'s records against the
references (words paired in order by their labels; the words of a sentence the text or
the audio lacks left out), the mismatches it reported against the one put in, and how
far the words within 5 s of it moved (their errors against the same words' in the
version without it).

    python scripts/longform_testset.py build --in data/test.jsonl --out long --minutes 5 20
    aligner align --long-form --checkpoint exp/align --in long/long.jsonl --out ali_long
    python scripts/longform_testset.py score --reference long/long.jsonl --predicted ali_long

``segments``: an utterance corpus that `aligner segment` cut from those alignments against
the references: each utterance's words (``aligned_words``, back in the recording's time)
against the reference words in its span, its text against theirs, the cuts that fall
inside a reference word, the utterances that overlap a put-in mismatch, and the share of
the reference words (of the recordings it cut) that some utterance holds.

    aligner segment --in long/long.jsonl --alignments ali_long --out corpus
    python scripts/longform_testset.py segments --reference long/long.jsonl --segmented corpus
"""

from __future__ import annotations

import argparse
import difflib
import json
import random
import sys
from pathlib import Path

import numpy as np

SIDES = ("words", "phones")


def _items(path: Path) -> list[dict]:
    items = [json.loads(ln) for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]
    for it in items:
        it["audio"] = str((path.parent / it["audio"]).resolve())
    return [it for it in items if it.get("timings")]


def _join(parts: list[dict], pauses: list[float], rate: int, drop: int | None):
    """(wav, timings, span of the dropped part) of `parts` joined, part `drop` left out of
    the audio; ``pauses[i]`` seconds of silence before part i (and after the last)."""
    import soundfile

    chunks, words, phones, at, span = [], [], [], 0.0, None
    for i, (part, pause) in enumerate(zip(parts, pauses)):
        chunks.append(np.zeros(int(round(pause * rate)), np.float32))
        at += len(chunks[-1]) / rate
        if i == drop:
            span = (at, at)
            continue
        wav, sr = soundfile.read(part["audio"], dtype="float32")
        if sr != rate:
            raise SystemExit(f"{part['id']}: {sr} Hz, the others {rate} Hz")
        for side, out in zip(SIDES, (words, phones)):
            out += [
                [round(s + at, 5), round(e + at, 5), lab] for s, e, lab in part["timings"][side]
            ]
        chunks.append(wav)
        at += len(wav) / rate
    chunks.append(np.zeros(int(round(pauses[-1] * rate)), np.float32))
    wav = np.concatenate(chunks)
    duration = len(wav) / rate
    return wav, {"duration": round(duration, 5), "words": words, "phones": phones}, span


def _with_noise(wav: np.ndarray, snr_db: float, seed: int) -> np.ndarray:
    """`wav` with white noise `snr_db` below the level of its sound (the RMS of the
    samples louder than -40 dB of its peak), the same noise for every version of a seed."""
    loud = wav[np.abs(wav) > np.abs(wav).max() * 0.01]
    level = float(np.sqrt(np.mean(loud**2))) if loud.size else 0.0
    noise = np.random.default_rng(seed).standard_normal(len(wav)).astype(np.float32)
    return (wav + noise * level * 10 ** (-snr_db / 20)).astype(np.float32)


def _music(seconds: float, rate: int, level: float, seed: int) -> np.ndarray:
    """`seconds` of an instrumental intro at RMS `level`: chords of three notes of a major
    scale (1.2-2.4 s each, a soft attack and release, 6 harmonics, a slow vibrato) over
    quiet noise. Sustained harmonic tones are what an alignment model trained on speech
    takes for vowels."""
    rng = np.random.default_rng(seed)
    n = int(round(seconds * rate))
    out = np.zeros(n, np.float64)
    scale = [0, 2, 4, 5, 7, 9, 11, 12, 14, 16]
    at = 0
    while at < n:
        length = min(n - at, int(rng.uniform(1.2, 2.4) * rate))
        t = np.arange(length) / rate
        root = 110.0 * 2 ** (rng.integers(0, 12) / 12)
        envelope = np.minimum(1.0, np.minimum(t / 0.08, (length / rate - t) / 0.15))
        for degree in rng.choice(scale, 3, replace=False):
            f0 = root * 2 ** (degree / 12) * (1 + 0.004 * np.sin(2 * np.pi * 5.5 * t))
            phase = 2 * np.pi * np.cumsum(f0) / rate
            for k in range(1, 7):
                out[at : at + length] += envelope * np.sin(k * phase) / k
        at += length
    out += 0.01 * rng.standard_normal(n) * np.abs(out).max()
    return (out * level / max(float(np.sqrt(np.mean(out**2))), 1e-9)).astype(np.float32)


def _shifted(timings: dict, by: float, since: float = float("-inf")) -> dict:
    """`timings` moved `by` seconds, without the words and phones that begin before
    `since` (seconds of the unmoved timings)."""
    moved = {
        side: [
            [round(s + by, 5), round(e + by, 5), lab] for s, e, lab in timings[side] if s >= since
        ]
        for side in SIDES
    }
    return {"duration": round(timings["duration"] + by, 5), **moved}


def _after(intro: np.ndarray, wav: np.ndarray, timings: dict, rate: int):
    """`wav` after `intro`, its `timings` shifted to match."""
    return np.concatenate([intro, wav]), _shifted(timings, len(intro) / rate)


def _cut(wav: np.ndarray, timings: dict, rate: int, word: int):
    """`wav` stopped in the middle of word `word`, with the references of the words and
    phones that end before it, and that time."""
    start, end, _ = timings["words"][word]
    at = (start + end) / 2
    kept = {side: [x for x in timings[side] if x[1] <= at] for side in SIDES}
    return wav[: int(at * rate)], {"duration": round(at, 5), **kept}, at


def _cut_before(wav: np.ndarray, timings: dict, rate: int, word: int):
    """`wav` begun in the middle of word `word`, with the references of the words and
    phones that begin after that, shifted to match."""
    start, end, _ = timings["words"][word]
    first = int(round((start + end) / 2 * rate))
    return wav[first:], _shifted(timings, -first / rate, since=first / rate)


CLAUSE = 3  # words the noclause version's audio lacks


def _without_clause(
    wav: np.ndarray, timings: dict, parts: list[dict], rate: int, seed: int, cut_words: int = CLAUSE
):
    """`wav` without `cut_words` words of a sentence of `cut_words` + 3 words or more (the
    first such from three quarters into the recording on): its first, middle or last words
    (by the seed), the audio from the first one's start to the next word's start (to the last
    one's end at a sentence's end), the later references shifted to match. Returns the
    audio, the references, where the cut is and the words cut."""
    counts = [len(p["timings"]["words"]) for p in parts]
    order = list(range(3 * len(parts) // 4, len(parts))) + list(range(3 * len(parts) // 4))
    k = next((j for j in order if counts[j] >= cut_words + 3), None)
    if k is None:
        raise SystemExit(f"--clause: no sentence of {cut_words + 3} words or more")
    n, before = counts[k], sum(counts[:k])
    a = {0: 0, 1: n // 2 - cut_words // 2, 2: n - cut_words}[
        random.Random(seed + 1000).randrange(3)
    ]
    words = timings["words"]
    start = words[before + a][0]
    end = words[before + a + cut_words][0] if a + cut_words < n else words[before + n - 1][1]
    lacked = " ".join(w[2] for w in words[before + a : before + a + cut_words])
    cut = int(round(start * rate)), int(round(end * rate))
    by = -(cut[1] - cut[0]) / rate
    kept = {
        side: [x for x in timings[side] if x[1] <= start + 1e-6]
        + [
            [round(x[0] + by, 5), round(x[1] + by, 5), x[2]]
            for x in timings[side]
            if x[0] >= end - 1e-6
        ]
        for side in SIDES
    }
    out = np.concatenate([wav[: cut[0]], wav[cut[1] :]])
    return out, {"duration": round(len(out) / rate, 5), **kept}, round(start, 5), lacked


def build(args: argparse.Namespace) -> None:
    import soundfile

    items = [it for path in args.inputs for it in _items(Path(path))]
    if not items:
        raise SystemExit(
            f"{', '.join(args.inputs)}: no item with reference timings; give manifests that "
            "have them (aligner prepare espeak / festival writes them)"
        )
    rng = random.Random(args.seed)
    out = Path(args.out)
    if (out / "long.jsonl").exists() and not args.force:
        raise SystemExit(f"{out / 'long.jsonl'} exists; pass --force to overwrite it")
    (out / "wavs").mkdir(parents=True, exist_ok=True)
    rate = soundfile.info(items[0]["audio"]).samplerate
    lines = []
    for minutes in args.minutes:
        order, parts, total = list(items), [], 0.0
        rng.shuffle(order)
        for it in order:
            if total >= 60 * minutes:
                break
            parts.append(it)
            total += it["duration"] + sum(args.pause) / 2
        if total < 60 * minutes * 0.95:
            raise SystemExit(f"{len(items)} utterances hold {total / 60:.1f} min, not {minutes}")
        pauses = [rng.uniform(*args.pause) for _ in range(len(parts) + 1)]
        if args.edges is not None:  # silence before the first sentence and after the last
            pauses[0], pauses[-1] = args.edges
        k = len(parts) // 2  # the sentence one version lacks
        texts = [p["text"] for p in parts]
        w, wrong = _wrong_word(parts[k // 2], parts[k], args.wrong_word)
        swapped = texts[: k // 2] + [wrong] + texts[k // 2 + 1 :]
        versions = [
            ("full", None, texts),
            ("noaudio", k, texts),
            ("notext", None, texts[:k] + texts[k + 1 :]),
            ("wrongword", None, swapped),
        ]
        if args.foreign:
            foreign = _in_cyrillic(parts[k // 2], w)
            versions.append(("foreign", None, texts[: k // 2] + [foreign] + texts[k // 2 + 1 :]))
        if args.music:
            versions.append(("music", None, texts))
        if args.cut:
            versions += [("cut", None, texts), ("cutlast", None, texts), ("cutfirst", None, texts)]
        if args.clause:
            versions.append(("noclause", None, texts))
        if args.replaced:
            other = _replacement(order[len(parts) :], parts[k])
            versions.append(("replaced", None, [*texts[:k], other, *texts[k + 1 :]]))
        for version, drop, text in versions:
            uid = f"long_{minutes:g}min_{version}"
            wav, timings, span = _join(parts, pauses, rate, drop)
            if version == "music":
                loud = wav[np.abs(wav) > np.abs(wav).max() * 0.01]
                level = float(np.sqrt(np.mean(loud**2)))
                intro = _music(args.music, rate, level, args.seed)
                wav, timings = _after(intro, wav, timings, rate)
            if version in ("cut", "cutlast"):
                n, last = len(timings["words"]), len(parts[-1]["timings"]["words"])
                word = 2 * n // 3 if version == "cut" else n - last + last // 3
                rest = " ".join(w[2] for w in timings["words"][word:])
                wav, timings, at = _cut(wav, timings, rate, word)
            if version == "cutfirst":  # a third into the first utterance, past its first word
                word = max(1, len(parts[0]["timings"]["words"]) // 3)
                lacked = " ".join(w[2] for w in timings["words"][: word + 1])
                wav, timings = _cut_before(wav, timings, rate, word)
            if version == "noclause":
                wav, timings, at, lacked = _without_clause(
                    wav, timings, parts, rate, args.seed, args.clause_words
                )
            if args.noise is not None:
                wav = _with_noise(wav, args.noise, args.seed)
            soundfile.write(out / "wavs" / f"{uid}.wav", wav, rate)
            item = {"id": uid, "audio": f"wavs/{uid}.wav", "text": " ".join(text)}
            item["timings"] = timings
            if version in ("wrongword", "foreign"):
                before = sum(len(p["timings"]["words"]) for p in parts[: k // 2])
                start, end, said = timings["words"][before + w]
                kind = "word unlike its audio" if version == "wrongword" else FOREIGN
                item["mismatch"] = {"kind": kind, "start": start, "end": end, "text": said}
            elif version in ("cut", "cutlast"):
                item["mismatch"] = {
                    "kind": "text not in the audio",
                    "start": round(at, 5),
                    "end": round(at, 5),
                    "text": rest,
                }
            elif version == "noclause":
                item["mismatch"] = {
                    "kind": "text not in the audio",
                    "start": round(at, 5),
                    "end": round(at, 5),
                    "text": lacked,
                }
            elif version == "cutfirst":
                item["mismatch"] = {
                    "kind": "text not in the audio",
                    "start": 0.0,
                    "end": 0.0,
                    "text": lacked,
                }
            elif version == "music":
                item["mismatch"] = {
                    "kind": "audio not in the text",
                    "start": 0.0,
                    "end": round(args.music, 5),
                    "text": "",
                }
            elif version != "full":
                if version in ("notext", "replaced"):
                    before = sum(len(p["timings"]["words"]) for p in parts[:k])
                    n = len(parts[k]["timings"]["words"])
                    span = (timings["words"][before][0], timings["words"][before + n - 1][1])
                kind = "audio not in the text" if version == "notext" else "text not in the audio"
                item["mismatch"] = {
                    "kind": kind,
                    "start": span[0],
                    "end": span[1],
                    "text": text[k] if version == "replaced" else texts[k],
                }
            lines.append(json.dumps(item, ensure_ascii=False))
        with open(out / f"parts_{minutes:g}min.jsonl", "w", encoding="utf-8") as fh:
            for p in parts:
                fh.write(json.dumps({**p, "audio": p["audio"]}, ensure_ascii=False) + "\n")
    (out / "long.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{len(lines)} recordings in {out / 'long.jsonl'}")


def _replacement(unused: list[dict], part: dict) -> str:
    """The text of the utterance of `unused` (none of the recording's) whose number of words
    is nearest `part`'s: what the replaced version's text says in place of `part`'s."""
    if not unused:
        raise SystemExit("--replaced: every utterance is in the recording; give more of them")
    n = len(part["timings"]["words"])
    return min(unused, key=lambda it: abs(len(it["timings"]["words"]) - n))["text"]


def _wrong_word(part: dict, other: dict, where: str = "longest") -> tuple[int, str]:
    """(index, text): `part`'s text with its longest (or first, or last: `where`) word put in
    place of another sentence's longest word (what the audio says there is not what the
    text says)."""
    words = [w[2] for w in part["timings"]["words"]]
    if where == "longest":
        w = max(range(len(words)), key=lambda i: len(words[i]))
    else:
        w = 0 if where == "first" else len(words) - 1
    new = max((x[2] for x in other["timings"]["words"]), key=len)
    if new.lower() == words[w].lower():
        new = "elephant"
    if where == "last":
        head, found, tail = part["text"].rpartition(words[w])
        if found:
            return w, head + new + tail
    return w, part["text"].replace(words[w], new, 1)


FOREIGN = "word the model cannot read"
CYRILLIC = dict(zip("abcdefghiklmnoprstuvwyz", "абкдефгхиклмнопрстуввйз"))
CYRILLIC.update(j="дж", q="к", x="кс")  # the letters Cyrillic writes with two or another


def _in_cyrillic(part: dict, w: int) -> str:
    """`part`'s text with its `w`-th word written letter by letter in Cyrillic."""
    word = part["timings"]["words"][w][2]
    said = "".join(CYRILLIC.get(c, CYRILLIC.get(c.lower(), c)) for c in word)
    if w == len(part["timings"]["words"]) - 1:
        head, found, tail = part["text"].rpartition(word)
        if found:
            return head + said + tail
    return part["text"].replace(word, said, 1)


def _key(label: str) -> str:
    return label.lower().strip(".,;:!?\"'")


def _paired(a: list, b: list) -> list[tuple[int, int]]:
    """Index pairs of two word lists matched in order by label."""
    matcher = difflib.SequenceMatcher(
        None, [_key(w[2]) for w in a], [_key(w[2]) for w in b], autojunk=False
    )
    return [(m.a + j, m.b + j) for m in matcher.get_matching_blocks() for j in range(m.size)]


def _word_errors(ref: dict, pred: dict) -> dict[int, tuple[float, float]]:
    """Reference word index -> (start, end) error in seconds of its paired prediction."""
    rw, pw = ref["timings"]["words"], pred["words"]
    return {i: (pw[j][0] - rw[i][0], pw[j][1] - rw[i][1]) for i, j in _paired(rw, pw)}


def score_item(ref: dict, pred: dict, full: tuple[dict, dict] | None = None) -> dict:
    """The boundary errors (ms) of the words paired by label, the reported mismatches
    against the one put in, and how far the words within 5 s of it moved: their boundary
    errors against the same words' in `full` (the reference and prediction of the version
    without the mismatch), else against the reference."""
    rw, pw = ref["timings"]["words"], pred["words"]
    errors, pairs = [], []
    for i, j in _paired(rw, pw):
        r, p = rw[i], pw[j]
        errors += [1000 * (p[0] - r[0]), 1000 * (p[1] - r[1])]
        pairs.append((i, r, p))
    ms = np.abs(errors)
    out = {
        "id": ref["id"],
        "words": len(rw),
        "paired": len(pairs),
        "mean_ms": round(float(ms.mean()), 2),
        "median_ms": round(float(np.median(ms)), 2),
        "over_50ms_pct": round(100 * float((ms > 50).mean()), 2),
        "reported": pred.get("mismatches", []),
    }
    put = ref.get("mismatch")
    if put:
        found = [
            m for m in out["reported"]
            if m["start"] <= put["end"] + 0.5 and m["end"] >= put["start"] - 0.5
        ]  # fmt: skip
        out["mismatch_found"] = bool(found)
        out["found_as"] = sorted({m["kind"] for m in found})
        before = {}
        if full is not None:
            full_errors = _word_errors(*full)
            same = dict(_paired(rw, full[0]["timings"]["words"]))
            before = {i: full_errors[same[i]] for i in same if same[i] in full_errors}
        moved = [
            max(
                abs(p[0] - r[0] - before.get(i, (0, 0))[0]),
                abs(p[1] - r[1] - before.get(i, (0, 0))[1]),
            )
            for i, r, p in pairs
            if abs(r[1] - put["start"]) < 5 or abs(r[0] - put["end"]) < 5
        ]
        out["beside_max_ms"] = round(1000 * max(moved, default=0.0), 1)
        out["beside_against"] = "full version" if full is not None else "reference"
    return out


def score(args: argparse.Namespace) -> None:
    refs = _read_jsonl(args.reference)
    by_id = {ref["id"]: ref for ref in refs}
    rows = []
    for ref in refs:
        path = Path(args.predicted) / f"{ref['id']}.durations.json"
        if not path.is_file():
            print(f"{ref['id']}: no {path}", file=sys.stderr)
            continue
        full = None
        base = ref["id"].rsplit("_", 1)[0] + "_full"
        full_path = Path(args.predicted) / f"{base}.durations.json"
        if ref.get("mismatch") and base in by_id and full_path.is_file():
            full = (by_id[base], json.loads(full_path.read_text(encoding="utf-8")))
        rows.append(score_item(ref, json.loads(path.read_text(encoding="utf-8")), full))
    text = json.dumps(rows, indent=1, ensure_ascii=False)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    for row in rows:
        extra = ""
        if "mismatch_found" in row:
            extra = (
                f"  put-in mismatch found: {row['mismatch_found']} ({', '.join(row['found_as'])}), "
                f"words beside it moved at most {row['beside_max_ms']} ms "
                f"(against the {row['beside_against']})"
            )
        print(
            f"{row['id']:<24} words {row['paired']}/{row['words']}  mean {row['mean_ms']} ms  "
            f"median {row['median_ms']} ms  >50 ms {row['over_50ms_pct']}%  "
            f"reported {len(row['reported'])}{extra}"
        )


def _read_jsonl(path: Path) -> list[dict]:
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return [json.loads(ln) for ln in lines if ln.strip()]


def score_segments(refs: dict[str, dict], utterances: list[dict]) -> dict:
    """The segmented corpus's `utterances` (``recording, recording_start, recording_end,
    text, aligned_words``) against the references of their recordings (id -> item)."""
    errors, held = [], {rid: set() for rid in refs}
    out = {"utterances": 0, "text_matches": 0, "cuts_in_a_word": 0, "on_a_mismatch": 0}
    for utt in utterances:
        ref = refs.get(utt.get("recording"))
        if ref is None:
            continue
        out["utterances"] += 1
        lo, hi = float(utt["recording_start"]), float(utt["recording_end"])
        words = ref["timings"]["words"]
        inside = [i for i, w in enumerate(words) if w[1] > lo + 0.005 and w[0] < hi - 0.005]
        held[utt["recording"]].update(inside)
        out["cuts_in_a_word"] += sum(
            w[0] + 0.005 < t < w[1] - 0.005 for w in words for t in (lo, hi)
        )
        said = [_key(words[i][2]) for i in inside]
        out["text_matches"] += said == [_key(w) for w in str(utt["text"]).split()]
        put = ref.get("mismatch")
        out["on_a_mismatch"] += bool(put and put["start"] < hi and put["end"] > lo)
        timed = [[w[0] + lo, w[1] + lo, w[2]] for w in utt.get("aligned_words", [])]
        mine = [words[i] for i in inside]
        for i, j in _paired(mine, timed):
            errors += [1000 * (timed[j][0] - mine[i][0]), 1000 * (timed[j][1] - mine[i][1])]
    ms = np.abs(np.asarray(errors, dtype=float))
    cut = [rid for rid, words in held.items() if words]  # the recordings it cut
    total = sum(len(refs[rid]["timings"]["words"]) for rid in cut)
    out.update(
        words_ms=round(float(ms.mean()), 2) if ms.size else None,
        words_median_ms=round(float(np.median(ms)), 2) if ms.size else None,
        words_over_50ms_pct=round(100 * float((ms > 50).mean()), 2) if ms.size else None,
        reference_words_held_pct=round(100 * sum(map(len, held.values())) / max(total, 1), 2),
    )
    return out


def segments(args: argparse.Namespace) -> None:
    refs = {ref["id"]: ref for ref in _read_jsonl(args.reference)}
    utterances = []
    for split in ("train", "valid", "test"):
        path = Path(args.segmented) / f"{split}.jsonl"
        if path.is_file():
            utterances += _read_jsonl(path)
    row = score_segments(refs, utterances)
    if args.out:
        Path(args.out).write_text(json.dumps(row, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(row))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="join utterances into long recordings")
    b.add_argument("--in", dest="inputs", nargs="+", required=True, help="manifests with timings")
    b.add_argument("--out", required=True, help="output folder")
    b.add_argument("--minutes", nargs="+", type=float, default=[5.0, 20.0], help="lengths")
    b.add_argument("--pause", nargs=2, type=float, default=[0.3, 0.9], help="pause range, s")
    b.add_argument(
        "--edges",
        nargs=2,
        type=float,
        metavar=("BEFORE", "AFTER"),
        help="seconds of digital silence before the first sentence and after the last",
    )
    b.add_argument(
        "--noise", type=float, metavar="SNR_DB", help="white noise this far below the speech"
    )
    b.add_argument(
        "--wrong-word",
        choices=("longest", "first", "last"),
        default="longest",
        help="which word of its sentence the wrongword version replaces",
    )
    b.add_argument(
        "--foreign",
        action="store_true",
        help="also a version with that word in Cyrillic letters (a word the model cannot read)",
    )
    b.add_argument(
        "--music",
        type=float,
        metavar="SECONDS",
        help="also a version after an instrumental intro this long (audio not in the text)",
    )
    b.add_argument(
        "--cut",
        action="store_true",
        help="also versions whose audio stops inside a sentence (the text goes on) or begins inside one",
    )
    b.add_argument(
        "--clause",
        action="store_true",
        help="also a version whose audio lacks words of a sentence (the text has them)",
    )
    b.add_argument(
        "--replaced",
        action="store_true",
        help="also a version whose text says another sentence of the corpus in place of one "
        "the audio holds",
    )
    b.add_argument(
        "--clause-words",
        type=int,
        default=CLAUSE,
        metavar="N",
        help=f"words the --clause version's audio lacks (default {CLAUSE}), of a sentence "
        "of N + 3 or more",
    )
    b.add_argument("--seed", type=int, default=0)
    b.add_argument("--force", action="store_true", help="overwrite long.jsonl")
    s = sub.add_parser("score", help="score long-form alignments")
    s.add_argument("--reference", required=True, help="long.jsonl of build")
    s.add_argument("--predicted", required=True, help="aligner align --long-form's folder")
    s.add_argument("--out", help="write the scores as JSON here")
    g = sub.add_parser("segments", help="score an aligner segment corpus")
    g.add_argument("--reference", required=True, help="long.jsonl of build")
    g.add_argument("--segmented", required=True, help="aligner segment's output folder")
    g.add_argument("--out", help="write the scores as JSON here")
    args = parser.parse_args(argv)
    {"build": build, "score": score, "segments": segments}[args.command](args)


if __name__ == "__main__":
    main()
