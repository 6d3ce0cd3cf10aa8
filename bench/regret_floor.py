#!/usr/bin/env python3
"""The floor under `xpar-devbench regret`'s per-point target, from several runs.

Usage: bench/regret_floor.py RUN1/regret.csv RUN2/regret.csv [...]
       (each the CSV that `xpar-devbench regret --out-dir RUN` writes; runs of the
       same points, e.g. the same command on fresh machines of one kind)

A point meets the target when AUTO's median is <= 1.10x the best
alternative's, or within 0.3 us of it (bench_regret.c).  AUTO picks one of
xpar's tiers (one-thread, openmp, cuda) by a threshold; the best any fixed
choice can do at a point is the tier whose worst ratio over the runs is the
lowest (the "static oracle": a threshold set chosen afterwards, knowing every
run, with no cost of its own).  Printed:

  - per run: how many points the static oracle misses (what no fixed
    threshold can avoid on those runs), and AUTO's misses split three ways:
    the oracle misses it too; AUTO ran the oracle's tier and its own median
    came out over the forced tier's (the spread between two alternatives'
    medians of the same code); AUTO ran another tier (a threshold the runs
    disagree with);
  - the points where no fixed tier meets the target in every run, with each
    run's tier medians.

Points missing from any run, or where a tier failed, are left out of that
tier's comparison.  Only the CSV columns op, dtype, residency, exp, alt,
status, median_us and auto_ran are read.
"""
import collections
import csv
import signal
import sys

# xpar's tiers as alternatives; "one-thread" is the tier AUTO runs below the OpenMP
# threshold (runs made before the bench had it only have the strict-order serial tier).
TIERS = ("serial", "one-thread", "openmp", "cuda")
RAN_TIER = {"cpu-serial": "one-thread", "cpu-openmp": "openmp", "cuda": "cuda"}
OTHERS = ("serial", "one-thread", "openmp", "cuda", "plain-serial", "plain-omp", "cub")
TARGET_RATIO, TARGET_ABS_US = 1.10, 0.3


def misses(t, best):
    return t / best > TARGET_RATIO and t - best > TARGET_ABS_US


def ratio(t, best):
    """The target's measure: 1.0 within 0.3 us of the best, else t / best."""
    return 1.0 if t - best <= TARGET_ABS_US else t / best


def load(paths):
    med = collections.defaultdict(dict)  # point -> run -> {alt: median_us}
    ran = collections.defaultdict(dict)  # point -> run -> AUTO's tier
    for i, path in enumerate(paths):
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                if row["status"] != "ok":
                    continue
                k = (row["op"], row["dtype"], row["residency"], int(row["exp"]))
                med[k].setdefault(i, {})[row["alt"]] = float(row["median_us"])
                if row["alt"] == "auto":
                    ran[k][i] = RAN_TIER.get(row["auto_ran"], row["auto_ran"])
    for k, runs in ran.items():  # runs without the one-thread alternative
        for i, t in runs.items():
            if t == "one-thread" and "one-thread" not in med[k].get(i, {}):
                runs[i] = "serial"
    return med, ran


def main(paths):
    if len(paths) < 2:
        sys.exit(__doc__)
    med, ran = load(paths)
    runs = range(len(paths))
    points = [k for k in sorted(med) if len(med[k]) == len(paths)
              and all("auto" in med[k][i] for i in runs)]
    oracle_miss = [0] * len(paths)
    auto_miss = [[0, 0, 0] for _ in paths]  # oracle too / same tier / other tier
    unreachable = []
    for k in points:
        d = med[k]
        best = {i: min(d[i][a] for a in OTHERS if a in d[i]) for i in runs}
        worst = sorted((max(ratio(d[i][t], best[i]) for i in runs), t)
                       for t in TIERS if all(t in d[i] for i in runs))
        if not worst:
            continue
        oracle = worst[0][1]
        if worst[0][0] > TARGET_RATIO:
            unreachable.append((k, worst[0], d))
        for i in runs:
            om = misses(d[i][oracle], best[i])
            oracle_miss[i] += om
            if misses(d[i]["auto"], best[i]):
                auto_miss[i][0 if om else 1 if ran[k].get(i) == oracle else 2] += 1
    print(f"# {len(points)} points in all {len(paths)} runs; target <= {TARGET_RATIO}x "
          f"the best alternative or within {TARGET_ABS_US} us")
    print("run  static-oracle-misses  auto-misses  (oracle misses too / AUTO ran the oracle's "
          "tier / AUTO ran another tier)  file")
    for i in runs:
        a = auto_miss[i]
        print(f"{i:>3}  {oracle_miss[i]:>20}  {sum(a):>11}  ({a[0]} / {a[1]} / {a[2]})  "
              f"{paths[i]}")
    print(f"# {len(unreachable)} points where no fixed tier meets the target in every run:")
    for k, (w, t), d in unreachable:
        meds = " | ".join(" ".join(f"{x}={d[i][x]:.2f}" for x in TIERS if x in d[i])
                          for i in runs)
        print(f"{' '.join(map(str, k[:3]))} 2^{k[3]}: best fixed {t}, worst {w:.3f}x;  {meds}")


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # piped into head: stop quietly
    main(sys.argv[1:])
