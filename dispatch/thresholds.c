/*
 * Built-in crossover thresholds: data, not code.  A calibration profile
 * (xpar-bench calibrate) overrides them, the environment overrides both, and
 * xpar_context_set_threshold() overrides everything for one context.
 *
 * Source (kept as data beside every value -- calibrate_h100_median5,
 * calibrate_h100_s12_clones, calibrate_h100_s13_three_machines and
 * calibrate_h100_s13_aligned below -- and quoted by decision records): each
 * value is the median of five runs of
 * `xpar-bench calibrate --dtypes int32,float,double` (every op) on the lent
 * H100 machine (H100 80GB HBM3, 16-core Intel Xeon host), 2026-11-25.  The
 * first record's runs, each on a fresh machine of that kind:
 *   bench/results/h100-2026-11-25-regret2/calibrate.txt        (issue 12, call 1)
 *   bench/results/h100-2026-11-25-regret2/run3/calibrate.txt   (call 3)
 *   bench/results/h100-2026-11-25-s8/calibrate.txt             (session 8, call 1)
 *   bench/results/h100-2026-11-25-s8/call4/calibrate.txt       (call 4)
 *   bench/results/h100-2026-11-25-s8/call5/calibrate.txt       (call 5)
 * Why a median: one calibration picks, per threshold, the power of two that
 * minimises AUTO's worst ratio over its own sweep, and at a crossing the two
 * sides differ by a few percent -- less than the spread of one host from one
 * minute to the next (a one-thread reduce of 2^15 doubles took 4.4 us in
 * one regret run and 7.1 us in the next).  Of the 90 values measured (6 ops
 * x 3 dtypes x 5 kinds) the five runs agreed on 59, were one power of two
 * apart on 23 and two on 3; the other 5 held one stalled measurement (e.g.
 * dot int32 openmp 2^5 once, 2^14..2^15 otherwise; pinned reduce double
 * "never" four times, 2^19 once), which a median ignores.  Call 1 alone, the
 * earlier source, differed from the median on 9, and the regret runs missed
 * at such values (e.g. reduce int32 on mapped data at 2^20: CUDA 11.8 us,
 * the OpenMP tier 24.2 us, with call 1's 2^21).
 * The 18 values the CPU loops' SIMD clones (session 11) moved come from five
 * runs on one machine of that tree (calibrate_h100_s12_clones below; the
 * five runs' medians equal the other 72); six (four of those 18 among them)
 * from a third machine's five runs against the two before it
 * (calibrate_h100_s13_three_machines), and dot int32's after the integer
 * loops' alignment (calibrate_h100_s13_aligned).  The int32 row serves
 * uint32 as well (below).
 * The regret runs of sessions 8 and 12 (bench/NOTES.md) are these values'
 * check.  Every build measured had what the thresholds price: the constant
 * OpenMP team, the SIMD integer scans, pinned host staging for device-only
 * data on the CPU, pinned operands classified by one driver look-up; the
 * second record's runs also the elementwise split (session 10) and the SIMD
 * clones.
 *
 * One row per kind of dtype, each from its own measurement: 4-byte integers
 * (int32, uint32) from int32, float from float, 8-byte types (int64, uint64,
 * double) from double (8-byte integers were not measured; they move the
 * bytes of a double, and their scans use the SIMD kernel of int32, so the
 * double row is if anything late for them).  Reading the calibrations:
 *  - OPENMP: where one parallel region pays against the vectorised one-thread
 *    kernels: 2^14..2^17.  The scans: int32 and float 2^15, double 2^14 (the
 *    float and double scans regrouped in session 12, 1.6-2.2x faster on one
 *    thread, calibrated again in session 13).
 *  - GPU_DEVICE_DATA (mapped arrays valid on both sides, no transfer):
 *    reduce 2^21 (int32 and float), 2^20 (double); scan 2^19 (int32), 2^18
 *    (float), 2^17 (double); elementwise and dot 2^18..2^20 (three of these from
 *    six regret runs, regret_h100_s17_six_runs below; two from the run after
 *    the done signal, regret_h100_s19_done_signal; one from nine runs,
 *    regret_h100_s20_nine_runs).
 *  - GPU_PINNED_DATA and GPU_PAGEABLE_DATA: never, for every op and dtype:
 *    the copies over PCIe cost more than the CPU's pass through memory (e.g.
 *    scan int32 at 2^22: CPU 184 us, GPU from pinned memory 659 us).
 *  - GPU_DEVICE_ONLY_DATA (issue 12, item 5): below it, a synchronous call on
 *    data valid only on the device is copied to (pinned) host memory, run on
 *    the CPU and copied back; measured as copies + CPU against launch + sync.
 *    Reduce: 2^13 (4-byte), 2^12 (double); fill 2^12 (int32 and float), 2^11
 *    (double), from the regret runs; scans, axpy, add
 *    and dot: 2^4, the smallest size measured (an output copied back to the
 *    device costs a second synchronous copy: the GPU is faster from 16
 *    elements).
 *
 * Earlier values came from the runs of 2026-11-22 (bench/results/h100-2026-
 * 11-22/calibrate.txt) and 2026-11-25 (h100-2026-11-25-regret, reduce and
 * scan only, before pinned staging and the driver look-up; then regret2's
 * call 1 alone); add's 8-byte OpenMP threshold from five runs after the
 * elementwise split (h100-2026-11-25-s10/call2/, 2^14, now 2^15).
 */
#include <stdio.h>

#include "state.h"

#define POW2(x) ((size_t)1 << (x))
#define NEVER XPAR_NEVER

/* Where the values below were measured: data, quoted by decision records
 * (xpar__decision_format) beside every default they cite.  A value measured
 * by another run gets a record of its own. */
static const xpar__provenance calibrate_h100_median5 = {
    .machine = "H100 80GB HBM3, 16-core host",
    .date = "2026-11-25",
    .run = "median of five xpar-bench calibrate --dtypes int32,float,double runs, "
           "bench/results/h100-2026-11-25-regret2/{,run3/}calibrate.txt and "
           "h100-2026-11-25-s8/{,call4/,call5/}calibrate.txt (issue 12)",
    .brief = "bench/results/h100-2026-11-25-s8"};
#define M &calibrate_h100_median5
/* The values the CPU loops' SIMD clones moved (session 11: AVX2 / SSE4.2
 * builds of the one-thread and per-thread kernels, picked at load time): five
 * calibrations on one machine of that tree, bench/results/h100-2026-11-25-
 * s12/call1/.  Of the 90 values 18 medians moved, each by one power of two
 * but two: every OpenMP threshold of reduce, axpy and add, scan int32's and
 * dot float's one step up (one thread now wins further; 5 of 5 runs for the
 * elementwise ones); the GPU thresholds for mapped data of reduce int32 /
 * float, axpy int32 / double, add int32 and dot int32 one or two steps up
 * (the CPU side of the crossing got faster), dot double's one down.  The
 * regret run of that tree with the values before (call2/) had 25 of its 41
 * misses where the new values decide otherwise (the OpenMP tier at 2^14..2^15
 * where one thread was faster; CUDA on mapped data at 2^18..2^19 where the
 * OpenMP tier was).  The values the five runs confirmed keep their record. */
static const xpar__provenance calibrate_h100_s12_clones = {
    .machine = "H100 80GB HBM3, 16-core host",
    .date = "2026-11-25",
    .run = "median of five xpar-bench calibrate --dtypes int32,float,double runs on one "
           "machine with the SIMD-clone CPU loops, "
           "bench/results/h100-2026-11-25-s12/call1/cal.tar.gz (issue 12)",
    .brief = "bench/results/h100-2026-11-25-s12"};
#define C &calibrate_h100_s12_clones
/* Where the machines of sessions 12 and 13 disagreed (bench/results/h100-2026-11-25-s13/
 * call1/: five calibrations of the tree with the mapped fast path and the regrouped float /
 * double scans on one fresh machine): the median of three estimates, that machine's
 * median, session 12's and the five-machine record's -- scan int32 and dot float OpenMP
 * 2^16 -> 2^15 (5 of 5 runs; 2^15 in the first record), axpy int32 on mapped data 2^20 ->
 * 2^19 (estimates 2^18 / 2^20 / 2^19), dot double on mapped data 2^18 -> 2^19 (5 of 5;
 * 2^19 in the first record).  The float scan, regrouped after every earlier run, from
 * this machine's five alone: OpenMP 2^14 -> 2^15, mapped data 2^17 -> 2^19 (5 of 5 each:
 * one thread and the CPU side of the crossing now faster); the double scan's values held
 * (2^14 and 2^17, 5 of 5).  The other 8 medians that differed on this machine (GPU on
 * mapped data one or two steps up or down: reduce int32 / float, scan int32, fill int32,
 * axpy / add / dot float, reduce double) are where the crossing moves with the machine;
 * they keep the median of the earlier records. */
static const xpar__provenance calibrate_h100_s13_three_machines = {
    .machine = "H100 80GB HBM3, 16-core host",
    .date = "2026-11-25",
    .run = "median of three machines' five-run medians of xpar-bench calibrate --dtypes "
           "int32,float,double (h100-2026-11-25-s13/call1/cal.tar.gz, s12/call1/, the first "
           "record); the float scan from s13/call1/ alone (issue 12)",
    .brief = "bench/results/h100-2026-11-25-s13"};
#define S &calibrate_h100_s13_three_machines
/* dot int32's OpenMP threshold after the integer reduce and dot loops began
 * at a 32-byte boundary (backend_cpu/cpu_reduce.c): one thread on arrays
 * aligned to 16 bytes only (malloc's) got the speed it had on aligned ones,
 * and five calibrations of reduce and dot int32 on one machine
 * (bench/results/h100-2026-11-25-s13/call6/) put dot's crossing at 2^16 (5 of
 * 5; 2^15 5 of 5 before, call 1) and kept reduce's at 2^17 (5 of 5).  The
 * regret runs before had dot int32 lose at 2^15 on pinned, page-aligned
 * arrays, where one thread was already that fast (1.16-1.76x, sessions 12-13). */
static const xpar__provenance calibrate_h100_s13_aligned = {
    .machine = "H100 80GB HBM3, 16-core host",
    .date = "2026-11-25",
    .run = "median of five xpar-bench calibrate --ops reduce,dot --dtypes int32 runs with the "
           "aligned integer loops, bench/results/h100-2026-11-25-s13/call6/ (issue 12)",
    .brief = "bench/results/h100-2026-11-25-s13/call6"};
#define A &calibrate_h100_s13_aligned
/* Six GPU thresholds where one calibration's crossing moves between machines by
 * more than the 10 % the regret target allows: chosen against six regret runs at
 * once (bench/regret_thresholds.py: the value with the fewest points over 1.10x
 * the best alternative and 0.3 us behind it, summed over the runs, where the
 * forced tiers' times decide; kept where it saves at least two such points).
 * Over the six runs, misses under the earlier value -> this one: reduce int32 on
 * mapped data 2^21 -> 2^22 (3 -> 1), reduce double mapped 2^19 -> 2^20 (3 -> 1),
 * scan int32 mapped 2^18 -> 2^19 (5 -> 3), axpy float mapped 2^19 -> 2^20
 * (4 -> 0), add int32 mapped 2^20 -> 2^19 (3 -> 0), fill int32 on device-only
 * data 2^13 -> 2^12 (6 -> 1: the CPU path's copy back of 16 KiB written on the
 * host costs what CUDA's whole call does, bench/NOTES.md session 16).  The
 * regret run after the change (session 17) is their check, on points these
 * runs did not include. */
static const xpar__provenance regret_h100_s17_six_runs = {
    .machine = "H100 80GB HBM3, 16-core host",
    .date = "2026-11-26",
    .run = "fewest per-point misses over six xpar-bench regret runs, bench/regret_thresholds.py "
           "over bench/results/2026-11-26-s15/call{2,3,6,7}, s16/call13, s17/call1 (issue 12)",
    .brief = "bench/results/2026-11-26-s17"};
#define R &regret_h100_s17_six_runs
/* After synchronous scans and elementwise calls up to 2^22 began to return on their
 * kernel's done flag, and reduces up to 2^22 on their stamped result (session 19:
 * the CUDA side of a mid-N synchronous call ~1 us, 5-10 %, faster): the regret run of
 * that tree with the values before (bench/results/2026-11-26-s19/call3/) had three
 * misses where CUDA now won below its threshold -- reduce int32 on mapped data at 2^21
 * (the OpenMP tier 13.97 us, CUDA 11.80), scan float mapped 2^18 (16.07 / 14.22), fill
 * float on device-only data 2^12 (the copies and the CPU 10.88, CUDA 9.54) -- and
 * regret_thresholds.py over it moves those and three more GPU thresholds one power of
 * two down, each with a smaller sum of ln(time / best): axpy int32 and float on mapped
 * data (2^19 -> 2^18, 2^20 -> 2^19), fill double on device-only data (2^12 -> 2^11).
 * All six go the way the faster CUDA side predicts; the seventh it proposed (reduce
 * double on device-only data 2^12 -> 2^13, up) does not -- the reduce's small calls
 * did not change -- and stayed.  The check, a run of device and mapped data on another
 * machine (call 4, 576 points): five held (every point at and just below the new
 * values within target); axpy int32 on mapped data at 2^18 missed (CUDA 10.11 us, the
 * OpenMP tier 7.77) and went back to 2^19 -- over both runs its 2^19 has no miss, 2^18
 * one.  Over both runs the tool proposes two more (reduce float mapped 2^21 -> 2^20,
 * one miss saved; add double mapped 2^18 -> 2^19, none): under the two-miss rule of
 * regret_h100_s17_six_runs, not taken. */
static const xpar__provenance regret_h100_s19_done_signal = {
    .machine = "H100 80GB HBM3, 16-core host",
    .date = "2026-11-26",
    .run = "bench/regret_thresholds.py over the xpar-bench regret run of the tree with the "
           "done signal, bench/results/2026-11-26-s19/call3 (issue 12)",
    .brief = "bench/results/2026-11-26-s19"};
#define D &regret_h100_s19_done_signal
/* dot float's OpenMP threshold after the float sums and dots began their lanes at a
 * 64-byte boundary (session 19, backend_cpu/cpu_reduce.c): one thread on malloc'd and
 * mapped arrays got most of the speed it had on page-aligned pinned ones.  A regret
 * subset of that tree (reduce and dot, float and double, 2^12-2^17, pinned / pageable /
 * mapped; bench/results/2026-11-26-s20/call1/) had dot float miss at 2^15 on all three
 * -- one thread 2.45 / 3.23 / 3.24 us, the OpenMP tier 5.09 / 4.77 / 4.63 -- where
 * before only the pinned arrays did (sessions 18 and 19, 2.45 against 5.0); at 2^16 the
 * OpenMP tier wins on malloc'd and mapped arrays (5.13 / 5.05 us against one thread's
 * 6.67 / 6.53) and is within 5 % on pinned ones (5.37 against 4.96).  The other rows of
 * the subset held their values (every point within target). */
static const xpar__provenance regret_h100_s20_rotated_lanes = {
    .machine = "H100 80GB HBM3, 16-core host",
    .date = "2026-11-26",
    .run = "xpar-bench regret --ops reduce,dot --dtypes float,double --min-exp 12 --max-exp 17 "
           "on pinned, pageable and mapped data with the rotated float lanes, "
           "bench/results/2026-11-26-s20/call1/ (issue 12)",
    .brief = "bench/results/2026-11-26-s20/call1"};
#define L &regret_h100_s20_rotated_lanes
/* axpy float on mapped data back from 2^19 (regret_h100_s19_done_signal) to 2^20: the
 * move was fitted on one run; over the four regret runs since the done signal (s19 calls
 * 3-4, s20 calls 2-3, one of them with a calibrated profile) 2^19 and 2^20 miss twice
 * each and 2^20 has the smaller sum of ln(time / best) (4.61 against 4.75); over those
 * and the five runs before it (s15-s18) 2^20 misses 2 times, 2^19 4.  The OpenMP side of
 * this crossing moves with the host: session 20's call 2 ran it at 2^19-2^21 in 0.6-0.7x
 * the time of the machines before (bench/NOTES.md, session 20). */
static const xpar__provenance regret_h100_s20_nine_runs = {
    .machine = "H100 80GB HBM3, 16-core host",
    .date = "2026-11-26",
    .run = "bench/regret_thresholds.py over nine xpar-bench regret runs, "
           "bench/results/2026-11-26-s15/call{2,6}, s16/call13, s17/call1, s18/call1, "
           "s19/call{3,4}, s20/call{2,3} (issue 12)",
    .brief = "bench/results/2026-11-26-s20"};
#define N &regret_h100_s20_nine_runs
/* The 4-byte integer scan's OpenMP threshold 2^15 -> 2^16: the serial side became a
 * vectorised in-register prefix sum (issue 12.3) after the calibrations of
 * calibrate_h100_s13_three_machines, and the two regret runs since with the one-thread
 * alternative at every point both missed at 2^15 -- scan int32 on pageable data 8.76 us
 * (OpenMP) against one thread's 7.91 (s25 call 4); on pinned and mapped data 8.51 / 8.64
 * against 7.56 / 7.52 (s26 call 5) -- while at 2^16 the OpenMP tier wins by 1.5-1.9x.
 * regret_thresholds.py over both: 4 misses -> 2.  The float scan (regrouped, not
 * vectorised that way) keeps 2^15: no miss there in either run.  Over the same runs the
 * tool also moves three GPU thresholds on mapped data one step (scan int32 and axpy
 * double 2^19 -> 2^18, axpy float 2^20 -> 2^19), each saving at most one miss over the
 * four runs since session 19 -- crossings that move with the host (sessions 17-20):
 * under the two-miss rule of regret_h100_s17_six_runs, not taken. */
static const xpar__provenance regret_h100_s26_integer_scan = {
    .machine = "H100 80GB HBM3, 16-core host",
    .date = "2026-11-26",
    .run = "bench/regret_thresholds.py over the xpar-bench regret runs "
           "bench/results/2026-11-26-s25/call4 and 2026-11-26-s26/call5 (issue 12)",
    .brief = "bench/results/2026-11-26-s26/call5"};
#define V &regret_h100_s26_integer_scan

typedef struct default_value {
  size_t n;
  const xpar__provenance *from;
} default_value;

/* [op][kind], kinds in the order of XPAR_THRESHOLD_MAP:
 *   OPENMP, GPU_DEVICE_DATA, GPU_PINNED_DATA, GPU_PAGEABLE_DATA, GPU_DEVICE_ONLY_DATA */
static const default_value default_int4[XPAR_OP_COUNT_][XPAR_THRESHOLD_COUNT_] = {
    [XPAR_OP_REDUCE] = {{POW2(17), C}, {POW2(21), D}, {NEVER, M}, {NEVER, M}, {POW2(13), M}},
    [XPAR_OP_SCAN] = {{POW2(16), V}, {POW2(19), R}, {NEVER, M}, {NEVER, M}, {POW2(4), M}},
    [XPAR_OP_AXPY] = {{POW2(16), C}, {POW2(19), S}, {NEVER, M}, {NEVER, M}, {POW2(4), M}},
    [XPAR_OP_ADD] = {{POW2(16), C}, {POW2(19), R}, {NEVER, M}, {NEVER, M}, {POW2(4), M}},
    [XPAR_OP_FILL] = {{POW2(16), M}, {POW2(20), M}, {NEVER, M}, {NEVER, M}, {POW2(12), R}},
    [XPAR_OP_DOT] = {{POW2(16), A}, {POW2(20), C}, {NEVER, M}, {NEVER, M}, {POW2(4), M}},
};
static const default_value default_float[XPAR_OP_COUNT_][XPAR_THRESHOLD_COUNT_] = {
    [XPAR_OP_REDUCE] = {{POW2(17), C}, {POW2(21), C}, {NEVER, M}, {NEVER, M}, {POW2(13), M}},
    [XPAR_OP_SCAN] = {{POW2(15), S}, {POW2(18), D}, {NEVER, M}, {NEVER, M}, {POW2(4), M}},
    [XPAR_OP_AXPY] = {{POW2(16), C}, {POW2(20), N}, {NEVER, M}, {NEVER, M}, {POW2(4), M}},
    [XPAR_OP_ADD] = {{POW2(16), C}, {POW2(19), M}, {NEVER, M}, {NEVER, M}, {POW2(4), M}},
    [XPAR_OP_FILL] = {{POW2(16), M}, {POW2(20), M}, {NEVER, M}, {NEVER, M}, {POW2(12), D}},
    [XPAR_OP_DOT] = {{POW2(16), L}, {POW2(20), M}, {NEVER, M}, {NEVER, M}, {POW2(4), M}},
};
static const default_value default_8byte[XPAR_OP_COUNT_][XPAR_THRESHOLD_COUNT_] = {
    [XPAR_OP_REDUCE] = {{POW2(16), C}, {POW2(20), R}, {NEVER, M}, {NEVER, M}, {POW2(12), M}},
    [XPAR_OP_SCAN] = {{POW2(14), M}, {POW2(17), M}, {NEVER, M}, {NEVER, M}, {POW2(4), M}},
    [XPAR_OP_AXPY] = {{POW2(15), C}, {POW2(19), C}, {NEVER, M}, {NEVER, M}, {POW2(4), M}},
    [XPAR_OP_ADD] = {{POW2(15), C}, {POW2(18), M}, {NEVER, M}, {NEVER, M}, {POW2(4), M}},
    [XPAR_OP_FILL] = {{POW2(15), M}, {POW2(19), M}, {NEVER, M}, {NEVER, M}, {POW2(11), D}},
    [XPAR_OP_DOT] = {{POW2(15), M}, {POW2(19), S}, {NEVER, M}, {NEVER, M}, {POW2(4), M}},
};
#undef M
#undef C
#undef S
#undef A
#undef R
#undef D
#undef L
#undef N
#undef V

static const default_value *default_of(int op, int dt, int k) {
  if (xpar__dtype_size((xpar_dtype)dt) == 8) return &default_8byte[op][k];
  return dt == XPAR_FLOAT ? &default_float[op][k] : &default_int4[op][k];
}

void xpar__thresholds_default(size_t t[XPAR_OP_COUNT_][XPAR_DTYPE_COUNT_][XPAR_THRESHOLD_COUNT_]) {
  for (int op = 0; op < XPAR_OP_COUNT_; op++)
    for (int dt = 0; dt < XPAR_DTYPE_COUNT_; dt++)
      for (int k = 0; k < XPAR_THRESHOLD_COUNT_; k++) t[op][dt][k] = default_of(op, dt, k)->n;
}

const xpar__provenance *xpar__threshold_default_from(xpar_op op, xpar_dtype dtype,
                                                     xpar_threshold k, size_t *value) {
  const default_value *d = default_of(op, dtype, k);
  if (value) *value = d->n;
  return d->from;
}

int xpar__provenance_format(const xpar__provenance *p, char *buf, size_t size) {
  return snprintf(buf, size, "%s, %s, %s", p->date, p->machine, p->run);
}

const char *xpar__provenance_brief(const xpar__provenance *p) {
  return p->brief ? p->brief : p->run;
}

