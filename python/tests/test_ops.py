"""Every op x dtype x tier against NumPy: integers exact (wrapping modulo
2^bits), floats within a bound that grows with n."""
import numpy as np
import pytest

import xpar
from conftest import (BACKENDS, DTYPES, EXPECTED_TIER, SIZES, assert_close_sum, eps,
                      make_context, random_array)

_contexts = {}


def ctx_for(backend):
    # One context per backend for the module (tests run on one thread).
    if backend not in _contexts:
        _contexts[backend] = make_context(backend)
    return _contexts[backend]


def check_tier(ctx, backend, op, dtype, n):
    d = ctx.last_decision
    assert d.op == op
    assert d.n == n
    assert d.dtype == {"float32": "float", "float64": "double"}.get(dtype, dtype)
    if n > 0 and EXPECTED_TIER[backend]:
        assert d.tier == EXPECTED_TIER[backend], d
    assert d.tier != "none" or n == 0
    assert d.reason


def is_float(dtype):
    return np.dtype(dtype).kind == "f"


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
def test_reduce(rng, backend, dtype, n):
    ctx = ctx_for(backend)
    x = random_array(rng, dtype, n)
    keep = x.copy()
    s = ctx.sum(x)
    check_tier(ctx, backend, "reduce", dtype, n)
    if is_float(dtype):
        assert isinstance(s, float)
        assert_close_sum(s, np.sum(x, dtype=np.float64), np.sum(np.abs(x), dtype=np.float64), n, dtype)
    else:
        assert isinstance(s, int)
        assert s == int(np.sum(x, dtype=x.dtype))
    if n == 0:
        assert ctx.min(x) == (np.inf if is_float(dtype) else np.iinfo(x.dtype).max)
        assert ctx.max(x) == (-np.inf if is_float(dtype) else np.iinfo(x.dtype).min)
    else:
        assert ctx.min(x) == x.min()
        assert ctx.max(x) == x.max()
    check_tier(ctx, backend, "reduce", dtype, n)
    # wide sum: int32 -> int64, uint32 -> uint64, float32 -> float64
    w = ctx.sum(x, wide=True)
    assert w == ctx.sum_wide(x)
    if is_float(dtype):
        assert_close_sum(w, np.sum(x, dtype=np.float64), np.sum(np.abs(x), dtype=np.float64), n,
                         "float64")
    else:
        wide = {"int32": np.int64, "uint32": np.uint64}.get(dtype, x.dtype)
        assert w == int(np.sum(x.astype(wide), dtype=wide))
    np.testing.assert_array_equal(x, keep)  # inputs untouched


def identity(op, dtype):
    if op == "sum":
        return 0
    if is_float(dtype):
        return np.inf if op == "min" else -np.inf
    info = np.iinfo(np.dtype(dtype))
    return info.max if op == "min" else info.min


def scan_reference(x, op, exclusive, initial):
    dt = x.dtype
    init = identity(op, dt) if initial is None else initial
    seq = np.concatenate([np.array([init], dtype=dt), x])
    if not exclusive:
        ufunc = {"sum": np.add, "min": np.minimum, "max": np.maximum}[op]
        ref = ufunc.accumulate(seq.astype(np.float64) if is_float(dt) else seq, dtype=None)
        return ref[1:]
    ufunc = {"sum": np.add, "min": np.minimum, "max": np.maximum}[op]
    ref = ufunc.accumulate(seq.astype(np.float64) if is_float(dt) else seq)
    return ref[:-1]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("with_init", [False, True])
def test_scan(rng, backend, dtype, n, exclusive, with_init):
    ctx = ctx_for(backend)
    x = random_array(rng, dtype, n)
    keep = x.copy()
    for op, fn in (("sum", ctx.cumsum), ("min", ctx.cummin), ("max", ctx.cummax)):
        initial = None
        if with_init:
            initial = random_array(rng, dtype, 1)[0].item()
        out = fn(x, exclusive=exclusive, initial=initial)
        check_tier(ctx, backend, "scan", dtype, n)
        assert type(out) is np.ndarray and out.dtype == x.dtype and out.shape == x.shape
        ref = scan_reference(x, op, exclusive, initial)
        if is_float(dtype) and op == "sum":
            prefix_abs = np.cumsum(np.abs(x.astype(np.float64)))
            if exclusive:
                prefix_abs = np.concatenate([[0.0], prefix_abs[:-1]]) if n else prefix_abs
            bound = 2.0 * max(n, 1) * eps(dtype) * (abs(initial or 0.0) + prefix_abs) + 1e-300
            assert np.all(np.abs(out.astype(np.float64) - ref) <= bound)
        else:
            np.testing.assert_array_equal(out, ref.astype(x.dtype))
    np.testing.assert_array_equal(x, keep)
    # out= given, and in place
    out = np.empty_like(x)
    assert ctx.cumsum(x, out=out) is out
    y = x.copy()
    assert ctx.cummax(y, out=y) is y
    np.testing.assert_array_equal(y, ctx.cummax(x))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
def test_dot(rng, backend, dtype, n):
    ctx = ctx_for(backend)
    x = random_array(rng, dtype, n)
    y = random_array(rng, dtype, n)
    got = ctx.dot(x, y)
    check_tier(ctx, backend, "dot", dtype, n)
    if is_float(dtype):
        prod = x.astype(np.float64) * y.astype(np.float64)
        assert_close_sum(got, prod.sum(), np.abs(prod).sum(), n + 1, dtype)
    else:
        with np.errstate(over="ignore"):
            assert got == int(np.sum(x * y, dtype=x.dtype))


def alpha_for(dtype, rng):
    if is_float(dtype):
        return float(rng.uniform(-2, 2))
    return 3 if np.dtype(dtype).kind == "u" else -3


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
def test_axpy_add_fill(rng, backend, dtype, n):
    ctx = ctx_for(backend)
    x = random_array(rng, dtype, n)
    y = random_array(rng, dtype, n)
    alpha = alpha_for(dtype, rng)
    y0 = y.copy()
    assert ctx.axpy(alpha, x, y) is y
    check_tier(ctx, backend, "axpy", dtype, n)
    with np.errstate(over="ignore"):
        ref = np.asarray(alpha, dtype=x.dtype) * x + y0
    if is_float(dtype):
        bound = 2 * eps(dtype) * (np.abs(alpha * x.astype(np.float64)) + np.abs(y0)) + 1e-300
        assert np.all(np.abs(y.astype(np.float64) - ref.astype(np.float64)) <= bound)
    else:
        np.testing.assert_array_equal(y, ref)

    z = ctx.add(x, y0)
    check_tier(ctx, backend, "add", dtype, n)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(z, x + y0)  # one rounding: exact everywhere
    out = np.empty_like(x)
    assert ctx.add(x, y0, out) is out
    np.testing.assert_array_equal(out, z)
    w = x.copy()
    ctx.add(w, y0, w)  # z may be x
    np.testing.assert_array_equal(w, z)

    value = random_array(rng, dtype, 1)[0].item()
    f = np.empty_like(x)
    assert ctx.fill(f, value) is f
    check_tier(ctx, backend, "fill", dtype, n)
    np.testing.assert_array_equal(f, np.full(n, value, dtype=x.dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_module_level_functions(rng, dtype):
    x = random_array(rng, dtype, 5000)
    y = random_array(rng, dtype, 5000)
    assert xpar.min(x) == x.min() and xpar.max(x) == x.max()
    if not is_float(dtype):
        assert xpar.sum(x) == int(np.sum(x, dtype=x.dtype))
        np.testing.assert_array_equal(xpar.cumsum(x), np.cumsum(x, dtype=x.dtype))
        with np.errstate(over="ignore"):
            np.testing.assert_array_equal(xpar.add(x, y), x + y)
    assert xpar.last_decision().op in ("reduce", "scan", "add")
    f = xpar.fill(np.empty_like(x), 1)
    assert np.all(f == 1)
    assert isinstance(xpar.dot(x, y), int if not is_float(dtype) else float)
    xpar.axpy(1, x, y)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_reproducible_same_bits_on_every_tier(rng, dtype):
    x = random_array(rng, dtype, 200003)
    y = random_array(rng, dtype, 200003)
    sums, dots, scans = set(), set(), []
    for backend in BACKENDS:
        ctx = make_context(backend)
        ctx.reproducible = True
        assert ctx.reproducible
        sums.add(ctx.sum(x))
        dots.add(ctx.dot(x, y))
        scans.append(ctx.cumsum(x))
        assert ctx.last_decision.reproducible
        ctx.close()
    assert len(sums) == 1 and len(dots) == 1
    for s in scans[1:]:
        np.testing.assert_array_equal(s.view(np.uint8), scans[0].view(np.uint8))


def test_offset_views(rng):
    # Any element offset inside an array is fine; so are views of larger arrays.
    base = random_array(rng, "int64", 1001)
    ctx = ctx_for("auto")
    assert ctx.sum(base[3:900]) == int(base[3:900].sum())
    np.testing.assert_array_equal(ctx.cumsum(base[1:]), np.cumsum(base[1:]))
