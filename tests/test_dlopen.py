"""libxpar from Python through ctypes: a plugin host that loads it late.

Usage: python3 test_dlopen.py PATH-TO-LIBXPAR
CTest runs it with the same GLIBC_TUNABLES as test_dlopen (a host whose
static TLS surplus is spent; see tests/CMakeLists.txt).  It loads the
library, sums seeded random int32 arrays through AUTO, and checks that the
error detail of a refused call made on another thread stays on that thread.
"""
import ctypes
import os
import random
import sys
import threading
import time

XPAR_INT32 = 0  # enum xpar_dtype
XPAR_SUM = 0    # enum xpar_reduction
POISON = 0x5A5A5A5A


def load(path):
    lib = ctypes.CDLL(path)
    ctx_p = ctypes.c_void_p
    lib.xpar_context_create.argtypes = [ctypes.POINTER(ctx_p)]
    lib.xpar_context_create.restype = ctypes.c_int
    lib.xpar_context_destroy.argtypes = [ctx_p]
    lib.xpar_context_destroy.restype = ctypes.c_int
    lib.xpar_reduce.argtypes = [ctx_p, ctypes.c_int, ctypes.c_int, ctypes.c_void_p,
                                ctypes.c_size_t, ctypes.c_void_p]
    lib.xpar_reduce.restype = ctypes.c_int
    lib.xpar_last_error_detail.argtypes = []
    lib.xpar_last_error_detail.restype = ctypes.c_char_p
    lib.xpar_status_name.argtypes = [ctypes.c_int]
    lib.xpar_status_name.restype = ctypes.c_char_p
    return lib


def to_int32(v):
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >= 1 << 31 else v


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def reduce_int32(lib, ctx, values, n=None):
    """Returns (status name, result, guards intact)."""
    n = len(values) if n is None else n
    arr = (ctypes.c_int32 * max(1, len(values)))(*values)
    out = (ctypes.c_int32 * 3)(POISON, POISON, POISON)
    st = lib.xpar_reduce(ctx, XPAR_INT32, XPAR_SUM,
                         ctypes.cast(arr, ctypes.c_void_p) if values else None, n,
                         ctypes.addressof(out) + 4)
    intact = out[0] == POISON and out[2] == POISON and list(arr)[:len(values)] == values
    return lib.xpar_status_name(st).decode(), out[1], intact


def main():
    if len(sys.argv) != 2:
        print("usage: test_dlopen.py PATH-TO-LIBXPAR", file=sys.stderr)
        return 2
    seed_text = os.environ.get("XPAR_TEST_SEED")
    seed = int(seed_text, 0) if seed_text else time.time_ns() % 1000000000000
    print(f"[xpar-test] test_dlopen.py: seed {seed} (rerun with XPAR_TEST_SEED={seed})")
    for name in [k for k in os.environ if k.startswith("XPAR_") and not k.startswith("XPAR_TEST_")]:
        del os.environ[name]  # before loading: the library reads them at context creation
    rng = random.Random(seed)

    lib = load(sys.argv[1])
    ctx = ctypes.c_void_p()
    st = lib.xpar_context_create(ctypes.byref(ctx))
    check(st == 0, f"xpar_context_create: {lib.xpar_status_name(st)}: "
                   f"{lib.xpar_last_error_detail()}")

    for n in (1, 128, 1000, 100003):
        values = [rng.randint(-2**31, 2**31 - 1) for _ in range(n)]
        name, got, intact = reduce_int32(lib, ctx, values)
        check(name == "OK", f"seed {seed}: reduce n = {n}: {name}: {lib.xpar_last_error_detail()}")
        check(got == to_int32(sum(values)),
              f"seed {seed}: reduce n = {n}: expected {to_int32(sum(values))}, got {got}")
        check(intact, f"seed {seed}: reduce n = {n} wrote next to its result or changed its input")
        check(lib.xpar_last_error_detail() == b"", "detail not empty after a successful call")

    # A refused call on another thread: its detail stays on that thread.
    seen = {}

    def refuse():
        seen["before"] = lib.xpar_last_error_detail()
        seen["status"], seen["result"], seen["intact"] = reduce_int32(lib, None, [1, 2, 3])
        seen["detail"] = lib.xpar_last_error_detail()

    worker = threading.Thread(target=refuse)
    worker.start()
    worker.join()
    check(seen["before"] == b"", f"a new thread's detail is {seen['before']!r}, expected b''")
    check(seen["status"] == "ERR_NULL_CONTEXT", f"NULL context gave {seen['status']}")
    check(b"context is NULL" in seen["detail"], f"thread's detail {seen['detail']!r}")
    check(seen["result"] == to_int32(POISON) and seen["intact"], "a refused call wrote its result")
    check(lib.xpar_last_error_detail() == b"",
          f"the other thread's failure shows here: {lib.xpar_last_error_detail()!r}")

    # The main thread's own failure, not touched by another thread's.
    name, _, _ = reduce_int32(lib, ctx, [], n=8)  # NULL input
    check(name == "ERR_NULL_POINTER", f"NULL input gave {name}")
    mine = lib.xpar_last_error_detail()
    check(mine and b"context is NULL" not in mine, f"main thread's detail {mine!r}")
    worker = threading.Thread(target=refuse)
    worker.start()
    worker.join()
    check(lib.xpar_last_error_detail() == mine, "another thread's failure replaced this one's")
    check(lib.xpar_context_destroy(ctx) == 0, "xpar_context_destroy failed")
    print("test_dlopen.py: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
