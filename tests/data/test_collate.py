"""Collate: padding, lengths, masks (True = valid), teacher-forcing shifts."""

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from aligner.data.collate import collate_text, collate_tts, collate_vc


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 12), st.integers(1, 20)), min_size=1, max_size=5))
def test_collate_tts_pads_and_masks(sizes):
    examples = [
        {
            "id": f"u{k}",
            "tokens": torch.randint(4, 30, (n,)),
            "mel": torch.randn(t, 3),
            "speaker": "s",
        }
        for k, (n, t) in enumerate(sizes)
    ]
    batch = collate_tts(examples)
    assert batch["ids"] == [e["id"] for e in examples]
    assert batch["token_lengths"].tolist() == [n for n, _ in sizes]
    assert batch["mel_lengths"].tolist() == [t for _, t in sizes]
    assert batch["tokens"].shape == (len(sizes), max(n for n, _ in sizes))
    assert batch["mel"].shape == (len(sizes), max(t for _, t in sizes), 3)
    for k, e in enumerate(examples):
        n, t = len(e["tokens"]), len(e["mel"])
        assert torch.equal(batch["tokens"][k, :n], e["tokens"])
        assert (batch["tokens"][k, n:] == 0).all()
        assert torch.equal(batch["mel"][k, :t], e["mel"]) and (batch["mel"][k, t:] == 0).all()
        assert batch["token_mask"][k].sum() == n and batch["token_mask"][k, :n].all()
        assert batch["mel_mask"][k].sum() == t and batch["mel_mask"][k, :t].all()
    assert batch["token_mask"].dtype == torch.bool


def test_collate_vc():
    ex = [
        {"id": "a", "src_mel": torch.ones(4, 2), "mel": torch.ones(6, 2)},
        {"id": "b", "src_mel": torch.ones(7, 2), "mel": torch.ones(3, 2)},
    ]
    b = collate_vc(ex)
    assert b["src_mel"].shape == (2, 7, 2) and b["mel"].shape == (2, 6, 2)
    assert b["src_lengths"].tolist() == [4, 7] and b["mel_lengths"].tolist() == [6, 3]
    assert b["src_mask"].sum(1).tolist() == [4, 7]
    assert b["src_mel"].sum().item() == 11 * 2 and b["mel"].sum().item() == 9 * 2


def test_collate_text_shifts_with_bos_eos():
    ex = [
        {"id": "a", "src": torch.tensor([5, 6, 7]), "tgt": torch.tensor([8, 9])},
        {"id": "b", "src": torch.tensor([5]), "tgt": torch.tensor([10, 11, 12])},
    ]
    b = collate_text(ex)
    assert b["src"].tolist() == [[5, 6, 7], [5, 0, 0]]
    assert b["tgt_in"].tolist() == [[2, 8, 9, 0], [2, 10, 11, 12]]
    assert b["tgt_out"].tolist() == [[8, 9, 3, 0], [10, 11, 12, 3]]
    assert b["tgt_lengths"].tolist() == [3, 4]
    assert b["tgt_mask"].tolist() == [[True, True, True, False], [True] * 4]
    assert b["src_mask"].tolist() == [[True] * 3, [True, False, False]]
