/*
 * xpar-bench sweep: every tier of one op and dtype side by side over N.
 *
 *   xpar-bench sweep --op reduce|scan|axpy|add|fill|dot --dtype int32|...
 *                    [--reduction sum|min|max] [--kind inclusive|exclusive] [--init]
 *                    [--min-exp 7] [--max-exp 26] [--reps R] [--min-time-ms 50]
 *                    [--location host|device] [--threads T] [--seed S]
 *                    [--tiers serial,openmp,cuda,cuda-serial,auto,plain]
 *                    [--csv FILE]
 *
 * A sweep runs N = 2^min-exp ... 2^max-exp; per N it draws fresh random
 * input (seed + exponent), runs the serial tier once for the reference, then
 * every other tier once checked against it, and times only tiers that were
 * right.  Table on stdout, progress on stderr.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define BENCH_MAX_TIERS 16

static void usage(FILE *f) {
  fprintf(f,
          "usage: xpar-bench sweep --op OP --dtype DTYPE [options]\n"
          "  --op          reduce | scan | axpy | add | fill | dot\n"
          "  --dtype       int32 | int64 | uint32 | uint64 | float | double\n"
          "  --reduction   sum | min | max            (reduce, scan; default sum)\n"
          "  --kind        inclusive | exclusive      (scan; default inclusive)\n"
          "  --init        scan: xpar_scan_init from init = 2 (no plain baseline)\n"
          "  --min-exp E   smallest N = 2^E (default 7)\n"
          "  --max-exp E   largest N = 2^E (default 26)\n"
          "  --reps R      exactly R timed repetitions (default: adaptive, >= 5 reps\n"
          "                and >= --min-time-ms, at most 2000)\n"
          "  --min-time-ms adaptive repetitions run at least this long (default 50)\n"
          "  --location    host | device (device: arrays mapped on the GPU tiers)\n"
          "  --threads T   OpenMP threads (default: the runtime's, OMP_NUM_THREADS)\n"
          "  --seed S      random seed (default: from the clock; printed)\n"
          "  --tiers LIST  comma-separated subset of: serial,openmp,cuda,cuda-serial,"
          "auto,plain\n"
          "  --csv FILE    also write long-format CSV to FILE\n");
}

typedef struct sweep_opts {
  const bench_op *op;
  xpar_dtype dtype;
  xpar_reduction reduction;
  xpar_scan_kind kind;
  int with_init;
  int min_exp, max_exp;
  bench_location location;
  int threads;
  uint64_t seed;
  const char *tiers;
  const char *csv;
  bench_timing_cfg timing;
} sweep_opts;

static int tier_selected(const sweep_opts *o, const bench_tier *t) {
  if (!o->tiers) return t->default_on;
  return bench_list_has(o->tiers, t->name);
}

int bench_cmd_sweep(int argc, char **argv) {
  sweep_opts o = {.dtype = XPAR_DTYPE_COUNT_, .reduction = XPAR_SUM, .kind = XPAR_INCLUSIVE,
                  .min_exp = 7, .max_exp = 26, .location = BENCH_HOST,
                  .seed = (uint64_t)(bench_now_s() * 1e6),
                  .timing = {.fixed_reps = 0, .min_reps = 5, .min_time_s = 0.05, .max_reps = 2000}};
  for (int i = 0; i < argc; ++i) {
    const char *a = argv[i], *v = (i + 1 < argc) ? argv[i + 1] : NULL;
    long x;
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      usage(stdout);
      return 0;
    }
    if (strcmp(a, "--init") == 0) { /* the one flag without a value */
      o.with_init = 1;
      continue;
    }
    if (!v) {
      fprintf(stderr, "xpar-bench: %s needs a value\n", a);
      return 2;
    }
    ++i;
    if (strcmp(a, "--op") == 0) {
      if (!(o.op = bench_find_op(v))) goto bad;
    } else if (strcmp(a, "--dtype") == 0) {
      if (!bench_parse_dtype(v, &o.dtype)) goto bad;
    } else if (strcmp(a, "--reduction") == 0) {
      if (!bench_parse_reduction(v, &o.reduction)) goto bad;
    } else if (strcmp(a, "--kind") == 0) {
      if (strcmp(v, "inclusive") == 0) o.kind = XPAR_INCLUSIVE;
      else if (strcmp(v, "exclusive") == 0) o.kind = XPAR_EXCLUSIVE;
      else goto bad;
    } else if (strcmp(a, "--min-exp") == 0) {
      if (!bench_parse_long(v, 0, 40, &x)) goto bad;
      o.min_exp = (int)x;
    } else if (strcmp(a, "--max-exp") == 0) {
      if (!bench_parse_long(v, 0, 40, &x)) goto bad;
      o.max_exp = (int)x;
    } else if (strcmp(a, "--reps") == 0) {
      if (!bench_parse_long(v, 1, 1000000, &x)) goto bad;
      o.timing.fixed_reps = (int)x;
    } else if (strcmp(a, "--min-time-ms") == 0) {
      if (!bench_parse_long(v, 0, 100000, &x)) goto bad;
      o.timing.min_time_s = (double)x * 1e-3;
    } else if (strcmp(a, "--location") == 0) {
      if (strcmp(v, "host") == 0) o.location = BENCH_HOST;
      else if (strcmp(v, "device") == 0) o.location = BENCH_DEVICE;
      else goto bad;
    } else if (strcmp(a, "--threads") == 0) {
      if (!bench_parse_long(v, 0, 4096, &x)) goto bad;
      o.threads = (int)x;
    } else if (strcmp(a, "--seed") == 0) {
      long seed;
      if (!bench_parse_long(v, 0, __LONG_MAX__, &seed)) goto bad; /* as crossover and regret */
      o.seed = (uint64_t)seed;
    } else if (strcmp(a, "--tiers") == 0) {
      o.tiers = v;
    } else if (strcmp(a, "--csv") == 0) {
      o.csv = v;
    } else {
      fprintf(stderr, "xpar-bench: unknown option %s\n", a);
      usage(stderr);
      return 2;
    }
    continue;
  bad:
    fprintf(stderr, "xpar-bench: invalid value for %s: %s\n", a, v);
    return 2;
  }
  if (!o.op || o.dtype == XPAR_DTYPE_COUNT_ || o.min_exp > o.max_exp ||
      (o.with_init && o.op->op != XPAR_OP_SCAN)) {
    fprintf(stderr, "xpar-bench sweep: %s\n",
            !o.op                                  ? "--op is required"
            : o.dtype == XPAR_DTYPE_COUNT_         ? "--dtype is required"
            : o.min_exp > o.max_exp                ? "--min-exp is above --max-exp"
                                                   : "--init applies to --op scan only");
    usage(stderr);
    return 2;
  }
  if (o.tiers) {
    const char *tier_names[BENCH_MAX_TIERS];
    int nt = 0;
    for (int i = 0; i < bench_tier_count() && nt < BENCH_MAX_TIERS; ++i)
      tier_names[nt++] = bench_tier_at(i)->name;
    if (!bench_list_valid("sweep", "--tiers", o.tiers, tier_names, nt)) return 2;
  }

  /* ---- which tiers run ---- */
  xpar_device_info dev;
  memset(&dev, 0, sizeof dev);
  if (xpar_device_query(&dev) != XPAR_OK) dev.usable = 0;
  if (o.location == BENCH_DEVICE && !dev.usable) {
    fprintf(stderr, "xpar-bench: --location device needs a usable GPU (%s)\n", dev.reason);
    return 1;
  }
  bench_tier_run runs[BENCH_MAX_TIERS];
  const char *names[BENCH_MAX_TIERS];
  int ntiers = 0, serial_col = -1, openmp_col = -1, baseline_col = -1;
  bench_case probe = {.reduction = o.reduction, .with_init = o.with_init};
  for (int i = 0; i < bench_tier_count(); ++i) {
    const bench_tier *t = bench_tier_at(i);
    int is_serial = (t->kind == BENCH_TIER_XPAR && t->backend == XPAR_BACKEND_CPU_SERIAL);
    if (!is_serial && !tier_selected(&o, t)) continue; /* serial always: the reference */
    if (t->needs_gpu && !dev.usable) {
      fprintf(stderr, "xpar-bench: skipping tier %s: no usable GPU (%s)\n", t->name, dev.reason);
      continue;
    }
    if (t->kind == BENCH_TIER_BASELINE && !bench_baseline_applies(o.op, &probe)) continue;
    xpar_status st = bench_tier_open(&runs[ntiers], t, o.threads);
    if (st != XPAR_OK) {
      fprintf(stderr, "xpar-bench: tier %s: %s (%s)\n", t->name, xpar_status_name(st),
              xpar_last_error_detail());
      return 1;
    }
    if (is_serial) serial_col = ntiers;
    if (t->force_openmp) openmp_col = ntiers;
    if (t->kind == BENCH_TIER_BASELINE) baseline_col = ntiers;
    names[ntiers++] = (t->kind == BENCH_TIER_BASELINE) ? o.op->baseline_name : t->name;
  }

  /* ---- writers ---- */
  bench_writer writers[2];
  int nwriters = 0;
  FILE *csv = NULL;
  bench_table_writer(&writers[nwriters++], stdout);
  if (o.csv) {
    csv = bench_open_output("sweep", o.csv, "w");
    if (!csv) return 1;
    bench_csv_writer(&writers[nwriters++], csv);
  }
  static const char *const red_names[] = {"sum", "min", "max"};
  char title[256];
  snprintf(title, sizeof title,
           "xpar-bench sweep: op %s%s%s%s%s, dtype %s, location %s, threads %d%s, seed %llu",
           o.op->name, o.op->op == XPAR_OP_REDUCE || o.op->op == XPAR_OP_SCAN ? " " : "",
           o.op->op == XPAR_OP_REDUCE || o.op->op == XPAR_OP_SCAN ? red_names[o.reduction] : "",
           o.op->op == XPAR_OP_SCAN ? (o.kind == XPAR_EXCLUSIVE ? " exclusive" : " inclusive")
                                    : "",
           o.with_init ? " from init 2 (xpar_scan_init)" : "",
           xpar_dtype_name(o.dtype), bench_location_name(o.location), o.threads,
           o.threads ? "" : " (runtime default)", (unsigned long long)o.seed);
  for (int w = 0; w < nwriters; ++w) {
    writers[w].baseline_col = baseline_col;
    writers[w].openmp_col = openmp_col;
    writers[w].begin(&writers[w], names, ntiers, title);
  }

  /* ---- the sweep ---- */
  int failures = 0;
  for (int e = o.min_exp; e <= o.max_exp; ++e) {
    size_t n = (size_t)1 << e;
    bench_case c = {.reduction = o.reduction, .kind = o.kind, .with_init = o.with_init};
    if (!bench_case_init(&c, o.op, o.dtype, n, o.seed + (uint64_t)e)) {
      fprintf(stderr, "xpar-bench: out of memory at n = 2^%d\n", e);
      failures++;
      break;
    }
    bench_row rows[BENCH_MAX_TIERS];
    /* serial first: its answer is the reference for the others */
    int order[BENCH_MAX_TIERS], k = 0;
    order[k++] = serial_col;
    for (int i = 0; i < ntiers; ++i)
      if (i != serial_col) order[k++] = i;
    for (int j = 0; j < ntiers; ++j) {
      int i = order[j];
      bench_tier_run *tr = &runs[i];
      bench_row *r = &rows[i];
      memset(r, 0, sizeof *r);
      r->op = o.op->name;
      r->dtype = xpar_dtype_name(o.dtype);
      r->reduction = red_names[o.reduction];
      r->location = bench_location_name(o.location);
      r->tier = names[i];
      r->n = n;
      r->bytes = (size_t)(o.op->bytes_per_elem * (double)n * (double)c.esize);
      r->ok = -1;
      r->note = "";
      fprintf(stderr, "\r[%s %s] n = 2^%d: %-14s", o.op->name, xpar_dtype_name(o.dtype), e,
              names[i]);
      if (i != serial_col && rows[serial_col].ok != 1) {
        r->note = "no reference";
        continue;
      }
      int gpu_side = tr->tier->needs_gpu || tr->tier->backend == XPAR_BACKEND_AUTO;
      if (o.location == BENCH_DEVICE && gpu_side && tr->ctx) {
        xpar_status st = bench_tier_map(tr, &c, o.op);
        if (st != XPAR_OK) {
          r->note = "xpar_map failed";
          fprintf(stderr, "\nxpar-bench: %s: map: %s (%s)\n", names[i], xpar_status_name(st),
                  xpar_last_error_detail());
          continue;
        }
      }
      /* the checked run */
      bench_case_reset(&c, o.op);
      xpar_status st = bench_tier_call(tr, &c, o.op, o.threads, 1);
      if (st != XPAR_OK) {
        r->ok = 0;
        r->note = xpar_status_name(st);
        fprintf(stderr, "\nxpar-bench: %s at n = 2^%d: %s (%s)\n", names[i], e,
                xpar_status_name(st), xpar_last_error_detail());
      } else if (i == serial_col) {
        bench_case_save_reference(&c);
        r->ok = 1;
      } else {
        static char why[BENCH_MAX_TIERS][128];
        r->ok = bench_case_check(&c, why[i], sizeof why[i]);
        r->note = why[i];
      }
      if (r->ok == 1 && tr->ctx && tr->tier->backend == XPAR_BACKEND_AUTO) {
        xpar_decision d;
        if (xpar_last_decision(tr->ctx, &d) == XPAR_OK)
          snprintf(r->ran_tier, sizeof r->ran_tier, "%s", xpar_tier_name(d.tier));
      }
      if (r->ok == 1) {
        bench_call_arg arg = {tr, &c, o.op, o.threads};
        if (!bench_time(&o.timing, bench_timed_call, &arg, &r->t)) {
          r->ok = 0;
          r->note = "a timed call failed";
        }
      } else {
        failures++;
      }
      bench_tier_unmap(tr, &c, o.op);
    }
    for (int w = 0; w < nwriters; ++w) writers[w].size_done(&writers[w], rows, ntiers);
    bench_case_free(&c);
  }
  fprintf(stderr, "\r%60s\r", "");
  for (int w = 0; w < nwriters; ++w) writers[w].end(&writers[w]);
  if (!bench_close_output("sweep", o.csv, csv)) failures++;
  for (int i = 0; i < ntiers; ++i) bench_tier_close(&runs[i]);
  return failures ? 1 : 0;
}
