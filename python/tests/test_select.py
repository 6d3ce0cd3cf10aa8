"""select, select_flagged, partition and unique_consecutive on every tier
against NumPy (boolean indexing; runs of equal consecutive elements), every
dtype, with NaN, +-0.0 and +-inf among float inputs."""
import numpy as np
import pytest

import xpar
from conftest import BACKENDS, DTYPES, make_context

SIZES = [0, 1, 2, 1000, 4097, 100003]
PREDS = {"<": np.less, "<=": np.less_equal, "==": np.equal, "!=": np.not_equal,
         ">=": np.greater_equal, ">": np.greater}
_contexts = {}


def ctx_for(backend):
    if backend not in _contexts:
        _contexts[backend] = make_context(backend)
    return _contexts[backend]


def data(rng, dtype, n, runs=False):
    dt = np.dtype(dtype)
    if runs:  # runs of equal values
        x = np.repeat(rng.integers(0, 5, n), rng.integers(1, 4, n))[:n].astype(dt)
    else:
        x = rng.integers(0, 100, n).astype(dt)
    if dt.kind == "f" and n > 4:
        x[rng.integers(0, n, n // 10)] = np.nan
        x[1], x[2], x[3] = -0.0, np.inf, -np.inf
    return x


def bits(a):
    return np.ascontiguousarray(a).view(np.uint8)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
def test_select_and_partition(rng, backend, dtype, n):
    ctx = ctx_for(backend)
    x = data(rng, dtype, n)
    for pred, fn in PREDS.items():
        v = np.array(50, dtype=dtype).item()
        want = x[fn(x, v)]
        got = ctx.select(x, pred, v)
        assert np.array_equal(bits(got), bits(want)), pred
        out, count = ctx.partition(x, pred, v)
        keep = fn(x, v)
        assert count == int(keep.sum())
        assert np.array_equal(bits(out), bits(np.concatenate([x[keep], x[~keep]])))
    got = ctx.select(x, "in_range", 10, 60)
    assert np.array_equal(bits(got), bits(x[(x >= 10) & (x < 60)]))
    assert ctx.last_decision.op == "select"


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
def test_select_flagged(rng, backend, dtype, n):
    ctx = ctx_for(backend)
    x = data(rng, dtype, n)
    flags = rng.random(n) < 0.3
    assert np.array_equal(bits(ctx.select_flagged(x, flags)), bits(x[flags]))
    f8 = (rng.integers(0, 3, n)).astype(np.uint8)
    assert np.array_equal(bits(ctx.select_flagged(x, f8)), bits(x[f8 != 0]))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
def test_unique_consecutive(rng, backend, dtype, n):
    ctx = ctx_for(backend)
    x = data(rng, dtype, n, runs=True)
    same = (x[1:] == x[:-1])
    if x.dtype.kind == "f":
        same |= np.isnan(x[1:]) & np.isnan(x[:-1])
    keep = np.concatenate([[True], ~same]) if n else np.zeros(0, bool)
    got = ctx.unique_consecutive(x)
    assert np.array_equal(bits(got), bits(x[keep]))
    # in place
    y = x.copy()
    got = ctx.unique_consecutive(y, out=y)
    assert np.array_equal(bits(got), bits(x[keep]))


def test_sorted_unique_is_numpy_unique(rng):
    x = rng.integers(0, 50, 10000).astype(np.float64)
    x[::97] = np.nan
    got = xpar.unique_consecutive(xpar.sort(x))
    assert np.array_equal(got, np.unique(x), equal_nan=True)


def test_compaction_refusals():
    x = np.arange(10, dtype=np.float64)
    with pytest.raises(xpar.Overlap):
        xpar.partition(x, ">", 3, out=x)
    with pytest.raises(xpar.InvalidEnum):
        xpar.select(x, "~", 3)
    with pytest.raises(xpar.InvalidArgument):
        xpar.select_flagged(x, np.ones(9, dtype=np.uint8))
    assert np.array_equal(x, np.arange(10, dtype=np.float64))
