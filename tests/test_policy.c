/*
 * AUTO's policy for every branch that sends work to the GPU, without a GPU:
 * a fake GPU backend registered in place of the CUDA backend (a test double,
 * as SQLite's VFS is swapped in tests).  The fake's "device memory" is host
 * memory it hands out and recognises in pointer_kind; its operations run the
 * CPU backend's strict serial loops and count themselves, so a test knows
 * that the GPU side ran and that its result is right.  It can be told to
 * fail its next operation (out of GPU memory) to drive the fallback.
 *
 * Branches: device-only data; pinned and pageable host data around their
 * thresholds (including the cached-hint case below both); mapped arrays in
 * sync and with a stale device copy; offload mandatory and disabled; forced
 * cuda and cuda-serial; the fallback to the CPU after a GPU failure (AUTO)
 * and the error when the GPU was forced; a nowait reduce into device memory;
 * the host fast path against the general path (the same decision, reason,
 * copies, results and mapping validity, with and without mappings).
 *
 * This program links the library's objects (not libxpar.so) to reach the
 * internal registration hook; it runs in CI on every build.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dispatch/gpu.h" /* the backend table and xpar__gpu_backend_set_double */
#include "kernels/test_kernels.h"
#include "operators/operators.h"

/* ---- the fake GPU ------------------------------------------------------------- */

enum { FAKE_MAX_BLOCKS = 64 };
static struct {
  void *p;
  size_t bytes;
  int pinned; /* 0: device memory, 1: registered as pinned host memory */
} blocks[FAKE_MAX_BLOCKS];
static int fake_ops;                /* operations the fake ran */
static xpar_status fake_fail_next;  /* XPAR_OK, or the status the next op returns */
static const char *fake_fail_detail; /* its detail (NULL: "fake GPU: injected failure") */
static void *fake_staging[XPAR__OPERAND_SLOTS];
static size_t fake_staging_bytes[XPAR__OPERAND_SLOTS];
static int fake_state; /* its address is the opaque per-context state */

static void *fake_register(size_t bytes, int pinned) {
  for (int i = 0; i < FAKE_MAX_BLOCKS; i++)
    if (!blocks[i].p) {
      blocks[i].p = calloc(1, bytes ? bytes : 1);
      blocks[i].bytes = bytes;
      blocks[i].pinned = pinned;
      return blocks[i].p;
    }
  fail_msg("fake GPU: out of block slots");
  return NULL;
}
static void fake_release(void *p) {
  for (int i = 0; i < FAKE_MAX_BLOCKS; i++)
    if (p && blocks[i].p == p) {
      free(p);
      blocks[i].p = NULL;
    }
}
/* The application's memory p the fake driver calls its own (pinned = 1: pinned
 * host memory, 0: device memory) until fake_disown: an address range changing
 * hands, as freed pinned memory does. */
static void fake_adopt(void *p, size_t bytes, int pinned) {
  for (int i = 0; i < FAKE_MAX_BLOCKS; i++)
    if (!blocks[i].p) {
      blocks[i].p = p;
      blocks[i].bytes = bytes;
      blocks[i].pinned = pinned;
      return;
    }
  fail_msg("fake GPU: out of block slots");
}
static void fake_disown(void *p) {
  for (int i = 0; i < FAKE_MAX_BLOCKS; i++)
    if (p && blocks[i].p == p) blocks[i].p = NULL;
}
static int fake_find_block(const void *p) {
  const char *c = p;
  for (int i = 0; i < FAKE_MAX_BLOCKS; i++)
    if (blocks[i].p && c >= (char *)blocks[i].p && c < (char *)blocks[i].p + blocks[i].bytes)
      return i;
  return -1;
}

static xpar_status fake_begin(void) {
  fake_ops++;
  if (fake_fail_next != XPAR_OK) {
    xpar_status s = fake_fail_next;
    fake_fail_next = XPAR_OK;
    return xpar__fail(s, "%s", fake_fail_detail ? fake_fail_detail : "fake GPU: injected failure");
  }
  return XPAR_OK;
}
static xpar__exec serial_exec(void) {
  xpar__exec ex = {.serial = 1, .num_threads = 1};
  return ex;
}
static xpar_status fake_reduce(const xpar__exec *ex, xpar_dtype t, xpar_reduction op,
                               const void *in, size_t n, void *result) {
  (void)ex;
  XPAR__FORWARD(fake_begin());
  xpar__exec s = serial_exec();
  return xpar__cpu_backend.reduce(&s, t, op, in, n, result);
}
static xpar_status fake_reduce_sum_wide(const xpar__exec *ex, xpar_dtype t, const void *in,
                                        size_t n, void *result) {
  (void)ex;
  XPAR__FORWARD(fake_begin());
  xpar__exec s = serial_exec();
  return xpar__cpu_backend.reduce_sum_wide(&s, t, in, n, result);
}
static xpar_status fake_scan(const xpar__exec *ex, xpar_dtype t, xpar_reduction op,
                             xpar_scan_kind kind, const xpar__scalar *init, const void *in,
                             void *out, size_t n) {
  (void)ex;
  XPAR__FORWARD(fake_begin());
  xpar__exec s = serial_exec();
  return xpar__cpu_backend.scan(&s, t, op, kind, init, in, out, n);
}
static xpar_status fake_axpy(const xpar__exec *ex, xpar_dtype t, const void *alpha,
                             const void *x, void *y, size_t n) {
  (void)ex;
  XPAR__FORWARD(fake_begin());
  xpar__exec s = serial_exec();
  return xpar__cpu_backend.axpy(&s, t, alpha, x, y, n);
}
static xpar_status fake_add(const xpar__exec *ex, xpar_dtype t, const void *x, const void *y,
                            void *z, size_t n) {
  (void)ex;
  XPAR__FORWARD(fake_begin());
  xpar__exec s = serial_exec();
  return xpar__cpu_backend.add(&s, t, x, y, z, n);
}
static xpar_status fake_fill(const xpar__exec *ex, xpar_dtype t, const void *value, void *out,
                             size_t n) {
  (void)ex;
  XPAR__FORWARD(fake_begin());
  xpar__exec s = serial_exec();
  return xpar__cpu_backend.fill(&s, t, value, out, n);
}
static xpar_status fake_dot(const xpar__exec *ex, xpar_dtype t, const void *x, const void *y,
                            size_t n, void *result) {
  (void)ex;
  XPAR__FORWARD(fake_begin());
  xpar__exec s = serial_exec();
  return xpar__cpu_backend.dot(&s, t, x, y, n, result);
}
/* Application kernels and operators: the fake runs their CPU loops (its
 * "device memory" is host memory).  A kernel built without a CPU loop
 * borrows xk_axpy_u32's, the only such kernel the tests make. */
static xpar_status fake_launch(const xpar__exec *ex, const struct xpar_kernel *k, size_t n,
                               const struct xpar_kernel_args *a) {
  (void)ex;
  XPAR__FORWARD(fake_begin());
  xpar__exec s = {.serial = 1, .num_threads = 1};
  return xpar__cpu_backend.launch(&s, k->cpu ? k : &xk_axpy_u32, n, a);
}
static xpar_status fake_op_reduce(const xpar__exec *ex, const struct xpar_operator *op, size_t n,
                                  const void *in, void *result) {
  (void)ex;
  XPAR__FORWARD(fake_begin());
  xpar__exec s = {.serial = 1, .num_threads = 1};
  return xpar__cpu_backend.op_reduce(&s, op, n, in, result);
}
static xpar_status fake_op_scan(const xpar__exec *ex, const struct xpar_operator *op,
                                xpar_scan_kind kind, size_t n, const void *in, void *out) {
  (void)ex;
  XPAR__FORWARD(fake_begin());
  xpar__exec s = {.serial = 1, .num_threads = 1};
  return xpar__cpu_backend.op_scan(&s, op, kind, n, in, out);
}
static xpar__host_scratch fake_sort_scratch; /* the fake device's sort memory */
static xpar_status fake_sort(const xpar__exec *ex, const xpar__sort_spec *spec) {
  (void)ex;
  XPAR__FORWARD(fake_begin());
  xpar__exec s = {.serial = 1, .num_threads = 1, .host_scratch = &fake_sort_scratch};
  return xpar__cpu_backend.sort(&s, spec);
}
static xpar_status fake_select(const xpar__exec *ex, const xpar__select_spec *spec) {
  XPAR__FORWARD(fake_begin());
  xpar__exec s = {.serial = 1, .num_threads = 1, .host_scratch = &fake_sort_scratch};
  /* the count of a nowait call is "device" memory: the fake device's is the host's */
  (void)ex;
  return xpar__cpu_backend.select(&s, spec);
}
static xpar_status fake_runs(const xpar__exec *ex, const xpar__runs_spec *spec) {
  XPAR__FORWARD(fake_begin());
  xpar__exec s = {.serial = 1, .num_threads = 1, .reproducible = ex->reproducible};
  return xpar__cpu_backend.runs(&s, spec);
}

static xpar_status fake_segmented(const xpar__exec *ex, const xpar__seg_spec *spec) {
  (void)ex;
  XPAR__FORWARD(fake_begin());
  xpar__exec s = {.serial = 1, .num_threads = 1};
  return xpar__cpu_backend.segmented(&s, spec);
}

static xpar_status fake_histogram(const xpar__exec *ex, const xpar__histogram_spec *spec) {
  XPAR__FORWARD(fake_begin());
  xpar__exec s = {.serial = 1, .num_threads = 1, .host_scratch = &fake_sort_scratch};
  (void)ex;
  return xpar__cpu_backend.histogram(&s, spec);
}
static xpar_status fake_query(int device, xpar_device_info *out) {
  memset(out, 0, sizeof *out);
  out->usable = 1;
  out->device_count = 1;
  out->device = device < 0 ? 0 : device;
  snprintf(out->name, sizeof out->name, "fake GPU");
  return XPAR_OK;
}
static xpar_status fake_state_create(int device, void *stream, struct xpar__cuda_state **out) {
  (void)stream;
  (void)device;
  *out = (struct xpar__cuda_state *)&fake_state;
  return XPAR_OK;
}
static void fake_state_destroy(struct xpar__cuda_state *st) { (void)st; }
static xpar_status fake_set_stream(struct xpar__cuda_state *st, void *stream) {
  (void)st, (void)stream;
  return XPAR_OK;
}
static int fake_kind_queries; /* pointer_kind calls: what the driver was asked */
static xpar_status fake_kind_status; /* XPAR_OK, or what the driver's answer is */
/* The driver's answers about [watch_lo, watch_hi) (what a test watches) */
static const char *watch_lo, *watch_hi;
static int watch_queries;
static xpar_status fake_pointer_kind(const void *p, xpar__ptr_kind *out) {
  fake_kind_queries++;
  if ((const char *)p >= watch_lo && (const char *)p < watch_hi) watch_queries++;
  if (fake_kind_status != XPAR_OK) return xpar__fail(fake_kind_status, "fake driver: query failed");
  const int i = fake_find_block(p);
  *out = i < 0 ? XPAR__PTR_HOST_PAGEABLE : blocks[i].pinned ? XPAR__PTR_HOST_PINNED : XPAR__PTR_DEVICE;
  return XPAR_OK;
}
static int fake_pointer_range(const void *p, uintptr_t *start, size_t *size) {
  const int i = fake_find_block(p);
  if (i < 0) return 0;
  *start = (uintptr_t)blocks[i].p;
  *size = blocks[i].bytes;
  return 1;
}
static xpar_status fake_alloc(struct xpar__cuda_state *st, size_t bytes, void **out) {
  (void)st;
  *out = fake_register(bytes, 0);
  return XPAR_OK;
}
static void fake_free(struct xpar__cuda_state *st, void *p) {
  (void)st;
  fake_release(p);
}
static xpar_status fake_staging_fn(struct xpar__cuda_state *st, int slot, size_t bytes,
                                   void **out) {
  (void)st;
  if (fake_staging_bytes[slot] < bytes) {
    fake_release(fake_staging[slot]);
    fake_staging[slot] = fake_register(bytes, 0);
    fake_staging_bytes[slot] = bytes;
  }
  *out = fake_staging[slot];
  return XPAR_OK;
}
static void *fake_last_copy_dst; /* where the last copy went */
static xpar_status fake_copy(struct xpar__cuda_state *st, void *dst, const void *src,
                             size_t bytes, xpar__copy_dir dir) {
  (void)st, (void)dir;
  memcpy(dst, src, bytes);
  fake_last_copy_dst = dst;
  return XPAR_OK;
}
static xpar_status fake_wait(struct xpar__cuda_state *st) {
  (void)st;
  return XPAR_OK;
}
static int fake_capturing(struct xpar__cuda_state *st) {
  (void)st;
  return 0;
}
static xpar_status fake_release_cache(struct xpar__cuda_state *st) {
  (void)st;
  for (int i = 0; i < XPAR__OPERAND_SLOTS; i++) {
    fake_release(fake_staging[i]);
    fake_staging[i] = NULL;
    fake_staging_bytes[i] = 0;
  }
  xpar__host_scratch_free(&fake_sort_scratch);
  return XPAR_OK;
}

static const xpar__backend fake_gpu = {
    .name = "fake-gpu",
    .reduce = fake_reduce,
    .reduce_sum_wide = fake_reduce_sum_wide,
    .scan = fake_scan,
    .axpy = fake_axpy,
    .add = fake_add,
    .fill = fake_fill,
    .dot = fake_dot,
    .launch = fake_launch,
    .segmented = fake_segmented,
    .op_reduce = fake_op_reduce,
    .op_scan = fake_op_scan,
    .sort = fake_sort,
    .select = fake_select,
    .runs = fake_runs,
    .histogram = fake_histogram,
    .query = fake_query,
    .state_create = fake_state_create,
    .state_destroy = fake_state_destroy,
    .set_stream = fake_set_stream,
    .pointer_kind = fake_pointer_kind,
    .pointer_range = fake_pointer_range,
    .alloc = fake_alloc,
    .free = fake_free,
    .staging = fake_staging_fn,
    .copy = fake_copy,
    .wait = fake_wait,
    .capturing = fake_capturing,
    .release_cache = fake_release_cache,
};

/* ---- helpers ------------------------------------------------------------------- */

static xpar_context *new_context(void) {
  xpar_context *ctx = NULL;
  assert_int_equal(xpar_context_create(&ctx), XPAR_OK);
  return ctx;
}

static xpar_decision last(xpar_context *ctx) {
  xpar_decision d;
  assert_int_equal(xpar_last_decision(ctx, &d), XPAR_OK);
  return d;
}

static void expect(xpar_context *ctx, const char *label, xpar_tier tier, int ops_before,
                   int gpu_ran, const char *phrase) {
  xpar_decision d = last(ctx);
  int ok = d.tier == tier && (fake_ops > ops_before) == gpu_ran &&
           (!phrase || strstr(d.reason, phrase));
  if (!ok)
    fail_msg("%s: ran on %s (fake GPU ops %d -> %d), reason \"%s\"; expected %s%s%s", label,
             xpar_tier_name(d.tier), ops_before, fake_ops, d.reason, xpar_tier_name(tier),
             phrase ? " with " : "", phrase ? phrase : "");
}

/* n int32 with a known sum: i % 7 - 3. */
static void fill_pattern(int32_t *a, size_t n) {
  for (size_t i = 0; i < n; i++) a[i] = (int32_t)(i % 7) - 3;
}
static int32_t pattern_sum(size_t n) {
  int64_t s = 0;
  for (size_t i = 0; i < n; i++) s += (int32_t)(i % 7) - 3;
  return (int32_t)s;
}

static void set_thr(xpar_context *ctx, xpar_op op, xpar_threshold which, size_t n) {
  assert_int_equal(xpar_context_set_threshold(ctx, op, XPAR_INT32, which, n), XPAR_OK);
}

/* ---- the branches ---------------------------------------------------------------- */

static void device_only_data_goes_to_the_gpu(void **state) {
  (void)state;
  xpar_context *ctx = new_context();
  const size_t n = 1000;
  int32_t *dev = fake_register(n * 4, 0);
  fill_pattern(dev, n);
  int32_t r = 0;
  /* threshold 0: device-only data always stays on the GPU */
  set_thr(ctx, XPAR_OP_REDUCE, XPAR_THRESHOLD_GPU_DEVICE_ONLY_DATA, 0);
  int before = fake_ops;
  assert_int_equal(xpar_reduce(ctx, XPAR_INT32, XPAR_SUM, dev, n, &r), XPAR_OK);
  expect(ctx, "device data, AUTO", XPAR_TIER_CUDA, before, 1, "valid only on the device");
  assert_int_equal(r, pattern_sum(n));
  /* a tiny call below the device-only threshold: copied to the host and run
   * on the CPU (the copies cost less than a launch and its sync) */
  set_thr(ctx, XPAR_OP_REDUCE, XPAR_THRESHOLD_GPU_DEVICE_ONLY_DATA, n + 1);
  before = fake_ops;
  r = 0;
  assert_int_equal(xpar_reduce(ctx, XPAR_INT32, XPAR_SUM, dev, n, &r), XPAR_OK);
  expect(ctx, "device data below its threshold, AUTO", XPAR_TIER_CPU_SERIAL, before, 0,
         "n=1000 below GPU threshold 1001 (api) for data valid only on the device");
  assert_true(last(ctx).bytes_to_host == n * 4);
  assert_int_equal(r, pattern_sum(n));
  /* at the threshold: the GPU again, and the record quotes it */
  set_thr(ctx, XPAR_OP_REDUCE, XPAR_THRESHOLD_GPU_DEVICE_ONLY_DATA, n);
  before = fake_ops;
  r = 0;
  assert_int_equal(xpar_reduce(ctx, XPAR_INT32, XPAR_SUM, dev, n, &r), XPAR_OK);
  expect(ctx, "device data at its threshold, AUTO", XPAR_TIER_CUDA, before, 1,
         "n=1000 at or above GPU threshold 1000 (api) for data valid only on the device");
  assert_int_equal(r, pattern_sum(n));
  /* forced CPU: the device array is copied to the host, never dereferenced
   * in place by the CPU backend (the fake's copy is a memcpy) */
  assert_int_equal(xpar_context_set_backend(ctx, XPAR_BACKEND_CPU), XPAR_OK);
  before = fake_ops;
  r = 0;
  assert_int_equal(xpar_reduce(ctx, XPAR_INT32, XPAR_SUM, dev, n, &r), XPAR_OK);
  expect(ctx, "device data, forced CPU", XPAR_TIER_CPU_SERIAL, before, 0, NULL);
  assert_true(last(ctx).bytes_to_host == n * 4);
  assert_int_equal(r, pattern_sum(n));
  fake_release(dev);
  xpar_context_destroy(ctx);
}

static void host_data_thresholds(void **state) {
  (void)state;
  xpar_context *ctx = new_context();
  set_thr(ctx, XPAR_OP_REDUCE, XPAR_THRESHOLD_GPU_PINNED_DATA, 4096);
  set_thr(ctx, XPAR_OP_REDUCE, XPAR_THRESHOLD_GPU_PAGEABLE_DATA, 65536);
  const size_t big = 100000;
  int32_t *pinned = fake_register(big * 4, 1);
  int32_t *pageable = malloc(big * 4);
  fill_pattern(pinned, big);
  fill_pattern(pageable, big);
  int32_t r;
  struct {
    int32_t *a;
    size_t n;
    xpar_tier tier;
    const char *phrase;
  } cases[] = {
      /* Below both, the host fast path asks about a pointer the page cache
       * does not hold (pinned pages are never cached): the kind is exact. */
      {pinned, 100, XPAR_TIER_CPU_SERIAL, "for pinned host data"},
      {pinned, 5000, XPAR_TIER_CUDA, "pinned host data"},        /* asked: pinned      */
      {pageable, 5000, XPAR_TIER_CPU_SERIAL, "pageable host data"}, /* asked: pageable */
      {pageable, 70000, XPAR_TIER_CUDA, "pageable host data"},
      {pinned, 100, XPAR_TIER_CPU_SERIAL, "for pinned host data"}, /* asked again */
      /* a cached pageable page below both: a hint, quoted for host data */
      {pageable, 100, XPAR_TIER_CPU_SERIAL, "for host data"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    int before = fake_ops;
    r = 0;
    assert_int_equal(xpar_reduce(ctx, XPAR_INT32, XPAR_SUM, cases[k].a, cases[k].n, &r), XPAR_OK);
    char label[64];
    snprintf(label, sizeof label, "host data case %zu (n=%zu)", k, cases[k].n);
    expect(ctx, label, cases[k].tier, before, cases[k].tier == XPAR_TIER_CUDA, cases[k].phrase);
    assert_int_equal(r, pattern_sum(cases[k].n));
    if (cases[k].tier == XPAR_TIER_CUDA) assert_true(last(ctx).bytes_to_device == cases[k].n * 4);
  }
  fake_release(pinned);
  free(pageable);
  xpar_context_destroy(ctx);
}

static void mapped_in_sync_and_stale(void **state) {
  (void)state;
  xpar_context *ctx = new_context();
  const size_t n = 2048;
  int32_t *a = malloc(n * 4);
  fill_pattern(a, n);
  assert_int_equal(xpar_map(ctx, a, n * 4, XPAR_MAP_TO), XPAR_OK);
  set_thr(ctx, XPAR_OP_REDUCE, XPAR_THRESHOLD_GPU_DEVICE_DATA, 0);
  int32_t r = 0;
  int before = fake_ops;
  assert_int_equal(xpar_reduce(ctx, XPAR_INT32, XPAR_SUM, a, n, &r), XPAR_OK);
  expect(ctx, "mapped, in sync, device threshold 0", XPAR_TIER_CUDA, before, 1, "device data");
  assert_true(last(ctx).bytes_to_device == 0);
  assert_int_equal(r, pattern_sum(n));

  /* A CPU write makes the device copy stale: AUTO then prices the array as
   * host data (pageable: never by default) and stays on the CPU. */
  const int32_t seven = 7;
  assert_int_equal(xpar_context_set_backend(ctx, XPAR_BACKEND_CPU), XPAR_OK);
  assert_int_equal(xpar_fill(ctx, XPAR_INT32, &seven, a, n), XPAR_OK);
  assert_int_equal(xpar_context_set_backend(ctx, XPAR_BACKEND_AUTO), XPAR_OK);
  before = fake_ops;
  assert_int_equal(xpar_reduce(ctx, XPAR_INT32, XPAR_SUM, a, n, &r), XPAR_OK);
  expect(ctx, "mapped, stale device copy", XPAR_TIER_CPU_SERIAL, before, 0, "pageable host data");
  assert_int_equal(r, (int32_t)(7 * n));

  /* A GPU write makes the host copy stale: the data is then device-only. */
  assert_int_equal(xpar_context_set_backend(ctx, XPAR_BACKEND_CUDA), XPAR_OK);
  const int32_t three = 3;
  assert_int_equal(xpar_fill(ctx, XPAR_INT32, &three, a, n), XPAR_OK);
  assert_int_equal(xpar_context_set_backend(ctx, XPAR_BACKEND_AUTO), XPAR_OK);
  set_thr(ctx, XPAR_OP_REDUCE, XPAR_THRESHOLD_GPU_DEVICE_DATA, XPAR_NEVER);
  /* the device-only rule, not its calibrated size: n is above the threshold */
  set_thr(ctx, XPAR_OP_REDUCE, XPAR_THRESHOLD_GPU_DEVICE_ONLY_DATA, n);
  before = fake_ops;
  assert_int_equal(xpar_reduce(ctx, XPAR_INT32, XPAR_SUM, a, n, &r), XPAR_OK);
  expect(ctx, "mapped, written by the GPU", XPAR_TIER_CUDA, before, 1, "valid only on the device");
  assert_int_equal(r, (int32_t)(3 * n));
  assert_int_equal(xpar_unmap(ctx, a, XPAR_UNMAP_FROM), XPAR_OK);
  assert_int_equal(a[0], 3);
  free(a);
  xpar_context_destroy(ctx);
}

static void offload_mandatory_and_disabled(void **state) {
  (void)state;
  xpar_context *ctx = new_context();
  const size_t n = 64;
  int32_t a[64], r = 0;
  fill_pattern(a, n);
  assert_int_equal(xpar_context_set_offload(ctx, XPAR_OFFLOAD_MANDATORY), XPAR_OK);
  int before = fake_ops;
  assert_int_equal(xpar_reduce(ctx, XPAR_INT32, XPAR_SUM, a, n, &r), XPAR_OK);
  expect(ctx, "mandatory, tiny host array", XPAR_TIER_CUDA, before, 1, "offload mandatory");
  assert_int_equal(r, pattern_sum(n));
  assert_int_equal(xpar_context_set_offload(ctx, XPAR_OFFLOAD_DISABLED), XPAR_OK);
  set_thr(ctx, XPAR_OP_REDUCE, XPAR_THRESHOLD_GPU_PAGEABLE_DATA, 0);
  before = fake_ops;
  assert_int_equal(xpar_reduce(ctx, XPAR_INT32, XPAR_SUM, a, n, &r), XPAR_OK);
  expect(ctx, "disabled, GPU threshold 0", XPAR_TIER_CPU_SERIAL, before, 0, "offload disabled");
  xpar_context_destroy(ctx);
}

static void forced_gpu_tiers(void **state) {
  (void)state;
  xpar_context *ctx = new_context();
  const size_t n = 300;
  int32_t a[300], out[300];
  fill_pattern(a, n);
  const xpar_backend backends[] = {XPAR_BACKEND_CUDA, XPAR_BACKEND_CUDA_SERIAL};
  const xpar_tier tiers[] = {XPAR_TIER_CUDA, XPAR_TIER_CUDA_SERIAL};
  for (int k = 0; k < 2; k++) {
    assert_int_equal(xpar_context_set_backend(ctx, backends[k]), XPAR_OK);
    memset(out, 0x5a, sizeof out);
    int before = fake_ops;
    assert_int_equal(xpar_scan(ctx, XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE, a, out, n), XPAR_OK);
    expect(ctx, "forced GPU scan", tiers[k], before, 1, "forced to the GPU");
    int32_t run = 0;
    for (size_t i = 0; i < n; i++) {
      run += a[i];
      assert_int_equal(out[i], run);
    }
  }
  xpar_context_destroy(ctx);
}

static void gpu_failure_falls_back_or_fails(void **state) {
  (void)state;
  xpar_context *ctx = new_context();
  const size_t n = 5000;
  int32_t *pinned = fake_register(n * 4, 1);
  fill_pattern(pinned, n);
  set_thr(ctx, XPAR_OP_REDUCE, XPAR_THRESHOLD_GPU_PINNED_DATA, 1000);
  int32_t r = 0;
  fake_fail_next = XPAR_ERR_DEVICE_OUT_OF_MEMORY;
  int before = fake_ops;
  assert_int_equal(xpar_reduce(ctx, XPAR_INT32, XPAR_SUM, pinned, n, &r), XPAR_OK);
  expect(ctx, "AUTO, GPU out of memory", XPAR_TIER_CPU_SERIAL, before, 1, "fell back to the CPU");
  assert_int_equal(r, pattern_sum(n));

  /* Forced to the GPU: the failure is the caller's, and nothing is written. */
  assert_int_equal(xpar_context_set_backend(ctx, XPAR_BACKEND_CUDA), XPAR_OK);
  fake_fail_next = XPAR_ERR_DEVICE_OUT_OF_MEMORY;
  r = 12345;
  assert_int_equal(xpar_reduce(ctx, XPAR_INT32, XPAR_SUM, pinned, n, &r),
                   XPAR_ERR_DEVICE_OUT_OF_MEMORY);
  assert_int_equal(r, 12345);
  assert_true(strstr(xpar_last_error_detail(), "injected") != NULL);
  assert_int_equal(last(ctx).tier, XPAR_TIER_NONE);
  fake_release(pinned);
  xpar_context_destroy(ctx);
}

static void nowait_into_device_memory(void **state) {
  (void)state;
  xpar_context *ctx = new_context();
  const size_t n = 777;
  int32_t *dev = fake_register(n * 4, 0), *res = fake_register(4, 0);
  fill_pattern(dev, n);
  *res = -1;
  int before = fake_ops;
  assert_int_equal(xpar_reduce_nowait(ctx, XPAR_INT32, XPAR_SUM, dev, n, res), XPAR_OK);
  expect(ctx, "nowait reduce of device data", XPAR_TIER_CUDA, before, 1, NULL);
  assert_int_equal(xpar_wait(ctx), XPAR_OK);
  assert_int_equal(*res, pattern_sum(n));
  fake_release(dev);
  fake_release(res);
  xpar_context_destroy(ctx);
}

/* A synchronous reduce or dot whose result is device memory, on host data small enough for
 * the CPU: the CPU tier never writes it in place (the host fast path leaves the call to
 * the general path, which copies a local result there), the call is never remembered as
 * a repeat, and a host result on the same context takes the fast path again. */
static void synchronous_result_in_device_memory(void **state) {
  (void)state;
  xpar_context *ctx = new_context();
  const size_t n = 100;
  int32_t host[100];
  fill_pattern(host, n);
  int32_t *res = fake_register(4, 0);
  int64_t *wide = fake_register(8, 0);
  for (int call = 0; call < 2; call++) {
    const unsigned long fast = ctx->fast_path_calls, repeats = ctx->repeat_calls;
    *res = -1;
    fake_last_copy_dst = NULL;
    assert_int_equal(xpar_reduce(ctx, XPAR_INT32, XPAR_SUM, host, n, res), XPAR_OK);
    assert_true(last(ctx).tier == XPAR_TIER_CPU_SERIAL || last(ctx).tier == XPAR_TIER_CPU_OPENMP);
    assert_ptr_equal(fake_last_copy_dst, res);
    assert_int_equal(*res, pattern_sum(n));
    *res = -1;
    fake_last_copy_dst = NULL;
    assert_int_equal(xpar_dot(ctx, XPAR_INT32, host, host, n, res), XPAR_OK);
    assert_ptr_equal(fake_last_copy_dst, res);
    int32_t dot = 0;
    for (size_t i = 0; i < n; i++) dot += host[i] * host[i];
    assert_int_equal(*res, dot);
    *wide = -1;
    fake_last_copy_dst = NULL;
    assert_int_equal(xpar_reduce_sum_wide(ctx, XPAR_INT32, host, n, wide), XPAR_OK);
    assert_ptr_equal(fake_last_copy_dst, wide);
    assert_true(*wide == pattern_sum(n));
    assert_true(ctx->fast_path_calls == fast && ctx->repeat_calls == repeats);
  }
  int32_t r = -1;
  const unsigned long fast = ctx->fast_path_calls;
  assert_int_equal(xpar_reduce(ctx, XPAR_INT32, XPAR_SUM, host, n, &r), XPAR_OK);
  assert_int_equal(r, pattern_sum(n));
  assert_true(ctx->fast_path_calls == fast + 1);
  /* a device result not aligned to its type: refused, nothing written */
  unsigned char *raw = fake_register(16, 0);
  memset(raw, 0x5A, 16);
  assert_int_equal(xpar_reduce(ctx, XPAR_INT32, XPAR_SUM, host, n, raw + 2),
                   XPAR_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(xpar_last_error_detail(), "not aligned"));
  for (int i = 0; i < 16; i++) assert_int_equal(raw[i], 0x5A);
  fake_release(raw);
  /* a pinned result: the fast path, its repeats ask it again (one look-up each) */
  int32_t *pinned = fake_register(4, 1);
  for (int call = 0; call < 4; call++) {
    const unsigned long repeats = ctx->repeat_calls;
    const int queries = fake_kind_queries;
    *pinned = -1;
    assert_int_equal(xpar_reduce(ctx, XPAR_INT32, XPAR_SUM, host, n, pinned), XPAR_OK);
    assert_int_equal(*pinned, pattern_sum(n));
    if (call >= 2) {
      assert_true(ctx->repeat_calls == repeats + 1);
      assert_true(fake_kind_queries == queries + 1);
    }
  }
  fake_release(pinned);
  /* forced onto the GPU: its reduce writes the device result */
  assert_int_equal(xpar_context_set_backend(ctx, XPAR_BACKEND_CUDA), XPAR_OK);
  *res = -1;
  const int before = fake_ops;
  assert_int_equal(xpar_reduce(ctx, XPAR_INT32, XPAR_SUM, host, n, res), XPAR_OK);
  expect(ctx, "forced GPU, device result", XPAR_TIER_CUDA, before, 1, NULL);
  assert_int_equal(*res, pattern_sum(n));
  fake_release(res);
  fake_release(wide);
  xpar_context_destroy(ctx);
}

/* A page inside an allocation the driver has called its own is never cached
 * as pageable (page_cache.h): pageable memory mapped over a freed pinned
 * range, unmapped, then handed out again as device memory must not be read
 * on the CPU from a stale entry; and a cached page that a newly named driver
 * allocation covers is dropped. */
static void driver_ranges_are_not_cached(void **state) {
  (void)state;
  xpar_context *ctx = new_context();
  const int32_t v = 7;
  /* Both live throughout: two must not reuse buf's addresses, which stay in the
   * driver's ranges once named. */
  int32_t *buf = aligned_alloc(4096, 2 * 4096), *two = aligned_alloc(4096, 2 * 4096);
  assert_non_null(buf);
  assert_non_null(two);
  /* Only the driver's answers about buf count (the fill value's page is another's). */
  watch_lo = (const char *)buf;
  watch_hi = (const char *)buf + 2 * 4096;
  /* pinned: asked, and its allocation (both pages) noted */
  fake_adopt(buf, 2 * 4096, 1);
  assert_int_equal(xpar_fill(ctx, XPAR_INT32, &v, buf, 16), XPAR_OK);
  /* pageable again (unmapped, mapped again): asked on every call, not cached */
  fake_disown(buf);
  for (int i = 0; i < 3; i++) {
    const int queries = watch_queries;
    assert_int_equal(xpar_fill(ctx, XPAR_INT32, &v, buf + 1024, 16), XPAR_OK);
    if (watch_queries != queries + 1)
      fail_msg("call %d on pageable memory inside a driver range asked %d times, not once", i,
               watch_queries - queries);
  }
  /* device memory at the same addresses: the call must see device data */
  fake_adopt(buf, 2 * 4096, 0);
  assert_int_equal(xpar_fill(ctx, XPAR_INT32, &v, buf + 1024, 16), XPAR_OK);
  xpar_decision d;
  assert_int_equal(xpar_last_decision(ctx, &d), XPAR_OK);
  if (!strstr(d.reason, "device")) fail_msg("decided \"%s\" without seeing device data", d.reason);
  fake_disown(buf);

  /* a cached pageable page, then the driver names an allocation covering it */
  watch_lo = (const char *)two;
  watch_hi = (const char *)two + 2 * 4096;
  assert_int_equal(xpar_fill(ctx, XPAR_INT32, &v, two, 16), XPAR_OK);
  int queries = watch_queries;
  assert_int_equal(xpar_fill(ctx, XPAR_INT32, &v, two, 16), XPAR_OK);
  assert_int_equal(watch_queries, queries); /* cached */
  fake_adopt(two, 2 * 4096, 1);
  assert_int_equal(xpar_fill(ctx, XPAR_INT32, &v, two + 1024, 16), XPAR_OK); /* pinned: noted */
  fake_disown(two);
  queries = watch_queries;
  assert_int_equal(xpar_fill(ctx, XPAR_INT32, &v, two, 16), XPAR_OK);
  assert_int_equal(watch_queries, queries + 1); /* dropped from the cache: asked */
  watch_lo = watch_hi = NULL;
  free(buf);
  free(two);
  xpar_context_destroy(ctx);
}

/* xpar_memory_query asks the driver every time (never the page cache), and a
 * query between two calls leaves the second a repeat. */
static void memory_query_asks_the_driver(void **state) {
  (void)state;
  xpar_context *ctx = new_context();
  const size_t n = 100;
  int32_t host[100];
  fill_pattern(host, n);
  int32_t *dev = fake_register(64, 0), *pinned = fake_register(64, 1);
  xpar_memory_kind k = XPAR_MEMORY_KIND_COUNT_;
  const struct {
    const void *p;
    xpar_memory_kind want;
  } cases[] = {{host, XPAR_MEMORY_HOST}, {dev, XPAR_MEMORY_DEVICE}, {dev + 15, XPAR_MEMORY_DEVICE},
               {pinned, XPAR_MEMORY_PINNED}};
  int32_t r = 0;
  assert_int_equal(xpar_reduce(ctx, XPAR_INT32, XPAR_SUM, host, n, &r), XPAR_OK);
  assert_int_equal(xpar_reduce(ctx, XPAR_INT32, XPAR_SUM, host, n, &r), XPAR_OK);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const int queries = fake_kind_queries;
    assert_int_equal(xpar_memory_query(ctx, cases[i].p, 4, &k), XPAR_OK);
    assert_int_equal(k, cases[i].want);
    assert_int_equal(fake_kind_queries, queries + 1);
  }
  /* a page no call has classified: asked, not stored (a new page would end the repeats) */
  int32_t *fresh = malloc(8192);
  assert_non_null(fresh);
  assert_int_equal(xpar_memory_query(ctx, fresh + 1024, 4, &k), XPAR_OK);
  assert_int_equal(k, XPAR_MEMORY_HOST);
  const unsigned long repeats = ctx->repeat_calls;
  assert_int_equal(xpar_reduce(ctx, XPAR_INT32, XPAR_SUM, host, n, &r), XPAR_OK);
  assert_int_equal(r, pattern_sum(n));
  assert_true(ctx->repeat_calls == repeats + 1);
  free(fresh);
  /* a driver failure is the query's status, and the kind is not written */
  k = XPAR_MEMORY_KIND_COUNT_;
  fake_kind_status = XPAR_ERR_DEVICE;
  assert_int_equal(xpar_memory_query(ctx, host, 4, &k), XPAR_ERR_DEVICE);
  fake_kind_status = XPAR_OK;
  assert_int_equal(k, XPAR_MEMORY_KIND_COUNT_);
  fake_release(dev);
  fake_release(pinned);
  xpar_context_destroy(ctx);
}

/* A scalar input in device memory (alpha, a fill value, a scan's init) is
 * refused before anything reads it, also after a repeat of the same call with
 * a host scalar (the repeat compares the scalar's pointer). */
static void device_scalars_refused(void **state) {
  (void)state;
  xpar_context *ctx = new_context();
  const size_t n = 100;
  int32_t x[100], y[100];
  fill_pattern(x, n);
  int32_t *dev = fake_register(16, 0);
  const int32_t two = 2;
  for (int i = 0; i < 3; i++)
    assert_int_equal(xpar_axpy(ctx, XPAR_INT32, &two, x, y, n), XPAR_OK);
  assert_true(ctx->repeat_calls >= 1);
  const int queries = fake_kind_queries;
  for (size_t i = 0; i < n; i++) y[i] = 0x3C3C3C3C;
  assert_int_equal(xpar_axpy(ctx, XPAR_INT32, dev, x, y, n), XPAR_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(xpar_last_error_detail(), "alpha"));
  assert_non_null(strstr(xpar_last_error_detail(), "device memory"));
  assert_true(fake_kind_queries > queries);
  assert_int_equal(xpar_fill(ctx, XPAR_INT32, dev, y, n), XPAR_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(xpar_last_error_detail(), "value"));
  assert_int_equal(
      xpar_scan_init(ctx, XPAR_INT32, XPAR_SUM, XPAR_EXCLUSIVE, dev, x, y, n),
      XPAR_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(xpar_last_error_detail(), "init"));
  assert_int_equal(xpar_axpy_nowait(ctx, XPAR_INT32, dev, x, y, n), XPAR_ERR_INVALID_ARGUMENT);
  for (size_t i = 0; i < n; i++) assert_int_equal(y[i], 0x3C3C3C3C);
  /* a pinned scalar is fine, but never repeated (freed, its address can come back
   * as device memory); n = 0 reads no scalar */
  int32_t *pinned = fake_register(4, 1);
  *pinned = 3;
  const unsigned long repeats = ctx->repeat_calls;
  for (int call = 0; call < 3; call++) {
    assert_int_equal(xpar_fill(ctx, XPAR_INT32, pinned, y, n), XPAR_OK);
    for (size_t i = 0; i < n; i++) assert_int_equal(y[i], 3);
  }
  assert_true(ctx->repeat_calls == repeats);
  assert_int_equal(xpar_fill(ctx, XPAR_INT32, dev, y, 0), XPAR_OK);
  fake_release(pinned);
  fake_release(dev);
  xpar_context_destroy(ctx);
}

/* ---- application kernels and operators --------------------------------------- */

/* Stands for a GPU variant: the fake backend never calls it. */
static int fake_kernel_gpu(size_t n, const xpar_kernel_args *a, unsigned grid, unsigned block,
                           void *stream, const xpar_kernel_done *done) {
  (void)n, (void)a, (void)grid, (void)block, (void)stream, (void)done;
  fail_msg("the fake GPU called a kernel's GPU variant");
  return 1;
}
static int fake_operator_gpu(const xpar_operator_gpu_call *c) {
  (void)c;
  fail_msg("the fake GPU called an operator's GPU variant");
  return 1;
}

static void kernels_through_the_policy(void **state) {
  (void)state;
  enum { KN = 1000 };
  static uint32_t x[KN], y[KN], y0[KN];
  uint32_t a = 3;
  for (size_t i = 0; i < KN; i++) x[i] = (uint32_t)(i * 2654435761u), y0[i] = (uint32_t)i;
  xpar_kernel k = xk_axpy_u32; /* as if built with CUDA */
  k.gpu = fake_kernel_gpu;
  xpar_arg args[3] = {XPAR_ARG_SCALAR_OF(XPAR_UINT32, &a), XPAR_ARG_IN(XPAR_UINT32, x, KN),
                      XPAR_ARG_INOUT(XPAR_UINT32, y, KN)};
  xpar_context *ctx = new_context();

  /* Host data below the kernel's thresholds: the CPU. */
  memcpy(y, y0, sizeof y);
  int ops = fake_ops;
  assert_int_equal(xpar_launch(ctx, &k, KN, args, 3), XPAR_OK);
  expect(ctx, "kernel, host data, defaults", XPAR_TIER_CPU_SERIAL, ops, 0,
         "GPU threshold never (default) for");
  /* The kernel's own pageable threshold at 0: the GPU, x and y staged in, y out. */
  assert_int_equal(xpar_context_set_kernel_threshold(ctx, &k, XPAR_THRESHOLD_GPU_PAGEABLE_DATA, 0),
                   XPAR_OK);
  memcpy(y, y0, sizeof y);
  ops = fake_ops;
  assert_int_equal(xpar_launch(ctx, &k, KN, args, 3), XPAR_OK);
  expect(ctx, "kernel, threshold 0 (api)", XPAR_TIER_CUDA, ops, 1,
         "at or above GPU threshold 0 (api) for pageable host data");
  xpar_decision d = last(ctx);
  assert_int_equal(d.bytes_to_device, 2 * sizeof x);
  assert_int_equal(d.bytes_to_host, sizeof y);
  for (size_t i = 0; i < KN; i++) assert_int_equal(y[i], (uint32_t)(a * x[i] + y0[i]));

  /* Device data: the GPU whatever the thresholds. */
  xpar_context *dctx = new_context();
  uint32_t *dx = fake_register(sizeof x, 0), *dy = fake_register(sizeof y, 0);
  memcpy(dx, x, sizeof x);
  memcpy(dy, y0, sizeof y);
  xpar_arg dargs[3] = {XPAR_ARG_SCALAR_OF(XPAR_UINT32, &a), XPAR_ARG_IN(XPAR_UINT32, dx, KN),
                       XPAR_ARG_INOUT(XPAR_UINT32, dy, KN)};
  ops = fake_ops;
  assert_int_equal(xpar_launch(dctx, &k, KN, dargs, 3), XPAR_OK);
  expect(dctx, "kernel, device data", XPAR_TIER_CUDA, ops, 1, "data valid only on the device");
  /* Forced serial: staged through the host and back. */
  assert_int_equal(xpar_context_set_backend(dctx, XPAR_BACKEND_CPU_SERIAL), XPAR_OK);
  memcpy(dy, y0, sizeof y);
  ops = fake_ops;
  assert_int_equal(xpar_launch(dctx, &k, KN, dargs, 3), XPAR_OK);
  expect(dctx, "kernel, device data, forced serial", XPAR_TIER_CPU_SERIAL, ops, 0, NULL);
  d = last(dctx);
  assert_int_equal(d.bytes_to_host, 2 * sizeof x);
  assert_int_equal(d.bytes_to_device, sizeof y);
  for (size_t i = 0; i < KN; i++) assert_int_equal(dy[i], (uint32_t)(a * x[i] + y0[i]));
  /* An operator on device data: the GPU (fake), the right sum. */
  assert_int_equal(xpar_context_set_backend(dctx, XPAR_BACKEND_AUTO), XPAR_OK);
  xpar_operator op = xk_sum_u32;
  op.gpu_reduce = op.gpu_scan = fake_operator_gpu;
  uint32_t sum = 0, want = 0;
  for (size_t i = 0; i < KN; i++) want += x[i];
  ops = fake_ops;
  assert_int_equal(xpar_reduce_op(dctx, &op, dx, KN, &sum), XPAR_OK);
  expect(dctx, "operator reduce, device data", XPAR_TIER_CUDA, ops, 1, NULL);
  assert_int_equal(sum, want);
  fake_release(dx);
  fake_release(dy);
  xpar_context_destroy(dctx);

  /* No GPU variant with a usable GPU: AUTO stays on the CPU and says why;
   * a forced GPU backend is refused. */
  uint32_t sq[KN];
  xpar_arg sargs[2] = {XPAR_ARG_IN(XPAR_UINT32, x, KN), XPAR_ARG_OUT(XPAR_UINT32, sq, KN)};
  assert_int_equal(xpar_context_set_kernel_threshold(ctx, &xk_square_cpu_only,
                                                     XPAR_THRESHOLD_GPU_PAGEABLE_DATA, 0),
                   XPAR_OK);
  ops = fake_ops;
  assert_int_equal(xpar_launch(ctx, &xk_square_cpu_only, KN, sargs, 2), XPAR_OK);
  expect(ctx, "no GPU variant", XPAR_TIER_CPU_SERIAL, ops, 0,
         "kernel xk_square_cpu_only has no GPU variant in this build");
  assert_int_equal(xpar_context_set_backend(ctx, XPAR_BACKEND_CUDA), XPAR_OK);
  assert_int_equal(xpar_launch(ctx, &xk_square_cpu_only, KN, sargs, 2), XPAR_ERR_NOT_SUPPORTED);
  /* No CPU variant: AUTO takes the GPU below every threshold. */
  assert_int_equal(xpar_context_set_backend(ctx, XPAR_BACKEND_AUTO), XPAR_OK);
  xpar_kernel gpu_only = k;
  gpu_only.cpu = NULL;
  gpu_only.name = "gpu_only";
  memcpy(y, y0, sizeof y);
  ops = fake_ops;
  assert_int_equal(xpar_launch(ctx, &gpu_only, KN, args, 3), XPAR_OK);
  expect(ctx, "no CPU variant", XPAR_TIER_CUDA, ops, 1, "kernel gpu_only has no CPU variant");
  for (size_t i = 0; i < KN; i++) assert_int_equal(y[i], (uint32_t)(a * x[i] + y0[i]));
  xpar_context_destroy(ctx);
}

/* ---- the host fast path against the general path -------------------------------- */

/* Not in any header (dispatch/dispatch.c): every call of ctx through the
 * general path. */
void xpar__dispatch_fast_path_off(xpar_context *ctx, int off);

enum { ST_UNMAPPED, ST_BOTH, ST_HOST, ST_DEVICE, ST_COUNT };
static const char *const st_names[ST_COUNT] = {"unmapped", "valid both", "host only",
                                               "device only"};
enum {
  FP_FILL, FP_ADD, FP_AXPY, FP_SCAN, FP_SCAN_INPLACE, FP_REDUCE, FP_DOT,
  FP_ADD_OUT_Y, FP_ADD_X_X, FP_AXPY_SAME, FP_DOT_X_X, FP_COUNT
};
static const char *const fp_names[FP_COUNT] = {
    "fill", "add", "axpy", "scan", "scan in place", "reduce", "dot",
    "add(x, y, y)", "add(x, x, out)", "axpy(x, x)", "dot(x, x)"};
#define FP_N 256

typedef struct fp_scene {
  int op, in_state, out_state, out_whole, gpu_device_data_zero, offload_disabled;
  xpar_backend backend;
} fp_scene;

/* Three calls: the second sees what the first left, and the third repeats
 * the second (a call the fast path decided from page-cache answers alone is
 * remembered and run again without deciding: dispatch.c, repeat_of). */
#define FP_CALLS 3
typedef struct fp_outcome {
  xpar_status status[FP_CALLS];
  xpar_tier tier[FP_CALLS];
  char reason[FP_CALLS][512];
  size_t to_host[FP_CALLS], to_device[FP_CALLS];
  int gpu_ops[FP_CALLS];
  int valid[3][FP_CALLS]; /* each array's mapping after each call (-1: none) */
  unsigned long fast_calls;   /* calls the host fast path ran */
  unsigned long repeat_calls; /* of which repeats of the call before */
  int32_t x[2 * FP_N], y[2 * FP_N], out[2 * FP_N], result;
} fp_outcome;

/* Bring a freshly mapped array (valid on both sides) to `state`: the copy
 * that is not valid is poisoned, so reading it would show. */
static void fp_set_state(xpar_context *ctx, int32_t *a, size_t bytes, int state) {
  if (state == ST_UNMAPPED) return;
  assert_int_equal(xpar_map(ctx, a, bytes, XPAR_MAP_TO), XPAR_OK);
  xpar__mapping *m;
  assert_int_equal(xpar__mapping_holding(ctx, a, bytes, &m), 1);
  if (state == ST_HOST) {
    memset(m->device, 0x5A, bytes);
    m->valid = XPAR__VALID_HOST;
  } else if (state == ST_DEVICE) {
    memcpy(m->device, a, bytes);
    memset(a, 0x5A, bytes);
    m->valid = XPAR__VALID_DEVICE;
  }
}

static int fp_valid(xpar_context *ctx, const int32_t *a) {
  xpar__mapping *m;
  return xpar__mapping_holding(ctx, a, 4, &m) == 1 ? m->valid : -1;
}

/* The arrays of a scene, at the same addresses for both paths: which of them
 * share a 4 KiB page decides what the page cache answers (an array whose page
 * another one's classification cached is a hint in the decision record), so
 * the two runs must see one layout.  x and y share a page here, out has its
 * own. */
typedef struct fp_arrays {
  _Alignas(4096) int32_t x[2 * FP_N];
  int32_t y[2 * FP_N];
  int32_t out[2 * FP_N];
  int32_t result;
} fp_arrays;
static fp_arrays fp_workspace;

static void fp_run(const fp_scene *sc, int fast_off, fp_outcome *o) {
  memset(o, 0, sizeof *o);
  fp_arrays *w = &fp_workspace;
  w->result = (int32_t)0x5A5A5A5A; /* a run that writes no result must show it */
  xpar_context *ctx = new_context();
  xpar__dispatch_fast_path_off(ctx, fast_off);
  const size_t n = FP_N, out_len = sc->out_whole ? n : 2 * n;
  for (size_t i = 0; i < 2 * n; i++) {
    w->x[i] = (int32_t)(i % 7) - 3;
    w->y[i] = (int32_t)(i % 5) - 2;
    w->out[i] = (int32_t)(i % 3);
  }
  const xpar_op ops[FP_COUNT] = {XPAR_OP_FILL, XPAR_OP_ADD,  XPAR_OP_AXPY, XPAR_OP_SCAN,
                                 XPAR_OP_SCAN, XPAR_OP_REDUCE, XPAR_OP_DOT, XPAR_OP_ADD,
                                 XPAR_OP_ADD,  XPAR_OP_AXPY,   XPAR_OP_DOT};
  const xpar_op op = ops[sc->op];
  set_thr(ctx, op, XPAR_THRESHOLD_GPU_DEVICE_DATA, sc->gpu_device_data_zero ? 0 : XPAR_NEVER);
  /* Which arrays the call passes (an aliased one is mapped once, with the
   * state of the array it stands for). */
  const int has_x = sc->op != FP_FILL;
  const int has_y = sc->op == FP_ADD || sc->op == FP_DOT || sc->op == FP_ADD_OUT_Y;
  const int has_out = sc->op <= FP_SCAN || sc->op == FP_ADD_X_X;
  if (has_x) fp_set_state(ctx, w->x, n * 4, sc->in_state);
  if (has_y) fp_set_state(ctx, w->y, n * 4, sc->in_state);
  if (has_out) fp_set_state(ctx, w->out, out_len * 4, sc->out_state);
  assert_int_equal(xpar_context_set_backend(ctx, sc->backend), XPAR_OK);
  if (sc->offload_disabled)
    assert_int_equal(xpar_context_set_offload(ctx, XPAR_OFFLOAD_DISABLED), XPAR_OK);
  const int32_t two = 2;
  for (int call = 0; call < FP_CALLS; call++) {
    int before = fake_ops;
    xpar_status s = XPAR_OK;
    switch (sc->op) {
      case FP_FILL: s = xpar_fill(ctx, XPAR_INT32, &two, w->out, n); break;
      case FP_ADD: s = xpar_add(ctx, XPAR_INT32, w->x, w->y, w->out, n); break;
      case FP_AXPY: s = xpar_axpy(ctx, XPAR_INT32, &two, w->x, w->out, n); break;
      case FP_SCAN:
        s = xpar_scan(ctx, XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE, w->x, w->out, n);
        break;
      case FP_SCAN_INPLACE:
        s = xpar_scan(ctx, XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE, w->x, w->x, n);
        break;
      case FP_REDUCE: s = xpar_reduce(ctx, XPAR_INT32, XPAR_SUM, w->x, n, &w->result); break;
      case FP_DOT: s = xpar_dot(ctx, XPAR_INT32, w->x, w->y, n, &w->result); break;
      case FP_ADD_OUT_Y: s = xpar_add(ctx, XPAR_INT32, w->x, w->y, w->y, n); break;
      case FP_ADD_X_X: s = xpar_add(ctx, XPAR_INT32, w->x, w->x, w->out, n); break;
      case FP_AXPY_SAME: s = xpar_axpy(ctx, XPAR_INT32, &two, w->x, w->x, n); break;
      default: s = xpar_dot(ctx, XPAR_INT32, w->x, w->x, n, &w->result); break;
    }
    xpar_decision d = last(ctx);
    o->status[call] = s;
    o->tier[call] = d.tier;
    snprintf(o->reason[call], sizeof o->reason[call], "%s", d.reason);
    o->to_host[call] = d.bytes_to_host;
    o->to_device[call] = d.bytes_to_device;
    o->gpu_ops[call] = fake_ops - before;
    o->valid[0][call] = fp_valid(ctx, w->x);
    o->valid[1][call] = fp_valid(ctx, w->y);
    o->valid[2][call] = fp_valid(ctx, w->out);
  }
  o->fast_calls = ctx->fast_path_calls;
  o->repeat_calls = ctx->repeat_calls;
  /* The results where the application reads them: the host copies, after
   * bringing back whatever is newer on the device. */
  assert_int_equal(xpar_context_set_offload(ctx, XPAR_OFFLOAD_DEFAULT), XPAR_OK);
  if (has_x && sc->in_state != ST_UNMAPPED) assert_int_equal(xpar_unmap(ctx, w->x, XPAR_UNMAP_FROM), XPAR_OK);
  if (has_y && sc->in_state != ST_UNMAPPED) assert_int_equal(xpar_unmap(ctx, w->y, XPAR_UNMAP_FROM), XPAR_OK);
  if (has_out && sc->out_state != ST_UNMAPPED) assert_int_equal(xpar_unmap(ctx, w->out, XPAR_UNMAP_FROM), XPAR_OK);
  xpar_context_destroy(ctx);
  memcpy(o->x, w->x, sizeof o->x);
  memcpy(o->y, w->y, sizeof o->y);
  memcpy(o->out, w->out, sizeof o->out);
  o->result = w->result;
}

static void fast_path_matches_general_path(void **state) {
  (void)state;
  const xpar_backend backends[3] = {XPAR_BACKEND_AUTO, XPAR_BACKEND_CPU, XPAR_BACKEND_CPU_SERIAL};
  static fp_outcome fast, general; /* static: two 4 KiB outcomes */
  int scenes = 0, on_cpu = 0, repeated = 0;
  for (int op = 0; op < FP_COUNT; op++)
    for (int in = 0; in < ST_COUNT; in++)
      for (int out = 0; out < ST_COUNT; out++)
        for (int whole = 0; whole < 2; whole++)
          for (int zero = 0; zero < 2; zero++)
            for (int b = 0; b < 3; b++)
              for (int off = 0; off < 2; off++) {
                const fp_scene sc = {op, in, out, whole, zero, off, backends[b]};
                fp_run(&sc, 0, &fast);
                fp_run(&sc, 1, &general);
                char label[256];
                snprintf(label, sizeof label,
                         "%s, inputs %s, output %s (%s its mapping), device-data threshold %s, "
                         "backend %s%s",
                         fp_names[op], st_names[in], st_names[out], whole ? "all of" : "half",
                         zero ? "0" : "never", xpar_backend_name(backends[b]),
                         off ? ", offload disabled" : "");
                for (int call = 0; call < FP_CALLS; call++) {
                  if (fast.status[call] != general.status[call] ||
                      fast.tier[call] != general.tier[call] ||
                      strcmp(fast.reason[call], general.reason[call]) ||
                      fast.to_host[call] != general.to_host[call] ||
                      fast.to_device[call] != general.to_device[call] ||
                      fast.gpu_ops[call] != general.gpu_ops[call])
                    fail_msg("%s, call %d: fast path %s / %s \"%s\" (%zu B to host, %zu B to "
                             "device, %d GPU ops); general path %s / %s \"%s\" (%zu, %zu, %d)",
                             label, call + 1, xpar_status_name(fast.status[call]),
                             xpar_tier_name(fast.tier[call]), fast.reason[call],
                             fast.to_host[call], fast.to_device[call], fast.gpu_ops[call],
                             xpar_status_name(general.status[call]),
                             xpar_tier_name(general.tier[call]), general.reason[call],
                             general.to_host[call], general.to_device[call],
                             general.gpu_ops[call]);
                  for (int a = 0; a < 3; a++)
                    if (fast.valid[a][call] != general.valid[a][call])
                      fail_msg("%s, call %d: array %d's mapping valid %d after the fast path, "
                               "%d after the general path",
                               label, call + 1, a, fast.valid[a][call], general.valid[a][call]);
                  on_cpu += fast.tier[call] == XPAR_TIER_CPU_SERIAL ||
                            fast.tier[call] == XPAR_TIER_CPU_OPENMP;
                }
                /* Arrays valid on the host and both calls on the CPU: the fast
                 * path must have run them (the comparison is about it). */
                int cpu_all = 1;
                for (int call = 0; call < FP_CALLS; call++)
                  cpu_all &= fast.tier[call] != XPAR_TIER_CUDA &&
                             fast.tier[call] != XPAR_TIER_CUDA_SERIAL;
                if (in != ST_DEVICE && out != ST_DEVICE && cpu_all) {
                  if (fast.fast_calls != FP_CALLS)
                    fail_msg("%s: the fast path ran %lu of the %d calls", label,
                             fast.fast_calls, FP_CALLS);
                  /* The second call leaves every mapping as it found it: the
                   * third is its repeat. */
                  if (fast.repeat_calls < 1)
                    fail_msg("%s: no call ran as a repeat", label);
                }
                repeated += fast.repeat_calls > 0;
                if (general.fast_calls != 0 || general.repeat_calls != 0)
                  fail_msg("%s: the fast path ran with the switch off", label);
                if (memcmp(fast.x, general.x, sizeof fast.x) ||
                    memcmp(fast.y, general.y, sizeof fast.y) ||
                    memcmp(fast.out, general.out, sizeof fast.out) ||
                    fast.result != general.result)
                  fail_msg("%s: the arrays or the result differ between the paths", label);
                scenes++;
              }
  /* The comparison is only worth something if both tiers were exercised. */
  assert_true(on_cpu > scenes && on_cpu < FP_CALLS * scenes);
  assert_true(repeated > scenes / 4);
}

/* ---- repeats: a call run again with the previous one's decision ------------- */

/* What a repeat rests on, changed between two identical calls: each change
 * must show in the next call (its tier, its record, its effect), and calls
 * that cannot be repeated safely (pinned arrays, asked of the driver every
 * call) never are. */
typedef struct rp_arrays {
  _Alignas(4096) int32_t x[512];
  _Alignas(4096) int32_t y[512];
  _Alignas(4096) int32_t z[512];
  _Alignas(4096) int32_t other[512];
} rp_arrays;
static rp_arrays rp;

static void rp_add(xpar_context *ctx, size_t n) {
  assert_int_equal(xpar_add(ctx, XPAR_INT32, rp.x, rp.y, rp.z, n), XPAR_OK);
  for (size_t i = 0; i < n; i++)
    if (rp.z[i] != rp.x[i] + rp.y[i]) fail_msg("z[%zu] = %d, expected %d", i, rp.z[i], rp.x[i] + rp.y[i]);
}

/* Three identical adds: the third runs as a repeat, on `tier`. */
static void rp_settle(xpar_context *ctx, const char *label, xpar_tier tier, const char *phrase) {
  rp_add(ctx, 256);
  rp_add(ctx, 256);
  const unsigned long before = ctx->repeat_calls;
  rp_add(ctx, 256);
  if (ctx->repeat_calls != before + 1) fail_msg("%s: the third identical add was not a repeat", label);
  expect(ctx, label, tier, fake_ops, 0, phrase);
}

static void repeats_follow_what_changes(void **state) {
  (void)state;
  xpar_context *ctx = new_context();
  for (int i = 0; i < 512; i++) {
    rp.x[i] = i % 11 - 5;
    rp.y[i] = i % 13;
  }
  rp_settle(ctx, "first", XPAR_TIER_CPU_SERIAL, "below openmp threshold");
  xpar_decision d = last(ctx);
  assert_int_equal(d.op, XPAR_OP_ADD);
  assert_int_equal(d.n, 256);

  /* A threshold: the OpenMP tier from the next call on. */
  set_thr(ctx, XPAR_OP_ADD, XPAR_THRESHOLD_OPENMP, 0);
  rp_add(ctx, 256);
  expect(ctx, "openmp threshold 0", XPAR_TIER_CPU_OPENMP, fake_ops, 0, "openmp threshold 0 (api)");
  rp_settle(ctx, "openmp threshold 0, repeated", XPAR_TIER_CPU_OPENMP, "openmp threshold 0 (api)");
  /* The GPU threshold for pageable data: the (fake) GPU. */
  set_thr(ctx, XPAR_OP_ADD, XPAR_THRESHOLD_GPU_PAGEABLE_DATA, 0);
  set_thr(ctx, XPAR_OP_ADD, XPAR_THRESHOLD_GPU_PINNED_DATA, 0);
  int ops = fake_ops;
  rp_add(ctx, 256);
  expect(ctx, "pageable GPU threshold 0", XPAR_TIER_CUDA, ops, 1, NULL);
  set_thr(ctx, XPAR_OP_ADD, XPAR_THRESHOLD_GPU_PAGEABLE_DATA, XPAR_NEVER);
  set_thr(ctx, XPAR_OP_ADD, XPAR_THRESHOLD_GPU_PINNED_DATA, XPAR_NEVER);
  set_thr(ctx, XPAR_OP_ADD, XPAR_THRESHOLD_OPENMP, XPAR_NEVER);
  rp_settle(ctx, "thresholds back", XPAR_TIER_CPU_SERIAL, "below openmp threshold");

  /* Another n, another array: decided afresh, and the record says so. */
  rp_add(ctx, 100);
  assert_int_equal(last(ctx).n, 100);
  const unsigned long before = ctx->repeat_calls;
  assert_int_equal(xpar_add(ctx, XPAR_INT32, rp.x, rp.y, rp.other, 256), XPAR_OK);
  assert_int_equal(ctx->repeat_calls, before);
  rp_settle(ctx, "after other calls", XPAR_TIER_CPU_SERIAL, NULL);

  /* The backend and the offload setting. */
  assert_int_equal(xpar_context_set_backend(ctx, XPAR_BACKEND_CPU_SERIAL), XPAR_OK);
  rp_add(ctx, 256);
  expect(ctx, "backend cpu-serial", XPAR_TIER_CPU_SERIAL, fake_ops, 0, "forced to serial");
  assert_int_equal(xpar_context_set_backend(ctx, XPAR_BACKEND_CUDA), XPAR_OK);
  ops = fake_ops;
  rp_add(ctx, 256);
  expect(ctx, "backend cuda", XPAR_TIER_CUDA, ops, 1, NULL);
  assert_int_equal(xpar_context_set_backend(ctx, XPAR_BACKEND_AUTO), XPAR_OK);
  rp_settle(ctx, "auto again", XPAR_TIER_CPU_SERIAL, NULL);
  assert_int_equal(xpar_context_set_offload(ctx, XPAR_OFFLOAD_DISABLED), XPAR_OK);
  rp_add(ctx, 256);
  expect(ctx, "offload disabled", XPAR_TIER_CPU_SERIAL, fake_ops, 0, "disabled");
  assert_int_equal(xpar_context_set_offload(ctx, XPAR_OFFLOAD_MANDATORY), XPAR_OK);
  ops = fake_ops;
  rp_add(ctx, 256);
  expect(ctx, "offload mandatory", XPAR_TIER_CUDA, ops, 1, NULL);
  assert_int_equal(xpar_context_set_offload(ctx, XPAR_OFFLOAD_DEFAULT), XPAR_OK);
  assert_int_equal(xpar_context_set_reproducible(ctx, 1), XPAR_OK);
  rp_add(ctx, 256);
  assert_int_equal(last(ctx).reproducible, 1);
  assert_int_equal(xpar_context_set_reproducible(ctx, 0), XPAR_OK);
  rp_settle(ctx, "defaults again", XPAR_TIER_CPU_SERIAL, NULL);
  assert_int_equal(last(ctx).reproducible, 0);

  /* A call the general path takes in between (here on the GPU, n above the
   * pageable threshold) leaves the repeat standing: the next add is one. */
  set_thr(ctx, XPAR_OP_FILL, XPAR_THRESHOLD_GPU_PAGEABLE_DATA, 0);
  set_thr(ctx, XPAR_OP_FILL, XPAR_THRESHOLD_GPU_PINNED_DATA, 0);
  const int32_t seven = 7;
  /* The fill value's page is classified by its first fill (a device scalar is
   * refused): a new page, which ends the repeats (xpar.h); classified here first. */
  assert_int_equal(xpar_fill(ctx, XPAR_INT32, &seven, rp.other, 256), XPAR_OK);
  rp_add(ctx, 256);
  ops = fake_ops;
  assert_int_equal(xpar_fill(ctx, XPAR_INT32, &seven, rp.other, 256), XPAR_OK);
  expect(ctx, "fill on the GPU", XPAR_TIER_CUDA, ops, 1, NULL);
  unsigned long r0 = ctx->repeat_calls;
  rp_add(ctx, 256);
  assert_int_equal(ctx->repeat_calls, r0 + 1);
  expect(ctx, "add after the fill", XPAR_TIER_CPU_SERIAL, fake_ops, 0, "below openmp threshold");
  assert_int_equal(last(ctx).n, 256);

  /* Checks a repeat does not replace: a fill value or an alpha given as
   * NULL after repeats of the same call is refused, and nothing is written;
   * a refused call between two repeats leaves the next one its own record. */
  set_thr(ctx, XPAR_OP_FILL, XPAR_THRESHOLD_GPU_PAGEABLE_DATA, XPAR_NEVER);
  set_thr(ctx, XPAR_OP_FILL, XPAR_THRESHOLD_GPU_PINNED_DATA, XPAR_NEVER);
  r0 = ctx->repeat_calls;
  for (int i = 0; i < 3; i++)
    assert_int_equal(xpar_fill(ctx, XPAR_INT32, &seven, rp.other, 256), XPAR_OK);
  assert_int_equal(ctx->repeat_calls, r0 + 2); /* its pages cached: the first remembered */
  rp.other[0] = 123;
  assert_int_equal(xpar_fill(ctx, XPAR_INT32, NULL, rp.other, 256), XPAR_ERR_NULL_POINTER);
  assert_int_equal(rp.other[0], 123);
  const int32_t two = 2;
  for (int i = 0; i < 3; i++)
    assert_int_equal(xpar_axpy(ctx, XPAR_INT32, &two, rp.x, rp.other, 256), XPAR_OK);
  assert_int_equal(ctx->repeat_calls, r0 + 4);
  assert_int_equal(xpar_axpy(ctx, XPAR_INT32, NULL, rp.x, rp.other, 256), XPAR_ERR_NULL_POINTER);
  rp_add(ctx, 256); /* remembered under these settings */
  assert_int_equal(xpar_add(ctx, XPAR_INT32, rp.x, rp.y, rp.x + 1, 256), XPAR_ERR_OVERLAP);
  assert_int_equal(last(ctx).tier, XPAR_TIER_NONE);
  r0 = ctx->repeat_calls;
  rp_add(ctx, 256);
  assert_int_equal(ctx->repeat_calls, r0 + 1);
  expect(ctx, "add after a refused one", XPAR_TIER_CPU_SERIAL, fake_ops, 0, "below openmp threshold");
  /* Shadow mode compares every call: no repeats while it is on. */
  assert_int_equal(xpar_context_set_shadow(ctx, XPAR_TIER_CPU_SERIAL, 0), XPAR_OK);
  r0 = ctx->repeat_calls;
  for (int i = 0; i < 3; i++) {
    rp_add(ctx, 256);
    assert_int_equal(last(ctx).shadow_tier, XPAR_TIER_CPU_SERIAL);
  }
  assert_int_equal(ctx->repeat_calls, r0);
  assert_int_equal(xpar_context_set_shadow(ctx, XPAR_TIER_NONE, 0), XPAR_OK);
  rp_settle(ctx, "shadow off", XPAR_TIER_CPU_SERIAL, NULL);
  assert_int_equal(last(ctx).shadow_tier, XPAR_TIER_NONE);

  /* The page cache evicting the arrays' pages (a thousand other pages
   * classified since): the next add asks the driver again, as a call that
   * found no page cached does, and says so ("pageable host data", asked,
   * where a page-cache answer says "host data"). */
  rp_settle(ctx, "before the eviction", XPAR_TIER_CPU_SERIAL, "for host data");
  enum { PAGES = 1024 };
  int32_t *many = aligned_alloc(4096, (size_t)PAGES * 4096);
  assert_non_null(many);
  for (int p = 0; p < PAGES; p++)
    assert_int_equal(xpar_fill(ctx, XPAR_INT32, &seven, many + (size_t)p * 1024, 16), XPAR_OK);
  free(many);
  r0 = ctx->repeat_calls;
  rp_add(ctx, 256);
  assert_int_equal(ctx->repeat_calls, r0);
  expect(ctx, "after the eviction", XPAR_TIER_CPU_SERIAL, fake_ops, 0, "for pageable host data");

  /* Pinned arrays: asked of the driver on every call, repeats included
   * (freed pinned memory comes back as device memory: page_cache.h). */
  int32_t *px = fake_register(256 * 4, 1), *py = fake_register(256 * 4, 1),
          *pz = fake_register(256 * 4, 1);
  memcpy(px, rp.x, 256 * 4);
  memcpy(py, rp.y, 256 * 4);
  r0 = ctx->repeat_calls;
  for (int i = 0; i < 4; i++) {
    const int queries = fake_kind_queries;
    assert_int_equal(xpar_add(ctx, XPAR_INT32, px, py, pz, 256), XPAR_OK);
    expect(ctx, "pinned", XPAR_TIER_CPU_SERIAL, fake_ops, 0, "pinned");
    if (fake_kind_queries - queries != 3)
      fail_msg("pinned add %d asked the driver %d times, not once per array", i + 1,
               fake_kind_queries - queries);
  }
  assert_int_equal(ctx->repeat_calls, r0 + 3); /* the first decided, remembered */
  /* One pinned array among cached pageable ones: only it is asked. */
  for (int i = 0; i < 3; i++) {
    const int queries = fake_kind_queries;
    assert_int_equal(xpar_add(ctx, XPAR_INT32, rp.x, py, rp.z, 256), XPAR_OK);
    if (fake_kind_queries - queries != 1)
      fail_msg("add %d with one pinned array asked the driver %d times", i + 1,
               fake_kind_queries - queries);
  }
  assert_int_equal(ctx->repeat_calls, r0 + 5);
  /* ... and when the pinned block is freed and its address comes back as
   * device memory, the next call with it stages a copy (the fake's device
   * memory is host memory: what matters is the classification). */
  for (int i = 0; i < 2; i++) /* remembered again with pz */
    assert_int_equal(xpar_add(ctx, XPAR_INT32, px, py, pz, 256), XPAR_OK);
  fake_release(pz);
  int32_t *dz = fake_register(256 * 4, 0);
  if (dz != pz) print_message("(the freed block's address did not come back: not checked)\n");
  if (dz == pz) {
    ops = fake_ops;
    assert_int_equal(xpar_add(ctx, XPAR_INT32, px, py, dz, 256), XPAR_OK);
    xpar_decision dd = last(ctx);
    if (dd.bytes_to_device == 0 && dd.bytes_to_host == 0 && fake_ops == ops)
      fail_msg("an array that became device memory was treated as host memory");
  }
  fake_release(dz);
  fake_release(px);
  fake_release(py);

  /* A mapping whose state another call changed: a repeat must not skip the
   * copy the new state needs.  z is the first half of a mapping; a GPU fill
   * of the whole mapping leaves only its device copy valid, so the next add
   * must bring the second half back before writing the first on the host. */
  assert_int_equal(xpar_map(ctx, rp.z, 512 * 4, XPAR_MAP_TO), XPAR_OK);
  rp_settle(ctx, "z mapped", XPAR_TIER_CPU_SERIAL, NULL);
  set_thr(ctx, XPAR_OP_FILL, XPAR_THRESHOLD_GPU_DEVICE_DATA, 0);
  ops = fake_ops;
  assert_int_equal(xpar_fill(ctx, XPAR_INT32, &seven, rp.z, 512), XPAR_OK);
  expect(ctx, "fill of the mapping", XPAR_TIER_CUDA, ops, 1, NULL);
  r0 = ctx->repeat_calls;
  assert_int_equal(xpar_add(ctx, XPAR_INT32, rp.x, rp.y, rp.z, 256), XPAR_OK);
  assert_int_equal(ctx->repeat_calls, r0);
  assert_int_equal(xpar_unmap(ctx, rp.z, XPAR_UNMAP_FROM), XPAR_OK);
  for (int i = 0; i < 512; i++) {
    const int32_t want = i < 256 ? rp.x[i] + rp.y[i] : 7;
    if (rp.z[i] != want) fail_msg("z[%d] = %d after the add, expected %d", i, rp.z[i], want);
  }
  xpar_context_destroy(ctx);
}

/* A synchronous reduce or dot whose result variable lies inside a mapped
 * array: the call writes that array's host copy, so afterwards the host copy
 * is the valid one (unmapping with FROM must not bring the stale device copy
 * back over the result), and a stale host copy is brought up to date first
 * (the rest of the array must survive).  On the CPU and on the (fake) GPU,
 * from every state of the mapping. */
static void result_inside_a_mapping(void **state) {
  (void)state;
  const size_t n = 256;
  for (int gpu = 0; gpu < 2; gpu++)
    for (int st = ST_BOTH; st < ST_COUNT; st++)
      for (int dot = 0; dot < 2; dot++) {
        char label[128];
        snprintf(label, sizeof label, "%s into a mapped array (%s), %s", dot ? "dot" : "reduce",
                 st_names[st], gpu ? "GPU" : "CPU");
        xpar_context *ctx = new_context();
        int32_t *a = malloc((2 * n + 1) * 4), want[2 * n + 1];
        fill_pattern(a, 2 * n + 1);
        memcpy(want, a, sizeof want);
        int64_t sum = 0;
        for (size_t i = 0; i < n; i++) sum += dot ? (int64_t)a[i] * a[n + i] : a[i];
        want[2 * n] = (int32_t)sum;
        fp_set_state(ctx, a, (2 * n + 1) * 4, st);
        const xpar_op op = dot ? XPAR_OP_DOT : XPAR_OP_REDUCE;
        set_thr(ctx, op, XPAR_THRESHOLD_GPU_DEVICE_DATA, gpu ? 0 : XPAR_NEVER);
        set_thr(ctx, op, XPAR_THRESHOLD_GPU_DEVICE_ONLY_DATA, gpu ? 0 : XPAR_NEVER);
        set_thr(ctx, op, XPAR_THRESHOLD_GPU_PAGEABLE_DATA, gpu ? 0 : XPAR_NEVER);
        int32_t *result = &a[2 * n];
        const xpar_status s = dot ? xpar_dot(ctx, XPAR_INT32, a, a + n, n, result)
                                  : xpar_reduce(ctx, XPAR_INT32, XPAR_SUM, a, n, result);
        if (s != XPAR_OK) fail_msg("%s: %s", label, xpar_status_name(s));
        const xpar_tier tier = last(ctx).tier;
        if ((tier == XPAR_TIER_CUDA) != gpu)
          fail_msg("%s: ran on %s (\"%s\")", label, xpar_tier_name(tier), last(ctx).reason);
        if (*result != want[2 * n]) fail_msg("%s: result %d, want %d", label, *result, want[2 * n]);
        if (fp_valid(ctx, a) != XPAR__VALID_HOST)
          fail_msg("%s: the mapping is valid %d after the call, not host only", label,
                   fp_valid(ctx, a));
        assert_int_equal(xpar_unmap(ctx, a, XPAR_UNMAP_FROM), XPAR_OK);
        for (size_t i = 0; i <= 2 * n; i++)
          if (a[i] != want[i])
            fail_msg("%s: element %zu is %d after unmapping, want %d", label, i, a[i], want[i]);
        free(a);
        xpar_context_destroy(ctx);
      }
  /* n = 0, where the host fast path skips the arrays' mapping checks: the result (0) still
   * lands in a current host copy, which the mapping then holds as the valid one. */
  for (int st = ST_BOTH; st < ST_COUNT; st++) {
    xpar_context *ctx = new_context();
    int32_t a[4] = {5, 6, 7, 8};
    fp_set_state(ctx, a, sizeof a, st);
    assert_int_equal(xpar_reduce(ctx, XPAR_INT32, XPAR_SUM, a, 0, &a[3]), XPAR_OK);
    if (a[3] != 0) fail_msg("n = 0 into a mapped array (%s): result %d", st_names[st], a[3]);
    if (fp_valid(ctx, a) != XPAR__VALID_HOST)
      fail_msg("n = 0 into a mapped array (%s): the mapping is valid %d, not host only",
               st_names[st], fp_valid(ctx, a));
    assert_int_equal(xpar_unmap(ctx, a, XPAR_UNMAP_FROM), XPAR_OK);
    if (a[0] != 5 || a[1] != 6 || a[2] != 7 || a[3] != 0)
      fail_msg("n = 0 into a mapped array (%s): %d %d %d %d after unmapping", st_names[st], a[0],
               a[1], a[2], a[3]);
    xpar_context_destroy(ctx);
  }
}

/* ---- reasons end whole ------------------------------------------------------------- */

/* The bytes of the record `d` formatted without a limit (big enough for any). */
static void reason_unlimited(const xpar__decision_raw *d, char *buf, size_t size) {
  xpar__decision_format(d, buf, size);
  assert_true(strlen(buf) + 1 < size);
}

/* Where a record says where its quoted defaults were measured: its last note. */
static const char *origin_note(const char *reason) {
  static const char *const starts[] = {"; default (", "; defaults (", "; GPU default ("};
  for (size_t i = 0; i < sizeof starts / sizeof starts[0]; i++) {
    const char *at = strstr(reason, starts[i]);
    if (at) return at;
  }
  return NULL;
}

/* Whether `s`, a record as its 256-byte field holds it, is the whole record `f`
 * (formatted without a limit) or f with quoted texts shortened -- their tail
 * replaced by "[...]" -- and perhaps without where the defaults were measured,
 * f's last note: then s ends in f's complete text.  A record that fits is
 * never shortened, and none is cut ("..." at its end). */
static int is_whole(const char *s, const char *f) {
  const size_t ls = strlen(s), lf = strlen(f);
  if (ls >= 3 && !strcmp(s + ls - 3, "...")) return 0;
  if (lf < 256) return !strcmp(s, f);
  const char *origin = origin_note(f);
  const size_t lf2 = origin ? (size_t)(origin - f) : lf; /* f without its origin */
  const char *const mark = "[...]";
  size_t pos = 0; /* where in f the next piece of s may start */
  const char *piece = s;
  for (int first = 1;; first = 0) {
    const char *cut = strstr(piece, mark);
    const size_t len = cut ? (size_t)(cut - piece) : strlen(piece);
    if (!cut) { /* the last piece: the end of f, or of f without its origin */
      if (lf >= pos + len && !memcmp(f + lf - len, piece, len)) return 1;
      return lf2 >= pos + len && !memcmp(f + lf2 - len, piece, len);
    }
    if (first) {
      if (memcmp(f, piece, len)) return 0; /* s starts as f does */
      pos = len;
    } else {
      char want[256];
      snprintf(want, sizeof want, "%.*s", (int)len, piece);
      const char *at = strstr(f + pos, want);
      if (!at) return 0;
      pos = (size_t)(at - f) + len;
    }
    piece = cut + strlen(mark);
  }
}

static void check_whole(xpar_context *ctx, const char *label) {
  const xpar_decision d = last(ctx);
  char full[2048];
  reason_unlimited(&ctx->last, full, sizeof full);
  if (!is_whole(d.reason, full))
    fail_msg("%s: the reason \"%s\" does not end whole (in full: \"%s\")", label, d.reason, full);
  /* A quoted default names its machine and date, never a results folder. */
  if (strstr(full, "(default)") && !origin_note(full))
    fail_msg("%s: a default quoted without its origin: \"%s\"", label, full);
  if (strstr(full, "bench/") || strstr(full, "results/"))
    fail_msg("%s: the reason names a folder: \"%s\"", label, full);
}

/* n elements of dtype t: op `op` (arrays of 8-byte slots). */
static xpar_status run_any(xpar_context *ctx, int op, xpar_dtype t, void *x, void *y, void *z,
                           size_t n) {
  static const uint64_t zero = 0;
  uint64_t res;
  switch (op) {
    case XPAR_OP_REDUCE: return xpar_reduce(ctx, t, XPAR_SUM, x, n, &res);
    case XPAR_OP_SCAN: return xpar_scan(ctx, t, XPAR_SUM, XPAR_INCLUSIVE, x, z, n);
    case XPAR_OP_AXPY: return xpar_axpy(ctx, t, &zero, x, z, n);
    case XPAR_OP_ADD: return xpar_add(ctx, t, x, y, z, n);
    case XPAR_OP_FILL: return xpar_fill(ctx, t, &zero, z, n);
    case XPAR_OP_SORT: return xpar_sort(ctx, t, XPAR_ASCENDING, x, z, n);
    case XPAR_OP_SELECT: {
      size_t k;
      return xpar_select(ctx, t, XPAR_NE, &zero, NULL, x, z, n, &k);
    }
    case XPAR_OP_RUNS: {
      size_t k;
      return xpar_run_length_encode(ctx, t, x, n, z, (uint64_t *)y, &k);
    }
    case XPAR_OP_ARGREDUCE: {
      int64_t at;
      if (n == 0) return xpar_segmented_reduce_fixed(ctx, t, XPAR_MIN, x, 0, 0, &res);
      return xpar_argmin(ctx, t, x, n, &res, &at);
    }
    case XPAR_OP_SEGMENTED: return xpar_segmented_reduce_fixed(ctx, t, XPAR_SUM, x, n, n ? 1 : 0, &res);
    case XPAR_OP_HISTOGRAM: { /* z: up to 64 counts (one on the stack for n = 0) */
      uint64_t one, hi = 1;
      return xpar_histogram_even(ctx, t, x, n, &zero, &hi, n ? (n < 64 ? n : 64) : 1,
                                 n ? (uint64_t *)z : &one);
    }
    default: return xpar_dot(ctx, t, x, y, n, &res);
  }
}

/* The longest records of every op x dtype x residency (device-only, pinned,
 * pageable, mapped) x the tier AUTO picks (around the built-in thresholds:
 * one thread, OpenMP, the GPU, the CPU with copies) under reproducible and
 * shadow mode, and after a GPU failure with a long detail, fit the public
 * field whole: each ends in its complete text, a default quoted with its
 * machine and date. */
static void reasons_end_whole(void **state) {
  (void)state;
  const size_t n_max = (size_t)1 << 21; /* at or above every built-in GPU threshold for mapped data */
  enum { DEVICE, PINNED, PAGEABLE, MAPPED, RESIDENCIES };
  static const char *const res_names[] = {"device-only", "pinned", "pageable", "mapped"};
  static const size_t ns[] = {8, 1000, (size_t)1 << 18, (size_t)1 << 21};
  for (int r = 0; r < RESIDENCIES; r++) {
    void *a[3];
    for (int i = 0; i < 3; i++) {
      a[i] = r == DEVICE ? fake_register(n_max * 8, 0)
             : r == PINNED ? fake_register(n_max * 8, 1)
                           : calloc(n_max, 8);
      assert_non_null(a[i]);
      for (size_t k = 0; k < n_max; k++) ((uint32_t *)a[i])[k] = (uint32_t)(k % 7);
    }
    /* 0: plain; 1: shadow cpu-serial; 2: also reproducible (the fake GPU
     * refuses that mode: its calls are left out). */
    for (int mode = 0; mode < 3; mode++) {
      xpar_context *ctx = new_context();
      if (mode) assert_int_equal(xpar_context_set_shadow(ctx, XPAR_TIER_CPU_SERIAL, 0), XPAR_OK);
      if (mode == 2) assert_int_equal(xpar_context_set_reproducible(ctx, 1), XPAR_OK);
      if (r == MAPPED)
        for (int i = 0; i < 3; i++) assert_int_equal(xpar_map(ctx, a[i], n_max * 8, XPAR_MAP_TO), XPAR_OK);
      for (int t = 0; t < XPAR_DTYPE_COUNT_; t++)
        for (int op = 0; op < XPAR_OP_COUNT_; op++)
          for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
            if (ns[k] == n_max && r != MAPPED) continue; /* nothing new: 2^18 decides as it does */
            if (r == MAPPED) /* every operand's device copy valid: mapped data, not host data */
              assert_int_equal(xpar_update(ctx, a[2], XPAR_UPDATE_TO_DEVICE), XPAR_OK);
            char label[128];
            snprintf(label, sizeof label, "%s %s n=%zu on %s data%s", xpar_op_name((xpar_op)op),
                     xpar_dtype_name((xpar_dtype)t), ns[k], res_names[r],
                     mode == 2 ? ", reproducible + shadow" : mode ? ", shadow" : "");
            const xpar_status st = run_any(ctx, op, (xpar_dtype)t, a[0], a[1], a[2], ns[k]);
            if (st == XPAR_ERR_NOT_SUPPORTED && mode == 2) continue;
            if (st != XPAR_OK) fail_msg("%s: %s (%s)", label, xpar_status_name(st), xpar_last_error_detail());
            check_whole(ctx, label);
          }
      /* The GPU fails with a detail longer than the field: AUTO falls back to
       * the CPU, and the record quotes the detail shortened. */
      if (r == MAPPED && mode < 2) {
        char detail[300];
        memset(detail, 'x', sizeof detail - 1);
        detail[sizeof detail - 1] = '\0';
        fake_fail_detail = detail;
        fake_fail_next = XPAR_ERR_DEVICE_OUT_OF_MEMORY;
        assert_int_equal(xpar_update(ctx, a[2], XPAR_UPDATE_TO_DEVICE), XPAR_OK);
        assert_int_equal(run_any(ctx, XPAR_OP_SCAN, XPAR_DOUBLE, a[0], a[1], a[2], n_max), XPAR_OK);
        fake_fail_detail = NULL;
        const xpar_decision d = last(ctx);
        if (!strstr(d.reason, "the GPU failed (xxx") || !strstr(d.reason, "x[...]): fell back"))
          fail_msg("mapped data, GPU failure: \"%s\"", d.reason);
        check_whole(ctx, "GPU failure with a long detail");
      }
      if (r == MAPPED)
        for (int i = 0; i < 3; i++) assert_int_equal(xpar_unmap(ctx, a[i], XPAR_UNMAP_RELEASE), XPAR_OK);
      xpar_context_destroy(ctx);
    }
    for (int i = 0; i < 3; i++) {
      if (r == DEVICE || r == PINNED)
        fake_release(a[i]);
      else
        free(a[i]);
    }
  }
}

/* Records no call makes together, formatted directly: every GPU rule x CPU rule
 * x shadow state, with copies where the rule can move data, reproducible mode,
 * quoted texts (the GPU's reason, a shadow detail, a kernel name) longer than
 * the field and numbers of ten digits: each fits whole, its quoted texts
 * shortened first, then without where the defaults were measured. */
static void reasons_end_whole_at_the_limits(void **state) {
  (void)state;
  char longtext[400];
  memset(longtext, 'q', sizeof longtext - 1);
  longtext[sizeof longtext - 1] = '\0';
  static const xpar__provenance kernel_from = {
      .machine = "a machine", .date = "2026-01-01", .run = "a command", .brief = "a few words"};
  for (int g = XPAR__GPU_NOT_CONSIDERED; g <= XPAR__GPU_NO_CPU_VARIANT; g++)
    for (int c = XPAR__CPU_NONE; c <= XPAR__CPU_FORCED_SERIAL; c++)
      for (int sh = XPAR__SHADOW_OFF; sh <= XPAR__SHADOW_NOT_RUN; sh++)
        for (int kernel = 0; kernel < 2; kernel++)
          for (int kind = 0; kind < XPAR_THRESHOLD_COUNT_; kind++) {
            /* As calls make them: a record of the GPU tier has no CPU rule, one
             * of a CPU tier has one; the rule "data valid only on the device"
             * is of that kind of data; no data moves where the GPU is not
             * usable, or offload disabled. */
            const int on_gpu = g == XPAR__GPU_AT_OR_ABOVE || g == XPAR__GPU_FORCED ||
                               g == XPAR__GPU_MANDATORY || g == XPAR__GPU_DEVICE_ONLY ||
                               g == XPAR__GPU_NO_CPU_VARIANT;
            if (on_gpu != (c == XPAR__CPU_NONE)) continue;
            if (g == XPAR__GPU_DEVICE_ONLY && kind != XPAR_THRESHOLD_GPU_DEVICE_ONLY_DATA) continue;
            if (kind == XPAR_THRESHOLD_OPENMP) continue;
            const int moves = g != XPAR__GPU_WANTED_UNUSABLE && g != XPAR__GPU_FORCED_UNUSABLE &&
                              g != XPAR__GPU_DISABLED;
            size_t gpu_thr, openmp_thr;
            xpar__threshold_default_from(XPAR_OP_DOT, XPAR_DOUBLE, (xpar_threshold)kind, &gpu_thr);
            xpar__threshold_default_from(XPAR_OP_DOT, XPAR_DOUBLE, XPAR_THRESHOLD_OPENMP, &openmp_thr);
            /* n of ten digits, or the largest below the threshold a rule says n is below. */
            size_t n = (size_t)1 << 30;
            if (g == XPAR__GPU_BELOW && gpu_thr != XPAR_NEVER && n >= gpu_thr) n = gpu_thr - 1;
            if (c == XPAR__CPU_BELOW_OPENMP && n >= openmp_thr) n = openmp_thr - 1;
            if ((g == XPAR__GPU_AT_OR_ABOVE || g == XPAR__GPU_WANTED_UNUSABLE) && n < gpu_thr) continue;
            xpar__decision_raw d = {
                .op = XPAR_OP_DOT,
                .dtype = XPAR_DOUBLE,
                .n = n,
                .tier = XPAR_TIER_CPU_OPENMP,
                .gpu_rule = (xpar__gpu_rule)g,
                .gpu_kind = (xpar_threshold)kind,
                .gpu_threshold = gpu_thr,
                .gpu_source = XPAR__SRC_DEFAULT,
                .cpu_rule = (xpar__cpu_rule)c,
                .openmp_threshold = openmp_thr,
                .openmp_source = XPAR__SRC_DEFAULT,
                .bytes_to_device = moves ? n * 8 : 0,
                .bytes_to_host = moves ? n * 8 : 0,
                .why = longtext,
                .kernel = kernel ? longtext : NULL,
                .kernel_from = kernel ? &kernel_from : NULL,
                .reproducible = 1,
                .shadow_tier = XPAR_TIER_CUDA_SERIAL,
                .shadow_state = (xpar__shadow_state)sh,
                .shadow_detail = longtext};
            char s[256], f[2048];
            xpar__decision_format(&d, s, sizeof s);
            reason_unlimited(&d, f, sizeof f);
            if (!is_whole(s, f))
              fail_msg("gpu rule %d, cpu rule %d, shadow %d, kernel %d, kind %d: \"%s\" does "
                       "not end whole (in full: \"%s\")", g, c, sh, kernel, kind, s, f);
          }
}

int main(void) {
  /* The application's view: no XPAR_* settings from the caller's shell. */
  extern char **environ;
  for (char **e = environ; *e;) {
    if (!strncmp(*e, "XPAR_", 5)) {
      char name[128];
      size_t len = strcspn(*e, "=");
      snprintf(name, sizeof name, "%.*s", (int)len, *e);
      unsetenv(name);
    } else {
      e++;
    }
  }
  /* The decisions checked here are the thresholds', whatever the load
   * (tests/test_adapt.c covers adaptation). */
  setenv("XPAR_ADAPT", "off", 1);
  xpar__gpu_backend_set_double(&fake_gpu);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(device_only_data_goes_to_the_gpu),
      cmocka_unit_test(host_data_thresholds),
      cmocka_unit_test(mapped_in_sync_and_stale),
      cmocka_unit_test(offload_mandatory_and_disabled),
      cmocka_unit_test(forced_gpu_tiers),
      cmocka_unit_test(gpu_failure_falls_back_or_fails),
      cmocka_unit_test(nowait_into_device_memory),
      cmocka_unit_test(synchronous_result_in_device_memory),
      cmocka_unit_test(memory_query_asks_the_driver),
      cmocka_unit_test(driver_ranges_are_not_cached),
      cmocka_unit_test(device_scalars_refused),
      cmocka_unit_test(kernels_through_the_policy),
      cmocka_unit_test(fast_path_matches_general_path),
      cmocka_unit_test(result_inside_a_mapping),
      cmocka_unit_test(repeats_follow_what_changes),
      cmocka_unit_test(reasons_end_whole),
      cmocka_unit_test(reasons_end_whole_at_the_limits),
  };
  return cmocka_run_group_tests_name("policy (fake GPU backend)", tests, NULL, NULL);
}
