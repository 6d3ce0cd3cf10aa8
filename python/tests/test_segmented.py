"""argmin / argmax and the segmented reduce and scan against NumPy, on every backend:
numpy.argmin / argmax (the first NaN wins), numpy.add/minimum/maximum.reduceat (its
empty-segment quirk accounted for: reduceat gives x[offsets[s]] for an empty segment,
xpar the identity) and a per-segment numpy.cumsum / minimum.accumulate."""
import numpy as np
import pytest

import xpar
from conftest import BACKENDS, DTYPES, make_context, random_array

UFUNC = {"sum": np.add, "min": np.minimum, "max": np.maximum}


def identity(dtype, op):
    dt = np.dtype(dtype)
    if op == "sum":
        return dt.type(0)
    if dt.kind == "f":
        return dt.type(np.inf if op == "min" else -np.inf)
    info = np.iinfo(dt)
    return dt.type(info.max if op == "min" else info.min)


def small_values(rng, dtype, n):
    """Values whose sums are exact in every order (floats: small integers)."""
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return rng.integers(-8, 9, n).astype(dt)
    return random_array(rng, dtype, n)


def make_offsets(rng, kind, total):
    if kind == "ones":
        sizes = np.ones(total, dtype=np.int64)
    elif kind == "16":
        sizes = np.full(max(total // 16, 1), 16, dtype=np.int64)
    elif kind == "power":
        sizes = np.minimum((rng.pareto(1.2, total // 8 + 1) * 2).astype(np.int64), total // 4)
    elif kind == "half":
        tiny = rng.integers(0, 4, total // 4)
        sizes = np.concatenate([[0], tiny, [total // 2], tiny[::-1], [0]]).astype(np.int64)
    elif kind == "empties":
        sizes = rng.integers(0, 30, total // 10 + 2)
        sizes[0] = sizes[len(sizes) // 2] = sizes[-1] = 0
    elif kind == "none":
        sizes = np.zeros(0, dtype=np.int64)
    else:  # one
        sizes = np.array([total], dtype=np.int64)
    base = int(rng.integers(0, 4))
    return np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64) + base


def reference_reduce(x, offsets, op):
    """numpy.<op>.reduceat with its quirk removed: empty segments get the identity."""
    m = len(offsets) - 1
    out = np.full(m, identity(x.dtype, op), dtype=x.dtype)
    starts, ends = offsets[:-1], offsets[1:]
    nonempty = ends > starts
    if nonempty.any():
        # reduceat over the non-empty starts, and x's end: each such segment is
        # [start, next start of a non-empty segment) -- empty ones in between add nothing
        idx = starts[nonempty]
        red = UFUNC[op].reduceat(x[: ends[nonempty][-1]], idx, dtype=x.dtype)
        out[nonempty] = red
    return out


DISTS = ["ones", "16", "power", "half", "empties", "none", "one"]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_argmin_argmax(backend, dtype, rng):
    ctx = make_context(backend)
    for n in (1, 7, 1000, 100003):
        x = random_array(rng, dtype, n)
        if np.dtype(dtype).kind == "f" and n > 7:
            x[rng.integers(0, n, 3)] = np.nan
            x[rng.integers(0, n, 3)] = -np.inf
        for fn, ref in ((ctx.argmin, np.argmin), (ctx.argmax, np.argmax)):
            i, v = fn(x, return_value=True)
            assert i == int(ref(x)), (dtype, n)
            assert np.array_equal(np.asarray(v, dtype=x.dtype), x[i], equal_nan=True)
    with pytest.raises(xpar.Error) as e:
        ctx.argmin(np.zeros(0, dtype=dtype))
    assert e.value.status == "ERR_INVALID_ARGUMENT"


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", ["sum", "min", "max"])
def test_segment_reduce(backend, dtype, op, rng):
    ctx = make_context(backend)
    for dist in DISTS:
        for odt in (np.int32, np.int64):
            offsets = make_offsets(rng, dist, 3000)
            n = int(offsets[-1]) + int(rng.integers(0, 3))
            x = small_values(rng, dtype, n)
            off = offsets.astype(odt)
            got = ctx.segment_reduce(x, off, op)
            want = reference_reduce(x, offsets, op)
            assert got.dtype == x.dtype and got.shape == want.shape
            assert np.array_equal(got, want), (dist, odt)
    # fixed segments: the rows of a matrix
    x = small_values(rng, dtype, 64 * 33)
    got = ctx.segment_reduce(x, op=op, segment_size=33)
    want = UFUNC[op].reduce(x.reshape(64, 33), axis=1, dtype=x.dtype)
    assert np.array_equal(got, want)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", ["sum", "min", "max"])
@pytest.mark.parametrize("exclusive", [False, True])
def test_segment_scan(backend, dtype, op, exclusive, rng):
    ctx = make_context(backend)
    for dist in DISTS:
        offsets = make_offsets(rng, dist, 3000)
        n = int(offsets[-1]) + 2
        x = small_values(rng, dtype, n)
        out = np.full(n, 7, dtype=x.dtype)
        ctx.segment_scan(x, offsets, op, exclusive=exclusive, out=out)
        want = np.full(n, 7, dtype=x.dtype)  # outside the segments: not written
        for s in range(len(offsets) - 1):
            a, b = int(offsets[s]), int(offsets[s + 1])
            if a == b:
                continue
            inc = UFUNC[op].accumulate(x[a:b], dtype=x.dtype)
            if exclusive:
                want[a] = identity(x.dtype, op)
                want[a + 1:b] = inc[:-1]
            else:
                want[a:b] = inc
        assert np.array_equal(out, want), dist
    # in place, fixed segments
    x = small_values(rng, dtype, 40 * 25)
    want = UFUNC[op].accumulate(x.reshape(40, 25), axis=1, dtype=x.dtype).ravel()
    if not exclusive:
        ctx.segment_scan(x, op=op, segment_size=25, out=x)
        assert np.array_equal(x, want)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_segment_argmin_argmax(backend, dtype, rng):
    ctx = make_context(backend)
    for dist in DISTS:
        offsets = make_offsets(rng, dist, 2000)
        n = int(offsets[-1]) + 1
        x = small_values(rng, dtype, n)
        if np.dtype(dtype).kind == "f":
            x[rng.integers(0, n, 5)] = np.nan
        for fn, ref, op in ((ctx.segment_argmin, np.argmin, "min"),
                            (ctx.segment_argmax, np.argmax, "max")):
            idx, vals = fn(x, offsets)
            for s in range(len(offsets) - 1):
                a, b = int(offsets[s]), int(offsets[s + 1])
                if a == b:
                    assert idx[s] == -1
                    assert vals[s] == identity(x.dtype, op)
                else:
                    assert idx[s] == a + int(ref(x[a:b])), (dist, s)
                    assert np.array_equal(vals[s], x[idx[s]], equal_nan=True)


def test_bad_offsets():
    x = np.arange(10, dtype=np.float64)
    for bad in ([0, 5, 3, 10], [0, 5, 11], [-1, 4]):
        with pytest.raises(xpar.InvalidArgument) as e:
            xpar.segment_reduce(x, np.array(bad, dtype=np.int64))
        assert "offsets" in e.value.detail
    with pytest.raises(xpar.Error):
        xpar.segment_reduce(x, np.array([0, 5], dtype=np.float64))
    with pytest.raises(xpar.Error):
        xpar.segment_reduce(x, segment_size=3)  # does not divide 10
