"""Shared fixtures: a seeded generator (the seed is printed; rerun with
XPAR_TEST_SEED=<seed>), the backends to test, reference computations."""
import os
import time

import numpy as np
import pytest

import xpar

# The library reads XPAR_* at context creation: tests start from a clean policy.
for _k in [k for k in os.environ if k.startswith("XPAR_") and not k.startswith("XPAR_TEST_")]:
    del os.environ[_k]
# AUTO's choices (and float bits across two calls) must not depend on how
# loaded the test machine is: adaptation off, as in the C suites
# (tests/test_adapt.c covers adaptation with a fake clock).
os.environ["XPAR_ADAPT"] = "off"

_seed_text = os.environ.get("XPAR_TEST_SEED")
SEED = int(_seed_text, 0) if _seed_text else time.time_ns() % 1000000000000

DTYPES = ["int32", "int64", "uint32", "uint64", "float32", "float64"]
SIZES = [0, 1, 7, 1000, 100003]
GPU = xpar.device_query().usable
# The tiers under test: (backend, expected tier of a call with n > 0 or None
# when it depends on n).  "cpu" runs with every OpenMP threshold set to 0, so
# that its OpenMP tier runs at every size.
BACKENDS = ["serial", "cpu", "auto"] + (["cuda", "cuda-serial"] if GPU else [])
EXPECTED_TIER = {"serial": "cpu-serial", "cpu": "cpu-openmp", "auto": None,
                 "cuda": "cuda", "cuda-serial": "cuda-serial"}
OPS = ["reduce", "scan", "axpy", "add", "fill", "dot", "sort", "select", "runs", "argreduce",
       "segmented", "histogram"]


def pytest_report_header(config):
    d = xpar.device_query()
    return [f"xpar: seed {SEED} (rerun with XPAR_TEST_SEED={SEED}); "
            f"GPU usable: {d.usable} ({d.name or d.reason}); backends {BACKENDS}"]


@pytest.fixture
def rng(request):
    # One stream per test, derived from the seed and the test's name.
    node = request.node.nodeid
    h = sum((i + 1) * ord(c) for i, c in enumerate(node)) % (1 << 31)
    print(f"seed {SEED} (XPAR_TEST_SEED={SEED}), test stream {h}")
    return np.random.default_rng([SEED, h])


def make_context(backend):
    ctx = xpar.Context(backend=backend)
    if backend == "cpu":
        for op in OPS:
            for dt in DTYPES:
                ctx.set_threshold(op, dt, "openmp", 0)
    return ctx


def random_array(rng, dtype, n):
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return rng.uniform(-1.0, 1.0, n).astype(dt)
    info = np.iinfo(dt)
    return rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)


def eps(dtype):
    return float(np.finfo(np.dtype(dtype)).eps)


def assert_close_sum(got, ref, abs_terms, n, dtype):
    """A float sum of n terms: |got - ref| within 2 n u sum|terms| (+ a floor)."""
    tol = 2.0 * max(n, 1) * eps(dtype) * float(abs_terms) + 1e-300
    assert abs(float(got) - float(ref)) <= tol, (got, ref, tol)


def pytest_terminal_summary(terminalreporter):
    # Shown with -q too: the seed that reproduces this run.
    terminalreporter.write_line(f"xpar: seed {SEED} (rerun with XPAR_TEST_SEED={SEED}); "
                                f"GPU usable: {GPU}; backends {BACKENDS}")
