"""Context policy, thresholds, decision records, profiles, threads."""
import threading

import numpy as np
import pytest

import xpar
from conftest import DTYPES, GPU, random_array


def test_policy_round_trip():
    with xpar.Context(backend="cpu-serial", offload="disabled", reproducible=True,
                      threads=2) as c:
        assert c.backend == "serial"
        assert c.offload == "disabled"
        assert c.reproducible is True
        c.backend = "openmp"
        assert c.backend == "cpu"
        c.backend = "auto"
        c.reproducible = False
        assert not c.reproducible
        assert c.shadow is None
        assert c.threads == 2
        c.threads = 0
        assert c.threads == 0
    assert c.closed


@pytest.mark.parametrize("dtype", DTYPES)
def test_thresholds(dtype):
    c = xpar.Context()
    c.set_threshold("scan", dtype, "openmp", 1234)
    assert c.get_threshold("scan", dtype, "openmp") == 1234
    c.set_threshold("dot", np.dtype(dtype), "gpu_pageable", None)
    assert c.get_threshold("dot", dtype, "gpu_pageable") == xpar.NEVER
    c.set_threshold("add", dtype, "gpu", "never")
    assert c.get_threshold("add", dtype, "gpu") == xpar.NEVER
    with pytest.raises(xpar.InvalidArgument):
        c.set_threshold("add", dtype, "gpu", -1)


def test_threshold_decides_the_tier(rng):
    c = xpar.Context(backend="cpu")
    x = random_array(rng, "float64", 1000)
    c.set_threshold("reduce", "float64", "openmp", 10**9)
    c.sum(x)
    assert c.last_decision.tier == "cpu-serial"
    c.set_threshold("reduce", "float64", "openmp", 0)
    c.sum(x)
    d = c.last_decision
    assert d.tier == "cpu-openmp"
    assert "api" in d.reason  # the threshold quoted with where it came from


def test_last_decision_contents(rng):
    c = xpar.Context(backend="serial")
    x = random_array(rng, "uint32", 777)
    c.cumsum(x)
    d = c.last_decision
    assert isinstance(d, xpar.Decision)
    assert (d.op, d.dtype, d.n, d.tier) == ("scan", "uint32", 777, "cpu-serial")
    assert d.bytes_to_device == 0 and d.bytes_to_host == 0 and d.bytes_moved == 0
    assert "serial" in d.reason
    assert d.reproducible is False and d.shadow_tier is None and d.kernel is None
    fresh = xpar.Context()
    assert fresh.last_decision.tier == "none"


def test_shadow_mode(rng):
    c = xpar.Context(backend="cpu", shadow="cpu-serial", shadow_fail=True)
    assert c.shadow == "cpu-serial"
    x = random_array(rng, "int64", 5000)
    assert c.sum(x) == int(x.sum())
    d = c.last_decision
    assert d.shadow_tier == "cpu-serial" and not d.shadow_mismatch
    assert "shadow" in d.reason
    c.set_shadow(None)
    assert c.shadow is None


def test_device_query():
    d = xpar.device_query()
    assert isinstance(d, xpar.DeviceInfo)
    assert isinstance(d.usable, bool)
    if not d.usable:
        assert d.reason


def test_profile_round_trip(tmp_path):
    c = xpar.Context()
    c.set_threshold("reduce", "int32", "openmp", 4321)
    path = tmp_path / "sub" / "profile.txt"
    c.profile_save(path)
    assert path.exists()
    c2 = xpar.Context()
    assert c2.get_threshold("reduce", "int32", "openmp") != 4321
    assert c2.profile_load(path) is True
    assert c2.get_threshold("reduce", "int32", "openmp") == 4321
    with pytest.raises(xpar.ProfileError):
        c2.profile_load(tmp_path / "missing.txt")
    assert isinstance(xpar.profile_default_path(), str)


def test_default_context_per_thread():
    seen = []
    lock = threading.Lock()

    def body():
        c = xpar.default_context()
        with lock:
            seen.append(c)

    ts = [threading.Thread(target=body) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    seen.append(xpar.default_context())
    assert len({id(c) for c in seen}) == 5
    assert xpar.default_context() is xpar.default_context()


def test_one_context_per_thread(rng):
    # Four threads, each with its own context, run concurrently (the GIL is
    # released inside the C calls); every result is checked.
    arrays = [random_array(rng, "int64", 300000) for _ in range(4)]
    errors = []

    def body(i):
        try:
            with xpar.Context(backend=["serial", "cpu", "auto", "auto"][i]) as c:
                x = arrays[i]
                for _ in range(5):
                    assert c.sum(x) == int(x.sum())
                    np.testing.assert_array_equal(c.cumsum(x), np.cumsum(x))
                # and the module-level functions, on the thread's default context
                assert xpar.max(x) == x.max()
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    ts = [threading.Thread(target=body, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors


def test_gil_released(rng):
    # A long C call on one thread lets another Python thread run.
    x = random_array(rng, "float64", 4_000_000)
    c = xpar.Context(backend="serial")
    ticks = []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            ticks.append(1)

    t = threading.Thread(target=ticker)
    t.start()
    try:
        for _ in range(10):
            c.cumsum(x)
    finally:
        stop.set()
        t.join()
    assert len(ticks) > 0


@pytest.mark.skipif(not GPU, reason="no usable GPU")
def test_map_update_unmap(rng):
    c = xpar.Context(backend="cuda")
    x = random_array(rng, "float32", 100000)
    c.map(x)
    s = c.sum(x)
    bound = 2 * x.size * np.finfo(np.float32).eps * np.abs(x.astype(np.float64)).sum()
    assert abs(s - float(x.sum(dtype=np.float64))) <= bound
    c.fill(x, 2.0)
    c.update(x, "from_device")
    assert np.all(x == 2.0)
    x[:] = 3.0
    c.update(x, "to_device")
    assert c.sum(x) == 300000.0
    c.unmap(x)
    with pytest.raises(xpar.NotMapped):
        c.unmap(x)


def test_environment_then_arguments(monkeypatch):
    monkeypatch.setenv("XPAR_BACKEND", "serial")
    monkeypatch.setenv("XPAR_REPRODUCIBLE", "1")
    c = xpar.Context()
    assert c.backend == "serial" and c.reproducible
    c2 = xpar.Context(backend="auto", reproducible=False)
    assert c2.backend == "auto" and not c2.reproducible


def test_overhead_bench_runs():
    import pathlib
    import subprocess
    import sys
    script = pathlib.Path(__file__).resolve().parents[1] / "bench" / "overhead.py"
    r = subprocess.run([sys.executable, str(script), "128", "200"], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "numpy.sum" in r.stdout and "from C" in r.stdout


@pytest.mark.skipif(GPU, reason="needs a machine without a usable GPU")
@pytest.mark.parametrize("backend,tier", [("cuda", "cpu"), ("cuda-serial", "cpu-serial")])
def test_cuda_backend_without_gpu_runs_on_the_cpu(rng, backend, tier):
    # Without a usable GPU, cuda runs on the CPU tiers and cuda-serial on
    # cpu-serial, and the decision record says why (offload "default").
    c = xpar.Context(backend=backend)
    x = random_array(rng, "int32", 1000)
    assert c.sum(x) == int(x.sum(dtype=np.int32))
    d = c.last_decision
    assert d.tier.startswith(tier), d
    assert d.reason
