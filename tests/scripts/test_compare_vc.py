"""scripts/compare_vc.py: two systems of an eval_vc.py report compared item by item."""

from __future__ import annotations

import json
import re

import compare_vc
import numpy as np
import pytest


def report(a: list[float], b: list[float]) -> dict:
    rows = lambda values: [{"id": f"u{i}", "mcd": v} for i, v in enumerate(values)]  # noqa: E731
    return {"totals": {}, "items": {"a": rows(a), "b": rows(b)}}


def test_differences_pair_items_by_id_and_skip_the_unscored():
    rep = report([1.0, 2.0, 3.0], [1.5, 1.0, 3.0])
    rep["items"]["b"].reverse()  # the order of the items does not matter
    rep["items"]["a"].append({"id": "only_a", "mcd": 9.0})
    rep["items"]["b"].append({"id": "u9", "mcd": None})
    diff, left_out = compare_vc.differences(rep, "a", "b", "mcd")
    assert diff.tolist() == [-0.5, 1.0, 0.0] and left_out == 2  # only_a, u9
    with pytest.raises(ValueError, match="no system 'c'"):
        compare_vc.differences(rep, "a", "c", "mcd")
    with pytest.raises(ValueError, match="share 0 item"):
        compare_vc.differences(rep, "a", "b", "f0_rmse_hz")


def test_the_sign_test_against_the_binomial_by_hand():
    assert compare_vc.sign_test(0, 10) == pytest.approx(2 / 1024)
    assert compare_vc.sign_test(5, 5) == 1.0 and compare_vc.sign_test(0, 0) == 1.0
    assert compare_vc.sign_test(2, 8) == pytest.approx(2 * (1 + 10 + 45) / 1024)
    assert compare_vc.sign_test(8, 2) == compare_vc.sign_test(2, 8)


def test_the_bootstrap_interval_holds_the_mean_and_narrows_with_items():
    rng = np.random.default_rng(1)
    small, large = rng.normal(0.1, 0.2, 20), rng.normal(0.1, 0.2, 2000)
    lo, hi = compare_vc.bootstrap(small)
    assert lo < small.mean() < hi
    lo2, hi2 = compare_vc.bootstrap(large)
    assert hi2 - lo2 < (hi - lo) / 5  # about 1 / sqrt(100) as wide
    assert compare_vc.bootstrap(small) == (lo, hi)  # seeded


def test_main_prints_one_line_and_refuses_bad_input_in_one(tmp_path, capsys):
    path = tmp_path / "vc.json"
    path.write_text(json.dumps(report([4.4, 4.5, 4.6, 4.3], [4.5, 4.6, 4.7, 4.2])))
    compare_vc.main([str(path), "a", "b"])
    out = capsys.readouterr().out
    assert "a - b, mcd (lower is better), 4 items: mean -0.050" in out
    assert "a better on 3, worse on 1;" in out
    assert f"p = {compare_vc.sign_test(3, 1):.3g}" in out
    with pytest.raises(SystemExit, match="no system 'x'"):
        compare_vc.main([str(path), "x", "b"])
    path.write_text("not json")
    with pytest.raises(SystemExit, match="compare_vc.py: "):
        compare_vc.main([str(path), "a", "b"])


def test_nan_short_duplicate_and_misshapen_reports_are_one_line(tmp_path):
    rep = report([4.0, 5.0, float("nan")], [4.5, 4.0, 4.0])
    diff, left_out = compare_vc.differences(rep, "a", "b", "mcd")
    assert diff.tolist() == [-0.5, 1.0] and left_out == 1
    with pytest.raises(ValueError, match="at least 2"):
        compare_vc.differences(report([4.0], [4.5]), "a", "b", "mcd")
    with pytest.raises(ValueError, match="share 0 item"):  # not a number
        compare_vc.differences(report([4.0, 5.0], [4.5, 4.0]), "a", "b", "id")
    dup = report([4.0, 5.0], [4.5, 4.0])
    dup["items"]["a"].append({"id": "u0", "mcd": 3.0})
    path = tmp_path / "vc.json"
    for bad, words in [
        (dup, "'u0' appears more than once"),
        ([1, 2], "not an eval_vc.py --json report"),
        (None, "not an eval_vc.py --json report"),
        ({"items": {}}, "(it has none)"),
        ({"items": {"a": {"x": 1}, "b": []}}, "not a list of rows"),
        ({"items": {"a": [{"mcd": 1.0}], "b": []}}, "not a list of rows"),
    ]:
        path.write_text(json.dumps(bad))
        with pytest.raises(SystemExit, match="compare_vc.py: .*" + re.escape(words)):
            compare_vc.main([str(path), "a", "b"])
    path.write_bytes(b"\xff\xfe{")
    with pytest.raises(SystemExit, match="compare_vc.py: "):
        compare_vc.main([str(path), "a", "b"])


def test_direction_per_metric(tmp_path, capsys):
    rows = lambda key, values: [{"id": f"u{i}", key: v} for i, v in enumerate(values)]  # noqa: E731
    rep = {"items": {"a": rows("f0_corr", [0.9, 0.8, 0.7]), "b": rows("f0_corr", [0.5] * 3)}}
    path = tmp_path / "vc.json"
    path.write_text(json.dumps(rep))
    compare_vc.main([str(path), "a", "b", "--metric", "f0_corr", "--resamples", "500"])
    assert "higher is better" in capsys.readouterr().out
    out = compare_vc.summary_line("a", "b", "f0_corr", np.array([0.4, 0.3, 0.2]), 0)
    assert "a better on 3, worse on 0" in out
    rep = {
        "items": {
            "a": rows("duration_diff", [-0.5, 0.1, 0.0]),  # too short by 0.5 s is not better
            "b": rows("duration_diff", [0.2, 0.2, 0.0]),
        }
    }
    diff, _ = compare_vc.differences(rep, "a", "b", "duration_diff")
    assert diff.tolist() == pytest.approx([0.3, -0.1, 0.0])
    out = compare_vc.summary_line("a", "b", "duration_diff", diff, 0)
    assert "|duration_diff|" in out and "better on 1, worse on 1, 1 ties" in out
    ratio = {
        "items": {"a": rows("duration_ratio", [0.9, 1.05]), "b": rows("duration_ratio", [1.2, 1.0])}
    }
    diff, _ = compare_vc.differences(ratio, "a", "b", "duration_ratio")
    assert diff.tolist() == pytest.approx([-0.1, 0.05])


def test_the_bootstrap_in_chunks_holds_the_mean_and_is_seeded():
    diff = np.random.default_rng(3).normal(0, 1, 30)
    lo, hi = compare_vc.bootstrap(diff, 2000, chunk=300)
    assert lo < diff.mean() < hi and hi - lo < 1.5  # about 4 / sqrt(30)
    assert compare_vc.bootstrap(diff, 2000, chunk=300) == (lo, hi)
