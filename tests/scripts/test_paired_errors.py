"""scripts/paired_errors.py: the part of two aligners' errors they share, against a
simulation with a known shared part, and the pairing of real alignment folders."""

from __future__ import annotations

import json

import numpy as np
import paired_errors
import pytest


def test_the_shared_part_is_the_sd_the_two_error_series_have_in_common():
    """Errors = a reference error both see (sd 8 ms) + each aligner's own (sd 6 and 10 ms),
    offsets +5 and -3 ms: shared ~8, each sd ~sqrt(8^2 + own^2), the medians taken off."""
    gen = np.random.default_rng(0)
    common = gen.normal(0, 8, 20000)
    a = 5 + common + gen.normal(0, 6, 20000)
    b = -3 + common + gen.normal(0, 10, 20000)
    r = paired_errors.row([(a[:10000], b[:10000]), (a[10000:], b[10000:])])
    assert r["n"] == 20000
    assert r["shared"] == pytest.approx(8.0, rel=0.05)
    assert r["sd"] == pytest.approx((10.0, np.hypot(8, 10)), rel=0.05)
    assert r["bias"] == pytest.approx((5.0, -3.0), abs=0.3)
    assert r["shifted"][0] == pytest.approx(np.abs(a - np.median(a)).mean())
    independent = paired_errors.row([(gen.normal(0, 5, 20000), gen.normal(0, 5, 20000))])
    assert independent["shared"] < 1.0 and abs(independent["corr"]) < 0.03


def test_items_pair_only_where_both_aligners_match_the_reference(tmp_path):
    ref = {"id": "u1", "audio": "u1.wav", "text": "ma to", "speaker": "s1"}
    words = [[0.1, 0.5, "ma"], [0.5, 0.9, "to"]]
    ref["timings"] = {"duration": 1.0, "words": words, "phones": []}
    other = {**ref, "id": "u2"}
    (tmp_path / "ref.jsonl").write_text(json.dumps(ref) + "\n" + json.dumps(other) + "\n")
    late_start = [[0.12, 0.5, "ma"], [0.5, 0.9, "to"]]
    early_join = [[0.1, 0.46, "ma"], [0.46, 0.9, "to"]]
    for name, predicted in (("a", late_start), ("b", early_join)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "u1.durations.json").write_text(json.dumps({"words": predicted}))
    (tmp_path / "a" / "u2.durations.json").write_text(json.dumps({"words": [[0.1, 0.9, "mato"]]}))
    pairs = paired_errors.paired(tmp_path / "ref.jsonl", tmp_path / "a", tmp_path / "b", "words")
    assert set(pairs) == {"ALL", "s1"} and len(pairs["ALL"]) == 1
    a, b = pairs["s1"][0]
    assert a == pytest.approx([20, 0, 0, 0]) and b == pytest.approx([0, -40, -40, 0])
