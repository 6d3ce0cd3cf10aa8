/*
 * xpar-bench internals.  The program is built from four tables and a core:
 *
 *   tiers   (bench_tiers.c)   what runs a call: an xpar backend policy
 *                             (serial, openmp, cuda, cuda-serial, auto) or a
 *                             plain OpenMP baseline written in the bench
 *   ops     (bench_ops.c)     how to set up, run and check each operation
 *   timing  (bench_timing.c)  the clock and the adaptive median
 *   output  (bench_output.c)  writers: the table on stdout, CSV
 *
 * Subcommands (bench_main.c) combine them; `sweep` is the first.  The
 * crossover tool (sweeps per op x dtype x location, plots, `calibrate`) adds
 * subcommands and writers, not new plumbing.
 *
 * Only the public API (xpar/xpar.h) is used to run xpar.
 */
#ifndef XPAR_BENCH_H
#define XPAR_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "xpar/xpar.h"
#include "base/crossing.h" /* libxpar's threshold rule (base/), compiled into the bench too */

/* ---- data location ------------------------------------------------------- */

typedef enum bench_location {
  BENCH_HOST = 0,   /* plain malloc'd host arrays                             */
  BENCH_DEVICE = 1, /* host arrays mapped (xpar_map) on the GPU tiers' contexts:
                       valid on both sides, so no transfer is timed           */
  BENCH_LOCATION_COUNT
} bench_location;

const char *bench_location_name(bench_location loc);

/* ---- one problem instance: the arrays of one (op, dtype, n) ------------ */

typedef struct bench_case {
  xpar_op op;
  xpar_dtype dtype;
  xpar_reduction reduction; /* reduce, scan */
  xpar_scan_kind kind;      /* scan */
  int with_init;            /* scan: xpar_scan_init from `scalar` (sweep --init) */
  size_t n;
  size_t esize;        /* element size */
  void *x, *y;         /* inputs (y: axpy's in/out, add's and dot's second input) */
  void *y0;            /* axpy: pristine copy of y, restored before a checked run */
  void *out;           /* scan / add / fill output */
  unsigned char scalar[8]; /* alpha (axpy), value (fill) or init (scan --init) */
  unsigned char result[8]; /* reduce / dot result of the last run */
  /* the serial tier's answer, which every other tier is checked against */
  void *ref_array;
  unsigned char ref_result[8];
  double abs_sum;      /* sum of |terms|, for float tolerances */
} bench_case;

/* ---- ops ------------------------------------------------------------------ */

typedef struct bench_op {
  const char *name;
  xpar_op op;
  int has_array_output; /* scan, axpy, add, fill, sort; else a scalar result */
  double bytes_per_elem; /* DRAM traffic per element in units of esize */
  /** Run once through the public API on ctx. */
  xpar_status (*run)(xpar_context *ctx, bench_case *c);
  /** The plain OpenMP baseline of this op and reduction, or NULL. */
  void (*baseline)(bench_case *c, int threads);
  const char *baseline_name;
  /** The plain serial loop of this op (SUM only; threads ignored): every op
   *  has one (the regret bench's reference). */
  void (*serial_baseline)(bench_case *c, int threads);
} bench_op;

const bench_op *bench_find_op(const char *name);
const bench_op *bench_op_at(int i); /* NULL past the end */
/* The number of ops bench_op_at holds: what tables indexed by op are sized by. */
enum { BENCH_OP_COUNT = 12 };
int bench_parse_dtype(const char *s, xpar_dtype *out);
int bench_parse_reduction(const char *s, xpar_reduction *out);

/** The arrays an op uses: x (all but fill), y (axpy's in/out, add's and
 *  dot's second input), out (scan, add, fill, sort); and the array a case's op
 *  writes (axpy: y), NULL for reduce and dot. */
int bench_op_reads_x(xpar_op op);
int bench_op_reads_y(xpar_op op);
int bench_op_writes_out(xpar_op op);
void *bench_case_output(const bench_case *c);
/** Allocate and fill the case's arrays with seeded random data. */
int bench_case_init(bench_case *c, const bench_op *op, xpar_dtype t, size_t n, uint64_t seed);
void bench_case_free(bench_case *c);
/** A case over caller-owned arrays (no allocation; y / out NULL where the op
 *  does not use them), with the op's scalar set as bench_case_init sets it. */
void bench_case_view(bench_case *c, const bench_op *op, xpar_dtype t, size_t n, void *x, void *y,
                     void *out);
/** Seeded random data as bench_case_init draws it (parallel, reproducible). */
void bench_fill_random(xpar_dtype t, void *p, size_t n, uint64_t seed);
/** A case of n <= c->n elements that uses the first n elements of c's arrays
 *  (sweeps allocate and fill once at the largest n). */
bench_case bench_case_prefix(const bench_case *c, size_t n);
/** Restore inputs that an op modifies in place (axpy's y) before a checked run. */
void bench_case_reset(bench_case *c, const bench_op *op);
/** Save the last run's output as the reference (the serial tier's answer). */
void bench_case_save_reference(bench_case *c);
/** Compare the last run's output with the reference; 1 if it matches (floats
 *  within a rounding bound derived from n and the magnitudes). On mismatch
 *  writes a description to why. */
int bench_case_check(const bench_case *c, char *why, size_t why_size);
/** Does the op's baseline apply to this case (e.g. only SUM reductions)? */
int bench_baseline_applies(const bench_op *op, const bench_case *c);

/* ---- tiers ---------------------------------------------------------------- */

typedef enum bench_tier_kind {
  BENCH_TIER_XPAR = 0,     /* an xpar context with a backend policy */
  BENCH_TIER_BASELINE = 1, /* the op's plain OpenMP baseline          */
} bench_tier_kind;

typedef struct bench_tier {
  const char *name;      /* "serial", "openmp", "cuda", "auto", "plain" */
  bench_tier_kind kind;
  xpar_backend backend;  /* XPAR tiers */
  int force_openmp;      /* threshold OPENMP = 0 for every op and dtype */
  int needs_gpu;
  int default_on;        /* in a sweep unless --tiers says otherwise */
  int never_openmp;      /* threshold OPENMP = never: the one-thread kernels at every n */
} bench_tier;

int bench_tier_count(void);
const bench_tier *bench_tier_at(int i);

/* A tier made ready for one sweep: its context (XPAR tiers). */
typedef struct bench_tier_run {
  const bench_tier *tier;
  xpar_context *ctx;
  int mapped; /* the case's arrays are mapped on ctx */
} bench_tier_run;

xpar_status bench_tier_open(bench_tier_run *tr, const bench_tier *tier, int threads);
void bench_tier_close(bench_tier_run *tr);
/** Map / unmap the case's arrays on the tier's context (device location). */
xpar_status bench_tier_map(bench_tier_run *tr, bench_case *c, const bench_op *op);
void bench_tier_unmap(bench_tier_run *tr, bench_case *c, const bench_op *op);
/** One call of the op on the tier, as an application makes it (synchronous).
 *  For mapped outputs, `fetch` copies the device result back afterwards
 *  (used for checking, never inside a timed call). */
xpar_status bench_tier_call(bench_tier_run *tr, bench_case *c, const bench_op *op, int threads,
                            int fetch);

/* One synchronous call of a tier, in the shape the timing core calls:
 * bench_time(..., bench_timed_call, &(bench_call_arg){tr, c, op, threads}, ...). */
typedef struct bench_call_arg {
  bench_tier_run *tr;
  bench_case *c;
  const bench_op *op;
  int threads;
} bench_call_arg;
int bench_timed_call(void *arg);

/* ---- timing core ---------------------------------------------------------- */

double bench_now_s(void); /* CLOCK_MONOTONIC */
/** Sort times ascending; the nearest-rank quantile q (0..1) of sorted times. */
void bench_sort(double *t, int n);
double bench_quantile(const double *sorted, int n, double q);

typedef struct bench_timing_cfg {
  int fixed_reps;     /* > 0: exactly this many timed reps */
  int min_reps;       /* adaptive: at least this many ... */
  double min_time_s;  /* ... and at least this much time in timed reps */
  int max_reps;       /* never more than this */
  /* Long calls (a 2^30 serial scan takes a second): once one call takes at
   * least long_call_s, long_reps samples are enough (0: rule off). */
  double long_call_s;
  int long_reps;
  /* Calls shorter than batch_s are timed in back-to-back batches of k calls
   * (sample = batch time / k), so the clock's own cost and resolution do not
   * dominate a 50 ns call (0: one call per sample). */
  double batch_s;
} bench_timing_cfg;

typedef struct bench_timing {
  double median_s, min_s, max_s;
  int reps;  /* samples */
  int batch; /* calls per sample */
} bench_timing;

/** Time `call(arg)` (after one warm-up call): the median of adaptive reps. */
int bench_time(const bench_timing_cfg *cfg, int (*call)(void *arg), void *arg, bench_timing *out);
/** As bench_time; prior_call_s >= 0 is the time of a call just made on the
 *  same data (a checked run), which then serves as the warm-up. */
int bench_time_after(const bench_timing_cfg *cfg, double prior_call_s, int (*call)(void *arg),
                     void *arg, bench_timing *out);

/* ---- host memory (bench_hostmem.c) ---------------------------------------- */

/** MemAvailable from /proc/meminfo in bytes; 0 if unknown. */
size_t bench_mem_available(void);
/** Pinned host memory (cudaMallocHost), or NULL with the reason in why. */
void *bench_alloc_pinned(size_t bytes, char *why, size_t why_size);
void bench_free_pinned(void *p);
/** Device memory (cudaMalloc), or NULL with the reason in why. */
void *bench_alloc_device(size_t bytes, char *why, size_t why_size);
void bench_free_device(void *p);
/** A copy between any two of host / pinned / device memory (cudaMemcpy,
 *  cudaMemcpyDefault; plain memcpy without the CUDA runtime): the bytes have
 *  arrived when it returns, except from pageable memory to the device, where
 *  the DMA may still be in flight on the legacy stream (bench_copy_settled).
 *  1 on success. */
int bench_copy(void *dst, const void *src, size_t bytes);
/** bench_copy, then the device idle: for set-up copies (data in, poison) that
 *  work on another stream must see -- a pageable-to-device cudaMemcpy may
 *  return before its DMA lands. */
int bench_copy_settled(void *dst, const void *src, size_t bytes);

/* ---- CUB, the application's GPU alternative (cub/bench_regret_cub.cu) ------ */

/** One synchronous CUB call of c's op (sum reduce, inclusive sum scan, axpy,
 *  add, fill, dot) on c's arrays, as an application writes it: the arrays are
 *  device memory (on_device) or host memory, copied in and out around the
 *  call (the copies are part of the call); a reduce's or dot's value lands in
 *  c->result.  Buffers are cached between calls.  1 on success, else 0 with
 *  the reason in why. */
int bench_cub_call(bench_case *c, int on_device, char *why, size_t why_size);
/** Free the cached CUB buffers. */
void bench_cub_release(void);

/* ---- results and writers -------------------------------------------------- */

typedef struct bench_row {
  const char *op, *dtype, *reduction, *location, *tier;
  size_t n;
  size_t bytes;         /* nominal DRAM traffic of one call */
  int ok;               /* 1 checked correct, 0 wrong, -1 not run */
  const char *note;     /* why not run, or what was wrong */
  char ran_tier[24];    /* auto: the tier xpar chose (xpar_last_decision) */
  bench_timing t;
} bench_row;

typedef struct bench_writer {
  void (*begin)(struct bench_writer *w, const char *const *tier_names, int ntiers,
                const char *title);
  /* all rows of one n, in tier order (rows[i].ok == -1: not run) */
  void (*size_done)(struct bench_writer *w, const bench_row *rows, int nrows);
  void (*end)(struct bench_writer *w);
  FILE *f;
  int baseline_col; /* index of the baseline tier in rows, or -1 */
  int openmp_col;   /* index of the openmp tier, or -1 */
} bench_writer;

void bench_table_writer(bench_writer *w, FILE *f);
void bench_csv_writer(bench_writer *w, FILE *f);
/** mkdir -p; 1 on success (or if it exists). */
int bench_mkdir_p(const char *dir);
/** fopen(path, mode) for an output file; NULL after saying why on stderr
 *  ("xpar-bench CMD: cannot write PATH: ..."). */
FILE *bench_open_output(const char *cmd, const char *path, const char *mode);
/** Closes an output file (NULL: nothing); 0 after saying why on stderr when
 *  anything written to it failed (a full disk, /dev/full). */
int bench_close_output(const char *cmd, const char *path, FILE *f);

/* ---- crossover analysis and subcommands ----------------------------------- */

#define BENCH_NEVER XPAR__EXP_NEVER     /* the second side is never faster at the largest N */
#define BENCH_NO_DATA XPAR__EXP_NO_DATA /* nothing to compare */

/**
 * The crossover of a (first side) to b (second side) over exponents lo..hi:
 * the smallest e such that b[e'] < a[e'] at every e' >= e where both are
 * known.  NAN = not measured (skipped); INFINITY = pruned (slower than
 * anything).  BENCH_NEVER if b is not faster at the largest comparable e.
 */
int bench_crossing(const double *a, const double *b, int lo, int hi);
/** "2^14", "never", "n/a" into buf. */
const char *bench_exp_str(int e, char *buf, size_t size);

/* Shared option parsing (bench_cli.c). */
int bench_parse_long(const char *s, long lo, long hi, long *out);
/** The next item of a comma-separated list at *p (its start; *len its
 *  length, 0 for an empty item); *p moves past it, NULL after the last. */
const char *bench_list_item(const char **p, size_t *len);
/** Whether the comma-separated list contains name. */
int bench_list_has(const char *list, const char *name);
/** Whether every comma-separated item of `list` is one of names[0..count);
 *  otherwise says which is not, and the names, on stderr ("xpar-bench CMD:
 *  OPT: unknown name ...") and returns 0. */
int bench_list_valid(const char *cmd, const char *opt, const char *list,
                     const char *const *names, int count);
/** bench_list_valid for --ops and --dtypes (NULL: not given). */
int bench_ops_dtypes_valid(const char *cmd, const char *ops, const char *dtypes);

/** A command of xpar-bench or xpar-devbench: its name, its entry, one line of help. */
typedef struct bench_command {
  const char *name;
  int (*fn)(int argc, char **argv);
  const char *what;
} bench_command;
/** Runs the command argv[1] names (prog's usage for -h, --help, or none):
 *  its exit status; 2 for an unknown command. */
int bench_run_command(const char *prog, const bench_command *cmds, size_t ncmds, int argc,
                      char **argv);
void bench_usage_commands(FILE *f, const char *prog, const bench_command *cmds, size_t ncmds);

int bench_cmd_sweep(int argc, char **argv);
int bench_cmd_crossover(int argc, char **argv);
int bench_cmd_calibrate(int argc, char **argv);
int bench_cmd_kernel(int argc, char **argv);
int bench_cmd_overhead(int argc, char **argv);
int bench_cmd_regret(int argc, char **argv);
int bench_cmd_stalls(int argc, char **argv);
int bench_cmd_segcpu(int argc, char **argv);
int bench_cmd_load(int argc, char **argv);
int bench_cmd_split(int argc, char **argv);

/* ---- load (bench_load.c): other work on the machine ------------------------ */
typedef struct bench_load bench_load;
/** Start load of `kind` (cpu, gpu, cpu-toggle) in child processes; NULL and
 *  why when it cannot. */
bench_load *bench_load_start(const char *kind, char *why, size_t why_size);
/** The processes it runs. */
int bench_load_count(const bench_load *l);
/** Switch it on (1) or off (0): the processes continued or stopped. */
void bench_load_set(bench_load *l, int on);
/** End it (NULL: nothing). */
void bench_load_stop(bench_load *l);
/** regret --load cpu-toggle: per point, how many calls and how long AUTO needs
 *  to return to its idle choice after the load ends. */
int bench_load_change(const char *ops, const char *dtypes, int min_exp, int max_exp,
                      int exp_step, int threads, double on_s, uint64_t seed);

/* ---- plots (bench_plot.c) -------------------------------------------------- */

#define BENCH_MAX_EXP 40
#define BENCH_PLOT_MAX_SERIES 8
#define BENCH_PLOT_MAX_MARKS 4

/* One chart: time per call against N = 2^e, log-log, one curve per tier,
 * vertical marks at the crossovers. */
typedef struct bench_plot {
  char title[160];
  int min_exp, max_exp;
  int nseries;
  const char *series[BENCH_PLOT_MAX_SERIES];
  double t_s[BENCH_PLOT_MAX_SERIES][BENCH_MAX_EXP + 1]; /* seconds; NAN: none */
  int nmarks;
  int mark_exp[BENCH_PLOT_MAX_MARKS];
  char mark_label[BENCH_PLOT_MAX_MARKS][48];
} bench_plot;

/** 1 if a gnuplot with a PNG terminal runs here. */
int bench_have_gnuplot(void);
/** Write the chart as base.png through gnuplot (keeping base.dat and base.gp
 *  for re-rendering) or, without gnuplot, as base.svg written directly.
 *  The file written goes to path.  1 on success. */
int bench_plot_write(const bench_plot *p, const char *base, int use_gnuplot, char *path,
                     size_t size);
/** All charts in one PNG grid (gnuplot only; needs the .dat files written by
 *  bench_plot_write with the same bases).  1 on success. */
int bench_plot_overview(const bench_plot *plots, const char *const *bases, int n,
                        const char *png_path);

#endif /* XPAR_BENCH_H */
