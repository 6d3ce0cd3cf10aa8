"""sort, sort_pairs and argsort on every tier against NumPy's stable sort:
every dtype, ascending and descending, with duplicates and (floats) +-0.0,
NaNs of both signs with payloads, +-inf and subnormals.  Keys compare bit for
bit (xpar moves them, NumPy too); values and indices are the permutation."""
import numpy as np
import pytest

import xpar
from conftest import BACKENDS, DTYPES, EXPECTED_TIER, make_context

SORT_SIZES = [0, 1, 2, 33, 1000, 4097, 100003]
_contexts = {}


def ctx_for(backend):
    if backend not in _contexts:
        _contexts[backend] = make_context(backend)
    return _contexts[backend]


def keys_for(rng, dtype, n):
    """Random keys with many duplicates; floats with the special values."""
    dt = np.dtype(dtype)
    if dt.kind == "f":
        x = rng.integers(-50, 50, n).astype(dt) / 4
        specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan,
                             np.finfo(dt).smallest_subnormal, -np.finfo(dt).tiny], dtype=dt)
        mask = rng.random(n) < 0.2
        x[mask] = specials[rng.integers(0, len(specials), int(mask.sum()))]
        if n > 3:  # a NaN with a payload, and a negative one
            bits = x.view(np.uint32 if dt.itemsize == 4 else np.uint64)
            bits[1] = 0x7fc0beef if dt.itemsize == 4 else 0x7ff800000000beef
            bits[2] = 0xffc00001 if dt.itemsize == 4 else 0xfff8000000000001
        return x
    info = np.iinfo(dt)
    pool = rng.integers(info.min, info.max, 64, dtype=dt, endpoint=True)
    pool[:2] = [info.min, info.max]
    return pool[rng.integers(0, len(pool), n)]


def stable_order(x, descending):
    """NumPy's stable order; descending: the reverse of unequal keys, equal
    keys (every NaN, -0.0 with +0.0) still in input order, NaNs first."""
    if not descending:
        return np.argsort(x, kind="stable")
    # rank each key among the distinct values (np.unique: NaNs last, one rank;
    # -0.0 and +0.0 one value), then sort the ranks downwards, stably
    _, rank = np.unique(x, return_inverse=True)
    return np.argsort(-rank.astype(np.int64), kind="stable")


def bits(a):
    a = np.ascontiguousarray(a)
    return a.view(np.uint8)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SORT_SIZES)
@pytest.mark.parametrize("descending", [False, True])
def test_sort(rng, backend, dtype, n, descending):
    ctx = ctx_for(backend)
    x = keys_for(rng, dtype, n)
    before = x.copy()
    perm = stable_order(x, descending)
    got = ctx.sort(x, descending=descending)
    assert np.array_equal(bits(got), bits(x[perm]))
    assert np.array_equal(bits(x), bits(before))  # the input is untouched
    d = ctx.last_decision
    assert d.op == "sort" and d.n == n
    if n > 0 and EXPECTED_TIER[backend]:
        assert d.tier == EXPECTED_TIER[backend], d
    # in place
    y = x.copy()
    assert ctx.sort(y, out=y, descending=descending) is y
    assert np.array_equal(bits(y), bits(x[perm]))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SORT_SIZES)
@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
def test_argsort(rng, backend, dtype, n, index_dtype):
    ctx = ctx_for(backend)
    x = keys_for(rng, dtype, n)
    for descending in (False, True):
        got = ctx.argsort(x, descending=descending, dtype=index_dtype)
        assert got.dtype == np.dtype(index_dtype)
        assert np.array_equal(got, stable_order(x, descending))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("key_dtype", DTYPES)
@pytest.mark.parametrize("n", [0, 5, 1000, 100003])
def test_sort_pairs(rng, backend, key_dtype, n):
    ctx = ctx_for(backend)
    keys = keys_for(rng, key_dtype, n)
    for value_dtype in ("int32", "float64", "uint64"):
        values = np.arange(n).astype(value_dtype)
        for descending in (False, True):
            perm = stable_order(keys, descending)
            k, v = ctx.sort_pairs(keys, values, descending=descending)
            assert np.array_equal(bits(k), bits(keys[perm]))
            assert np.array_equal(v, values[perm])
    # in place, both arrays
    k, v = keys.copy(), np.arange(n, dtype=np.int64)
    ctx.sort_pairs(k, v, keys_out=k, values_out=v)
    assert np.array_equal(v, stable_order(keys, False))


def test_sort_refusals():
    x = np.arange(10, dtype=np.float64)
    with pytest.raises(xpar.Overlap):
        xpar.sort(x[:8], out=x[2:])
    with pytest.raises(xpar.Overlap):
        xpar.sort_pairs(x, x)  # keys and values are one array
    with pytest.raises(xpar.InvalidArgument):
        xpar.argsort(x, dtype="float32")
    with pytest.raises(xpar.InvalidArgument):
        xpar.sort(x, out=np.empty(10, dtype=np.float32))
    with pytest.raises(xpar.InvalidArgument):
        xpar.sort_pairs(x, np.arange(9))
    assert np.array_equal(x, np.arange(10, dtype=np.float64))  # nothing written


def test_module_functions(rng):
    x = keys_for(rng, "float32", 5000)
    assert np.array_equal(bits(xpar.sort(x)), bits(np.sort(x, kind="stable")))
    assert np.array_equal(xpar.argsort(x), np.argsort(x, kind="stable"))
    assert xpar.last_decision().op == "sort"
