"""run_length_encode and reduce_by_key on every tier against NumPy: run starts
from np.flatnonzero(np.diff), lengths from np.diff of the starts, sums, minima
and maxima from np.add / np.minimum / np.maximum.reduceat; every key dtype,
value dtypes of their own, runs of mean length 1, 4, 64 and one run of all;
float keys with -0.0 / +0.0 and NaNs (the header's equality: -0.0 == +0.0,
NaN == NaN), +-inf."""
import numpy as np
import pytest

import xpar
from conftest import BACKENDS, DTYPES, assert_close_sum, make_context

SIZES = [0, 1, 2, 2047, 2049, 4097, 100003]
MEANS = [1, 4, 64, 0]  # 0: one run of all n
_contexts = {}


def ctx_for(backend, reproducible=False):
    key = (backend, reproducible)
    if key not in _contexts:
        ctx = make_context(backend)
        if reproducible:
            ctx.reproducible = True
        _contexts[key] = ctx
    return _contexts[key]


def keys_with_runs(rng, dtype, n, mean):
    """n keys in runs of geometric length of the mean (0: one run); floats
    with -0.0 next to +0.0 and NaNs of both signs next to each other."""
    dt = np.dtype(dtype)
    if n == 0:
        return np.zeros(0, dt)
    if mean == 0:
        lengths = np.array([n])
    else:
        lengths = rng.geometric(1.0 / mean, n)
    run_keys = rng.integers(0, 1000, lengths.size)
    x = np.repeat(run_keys, lengths)[:n].astype(dt)
    if dt.kind == "f" and n > 8:
        x[rng.integers(0, n, n // 20)] = np.nan
        # a run of zeros of both signs, a run of NaNs of both signs, infinities
        x[1:3] = [0.0, -0.0]
        x[3:5] = [np.nan, -np.nan]
        x[5], x[6] = np.inf, -np.inf
    return x


def starts_of(keys):
    """The run heads under the header's equality."""
    n = keys.size
    if n == 0:
        return np.zeros(0, np.int64)
    same = keys[1:] == keys[:-1]  # -0.0 == +0.0
    if keys.dtype.kind == "f":
        same |= np.isnan(keys[1:]) & np.isnan(keys[:-1])
    return np.concatenate([[0], np.flatnonzero(~same) + 1])


def bits(a):
    return np.ascontiguousarray(a).view(np.uint8)


def values_for(rng, dtype, n):
    dt = np.dtype(dtype)
    if dt.kind == "f":  # small multiples of 1/4: every order sums exactly
        return (rng.integers(-400, 400, n) * 0.25).astype(dt)
    info = np.iinfo(dt)
    return rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
def test_run_length_encode(rng, backend, dtype, n):
    ctx = ctx_for(backend)
    for mean in MEANS:
        x = keys_with_runs(rng, dtype, n, mean)
        s = starts_of(x)
        want_lengths = np.diff(np.append(s, n))
        values, lengths = ctx.run_length_encode(x)
        assert np.array_equal(bits(values), bits(x[s])), mean  # the first key's bits
        assert lengths.dtype == np.int64
        assert np.array_equal(lengths, want_lengths), mean
        assert int(lengths.sum()) == n
        # caller's outputs: uint64 lengths, nothing past the count written
        vo = np.full(n, 7, dtype=x.dtype)
        lo = np.full(n, 0xA5A5, dtype=np.uint64)
        values, lengths = ctx.run_length_encode(x, values_out=vo, lengths_out=lo)
        k = s.size
        assert np.array_equal(bits(vo[:k]), bits(x[s]))
        assert np.array_equal(lo[:k], want_lengths.astype(np.uint64))
        assert np.all(vo[k:] == 7) and np.all(lo[k:] == 0xA5A5)
    if n:
        assert ctx.last_decision.op == "runs"


def reference(keys, values, op, s):
    if s.size == 0:
        return values[:0]
    fn = {"sum": np.add, "min": np.minimum, "max": np.maximum}[op]
    with np.errstate(over="ignore"):
        return fn.reduceat(values, s).astype(values.dtype)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kdtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
def test_reduce_by_key(rng, backend, kdtype, n):
    ctx = ctx_for(backend)
    for i, vdtype in enumerate(DTYPES):
        mean = MEANS[i % len(MEANS)]
        keys = keys_with_runs(rng, kdtype, n, mean)
        vals = values_for(rng, vdtype, n)
        s = starts_of(keys)
        for op in ("sum", "min", "max"):
            k, v = ctx.reduce_by_key(keys, vals, op)
            assert np.array_equal(bits(k), bits(keys[s])), (vdtype, op)
            assert v.dtype == vals.dtype
            # integer sums wrap as NumPy's; float sums are exact in every order here
            assert np.array_equal(v, reference(keys, vals, op, s)), (vdtype, op, mean)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("vdtype", ["float32", "float64"])
def test_reduce_by_key_float_sums(rng, backend, vdtype):
    """Values of any magnitude: within 2 len u sum|v| of np.add.reduceat per run;
    reproducible mode: the bits of a reproducible sum() of each run's values."""
    n = 100003
    keys = keys_with_runs(rng, "int64", n, 64)
    keys[50000:70000] = 5  # one long run
    vals = (rng.uniform(-1, 1, n) * 2.0 ** rng.integers(-20, 20, n)).astype(vdtype)
    s = starts_of(keys)
    e = np.append(s, n)
    k, v = ctx_for(backend).reduce_by_key(keys, vals)
    assert np.array_equal(k, keys[s])
    want = np.add.reduceat(vals.astype(np.float64), s)
    absum = np.add.reduceat(np.abs(vals.astype(np.float64)), s)
    for r in range(s.size):
        assert_close_sum(v[r], want[r], absum[r], int(e[r + 1] - e[r]), vdtype)
    rctx = ctx_for(backend, reproducible=True)
    k, v = rctx.reduce_by_key(keys, vals)
    for r in range(0, s.size, max(1, s.size // 200)):  # a sample of the runs, and the long one
        one = rctx.sum(vals[e[r]:e[r + 1]])
        assert np.array_equal(bits(v[r:r + 1]), bits(np.array([one], dtype=vdtype))), r
    big = int(np.flatnonzero(s == 50000)[0]) if np.any(s == 50000) else None
    if big is not None:
        one = rctx.sum(vals[e[big]:e[big + 1]])
        assert np.array_equal(bits(v[big:big + 1]), bits(np.array([one], dtype=vdtype)))


def test_special_float_keys():
    x = np.array([0.0, -0.0, 0.0, np.nan, -np.nan, np.nan, 1.0, np.inf, np.inf, -np.inf],
                 dtype=np.float64)
    values, lengths = xpar.run_length_encode(x)
    assert list(lengths) == [3, 3, 1, 2, 1]
    assert np.array_equal(bits(values), bits(x[[0, 3, 6, 7, 9]]))
    y = np.array([-0.0, 0.0], dtype=np.float32)
    values, lengths = xpar.run_length_encode(y)
    assert list(lengths) == [2] and np.signbit(values[0])  # the first element's bits
    k, v = xpar.reduce_by_key(x, np.arange(10, dtype=np.int32), "max")
    assert list(v) == [2, 5, 6, 8, 9]


def test_runs_refusals():
    x = np.arange(10, dtype=np.float64)
    with pytest.raises(xpar.Overlap):
        xpar.run_length_encode(x, values_out=x)
    with pytest.raises(xpar.Overlap):
        xpar.reduce_by_key(x, x.copy(), keys_out=np.empty(10), values_out=x)
    with pytest.raises(xpar.InvalidEnum):
        xpar.reduce_by_key(x, x, "prod")
    with pytest.raises(xpar.InvalidArgument):
        xpar.reduce_by_key(x, np.ones(9))
    with pytest.raises(xpar.InvalidArgument):
        xpar.run_length_encode(x, lengths_out=np.empty(10, dtype=np.float64))
    assert np.array_equal(x, np.arange(10, dtype=np.float64))
