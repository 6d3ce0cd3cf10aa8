/*
 * libxpar loaded the way plugin hosts (Python's ctypes, Julia, R) load it:
 * with dlopen, into a process that was not linked against it, every entry
 * point found with dlsym.  argv[1] is the built library ($<TARGET_FILE:xpar>),
 * argv[2] an optional cmocka filter for the cases run once it is loaded.
 * Reduces run through AUTO, the serial tier and (where a GPU is usable) the
 * CUDA backend, whose static CUDA runtime has thread-locals of its own.
 *
 * CTest runs this with GLIBC_TUNABLES shrinking the static TLS surplus that
 * glibc keeps for libraries loaded later (tests/CMakeLists.txt says by how
 * much): a host whose surplus other libraries have spent.  A library with
 * initial-exec thread-locals (what made dlopen fail with "cannot allocate
 * memory in static TLS block") then fails here on every machine, not only on
 * the ones where the surplus happens to be short.
 *
 * Also: xpar_last_error_detail() stays per thread when the thread-local lives
 * in a dlopen'ed library, including for a thread that was running before the
 * library was loaded (its TLS block for libxpar is created on first use).
 */
#include <dlfcn.h>
#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <xpar/xpar.h>

extern char **environ;

/* The entry points, typed from the header's own declarations (__typeof__
 * only names them: nothing here links against libxpar). */
static struct xpar_entry_points {
  __typeof__(&xpar_context_create) context_create;
  __typeof__(&xpar_context_destroy) context_destroy;
  __typeof__(&xpar_reduce) reduce;
  __typeof__(&xpar_last_error_detail) last_error_detail;
  __typeof__(&xpar_status_name) status_name;
  __typeof__(&xpar_context_set_backend) context_set_backend;
  __typeof__(&xpar_last_decision) last_decision;
  __typeof__(&xpar_device_query) device_query;
} xp;

static const char *g_library;
static void *g_handle;
static uint64_t g_seed;

static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* ---- a thread started before the library is loaded ------------------------ */

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_loaded_cond = PTHREAD_COND_INITIALIZER;
static int g_loaded; /* 1: xp is filled in; -1: loading failed */
static pthread_t g_early_thread;

/* What a thread saw of its own detail around one refused call. */
typedef struct thread_report {
  char before[64];      /* the detail before any xpar call on this thread */
  int before_was_null;
  xpar_status status;   /* of xpar_reduce with a NULL context */
  char detail[512];     /* the detail after it */
  int32_t result;       /* poisoned; a refused call must leave it */
} thread_report;

static thread_report g_early_report;

#define POISON_I32 ((int32_t)0x5A5A5A5A)

static void refuse_and_report(thread_report *r) {
  const char *d = xp.last_error_detail();
  r->before_was_null = d == NULL;
  snprintf(r->before, sizeof r->before, "%s", d ? d : "");
  int32_t in[4] = {1, 2, 3, 4};
  r->result = POISON_I32;
  r->status = xp.reduce(NULL, XPAR_INT32, XPAR_SUM, in, 4, &r->result);
  const char *after = xp.last_error_detail();
  snprintf(r->detail, sizeof r->detail, "%s", after ? after : "(NULL)");
}

static void *early_thread_main(void *arg) {
  (void)arg;
  pthread_mutex_lock(&g_lock);
  while (g_loaded == 0) pthread_cond_wait(&g_loaded_cond, &g_lock);
  int loaded = g_loaded;
  pthread_mutex_unlock(&g_lock);
  if (loaded == 1) refuse_and_report(&g_early_report);
  return NULL;
}

static void announce_loaded(int value) {
  pthread_mutex_lock(&g_lock);
  g_loaded = value;
  pthread_cond_broadcast(&g_loaded_cond);
  pthread_mutex_unlock(&g_lock);
}

/* ---- loading ----------------------------------------------------------------- */

static void *must_find(const char *name) {
  dlerror();
  void *p = dlsym(g_handle, name);
  if (!p) fail_msg("dlsym(%s): %s", name, dlerror());
  return p;
}

/* The library must not be in the process yet (else this tests nothing), must
 * load, and must export every entry point used below. */
static void load_library(void **state) {
  (void)state;
  if (dlopen(g_library, RTLD_NOW | RTLD_NOLOAD))
    fail_msg("%s is already loaded: this program must not link against it", g_library);
  g_handle = dlopen(g_library, RTLD_NOW | RTLD_LOCAL);
  if (!g_handle) {
    announce_loaded(-1);
    fail_msg("dlopen(%s): %s", g_library, dlerror());
  }
  xp.context_create = (__typeof__(xp.context_create))must_find("xpar_context_create");
  xp.context_destroy = (__typeof__(xp.context_destroy))must_find("xpar_context_destroy");
  xp.reduce = (__typeof__(xp.reduce))must_find("xpar_reduce");
  xp.last_error_detail = (__typeof__(xp.last_error_detail))must_find("xpar_last_error_detail");
  xp.status_name = (__typeof__(xp.status_name))must_find("xpar_status_name");
  xp.context_set_backend =
      (__typeof__(xp.context_set_backend))must_find("xpar_context_set_backend");
  xp.last_decision = (__typeof__(xp.last_decision))must_find("xpar_last_decision");
  xp.device_query = (__typeof__(xp.device_query))must_find("xpar_device_query");
  announce_loaded(1);
}

static int library_loaded(void **state) {
  (void)state;
  return g_handle ? 0 : -1; /* cmocka reports the case as failed in setup */
}

/* ---- a reduce through the loaded library ------------------------------------- */

/* Sums of seeded random int32 arrays on ctx, checked against a wrapping sum;
 * the result sits between guard words that must survive, the input must be
 * left as it was, and the decision record must name `tier` (XPAR_TIER_NONE:
 * any tier). */
static void check_reduces(xpar_context *ctx, const char *label, xpar_tier tier) {
  static const size_t sizes[] = {0, 1, 128, 1000, 100003, ((size_t)1 << 20) + 3};
  uint64_t rng = g_seed ^ 0x7265647563650000ull; /* "reduce" */
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
    size_t n = sizes[s];
    int32_t *in = malloc((n + 1) * sizeof *in), *copy = malloc((n + 1) * sizeof *copy);
    assert_non_null(in);
    assert_non_null(copy);
    uint32_t want = 0; /* int32 sums wrap: accumulate unsigned */
    for (size_t i = 0; i < n; ++i) {
      in[i] = (int32_t)(uint32_t)splitmix64(&rng);
      want += (uint32_t)in[i];
    }
    memcpy(copy, in, n * sizeof *in);
    int32_t out[3] = {POISON_I32, POISON_I32, POISON_I32};
    xpar_status st = xp.reduce(ctx, XPAR_INT32, XPAR_SUM, in, n, &out[1]);
    if (st != XPAR_OK)
      fail_msg("seed %" PRIu64 ": %s reduce n = %zu: %s: %s", g_seed, label, n,
               xp.status_name(st), xp.last_error_detail());
    if (out[1] != (int32_t)want)
      fail_msg("seed %" PRIu64 ": %s reduce n = %zu: expected %" PRId32 ", got %" PRId32, g_seed,
               label, n, (int32_t)want, out[1]);
    if (out[0] != POISON_I32 || out[2] != POISON_I32)
      fail_msg("seed %" PRIu64 ": %s reduce n = %zu wrote next to its result", g_seed, label, n);
    if (n && memcmp(in, copy, n * sizeof *in) != 0)
      fail_msg("seed %" PRIu64 ": %s reduce n = %zu changed its input", g_seed, label, n);
    assert_string_equal(xp.last_error_detail(), "");
    xpar_decision d;
    assert_int_equal(xp.last_decision(ctx, &d), XPAR_OK);
    if (n && tier != XPAR_TIER_NONE && d.tier != tier)
      fail_msg("%s reduce n = %zu ran on tier %d, expected %d (%s)", label, n, (int)d.tier,
               (int)tier, d.reason);
    free(in);
    free(copy);
  }
}

/* AUTO (whichever tier it picks) and the serial tier. */
static void reduce_through_dlsym(void **state) {
  (void)state;
  xpar_context *ctx = NULL;
  xpar_status st = xp.context_create(&ctx);
  if (st != XPAR_OK)
    fail_msg("xpar_context_create: %s: %s", xp.status_name(st), xp.last_error_detail());
  check_reduces(ctx, "auto", XPAR_TIER_NONE);
  assert_int_equal(xp.context_set_backend(ctx, XPAR_BACKEND_CPU_SERIAL), XPAR_OK);
  check_reduces(ctx, "serial", XPAR_TIER_CPU_SERIAL);
  assert_int_equal(xp.context_destroy(ctx), XPAR_OK);
}

/* The CUDA backend (cudart_static inside the dlopen'ed library, with its own
 * thread-locals): skipped where no GPU is usable. */
static void reduce_cuda_through_dlsym(void **state) {
  (void)state;
  xpar_device_info info;
  memset(&info, 0, sizeof info);
  if (xp.device_query(&info) != XPAR_OK || !info.usable) {
    printf("no usable GPU (%s): skipped\n", info.reason);
    skip();
  }
  xpar_context *ctx = NULL;
  assert_int_equal(xp.context_create(&ctx), XPAR_OK);
  assert_int_equal(xp.context_set_backend(ctx, XPAR_BACKEND_CUDA), XPAR_OK);
  check_reduces(ctx, "cuda", XPAR_TIER_CUDA);
  assert_int_equal(xp.context_destroy(ctx), XPAR_OK);
}

/* ---- the detail is per thread ------------------------------------------------- */

static void check_report(const char *who, const thread_report *r) {
  if (r->before_was_null || r->before[0])
    fail_msg("%s: before any call the detail was %s, expected \"\"", who,
             r->before_was_null ? "NULL" : r->before);
  if (r->status != XPAR_ERR_NULL_CONTEXT)
    fail_msg("%s: reduce with a NULL context returned %s, expected ERR_NULL_CONTEXT", who,
             xp.status_name(r->status));
  if (!strstr(r->detail, "context is NULL"))
    fail_msg("%s: detail \"%s\" does not say the context is NULL", who, r->detail);
  if (r->result != POISON_I32) fail_msg("%s: the refused reduce wrote its result", who);
}

static void *late_thread_main(void *arg) {
  refuse_and_report((thread_report *)arg);
  return NULL;
}

/* Each thread sees only its own detail: the main thread's stays empty while
 * a thread started before the library was loaded fails; a thread started
 * later starts with an empty detail although the main thread's holds a
 * failure, and its own failure leaves the main thread's detail as it was. */
static void detail_per_thread(void **state) {
  (void)state;
  xpar_context *ctx = NULL;
  assert_int_equal(xp.context_create(&ctx), XPAR_OK);
  int32_t in[8] = {1, 2, 3, 4, 5, 6, 7, 8}, r = 0;
  assert_int_equal(xp.reduce(ctx, XPAR_INT32, XPAR_SUM, in, 8, &r), XPAR_OK);
  assert_int_equal(r, 36);

  assert_int_equal(pthread_join(g_early_thread, NULL), 0);
  check_report("thread started before dlopen", &g_early_report);
  const char *mine = xp.last_error_detail();
  assert_non_null(mine);
  if (mine[0]) fail_msg("another thread's failure shows in the main thread: \"%s\"", mine);

  r = POISON_I32;
  assert_int_equal(xp.reduce(ctx, XPAR_INT32, XPAR_SUM, NULL, 8, &r), XPAR_ERR_NULL_POINTER);
  assert_int_equal(r, POISON_I32);
  char main_detail[512];
  snprintf(main_detail, sizeof main_detail, "%s", xp.last_error_detail());
  if (!main_detail[0] || strstr(main_detail, "context is NULL"))
    fail_msg("main thread's detail after its own failure: \"%s\"", main_detail);

  thread_report late;
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, late_thread_main, &late), 0);
  assert_int_equal(pthread_join(t, NULL), 0);
  check_report("thread started after dlopen", &late);
  assert_string_equal(xp.last_error_detail(), main_detail);

  /* A successful call clears it again. */
  assert_int_equal(xp.reduce(ctx, XPAR_INT32, XPAR_SUM, in, 8, &r), XPAR_OK);
  assert_string_equal(xp.last_error_detail(), "");
  assert_int_equal(xp.context_destroy(ctx), XPAR_OK);
}

/* A thread that fails and then succeeds (its detail set, then cleared) must
 * not make another thread's pending detail stick: the main thread's next
 * successful call still clears its own. */
static void *fail_then_succeed(void *arg) {
  xpar_context *ctx = arg;
  int32_t in[3] = {4, 5, 6}, r = POISON_I32;
  xpar_status first = xp.reduce(ctx, XPAR_INT32, XPAR_SUM, in, 3, NULL);
  int first_had_detail = xp.last_error_detail()[0] != '\0';
  xpar_status second = xp.reduce(ctx, XPAR_INT32, XPAR_SUM, in, 3, &r);
  int ok = first == XPAR_ERR_NULL_POINTER && first_had_detail && second == XPAR_OK && r == 15 &&
           xp.last_error_detail()[0] == '\0';
  return ok ? arg : NULL;
}

static void detail_cleared_after_other_threads(void **state) {
  (void)state;
  xpar_context *ctx = NULL, *other = NULL;
  assert_int_equal(xp.context_create(&ctx), XPAR_OK);
  assert_int_equal(xp.context_create(&other), XPAR_OK);
  int32_t in[3] = {1, 2, 3}, r = 0;
  assert_int_equal(xp.reduce(ctx, XPAR_INT32, XPAR_SUM, in, 3, NULL), XPAR_ERR_NULL_POINTER);
  assert_true(xp.last_error_detail()[0] != '\0');
  for (int i = 0; i < 4; ++i) {
    pthread_t t;
    void *ret = NULL;
    assert_int_equal(pthread_create(&t, NULL, fail_then_succeed, other), 0);
    assert_int_equal(pthread_join(t, &ret), 0);
    if (ret != other) fail_msg("thread %d: fail-then-succeed did not go as expected", i);
  }
  assert_true(xp.last_error_detail()[0] != '\0'); /* no call here since: still valid */
  assert_int_equal(xp.reduce(ctx, XPAR_INT32, XPAR_SUM, in, 3, &r), XPAR_OK);
  assert_int_equal(r, 6);
  assert_string_equal(xp.last_error_detail(), "");
  assert_int_equal(xp.context_destroy(other), XPAR_OK);
  assert_int_equal(xp.context_destroy(ctx), XPAR_OK);
}

/* ---- main -------------------------------------------------------------------- */

static void choose_seed(void) {
  const char *s = getenv("XPAR_TEST_SEED");
  if (s && *s) {
    char *end = NULL;
    g_seed = strtoull(s, &end, 0);
    if (!end || *end) {
      fprintf(stderr, "test_dlopen: XPAR_TEST_SEED=\"%s\" is not a number\n", s);
      exit(2);
    }
  } else {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t x = (uint64_t)ts.tv_sec * 1000000007ull + (uint64_t)ts.tv_nsec;
    g_seed = splitmix64(&x) % 1000000000000ull;
  }
  printf("[xpar-test] test_dlopen: seed %" PRIu64 " (rerun with XPAR_TEST_SEED=%" PRIu64 ")\n",
         g_seed, g_seed);
  fflush(stdout);
}

/* The user's XPAR_* settings (a backend, a profile) would change what the
 * calls do; the library is not loaded yet, so unsetting them here is enough. */
static void unset_xpar_env(void) {
  for (int again = 1; again;) {
    again = 0;
    for (char **e = environ; *e; ++e) {
      if (strncmp(*e, "XPAR_", 5) != 0 || strncmp(*e, "XPAR_TEST_", 10) == 0) continue;
      char name[256];
      size_t len = strcspn(*e, "=");
      if (len >= sizeof name) continue;
      memcpy(name, *e, len);
      name[len] = '\0';
      unsetenv(name);
      again = 1;
      break;
    }
  }
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: test_dlopen PATH-TO-LIBXPAR [cmocka filter]\n");
    return 2;
  }
  g_library = argv[1];
  choose_seed();
  unset_xpar_env();
  if (pthread_create(&g_early_thread, NULL, early_thread_main, NULL) != 0) {
    fprintf(stderr, "test_dlopen: pthread_create failed\n");
    return 1;
  }
  const struct CMUnitTest load[] = {cmocka_unit_test(load_library)};
  int failed = cmocka_run_group_tests_name("dlopen", load, NULL, NULL);
  if (failed) announce_loaded(-1); /* release the early thread */
  if (argc > 2) cmocka_set_test_filter(argv[2]); /* the library is loaded whatever it says */
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(reduce_through_dlsym),
      cmocka_unit_test(reduce_cuda_through_dlsym),
      cmocka_unit_test(detail_per_thread),
      cmocka_unit_test(detail_cleared_after_other_threads),
  };
  failed += cmocka_run_group_tests_name("through dlsym", tests, library_loaded, NULL);
  /* A host may dlclose the library; it must stay loaded (-z nodelete), or
   * the OpenMP tier's worker threads would be left in unmapped code. */
  if (g_handle) {
    dlclose(g_handle);
    if (!dlopen(g_library, RTLD_NOW | RTLD_NOLOAD)) {
      fprintf(stderr, "test_dlopen: dlclose unloaded %s (it must be linked -z nodelete)\n",
              g_library);
      failed++;
    }
  }
  return failed ? 1 : 0;
}
