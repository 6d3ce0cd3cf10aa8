"""Arrays of other frameworks through DLPack: PyTorch (host and CUDA), CuPy
and JAX.  Each part is skipped where its framework is not importable, the
device parts where no GPU is usable (xpar.device_query())."""
import os

import numpy as np
import pytest

import xpar
from conftest import GPU, random_array

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # JAX: leave memory to the others

BACKENDS_GPU = ["cuda", "cuda-serial", "auto"]
DTYPES = ["int32", "int64", "uint32", "uint64", "float32", "float64"]
needs_gpu = pytest.mark.skipif(not GPU, reason="no usable GPU (xpar.device_query())")


def skip_slow(backend, n):
    if backend == "cuda-serial" and n > 100003:
        pytest.skip("cuda-serial (grid = block = 1) is slow at this size")


def close(got, ref, n, dtype, terms):
    if np.dtype(dtype).kind != "f":
        assert got == ref
    else:
        tol = 2.0 * max(n, 1) * float(np.finfo(np.dtype(dtype)).eps) * terms + 1e-300
        assert abs(float(got) - float(ref)) <= tol


def check_all_ops(ctx, to_dev, to_host, rng, dtype, n, expect_type):
    """Every op on arrays made by to_dev, results compared with NumPy on the host."""
    xh = random_array(rng, dtype, n)
    yh = random_array(rng, dtype, n)
    x, y = to_dev(xh), to_dev(yh)
    terms = float(np.abs(xh.astype(np.float64)).sum())
    close(ctx.sum(x), int(xh.sum(dtype=xh.dtype)) if xh.dtype.kind != "f" else xh.sum(dtype=np.float64),
          n, dtype, terms)
    assert ctx.min(x) == xh.min() and ctx.max(x) == xh.max()
    s = ctx.cumsum(x)
    assert isinstance(s, expect_type)
    if xh.dtype.kind != "f":
        np.testing.assert_array_equal(to_host(s), np.cumsum(xh, dtype=xh.dtype))
        np.testing.assert_array_equal(to_host(ctx.cummax(x, exclusive=True, initial=5)),
                                      np.maximum.accumulate(np.concatenate([np.array([5], xh.dtype), xh[:-1]])))
        with np.errstate(over="ignore"):
            np.testing.assert_array_equal(to_host(ctx.add(x, y)), xh + yh)
            assert ctx.dot(x, y) == int(np.sum(xh * yh, dtype=xh.dtype))
    else:
        ref = np.cumsum(xh.astype(np.float64))
        bound = 2.0 * n * float(np.finfo(xh.dtype).eps) * np.cumsum(np.abs(xh.astype(np.float64)))
        assert np.all(np.abs(to_host(s).astype(np.float64) - ref) <= bound + 1e-300)
        np.testing.assert_array_equal(to_host(ctx.add(x, y)), xh + yh)
    assert isinstance(ctx.add(x, y), expect_type)
    f = to_dev(np.zeros(n, dtype=dtype))
    ctx.fill(f, 3)
    assert np.all(to_host(f) == 3)
    ctx.axpy(2, x, f)  # f = 2 x + 3
    with np.errstate(over="ignore"):
        ref = np.asarray(2, dtype=xh.dtype) * xh + np.asarray(3, dtype=xh.dtype)
    if xh.dtype.kind == "f":
        np.testing.assert_allclose(to_host(f), ref, rtol=4 * np.finfo(xh.dtype).eps)
    else:
        np.testing.assert_array_equal(to_host(f), ref)


# ---------------------------------------------------------------- PyTorch --

def torch_or_skip():
    return pytest.importorskip("torch")


@pytest.mark.parametrize("dtype", DTYPES)
def test_torch_host(rng, dtype):
    torch = torch_or_skip()
    if dtype in ("uint32", "uint64") and not hasattr(torch, "uint32"):
        pytest.skip("this PyTorch has no uint32/uint64")
    ctx = xpar.Context(backend="auto")
    check_all_ops(ctx, lambda a: torch.from_numpy(a.copy()), lambda t: t.numpy(), rng, dtype,
                  10007, torch.Tensor)


@needs_gpu
@pytest.mark.parametrize("backend", BACKENDS_GPU)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 1000, 100003, 1 << 20])
def test_torch_cuda(rng, backend, dtype, n):
    skip_slow(backend, n)
    torch = torch_or_skip()
    if not torch.cuda.is_available():
        pytest.skip("PyTorch sees no GPU")
    if dtype in ("uint32", "uint64"):
        pytest.skip("PyTorch's uint32/uint64 CUDA support is partial")
    ctx = xpar.Context(backend=backend)
    check_all_ops(ctx, lambda a: torch.from_numpy(a.copy()).cuda(), lambda t: t.cpu().numpy(),
                  rng, dtype, n, torch.Tensor)
    r = ctx.cumsum(torch.ones(8, dtype=torch.int32, device="cuda"))
    assert r.device.type == "cuda"
    if backend != "auto":
        assert ctx.last_decision.tier == backend


@needs_gpu
def test_torch_stream(rng):
    torch = torch_or_skip()
    if not torch.cuda.is_available():
        pytest.skip("PyTorch sees no GPU")
    ctx = xpar.Context(backend="cuda")
    s = torch.cuda.Stream()
    xh = random_array(rng, "int64", 1 << 22)
    with torch.cuda.stream(s):
        x = torch.from_numpy(xh).cuda(non_blocking=False)
        y = torch.empty_like(x)
        y.copy_(x)           # queued on s
        y.mul_(3)            # queued on s: xpar's call must come after it
        out = ctx.cumsum(y, stream=s)       # ordered on s
        total = ctx.sum(out, stream=s.cuda_stream)  # an int handle too
    s.synchronize()
    np.testing.assert_array_equal(out.cpu().numpy(), np.cumsum(3 * xh))
    assert total == int(np.cumsum(3 * xh).sum())
    ctx.set_stream(s)
    assert ctx.max(y) == int((3 * xh).max())
    ctx.set_stream(None)


@needs_gpu
def test_torch_cpu_backend_on_device_data(rng):
    torch = torch_or_skip()
    if not torch.cuda.is_available():
        pytest.skip("PyTorch sees no GPU")
    ctx = xpar.Context(backend="cpu")
    xh = random_array(rng, "int32", 100000)
    x = torch.from_numpy(xh).cuda()
    assert ctx.sum(x) == int(xh.sum(dtype=np.int32))
    d = ctx.last_decision
    assert d.tier.startswith("cpu") and d.bytes_to_host >= xh.nbytes  # copied to the host


# ------------------------------------------------------------------- CuPy --

@needs_gpu
@pytest.mark.parametrize("backend", BACKENDS_GPU)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 1000, 100003, 1 << 20])
def test_cupy(rng, backend, dtype, n):
    skip_slow(backend, n)
    cp = pytest.importorskip("cupy")
    ctx = xpar.Context(backend=backend)
    check_all_ops(ctx, cp.asarray, cp.asnumpy, rng, dtype, n, cp.ndarray)
    if backend != "auto":
        assert ctx.last_decision.tier == backend
    d = ctx.last_decision
    assert d.bytes_to_device == 0 or backend == "auto"


@needs_gpu
def test_cupy_stream(rng):
    cp = pytest.importorskip("cupy")
    ctx = xpar.Context(backend="cuda")
    xh = random_array(rng, "float64", 1 << 21)
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        x = cp.asarray(xh)
        x *= 2.0                       # queued on s
        out = ctx.cumsum(x, stream=s)  # s.ptr
        m = ctx.max(out, stream=s)
    s.synchronize()
    ref = np.cumsum(2.0 * xh)
    bound = 2.0 * xh.size * np.finfo(np.float64).eps * np.cumsum(np.abs(2.0 * xh))
    assert np.all(np.abs(cp.asnumpy(out) - ref) <= bound)
    assert m == float(cp.asnumpy(out).max())


@needs_gpu
def test_cupy_errors_write_nothing():
    cp = pytest.importorskip("cupy")
    ctx = xpar.Context(backend="cuda")
    out = cp.full(10, 7, dtype=cp.int32)
    with pytest.raises(xpar.InvalidArgument):
        ctx.cumsum(cp.ones(11, dtype=cp.int32), out=out)
    with pytest.raises(xpar.InvalidArgument):
        ctx.fill(out[::2], 1)
    assert bool((out == 7).all())


@needs_gpu
def test_cupy_managed_memory(rng):
    cp = pytest.importorskip("cupy")
    pool = cp.cuda.MemoryPool(cp.cuda.malloc_managed)
    with cp.cuda.using_allocator(pool.malloc):
        x = cp.asarray(random_array(rng, "int64", 100000))
    ctx = xpar.Context()
    assert ctx.sum(x) == int(cp.asnumpy(x).sum())


# -------------------------------------------------------------------- JAX --

@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64"])
def test_jax_host(rng, dtype):
    """JAX arrays on the CPU (DLPack, read-only): inputs on every host tier;
    a result needs out= (JAX arrays are immutable), and the error writes
    nothing."""
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    if dtype.endswith("64") and not jax.config.jax_enable_x64:
        jax.config.update("jax_enable_x64", True)
    xh = random_array(rng, dtype, 10007)
    x = jax.device_put(jnp.asarray(xh), jax.devices("cpu")[0])
    assert str(x.dtype) == dtype
    for backend in ["serial", "cpu", "auto"]:
        ctx = xpar.Context(backend=backend)
        got = ctx.sum(x)
        if dtype.startswith("int"):
            assert got == int(xh.sum(dtype=xh.dtype))
            assert ctx.dot(x, x) == int(np.sum(xh * xh, dtype=xh.dtype))
        else:
            ref = xh.astype(np.float64)
            bound = 2 * xh.size * np.finfo(xh.dtype).eps * np.abs(ref).sum()
            assert abs(got - float(ref.sum())) <= bound
        assert ctx.min(x) == xh.min() and ctx.max(x) == xh.max()
        with pytest.raises(xpar.NotSupported):
            ctx.cumsum(x)
        out = np.full(xh.size, 7, dtype=xh.dtype)
        ctx.cumsum(x, out=out)  # a NumPy out for a JAX input
        if dtype.startswith("int"):
            np.testing.assert_array_equal(out, np.cumsum(xh, dtype=xh.dtype))
        with pytest.raises(xpar.NotSupported):
            ctx.fill(x, 1)
        np.testing.assert_array_equal(np.asarray(x), xh)  # the input is untouched


@needs_gpu
@pytest.mark.parametrize("dtype", ["int32", "float32"])
def test_jax(rng, dtype):
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    try:
        dev = jax.devices("gpu")[0]
    except RuntimeError:
        pytest.skip("JAX sees no GPU")
    xh = random_array(rng, dtype, 100000)
    x = jax.device_put(jnp.asarray(xh), dev)
    x.block_until_ready()
    ctx = xpar.Context()
    got = ctx.sum(x)
    if dtype == "int32":
        assert got == int(xh.sum(dtype=np.int32))
        assert ctx.dot(x, x) == int(np.sum(xh * xh, dtype=np.int32))
    else:
        bound = 2 * xh.size * np.finfo(np.float32).eps * np.abs(xh.astype(np.float64)).sum()
        assert abs(got - float(xh.sum(dtype=np.float64))) <= bound
    assert ctx.min(x) == xh.min()
    with pytest.raises(xpar.NotSupported):
        ctx.cumsum(x)  # JAX arrays are immutable: a result needs out=
    with pytest.raises(xpar.NotSupported):
        ctx.fill(x, 1)
    torch = pytest.importorskip("torch")
    out = torch.empty(xh.size, dtype=getattr(torch, dtype), device="cuda")
    ctx.cumsum(x, out=out)
    if dtype == "int32":
        np.testing.assert_array_equal(out.cpu().numpy(), np.cumsum(xh, dtype=np.int32))


@needs_gpu
def test_current_stream(rng):
    # stream="current" takes the framework's current stream for the call.
    torch = torch_or_skip()
    if not torch.cuda.is_available():
        pytest.skip("PyTorch sees no GPU")
    ctx = xpar.Context(backend="cuda")
    xh = random_array(rng, "int64", 1 << 22)
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        x = torch.from_numpy(xh).cuda()
        x.mul_(5)
        out = ctx.cumsum(x, stream="current")
        m = ctx.max(out, stream="current")
    s.synchronize()
    np.testing.assert_array_equal(out.cpu().numpy(), np.cumsum(5 * xh))
    assert m == int(np.cumsum(5 * xh).max())
    cp = pytest.importorskip("cupy")
    cs = cp.cuda.Stream(non_blocking=True)
    with cs:
        y = cp.asarray(xh)
        y *= 7
        assert ctx.sum(y, stream="current") == int(np.sum(7 * xh))
