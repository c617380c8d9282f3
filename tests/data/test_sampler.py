"""BucketBatchSampler: coverage, bucketing, determinism, DDP shards, exact resume."""

import random
import statistics

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aligner.data.sampler import BucketBatchSampler


def _lengths(n: int, seed: int = 0) -> list[int]:
    rng = random.Random(seed)
    return [rng.randint(1, 1000) for _ in range(n)]


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 300), st.integers(1, 40), st.integers(0, 5), st.booleans())
def test_every_item_exactly_once_per_epoch(n, batch_size, epoch, shuffle):
    sampler = BucketBatchSampler(_lengths(n), batch_size, shuffle=shuffle, seed=3)
    sampler.set_epoch(epoch)
    batches = list(sampler)
    flat = [i for b in batches for i in b]
    assert sorted(flat) == list(range(n))
    assert len(batches) == len(sampler)
    assert all(len(b) == batch_size for b in batches[:-1] if not shuffle)


def test_batches_have_low_length_spread_vs_random():
    lengths = _lengths(2000)
    sampler = BucketBatchSampler(lengths, 16, seed=0)
    bucketed = statistics.mean(
        max(lengths[i] for i in b) - min(lengths[i] for i in b) for b in sampler
    )
    rng = random.Random(0)
    order = list(range(2000))
    rng.shuffle(order)
    rand = statistics.mean(
        max(lengths[i] for i in order[k : k + 16]) - min(lengths[i] for i in order[k : k + 16])
        for k in range(0, 2000, 16)
    )
    assert bucketed < 0.1 * rand


def test_deterministic_for_seed_and_epoch_and_varies_otherwise():
    lengths = _lengths(300)
    a, b = BucketBatchSampler(lengths, 8, seed=5), BucketBatchSampler(lengths, 8, seed=5)
    assert list(a) == list(b)
    first = list(a)
    a.set_epoch(1)
    assert list(a) != first
    assert list(BucketBatchSampler(lengths, 8, seed=6)) != first


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 200), st.integers(1, 16), st.integers(1, 4), st.booleans())
def test_ddp_shards_disjoint_equal_and_complete(n, batch_size, replicas, drop_last):
    if drop_last and n < replicas:
        return
    lengths = _lengths(n)
    shards = []
    for rank in range(replicas):
        s = BucketBatchSampler(
            lengths, batch_size, seed=1, num_replicas=replicas, rank=rank, drop_last=drop_last
        )
        s.set_epoch(2)
        shards.append(list(s))
    assert len({len(b) for b in shards}) == 1  # same number of steps on every rank
    counts = [sum(len(b) for b in shard) for shard in shards]
    assert len(set(counts)) == 1
    flat = [i for shard in shards for b in shard for i in b]
    if drop_last:
        assert len(set(flat)) == len(flat)  # disjoint, nothing repeated
    else:
        assert set(flat) == set(range(n))  # union complete
        assert len(flat) - n < replicas  # only DistributedSampler-style padding repeats
        per_rank = [set(i for b in shard for i in b) for shard in shards]
        if n >= replicas:
            overlap = sum(len(a & b) for k, a in enumerate(per_rank) for b in per_rank[k + 1 :])
            assert overlap <= len(flat) - n


@pytest.mark.parametrize("replicas", [1, 2])
def test_resume_mid_epoch_equals_uninterrupted(replicas):
    lengths = _lengths(200)
    full = BucketBatchSampler(lengths, 8, seed=4, num_replicas=replicas, rank=replicas - 1)
    full.set_epoch(3)
    expected = list(full)

    first = BucketBatchSampler(lengths, 8, seed=4, num_replicas=replicas, rank=replicas - 1)
    first.set_epoch(3)
    it = iter(first)
    got = [next(it) for _ in range(5)]
    state = first.state_dict()
    assert state["batches_done"] == 5

    resumed = BucketBatchSampler(lengths, 8, seed=0, num_replicas=replicas, rank=replicas - 1)
    resumed.load_state_dict(state)
    resumed.set_epoch(3)  # the trainer calls this again on resume: it must not reset
    got += list(resumed)
    assert got == expected
    resumed.set_epoch(4)
    assert len(list(resumed)) == len(resumed)  # the next epoch is whole again


def test_explicit_consumed_count_and_mismatch_error():
    s = BucketBatchSampler(_lengths(50), 4)
    assert s.state_dict(consumed=7)["batches_done"] == 7
    other = BucketBatchSampler(_lengths(50), 5)
    with pytest.raises(ValueError, match="batch_size"):
        other.load_state_dict(s.state_dict())


def test_bad_arguments():
    with pytest.raises(ValueError, match="rank"):
        BucketBatchSampler([1, 2], 1, num_replicas=2, rank=2)
    with pytest.raises(ValueError, match="at least one"):
        BucketBatchSampler([], 1)
