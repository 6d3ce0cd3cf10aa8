/*
 * AUTO's adaptation (dispatch/adapt.h) without real load and without timing:
 * the site's two pure functions fed synthetic call times, and whole calls
 * through the library with the test hook that makes every timed call take the
 * time the test says (xpar__dispatch_adapt_fake_times).  Nothing here depends
 * on how fast or how loaded the machine is.
 *
 * This program links the library's objects (not libxpar.so) to reach the
 * internal functions and the hook.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dispatch/adapt.h"
#include "dispatch/policy.h"
#include "xpar/xpar.h"

void xpar__dispatch_adapt_fake_times(xpar_context *ctx, const double *ns);
void xpar__dispatch_adapt_fake_room(xpar_context *ctx, int room);

/* ---- the pure functions ------------------------------------------------------- */

/* Whether the machine of the pure tests has room for the static tier
 * (xpar__adapt_cpu_room's answer). */
static int machine_room;

/* One timed call of site s at clock *now: the tier it chose runs for
 * ns[tier]; the clock advances by it.  Returns the tier run. */
static xpar_tier timed_call(xpar__adapt_site *s, uint64_t *now, const double *ns, int *probe) {
  const xpar__adapt_choice ch =
      xpar__adapt_choose(s, *now, xpar__adapt_wants_room(s) ? machine_room : -1);
  *now += (uint64_t)ns[ch.tier];
  xpar__adapt_observe(s, ch.tier, ch.probe, ns[ch.tier], *now);
  if (probe) *probe = ch.probe;
  return ch.tier;
}

/* Calls as dispatch makes them: the countdown between timed calls, the
 * running tier in between (its time on the clock too). */
static int run_calls(xpar__adapt_site *s, uint64_t *now, const double *ns, int calls,
                     xpar_tier want, int *probes) {
  int first = -1;
  for (int i = 0; i < calls; i++) {
    xpar_tier t;
    int probe = 0;
    if (--s->sample_in <= 0) {
      t = timed_call(s, now, ns, &probe);
    } else {
      t = xpar__adapt_running(s);
      *now += (uint64_t)ns[t];
    }
    if (probes) *probes += probe != 0;
    if (first < 0 && !probe && xpar__adapt_running(s) == want) first = i;
  }
  return first;
}

static void idle_stays_static(void **state) {
  (void)state;
  /* OpenMP 20 us, one thread 150 us: the alternative is timed a few times,
   * never chosen, and ever more rarely. */
  double ns[XPAR_TIER_COUNT_] = {0};
  ns[XPAR_TIER_CPU_OPENMP] = 20e3;
  ns[XPAR_TIER_CPU_SERIAL] = 150e3;
  xpar__adapt_site s;
  xpar__adapt_site_init(&s, XPAR_TIER_CPU_OPENMP, XPAR_TIER_CPU_SERIAL, 1.0f);
  uint64_t now = 0;
  int probes = 0;
  run_calls(&s, &now, ns, 10000, XPAR_TIER_CPU_OPENMP, &probes);
  assert_int_equal(s.adapted, 0);
  assert_true(probes >= 1);
  /* Backoff: at most ~log2(4096 / 16) + a first look, each in pairs. */
  assert_true(probes <= 2 * 12);
}

static void load_moves_and_returns(void **state) {
  (void)state;
  double ns[XPAR_TIER_COUNT_] = {0};
  ns[XPAR_TIER_CPU_OPENMP] = 20e3;
  ns[XPAR_TIER_CPU_SERIAL] = 150e3;
  xpar__adapt_site s;
  xpar__adapt_site_init(&s, XPAR_TIER_CPU_OPENMP, XPAR_TIER_CPU_SERIAL, 1.0f);
  uint64_t now = 0;
  run_calls(&s, &now, ns, 200, XPAR_TIER_CPU_OPENMP, NULL);
  assert_int_equal(s.adapted, 0);
  /* Load: OpenMP 9.8 ms, one thread 300 us (half a core). */
  ns[XPAR_TIER_CPU_OPENMP] = 9.8e6;
  ns[XPAR_TIER_CPU_SERIAL] = 300e3;
  const int moved = run_calls(&s, &now, ns, 100, XPAR_TIER_CPU_SERIAL, NULL);
  assert_true(moved >= 0 && moved <= 4);
  /* The load stays: the displaced tier's retries cost at most ~1/SHARE of
   * the time (and a pair's second call). */
  const uint64_t t0 = now;
  int probes = 0;
  run_calls(&s, &now, ns, 2000, XPAR_TIER_CPU_SERIAL, &probes);
  assert_int_equal(s.adapted, 1);
  const double probe_time = probes * ns[XPAR_TIER_CPU_OPENMP];
  assert_true(probe_time <= 0.2 * (double)(now - t0));
  /* The load ends: back on OpenMP within 100 calls. */
  ns[XPAR_TIER_CPU_OPENMP] = 20e3;
  ns[XPAR_TIER_CPU_SERIAL] = 150e3;
  const int back = run_calls(&s, &now, ns, 400, XPAR_TIER_CPU_OPENMP, NULL);
  assert_true(back >= 0 && back <= 100);
  assert_int_equal(s.adapted, 0);
}

/* Loaded: OpenMP 30 ms a call, one thread 1 ms (a load the one-thread tier
 * does not feel, so it never looks lighter).  Returns the site, adapted. */
static void loaded_site(xpar__adapt_site *s, uint64_t *now, double *ns) {
  ns[XPAR_TIER_CPU_OPENMP] = 200e3;
  ns[XPAR_TIER_CPU_SERIAL] = 1e6;
  xpar__adapt_site_init(s, XPAR_TIER_CPU_OPENMP, XPAR_TIER_CPU_SERIAL, 1.0f);
  run_calls(s, now, ns, 50, XPAR_TIER_CPU_OPENMP, NULL);
  ns[XPAR_TIER_CPU_OPENMP] = 30e6;
  run_calls(s, now, ns, 300, XPAR_TIER_CPU_SERIAL, NULL);
  assert_int_equal(s->adapted, 1);
}

static void room_brings_the_tier_back(void **state) {
  (void)state;
  double ns[XPAR_TIER_COUNT_] = {0};
  xpar__adapt_site s;
  uint64_t now = 0;
  /* Without the room, the retry waits for the time share of the loaded
   * estimate: 16 x 30 ms, some 480 calls of 1 ms ... */
  machine_room = 0;
  loaded_site(&s, &now, ns);
  ns[XPAR_TIER_CPU_OPENMP] = 200e3;
  int back = run_calls(&s, &now, ns, 2000, XPAR_TIER_CPU_OPENMP, NULL);
  assert_true(back > 100);
  /* ... with it, the next retry gap (<= 64 calls) and the retry's pair. */
  now = 0;
  loaded_site(&s, &now, ns);
  ns[XPAR_TIER_CPU_OPENMP] = 200e3;
  machine_room = 1;
  back = run_calls(&s, &now, ns, 2000, XPAR_TIER_CPU_OPENMP, NULL);
  machine_room = 0;
  assert_true(back >= 0 && back <= XPAR__ADAPT_MAX_GAP_ADAPTED + 2);
  assert_int_equal(s.adapted, 0);
}

static void room_that_lies_is_tried_once(void **state) {
  (void)state;
  /* The machine says it has room, but OpenMP stays slow (a load the room
   * cannot see): one retry for the room (and its second call), then the
   * time share bounds the retries again. */
  double ns[XPAR_TIER_COUNT_] = {0};
  xpar__adapt_site s;
  uint64_t now = 0;
  loaded_site(&s, &now, ns);
  machine_room = 1;
  const uint64_t t0 = now;
  int probes = 0;
  run_calls(&s, &now, ns, 5000, XPAR_TIER_CPU_SERIAL, &probes);
  machine_room = 0;
  assert_int_equal(s.adapted, 1);
  assert_int_equal(s.room_failed, 1);
  assert_true(probes * ns[XPAR_TIER_CPU_OPENMP] <= 0.2 * (double)(now - t0));
}

static void near_threshold_does_not_flap(void **state) {
  (void)state;
  /* Both tiers within the gap between the factors: the static choice holds. */
  double ns[XPAR_TIER_COUNT_] = {0};
  ns[XPAR_TIER_CPU_OPENMP] = 110e3;
  ns[XPAR_TIER_CPU_SERIAL] = 100e3;
  xpar__adapt_site s;
  xpar__adapt_site_init(&s, XPAR_TIER_CPU_OPENMP, XPAR_TIER_CPU_SERIAL, 1.0f);
  uint64_t now = 0;
  run_calls(&s, &now, ns, 5000, XPAR_TIER_CPU_OPENMP, NULL);
  assert_int_equal(s.adapted, 0);
}

static void cold_first_call_is_not_judged(void **state) {
  (void)state;
  /* The first OpenMP call pays for the pool (2.4 ms); warm it takes 15 us and
   * beats the one-thread tier's 40 us. */
  double ns[XPAR_TIER_COUNT_] = {0};
  ns[XPAR_TIER_CPU_OPENMP] = 2.4e6;
  ns[XPAR_TIER_CPU_SERIAL] = 40e3;
  xpar__adapt_site s;
  xpar__adapt_site_init(&s, XPAR_TIER_CPU_OPENMP, XPAR_TIER_CPU_SERIAL, 1.0f);
  uint64_t now = 0;
  run_calls(&s, &now, ns, 1, XPAR_TIER_CPU_OPENMP, NULL);
  ns[XPAR_TIER_CPU_OPENMP] = 15e3;
  run_calls(&s, &now, ns, 500, XPAR_TIER_CPU_OPENMP, NULL);
  assert_int_equal(s.adapted, 0);
}

static void gpu_moves_to_cpu(void **state) {
  (void)state;
  /* A GPU kept busy by another process: 4 ms a call against 300 us on the CPU. */
  double ns[XPAR_TIER_COUNT_] = {0};
  ns[XPAR_TIER_CUDA] = 50e3;
  ns[XPAR_TIER_CPU_OPENMP] = 300e3;
  xpar__adapt_site s;
  xpar__adapt_site_init(&s, XPAR_TIER_CUDA, XPAR_TIER_CPU_OPENMP, 1.0f);
  uint64_t now = 0;
  run_calls(&s, &now, ns, 500, XPAR_TIER_CUDA, NULL);
  assert_int_equal(s.adapted, 0);
  ns[XPAR_TIER_CUDA] = 4e6;
  const int moved = run_calls(&s, &now, ns, 50, XPAR_TIER_CPU_OPENMP, NULL);
  assert_true(moved >= 0 && moved <= 4);
}

static void first_look_waits_for_its_share(void **state) {
  (void)state;
  /* A sum of 2^28 floats on device data: the GPU 0.35 ms; the CPU, copies
   * included, 30 ms; the device-only threshold 2^13, so the prior (2^15,
   * capped at 256) puts the CPU at 256 GPU calls.  No look for 16 x 256
   * calls ... */
  double ns[XPAR_TIER_COUNT_] = {0};
  ns[XPAR_TIER_CUDA] = 350e3;
  ns[XPAR_TIER_CPU_OPENMP] = 30e6;
  xpar__adapt_site s;
  xpar__adapt_site_init(&s, XPAR_TIER_CUDA, XPAR_TIER_CPU_OPENMP, 32768.0f);
  uint64_t now = 0;
  int probes = 0;
  run_calls(&s, &now, ns, 4000, XPAR_TIER_CUDA, &probes);
  assert_int_equal(probes, 0);
  /* ... then one, within its share of the time. */
  run_calls(&s, &now, ns, 60000, XPAR_TIER_CUDA, &probes);
  assert_true(probes >= 1);
  assert_true(probes * ns[XPAR_TIER_CPU_OPENMP] <= (double)now / XPAR__ADAPT_SHARE);
  assert_int_equal(s.adapted, 0);
}

/* The prior the policy gives: n over the threshold the chosen tier starts
 * at (1 at or below it; n where the tier is always chosen). */
static void prior_from_the_thresholds(void **state) {
  (void)state;
  xpar__policy_facts f;
  xpar__decision_raw d;
  memset(&f, 0, sizeof f);
  memset(&d, 0, sizeof d);
  size_t thresholds[XPAR_THRESHOLD_COUNT_] = {0};
  unsigned char sources[XPAR_THRESHOLD_COUNT_] = {0};
  thresholds[XPAR_THRESHOLD_OPENMP] = (size_t)1 << 16;
  f.thresholds = thresholds;
  f.sources = sources;
  f.backend = XPAR_BACKEND_AUTO;
  f.offload = XPAR_OFFLOAD_DEFAULT;
  f.host = 1;
  f.n = (size_t)1 << 20;
  d.openmp_threshold = (size_t)1 << 16;
  xpar__adapt_alt a = xpar__adapt_alternative(&f, &d, XPAR_TIER_CPU_OPENMP);
  assert_int_equal(a.tier, XPAR_TIER_CPU_SERIAL);
  assert_true(a.prior_factor == 16.0f);
  f.n = (size_t)1 << 16;
  assert_true(xpar__adapt_alternative(&f, &d, XPAR_TIER_CPU_OPENMP).prior_factor == 1.0f);
  /* device-only data on the GPU: the device-only threshold */
  f.host = 0;
  f.device_only = 1;
  f.n = (size_t)1 << 28;
  d.gpu_rule = XPAR__GPU_DEVICE_ONLY;
  d.gpu_threshold = (size_t)1 << 13;
  a = xpar__adapt_alternative(&f, &d, XPAR_TIER_CUDA);
  assert_int_equal(a.tier, XPAR_TIER_CPU_OPENMP); /* above the CPU's OpenMP threshold */
  assert_true(a.prior_factor == 32768.0f);
  d.gpu_threshold = 0; /* always the GPU */
  assert_true(xpar__adapt_alternative(&f, &d, XPAR_TIER_CUDA).prior_factor == (float)f.n);
}

static void first_look_prior_is_capped(void **state) {
  (void)state;
  /* A prior of 2^40 (a 2^44 call, threshold 16) is taken as PRIOR_MAX: the
   * look comes within 16 x 256 GPU calls, not after years. */
  double ns[XPAR_TIER_COUNT_] = {0};
  ns[XPAR_TIER_CUDA] = 350e3;
  ns[XPAR_TIER_CPU_OPENMP] = 30e6;
  xpar__adapt_site s;
  xpar__adapt_site_init(&s, XPAR_TIER_CUDA, XPAR_TIER_CPU_OPENMP, 1099511627776.0f);
  uint64_t now = 0;
  int probes = 0;
  run_calls(&s, &now, ns, (int)(XPAR__ADAPT_SHARE * XPAR__ADAPT_PRIOR_MAX) + 100, XPAR_TIER_CUDA,
            &probes);
  assert_true(probes >= 1);
}

static void first_look_at_once_when_slowed(void **state) {
  (void)state;
  /* The GPU, 50 us warm, kept busy by another process from its 100th call:
   * 4 ms.  The prior (256) would hold the look for 16 x 256 x 50 us; the
   * slowed static tier looks at once and moves to the CPU (300 us). */
  double ns[XPAR_TIER_COUNT_] = {0};
  ns[XPAR_TIER_CUDA] = 50e3;
  ns[XPAR_TIER_CPU_OPENMP] = 300e3;
  xpar__adapt_site s;
  xpar__adapt_site_init(&s, XPAR_TIER_CUDA, XPAR_TIER_CPU_OPENMP, 256.0f);
  uint64_t now = 0;
  int probes = 0;
  run_calls(&s, &now, ns, 100, XPAR_TIER_CUDA, &probes);
  assert_int_equal(probes, 0);
  ns[XPAR_TIER_CUDA] = 4e6;
  const int moved = run_calls(&s, &now, ns, 50, XPAR_TIER_CPU_OPENMP, NULL);
  assert_true(moved >= 0 && moved <= 8);
}

static void first_look_at_once_without_room(void **state) {
  (void)state;
  /* OpenMP chosen at 32 times its threshold.  A machine with room trusts the
   * idle thresholds for 16 x 32 OpenMP calls; one without looks at once. */
  double ns[XPAR_TIER_COUNT_] = {0};
  ns[XPAR_TIER_CPU_OPENMP] = 100e3;
  ns[XPAR_TIER_CPU_SERIAL] = 180e3;
  for (int room = 0; room <= 1; room++) {
    xpar__adapt_site s;
    xpar__adapt_site_init(&s, XPAR_TIER_CPU_OPENMP, XPAR_TIER_CPU_SERIAL, 32.0f);
    uint64_t now = 0;
    int probes = 0;
    machine_room = room;
    run_calls(&s, &now, ns, room ? 500 : 4, XPAR_TIER_CPU_OPENMP, &probes);
    machine_room = 0;
    if (room)
      assert_int_equal(probes, 0);
    else
      assert_true(probes >= 1);
  }
}

/* ---- whole calls, with the times faked ------------------------------------------ */

enum { N = 1 << 18 }; /* above every built-in OpenMP threshold of int32 reduce */

static xpar_context *new_ctx(void) {
  xpar_context *ctx = NULL;
  assert_int_equal(xpar_context_create(&ctx), XPAR_OK);
  return ctx;
}

static const double *loaded_times(void) {
  static double ns[XPAR_TIER_COUNT_];
  ns[XPAR_TIER_CPU_OPENMP] = 9.8e6;
  ns[XPAR_TIER_CPU_SERIAL] = 7e3;
  return ns;
}

static xpar_decision reduce_calls(xpar_context *ctx, const int32_t *x, int calls) {
  int32_t r = 0;
  for (int i = 0; i < calls; i++) {
    assert_int_equal(xpar_reduce(ctx, XPAR_INT32, XPAR_SUM, x, N, &r), XPAR_OK);
    assert_int_equal(r, N);
  }
  xpar_decision d;
  assert_int_equal(xpar_last_decision(ctx, &d), XPAR_OK);
  return d;
}

static int32_t *ones(void) {
  int32_t *x = malloc(N * sizeof *x);
  assert_non_null(x);
  for (int i = 0; i < N; i++) x[i] = 1;
  return x;
}

static void record_names_the_adaptation(void **state) {
  (void)state;
  int32_t *x = ones();
  xpar_context *ctx = new_ctx();
  int on = 0;
  assert_int_equal(xpar_context_get_adapt(ctx, &on), XPAR_OK);
  assert_int_equal(on, 1);
  xpar__dispatch_adapt_fake_times(ctx, loaded_times());
  const xpar_decision d = reduce_calls(ctx, x, 20);
  assert_int_equal(d.tier, XPAR_TIER_CPU_SERIAL);
  if (!strstr(d.reason, "; adapted: cpu-openmp measured 9.8 ms against 7 us for cpu-serial; "
                        "cpu-serial chosen"))
    fail_msg("the record does not name the adaptation: \"%s\"", d.reason);
  /* Whole: it still ends in where the quoted defaults were measured. */
  assert_non_null(strstr(d.reason, "(default)"));
  assert_int_equal(d.reason[strlen(d.reason) - 1], ')');
  xpar_context_destroy(ctx);
  free(x);
}

static void adapt_off_is_static(void **state) {
  (void)state;
  int32_t *x = ones();
  /* The API ... */
  xpar_context *ctx = new_ctx();
  assert_int_equal(xpar_context_set_adapt(ctx, 0), XPAR_OK);
  xpar__dispatch_adapt_fake_times(ctx, loaded_times());
  xpar_decision d = reduce_calls(ctx, x, 20);
  assert_int_equal(d.tier, XPAR_TIER_CPU_OPENMP);
  assert_null(strstr(d.reason, "adapt"));
  xpar_context_destroy(ctx);
  /* ... and the environment. */
  setenv("XPAR_ADAPT", "OFF", 1);
  ctx = new_ctx();
  unsetenv("XPAR_ADAPT");
  int on = 1;
  assert_int_equal(xpar_context_get_adapt(ctx, &on), XPAR_OK);
  assert_int_equal(on, 0);
  xpar__dispatch_adapt_fake_times(ctx, loaded_times());
  d = reduce_calls(ctx, x, 20);
  assert_int_equal(d.tier, XPAR_TIER_CPU_OPENMP);
  xpar_context_destroy(ctx);
  /* A value neither off nor on is refused, never taken for a default. */
  setenv("XPAR_ADAPT", "maybe", 1);
  ctx = NULL;
  assert_int_equal(xpar_context_create(&ctx), XPAR_ERR_INVALID_ENV);
  assert_non_null(strstr(xpar_last_error_detail(), "XPAR_ADAPT"));
  unsetenv("XPAR_ADAPT");
  free(x);
}

static void forced_backends_never_adapt(void **state) {
  (void)state;
  int32_t *x = ones();
  xpar_context *ctx = new_ctx();
  assert_int_equal(xpar_context_set_backend(ctx, XPAR_BACKEND_CPU), XPAR_OK);
  xpar__dispatch_adapt_fake_times(ctx, loaded_times());
  const xpar_decision d = reduce_calls(ctx, x, 40);
  assert_int_equal(d.tier, XPAR_TIER_CPU_OPENMP);
  assert_null(strstr(d.reason, "adapt"));
  xpar_context_destroy(ctx);
  free(x);
}

/* Reduce calls until one runs on OpenMP as AUTO's choice (not a retry): its
 * index, or -1 within `limit` calls. */
static int calls_until_openmp(xpar_context *ctx, const int32_t *x, int limit) {
  int32_t r;
  for (int i = 0; i < limit; i++) {
    assert_int_equal(xpar_reduce(ctx, XPAR_INT32, XPAR_SUM, x, N, &r), XPAR_OK);
    xpar_decision d;
    assert_int_equal(xpar_last_decision(ctx, &d), XPAR_OK);
    if (d.tier == XPAR_TIER_CPU_OPENMP && !strstr(d.reason, "retried")) return i;
  }
  return -1;
}

static void adapted_then_back(void **state) {
  (void)state;
  int32_t *x = ones();
  xpar_context *ctx = new_ctx();
  /* Loaded for a while: OpenMP 9.8 ms, one thread 300 us (half a core). */
  double loaded[XPAR_TIER_COUNT_] = {0};
  loaded[XPAR_TIER_CPU_OPENMP] = 9.8e6;
  loaded[XPAR_TIER_CPU_SERIAL] = 300e3;
  xpar__dispatch_adapt_fake_times(ctx, loaded);
  assert_int_equal(reduce_calls(ctx, x, 1000).tier, XPAR_TIER_CPU_SERIAL);
  /* The load ends: OpenMP 20 us against 150 us, and the calls repeat (the
   * repeat path's timed calls move the choice back). */
  double idle[XPAR_TIER_COUNT_] = {0};
  idle[XPAR_TIER_CPU_OPENMP] = 20e3;
  idle[XPAR_TIER_CPU_SERIAL] = 150e3;
  xpar__dispatch_adapt_fake_times(ctx, idle);
  const int back = calls_until_openmp(ctx, x, 150);
  assert_true(back >= 0 && back <= 100);
  xpar_context_destroy(ctx);
  free(x);
}

static void room_counts_again_after_a_new_load(void **state) {
  (void)state;
  /* A room that lied stops counting at the site; once the site is back on
   * OpenMP and a new load moves it again, the room counts again. */
  double ns[XPAR_TIER_COUNT_] = {0};
  xpar__adapt_site s;
  uint64_t now = 0;
  loaded_site(&s, &now, ns);
  machine_room = 1;
  run_calls(&s, &now, ns, 3000, XPAR_TIER_CPU_SERIAL, NULL);
  assert_int_equal(s.room_failed, 1);
  machine_room = 0;
  ns[XPAR_TIER_CPU_OPENMP] = 200e3; /* the load ends: back by the time share */
  run_calls(&s, &now, ns, 3000, XPAR_TIER_CPU_OPENMP, NULL);
  assert_int_equal(s.adapted, 0);
  ns[XPAR_TIER_CPU_OPENMP] = 30e6; /* a new load */
  run_calls(&s, &now, ns, 300, XPAR_TIER_CPU_SERIAL, NULL);
  assert_int_equal(s.adapted, 1);
  assert_int_equal(s.room_failed, 0);
}

static void room_through_the_library(void **state) {
  (void)state;
  int32_t *x = ones();
  xpar_context *ctx = new_ctx();
  double loaded[XPAR_TIER_COUNT_] = {0};
  loaded[XPAR_TIER_CPU_OPENMP] = 30e6;
  loaded[XPAR_TIER_CPU_SERIAL] = 1e6;
  xpar__dispatch_adapt_fake_times(ctx, loaded);
  assert_int_equal(reduce_calls(ctx, x, 300).tier, XPAR_TIER_CPU_SERIAL);
  /* The load ends and the machine has room: back within a retry gap. */
  double idle[XPAR_TIER_COUNT_] = {0};
  idle[XPAR_TIER_CPU_OPENMP] = 200e3;
  idle[XPAR_TIER_CPU_SERIAL] = 1e6;
  xpar__dispatch_adapt_fake_times(ctx, idle);
  xpar__dispatch_adapt_fake_room(ctx, 1);
  const int back = calls_until_openmp(ctx, x, 300);
  assert_true(back >= 0 && back <= XPAR__ADAPT_MAX_GAP_ADAPTED + 2);
  xpar_context_destroy(ctx);
  free(x);
}

/* The machine's room as read from /proc: an answer, cached, and never room
 * for more threads than CPUs plus what runs. */
static void room_reads_the_machine(void **state) {
  (void)state;
  const uint64_t now = xpar__adapt_now_ns();
  const int a = xpar__adapt_cpu_room(0, now);
  assert_true(a == 0 || a == 1);
  assert_int_equal(xpar__adapt_cpu_room(0, now + 1), a); /* the cached reading */
  assert_int_equal(xpar__adapt_cpu_room(1 << 20, now + 2), a); /* capped at the CPUs */
}

/* The room from a reading: the CPUs filled by others leave none; the own
 * OpenMP team, just after it ran, is not a load; the slack takes a stray
 * task or two. */
static void room_from_a_reading(void **state) {
  (void)state;
  assert_int_equal(xpar__adapt_room_from(0, 16, 0, 0), 1);
  assert_int_equal(xpar__adapt_room_from(2, 16, 0, 0), 1);  /* 16 / 8 */
  assert_int_equal(xpar__adapt_room_from(3, 16, 0, 0), 0);
  assert_int_equal(xpar__adapt_room_from(16, 16, 0, 0), 0); /* a busy process per core */
  assert_int_equal(xpar__adapt_room_from(15, 16, 0, 1), 1); /* the own team spinning */
  assert_int_equal(xpar__adapt_room_from(31, 16, 0, 1), 0); /* ... beside a full load */
  assert_int_equal(xpar__adapt_room_from(12, 16, 4, 0), 1); /* 4 threads: 12 others fit */
  assert_int_equal(xpar__adapt_room_from(15, 16, 4, 0), 0);
  assert_int_equal(xpar__adapt_room_from(1, 2, 0, 0), 1);   /* 2 CPUs: slack of 1 */
  assert_int_equal(xpar__adapt_room_from(2, 2, 0, 0), 0);
  assert_int_equal(xpar__adapt_room_from(2, 2, 0, 1), 0); /* team asleep, two busy: no slack */
  assert_int_equal(xpar__adapt_room_from(1, 2, 0, 1), 1);
  assert_int_equal(xpar__adapt_room_from(16, 16, 0, 1), 1); /* the team and a stray task */
  assert_int_equal(xpar__adapt_room_from(18, 16, 0, 1), 0);
  assert_int_equal(xpar__adapt_room_from(-1, 16, 0, 0), 0); /* unknown */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(idle_stays_static),
      cmocka_unit_test(load_moves_and_returns),
      cmocka_unit_test(near_threshold_does_not_flap),
      cmocka_unit_test(cold_first_call_is_not_judged),
      cmocka_unit_test(gpu_moves_to_cpu),
      cmocka_unit_test(first_look_waits_for_its_share),
      cmocka_unit_test(prior_from_the_thresholds),
      cmocka_unit_test(first_look_prior_is_capped),
      cmocka_unit_test(first_look_at_once_when_slowed),
      cmocka_unit_test(first_look_at_once_without_room),
      cmocka_unit_test(record_names_the_adaptation),
      cmocka_unit_test(adapt_off_is_static),
      cmocka_unit_test(forced_backends_never_adapt),
      cmocka_unit_test(adapted_then_back),
      cmocka_unit_test(room_brings_the_tier_back),
      cmocka_unit_test(room_that_lies_is_tried_once),
      cmocka_unit_test(room_counts_again_after_a_new_load),
      cmocka_unit_test(room_through_the_library),
      cmocka_unit_test(room_reads_the_machine),
      cmocka_unit_test(room_from_a_reading),
  };
  return cmocka_run_group_tests_name("adapt", tests, NULL, NULL);
}
