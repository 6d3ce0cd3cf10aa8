/*
 * Where the data lives: xpar_map / xpar_update / xpar_unmap, the validity of
 * the host and device copies (AUTO and forced CPU never compute on a stale
 * copy), mapped sub-ranges, mapping errors, raw cudaMalloc and
 * cudaMallocManaged pointers on every backend, the nowait variants with
 * xpar_wait, an application stream; and threads: one context each,
 * concurrently, and one context shared (XPAR_ERR_CONTEXT_BUSY or success,
 * never corruption).
 *
 * Tests named ".../cuda" need a usable GPU and skip() without one; ".../cpu"
 * ones run everywhere.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "xt.h"

#if defined(XT_HAVE_CUDART)
#include <cuda_runtime.h>
#endif

#define NEED_GPU()                                                                   \
  do {                                                                               \
    if (!xt_gpu_usable()) {                                                          \
      print_message("  skipped: no usable GPU (%s)\n", xt_gpu_reason());            \
      skip();                                                                        \
    }                                                                                \
  } while (0)

#define NEED_CUDART()                                                                \
  do {                                                                               \
    NEED_GPU();                                                                      \
    if (!have_cudart()) {                                                            \
      print_message("  skipped: test built without the CUDA runtime\n");            \
      skip();                                                                        \
    }                                                                                \
  } while (0)

static int have_cudart(void) {
#if defined(XT_HAVE_CUDART)
  return 1;
#else
  return 0;
#endif
}

#define STATUS(want, call)                                                                    \
  do {                                                                                        \
    xpar_status s_ = (call);                                                                  \
    if (s_ != (want))                                                                         \
      xt_failf(#call, "status %s, expected %s; detail \"%s\"", xpar_status_name(s_),         \
               xpar_status_name(want), xpar_last_error_detail());                             \
    if ((want) != XPAR_OK && !xpar_last_error_detail()[0]) xt_failf(#call, "empty detail");   \
  } while (0)

#define OKL(label, call)                                                                      \
  do {                                                                                        \
    xpar_status s_ = (call);                                                                  \
    if (s_ != XPAR_OK)                                                                        \
      xt_failf(label, "%s: status %s; detail \"%s\"", #call, xpar_status_name(s_),            \
               xpar_last_error_detail());                                                     \
  } while (0)

#define CUDA_OK(label, call)                                                                  \
  do {                                                                                        \
    int e_ = (int)(call);                                                                     \
    if (e_ != 0) xt_failf(label, "%s: CUDA error %d", #call, e_);                            \
  } while (0)

static xpar_context *ctx_with(xpar_backend b) {
  xpar_context *ctx = NULL;
  XT_OK(xpar_context_create(&ctx));
  XT_OK(xpar_context_set_backend(ctx, b));
  if (b == XPAR_BACKEND_CUDA || b == XPAR_BACKEND_CUDA_SERIAL)
    XT_OK(xpar_context_set_offload(ctx, XPAR_OFFLOAD_MANDATORY));
  return ctx;
}

static void expect_tier(const char *label, xpar_context *ctx, int cpu) {
  xpar_decision d;
  XT_OK(xpar_last_decision(ctx, &d));
  int is_cpu = d.tier == XPAR_TIER_CPU_SERIAL || d.tier == XPAR_TIER_CPU_OPENMP;
  if (cpu ? !is_cpu : d.tier != XPAR_TIER_CUDA)
    xt_failf(label, "ran on %s, expected %s (reason \"%s\")", xpar_tier_name(d.tier),
             cpu ? "a CPU tier" : "cuda", d.reason);
}

static int64_t *iota64(size_t n, int64_t start) {
  int64_t *p = (int64_t *)malloc(n * sizeof *p);
  assert_non_null(p);
  for (size_t i = 0; i < n; i++) p[i] = start + (int64_t)i;
  return p;
}

static int64_t sum_range(size_t n, int64_t start) { /* sum of start .. start+n-1 */
  return (int64_t)n * start + (int64_t)(n * (n - 1) / 2);
}

/* ---- without a GPU (or offload disabled): mapping refuses ------------------------ */
static void map_refused(void **state) {
  (void)state;
  int64_t h[64];
  memset(h, 0, sizeof h);
  xpar_context *ctx = NULL;
  XT_OK(xpar_context_create(&ctx));
  if (!xt_gpu_usable()) {
    STATUS(XPAR_ERR_NO_DEVICE, xpar_map(ctx, h, sizeof h, XPAR_MAP_TO));
    STATUS(XPAR_ERR_NO_DEVICE, xpar_map(ctx, h, sizeof h, XPAR_MAP_ALLOC));
  }
  XT_OK(xpar_context_set_offload(ctx, XPAR_OFFLOAD_DISABLED));
  STATUS(XPAR_ERR_NO_DEVICE, xpar_map(ctx, h, sizeof h, XPAR_MAP_TO));
  /* Nothing got mapped, so nothing can be updated or unmapped. */
  xpar_status s = xpar_unmap(ctx, h, XPAR_UNMAP_FROM);
  if (s != XPAR_ERR_NOT_MAPPED && s != XPAR_ERR_NO_DEVICE)
    xt_failf("unmap after refused map", "status %s", xpar_status_name(s));
  void *dp = (void *)(uintptr_t)1;
  s = xpar_mapped_device_ptr(ctx, h, &dp);
  if (s == XPAR_OK) xt_failf("mapped_device_ptr after refused map", "succeeded");
  assert_true(dp == (void *)(uintptr_t)1);
  xpar_context_destroy(ctx);
}

/* ---- map TO, run on the host pointer ---------------------------------------------------- */
static void map_to_then_ops(void **state) {
  (void)state;
  NEED_GPU();
  const size_t n = (1 << 20) + 3;
  int64_t *h = iota64(n, -1000);
  int64_t *out = (int64_t *)malloc(n * sizeof *out);
  assert_non_null(out);
  const xpar_backend backends[] = {XPAR_BACKEND_AUTO, XPAR_BACKEND_CUDA, XPAR_BACKEND_CPU_SERIAL,
                                   XPAR_BACKEND_CPU};
  for (size_t b = 0; b < 4; b++) {
    xpar_context *ctx = ctx_with(backends[b]);
    XT_OK(xpar_map(ctx, h, n * sizeof *h, XPAR_MAP_TO));
    int64_t r = 0;
    XT_OK(xpar_reduce(ctx, XPAR_INT64, XPAR_SUM, h, n, &r));
    if (r != sum_range(n, -1000))
      xt_failf("map TO, reduce", "backend %s: sum %lld, expected %lld", xpar_backend_name(backends[b]),
               (long long)r, (long long)sum_range(n, -1000));
    if (backends[b] == XPAR_BACKEND_CUDA) expect_tier("map TO, forced cuda", ctx, 0);
    XT_OK(xpar_reduce(ctx, XPAR_INT64, XPAR_MAX, h, n, &r));
    assert_int_equal(r, (int64_t)n - 1 - 1000);
    /* Host output, mapped input. */
    XT_OK(xpar_scan(ctx, XPAR_INT64, XPAR_SUM, XPAR_EXCLUSIVE, h, out, n));
    int64_t acc = 0;
    for (size_t i = 0; i < n; i++) {
      if (out[i] != acc)
        xt_failf("map TO, scan to host", "backend %s: out[%zu] = %lld, expected %lld",
                 xpar_backend_name(backends[b]), i, (long long)out[i], (long long)acc);
      acc += h[i];
    }
    XT_OK(xpar_unmap(ctx, h, XPAR_UNMAP_RELEASE));
    xpar_context_destroy(ctx);
  }
  /* AUTO with mapped, in-sync data and a device-data threshold of 0: the GPU,
   * with no transfer to the device. */
  xpar_context *ctx = ctx_with(XPAR_BACKEND_AUTO);
  XT_OK(xpar_map(ctx, h, n * sizeof *h, XPAR_MAP_TO));
  XT_OK(xpar_context_set_threshold(ctx, XPAR_OP_REDUCE, XPAR_INT64, XPAR_THRESHOLD_GPU_DEVICE_DATA, 0));
  int64_t r = 0;
  XT_OK(xpar_reduce(ctx, XPAR_INT64, XPAR_SUM, h, n, &r));
  assert_int_equal(r, sum_range(n, -1000));
  xpar_decision d;
  XT_OK(xpar_last_decision(ctx, &d));
  if (d.tier != XPAR_TIER_CUDA || d.bytes_to_device != 0)
    xt_failf("auto, mapped in-sync data, threshold 0", "tier %s, %zu bytes to device (reason \"%s\")",
             xpar_tier_name(d.tier), d.bytes_to_device, d.reason);
  XT_OK(xpar_unmap(ctx, h, XPAR_UNMAP_RELEASE));
  xpar_context_destroy(ctx);
  free(h);
  free(out);
}

/* ---- the GPU writes a mapped array; the CPU path must see it ------------------------------- */
static void gpu_write_cpu_read(void **state) {
  (void)state;
  NEED_GPU();
  const size_t n = 100003;
  int64_t *y = iota64(n, 0);
  int64_t *x = iota64(n, 5);
  xpar_context *ctx = ctx_with(XPAR_BACKEND_CUDA);
  XT_OK(xpar_map(ctx, x, n * sizeof *x, XPAR_MAP_TO));
  XT_OK(xpar_map(ctx, y, n * sizeof *y, XPAR_MAP_TO));
  const int64_t a = 3;
  XT_OK(xpar_axpy(ctx, XPAR_INT64, &a, x, y, n)); /* y = 3x + y on the device: host copy stale */
  expect_tier("axpy on mapped arrays, forced cuda", ctx, 0);
  int64_t want = 0;
  for (size_t i = 0; i < n; i++) want += 3 * (int64_t)(i + 5) + (int64_t)i;

  const xpar_backend readers[] = {XPAR_BACKEND_CPU_SERIAL, XPAR_BACKEND_CPU, XPAR_BACKEND_AUTO};
  for (size_t k = 0; k < 3; k++) {
    XT_OK(xpar_context_set_backend(ctx, readers[k]));
    XT_OK(xpar_context_set_offload(ctx, XPAR_OFFLOAD_DEFAULT));
    int64_t r = 0;
    XT_OK(xpar_reduce(ctx, XPAR_INT64, XPAR_SUM, y, n, &r));
    if (r != want)
      xt_failf("GPU-written mapped array read by backend", "%s: sum %lld, expected %lld (a stale host copy?)",
               xpar_backend_name(readers[k]), (long long)r, (long long)want);
    if (readers[k] != XPAR_BACKEND_AUTO) expect_tier("reader", ctx, 1);
  }
  /* A CPU write to the mapped array makes the device copy stale: forced cuda
   * must then see the CPU's result. */
  XT_OK(xpar_context_set_backend(ctx, XPAR_BACKEND_CPU_SERIAL));
  const int64_t seven = 7;
  XT_OK(xpar_fill(ctx, XPAR_INT64, &seven, y, n));
  XT_OK(xpar_context_set_backend(ctx, XPAR_BACKEND_CUDA));
  XT_OK(xpar_context_set_offload(ctx, XPAR_OFFLOAD_MANDATORY));
  int64_t r = 0;
  XT_OK(xpar_reduce(ctx, XPAR_INT64, XPAR_SUM, y, n, &r));
  if (r != 7 * (int64_t)n)
    xt_failf("CPU-written mapped array read by cuda", "sum %lld, expected %lld (a stale device copy?)",
             (long long)r, 7 * (long long)n);
  XT_OK(xpar_unmap(ctx, x, XPAR_UNMAP_RELEASE));
  XT_OK(xpar_unmap(ctx, y, XPAR_UNMAP_FROM));
  for (size_t i = 0; i < n; i++)
    if (y[i] != 7) xt_failf("unmap FROM after CPU fill", "y[%zu] = %lld", i, (long long)y[i]);
  xpar_context_destroy(ctx);
  free(x);
  free(y);
}

/* ---- update TO_DEVICE, unmap FROM, unmap RELEASE ------------------------------------------- */
static void update_and_unmap(void **state) {
  (void)state;
  NEED_GPU();
  const size_t n = 65537;
  int64_t *h = iota64(n, 1);
  xpar_context *ctx = ctx_with(XPAR_BACKEND_CUDA);

  /* update TO_DEVICE after host writes */
  XT_OK(xpar_map(ctx, h, n * sizeof *h, XPAR_MAP_TO));
  for (size_t i = 0; i < n; i++) h[i] = 2;
  XT_OK(xpar_update(ctx, h, XPAR_UPDATE_TO_DEVICE));
  int64_t r = 0;
  XT_OK(xpar_reduce(ctx, XPAR_INT64, XPAR_SUM, h, n, &r));
  if (r != 2 * (int64_t)n) xt_failf("update TO_DEVICE", "sum %lld, expected %lld", (long long)r, 2 * (long long)n);

  /* The GPU writes; update FROM_DEVICE brings it to the host. */
  const int64_t v = 9;
  XT_OK(xpar_fill(ctx, XPAR_INT64, &v, h, n));
  XT_OK(xpar_update(ctx, h, XPAR_UPDATE_FROM_DEVICE));
  for (size_t i = 0; i < n; i++)
    if (h[i] != 9) xt_failf("update FROM_DEVICE", "h[%zu] = %lld, expected 9", i, (long long)h[i]);

  /* unmap FROM copies back */
  const int64_t w = -4;
  XT_OK(xpar_fill(ctx, XPAR_INT64, &w, h, n));
  XT_OK(xpar_unmap(ctx, h, XPAR_UNMAP_FROM));
  for (size_t i = 0; i < n; i++)
    if (h[i] != -4) xt_failf("unmap FROM", "h[%zu] = %lld, expected -4", i, (long long)h[i]);

  /* unmap RELEASE does not */
  for (size_t i = 0; i < n; i++) h[i] = 1;
  XT_OK(xpar_map(ctx, h, n * sizeof *h, XPAR_MAP_TO));
  const int64_t u = 5;
  XT_OK(xpar_fill(ctx, XPAR_INT64, &u, h, n));
  XT_OK(xpar_unmap(ctx, h, XPAR_UNMAP_RELEASE));
  for (size_t i = 0; i < n; i++)
    if (h[i] != 1) xt_failf("unmap RELEASE", "h[%zu] = %lld, expected the host's own 1", i, (long long)h[i]);

  /* MAP_ALLOC: the device copy is not valid yet, the host copy is; a CPU or
   * GPU reader gets the host's values. */
  XT_OK(xpar_map(ctx, h, n * sizeof *h, XPAR_MAP_ALLOC));
  const int64_t z = 3;
  XT_OK(xpar_fill(ctx, XPAR_INT64, &z, h, n)); /* an output: written on the device */
  XT_OK(xpar_unmap(ctx, h, XPAR_UNMAP_FROM));
  for (size_t i = 0; i < n; i++)
    if (h[i] != 3) xt_failf("map ALLOC, fill, unmap FROM", "h[%zu] = %lld", i, (long long)h[i]);
  xpar_context_destroy(ctx);
  free(h);
}

/* ---- residency after AUTO ran a write on the CPU ------------------------------------------ */
/* AUTO runs a small fill of a mapped array on the CPU, so the host copy is
 * the newer one: update(FROM_DEVICE) must not overwrite it with the stale
 * device copy, and mapped_device_ptr must hand out an up-to-date device copy.
 * An array that straddles a mapping's edge is refused. */
static void residency_after_auto(void **state) {
  (void)state;
  NEED_GPU();
  const size_t n = 4097, pad = 8;
  int64_t *buf = iota64(n + 2 * pad, 1), *h = buf + pad;
  xpar_context *ctx = NULL;
  XT_OK(xpar_context_create(&ctx)); /* AUTO, default thresholds: n is far below the GPU's */
  XT_OK(xpar_map(ctx, h, n * sizeof *h, XPAR_MAP_TO));
  const int64_t v = 77;
  XT_OK(xpar_fill(ctx, XPAR_INT64, &v, h, n));
  expect_tier("auto fill of a small mapped array", ctx, 1);
  XT_OK(xpar_update(ctx, h, XPAR_UPDATE_FROM_DEVICE));
  for (size_t i = 0; i < n; i++)
    if (h[i] != v) xt_failf("update FROM after a CPU write", "h[%zu] = %lld, expected %lld", i,
                            (long long)h[i], (long long)v);
#if defined(XT_HAVE_CUDART)
  void *d = NULL;
  XT_OK(xpar_mapped_device_ptr(ctx, h, &d));
  int64_t *back = (int64_t *)malloc(n * sizeof *back);
  assert_non_null(back);
  CUDA_OK("copy the mapped device copy", cudaMemcpy(back, d, n * sizeof *back, cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < n; i++)
    if (back[i] != v) xt_failf("mapped_device_ptr after a CPU write", "device[%zu] = %lld, expected %lld",
                               i, (long long)back[i], (long long)v);
  free(back);
#endif
  int64_t r = 0;
  STATUS(XPAR_ERR_INVALID_ARGUMENT, xpar_reduce(ctx, XPAR_INT64, XPAR_SUM, buf, n + 2 * pad, &r));
  STATUS(XPAR_ERR_INVALID_ARGUMENT, xpar_reduce(ctx, XPAR_INT64, XPAR_SUM, h + n - 1, 2, &r));
  if (r != 0) xt_failf("straddling arrays", "the result was written: %lld", (long long)r);
  XT_OK(xpar_unmap(ctx, h, XPAR_UNMAP_RELEASE));
  xpar_context_destroy(ctx);
  free(buf);
}

/* ---- sub-ranges of a mapping -------------------------------------------------------------- */
static void mapped_subranges(void **state) {
  (void)state;
  NEED_GPU();
  const size_t n = 10000;
  int64_t *h = iota64(n, 0);
  xpar_context *ctx = ctx_with(XPAR_BACKEND_CUDA);
  XT_OK(xpar_map(ctx, h, n * sizeof *h, XPAR_MAP_TO));
  int64_t r = 0;
  XT_OK(xpar_reduce(ctx, XPAR_INT64, XPAR_SUM, h + 101, 5000, &r));
  if (r != sum_range(5000, 101)) xt_failf("sub-range reduce", "sum %lld, expected %lld", (long long)r, (long long)sum_range(5000, 101));
  /* in and out in one mapping, disjoint: out = scan(in) */
  XT_OK(xpar_scan(ctx, XPAR_INT64, XPAR_SUM, XPAR_INCLUSIVE, h + 3, h + 6003, 3997));
  XT_OK(xpar_unmap(ctx, h, XPAR_UNMAP_FROM));
  int64_t acc = 0;
  for (size_t i = 0; i < 3997; i++) {
    acc += (int64_t)(i + 3);
    if (h[6003 + i] != acc) xt_failf("sub-range scan", "h[%zu] = %lld, expected %lld", 6003 + i, (long long)h[6003 + i], (long long)acc);
  }
  for (size_t i = 0; i < 6003; i++)
    if (h[i] != (int64_t)i) xt_failf("sub-range scan", "input h[%zu] changed to %lld", i, (long long)h[i]);

  /* xpar_mapped_device_ptr of an interior pointer is the same offset in. */
  XT_OK(xpar_map(ctx, h, n * sizeof *h, XPAR_MAP_TO));
  void *d0 = NULL, *d1 = NULL;
  XT_OK(xpar_mapped_device_ptr(ctx, h, &d0));
  XT_OK(xpar_mapped_device_ptr(ctx, h + 17, &d1));
  assert_non_null(d0);
  if ((char *)d1 - (char *)d0 != 17 * (ptrdiff_t)sizeof *h)
    xt_failf("mapped_device_ptr", "h -> %p, h+17 -> %p: not 17 elements apart", d0, d1);
  XT_OK(xpar_unmap(ctx, h, XPAR_UNMAP_RELEASE));
  xpar_context_destroy(ctx);
  free(h);
}

/* ---- mapping errors -------------------------------------------------------------------------- */
static void mapping_errors(void **state) {
  (void)state;
  NEED_GPU();
  const size_t n = 1000;
  int64_t *all = iota64(2 * n + 200, -100);
  int64_t *h = all + 100; /* the mapping: h[0..n) == 0..n-1, with room on both sides */
  int64_t other[16];
  xpar_context *ctx = ctx_with(XPAR_BACKEND_CUDA);
  XT_OK(xpar_map(ctx, h, n * sizeof *h, XPAR_MAP_TO));
  STATUS(XPAR_ERR_ALREADY_MAPPED, xpar_map(ctx, h, n * sizeof *h, XPAR_MAP_TO));
  STATUS(XPAR_ERR_ALREADY_MAPPED, xpar_map(ctx, h + 500, 100 * sizeof *h, XPAR_MAP_TO));
  STATUS(XPAR_ERR_ALREADY_MAPPED, xpar_map(ctx, h + n - 1, 10 * sizeof *h, XPAR_MAP_ALLOC));
  STATUS(XPAR_ERR_ALREADY_MAPPED, xpar_map(ctx, h - 10, 11 * sizeof *h, XPAR_MAP_ALLOC));
  STATUS(XPAR_ERR_ALREADY_MAPPED, xpar_map(ctx, all, (2 * n + 200) * sizeof *h, XPAR_MAP_TO));
  /* Adjacent on either side is not overlapping. */
  XT_OK(xpar_map(ctx, h + n, n * sizeof *h, XPAR_MAP_TO));
  XT_OK(xpar_map(ctx, all, 100 * sizeof *h, XPAR_MAP_TO));
  XT_OK(xpar_unmap(ctx, h + n, XPAR_UNMAP_RELEASE));
  XT_OK(xpar_unmap(ctx, all, XPAR_UNMAP_RELEASE));
  STATUS(XPAR_ERR_NOT_MAPPED, xpar_unmap(ctx, other, XPAR_UNMAP_FROM));
  STATUS(XPAR_ERR_NOT_MAPPED, xpar_update(ctx, other, XPAR_UPDATE_TO_DEVICE));
  void *dp = NULL;
  STATUS(XPAR_ERR_NOT_MAPPED, xpar_mapped_device_ptr(ctx, other, &dp));
  assert_null(dp);
  STATUS(XPAR_ERR_NOT_MAPPED, xpar_mapped_device_ptr(ctx, h + n, &dp));
  assert_null(dp);
  /* The device can't be switched while a mapping exists. */
  xpar_status s = xpar_context_set_device(ctx, 0);
  if (s == XPAR_OK) xt_failf("set_device while mapped", "accepted");
  /* The mapping still works after all these refusals. */
  int64_t r = 0;
  XT_OK(xpar_reduce(ctx, XPAR_INT64, XPAR_SUM, h, n, &r));
  assert_int_equal(r, sum_range(n, 0));
  XT_OK(xpar_unmap(ctx, h, XPAR_UNMAP_RELEASE));
  STATUS(XPAR_ERR_NOT_MAPPED, xpar_unmap(ctx, h, XPAR_UNMAP_RELEASE)); /* twice */
  /* Mappings belong to their context: another context doesn't see them. */
  XT_OK(xpar_map(ctx, h, n * sizeof *h, XPAR_MAP_TO));
  xpar_context *other_ctx = ctx_with(XPAR_BACKEND_CUDA);
  STATUS(XPAR_ERR_NOT_MAPPED, xpar_unmap(other_ctx, h, XPAR_UNMAP_RELEASE));
  xpar_context_destroy(other_ctx);
  /* Destroying a context with a live mapping releases it, no copy back. */
  const int64_t v = 42;
  XT_OK(xpar_fill(ctx, XPAR_INT64, &v, h, n));
  xpar_context_destroy(ctx);
  for (size_t i = 0; i < n; i++)
    if (h[i] != (int64_t)i) xt_failf("destroy with a live mapping", "h[%zu] = %lld: copied back", i, (long long)h[i]);
  free(all);
}

/* ---- xpar_memory_query: a pointer as the context's calls classify it -------------------- */
#define KIND_IS(want, ctx, ptr, bytes)                                                          \
  do {                                                                                          \
    xpar_memory_kind k_ = XPAR_MEMORY_KIND_COUNT_;                                              \
    STATUS(XPAR_OK, xpar_memory_query(ctx, ptr, bytes, &k_));                                   \
    if (k_ != (want))                                                                           \
      xt_failf("xpar_memory_query(" #ptr ", " #bytes ")", "kind %d, expected %d (" #want ")",  \
               (int)k_, (int)(want));                                                           \
  } while (0)

/* Without a GPU (or with offload disabled) every pointer is host memory. */
static void memory_query_host(void **state) {
  (void)state;
  int64_t stack[8];
  int64_t *heap = malloc(1 << 20);
  assert_non_null(heap);
  xpar_context *ctx = NULL;
  XT_OK(xpar_context_create(&ctx));
  if (!xt_gpu_usable()) {
    KIND_IS(XPAR_MEMORY_HOST, ctx, stack, sizeof stack);
    KIND_IS(XPAR_MEMORY_HOST, ctx, heap, 1 << 20);
  }
  XT_OK(xpar_context_set_offload(ctx, XPAR_OFFLOAD_DISABLED));
  KIND_IS(XPAR_MEMORY_HOST, ctx, stack, 0);
  KIND_IS(XPAR_MEMORY_HOST, ctx, heap + 1000, 8);
  xpar_context_destroy(ctx);
  free(heap);
}

static void memory_query_cuda(void **state) {
  (void)state;
  NEED_CUDART();
#if defined(XT_HAVE_CUDART)
  const char *label = "memory_query";
  const size_t n = 1000;
  int64_t *all = iota64(2 * n + 200, -100);
  int64_t *h = all + 100;
  void *pinned = NULL, *dev = NULL, *managed = NULL;
  CUDA_OK(label, cudaMallocHost(&pinned, 4096));
  CUDA_OK(label, cudaMalloc(&dev, 4096));
  CUDA_OK(label, cudaMallocManaged(&managed, 4096, cudaMemAttachGlobal));
  xpar_context *ctx = ctx_with(XPAR_BACKEND_AUTO);
  KIND_IS(XPAR_MEMORY_HOST, ctx, h, n * sizeof *h);
  KIND_IS(XPAR_MEMORY_PINNED, ctx, pinned, 4096);
  KIND_IS(XPAR_MEMORY_PINNED, ctx, (char *)pinned + 100, 8);
  KIND_IS(XPAR_MEMORY_DEVICE, ctx, dev, 4096);
  KIND_IS(XPAR_MEMORY_DEVICE, ctx, (char *)dev + 4088, 0);
  KIND_IS(XPAR_MEMORY_MANAGED, ctx, managed, 16);
  /* a page the calls cached as pageable is asked again: registered, it is pinned */
  int64_t r = 0;
  XT_OK(xpar_reduce(ctx, XPAR_INT64, XPAR_SUM, h, n, &r));
  CUDA_OK(label, cudaHostRegister(h, n * sizeof *h, cudaHostRegisterDefault));
  KIND_IS(XPAR_MEMORY_PINNED, ctx, h, n * sizeof *h);
  CUDA_OK(label, cudaHostUnregister(h));
  KIND_IS(XPAR_MEMORY_HOST, ctx, h, n * sizeof *h);
  /* inside a mapping, at its edges, across them */
  XT_OK(xpar_map(ctx, h, n * sizeof *h, XPAR_MAP_TO));
  KIND_IS(XPAR_MEMORY_MAPPED, ctx, h, n * sizeof *h);
  KIND_IS(XPAR_MEMORY_MAPPED, ctx, h + n - 1, sizeof *h);
  KIND_IS(XPAR_MEMORY_HOST, ctx, h + n, sizeof *h);
  KIND_IS(XPAR_MEMORY_HOST, ctx, h - 1, sizeof *h);
  xpar_memory_kind k = XPAR_MEMORY_KIND_COUNT_;
  STATUS(XPAR_ERR_INVALID_ARGUMENT, xpar_memory_query(ctx, h + n - 1, 2 * sizeof *h, &k));
  STATUS(XPAR_ERR_INVALID_ARGUMENT, xpar_memory_query(ctx, h - 1, 2 * sizeof *h, &k));
  assert_true(k == XPAR_MEMORY_KIND_COUNT_);
  /* another context does not see the mapping */
  xpar_context *other = ctx_with(XPAR_BACKEND_AUTO);
  KIND_IS(XPAR_MEMORY_HOST, other, h, n * sizeof *h);
  xpar_context_destroy(other);
  XT_OK(xpar_unmap(ctx, h, XPAR_UNMAP_RELEASE));
  /* offload disabled: xpar asks nothing, and takes everything for host memory */
  XT_OK(xpar_context_set_offload(ctx, XPAR_OFFLOAD_DISABLED));
  KIND_IS(XPAR_MEMORY_HOST, ctx, dev, 8);
  xpar_context_destroy(ctx);
  cudaFreeHost(pinned);
  cudaFree(dev);
  cudaFree(managed);
  free(all);
#endif
}

#if defined(XT_HAVE_CUDART)
/* ---- raw device and managed pointers on every backend ---------------------------------------- */
static void raw_pointers_one(int managed, xpar_backend b) {
  const size_t n = 300007;
  char label[96];
  snprintf(label, sizeof label, "%s pointers, backend %s", managed ? "managed" : "cudaMalloc",
           xpar_backend_name(b));
  int32_t *h = (int32_t *)malloc(n * sizeof *h);
  assert_non_null(h);
  xt_rng rng;
  xt_rng_for(&rng, label);
  xt_fill_random(&rng, XPAR_INT32, h, n, XT_DATA_RANDOM, 0);
  int32_t *dx = NULL, *dy = NULL;
  if (managed) {
    CUDA_OK(label, cudaMallocManaged((void **)&dx, n * sizeof *dx, cudaMemAttachGlobal));
    CUDA_OK(label, cudaMallocManaged((void **)&dy, n * sizeof *dy, cudaMemAttachGlobal));
  } else {
    CUDA_OK(label, cudaMalloc((void **)&dx, n * sizeof *dx));
    CUDA_OK(label, cudaMalloc((void **)&dy, n * sizeof *dy));
  }
  CUDA_OK(label, cudaMemcpy(dx, h, n * sizeof *h, cudaMemcpyHostToDevice));
  CUDA_OK(label, cudaDeviceSynchronize());
  xpar_context *ctx = ctx_with(b);
  /* reduce and dot into host scalars */
  int32_t r = 0;
  OKL(label, xpar_reduce(ctx, XPAR_INT32, XPAR_SUM, dx, n, &r));
  xt_expect e = xt_ref_reduce(XPAR_INT32, XPAR_SUM, h, n, 1);
  xt_check_scalar(label, "reduce", XPAR_INT32, &r, e);
  if (b == XPAR_BACKEND_CPU_SERIAL || b == XPAR_BACKEND_CPU) expect_tier(label, ctx, 1);
  if (b == XPAR_BACKEND_CUDA) expect_tier(label, ctx, 0);
  OKL(label, xpar_dot(ctx, XPAR_INT32, dx, dx, n, &r));
  xt_check_scalar(label, "dot", XPAR_INT32, &r, xt_ref_dot(XPAR_INT32, h, h, n, 1));
  /* scan device -> device */
  OKL(label, xpar_scan(ctx, XPAR_INT32, XPAR_MAX, XPAR_INCLUSIVE, dx, dy, n));
  int32_t *back = (int32_t *)malloc(n * sizeof *back);
  xt_expect *exp = (xt_expect *)malloc(n * sizeof *exp);
  assert_non_null(back);
  assert_non_null(exp);
  CUDA_OK(label, cudaMemcpy(back, dy, n * sizeof *back, cudaMemcpyDeviceToHost));
  xt_ref_scan(XPAR_INT32, XPAR_MAX, XPAR_INCLUSIVE, NULL, h, n, 1, exp);
  xt_check_array(label, "scan into device memory", XPAR_INT32, back, exp, n);
  /* device -> host output */
  int32_t *hout = (int32_t *)malloc(n * sizeof *hout);
  assert_non_null(hout);
  OKL(label, xpar_scan(ctx, XPAR_INT32, XPAR_SUM, XPAR_EXCLUSIVE, dx, hout, n));
  xt_ref_scan(XPAR_INT32, XPAR_SUM, XPAR_EXCLUSIVE, NULL, h, n, 1, exp);
  xt_check_array(label, "scan device -> host", XPAR_INT32, hout, exp, n);
  /* host -> device output; then axpy and add in device memory */
  OKL(label, xpar_scan(ctx, XPAR_INT32, XPAR_SUM, XPAR_EXCLUSIVE, h, dy, n));
  CUDA_OK(label, cudaMemcpy(back, dy, n * sizeof *back, cudaMemcpyDeviceToHost));
  xt_check_array(label, "scan host -> device", XPAR_INT32, back, exp, n);
  const int32_t a = -3;
  OKL(label, xpar_axpy(ctx, XPAR_INT32, &a, dx, dy, n)); /* dy = -3 h + exscan(h) */
  OKL(label, xpar_add(ctx, XPAR_INT32, dy, dx, dy, n));  /* dy += h */
  CUDA_OK(label, cudaMemcpy(back, dy, n * sizeof *back, cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < n; i++) {
    uint32_t want = (uint32_t)(-2) * (uint32_t)h[i] + (uint32_t)(int32_t)exp[i].v;
    if ((uint32_t)back[i] != want)
      xt_failf(label, "axpy+add in device memory: element %zu is %d, expected %d", i, back[i], (int32_t)want);
  }
  const int32_t f = 11;
  OKL(label, xpar_fill(ctx, XPAR_INT32, &f, dy, n));
  CUDA_OK(label, cudaMemcpy(back, dy, n * sizeof *back, cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < n; i++)
    if (back[i] != 11) xt_failf(label, "fill in device memory: element %zu is %d", i, back[i]);
  /* The input was not modified. */
  CUDA_OK(label, cudaMemcpy(back, dx, n * sizeof *back, cudaMemcpyDeviceToHost));
  xt_check_bytes(label, "device input after all calls", back, h, n * sizeof *h);
  xpar_context_destroy(ctx);
  cudaFree(dx);
  cudaFree(dy);
  free(h);
  free(back);
  free(hout);
  free(exp);
}
#endif

static void raw_pointers(int managed, xpar_backend b) {
  NEED_CUDART();
#if defined(XT_HAVE_CUDART)
  raw_pointers_one(managed, b);
#else
  (void)managed;
  (void)b;
#endif
}
static void raw_device_auto(void **state) { (void)state; raw_pointers(0, XPAR_BACKEND_AUTO); }
static void raw_device_cpu_serial(void **state) { (void)state; raw_pointers(0, XPAR_BACKEND_CPU_SERIAL); }
static void raw_device_cpu(void **state) { (void)state; raw_pointers(0, XPAR_BACKEND_CPU); }
static void raw_device_cuda(void **state) { (void)state; raw_pointers(0, XPAR_BACKEND_CUDA); }
static void raw_device_cuda_serial(void **state) { (void)state; raw_pointers(0, XPAR_BACKEND_CUDA_SERIAL); }
static void raw_managed_auto(void **state) { (void)state; raw_pointers(1, XPAR_BACKEND_AUTO); }
static void raw_managed_cpu_serial(void **state) { (void)state; raw_pointers(1, XPAR_BACKEND_CPU_SERIAL); }
static void raw_managed_cpu(void **state) { (void)state; raw_pointers(1, XPAR_BACKEND_CPU); }
static void raw_managed_cuda(void **state) { (void)state; raw_pointers(1, XPAR_BACKEND_CUDA); }
static void raw_managed_cuda_serial(void **state) { (void)state; raw_pointers(1, XPAR_BACKEND_CUDA_SERIAL); }

/* ---- nowait + wait ------------------------------------------------------------------------------ */
static void nowait_variants(void **state) {
  (void)state;
  NEED_CUDART();
#if defined(XT_HAVE_CUDART)
  const size_t n = (1 << 20) + 3;
  int64_t *h = iota64(n, -7);
  int64_t *dx, *dy, *dz, *dres;
  assert_int_equal(cudaMalloc((void **)&dx, n * sizeof *dx), cudaSuccess);
  assert_int_equal(cudaMalloc((void **)&dy, n * sizeof *dy), cudaSuccess);
  assert_int_equal(cudaMalloc((void **)&dz, n * sizeof *dz), cudaSuccess);
  assert_int_equal(cudaMalloc((void **)&dres, 2 * sizeof *dres), cudaSuccess);
  assert_int_equal(cudaMemcpy(dx, h, n * sizeof *h, cudaMemcpyHostToDevice), cudaSuccess);
  /* a pageable copy may return before its DMA lands */
  assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
  const xpar_backend backends[] = {XPAR_BACKEND_CUDA, XPAR_BACKEND_AUTO};
  for (size_t b = 0; b < 2; b++) {
    xpar_context *ctx = ctx_with(backends[b]);
    const int64_t two = 2, one = 1;
    /* A chain on one stream: fill, axpy, add, scan, reduce, dot; one wait. */
    XT_OK(xpar_fill_nowait(ctx, XPAR_INT64, &one, dy, n));          /* y = 1           */
    XT_OK(xpar_axpy_nowait(ctx, XPAR_INT64, &two, dx, dy, n));       /* y = 2x + 1      */
    XT_OK(xpar_add_nowait(ctx, XPAR_INT64, dy, dx, dy, n));          /* y = 3x + 1      */
    XT_OK(xpar_reduce_nowait(ctx, XPAR_INT64, XPAR_SUM, dy, n, dres)); /* sum(3x + 1)   */
    XT_OK(xpar_dot_nowait(ctx, XPAR_INT64, dx, dx, n, dres + 1));     /* sum x^2         */
    XT_OK(xpar_scan_nowait(ctx, XPAR_INT64, XPAR_SUM, XPAR_INCLUSIVE, dy, dy, n));
    {
      /* The call copies *init: the caller's temporary may change (or die) before the
       * queued scan runs. */
      int64_t carry = 1000003;
      XT_OK(xpar_scan_init_nowait(ctx, XPAR_INT64, XPAR_SUM, XPAR_EXCLUSIVE, &carry, dx, dz, n));
      carry = -1;
      (void)carry;
    }
    XT_OK(xpar_wait(ctx));
    int64_t res[2];
    assert_int_equal(cudaMemcpy(res, dres, sizeof res, cudaMemcpyDeviceToHost), cudaSuccess);
    int64_t want_sum = 3 * sum_range(n, -7) + (int64_t)n, want_dot = 0;
    for (size_t i = 0; i < n; i++) want_dot += h[i] * h[i];
    if (res[0] != want_sum) xt_failf("nowait chain", "backend %s: reduce %lld, expected %lld", xpar_backend_name(backends[b]), (long long)res[0], (long long)want_sum);
    if (res[1] != want_dot) xt_failf("nowait chain", "backend %s: dot %lld, expected %lld", xpar_backend_name(backends[b]), (long long)res[1], (long long)want_dot);
    int64_t *back = (int64_t *)malloc(n * sizeof *back);
    assert_non_null(back);
    assert_int_equal(cudaMemcpy(back, dy, n * sizeof *back, cudaMemcpyDeviceToHost), cudaSuccess);
    int64_t acc = 0;
    for (size_t i = 0; i < n; i++) {
      acc += 3 * h[i] + 1;
      if (back[i] != acc) xt_failf("nowait chain", "scan[%zu] = %lld, expected %lld", i, (long long)back[i], (long long)acc);
    }
    assert_int_equal(cudaMemcpy(back, dz, n * sizeof *back, cudaMemcpyDeviceToHost), cudaSuccess);
    acc = 1000003;
    for (size_t i = 0; i < n; i++) {
      if (back[i] != acc) xt_failf("nowait chain", "scan_init[%zu] = %lld, expected %lld", i, (long long)back[i], (long long)acc);
      acc += h[i];
    }
    free(back);
    XT_OK(xpar_wait(ctx)); /* nothing queued: fine */
    xpar_context_destroy(ctx);
  }
  /* Mapped arrays as nowait outputs: results land in the device copy. */
  xpar_context *ctx = ctx_with(XPAR_BACKEND_CUDA);
  int64_t *m = iota64(n, 0);
  XT_OK(xpar_map(ctx, m, n * sizeof *m, XPAR_MAP_TO));
  const int64_t v = 6;
  XT_OK(xpar_fill_nowait(ctx, XPAR_INT64, &v, m, n));
  XT_OK(xpar_wait(ctx));
  XT_OK(xpar_unmap(ctx, m, XPAR_UNMAP_FROM));
  for (size_t i = 0; i < n; i++)
    if (m[i] != 6) xt_failf("nowait fill into a mapped array", "m[%zu] = %lld", i, (long long)m[i]);
  xpar_context_destroy(ctx);
  free(m);
  cudaFree(dx);
  cudaFree(dy);
  cudaFree(dz);
  cudaFree(dres);
  free(h);
#endif
}

/* ---- an application stream -------------------------------------------------------------------- */
static void app_stream(void **state) {
  (void)state;
  NEED_CUDART();
#if defined(XT_HAVE_CUDART)
  const size_t n = 500009;
  int64_t *h = iota64(n, 3);
  int64_t *dx, *dy;
  cudaStream_t s;
  assert_int_equal(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  assert_int_equal(cudaMalloc((void **)&dx, n * sizeof *dx), cudaSuccess);
  assert_int_equal(cudaMalloc((void **)&dy, n * sizeof *dy), cudaSuccess);
  assert_int_equal(cudaMemcpyAsync(dx, h, n * sizeof *h, cudaMemcpyHostToDevice, s), cudaSuccess);
  xpar_context *ctx = ctx_with(XPAR_BACKEND_CUDA);
  XT_OK(xpar_context_set_stream(ctx, (void *)s));
  /* Ordered after the application's copy on the same stream. */
  XT_OK(xpar_scan_nowait(ctx, XPAR_INT64, XPAR_SUM, XPAR_EXCLUSIVE, dx, dy, n));
  int64_t *back = (int64_t *)malloc(n * sizeof *back);
  assert_non_null(back);
  assert_int_equal(cudaMemcpyAsync(back, dy, n * sizeof *back, cudaMemcpyDeviceToHost, s), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  int64_t acc = 0;
  for (size_t i = 0; i < n; i++) {
    if (back[i] != acc) xt_failf("app stream", "scan[%zu] = %lld, expected %lld", i, (long long)back[i], (long long)acc);
    acc += h[i];
  }
  int64_t r = 0;
  XT_OK(xpar_reduce(ctx, XPAR_INT64, XPAR_SUM, dx, n, &r)); /* synchronous on the app stream */
  assert_int_equal(r, sum_range(n, 3));
  XT_OK(xpar_context_set_stream(ctx, NULL));
  XT_OK(xpar_reduce(ctx, XPAR_INT64, XPAR_SUM, dx, n, &r));
  assert_int_equal(r, sum_range(n, 3));
  xpar_context_destroy(ctx);
  /* The application still owns its stream: it works after the context is gone. */
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
  cudaFree(dx);
  cudaFree(dy);
  free(h);
  free(back);
#endif
}

/* ---- threads --------------------------------------------------------------------------------- */
/* xpar.h: a context is used by one thread at a time; overlapping calls on a shared one are
 * mostly refused with XPAR_ERR_CONTEXT_BUSY (nothing written), but the check is lock-free and
 * cannot catch every interleaving.  So each call is stamped on one logical clock (a seq_cst
 * counter, read before and after the call): a call that went wrong is excused only when an
 * admitted call of the other thread overlapped it on that clock (the undetected overlap the
 * header allows; counted and printed), and is a failure otherwise.  A refusal that wrote
 * anything is always a failure. */
enum { THREAD_CALLS = 2 * 12 };
typedef struct {
  unsigned long start, end; /* the logical clock around the call */
  int admitted;             /* not refused as busy */
  int wrong;                /* admitted, and a wrong result or an unexpected status */
  char what[160];
} call_record;

typedef struct {
  xpar_context *ctx; /* shared, or NULL: make one of `backend` */
  xpar_backend backend;
  int id, iters;
  int errors, busy, ok;
  char msg[256];
  int ncalls;
  call_record calls[THREAD_CALLS];
} worker_t;

static atomic_ulong thread_clock;

static call_record *begin_call(worker_t *w) {
  call_record *c = &w->calls[w->ncalls++];
  memset(c, 0, sizeof *c);
  c->start = atomic_fetch_add(&thread_clock, 1);
  return c;
}
static void end_call(call_record *c, xpar_status s) {
  c->end = atomic_fetch_add(&thread_clock, 1);
  c->admitted = s != XPAR_ERR_CONTEXT_BUSY;
}

static void *worker(void *arg) {
  worker_t *w = (worker_t *)arg;
  xpar_context *ctx = w->ctx;
  if (!ctx) {
    if (xpar_context_create(&ctx) != XPAR_OK) {
      w->errors++;
      snprintf(w->msg, sizeof w->msg, "context_create failed");
      return NULL;
    }
    xpar_context_set_backend(ctx, w->backend);
    if (w->backend == XPAR_BACKEND_CUDA) xpar_context_set_offload(ctx, XPAR_OFFLOAD_MANDATORY);
  }
  const size_t n = 200003;
  int64_t *x = (int64_t *)malloc(n * sizeof *x), *y = (int64_t *)malloc(n * sizeof *y);
  if (!x || !y) {
    w->errors++;
    free(x);
    free(y);
    return NULL;
  }
  for (int it = 0; it < w->iters && w->ncalls + 2 <= THREAD_CALLS; it++) {
    int64_t base = (int64_t)w->id * 1000003 + it;
    for (size_t i = 0; i < n; i++) x[i] = base + (int64_t)i;
    const int64_t poison = INT64_MIN + 12345;
    int64_t r = poison;
    call_record *c = begin_call(w);
    xpar_status s = xpar_reduce(ctx, XPAR_INT64, XPAR_SUM, x, n, &r);
    end_call(c, s);
    if (s == XPAR_ERR_CONTEXT_BUSY) {
      w->busy++;
      if (r != poison && !w->errors) {
        w->errors++;
        snprintf(w->msg, sizeof w->msg, "a BUSY refusal wrote the result (%lld)", (long long)r);
      }
    } else if (s != XPAR_OK) {
      c->wrong = 1;
      snprintf(c->what, sizeof c->what, "iteration %d: reduce: %s", it, xpar_status_name(s));
    } else {
      w->ok++;
      if (r != sum_range(n, base)) {
        c->wrong = 1;
        snprintf(c->what, sizeof c->what, "iteration %d: sum %lld, expected %lld", it,
                 (long long)r, (long long)sum_range(n, base));
      }
    }
    for (size_t i = 0; i < n; i++) y[i] = -1;
    c = begin_call(w);
    s = xpar_scan(ctx, XPAR_INT64, XPAR_SUM, XPAR_INCLUSIVE, x, y, n);
    end_call(c, s);
    if (s == XPAR_OK) {
      int64_t acc = 0;
      for (size_t i = 0; i < n; i++) {
        acc += x[i];
        if (y[i] != acc) {
          c->wrong = 1;
          snprintf(c->what, sizeof c->what, "iteration %d: scan[%zu] = %lld, expected %lld", it,
                   i, (long long)y[i], (long long)acc);
          break;
        }
      }
    } else if (s == XPAR_ERR_CONTEXT_BUSY) {
      w->busy++;
      for (size_t i = 0; i < n; i++)
        if (y[i] != -1) {
          if (!w->errors) snprintf(w->msg, sizeof w->msg, "a BUSY scan wrote y[%zu]", i);
          w->errors++;
          break;
        }
    } else {
      c->wrong = 1;
      snprintf(c->what, sizeof c->what, "iteration %d: scan: %s", it, xpar_status_name(s));
    }
  }
  free(x);
  free(y);
  if (!w->ctx) xpar_context_destroy(ctx);
  return NULL;
}

/* Whether an admitted call of `other` overlapped c on the logical clock. */
static int overlapped(const call_record *c, const worker_t *other) {
  for (int k = 0; k < other->ncalls; k++) {
    const call_record *o = &other->calls[k];
    if (o->admitted && o->start < c->end && c->start < o->end) return 1;
  }
  return 0;
}

static void run_threads(const char *label, xpar_backend b, int shared) {
  enum { T = 2 };
  worker_t w[T];
  pthread_t th[T];
  xpar_context *ctx = NULL;
  if (shared) ctx = ctx_with(b);
  for (int i = 0; i < T; i++) {
    memset(&w[i], 0, sizeof w[i]);
    w[i].ctx = ctx;
    w[i].backend = b;
    w[i].id = i + 1;
    w[i].iters = 12;
    assert_int_equal(pthread_create(&th[i], NULL, worker, &w[i]), 0);
  }
  for (int i = 0; i < T; i++) assert_int_equal(pthread_join(th[i], NULL), 0);
  for (int i = 0; i < T; i++) {
    int undetected = 0;
    for (int k = 0; k < w[i].ncalls; k++) {
      const call_record *c = &w[i].calls[k];
      if (!c->wrong) continue;
      if (shared && overlapped(c, &w[1 - i])) {
        undetected++;
        continue;
      }
      if (!w[i].errors) snprintf(w[i].msg, sizeof w[i].msg, "%s", c->what);
      w[i].errors++;
    }
    print_message("  %s thread %d: %d ok, %d busy, %d errors, %d wrong under an undetected "
                  "overlap\n", label, i, w[i].ok, w[i].busy, w[i].errors, undetected);
    if (w[i].errors) xt_failf(label, "thread %d: %d errors; first: %s", i, w[i].errors, w[i].msg);
    if (!shared && w[i].busy) xt_failf(label, "thread %d got CONTEXT_BUSY on its own context", i);
  }
  if (shared) {
    /* The context still works after the contention. */
    int64_t v[4] = {1, 2, 3, 4}, r = 0;
    XT_OK(xpar_reduce(ctx, XPAR_INT64, XPAR_SUM, v, 4, &r));
    assert_int_equal(r, 10);
    xpar_context_destroy(ctx);
  }
}

static void threads_own_contexts_cpu(void **state) {
  (void)state;
  run_threads("own contexts, cpu-serial", XPAR_BACKEND_CPU_SERIAL, 0);
  run_threads("own contexts, auto", XPAR_BACKEND_AUTO, 0);
}
static void threads_shared_context_cpu(void **state) {
  (void)state;
  run_threads("shared context, cpu", XPAR_BACKEND_CPU, 1);
}
static void threads_own_contexts_cuda(void **state) {
  (void)state;
  NEED_GPU();
  run_threads("own contexts, cuda", XPAR_BACKEND_CUDA, 0);
}
static void threads_shared_context_cuda(void **state) {
  (void)state;
  NEED_GPU();
  run_threads("shared context, cuda", XPAR_BACKEND_CUDA, 1);
}

#define T(name, fn) {name, fn, NULL, NULL, NULL}

int main(int argc, char **argv) {
  xt_init("test_mapping", argc, argv);
  const struct CMUnitTest tests[] = {
      T("map_refused/cpu", map_refused),
      T("memory_query/cpu", memory_query_host),
      T("threads_own_contexts/cpu", threads_own_contexts_cpu),
      T("threads_shared_context/cpu", threads_shared_context_cpu),
      T("map_to_then_ops/cuda", map_to_then_ops),
      T("gpu_write_cpu_read/cuda", gpu_write_cpu_read),
      T("update_and_unmap/cuda", update_and_unmap),
      T("mapped_subranges/cuda", mapped_subranges),
      T("residency_after_auto/cuda", residency_after_auto),
      T("mapping_errors/cuda", mapping_errors),
      T("memory_query/cuda", memory_query_cuda),
      T("raw_device_ptr_backend_auto/cuda", raw_device_auto),
      T("raw_device_ptr_backend_cpu_serial/cuda", raw_device_cpu_serial),
      T("raw_device_ptr_backend_cpu/cuda", raw_device_cpu),
      T("raw_device_ptr_backend_cuda/cuda", raw_device_cuda),
      T("raw_device_ptr_backend_cuda_serial/cuda", raw_device_cuda_serial),
      T("raw_managed_ptr_backend_auto/cuda", raw_managed_auto),
      T("raw_managed_ptr_backend_cpu_serial/cuda", raw_managed_cpu_serial),
      T("raw_managed_ptr_backend_cpu/cuda", raw_managed_cpu),
      T("raw_managed_ptr_backend_cuda/cuda", raw_managed_cuda),
      T("raw_managed_ptr_backend_cuda_serial/cuda", raw_managed_cuda_serial),
      T("nowait_variants/cuda", nowait_variants),
      T("app_stream/cuda", app_stream),
      T("threads_own_contexts/cuda", threads_own_contexts_cuda),
      T("threads_shared_context/cuda", threads_shared_context_cuda),
  };
  return cmocka_run_group_tests_name("mapping", tests, NULL, NULL);
}
