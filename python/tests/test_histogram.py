"""histogram (equal-width bins and bins between boundaries) on every tier
against NumPy's np.histogram, every dtype, with NaN, +-inf and the edge
samples (lo, hi, just below hi) among the inputs.

NumPy differs in two documented ways, which the oracle accounts for: its last
bin is closed (a sample equal to hi is counted there; xpar counts it nowhere),
and it places floats by its computed edges (np.linspace, in float32 for
float32 input) where xpar uses the double formula of xpar.h.  The equal-width
oracle is therefore NumPy's histogram of the samples with those equal to hi
removed, compared exactly for integer samples (integer edges: no rounding), and
for floats on the samples away from every edge, plus the stated formula in
float64 compared exactly on all samples."""
import numpy as np
import pytest

import xpar
from conftest import BACKENDS, DTYPES, make_context

SIZES = [0, 1, 2, 1000, 4097, 100003]
BINS = [1, 2, 7, 32, 256, 4096]
_contexts = {}


def ctx_for(backend):
    if backend not in _contexts:
        _contexts[backend] = make_context(backend)
    return _contexts[backend]


def samples(rng, dtype, n, lo, hi):
    dt = np.dtype(dtype)
    if dt.kind == "f":
        x = rng.uniform(lo - (hi - lo) * 0.1, hi + (hi - lo) * 0.1, n).astype(dt)
    else:
        x = rng.integers(lo - (hi - lo) // 10 if dt.kind == "i" else 0,
                         hi + (hi - lo) // 10, n, dtype=np.int64).astype(dt)
    if n > 8:
        x[0], x[1] = dt.type(lo), dt.type(hi)
        x[2] = np.nextafter(dt.type(hi), dt.type(lo)) if dt.kind == "f" else dt.type(hi - 1)
        if dt.kind == "f":
            x[3], x[4], x[5] = np.nan, np.inf, -np.inf
            x[rng.integers(0, n, n // 50)] = np.nan
    return x


def formula(x, lo, hi, nb):
    """xpar.h's equal-width bin in float64 (-1: not counted)."""
    xd, lo, hi = x.astype(np.float64), float(lo), float(hi)
    ok = (xd >= lo) & (xd < hi)
    with np.errstate(invalid="ignore", over="ignore"):
        w = hi - lo
        if np.isfinite(w):
            t = ((xd - lo) / w) * nb
        else:
            t = ((xd * 0.5 - lo * 0.5) / (hi * 0.5 - lo * 0.5)) * nb
    b = np.where(ok, np.minimum(np.floor(np.where(ok, t, 0)), nb - 1), -1).astype(np.int64)
    return b


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
def test_histogram_even(rng, backend, dtype, n):
    ctx = ctx_for(backend)
    dt = np.dtype(dtype)
    lo, hi = (-3.5, 12.25) if dt.kind == "f" else ((5, 4101) if dt.kind == "u" else (-2048, 2048))
    x = samples(rng, dtype, n, lo, hi)
    for nb in BINS:
        got = ctx.histogram(x, nb, (lo, hi))
        assert got.dtype == np.uint64 and got.shape == (nb,)
        b = formula(x, lo, hi, nb)
        want = np.bincount(b[b >= 0], minlength=nb).astype(np.uint64)
        assert np.array_equal(got, want), nb
        # NumPy: the last bin closed, so hi itself is dropped first
        xd = x[~(x == dt.type(hi))]
        if dt.kind == "f":  # away from NumPy's edges (rounding may move those)
            with np.errstate(invalid="ignore"):
                u = (xd.astype(np.float64) - lo) / (hi - lo) * nb
                keep = ~(np.abs(u - np.round(u)) < 1e-6)
            xd = xd[keep]
            sub = ctx.histogram(xd, nb, (lo, hi))
            ref, _ = np.histogram(xd.astype(np.float64), bins=nb, range=(lo, hi))
            assert np.array_equal(sub, ref.astype(np.uint64)), nb
        else:
            if (hi - lo) % nb == 0:  # integer edges: NumPy lands alike
                ref, _ = np.histogram(xd.astype(np.float64), bins=nb, range=(lo, hi))
                assert np.array_equal(got, ref.astype(np.uint64)), nb
    assert ctx.last_decision.op == "histogram"


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
def test_histogram_range(rng, backend, dtype, n):
    ctx = ctx_for(backend)
    dt = np.dtype(dtype)
    lo, hi = (-3.5, 12.25) if dt.kind == "f" else ((5, 4101) if dt.kind == "u" else (-2048, 2048))
    x = samples(rng, dtype, n, lo, hi)
    for nb in [1, 2, 7, 32, 300]:
        if dt.kind == "f":
            b = np.sort(rng.uniform(lo, hi, nb + 1)).astype(dt)
        else:
            b = np.sort(rng.integers(lo, hi, nb + 1)).astype(dt)
        b[0], b[-1] = dt.type(lo), dt.type(hi)
        if nb > 4:
            b[3] = b[2]  # an empty bin
        got = ctx.histogram(x, b)
        # NumPy: bins[i] <= x < bins[i + 1], the last closed: drop x == bins[-1]
        xd = x[~(x == b[-1])]
        ref, _ = np.histogram(xd, bins=b)
        assert np.array_equal(got, ref.astype(np.uint64)), nb


def test_histogram_refusals():
    ctx = xpar.Context(backend="serial")
    x = np.arange(10, dtype=np.float64)
    with pytest.raises(xpar.Error):
        ctx.histogram(x, 4, (1.0, 1.0))
    with pytest.raises(xpar.Error):
        ctx.histogram(x, 4, (np.nan, 1.0))
    with pytest.raises(xpar.Error):
        ctx.histogram(x, np.array([0.0, 2.0, 1.0]))
    with pytest.raises(xpar.Error):
        ctx.histogram(x, 4)
    with pytest.raises(xpar.Error):
        ctx.histogram(x, 0, (0.0, 1.0))
    with pytest.raises(xpar.Error):
        ctx.histogram(x, 4, (0.0, 1.0), out=np.zeros(4, dtype=np.int64))


def test_histogram_out_and_module_level():
    x = np.array([0, 1, 1, 2, 3, 3, 3, 4], dtype=np.int32)
    out = np.full(4, 99, dtype=np.uint64)
    got = xpar.histogram(x, 4, (0, 4), out=out)
    assert got is out and list(out) == [1, 2, 1, 3]
    assert list(xpar.histogram(x, np.array([0, 2, 2, 5], dtype=np.int32))) == [3, 0, 5]
