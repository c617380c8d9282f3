import math

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from aligner.train.schedule import build_scheduler, lr_factor


def test_warmup_is_linear_then_noam_inverse_sqrt():
    kw = dict(warmup_steps=4, decay="noam")
    assert [lr_factor(s, **kw) for s in range(4)] == [0.25, 0.5, 0.75, 1.0]
    assert lr_factor(15, **kw) == pytest.approx(math.sqrt(4 / 16))
    assert lr_factor(99, **kw) == pytest.approx(0.2)


def test_exponential_halves_every_decay_steps():
    kw = dict(warmup_steps=2, decay="exponential", decay_rate=0.5, decay_steps=10)
    assert lr_factor(2, **kw) == 1.0
    assert lr_factor(12, **kw) == pytest.approx(0.5)
    assert lr_factor(32, **kw) == pytest.approx(0.125)
    assert lr_factor(1000, **kw, min_factor=0.01) == 0.01


def test_cosine_reaches_min_at_max_steps():
    kw = dict(warmup_steps=10, decay="cosine", max_steps=110, min_factor=0.1)
    assert lr_factor(10, **kw) == pytest.approx(1.0)
    assert lr_factor(60, **kw) == pytest.approx(0.1 + 0.9 * 0.5)
    assert lr_factor(110, **kw) == pytest.approx(0.1)
    assert lr_factor(500, **kw) == pytest.approx(0.1)


def test_none_is_constant_after_warmup():
    assert lr_factor(0, warmup_steps=0, decay="none") == 1.0
    assert lr_factor(10**6, warmup_steps=5, decay="none") == 1.0


def test_unknown_decay_names_choices():
    with pytest.raises(ValueError, match="noam, exponential, cosine, none"):
        lr_factor(0, warmup_steps=0, decay="linear")


@given(
    st.integers(0, 50),
    st.sampled_from(["noam", "exponential", "cosine", "none"]),
    st.integers(0, 2000),
)
def test_factor_bounded_and_nonincreasing_after_warmup(warmup, decay, step):
    kw = dict(warmup_steps=warmup, decay=decay, max_steps=1000, decay_steps=100, min_factor=0.05)
    f = lr_factor(step, **kw)
    assert 0 < f <= 1.0
    if step >= warmup:
        assert lr_factor(step + 1, **kw) <= f + 1e-12


def test_scheduler_applies_factor_to_optimizer_lr():
    p = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([p], lr=0.2)
    sched = build_scheduler(opt, lr=0.2, warmup_steps=2, decay="noam", max_steps=10, min_lr=0.0)
    seen = []
    for _ in range(5):
        seen.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    expected = [0.2 * lr_factor(s, warmup_steps=2, decay="noam") for s in range(5)]
    assert seen == pytest.approx(expected)
