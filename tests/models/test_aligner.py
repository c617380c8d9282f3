"""The alignment model and its task: a padded batch equals its items one by one, hard
durations sum to the frames with every token present, the losses switch as configured,
training lowers the forward-sum loss, and `aligner align` reads its checkpoints."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from click.testing import CliRunner

from aligner.alignment.lengths import usual_frames
from aligner.checkpoint import atomic_save
from aligner.cli import main
from aligner.config import ConfigError, ExperimentConfig
from aligner.inference import InferenceError, load_speech_model
from aligner.models.alignment import AlignerConfig, AlignmentModel
from aligner.tasks import build_task
from aligner.tasks.align import AlignLossConfig, hard_alignment
from tests.cli.test_speech_cli import MEL, write_corpus, write_wav

TINY = {"channels": 16, "attn_dim": 8, "text_kernels": [3], "mel_kernels": [3, 1]}


def model(**kw) -> AlignmentModel:
    torch.manual_seed(0)
    return AlignmentModel(AlignerConfig(n_symbols=12, n_mels=6, **{**TINY, **kw})).eval()


def batch(seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    tokens, frames = torch.tensor([5, 3, 4]), torch.tensor([11, 7, 9])
    ids = torch.randint(1, 12, (3, 5), generator=g) * (torch.arange(5) < tokens[:, None])
    mel = torch.randn(3, 11, 6, generator=g) * (torch.arange(11) < frames[:, None])[..., None]
    return ids, tokens, mel, frames


@pytest.mark.parametrize("prior", [True, False])
def test_a_padded_batch_equals_its_items_one_by_one(prior):
    m, (ids, tokens, mel, frames) = model(), batch()
    out = m(ids, tokens, mel, frames, prior=prior)
    for b in range(3):
        n, t = int(tokens[b]), int(frames[b])
        one = m(
            ids[b : b + 1, :n],
            tokens[b : b + 1],
            mel[b : b + 1, :t],
            frames[b : b + 1],
            prior=prior,
        )
        assert torch.allclose(out.alignments[b, :t, :n], one.alignments[0], atol=1e-5)
        assert torch.allclose(out.log_scores[b, :t, :n], one.log_scores[0], atol=1e-4)
        assert (out.alignments[b, t:] == 0).all() and (out.alignments[b, :, n:] == 0).all()
        assert torch.allclose(out.alignments[b, :t].sum(1), torch.ones(t))


def test_hard_durations_sum_to_the_frames_with_every_token_present():
    m, (ids, tokens, mel, frames) = model(), batch(1)
    paths = hard_alignment(m(ids, tokens, mel, frames), frames)
    for b in range(3):
        counts = np.bincount(paths[b, : frames[b]], minlength=5)
        assert counts.sum() == frames[b] and (counts[: tokens[b]] >= 1).all()
        assert (counts[tokens[b] :] == 0).all() and (paths[b, frames[b] :] == -1).all()


def test_prior_scaling_zero_means_no_prior_and_kernels_are_checked():
    ids, tokens, mel, frames = batch()
    with_prior, without = model(), model(prior_scaling=0.0)
    a = with_prior(ids, tokens, mel, frames, prior=False).log_scores
    assert torch.allclose(a, without(ids, tokens, mel, frames).log_scores)
    assert not torch.allclose(a, with_prior(ids, tokens, mel, frames).log_scores)
    with pytest.raises(ValueError, match="odd"):
        model(mel_kernels=[2])
    with pytest.raises(ValueError, match="content scorer"):
        model(attention="dca")
    assert model(attention="general")(ids, tokens, mel, frames).alignments.shape == (3, 11, 5)


def test_binarization_switches_on_after_its_start():
    cfg = AlignLossConfig(bin_weight=2.0, bin_start=10, bin_ramp=4)
    assert [cfg.bin_scale(s) for s in (0, 9, 10, 11, 13, 50)] == [0, 0, 0.5, 1.0, 2.0, 2.0]


def build(tmp: Path, **model_kw):
    data = write_corpus(tmp / "data", vc=False)
    loss = {"bin_start": 3, "bin_ramp": 1}
    cfg = ExperimentConfig.from_dict(
        {
            "task": "align",
            "data": {"mel": MEL, "log": {"plot_items": 2}},
            "model": {**TINY, **model_kw, "loss": loss},
        }
    )
    return cfg, build_task(cfg, data)


def test_training_lowers_the_forward_sum_loss(tmp_path):
    torch.manual_seed(0)
    _, task = build(tmp_path)
    b = task.collate([task.train_set[i] for i in range(len(task.train_set))])
    opt = torch.optim.Adam(task.model.parameters(), 1e-2)
    losses = []
    for step in range(80):  # word separators are not required: the loss starts lower
        loss, parts = task.loss(task.model, b, step)
        assert ("binarization" in parts) == (step >= 3)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(parts["forward_sum"])
    assert losses[-1] < 0.9 * losses[0]
    metrics = task.validate(task.model.eval(), [b], 80, None)
    assert {"loss", "focus_rate"} <= set(metrics)
    # each phone's usual length inside words, from this validation's search, for the
    # checkpoint's symbols (`aligner align`'s tiers read it)
    with torch.no_grad():
        searched = task.searched(task.forward(task.model, b), b)
    timed = [(tokens, frames) for _, tokens, frames, _ in searched]
    assert task.symbols["usual_frames"] == usual_frames(timed)
    assert sum(len(tokens) for tokens, _ in timed) == int(b["token_lengths"].sum())


def test_the_data_decides_the_sizes(tmp_path):
    with pytest.raises(ConfigError, match="n_mels=99 disagrees"):
        build(tmp_path, n_mels=99)


@pytest.fixture(scope="module")
def aligner_ckpt(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("aligner")
    cfg, task = build(tmp)
    state = {
        "model": task.model.state_dict(),
        "step": 5,
        "config": cfg.to_dict(),
        "symbols": task.symbols,
    }
    atomic_save(state, tmp / "aligner.pt")
    return tmp / "aligner.pt"


def test_an_aligner_checkpoint_loads_as_the_alignment_family(aligner_ckpt):
    from aligner.inference import AlignModel, load_model

    model = load_model(aligner_ckpt)
    assert isinstance(model, AlignModel) and model.r == 1 and model.has_text
    assert model.usual_frames is None  # written before any validation


def test_the_usual_lengths_of_a_checkpoint_reach_the_tiers(aligner_ckpt, tmp_path):
    """A checkpoint's ``usual_frames`` are its model's: `aligner align` gives them to the
    tiers (a phone after a pause starts earlier only within the silence: the tokens'
    frames stay the search's)."""
    from aligner.inference import align

    ckpt = torch.load(aligner_ckpt, weights_only=False)
    ckpt["symbols"] = {**ckpt["symbols"], "usual_frames": {"x": 2.5}}
    atomic_save(ckpt, tmp_path / "usual.pt")
    speech = load_speech_model(tmp_path / "usual.pt", "align")
    assert speech.usual_frames == {"x": 2.5}
    manifest = aligner_ckpt.parent / "data" / "valid.jsonl"
    item = json.loads(manifest.read_text().splitlines()[0])
    got = align(speech, manifest.parent / item["audio"], item["text"], name=item["id"])
    plain = align(
        load_speech_model(aligner_ckpt, "align"),
        manifest.parent / item["audio"],
        item["text"],
        name=item["id"],
    )
    assert got.frames == plain.frames and got.utt.usual_frames == {"x": 2.5}
    assert not hasattr(model, "generate")  # it only aligns


def test_int8_is_refused_for_the_alignment_model(aligner_ckpt):

    with pytest.raises(InferenceError, match="int8 is for the attention decoders"):
        load_speech_model(aligner_ckpt, None, "cpu", "int8")


def test_align_with_an_aligner_checkpoint_writes_frame_durations(aligner_ckpt, tmp_path):
    manifest = aligner_ckpt.parent / "data" / "valid.jsonl"
    out = tmp_path / "ali"
    res = CliRunner().invoke(
        main,
        [
            "align",
            "--checkpoint",
            str(aligner_ckpt),
            "--in",
            str(manifest),
            "--out",
            str(out),
            "--no-png",
        ],
    )
    assert res.exit_code == 0, res.output
    speech = load_speech_model(aligner_ckpt)
    for line in manifest.read_text().splitlines():
        item = json.loads(line)
        record = json.loads((out / f"{item['id']}.durations.json").read_text())
        assert record["r"] == 1 and sum(record["frames"]) == record["total_frames"]
        npy = np.load(out / "durations" / f"{item['id']}.npy")
        assert npy.dtype == np.int64 and npy.tolist() == record["frames"]
        assert len(npy) == len(speech.encode_text(item["text"]))
        assert (out / f"{item['id']}.TextGrid").is_file()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["utterances"] == 3
    assert not any("repeated" in r for u in summary["items"] for r in u["suspect"])


def test_an_aligner_checkpoint_cannot_synthesize(aligner_ckpt, tmp_path):
    res = CliRunner().invoke(
        main,
        [
            "synthesize",
            "--checkpoint",
            str(aligner_ckpt),
            "--text",
            "hello",
            "--out",
            str(tmp_path / "x.wav"),
        ],
    )
    assert res.exit_code != 0 and "use `aligner align`" in res.output
    assert "Traceback" not in res.output


def test_items_too_short_for_their_tokens_are_left_out_and_counted(tmp_path, capsys):
    """An item with fewer mel frames than tokens (here a 50 ms recording of a sentence) is
    left out of training and validation with one line, not a traceback mid-training; an
    item a frame short at loss time skips tokens instead of stopping the run."""
    data = write_corpus(tmp_path / "data", vc=False)
    write_wav(data / "short.wav", 0.05, 9)
    long = {"id": "short", "audio": "short.wav", "text": "a long sentence, far too long."}
    for split in ("train", "valid"):
        with open(data / f"{split}.jsonl", "a") as f:
            f.write(json.dumps(long) + "\n")
    cfg = ExperimentConfig.from_dict(
        {
            "task": "align",
            "data": {"mel": MEL, "log": {"plot_items": 2}},
            "model": {**TINY, "loss": {"bin_start": 0, "bin_ramp": 1}},
        }
    )
    task = build_task(cfg, data)
    err = capsys.readouterr().err
    for split in ("train", "valid"):
        assert f"note: 1 of 4 {split} items have fewer mel frames than tokens" in err
    assert "first: 'short'" in err and "left out" in err
    assert [it["id"] for it in task.train_set.items] == ["u0", "u1", "u2"]
    assert len(task.train_set.tokens) == len(task.train_set.lengths) == 3
    # a batch whose item has fewer frames than tokens still gives a loss
    b = task.collate([task.train_set[i] for i in range(3)])
    b["mel_lengths"][0] = 2
    loss, parts = task.loss(task.model, b, 5)
    assert torch.isfinite(loss) and "binarization" in parts


def test_a_split_with_no_item_long_enough_is_one_clear_error(tmp_path):
    data = write_corpus(tmp_path / "data", vc=False)
    write_wav(data / "short.wav", 0.05, 9)
    long = {"id": "short", "audio": "short.wav", "text": "a long sentence, far too long."}
    (data / "valid.jsonl").write_text(json.dumps(long) + "\n")
    cfg = ExperimentConfig.from_dict({"task": "align", "data": {"mel": MEL}, "model": {**TINY}})
    with pytest.raises(ConfigError, match="every one of the 1 valid items has fewer mel frames"):
        build_task(cfg, data)


def test_align_one_recording_equals_the_manifest_run(aligner_ckpt, tmp_path):
    """`align(model, audio, text)`, the public call for one recording, gives the record that
    `aligner align` writes for the same item (the files are written from it)."""
    from aligner.inference import align, align_manifest

    manifest = aligner_ckpt.parent / "data" / "valid.jsonl"
    align_manifest(aligner_ckpt, manifest, tmp_path / "ali", png=False)
    speech = load_speech_model(aligner_ckpt, "align")
    item = json.loads(manifest.read_text().splitlines()[0])
    audio = manifest.parent / item["audio"]
    got = align(speech, audio, item["text"], name=item["id"])
    written = json.loads((tmp_path / "ali" / f"{item['id']}.durations.json").read_text())
    assert got.record == {k: v for k, v in written.items() if k != "metrics"}
    assert sum(got.frames) == got.record["total_frames"]
    assert [w.label for w in got.words] == [row[2] for row in written["words"]]


def test_the_alignment_family_and_its_capabilities(aligner_ckpt):
    """The family comes from the checkpoint (an old one without ``family`` takes its task's
    default); the role says what it can do."""
    from aligner.checkpoint import checkpoint_family, read_checkpoint

    _, state = read_checkpoint(aligner_ckpt)
    assert checkpoint_family(state) == ("forward_sum", "align")
    old = {**state, "config": {k: v for k, v in state["config"].items() if k != "family"}}
    assert checkpoint_family(old) == ("forward_sum", "align")
    speech = load_speech_model(aligner_ckpt, "align")
    assert speech.role.hard_alignment and not speech.role.free_running
    with pytest.raises(InferenceError, match="cannot synthesize; use `aligner align`"):
        load_speech_model(aligner_ckpt, "synthesize")


def test_the_validations_boundary_error_is_what_aligner_align_scores(tmp_path):
    """On items with reference timings the validation's ``word_boundary_ms`` (one search per
    batch, the separators on the pauses, the usual lengths it measures) is the mean error
    that `aligner align` of its checkpoint gives under `score-alignment`: the two paths
    make the same words."""
    from aligner.evaluation.alignment import score_alignments
    from aligner.inference import align_manifest
    from tests.tasks.speech_corpus import MEL as CORPUS_MEL
    from tests.tasks.speech_corpus import make_corpus

    torch.manual_seed(0)
    data = make_corpus(tmp_path / "data")
    cfg = ExperimentConfig.from_dict(
        {"task": "align", "data": {"mel": CORPUS_MEL, "tokenizer": "chars"}, "model": TINY}
    )
    task = build_task(cfg, data)
    valid = task.collate([task.valid_set[i] for i in range(len(task.valid_set))])
    metrics = task.validate(task.model.eval(), [valid], 0, None)
    ckpt = tmp_path / "aligner.pt"
    state = {"model": task.model.state_dict(), "step": 0, "config": cfg.to_dict()}
    atomic_save({**state, "symbols": task.symbols}, ckpt)
    align_manifest(ckpt, data / "valid.jsonl", tmp_path / "ali", png=False)
    scored = score_alignments(data / "valid.jsonl", tmp_path / "ali")
    assert scored["words"]["boundaries"] > 0
    assert scored["words"]["mean_ms"] == pytest.approx(metrics["word_boundary_ms"], abs=0.01)
