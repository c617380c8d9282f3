"""Metrics, guided attention loss and plots on hand-built alignments."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from aligner.attention import metrics
from aligner.attention.losses import guided_attention_loss, guided_attention_weights
from aligner.attention.plot import alignment_image, save_alignment_png


def hard(path: list[int], n_tokens: int) -> torch.Tensor:
    """One-hot alignment ``(T_dec, n_tokens)`` following ``path``."""
    return torch.nn.functional.one_hot(torch.tensor(path), n_tokens).float()


def batch(*items: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Pad items into ``(B, T_dec, T_enc)`` with garbage (0.7) outside the valid block."""
    t_dec = max(a.shape[0] for a in items)
    t_enc = max(a.shape[1] for a in items)
    out = torch.full((len(items), t_dec, t_enc), 0.7)
    for b, a in enumerate(items):
        out[b, : a.shape[0], : a.shape[1]] = a
    dec = torch.tensor([a.shape[0] for a in items])
    enc = torch.tensor([a.shape[1] for a in items])
    return out, dec, enc


def test_metrics_diagonal_skip_repeat() -> None:
    diagonal = hard([0, 0, 1, 1, 2, 2, 3, 3], 4)
    skip = hard([0, 1, 3, 4], 5)  # token 2 skipped
    repeat = hard([0, 1, 2, 1, 2, 3], 4)  # tokens 1 and 2 revisited
    out = metrics.alignment_metrics(*batch(diagonal, skip, repeat))
    assert out["focus_rate"].tolist() == [1.0, 1.0, 1.0]
    assert out["entropy"].tolist() == [0.0, 0.0, 0.0]
    assert out["skipped"].tolist() == [0, 1, 0]
    assert out["repeated"].tolist() == [0, 0, 2]
    assert out["longest_hold"].tolist() == [2, 1, 1]
    assert out["diagonality"][0] == 1.0
    summary = metrics.summarize(out)
    assert summary["items_with_skips"] == pytest.approx(1 / 3)
    assert summary["suspect"] == pytest.approx(2 / 3)
    assert summary["focus_rate"] == 1.0
    no_skips = metrics.summarize(out, skips=False)  # the repeat alone (VC's rule)
    assert no_skips["suspect"] == pytest.approx(1 / 3)
    assert no_skips["items_with_skips"] == pytest.approx(1 / 3)


def test_skip_count_covers_only_required_positions() -> None:
    """A path that ends on the last text token and never visits an appended end marker
    skips only that marker; marking it not required clears it, and a real skip inside
    the text still counts."""
    ends_early = hard([0, 1, 2, 3, 3], 5)  # position 4 (e.g. </s>) never attended
    inner_skip = hard([0, 2, 3, 4], 5)  # position 1 skipped, the marker visited
    a, dec, enc = batch(ends_early, inner_skip)
    assert metrics.skipped_tokens(a, dec, enc).tolist() == [1, 1]
    required = torch.ones(2, a.size(2), dtype=torch.bool)
    required[:, 4] = False
    assert metrics.skipped_tokens(a, dec, enc, required=required).tolist() == [0, 1]
    out = metrics.alignment_metrics(a, dec, enc, required)
    assert out["skipped"].tolist() == [0, 1]


def spread(frames: list[int], r: int) -> torch.Tensor:
    """The hard alignment of tokens holding ``frames`` as a decoder of ``r`` frames a step
    attends them: each step's weight split over the tokens of its frames, ``(S, N)``."""
    steps = -(-sum(frames) // r)
    w = torch.zeros(steps, len(frames))
    t = 0
    for i, k in enumerate(frames):
        for j in range(t, t + k):
            w[j // r, i] += 1.0 / r
        t += k
    return w


@pytest.mark.parametrize("r", [1, 2, 4])
def test_skip_threshold_is_in_frames_whatever_r(r) -> None:
    """A token of one frame that a decoder of r frames a step gives exactly its frame is
    attended at every r (at r = 4 that is a quarter of a step's weight, never the
    argmax); a token given under half a frame's worth is skipped at every r."""
    frames = [3, 1, 6, 2, 1, 3]
    a, dec, enc = batch(spread(frames, r))
    assert metrics.skipped_tokens(a, dec, enc, r=r).item() == 0
    assert metrics.alignment_metrics(a, dec, enc, r=r)["skipped"].item() == 0
    if r > 1:  # counted in decoder steps, the short tokens would be skips
        assert metrics.skipped_tokens(a, dec, enc, min_weight=0.5 * r).item() >= 1
    exact = spread(frames, r)
    starved = exact.clone()  # token 1 gets 0.4 frames' worth, the rest goes to token 0
    starved[:, 0] += 0.6 * exact[:, 1]
    starved[:, 1] *= 0.4
    a, dec, enc = batch(starved)
    assert metrics.skipped_mask(a, dec, enc, r=r)[0].tolist() == [False, True] + [False] * 4


def test_durations_sum_to_decoder_length() -> None:
    a, dec, enc = batch(hard([0, 0, 1, 1, 2, 2, 3, 3], 4), hard([0, 1, 3, 4], 5))
    d = metrics.durations(a, dec, enc)
    assert d.tolist() == [[2, 2, 2, 2, 0], [1, 1, 0, 1, 1]]
    # r = 2: 8 steps cover 15 frames, 4 steps cover 8 frames
    d2 = metrics.durations(a, dec, enc, reduction_factor=2, n_frames=torch.tensor([15, 8]))
    assert d2.tolist() == [[4, 4, 4, 3, 0], [2, 2, 0, 2, 2]]
    with pytest.raises(ValueError, match="ceil"):
        metrics.durations(a, dec, enc, reduction_factor=2, n_frames=torch.tensor([13, 8]))


def test_soft_focus_entropy_and_diagonality_by_hand() -> None:
    soft = torch.tensor([[0.5, 0.5, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]])
    a, dec, enc = batch(soft)
    assert metrics.focus_rate(a, dec, enc).item() == pytest.approx(0.75)
    assert metrics.entropy(a, dec, enc).item() == pytest.approx(math.log(2) / 2)
    # all mass on token 0 of 8, over 4 steps: diagonal points 0.5, 2.5, 4.5, 6.5 with
    # half-width max(1, 0.8) = 1, so only step 0 lies in the band
    stuck, dec, enc = batch(hard([0, 0, 0, 0], 8))
    assert metrics.diagonality(stuck, dec, enc).item() == pytest.approx(0.25)
    # a token passed smoothly with cumulative weight >= 0.5 is not a skip
    smooth = torch.tensor([[0.7, 0.3, 0.0], [0.0, 0.3, 0.7]])
    assert metrics.skipped_tokens(*batch(smooth)).item() == 0
    assert metrics.skipped_tokens(*batch(smooth), min_weight=0.7).item() == 1


def test_metrics_reject_bad_lengths() -> None:
    with pytest.raises(ValueError, match="exceed"):
        metrics.focus_rate(torch.zeros(1, 3, 4), torch.tensor([4]), torch.tensor([4]))
    with pytest.raises(ValueError, match=r"dec_lengths.*\(1,\).*got \(2,\)"):
        metrics.focus_rate(torch.zeros(1, 3, 4), torch.tensor([3, 3]), torch.tensor([4]))


@settings(max_examples=30, deadline=None)
@given(
    dec=st.lists(st.integers(1, 12), min_size=1, max_size=4),
    enc=st.integers(1, 9),
    seed=st.integers(0, 1000),
)
def test_durations_property(dec: list[int], enc: int, seed: int) -> None:
    gen = torch.Generator().manual_seed(seed)
    a = torch.rand(len(dec), max(dec), enc, generator=gen)
    lengths = torch.tensor(dec)
    d = metrics.durations(a, lengths, torch.full((len(dec),), enc))
    assert torch.equal(d.sum(1), lengths)
    assert (metrics.focus_rate(a, lengths, torch.full((len(dec),), enc)) > 0).all()


def test_guided_loss_by_hand() -> None:
    w = guided_attention_weights(2, 2, g=0.2)
    off = 1 - math.exp(-0.25 / (2 * 0.04))
    torch.testing.assert_close(w, torch.tensor([[0.0, off], [off, 0.0]]))
    diagonal = torch.eye(2)[None]
    anti = torch.tensor([[[0.0, 1.0], [1.0, 0.0]]])
    two, two_tok = torch.tensor([2]), torch.tensor([2])
    assert guided_attention_loss(diagonal, two, two_tok).item() == pytest.approx(0.0)
    assert guided_attention_loss(anti, two, two_tok).item() == pytest.approx(2 * off / 2)


def test_guided_loss_masking_and_reduction_factor() -> None:
    gen = torch.Generator().manual_seed(0)
    a = torch.rand(2, 5, 6, generator=gen)
    frames, tokens = torch.tensor([5, 3]), torch.tensor([6, 4])
    loss = guided_attention_loss(a, frames, tokens)
    # equals the hand sum over each item's valid block, W built from its own lengths,
    # divided by the number of valid decoder steps (5 + 3)
    num = sum(
        (guided_attention_weights(n, t) * a[b, :n, :t]).sum()
        for b, (n, t) in enumerate([(5, 6), (3, 4)])
    )
    assert loss.item() == pytest.approx((num / (5 + 3)).item(), rel=1e-6)
    padded = a.clone()
    padded[1, 3:] = 9.0
    padded[1, :, 4:] = 9.0
    assert guided_attention_loss(padded, frames, tokens).item() == pytest.approx(loss.item())
    # r = 2: 9 and 5 frames are ceil(9/2) = 5 and ceil(5/2) = 3 decoder steps
    loss_r2 = guided_attention_loss(a, torch.tensor([9, 5]), tokens, reduction_factor=2)
    assert loss_r2.item() == pytest.approx(loss.item())
    with pytest.raises(ValueError, match="ceil"):
        guided_attention_loss(a, torch.tensor([9, 5]), tokens)


def test_plot_image_and_png(tmp_path) -> None:
    weights = torch.softmax(torch.randn(20, 7), dim=1)
    image = alignment_image(weights, tokens=list("abcdefg"), title="x")
    assert image.dtype == np.uint8 and image.ndim == 3 and image.shape[2] == 3
    assert image.std() > 0  # not blank
    path = save_alignment_png(weights, tmp_path / "a.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(FileExistsError, match="force"):
        save_alignment_png(weights, path)
    save_alignment_png(weights.numpy(), path, force=True)
    with pytest.raises(ValueError, match="token labels"):
        alignment_image(weights, tokens=["a"])
    with pytest.raises(ValueError, match=r"\(T_dec, T_enc\)"):
        alignment_image(torch.zeros(2, 3, 4))


def test_evolution_strip_and_gif(tmp_path) -> None:
    from PIL import Image

    from aligner.attention.plot import evolution_strip, save_evolution_gif

    a = np.zeros((4, 3, 3), dtype=np.uint8)
    b = np.full((2, 5, 3), 7, dtype=np.uint8)
    strip = evolution_strip([a, b])
    assert strip.shape == (4, 8, 3)
    assert (strip[:, :3] == 0).all() and (strip[:2, 3:] == 7).all() and (strip[2:, 3:] == 255).all()
    path = save_evolution_gif([a, a + 200], tmp_path / "e.gif")
    with Image.open(path) as gif:
        assert gif.n_frames == 2
    with pytest.raises(FileExistsError):
        save_evolution_gif([a], path)


def test_a_token_that_is_not_required_is_never_on_a_path():
    """forward_sum_loss with `required`: the likelihood of the required tokens alone, the
    others' columns never visited (an independent CTC over the kept columns)."""
    import torch

    from aligner.attention.losses import forward_sum_loss

    g = torch.Generator().manual_seed(3)
    scores = torch.randn(2, 9, 5, generator=g)
    frames, tokens = torch.tensor([9, 7]), torch.tensor([5, 4])
    required = torch.tensor([[1, 0, 1, 1, 0], [1, 1, 0, 1, 1]], dtype=torch.bool)
    loss = forward_sum_loss(scores, frames, tokens, -1.0, required)
    expected = []
    for b in range(2):
        n, t = int(tokens[b]), int(frames[b])
        x = scores[b : b + 1, :t, :n]
        blank = torch.full((1, t, 1), -1.0)
        lp = torch.log_softmax(torch.cat([blank, x], 2), 2).transpose(0, 1)
        keep = torch.nonzero(required[b, :n]).flatten() + 1
        ctc = torch.nn.functional.ctc_loss(
            lp, keep[None], torch.tensor([t]), torch.tensor([len(keep)]), reduction="sum"
        )
        expected.append(ctc / len(keep))
    assert torch.allclose(loss, torch.stack(expected).mean(), atol=1e-5)
    everything = forward_sum_loss(scores, frames, tokens, -1.0)
    all_required = forward_sum_loss(
        scores, frames, tokens, -1.0, torch.ones(2, 5, dtype=torch.bool)
    )
    assert torch.allclose(everything, all_required)
