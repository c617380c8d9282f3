"""scripts/compare_vc.py: two systems of an eval_vc.py report compared item by item."""

from __future__ import annotations

import json

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
    assert compare_vc.differences(rep, "a", "b", "mcd").tolist() == [-0.5, 1.0, 0.0]
    with pytest.raises(ValueError, match="no system 'c'"):
        compare_vc.differences(rep, "a", "c", "mcd")
    with pytest.raises(ValueError, match="share no item"):
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
    assert "a - b, mcd, 4 items: mean -0.050" in out and "a lower on 3, higher on 1" in out
    assert f"p = {compare_vc.sign_test(3, 1):.3g}" in out
    with pytest.raises(SystemExit, match="no system 'x'"):
        compare_vc.main([str(path), "x", "b"])
    path.write_text("not json")
    with pytest.raises(SystemExit, match="compare_vc.py: "):
        compare_vc.main([str(path), "a", "b"])
