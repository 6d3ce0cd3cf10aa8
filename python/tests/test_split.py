"""The split tier "cpu+cuda" (xpar.h, xpar_context_set_split; docs/split.md)
against NumPy: its settings, and its results on every tier it may run on
(without a GPU it runs on the CPU and says why)."""
import numpy as np
import pytest

import xpar
from conftest import GPU, random_array

SPLIT_OPS = ["reduce", "scan", "axpy", "add", "fill", "dot", "histogram", "segmented"]


def test_settings_round_trip():
    c = xpar.Context()
    for op in SPLIT_OPS:
        c.set_split(op, "float64", "pinned", 1 << 20, 0.4)
        frm, share = c.get_split(op, "float64", "pinned")
        assert frm == 1 << 20 and abs(share - 0.4) < 1e-6
    c.set_split("dot", "int32", "pageable", None, 0.25)
    assert c.get_split("dot", "int32", "pageable")[0] == xpar.NEVER
    frm, share = xpar.Context().get_split("reduce", "float32", "pinned")
    assert frm == xpar.NEVER and 0 < share < 1  # built in: never, an estimated share


@pytest.mark.parametrize("share", [0.0, 1.0, -0.1, 1.5, float("nan")])
def test_bad_share_raises(share):
    c = xpar.Context()
    with pytest.raises(xpar.InvalidArgument, match="gpu_share"):
        c.set_split("reduce", "float32", "pinned", 1, share)


def test_op_without_split_raises():
    with pytest.raises(xpar.InvalidArgument, match="sort has no split"):
        xpar.Context().set_split("sort", "int32", "pinned", 1, 0.5)
    with pytest.raises(xpar.Error):
        xpar.Context().set_split("reduce", "int32", "device", 1, 0.5)


@pytest.mark.parametrize("dtype", ["int32", "float64"])
@pytest.mark.parametrize("n", [1, 8193, 100003])
def test_results_match_numpy(rng, dtype, n):
    c = xpar.Context(backend="cpu+cuda")
    x = random_array(rng, dtype, n)
    y = random_array(rng, dtype, n)
    if dtype == "int32":
        assert c.sum(x) == int(x.sum(dtype=np.int32))
        assert np.array_equal(c.cumsum(x), np.cumsum(x, dtype=np.int32))
        assert np.array_equal(c.add(x, y), x + y)
    else:
        assert np.isclose(c.sum(x), x.sum(), rtol=1e-12, atol=1e-9 * np.abs(x).sum())
        assert np.allclose(c.cumsum(x), np.cumsum(x), rtol=1e-12, atol=1e-9 * np.abs(x).sum())
        assert np.array_equal(c.add(x, y), x + y)
    lo, hi = x.min().item(), x.max().item()
    if lo < hi:  # the same counts as one tier's (xpar's bins; NumPy's may differ at edges)
        want = xpar.Context(backend="serial").histogram(x, 16, (lo, hi))
        got = c.histogram(x, 16, (lo, hi))
        assert np.array_equal(got, want) and int(got.sum()) == int((x < hi).sum())
    # segmented ops, split at a segment boundary: each segment as one tier gives it
    ser = xpar.Context(backend="serial")
    offsets = np.unique(np.concatenate(([0, n], rng.integers(0, n + 1, size=n // 50 + 1))))
    offsets = offsets.astype(np.int64)
    if dtype == "int32":
        assert np.array_equal(c.segment_reduce(x, offsets), ser.segment_reduce(x, offsets))
        assert np.array_equal(c.segment_scan(x, offsets), ser.segment_scan(x, offsets))
    v1, i1 = c.segment_argmin(x, offsets)
    v2, i2 = ser.segment_argmin(x, offsets)
    assert np.array_equal(v1, v2) and np.array_equal(i1, i2)
    d = c.last_decision
    if GPU:
        assert d.tier == "cpu+cuda", d
        assert 0.0 <= d.split_gpu_share < 1.0
    else:
        assert d.tier.startswith("cpu"), d
        assert "not usable" in d.reason, d
        assert d.split_gpu_share == 0.0
