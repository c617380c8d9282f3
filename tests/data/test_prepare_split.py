"""The shared split: deterministic, disjoint, complete, grouped; the summary report."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from aligner.data.prepare.common import split_items, split_sizes
from aligner.data.report import BadItemReport, BadItemsError


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 300), st.integers(0, 10_000))
def test_split_is_a_partition_and_deterministic(n: int, seed: int) -> None:
    items = [{"id": f"u{i}"} for i in range(n)]
    splits = split_items(items, seed=seed)
    ids = [item["id"] for split in splits.values() for item in split]
    assert sorted(ids) == sorted(item["id"] for item in items)  # every item exactly once
    assert split_items(items, seed=seed) == splits
    if n >= 3:
        assert len(splits["valid"]) >= 1 and len(splits["test"]) >= 1
        assert len(splits["train"]) == n - len(splits["valid"]) - len(splits["test"])


def test_split_sizes_follow_fractions() -> None:
    assert split_sizes(1000, 0.05, 0.05) == (900, 50, 50)
    assert split_sizes(12, 0.05, 0.05) == (10, 1, 1)
    assert split_sizes(2, 0.05, 0.05) == (2, 0, 0)
    assert split_sizes(3, 0.5, 0.5) == (1, 1, 1)


def test_groups_never_straddle_splits_and_seed_changes_split() -> None:
    items = [{"id": f"w{w}_{k}", "word": f"w{w}"} for w in range(60) for k in range(1 + w % 3)]
    splits = split_items(items, seed=1, group=lambda i: i["word"])
    where = {}
    for name, split in splits.items():
        for item in split:
            assert where.setdefault(item["word"], name) == name
    other = split_items(items, seed=2, group=lambda i: i["word"])
    assert other["test"] != splits["test"]


def test_bad_item_report() -> None:
    report = BadItemReport()
    report.check(skip_bad=False)  # nothing bad: fine
    report.add("a.wav", "file not found")
    report.add("m.csv:3", "empty text for X")
    report.add("b.wav", "file not found")
    assert report.counts() == {"file not found": 2, "empty text for X": 1}
    report.check(skip_bad=True)
    try:
        report.check(skip_bad=False)
    except BadItemsError as err:
        assert "3 bad item(s), first a.wav: file not found and 2 more" in str(err)
        assert "--skip-bad" in str(err)
    else:
        raise AssertionError("expected BadItemsError")
