/*
 * Load for the benches: other work on the machine, as shared nodes, laptops,
 * CI runners and MPI ranks sharing cores have it, so that AUTO's adaptation
 * (docs/dispatch.md, "Adaptation") can be shown on any machine.
 *
 *   cpu         one busy process per core (a spinning loop), for the run
 *   gpu         a second process keeping the GPU busy: xpar_reduce on a
 *               2^26-element array valid on the device, back to back, on the
 *               CUDA backend (only where a GPU is usable)
 *   cpu-toggle  the cpu load, switched on and off (SIGCONT / SIGSTOP) by the
 *               caller: xpar-devbench regret --load cpu-toggle measures how
 *               many calls AUTO needs to return to its idle choice
 *
 * The load runs in child processes (fork; the gpu one exec's this program's
 * `load gpu` command, so that its CUDA state is its own), each killed when the
 * bench ends -- and each ends by itself when its parent is gone
 * (PR_SET_PDEATHSIG), so an interrupted bench leaves no load behind.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

enum { LOAD_MAX_PROCS = 1024 };

struct bench_load {
  pid_t pids[LOAD_MAX_PROCS];
  int count;
  int on;
};

/* A child's first step: end when the bench does. */
static void die_with_parent(pid_t parent) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(0);
}

static void spin_forever(void) {
  volatile unsigned long x = 0;
  for (;;) x++;
}

static int start_cpu(bench_load *l, char *why, size_t why_size) {
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  if (cores < 1) cores = 1;
  if (cores > LOAD_MAX_PROCS) cores = LOAD_MAX_PROCS;
  const pid_t parent = getpid();
  for (long i = 0; i < cores; i++) {
    fflush(NULL);
    const pid_t pid = fork();
    if (pid < 0) {
      snprintf(why, why_size, "fork: %s", strerror(errno));
      return 0;
    }
    if (pid == 0) {
      die_with_parent(parent);
      spin_forever();
    }
    l->pids[l->count++] = pid;
  }
  return 1;
}

static int start_gpu(bench_load *l, char *why, size_t why_size) {
  xpar_device_info dev;
  if (xpar_device_query(&dev) != XPAR_OK || !dev.usable) {
    snprintf(why, why_size, "no usable GPU (%s)", dev.reason);
    return 0;
  }
  const pid_t parent = getpid();
  fflush(NULL);
  const pid_t pid = fork();
  if (pid < 0) {
    snprintf(why, why_size, "fork: %s", strerror(errno));
    return 0;
  }
  if (pid == 0) {
    die_with_parent(parent);
    execl("/proc/self/exe", "xpar-devbench", "load", "gpu", (char *)NULL);
    _exit(127);
  }
  l->pids[l->count++] = pid;
  return 1;
}

bench_load *bench_load_start(const char *kind, char *why, size_t why_size) {
  bench_load *l = calloc(1, sizeof *l);
  if (!l) {
    snprintf(why, why_size, "out of memory");
    return NULL;
  }
  l->on = 1;
  int ok = 0;
  if (strcmp(kind, "cpu") == 0 || strcmp(kind, "cpu-toggle") == 0)
    ok = start_cpu(l, why, why_size);
  else if (strcmp(kind, "gpu") == 0)
    ok = start_gpu(l, why, why_size);
  else
    snprintf(why, why_size, "unknown load \"%s\" (cpu, gpu, cpu-toggle)", kind);
  if (!ok) {
    bench_load_stop(l);
    return NULL;
  }
  return l;
}

int bench_load_count(const bench_load *l) { return l ? l->count : 0; }

void bench_load_set(bench_load *l, int on) {
  if (!l || l->on == on) return;
  for (int i = 0; i < l->count; i++) kill(l->pids[i], on ? SIGCONT : SIGSTOP);
  l->on = on;
}

void bench_load_stop(bench_load *l) {
  if (!l) return;
  for (int i = 0; i < l->count; i++) {
    kill(l->pids[i], SIGKILL);
    waitpid(l->pids[i], NULL, 0);
  }
  free(l);
}

/* `xpar-devbench load cpu|gpu [--seconds S]`: the load itself, in the
 * foreground (the gpu kind is what bench_load_start runs in its child). */
int bench_cmd_load(int argc, char **argv) {
  const char *kind = argc > 1 ? argv[1] : "";
  double seconds = 0; /* 0: until killed */
  for (int i = 2; i + 1 < argc; i += 2)
    if (strcmp(argv[i], "--seconds") == 0) seconds = atof(argv[i + 1]);
  const double end = seconds > 0 ? bench_now_s() + seconds : 0;
  if (strcmp(kind, "cpu") == 0) {
    char why[160];
    bench_load *l = bench_load_start("cpu", why, sizeof why);
    if (!l) {
      fprintf(stderr, "xpar-devbench load: %s\n", why);
      return 1;
    }
    while (!end || bench_now_s() < end) sleep(1);
    bench_load_stop(l);
    return 0;
  }
  if (strcmp(kind, "gpu") == 0) {
    const size_t n = (size_t)1 << 26;
    float *x = calloc(n, sizeof *x);
    xpar_context *ctx = NULL;
    if (!x || xpar_context_create(&ctx) != XPAR_OK ||
        xpar_context_set_backend(ctx, XPAR_BACKEND_CUDA) != XPAR_OK ||
        xpar_map(ctx, x, n * sizeof *x, XPAR_MAP_TO) != XPAR_OK) {
      fprintf(stderr, "xpar-devbench load gpu: %s\n", xpar_last_error_detail());
      return 1;
    }
    float r;
    while (!end || bench_now_s() < end)
      if (xpar_reduce(ctx, XPAR_FLOAT, XPAR_SUM, x, n, &r) != XPAR_OK) return 1;
    xpar_context_destroy(ctx);
    free(x);
    return 0;
  }
  fprintf(stderr, "usage: xpar-devbench load cpu|gpu [--seconds S]\n");
  return 2;
}

/* ---- the load-change measurement (regret --load cpu-toggle) ---------------- */

/* The tier of the context's last call. */
static xpar_tier last_tier(xpar_context *ctx) {
  xpar_decision d;
  return xpar_last_decision(ctx, &d) == XPAR_OK ? d.tier : XPAR_TIER_NONE;
}

/* Whether the context's last call was a probe of adaptation (the tier not
 * chosen, timed once: dispatch/adapt.h), as its record says ("... retried",
 * "... timed against ..."): not AUTO's choice. */
static int last_was_probe(xpar_context *ctx) {
  xpar_decision d;
  return xpar_last_decision(ctx, &d) == XPAR_OK &&
         (strstr(d.reason, " retried") || strstr(d.reason, " timed against "));
}

/* Calls of `op` on c until `seconds` have passed (at least `min_calls`); the
 * tier of the last that was not a probe. */
static xpar_tier run_for(xpar_context *ctx, const bench_op *op, bench_case *c, double seconds,
                         int min_calls) {
  const double end = bench_now_s() + seconds;
  xpar_tier chosen = XPAR_TIER_NONE;
  for (int i = 0;
       i < min_calls || bench_now_s() < end || (chosen == XPAR_TIER_NONE && i < 1000000); i++) {
    if (op->run(ctx, c) != XPAR_OK) return XPAR_TIER_NONE;
    if (!last_was_probe(ctx)) chosen = last_tier(ctx);
  }
  return chosen;
}

/* Stays at the idle choice this many calls in a row: back. */
enum { BACK_STREAK = 16 };

int bench_load_change(const char *ops, const char *dtypes, int min_exp, int max_exp,
                      int exp_step, int threads, double on_s, uint64_t seed) {
  char why[160];
  bench_load *l = bench_load_start("cpu-toggle", why, sizeof why);
  if (!l) {
    fprintf(stderr, "xpar-devbench regret --load cpu-toggle: %s\n", why);
    return 1;
  }
  bench_load_set(l, 0);
  printf("# load change: %d busy processes switched on for %.1f s, then off; per point a fresh "
         "AUTO context (adaptation %s), pageable data; 'back' counts the calls and the time from "
         "the load's end to the first of %d calls in a row on the idle choice (the choices: "
         "probes of the other tier neither count nor break the row)\n",
         bench_load_count(l), on_s, getenv("XPAR_ADAPT") ? getenv("XPAR_ADAPT") : "on",
         BACK_STREAK);
  printf("%-7s %-7s %5s  %-11s %-11s %10s %10s\n", "op", "dtype", "n", "idle", "loaded",
         "back calls", "back ms");
  int failures = 0, points = 0, back_ok = 0;
  long worst_calls = 0;
  double worst_ms = 0;
  for (int oi = 0; bench_op_at(oi); ++oi) {
    const bench_op *op = bench_op_at(oi);
    if (!bench_list_has(ops, op->name)) continue;
    for (int t = 0; t < XPAR_DTYPE_COUNT_; ++t) {
      const xpar_dtype dt = (xpar_dtype)t;
      if (!bench_list_has(dtypes, xpar_dtype_name(dt))) continue;
      for (int e = min_exp; e <= max_exp; e += exp_step) {
        bench_case c = {.reduction = XPAR_SUM, .kind = XPAR_INCLUSIVE};
        xpar_context *ctx = NULL;
        if (!bench_case_init(&c, op, dt, (size_t)1 << e, seed + (uint64_t)e) ||
            xpar_context_create(&ctx) != XPAR_OK ||
            (threads > 0 && xpar_context_set_num_threads(ctx, threads) != XPAR_OK)) {
          fprintf(stderr, "xpar-devbench regret: %s %s 2^%d: %s\n", op->name,
                  xpar_dtype_name(dt), e, xpar_last_error_detail());
          failures++;
          bench_case_free(&c);
          xpar_context_destroy(ctx);
          continue;
        }
        const xpar_tier idle = run_for(ctx, op, &c, 0.05, 64);
        bench_load_set(l, 1);
        const xpar_tier loaded = run_for(ctx, op, &c, on_s, 64);
        bench_load_set(l, 0);
        const double t0 = bench_now_s();
        long calls = 0, first = -1;
        int streak = 0;
        double first_s = 0;
        while (streak < BACK_STREAK && bench_now_s() - t0 < 5.0) {
          if (op->run(ctx, &c) != XPAR_OK) break;
          if (last_was_probe(ctx)) { /* neither the choice nor a break of the row */
            calls++;
            continue;
          }
          if (last_tier(ctx) == idle) {
            if (!streak++) first = calls, first_s = bench_now_s() - t0;
          } else {
            streak = 0;
          }
          calls++;
        }
        points++;
        if (streak >= BACK_STREAK) {
          back_ok++;
          if (first > worst_calls) worst_calls = first;
          if (first_s * 1e3 > worst_ms) worst_ms = first_s * 1e3;
          printf("%-7s %-7s  2^%-2d  %-11s %-11s %10ld %10.2f\n", op->name, xpar_dtype_name(dt),
                 e, xpar_tier_name(idle), xpar_tier_name(loaded), first, first_s * 1e3);
        } else {
          printf("%-7s %-7s  2^%-2d  %-11s %-11s %10s %10s (%ld calls in 5 s)\n", op->name,
                 xpar_dtype_name(dt), e, xpar_tier_name(idle), xpar_tier_name(loaded), "never",
                 "-", calls);
        }
        fflush(stdout);
        xpar_context_destroy(ctx);
        bench_case_free(&c);
      }
    }
  }
  bench_load_stop(l);
  printf("# load change: %d of %d points back on the idle choice; the slowest after %ld calls, "
         "%.2f ms at most\n",
         back_ok, points, worst_calls, worst_ms);
  return failures ? 1 : 0;
}
