"""xpar beside CuPy, PyTorch, NumPy and cuda.compute (cuda-cccl): sum, cumsum,
dot and sort on float32 at several sizes, on device arrays (CuPy, PyTorch CUDA)
and on host arrays (NumPy, PyTorch CPU).  For each implementation, op and
size: the first call's time and the median of the calls after it.

Every call returns what a Python user gets: reductions and dot a host
scalar (read back), cumsum and sort a new array of the input's framework; device work
is synchronized before the clock stops.  xpar runs in AUTO and with the
backend forced to cuda, each cell on a fresh Context (the first call then
includes the context's first GPU work and the classification of the
array's pointer).  A framework's first call is its first of that op at that
size in this process (the smallest size: its first ever, JIT compilation
included where the framework compiles).  Frameworks that are not importable
are left out and said so.

Usage: python3 python/bench/side_by_side.py [--log2 10,20,28] [--json out.json]
       [--budget seconds per cell] [--min-calls 3] [--host-max-log2 28]
       [--host-sort-max-log2 24] (a host sort of 2^28 floats takes NumPy ~30 s)
"""
import argparse
import json
import statistics
import sys
import time

import numpy as np

import xpar

OPS = ["sum", "cumsum", "dot", "sort"]


def now():
    return time.perf_counter()


class Impl:
    """One implementation on one kind of array: make its arrays and run op."""

    def __init__(self, name, where, make, sync, run, tier_of=None):
        self.name, self.where, self.make, self.sync, self.run = name, where, make, sync, run
        self.tier_of = tier_of  # for xpar: the context whose last decision to read


def time_cell(impl, op, x, y, reps, budget, min_calls=3):
    """(first call seconds, median seconds, calls timed, tier)."""
    impl.sync()
    t0 = now()
    impl.run(op, x, y)
    impl.sync()
    first = now() - t0
    times = []
    spent = 0.0
    while len(times) < reps and (len(times) < min_calls or spent < budget):
        t0 = now()
        impl.run(op, x, y)
        impl.sync()
        dt = now() - t0
        times.append(dt)
        spent += dt
    tier = impl.tier_of() if impl.tier_of else ""
    return first, statistics.median(times), len(times), tier


def xpar_impls(where, modes=("auto", "cuda")):
    """xpar on a fresh Context per cell (made by .fresh())."""
    out = []
    for mode in modes:
        holder = {}

        def run(op, x, y, holder=holder):
            ctx = holder["ctx"]
            if op == "sum":
                return ctx.sum(x)
            if op == "cumsum":
                return ctx.cumsum(x)
            if op == "sort":
                return ctx.sort(x)
            return ctx.dot(x, y)

        impl = Impl(f"xpar {mode}", where, None, None, run,
                    tier_of=lambda holder=holder: holder["ctx"].last_decision.tier)
        impl.mode = mode
        impl.holder = holder
        out.append(impl)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--log2", default="10,20,28")
    ap.add_argument("--json", default=None)
    ap.add_argument("--budget", type=float, default=1.0,
                    help="seconds of steady calls per cell (at least --min-calls calls)")
    ap.add_argument("--min-calls", type=int, default=3,
                    help="steady calls timed at least, whatever the budget")
    ap.add_argument("--host-max-log2", type=int, default=28)
    ap.add_argument("--host-sort-max-log2", type=int, default=24)
    args = ap.parse_args()
    sizes = [1 << int(s) for s in args.log2.split(",")]

    info = xpar.device_query()
    notes = [f"xpar device: {info.name or info.reason}; usable: {info.usable}"]

    cp = torch = cc = None
    try:
        import cupy as cp
        cp.cuda.runtime.getDeviceCount()
    except Exception as e:  # noqa: BLE001
        notes.append(f"CuPy not measured: {e!r}")
        cp = None
    try:
        import torch
        if not torch.cuda.is_available():
            notes.append("PyTorch sees no GPU: its CUDA rows are left out")
    except Exception as e:  # noqa: BLE001
        notes.append(f"PyTorch not measured: {e!r}")
        torch = None
    torch_cuda = torch is not None and torch.cuda.is_available()
    if cp is not None:
        try:
            import cuda.compute as cc
            from cuda.compute import OpKind
        except Exception as e:  # noqa: BLE001
            notes.append(f"cuda.compute not measured: {e!r}")
            cc = None
    else:
        notes.append("cuda.compute not measured: it is run on CuPy arrays")
    if torch_cuda:
        notes.append(f"PyTorch {torch.__version__}, GPU {torch.cuda.get_device_name(0)}")
    if cp is not None:
        notes.append(f"CuPy {cp.__version__}")
    if cc is not None:
        import cuda.cccl
        notes.append(f"cuda.compute from cuda-cccl {getattr(cuda.cccl, '__version__', '?')}")
    notes.append(f"NumPy {np.__version__}; xpar {xpar.__version__}")

    def nosync():
        pass

    def cp_sync():
        cp.cuda.Device().synchronize()

    def torch_sync():
        torch.cuda.synchronize()

    impls = []  # (impl, array kind)
    if cp is not None:
        for im in xpar_impls("cupy"):
            im.make, im.sync = (lambda h: cp.asarray(h)), cp_sync
            impls.append(im)

        def cp_run(op, x, y):
            if op == "sum":
                return float(x.sum())
            if op == "cumsum":
                return cp.cumsum(x)
            if op == "sort":
                return cp.sort(x)
            return float(cp.dot(x, y))
        impls.append(Impl("cupy", "cupy", lambda h: cp.asarray(h), cp_sync, cp_run))
    if torch_cuda:
        for im in xpar_impls("torch-cuda"):
            im.make, im.sync = (lambda h: torch.from_numpy(h).cuda()), torch_sync
            impls.append(im)

        def t_run(op, x, y):
            if op == "sum":
                return x.sum().item()
            if op == "cumsum":
                return torch.cumsum(x, 0)
            if op == "sort":
                return torch.sort(x, stable=True).values
            return torch.dot(x, y).item()
        impls.append(Impl("torch", "torch-cuda", lambda h: torch.from_numpy(h).cuda(),
                          torch_sync, t_run))
    if cc is not None:
        f32 = np.float32

        def cc_run(op, x, y):
            if op == "sum":
                d_out = cp.empty(1, dtype=f32)
                cc.reduce_into(d_in=x, d_out=d_out, num_items=x.size, op=OpKind.PLUS,
                               h_init=np.zeros(1, dtype=f32))
                return float(d_out.get()[0])
            if op == "cumsum":
                out = cp.empty_like(x)
                cc.inclusive_scan(d_in=x, d_out=out, op=OpKind.PLUS,
                                  init_value=np.zeros(1, dtype=f32), num_items=x.size)
                return out
            if op == "sort":
                out = cp.empty_like(x)
                cc.radix_sort(d_in_keys=x, d_out_keys=out, num_items=x.size,
                              order=cc.SortOrder.ASCENDING)
                return out
            # dot: no fused transform-reduce without a JIT'd Python operator
            # (numba-cuda-mlir): a product array, then its sum.
            prod = cp.empty_like(x)
            cc.binary_transform(d_in1=x, d_in2=y, d_out=prod, op=OpKind.MULTIPLIES,
                                num_items=x.size)
            d_out = cp.empty(1, dtype=f32)
            cc.reduce_into(d_in=prod, d_out=d_out, num_items=x.size, op=OpKind.PLUS,
                           h_init=np.zeros(1, dtype=f32))
            return float(d_out.get()[0])
        impls.append(Impl("cuda.compute", "cupy", lambda h: cp.asarray(h), cp_sync, cc_run))

    # host arrays
    for im in xpar_impls("numpy"):
        im.make, im.sync = (lambda h: h), nosync
        impls.append(im)

    def np_run(op, x, y):
        if op == "sum":
            return float(x.sum())
        if op == "cumsum":
            return np.cumsum(x)
        if op == "sort":
            return np.sort(x, kind="stable")
        return float(np.dot(x, y))
    impls.append(Impl("numpy", "numpy", lambda h: h, nosync, np_run))
    if cp is not None:
        def cp_host_run(op, x, y):  # the GPU through CuPy, the copies included
            if op == "sum":
                return float(cp.asarray(x).sum())
            if op == "cumsum":
                return cp.asnumpy(cp.cumsum(cp.asarray(x)))
            if op == "sort":
                return cp.asnumpy(cp.sort(cp.asarray(x)))
            return float(cp.dot(cp.asarray(x), cp.asarray(y)))
        impls.append(Impl("cupy (copy in/out)", "numpy", lambda h: h, cp_sync, cp_host_run))
    if torch is not None:
        for im in xpar_impls("torch-cpu", modes=("auto",)):
            im.make, im.sync = (lambda h: torch.from_numpy(h)), nosync
            impls.append(im)

        def tc_run(op, x, y):
            if op == "sum":
                return x.sum().item()
            if op == "cumsum":
                return torch.cumsum(x, 0)
            if op == "sort":
                return torch.sort(x, stable=True).values
            return torch.dot(x, y).item()
        impls.append(Impl("torch cpu", "torch-cpu", lambda h: torch.from_numpy(h), nosync,
                          tc_run))
    if torch is not None:
        notes.append(f"torch CPU threads: {torch.get_num_threads()}")

    rng = np.random.default_rng(1)
    rows = []
    for n in sizes:
        xh = rng.random(n, dtype=np.float32) - np.float32(0.5)
        yh = rng.random(n, dtype=np.float32) - np.float32(0.5)
        reps = 200 if n <= 1 << 12 else 50 if n <= 1 << 22 else 20
        for op in OPS:
            for im in impls:
                host = im.where in ("numpy", "torch-cpu")
                if host and n > 1 << args.host_max_log2:
                    continue
                if host and op == "sort" and n > 1 << args.host_sort_max_log2:
                    continue
                try:
                    x, y = im.make(xh), im.make(yh)
                    if im.name.startswith("xpar"):
                        im.holder["ctx"] = xpar.Context(backend=im.mode)
                    first, med, k, tier = time_cell(im, op, x, y, reps, args.budget,
                                                       args.min_calls)
                    err = ""
                except Exception as e:  # noqa: BLE001
                    first = med = float("nan")
                    k, tier, err = 0, "", f"{type(e).__name__}: {e}"[:200]
                finally:
                    if im.name.startswith("xpar") and "ctx" in im.holder:
                        im.holder.pop("ctx").close()
                row = dict(n=n, log2=n.bit_length() - 1, op=op, arrays=im.where, impl=im.name,
                           first_us=first * 1e6, median_us=med * 1e6, calls=k, tier=tier,
                           error=err)
                rows.append(row)
                print(f"2^{row['log2']:<2} {op:6s} {im.where:10s} {im.name:20s} "
                      f"first {row['first_us']:12.1f} us  median {row['median_us']:12.1f} us"
                      f"  ({k} calls) {tier} {err}", flush=True)
                del x, y
            if cp is not None:
                cp.get_default_memory_pool().free_all_blocks()
            if torch_cuda:
                torch.cuda.empty_cache()

    print()
    for line in notes:
        print("# " + line)
    print()
    print("| arrays | op | implementation | " +
          " | ".join(f"2^{s.bit_length() - 1} first / median (us)" for s in sizes) + " |")
    print("|---|---|---|" + "---|" * len(sizes))
    keys = []
    for r in rows:
        k = (r["arrays"], r["op"], r["impl"])
        if k not in keys:
            keys.append(k)
    for k in keys:
        cells = []
        for s in sizes:
            r = next((r for r in rows if (r["arrays"], r["op"], r["impl"]) == k and r["n"] == s),
                     None)
            if r is None:
                cells.append("-")
            elif r["error"]:
                cells.append("error")
            else:
                t = f" ({r['tier']})" if r["tier"] else ""
                cells.append(f"{r['first_us']:.0f} / {r['median_us']:.1f}{t}")
        print(f"| {k[0]} | {k[1]} | {k[2]} | " + " | ".join(cells) + " |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(notes=notes, rows=rows), f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
