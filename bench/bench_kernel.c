/*
 * xpar-devbench kernel: an application kernel's thresholds, measured by
 * xpar_kernel_calibrate.  xpar-devbench cannot build the arguments of an
 * application's kernel, so it calibrates the kernels it ships
 * (kernels/bench_kernels.xk.c, built with xpar_add_kernels as an application
 * builds its own): a bandwidth-bound saxpy and a compute-bound logistic map.
 * It prints each tier's median time per size, the thresholds chosen and the
 * profile lines xpar_profile_save writes for them; an application calibrates
 * its own kernel with the same call on its own arrays (README, "Your own
 * loops").
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "xpar/xpar_kernel.h"

XPAR_KERNEL_DECLARE(bench_saxpy);
XPAR_KERNEL_DECLARE(bench_logistic64);

#define KEY_(e, key, env, data) key,
static const char *const thr_keys[XPAR_THRESHOLD_COUNT_] = {XPAR_THRESHOLD_MAP(KEY_)};
#undef KEY_

static void usage(FILE *f) {
  fprintf(f,
          "usage: xpar-devbench kernel [options]\n"
          "  --kernels LIST  comma-separated: saxpy, logistic64 (default: both)\n"
          "  --n-max N       largest n, e.g. 2^24 (default 2^24; capped by memory)\n"
          "  --mapped        map the arrays on the GPU first (xpar_map): the GPU\n"
          "                  threshold measured is then gpu (device data), not\n"
          "                  gpu_pageable\n"
          "  --out FILE      also save the profile (xpar_profile_save) to FILE\n"
          "  --quick         n up to 2^14: a CPU smoke run of seconds (CI)\n"
          "Each kernel runs on pageable host arrays of n-max floats, on every tier of\n"
          "this build (cpu-serial, cpu-openmp, cuda when usable).\n");
}

/* Values in [0.1, 0.9): the logistic map stays in (0, 1), no inf or NaN. */
static void fill(float *p, size_t n, uint64_t seed) {
  for (size_t i = 0; i < n; i++) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    p[i] = 0.1f + 0.8f * (float)(seed >> 40) / (float)(1ull << 24);
  }
}

static void print_report(const char *name, const xpar_kernel_calibration *r) {
  static const xpar_tier tiers[3] = {XPAR_TIER_CPU_SERIAL, XPAR_TIER_CPU_OPENMP, XPAR_TIER_CUDA};
  printf("# kernel %s: median of %d rounds, us per launch\n%-10s", name, r->rounds, "# n");
  for (int i = 0; i < 3; i++)
    if (r->tier_measured[tiers[i]]) printf(" %12s", xpar_tier_name(tiers[i]));
  printf("\n");
  for (int e = r->lo_exp; e <= r->hi_exp; e++) {
    char n[16];
    snprintf(n, sizeof n, "2^%d", e);
    printf("%-10s", n);
    for (int i = 0; i < 3; i++)
      if (r->tier_measured[tiers[i]]) printf(" %12.3f", r->seconds[tiers[i]][e] * 1e6);
    printf("\n");
  }
  for (int k = 0; k < XPAR_THRESHOLD_COUNT_; k++) {
    if (!r->threshold_set[k]) continue;
    char v[24];
    if (r->threshold[k] == XPAR_NEVER)
      snprintf(v, sizeof v, "never");
    else
      snprintf(v, sizeof v, "%zu", r->threshold[k]);
    printf("%s %-15s %-10s AUTO's worst ratio over the sweep %.2f (at 2^%d)\n", name, thr_keys[k],
           v, r->worst_ratio[k], r->worst_at[k]);
  }
}

/* The profile's kernel lines, as xpar_profile_save writes them. */
static int print_profile_lines(xpar_context *ctx, const char *out) {
  char tmp[] = "/tmp/xpar-devbench-kernel-XXXXXX";
  const char *path = out;
  if (!path) {
    int fd = mkstemp(tmp);
    if (fd < 0) {
      fprintf(stderr, "xpar-devbench kernel: mkstemp: %s\n", strerror(errno));
      return 0;
    }
    close(fd);
    path = tmp;
  }
  xpar_status st = xpar_profile_save(ctx, path);
  int ok = st == XPAR_OK;
  if (!ok)
    fprintf(stderr, "xpar-devbench kernel: saving %s: %s (%s)\n", path, xpar_status_name(st),
            xpar_last_error_detail());
  FILE *f = ok ? fopen(path, "r") : NULL;
  if (f) {
    char line[256];
    printf("# profile lines (xpar_profile_save%s%s):\n", out ? " to " : "", out ? out : "");
    while (fgets(line, sizeof line, f))
      if (strncmp(line, "kernel ", 7) == 0) fputs(line, stdout);
    fclose(f);
  }
  if (!out) remove(tmp);
  return ok;
}

static const char *const kernel_names[] = {"saxpy", "logistic64"};

int bench_cmd_kernel(int argc, char **argv) {
  const char *kernels = "saxpy,logistic64", *out = NULL;
  size_t n_max = (size_t)1 << 24;
  int mapped = 0;
  for (int i = 0; i < argc; ++i) {
    const char *a = argv[i];
    long v;
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      usage(stdout);
      return 0;
    } else if (strcmp(a, "--quick") == 0) {
      n_max = (size_t)1 << 14;
    } else if (strcmp(a, "--mapped") == 0) {
      mapped = 1;
    } else if (i + 1 < argc && strcmp(a, "--kernels") == 0) {
      kernels = argv[++i];
    } else if (i + 1 < argc && strcmp(a, "--out") == 0) {
      out = argv[++i];
    } else if (i + 1 < argc && strcmp(a, "--n-max") == 0 &&
               (strncmp(argv[i + 1], "2^", 2) == 0
                    ? bench_parse_long(argv[i + 1] + 2, 0, 40, &v) && (v = 1L << v)
                    : bench_parse_long(argv[i + 1], 1, 1L << 40, &v))) {
      n_max = (size_t)v;
      ++i;
    } else {
      fprintf(stderr, "xpar-devbench kernel: bad option or value: %s%s%s\n", a,
              i + 1 < argc ? " " : "", i + 1 < argc ? argv[i + 1] : "");
      usage(stderr);
      return 2;
    }
  }
  if (!bench_list_valid("kernel", "--kernels", kernels, kernel_names, 2)) return 2;
  size_t avail = bench_mem_available();
  while (n_max > 16 && avail && 2.0 * (double)n_max * sizeof(float) > 0.5 * (double)avail)
    n_max /= 2;
  float *x = malloc(n_max * sizeof *x), *y = malloc(n_max * sizeof *y);
  xpar_context *ctx = NULL;
  if (!x || !y || xpar_context_create(&ctx) != XPAR_OK) {
    fprintf(stderr, "xpar-devbench kernel: %s\n",
            x && y ? xpar_last_error_detail() : "out of memory");
    free(x);
    free(y);
    return 1;
  }
  const uint64_t seed = 12345;
  printf("# xpar-devbench kernel: n up to %zu, seed %llu%s\n", n_max, (unsigned long long)seed,
         mapped ? ", mapped arrays" : ", pageable host arrays");
  int ok = 1;
  if (mapped) {
    xpar_status st = xpar_map(ctx, x, n_max * sizeof *x, XPAR_MAP_TO);
    if (st == XPAR_OK) st = xpar_map(ctx, y, n_max * sizeof *y, XPAR_MAP_TO);
    if (st != XPAR_OK) {
      fprintf(stderr, "xpar-devbench kernel: --mapped: xpar_map: %s (%s)\n", xpar_status_name(st),
              xpar_last_error_detail());
      ok = 0;
    }
  }
  const float a = 1e-3f;
  for (int which = 0; ok && which < 2; which++) {
    const char *short_name = kernel_names[which];
    if (!bench_list_has(kernels, short_name)) continue;
    fill(x, n_max, seed);
    fill(y, n_max, seed + 1);
    /* The kernels' arguments, as an application's launch of n_max: every
     * array of n_max elements is cut to each n measured. */
    xpar_arg saxpy_args[] = {XPAR_ARG_SCALAR_OF(XPAR_FLOAT, &a), XPAR_ARG_IN(XPAR_FLOAT, x, n_max),
                             XPAR_ARG_INOUT(XPAR_FLOAT, y, n_max)};
    xpar_arg logistic_args[] = {XPAR_ARG_IN(XPAR_FLOAT, x, n_max),
                                XPAR_ARG_OUT(XPAR_FLOAT, y, n_max)};
    const xpar_kernel *k = which == 0 ? &bench_saxpy : &bench_logistic64;
    xpar_kernel_calibration r;
    double t0 = bench_now_s();
    xpar_status st = which == 0 ? xpar_kernel_calibrate(ctx, k, n_max, saxpy_args, 3, &r)
                                : xpar_kernel_calibrate(ctx, k, n_max, logistic_args, 2, &r);
    if (st != XPAR_OK) {
      fprintf(stderr, "xpar-devbench kernel: %s: %s (%s)\n", k->name, xpar_status_name(st),
              xpar_last_error_detail());
      ok = 0;
      break;
    }
    print_report(k->name, &r);
    printf("# %s calibrated in %.1f s\n", k->name, bench_now_s() - t0);
  }
  if (ok) ok = print_profile_lines(ctx, out);
  if (mapped) {
    xpar_unmap(ctx, x, XPAR_UNMAP_RELEASE);
    xpar_unmap(ctx, y, XPAR_UNMAP_RELEASE);
  }
  xpar_context_destroy(ctx);
  free(x);
  free(y);
  return ok ? 0 : 1;
}
