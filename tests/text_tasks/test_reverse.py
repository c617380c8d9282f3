"""Right-to-left models (`data.reverse_target`): training targets, validation, and the
reranking of a left-to-right model's beam by `aligner g2p --r2l` and eval_g2p.py."""

from __future__ import annotations

import pytest
import torch

from aligner.config import ExperimentConfig
from aligner.decode.beam import beam_search, greedy_search
from aligner.decode.rerank import rerank, reverse_scores
from aligner.inference.text_models import load_checkpoints, load_reverse_checkpoints
from aligner.tasks.text import build
from aligner.text.metrics import g2p_error_rates
from aligner.text.splitting import output_tokens, splitter

from .test_eval_g2p import load_script
from .test_text_cli import invoke, save_checkpoint
from .test_text_task import TINY


def g2p(folder, seed: int, reverse: bool, **data):
    torch.manual_seed(seed)
    cfg = ExperimentConfig(
        task="g2p",
        model=dict(TINY),
        data={"lowercase": True, "reverse_target": reverse, **data},
    )
    task = build(cfg, folder)
    with torch.no_grad():  # peaked, varied outputs that do not stop at once (untrained)
        task.model.decoder.generator.weight.mul_(6.0)
        task.model.decoder.generator.bias[task.model.eos_id] -= 4.0
    return task, cfg


@pytest.fixture
def pair(g2p_dir, tmp_path):
    """A left-to-right and a right-to-left checkpoint (untrained, different seeds)."""
    l2r, cfg = g2p(g2p_dir, 1, False)
    r2l, cfg_r = g2p(g2p_dir, 2, True)
    return (
        (save_checkpoint(l2r, tmp_path / "l2r.pt", cfg), l2r),
        (save_checkpoint(r2l, tmp_path / "r2l.pt", cfg_r), r2l),
    )


def test_reverse_target_reverses_the_training_targets_only(g2p_dir):
    l2r, _ = g2p(g2p_dir, 0, False)
    r2l, _ = g2p(g2p_dir, 0, True)
    assert r2l.tgt_table.symbols == l2r.tgt_table.symbols
    for i in (0, 5, len(l2r.train_set) - 1):
        a, b = l2r.train_set[i], r2l.train_set[i]
        torch.testing.assert_close(a["src"], b["src"])
        assert b["tgt"].tolist() == a["tgt"].flip(0).tolist()
    assert r2l.symbols["data"]["reverse_target"] is True
    assert output_tokens(["A", "B", "C"], r2l.symbols["data"]) == ["C", "B", "A"]
    assert output_tokens(["A", "B", "C"], l2r.symbols["data"]) == ["A", "B", "C"]
    assert output_tokens(["A"], {}) == ["A"]  # checkpoints from before the option


def test_right_to_left_validation_scores_the_output_turned_back(g2p_dir):
    task, _ = g2p(g2p_dir, 3, True)
    task.model.eval()
    items = [task.valid_set[i] for i in range(len(task.valid_set))]
    metrics = task.validate(task.model, [task.collate(items)], 0, None)
    batch = task.collate(items)
    split = splitter("words")
    hyps, refs = {}, {}
    for i, h in enumerate(greedy_search(task.model, batch["src"], batch["src_lengths"])):
        word = "".join(task.src_table.decode(batch["src"][i, : batch["src_lengths"][i]].tolist()))
        hyps.setdefault(word, task.tgt_table.decode(h.tokens)[::-1])
        refs.setdefault(word, []).append(split(task.valid_set.items[i]["target"]))
    per, wer = g2p_error_rates(hyps, refs)
    assert metrics["per"] == pytest.approx(100 * per) and metrics["wer"] == pytest.approx(100 * wer)


def test_directions_do_not_mix_in_an_ensemble_and_a_reranker_must_differ(pair, g2p_dir, tmp_path):
    (l2r_ckpt, _), (r2l_ckpt, _) = pair
    with pytest.raises(ValueError, match="reverse_target"):
        load_checkpoints([l2r_ckpt, r2l_ckpt], "g2p")
    _, _, _, symbols = load_checkpoints([l2r_ckpt], "g2p")
    with pytest.raises(ValueError, match="left-to-right, as the main model"):
        load_reverse_checkpoints([l2r_ckpt], "g2p", symbols)
    other, cfg = g2p(g2p_dir, 4, True, lowercase=False)
    other_ckpt = save_checkpoint(other, tmp_path / "upper.pt", cfg)
    with pytest.raises(ValueError, match="upper.pt cannot rerank.*lowercase"):
        load_reverse_checkpoints([other_ckpt], "g2p", symbols)
    model, _, _, reverse = load_reverse_checkpoints([r2l_ckpt, r2l_ckpt], "g2p", symbols)
    assert reverse["data"]["reverse_target"] and len(model.members) == 2
    from aligner.checkpoint import CheckpointError, average_checkpoints

    with pytest.raises(CheckpointError, match="one training run only"):
        average_checkpoints([l2r_ckpt, r2l_ckpt])  # same shapes, other direction
    old = torch.load(l2r_ckpt, weights_only=False)
    del old["symbols"]["data"]["reverse_target"]  # saved before the option existed
    torch.save(old, tmp_path / "old.pt")
    assert average_checkpoints([tmp_path / "old.pt", l2r_ckpt])["averaged_from"] == [0, 0]


def test_g2p_cli_reranks_with_the_right_to_left_model(pair):
    (l2r_ckpt, l2r), (r2l_ckpt, r2l) = pair
    l2r.model.eval(), r2l.model.eval()
    words = ["toad", "bad", "cat", "dote"]
    common = ["g2p", "--checkpoint", str(l2r_ckpt), "--beam", "4", *words]
    plain = invoke(*common)
    zero = invoke(*common, "--r2l", str(r2l_ckpt), "--r2l-weight", "0")
    assert plain.exit_code == 0 and zero.output == plain.output
    for weight in (0.5, 1.0):
        result = invoke(*common, "--r2l", str(r2l_ckpt), "--r2l-weight", str(weight))
        assert result.exit_code == 0, result.output
        for word, line in zip(words, result.output.splitlines()):
            ids = torch.tensor([l2r.src_table.encode(list(word))])
            lengths = torch.tensor([len(word)])
            nbest = beam_search(l2r.model, ids, lengths, 4, 4, 0.0)
            back = reverse_scores(r2l.model, ids, lengths, nbest)
            best = rerank(nbest, back, weight)[0][0]
            assert line == f"{word}\t" + " ".join(l2r.tgt_table.decode(best.tokens))
    assert result.output != plain.output  # the reverse model changed some choices
    nbest = invoke(
        *common[:5], "cat", "--r2l", str(r2l_ckpt), "--nbest", "3", "--r2l-weight", "0.7"
    )
    rows = [line.split("\t") for line in nbest.output.splitlines()]
    assert [r[1] for r in rows] == ["1", "2", "3"]
    ids = torch.tensor([l2r.src_table.encode(list("cat"))])
    found = beam_search(l2r.model, ids, torch.tensor([3]), 4, 4, 0.0)
    back = reverse_scores(r2l.model, ids, torch.tensor([3]), found)
    expected = rerank(found, back, 0.7)[0][:3]
    assert [float(r[2]) for r in rows] == pytest.approx([h.score for h in expected], abs=1e-4)
    assert [r[3] for r in rows] == [" ".join(l2r.tgt_table.decode(h.tokens)) for h in expected]
    greedy = invoke(*common, "--r2l", str(r2l_ckpt), "--beam", "1")
    assert greedy.exit_code == 1 and "--beam 2 or more" in greedy.output
    lone = invoke(*common, "--r2l-weight", "0.3")
    assert lone.exit_code == 1 and "--r2l-weight needs --r2l" in lone.output
    bad = invoke(*common, "--r2l", str(r2l_ckpt), "--r2l-weight", "2")
    assert bad.exit_code == 1 and "--r2l-weight" in bad.output
    same = invoke(*common, "--r2l", str(l2r_ckpt))
    assert same.exit_code == 1 and "other way" in same.output and "Traceback" not in same.output


def test_a_right_to_left_checkpoint_alone_prints_in_reading_order(pair):
    _, (r2l_ckpt, r2l) = pair
    r2l.model.eval()
    result = invoke("g2p", "--checkpoint", str(r2l_ckpt), "--beam", "3", "toad")
    assert result.exit_code == 0, result.output
    ids = torch.tensor([r2l.src_table.encode(list("toad"))])
    ((best,),) = beam_search(r2l.model, ids, torch.tensor([4]), 3, 1, 0.0)
    assert result.output.strip() == "toad\t" + " ".join(r2l.tgt_table.decode(best.tokens)[::-1])


def test_eval_g2p_adds_a_row_per_weight(pair, g2p_dir, capsys):
    (l2r_ckpt, l2r), (r2l_ckpt, r2l) = pair
    args = ["--checkpoint", str(l2r_ckpt), "--data", str(g2p_dir), "--beam", "3", "--no-g2p-en"]
    load_script().main([*args, "--r2l", str(r2l_ckpt), "--r2l-weight", "0", "0.5", "1"])
    out = capsys.readouterr().out.splitlines()
    assert "reranked by 1 right-to-left" in out[0]
    rows = {line.split()[0]: [float(x) for x in line.split()[1:5]] for line in out[3:]}
    assert list(rows) == ["aligner", "r2l@0", "r2l@0.5", "r2l@1"]
    assert rows["r2l@0"] == rows["aligner"]
    words = list(load_script().references(g2p_dir / "test.jsonl", lowercase=True))
    systems, _ = load_script().run_aligner([l2r_ckpt], words, 3, None, 5, [r2l_ckpt], [1.0])
    for word in words:  # batches of 5 words: rows and sources must stay matched
        ids = torch.tensor([l2r.src_table.encode(list(word))])
        lengths = torch.tensor([len(word)])
        found = beam_search(l2r.model.eval(), ids, lengths, 3, 3, 0.0)
        best = rerank(found, reverse_scores(r2l.model.eval(), ids, lengths, found), 1.0)[0][0]
        assert systems["r2l@1"][0][word] == l2r.tgt_table.decode(best.tokens)
    for per, wer, per_ns, wer_ns in rows.values():
        assert 0 <= per_ns <= per and 0 <= wer_ns <= wer <= 100  # stress only adds errors
    with pytest.raises(SystemExit, match="other way"):
        load_script().main([*args, "--r2l", str(l2r_ckpt)])


def memorize(task, batch, steps: int = 150) -> None:
    optim = torch.optim.Adam(task.model.parameters(), lr=1e-2)
    for _ in range(steps):
        loss, _ = task.loss(task.model, batch, 0)
        optim.zero_grad()
        loss.backward()
        optim.step()
    task.model.eval()


def test_a_right_to_left_translation_model_learns_and_prints_in_reading_order(tmp_path):
    """Trained to memorize two pairs, it writes them last token first; `aligner translate`
    turns them back, spaces and punctuation in place, alone or reranking a left-to-right
    model's beam (trained on the same pairs)."""
    from .conftest import write_jsonl

    pairs = [("The cat sees a dog.", "le chat voit un chien."), ("A dog eats.", "un chien mange.")]
    items = [{"id": str(i), "source": s, "target": t} for i, (s, t) in enumerate(pairs)]
    write_jsonl(tmp_path / "train.jsonl", items)
    write_jsonl(tmp_path / "valid.jsonl", items)
    data = {"src_split": "tokens", "tgt_split": "tokens", "lowercase": True}
    cfg = ExperimentConfig(
        task="nmt",
        model={**TINY, "decoder": "luong", "label_smoothing": 0.0},
        data={**data, "reverse_target": True},
    )
    torch.manual_seed(0)
    task = build(cfg, tmp_path)
    batch = task.collate([task.train_set[0], task.train_set[1]])
    assert task.tgt_table.decode(batch["tgt_out"][1, :3].tolist()) == [".", "▁mange", "▁chien"]
    memorize(task, batch)
    assert task.validate(task.model, [batch], 0, None)["bleu"] == pytest.approx(100.0)
    ckpt = save_checkpoint(task, tmp_path / "nmt_r2l.pt", cfg)
    cfg_l2r = ExperimentConfig(task="nmt", model=cfg.model, data=data)
    l2r = build(cfg_l2r, tmp_path)
    memorize(l2r, l2r.collate([l2r.train_set[0], l2r.train_set[1]]))
    l2r_ckpt = save_checkpoint(l2r, tmp_path / "nmt_l2r.pt", cfg_l2r)
    for source, target in pairs:
        result = invoke("translate", "--checkpoint", str(ckpt), "--text", source)
        assert result.exit_code == 0 and result.output.strip() == target
        both = ["--checkpoint", str(l2r_ckpt), "--r2l", str(ckpt), "--text", source]
        result = invoke("translate", *both, "--r2l-weight", "0.5")
        assert result.exit_code == 0 and result.output.strip() == target


def test_a_text_checkpoint_and_its_folder_load_as_a_text_model(pair, tmp_path):
    """`load_model` reads the task: a g2p checkpoint, or the experiment folder holding it,
    becomes the `TextModel` that `load_text_model` builds."""
    import shutil

    from aligner.inference import TextModel, load_model

    (l2r_ckpt, _), _ = pair
    model = load_model(l2r_ckpt)
    assert isinstance(model, TextModel) and model.task == "g2p"
    exp = tmp_path / "exp"
    (exp / "checkpoints").mkdir(parents=True)
    shutil.copy(l2r_ckpt, exp / "checkpoints" / "ckpt-00000003.pt")
    again = load_model(exp)
    assert again.convert(["cat"], beam=2) == model.convert(["cat"], beam=2)
