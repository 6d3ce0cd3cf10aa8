"""Refused calls raise the xpar.Error subclass of their status, with the C
detail message, and write nothing."""
import numpy as np
import pytest

import xpar
from conftest import GPU, make_context, random_array

POISON = 7


@pytest.fixture
def ctx():
    c = make_context("auto")
    yield c
    c.close()


def poisoned(dtype, n):
    return np.full(n, POISON, dtype=dtype)


def test_error_hierarchy():
    assert issubclass(xpar.InvalidArgument, xpar.Error)
    assert issubclass(xpar.InvalidArgument, ValueError)
    assert issubclass(xpar.NoDevice, xpar.Error)
    assert issubclass(xpar.NullPointer, xpar.Error)
    assert issubclass(xpar.Overlap, xpar.Error)
    e = xpar.InvalidArgument("ERR_INVALID_ARGUMENT", "why", 105)
    assert (e.status, e.detail, e.code) == ("ERR_INVALID_ARGUMENT", "why", 105)
    assert "why" in str(e)


@pytest.mark.parametrize("bad", ["float16", "int16", "int8", "uint8", "bool", "complex64"])
def test_wrong_dtype(ctx, bad):
    x = np.zeros(10, dtype=bad)
    with pytest.raises(xpar.InvalidArgument) as ei:
        ctx.sum(x)
    assert ei.value.status == "ERR_INVALID_ARGUMENT"
    assert "dtype" in ei.value.detail
    out = poisoned(bad, 10)
    keep = out.copy()
    with pytest.raises(xpar.InvalidArgument):
        ctx.cumsum(x, out=out)
    np.testing.assert_array_equal(out, keep)
    with pytest.raises(xpar.InvalidArgument):
        ctx.fill(out, 1)
    np.testing.assert_array_equal(out, keep)


def test_mismatched_dtypes(ctx):
    x = np.ones(10, dtype=np.float32)
    y = poisoned(np.float64, 10)
    with pytest.raises(xpar.InvalidArgument, match="float but y is double"):
        ctx.axpy(2.0, x, y)
    assert np.all(y == POISON)
    with pytest.raises(xpar.InvalidArgument):
        ctx.dot(x, y)
    out = poisoned(np.float64, 10)
    with pytest.raises(xpar.InvalidArgument):
        ctx.cumsum(x, out=out)
    assert np.all(out == POISON)


def test_non_contiguous(ctx):
    x = np.arange(20, dtype=np.int32)[::2]
    with pytest.raises(xpar.InvalidArgument, match="not contiguous"):
        ctx.sum(x)
    buf = poisoned(np.int32, 20)
    with pytest.raises(xpar.InvalidArgument, match="not contiguous"):
        ctx.fill(buf[::2], 1)
    with pytest.raises(xpar.InvalidArgument):
        ctx.axpy(1, np.ones(10, np.int32), buf[::2])
    assert np.all(buf == POISON)
    # a length-1 view's stride does not matter
    assert ctx.sum(np.arange(20, dtype=np.int32)[5::100]) == 5


def test_not_one_dimensional(ctx):
    x = np.ones((4, 4), dtype=np.float64)
    with pytest.raises(xpar.InvalidArgument, match="1-D"):
        ctx.sum(x)
    with pytest.raises(xpar.InvalidArgument):
        ctx.sum(np.float64(3.0).reshape(()))


def test_mismatched_lengths(ctx):
    x = np.ones(10, dtype=np.int64)
    y = poisoned(np.int64, 9)
    with pytest.raises(xpar.InvalidArgument, match="10 elements but y has 9"):
        ctx.axpy(2, x, y)
    assert np.all(y == POISON)
    with pytest.raises(xpar.InvalidArgument):
        ctx.dot(x, y)
    out = poisoned(np.int64, 11)
    with pytest.raises(xpar.InvalidArgument):
        ctx.add(x, x, out)
    with pytest.raises(xpar.InvalidArgument):
        ctx.cumsum(x, out=out)
    assert np.all(out == POISON)


def test_scalar_out_of_range(ctx):
    y = poisoned(np.int32, 10)
    with pytest.raises(xpar.InvalidArgument, match="does not fit"):
        ctx.axpy(2**31, np.ones(10, np.int32), y)
    with pytest.raises(xpar.InvalidArgument):
        ctx.fill(y, 2**40)
    with pytest.raises(xpar.InvalidArgument):
        ctx.fill(y, 1.5)  # not an integer
    u = poisoned(np.uint32, 10)
    with pytest.raises(xpar.InvalidArgument):
        ctx.fill(u, -1)
    with pytest.raises(xpar.InvalidArgument):
        ctx.cumsum(np.ones(10, np.uint64), initial=-1)
    assert np.all(y == POISON) and np.all(u == POISON)
    with pytest.raises(xpar.InvalidArgument):
        ctx.fill(np.zeros(3), "x")


def test_overlap_from_c(ctx):
    # out partially overlapping x: the C library refuses it (ERR_OVERLAP).
    buf = np.arange(100, dtype=np.int32)
    keep = buf.copy()
    with pytest.raises(xpar.Overlap) as ei:
        ctx.cumsum(buf[0:90], out=buf[5:95])
    assert ei.value.status == "ERR_OVERLAP" and ei.value.detail
    np.testing.assert_array_equal(buf, keep)


def test_misaligned_from_c(ctx):
    raw = np.zeros(41, dtype=np.uint8)
    x = np.frombuffer(raw.data, dtype=np.int32, count=10, offset=1)
    with pytest.raises(xpar.InvalidArgument) as ei:
        ctx.sum(x)
    assert "align" in ei.value.detail


def test_read_only_output(ctx):
    y = poisoned(np.float64, 4)
    y.setflags(write=False)
    with pytest.raises(TypeError):
        ctx.fill(y, 1.0)
    assert np.all(y == POISON)
    # read-only inputs are fine
    assert ctx.sum(y) == 4 * POISON


def test_bad_names(ctx):
    with pytest.raises(xpar.InvalidEnum):
        ctx.backend = "gpu"
    with pytest.raises(xpar.InvalidEnum):
        xpar.Context(offload="sometimes")
    with pytest.raises(xpar.InvalidEnum):
        ctx.set_threshold("convolve", "int32", "openmp", 1)
    with pytest.raises(xpar.InvalidEnum):
        ctx.get_threshold("reduce", "float16", "openmp")
    with pytest.raises(xpar.InvalidEnum):
        ctx.scan(np.ones(3), "prod")
    with pytest.raises(xpar.InvalidArgument):
        ctx.set_stream("stream")
    with pytest.raises(xpar.InvalidArgument):
        ctx.sum(np.ones(3), stream=1.5)
    # stream="current" with host arrays: no stream, the call runs as usual
    assert ctx.sum(np.ones(3), stream="current") == 3.0


def test_closed_context():
    c = xpar.Context()
    c.close()
    assert c.closed
    with pytest.raises(xpar.NullContext):
        c.sum(np.ones(3))
    c.close()  # twice is fine


def test_invalid_env(monkeypatch):
    monkeypatch.setenv("XPAR_BACKEND", "fastest")
    with pytest.raises(xpar.InvalidEnv) as ei:
        xpar.Context()
    assert "XPAR_BACKEND" in ei.value.detail


@pytest.mark.skipif(GPU, reason="needs a machine without a usable GPU")
def test_no_device():
    c = xpar.Context(offload="mandatory")
    y = poisoned(np.float32, 100)
    with pytest.raises(xpar.NoDevice) as ei:
        c.fill(y, 1.0)
    assert ei.value.status == "ERR_NO_DEVICE" and ei.value.detail
    assert np.all(y == POISON)
    c2 = xpar.Context()
    with pytest.raises(xpar.NoDevice):
        c2.map(y)
    with pytest.raises(xpar.Error):
        c2.unmap(y)


def test_error_then_success_clears_detail(ctx, rng):
    with pytest.raises(xpar.InvalidArgument):
        ctx.sum(np.zeros(3, np.float16))
    x = random_array(rng, "int32", 10)
    assert ctx.sum(x) == int(x.sum(dtype=np.int32))
