"""What a Python call costs: xpar.sum on 128 float32 from Python, against the
same xpar_reduce called in a loop from C (the library's own cost) and
numpy.sum.  Usage: python3 python/bench/overhead.py [n] [reps]"""
import sys
import timeit

import numpy as np

import xpar


def per_call(fn, reps):
    best = min(timeit.repeat(fn, number=reps, repeat=7))
    return best / reps


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 128
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
    x = np.random.default_rng(1).uniform(-1, 1, n).astype(np.float32)
    ctx = xpar.Context()
    ctx.sum(x)  # warm: the first call classifies the pages and decides
    c_cost = min(ctx._c_loop_reduce(x, reps) for _ in range(7))
    rows = [
        ("xpar_reduce from C (the library's cost)", c_cost),
        ("ctx.sum(x)", per_call(lambda: ctx.sum(x), reps)),
        ("xpar.sum(x)  (thread's default context)", per_call(lambda: xpar.sum(x), reps)),
        ("ctx._reduce(0, x, False)  (the extension alone)", per_call(lambda: ctx._reduce(0, x, False), reps)),
        ("numpy.sum(x)", per_call(lambda: np.sum(x), reps)),
        ("x.sum()", per_call(lambda: x.sum(), reps)),
    ]
    d = ctx.last_decision
    print(f"n = {n} float32, tier {d.tier}; best of 7 x {reps} calls")
    for name, t in rows:
        print(f"  {name:50s} {t * 1e9:8.0f} ns")
    print(f"  Python layer over C: {(rows[1][1] - c_cost) * 1e9:.0f} ns per call")


if __name__ == "__main__":
    main()
