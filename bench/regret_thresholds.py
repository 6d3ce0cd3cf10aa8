#!/usr/bin/env python3
"""Thresholds chosen against several regret runs at once.

Usage: bench/regret_thresholds.py [--table dispatch/thresholds.c] RUN1/regret.csv RUN2/regret.csv [...]

`xpar-bench calibrate` picks each threshold from one sweep on one machine;
where two tiers cross within a few percent, the power of two it picks moves
from run to run and from machine to machine by more than the regret bench's
10 % per-point target (docs/performance.md, "Crossovers and thresholds").  The regret runs time
every forced tier (serial, OpenMP, CUDA) at every point whatever AUTO's
thresholds were, so several of them, on fresh machines of one kind, show the
spread directly.  This tool asks, per op x dtype row x GPU threshold: which value
would have done best over ALL the runs given -- the fewest (run, point) pairs
where what the table picks is over 1.10x the best alternative and 0.3 us behind
it (the target of bench_regret.c), then the smallest sum of ln(time / best)
(the geometric mean's share).  What a table picks at n, per residency
(GPU_DEVICE_DATA: mapped arrays; GPU_PINNED_DATA, GPU_PAGEABLE_DATA; GPU_DEVICE_
ONLY_DATA: device arrays, the CPU side with its copies):

  n >= the GPU threshold      the forced CUDA tier's time
  n >= the OPENMP threshold   the forced OpenMP tier's
  below both                  the one-thread tier's (the regret bench's
                              one-thread alternative: XPAR_BACKEND_CPU
                              with the OpenMP threshold at never); in runs
                              without it, AUTO's own time where it ran that
                              tier, else the forced serial tier's (an upper
                              bound: that tier keeps the documented serial
                              order, where the one-thread tier runs the
                              reassociated kernels for reduce, dot and the
                              float scans)

The OPENMP threshold is chosen too (first, with the table's GPU values) where
every point of the row has the one-thread alternative in every run; otherwise
`xpar-bench calibrate` stays its only source.  Candidates are the powers of
two of the runs' range and "never"; a tie keeps the table's value, and a
value below the runs' smallest N counts as that N.  Printed: per row and threshold
the table's value and the chosen one with (misses, sum ln) for both, marked
'*' where they differ; the table is read from dispatch/thresholds.c (the int32
row serves 4-byte types, double the 8-byte ones).

The chosen values fit these runs: judge them on a run not given here.
"""
import math
import re
import signal
import sys

import regret_floor  # the runs' loader and the per-point target, shared (same folder)
KINDS = ("OPENMP", "GPU_DEVICE_DATA", "GPU_PINNED_DATA", "GPU_PAGEABLE_DATA",
         "GPU_DEVICE_ONLY_DATA")
GPU_KIND_OF = {"mapped": 1, "pinned": 2, "pageable": 3, "device": 4}
NEVER = None
ROWS = {"int32": "default_int4", "float": "default_float", "double": "default_8byte"}
OPS = ("reduce", "scan", "axpy", "add", "fill", "dot")


def read_table(path):
    """{(op, dtype): [5 values, None for never]} from thresholds.c's tables."""
    text = open(path).read()
    table = {}
    for dtype, name in ROWS.items():
        body = text[text.index(name):]
        body = body[:body.index("};")]
        for m in re.finditer(r"\[XPAR_OP_(\w+)\]\s*=\s*\{(.*)\},", body):
            vals = re.findall(r"\{(POW2\((\d+)\)|NEVER), \w\}", m.group(2))
            table[(m.group(1).lower(), dtype)] = [
                None if v[0] == "NEVER" else 1 << int(v[1]) for v in vals]
    return table


def load(paths):
    """regret_floor.load's medians, AUTO's time kept as "auto-one-thread" too
    where it ran the one-thread tier (its cpu-serial)."""
    med, ran = regret_floor.load(paths)
    for k, runs in ran.items():
        for i, tier in runs.items():
            if tier in ("one-thread", "serial"):
                med[k][i]["auto-one-thread"] = med[k][i]["auto"]
    return med


def time_at(d, n, omp, gpu):
    """The time of what thresholds omp and gpu pick at n, None if not measured."""
    if gpu is not None and n >= gpu:
        return d.get("cuda")
    if omp is not None and n >= omp:
        return d.get("openmp")
    for alt in ("one-thread", "auto-one-thread", "serial"):
        if alt in d:
            return d[alt]
    return None


def cost(points, med, nruns, omp, gpu):
    """(misses, sum ln(time / best)) of what omp and gpu pick, over all runs; a
    choice whose tier was not measured at a point (no GPU, a failed alternative)
    cannot be judged and costs (inf, inf)."""
    misses, lsum = 0, 0.0
    for k in points:
        for i in range(nruns):
            d = med[k].get(i)
            if not d:
                continue
            t = time_at(d, 1 << k[3], omp, gpu)
            if t is None:
                return math.inf, math.inf
            best = min(v for a, v in d.items() if a not in ("auto", "auto-one-thread"))
            misses += regret_floor.misses(t, best)
            lsum += math.log(t / best)
    return misses, lsum


def fmt(v):
    return "never" if v is None else f"2^{v.bit_length() - 1}"


def main(argv):
    table_path = "dispatch/thresholds.c"
    if len(argv) >= 2 and argv[0] == "--table":
        table_path, argv = argv[1], argv[2:]
    if not argv:
        sys.exit(__doc__)
    table = read_table(table_path)
    med = load(argv)
    nruns = len(argv)
    exps = sorted({k[3] for k in med})
    candidates = [1 << e for e in range(exps[0], exps[-1] + 1)] + [None]

    def clamp(v):  # a value below the runs' range acts as the smallest N
        return v if v is None or v >= (1 << exps[0]) else 1 << exps[0]

    print(f"# {nruns} runs, {len(med)} points; per value: (misses over all runs, sum ln(tier/best))")
    moved = 0

    def choose(op, dtype, kind, table_value, cost_of):
        """The candidate of fewest misses, then smallest sum ln (the table's value
        on a tie), printed beside the table's; returns it."""
        nonlocal moved
        cur = cost_of(table_value)
        v, new = table_value, cur
        for c in candidates:
            sc = cost_of(c)
            if (sc[0], round(sc[1], 9)) < (new[0], round(new[1], 9)):
                v, new = c, sc
        star = "*" if v != table_value else " "
        moved += star == "*"
        print(f"{star} {op:6} {dtype:6} {KINDS[kind]:20} table {fmt(table[(op, dtype)][kind]):>6} "
              f"({cur[0]:3}, {cur[1]:7.3f})   chosen {fmt(v):>6} ({new[0]:3}, {new[1]:7.3f})")
        return v

    for (op, dtype), vals in sorted(table.items(), key=lambda x: (OPS.index(x[0][0]), x[0][1])):
        pts = {res: [k for k in med if k[:3] == (op, dtype, res)] for res in GPU_KIND_OF}
        if not any(pts.values()):
            continue
        omp = clamp(vals[0])
        everywhere = [k for res in GPU_KIND_OF for k in pts[res]]
        if all("one-thread" in med[k].get(i, {}) for k in everywhere for i in range(nruns)):
            def cost_omp(c):  # every residency's points, with the table's GPU values
                return tuple(map(sum, zip(*(cost(pts[res], med, nruns, c, clamp(vals[kind]))
                                            for res, kind in GPU_KIND_OF.items() if pts[res]))))
            omp = choose(op, dtype, 0, omp, cost_omp)
        for res, kind in sorted(GPU_KIND_OF.items(), key=lambda x: x[1]):
            if pts[res]:
                choose(op, dtype, kind, clamp(vals[kind]),
                       lambda c, res=res: cost(pts[res], med, nruns, omp, c))
    print(f"# {moved} values differ from the table")


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    main(sys.argv[1:])
