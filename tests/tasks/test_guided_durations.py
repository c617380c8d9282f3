"""The attention guided by durations (``model.loss.guided.source: durations``) in the TTS
and VC tasks: records matched to the items, items without durations counted, bad records
refused in one line naming the item, the guide in every batch and in the loss, for every
mechanism of the registry."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import torch

from aligner.attention import available
from aligner.attention.guides import duration_positions, pair_positions, path_guide
from aligner.config import ConfigError, ExperimentConfig
from aligner.tasks import build_task

from .speech_corpus import MEL, TEXTS, TINY_MODEL, make_corpus

FRAMES_PER_CHAR = 4  # speech_corpus: 0.04 s a character at 8 kHz, hop 80 (plus one frame)


def _record(folder: Path, uid: str, tokens: list[str], frames: list[int], hop: int = 80) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    record = {"id": uid, "method": "search", "tokens": tokens, "frames": frames}
    record |= {"total_frames": sum(frames), "hop_length": hop, "sample_rate": MEL["sample_rate"]}
    (folder / f"{uid}.durations.json").write_text(json.dumps(record))


def _char_record(folder: Path, uid: str, text: str, **kw) -> list[int]:
    """The alignment model's record of a corpus item (chars, <s> and </s>): <s> takes one
    frame of the first character, </s> the extra final frame. Returns the TTS durations."""
    frames = [1, FRAMES_PER_CHAR - 1, *[FRAMES_PER_CHAR] * (len(text) - 1), 1]
    _record(folder, uid, ["<s>", *text, "</s>"], frames, **kw)
    return [FRAMES_PER_CHAR] * len(text) + [1]


def _tts_cfg(durations, mechanism: str = "location", **guided) -> ExperimentConfig:
    model = copy.deepcopy(TINY_MODEL)
    model["encoder"] = {"embed_dim": 16, "out_dim": 32}  # dot: the attention RNN's size
    model["attention"] = mechanism
    model["loss"] = {"guided": {"weight": 1.0, "mode": "constant", "source": "durations", **guided}}
    data = {"mel": MEL, "durations": durations, "log": {"plot_items": 2, "griffin_lim_iters": 2}}
    return ExperimentConfig.from_dict({"task": "tts", "data": data, "model": model})


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = make_corpus(tmp_path_factory.mktemp("guided"))
    for i, text in enumerate(TEXTS[:5]):  # u5 (validation) has none
        _char_record(root / "ali", f"u{i}", text)
    return root


def test_tts_batches_carry_the_durations_guide_and_count_the_items_without(corpus, capsys):
    task = build_task(_tts_cfg("ali", width=0.0), corpus)
    assert "1 of 2 validation items have no durations" in capsys.readouterr().err
    batch = task.collate([task.valid_set[0], task.valid_set[1]])  # u4 (guided), u5 (not)
    assert batch["guided"].tolist() == [True, False]
    durations = torch.tensor([FRAMES_PER_CHAR] * len(TEXTS[4]) + [1])
    path = duration_positions(durations)
    n = len(durations)
    expected = path_guide([path], torch.tensor([n]), -(-len(path) // 2), n, r=2)[0]
    steps = expected.size(0)
    assert torch.allclose(batch["guide"][0, :steps, :n], expected)
    assert batch["guide"][1].abs().sum() == 0
    loss, parts = task.loss(task.model, batch, step=0)
    loss.backward()
    assert torch.isfinite(loss) and parts["guided"] > 0


def test_the_guided_loss_is_the_divergence_for_guided_items_and_the_diagonal_for_others(corpus):
    from aligner.attention.guides import guide_divergence
    from aligner.attention.losses import decoder_steps, diagonal_penalty

    task = build_task(_tts_cfg("ali"), corpus)
    batch = task.collate([task.valid_set[0], task.valid_set[1]])
    task.model.eval()
    task.model.decoder.prenet.always_dropout = False
    _, parts = task.loss(task.model, batch, step=0)
    with torch.no_grad():
        out = task.forward(task.model, batch)
    steps = decoder_steps(batch["mel_lengths"], 2)
    kl = guide_divergence(out.alignments, batch["guide"], steps)[0]
    diag = diagonal_penalty(out.alignments, batch["mel_lengths"], out.enc_mask.sum(1), 0.2, 2)[1]
    assert parts["guided"] == pytest.approx(float((kl + diag) / steps.sum()), rel=1e-4)


@pytest.mark.parametrize("mechanism", available())
def test_every_mechanism_learns_its_guide(corpus, mechanism):
    """A few steps on the guided loss alone bring every mechanism's attention closer to
    the guide (finite gradients on a padded batch)."""
    torch.manual_seed(0)
    cfg = _tts_cfg("ali", mechanism=mechanism)
    cfg.model["loss"]["mel_weight"] = 0.0
    cfg.model["loss"]["stop_weight"] = 0.0
    task = build_task(cfg, corpus)
    task.model.decoder.prenet.always_dropout = False
    task.model.eval()  # no dropout: the loss moves only with the weights
    batch = task.collate([task.train_set[i] for i in range(4)])
    opt = torch.optim.Adam(task.model.parameters(), lr=1e-2)
    losses = []
    for _ in range(40):
        loss, parts = task.loss(task.model, batch, step=0)
        opt.zero_grad()
        loss.backward()
        grads = [p.grad for p in task.model.parameters() if p.grad is not None]
        assert all(torch.isfinite(g).all() for g in grads)
        opt.step()
        losses.append(parts["guided"])
    assert losses[-1] < 0.8 * losses[0], losses


def test_bad_durations_are_one_line_naming_the_item(tmp_path):
    root = make_corpus(tmp_path / "c")
    _char_record(root / "ali", "u0", TEXTS[0])
    _record(root / "ali", "u1", ["<s>", *"bxd bead", "</s>"], [1] * 10)
    with pytest.raises(ConfigError, match=r"item u1: the durations' tokens differ .* token 2"):
        build_task(_tts_cfg("ali"), root)
    frames = [1, 3, *[4] * (len(TEXTS[1]) - 1), 2]  # one frame too many
    _record(root / "ali", "u1", ["<s>", *TEXTS[1], "</s>"], frames)
    with pytest.raises(ConfigError, match=r"item u1: the durations in data.durations add up to"):
        build_task(_tts_cfg("ali"), root)
    _char_record(root / "ali", "u1", TEXTS[1], hop=256)
    with pytest.raises(ConfigError, match="hop 256 .* align with an alignment model"):
        build_task(_tts_cfg("ali"), root)
    with pytest.raises(ConfigError, match="needs data.durations"):
        build_task(_tts_cfg(None), root)
    with pytest.raises(ConfigError, match="is not a folder"):
        build_task(_tts_cfg("nowhere"), root)
    with pytest.raises(ConfigError, match="guided.source must be one of diagonal, durations"):
        build_task(_tts_cfg("ali", source="prior"), root)


def _edge(frame: int) -> float:
    """Seconds of the boundary before `frame` (`aligner.alignment.tiers.frame_bounds`)."""
    return max(frame - 0.5, 0.0) * MEL["hop_length"] / MEL["sample_rate"]


def _char_textgrid(
    folder: Path, uid: str, text: str, tier: str = "phones", shift: str = ""
) -> None:
    """Another tool's TextGrid of a corpus item: a "phone" per character that is no space
    (each 0.04 s; the spaces are pauses), in the MFA layout (a folder per speaker)."""
    from aligner.alignment.intervals import Interval
    from aligner.alignment.textgrid import write_textgrid

    phones = [  # times as `aligner align` writes them: half a frame before each frame edge
        Interval(_edge(4 * k), _edge(4 * (k + 1)), chr(ord(ch) + len(shift)))
        for k, ch in enumerate(text)
        if ch != " "
    ]
    (folder / "spk").mkdir(parents=True, exist_ok=True)
    write_textgrid({tier: phones}, 0.04 * len(text), folder / "spk" / f"{uid}.TextGrid")


def test_another_tools_textgrids_guide_as_the_alignment_models_records_do(tmp_path, capsys):
    root = make_corpus(tmp_path / "c")
    for i, text in enumerate(TEXTS[:5]):
        _char_record(root / "ali", f"u{i}", text)
        _char_textgrid(root / "tg", f"u{i}", text)
    by_record = build_task(_tts_cfg("ali", width=0.0), root)
    by_grid = build_task(_tts_cfg("tg", width=0.0), root)
    for split in ("train_set", "valid_set"):
        items = [getattr(by_record, split)[k] for k in range(len(getattr(by_record, split)))]
        a, b = by_record.collate(items), by_grid.collate(items)
        assert a["guided"].tolist() == b["guided"].tolist()
        assert torch.equal(a["guide"], b["guide"])
    # phones of another alphabet: an item that does not pair is counted, none is an error
    _char_textgrid(root / "tg", "u0", TEXTS[0], shift="x")
    capsys.readouterr()
    build_task(_tts_cfg("tg"), root)
    err = capsys.readouterr().err
    assert "1 training item(s) have TextGrid phones that do not pair" in err and "u0" in err
    _char_textgrid(root / "tg", "u0", TEXTS[0])
    _char_textgrid(root / "tg", "u4", TEXTS[4], shift="x")  # the only guided validation item
    build_task(_tts_cfg("tg"), root)  # counted, not an error: training items pair
    assert "1 validation item(s) have TextGrid phones that do not pair" in capsys.readouterr().err
    _char_textgrid(root / "tg", "u4", " ")  # a phone tier with no phone in it: counted too
    build_task(_tts_cfg("tg"), root)
    assert "1 validation item(s)" in capsys.readouterr().err
    for i, text in enumerate(TEXTS[:5]):
        _char_textgrid(root / "tg", f"u{i}", text, shift="x")
    with pytest.raises(ConfigError, match="the phones of no training item.s TextGrid pair"):
        build_task(_tts_cfg("tg"), root)
    _char_textgrid(root / "words_only", "u0", TEXTS[0], tier="words")
    with pytest.raises(ConfigError, match="has no phone tier"):
        build_task(_tts_cfg("words_only"), root)


def test_vc_guides_map_target_frames_to_source_encoder_positions(tmp_path):
    root = make_corpus(tmp_path / "c", parallel=True)
    import soundfile as sf

    n_frames = {}
    for i, text in enumerate(TEXTS):
        for side, name in (("src", f"u{i}"), ("tgt", f"t{i}")):
            n_frames[side, i] = 1 + sf.info(root / "wavs" / f"{name}.wav").frames // 80
        tokens = ["<s>", *text, "</s>"]
        src = [0, *[FRAMES_PER_CHAR] * len(text), 1]
        tgt = [0, *[(n_frames["tgt", i] - 1) // len(text)] * len(text), 0]
        tgt[-1] = n_frames["tgt", i] - sum(tgt)
        _record(root / "ali_src", f"u{i}", tokens, src)
        _record(root / "ali_tgt", f"u{i}", tokens, tgt)
    model = copy.deepcopy(TINY_MODEL)
    model["encoder"] = {
        "kind": "mel",
        "prenet_dims": [16],
        "conv_dim": 16,
        "out_dim": 16,
        "reduction": 2,
    }
    model["loss"] = {"guided": {"mode": "constant", "source": "durations", "width": 0.0}}
    data = {"mel": MEL, "durations": "ali_tgt", "source_durations": ["ali_src"]}
    cfg = ExperimentConfig.from_dict({"task": "vc", "data": data, "model": model})
    task = build_task(cfg, root)
    batch = task.collate([task.train_set[0], task.train_set[1]])
    assert batch["guided"].all()
    out = task.forward(task.model, batch)
    assert batch["guide"].shape == out.alignments.shape
    src = torch.tensor([0, *[FRAMES_PER_CHAR] * len(TEXTS[0]), 1])
    rec = json.loads((root / "ali_tgt" / "u0.durations.json").read_text())
    path = pair_positions(src, torch.tensor(rec["frames"]), reduction=2)
    n_enc = -(-int(src.sum()) // 2)
    steps = -(-len(path) // 2)
    expected = path_guide([path], torch.tensor([n_enc]), steps, n_enc, r=2)[0]
    assert torch.allclose(batch["guide"][0, :steps, :n_enc], expected)
    loss, _ = task.loss(task.model, batch, step=0)
    assert torch.isfinite(loss)
    # both voices' TextGrids (another tool's phones) time the same path where no voice pauses
    from aligner.alignment.intervals import Interval
    from aligner.alignment.textgrid import write_textgrid

    # (one folder holds both, as `aligner prepare --parallel` writes them: ID_target.TextGrid)
    for i, text in enumerate(TEXTS):
        m = (n_frames["tgt", i] - 1) // len(text)
        for name, step in ((f"u{i}", FRAMES_PER_CHAR), (f"u{i}_target", m)):
            phones = [
                Interval(_edge(step * k), _edge(step * (k + 1)), c) for k, c in enumerate(text)
            ]
            write_textgrid(
                {"phones": phones}, 0.01 * step * len(text), root / "grids" / f"{name}.TextGrid"
            )
            if name == f"u{i}":
                write_textgrid({"phones": phones}, 1.0, root / "one_voice" / f"{name}.TextGrid")

    def vc(durations: str, sources: str):
        both = {**data, "durations": durations, "source_durations": sources}
        return build_task(
            ExperimentConfig.from_dict({"task": "vc", "data": both, "model": model}), root
        )

    by_grid = vc("grids", "grids")
    dab = [k for k, it in enumerate(task.train_set.items) if it["id"] == "u2"]
    a, b = task.collate([task.train_set[dab[0]]]), by_grid.collate([by_grid.train_set[dab[0]]])
    assert b["guided"].all() and torch.allclose(a["guide"], b["guide"])
    with pytest.raises(ConfigError, match="give one TextGrid .* for both voices"):
        vc("one_voice", "one_voice")
    del data["source_durations"]
    with pytest.raises(ConfigError, match="needs data.source_durations"):
        build_task(ExperimentConfig.from_dict({"task": "vc", "data": data, "model": model}), root)


def test_audio_keys_give_one_item_per_voice_of_a_parallel_corpus(tmp_path):
    """data.audio_keys [audio, target_audio]: an alignment model (or TTS) learns both
    voices of a VC corpus; the target's items are ID@target_audio with its timings."""
    from aligner.data.manifest import read_manifest, write_manifest

    root = make_corpus(tmp_path / "c", parallel=True)
    items = read_manifest(root / "train.jsonl")
    items[0]["target_timings"] = {"duration": 1.0, "words": [[0.0, 1.0, "a"]], "phones": []}
    items[0]["timings"] = {"duration": 0.5, "words": [[0.0, 0.5, "a"]], "phones": []}
    write_manifest(root / "train.jsonl", items)
    model = copy.deepcopy(TINY_MODEL)
    model["encoder"] = {"embed_dim": 16, "out_dim": 16}
    data = {"mel": MEL, "audio_keys": ["audio", "target_audio"]}
    task = build_task(
        ExperimentConfig.from_dict({"task": "tts", "data": data, "model": model}), root
    )
    ids = [it["id"] for it in task.train_set.items]
    assert ids[:2] == ["u0", "u0@target_audio"] and len(ids) == 2 * len(items)
    src, tgt = task.train_set.items[:2]
    assert tgt["audio"] == items[0]["target_audio"] and src["audio"] == items[0]["audio"]
    assert tgt["timings"]["duration"] == 1.0 and src["timings"]["duration"] == 0.5
    assert torch.equal(task.train_set[0]["tokens"], task.train_set[1]["tokens"])
    assert len(task.train_set[0]["mel"]) != len(task.train_set[1]["mel"])
    plain = make_corpus(tmp_path / "plain")
    with pytest.raises(
        ValueError, match="no item has target_audio: this recipe trains on a parallel"
    ):
        build_task(ExperimentConfig.from_dict({"task": "tts", "data": data, "model": model}), plain)
