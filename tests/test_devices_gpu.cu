/*
 * xpar in a process that uses several GPUs (a CUDA application; exit 77 without a
 * usable GPU).  With one GPU or more:
 *  - a fresh thread (no context current) calling a context on the last device --
 *    synchronous calls on device arrays (CPU and CUDA tiers, the pinned staging grown
 *    three times), on host arrays, a mapping, releasing memory, destroying -- leaves
 *    no context current after each call, and its runtime device afterwards is still 0
 *    (cudaGetDevice, and the device of its next cudaMalloc);
 *  - device memory of a driver context the application created (cuCtxCreate) on the
 *    context's device: refused (XPAR_ERR_INVALID_ARGUMENT, xpar_memory_query too, a
 *    scalar there too), nothing written, the CUDA context intact.
 * With two GPUs or more, on every visible device:
 *  - a context on each device d called from a thread whose current device is d + 1
 *    (mod the count):
 *    every op (reduce, wide sum, dot, scan, axpy, add, fill), synchronous and
 *    nowait, AUTO and forced CUDA, device and host arrays, a mapping, the
 *    device probe, releasing memory, destroying the context -- results right,
 *    and the thread's current device and driver context what it was before
 *    each call (an application's next cudaMalloc must land where it expects);
 *  - the same for application kernels (xpar_launch), operators (xpar_reduce_op,
 *    xpar_scan_op), a kernel's calibration and shadow mode (a CPU shadow of CUDA, a
 *    CUDA shadow of the CPU tier);
 *  - XPAR_DEVICE=<the last device> at context creation;
 *  - device memory of another device than the context's: refused with
 *    XPAR_ERR_INVALID_ARGUMENT naming the device, nothing written, the CUDA
 *    context intact (a kernel's load from it would fault and end the process's
 *    CUDA context); accepted and right once the application enables peer
 *    access, refused again after it disables it; xpar_memory_query refuses it too;
 *  - the application's stream of another device refused, and moving a context
 *    away from its stream's device;
 *  - one thread per device, each with a context on the next device, at once.
 * Integers only: every expected value is exact.  Seed: XPAR_TEST_SEED.
 */
#include <cuda.h> /* driver types; cuCtxGetCurrent through the runtime's entry point */
#include <cudaTypedefs.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <thread>
#include <time.h>
#include <vector>

#include <xpar/xpar.h>
#include <xpar/xpar_kernel.h>

static int failures = 0;
#include "common/gpu_app_checks.h"
#include "kernels/test_kernels.h"
#include "operators/operators.h"

static unsigned long long seed;
static PFN_cuCtxGetCurrent_v4000 get_current;

static CUcontext current_context(void) {
  CUcontext c = NULL;
  if (get_current(&c) != CUDA_SUCCESS) {
    fprintf(stderr, "cuCtxGetCurrent failed\n");
    exit(2);
  }
  return c;
}

/* What the application's thread had current before a call; checked after it. */
typedef struct caller {
  int device;
  CUcontext context;
} caller;

static caller caller_now(void) {
  caller c;
  CK(cudaGetDevice(&c.device));
  c.context = current_context();
  return c;
}

static void expect_caller(const caller *before, const char *what) {
  const caller after = caller_now();
  if (after.device != before->device || after.context != before->context)
    FAIL("%s: the thread's current device / context changed: %d / %p before, %d / %p after",
         what, before->device, (void *)before->context, after.device, (void *)after.context);
}

static int32_t value_at(size_t i, unsigned salt) { return (int32_t)((i * 7u + salt) % 13u) - 6; }

/* Arrays of n int32 on one device (x, y, z), a device scalar for nowait results, and
 * the host values of x and y. */
typedef struct arrays {
  int device;
  size_t n;
  int32_t *x, *y, *z, *result;
  std::vector<int32_t> hx, hy;
} arrays;

static void arrays_make(arrays *a, int device, size_t n, unsigned salt) {
  int was;
  CK(cudaGetDevice(&was));
  CK(cudaSetDevice(device));
  a->device = device;
  a->n = n;
  CK(cudaMalloc(&a->x, n * sizeof(int32_t)));
  CK(cudaMalloc(&a->y, n * sizeof(int32_t)));
  CK(cudaMalloc(&a->z, n * sizeof(int32_t)));
  CK(cudaMalloc(&a->result, sizeof(int64_t)));
  a->hx.resize(n);
  a->hy.resize(n);
  for (size_t i = 0; i < n; i++) {
    a->hx[i] = value_at(i, salt);
    a->hy[i] = value_at(i, salt + 5);
  }
  CK(cudaMemcpy(a->x, a->hx.data(), n * sizeof(int32_t), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(a->y, a->hy.data(), n * sizeof(int32_t), cudaMemcpyHostToDevice));
  CK(cudaDeviceSynchronize());
  CK(cudaSetDevice(was));
}

static void arrays_free(arrays *a) {
  int was;
  CK(cudaGetDevice(&was));
  CK(cudaSetDevice(a->device));
  CK(cudaFree(a->x));
  CK(cudaFree(a->y));
  CK(cudaFree(a->z));
  CK(cudaFree(a->result));
  CK(cudaSetDevice(was));
}

/* z as the host sees it (cudaMemcpy with UVA, from any current device). */
static std::vector<int32_t> read_back(const int32_t *d, size_t n) {
  std::vector<int32_t> h(n);
  CK(cudaMemcpy(h.data(), d, n * sizeof(int32_t), cudaMemcpyDefault));
  return h;
}

static void check_elements(const int32_t *d, const std::vector<int32_t> &want, const char *what) {
  const std::vector<int32_t> got = read_back(d, want.size());
  for (size_t i = 0; i < want.size(); i++)
    if (got[i] != want[i]) {
      FAIL("%s: element %zu of %zu is %d, expected %d", what, i, want.size(), got[i], want[i]);
      return;
    }
}

#define CALL_OK(label, call)                                                                  \
  do {                                                                                        \
    const xpar_status s_ = (call);                                                            \
    if (s_ != XPAR_OK)                                                                        \
      FAIL("%s: %s: %s (%s)", label, #call, xpar_status_name(s_), xpar_last_error_detail()); \
    expect_caller(&before, label);                                                            \
  } while (0)

/* Every op on a's arrays through ctx, synchronous then nowait, each result checked and
 * the calling thread's device and context checked after each call. */
static void run_ops(xpar_context *ctx, arrays *a, const char *label) {
  const caller before = caller_now();
  const size_t n = a->n;
  char what[256];
  int64_t want_sum = 0, want_dot = 0;
  for (size_t i = 0; i < n; i++) {
    want_sum += a->hx[i];
    want_dot += (int64_t)a->hx[i] * a->hy[i];
  }
  int32_t sum = 0x5A5A5A5A, dot = 0x5A5A5A5A;
  int64_t wide = 0x5A5A5A5A;
  snprintf(what, sizeof what, "%s, n = %zu, reduce", label, n);
  CALL_OK(what, xpar_reduce(ctx, XPAR_INT32, XPAR_SUM, a->x, n, &sum));
  if (sum != (int32_t)want_sum) FAIL("%s: %d, expected %d", what, sum, (int32_t)want_sum);
  snprintf(what, sizeof what, "%s, n = %zu, wide sum", label, n);
  CALL_OK(what, xpar_reduce_sum_wide(ctx, XPAR_INT32, a->x, n, &wide));
  if (wide != want_sum) FAIL("%s: %lld, expected %lld", what, (long long)wide, (long long)want_sum);
  snprintf(what, sizeof what, "%s, n = %zu, dot", label, n);
  CALL_OK(what, xpar_dot(ctx, XPAR_INT32, a->x, a->y, n, &dot));
  if (dot != (int32_t)want_dot) FAIL("%s: %d, expected %d", what, dot, (int32_t)want_dot);

  std::vector<int32_t> want(n);
  int32_t run = 0;
  for (size_t i = 0; i < n; i++) want[i] = run += a->hx[i];
  snprintf(what, sizeof what, "%s, n = %zu, inclusive scan", label, n);
  CALL_OK(what, xpar_scan(ctx, XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE, a->x, a->z, n));
  check_elements(a->z, want, what);

  const int32_t alpha = 3, value = 7;
  std::vector<int32_t> hy = a->hy;
  for (size_t i = 0; i < n; i++) want[i] = a->hx[i] + hy[i];
  snprintf(what, sizeof what, "%s, n = %zu, add", label, n);
  CALL_OK(what, xpar_add(ctx, XPAR_INT32, a->x, a->y, a->z, n));
  check_elements(a->z, want, what);
  snprintf(what, sizeof what, "%s, n = %zu, fill", label, n);
  CALL_OK(what, xpar_fill(ctx, XPAR_INT32, &value, a->z, n));
  check_elements(a->z, std::vector<int32_t>(n, value), what);
  for (size_t i = 0; i < n; i++) want[i] = alpha * a->hx[i] + hy[i];
  snprintf(what, sizeof what, "%s, n = %zu, axpy", label, n);
  CALL_OK(what, xpar_axpy(ctx, XPAR_INT32, &alpha, a->x, a->y, n));
  check_elements(a->y, want, what);
  CK(cudaMemcpy(a->y, a->hy.data(), n * sizeof(int32_t), cudaMemcpyDefault)); /* y back */

  /* nowait: results on a's device, then xpar_wait */
  snprintf(what, sizeof what, "%s, n = %zu, nowait reduce + scan + wait", label, n);
  CALL_OK(what, xpar_reduce_nowait(ctx, XPAR_INT32, XPAR_SUM, a->x, n, a->result));
  run = 0;
  for (size_t i = 0; i < n; i++) want[i] = run += a->hx[i];
  CALL_OK(what, xpar_scan_nowait(ctx, XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE, a->x, a->z, n));
  CALL_OK(what, xpar_wait(ctx));
  int32_t got = 0;
  CK(cudaMemcpy(&got, a->result, sizeof got, cudaMemcpyDefault));
  if (got != (int32_t)want_sum) FAIL("%s: reduce %d, expected %d", what, got, (int32_t)want_sum);
  check_elements(a->z, want, what);
}

/* The context on device 1 from a thread on device 0: arrays on device 1, on the host,
 * in a mapping; AUTO (small n: the CPU tier through copies) and forced CUDA. */
static void test_other_device_context(int dev_app, int dev_ctx) {
  const int before_failures = failures;
  CK(cudaSetDevice(dev_app));
  CK(cudaFree(0)); /* the thread's context: the primary one of dev_app */
  const caller before = caller_now();
  xpar_context *ctx;
  CALL_OK("create", xpar_context_create(&ctx));
  CALL_OK("set_device", xpar_context_set_device(ctx, dev_ctx));
  xpar_device_info info;
  CALL_OK("device query", xpar_device_query(&info));
  const size_t sizes[] = {256, (size_t)1 << 20};
  for (size_t k = 0; k < 2; k++) {
    arrays a;
    arrays_make(&a, dev_ctx, sizes[k], (unsigned)(seed + k));
    const xpar_backend backends[] = {XPAR_BACKEND_AUTO, XPAR_BACKEND_CUDA};
    for (int b = 0; b < 2; b++) {
      CALL_OK("set_backend", xpar_context_set_backend(ctx, backends[b]));
      char label[128];
      snprintf(label, sizeof label, "context on device %d, %s, arrays on its device", dev_ctx,
               b ? "cuda" : "auto");
      run_ops(ctx, &a, label);
    }
    arrays_free(&a);
  }
  /* host arrays, forced CUDA: staged through the context's device */
  {
    const size_t n = (size_t)1 << 16;
    std::vector<int32_t> hx(n), hz(n, -1);
    int32_t want = 0, sum = 0;
    for (size_t i = 0; i < n; i++) want += hx[i] = value_at(i, (unsigned)seed);
    CALL_OK("host arrays, cuda", xpar_reduce(ctx, XPAR_INT32, XPAR_SUM, hx.data(), n, &sum));
    if (sum != want) FAIL("host arrays on device %d: reduce %d, expected %d", dev_ctx, sum, want);
    CALL_OK("host arrays, cuda", xpar_scan(ctx, XPAR_INT32, XPAR_SUM, XPAR_EXCLUSIVE, hx.data(),
                                           hz.data(), n));
    int32_t run = 0;
    for (size_t i = 0; i < n; i++, run += hx[i - 1])
      if (hz[i] != run) {
        FAIL("host arrays on device %d: exclusive scan element %zu is %d, expected %d", dev_ctx,
             i, hz[i], run);
        break;
      }
    /* a mapping on the context's device */
    CALL_OK("map", xpar_map(ctx, hx.data(), n * sizeof(int32_t), XPAR_MAP_TO));
    sum = 0;
    CALL_OK("mapped reduce", xpar_reduce(ctx, XPAR_INT32, XPAR_SUM, hx.data(), n, &sum));
    if (sum != want) FAIL("mapped array on device %d: reduce %d, expected %d", dev_ctx, sum, want);
    void *dptr = NULL;
    CALL_OK("mapped device pointer", xpar_mapped_device_ptr(ctx, hx.data(), &dptr));
    int owner = -1;
    cudaPointerAttributes attr;
    CK(cudaPointerGetAttributes(&attr, dptr));
    owner = attr.device;
    if (owner != dev_ctx) FAIL("the mapping's device copy is on device %d, not %d", owner, dev_ctx);
    CALL_OK("unmap", xpar_unmap(ctx, hx.data(), XPAR_UNMAP_RELEASE));
  }
  CALL_OK("release memory", xpar_context_release_memory(ctx));
  CALL_OK("destroy", xpar_context_destroy(ctx));
  printf("context on device %d from a thread on device %d: %s\n", dev_ctx, dev_app,
         failures == before_failures ? "ok" : "FAILED");
}

/* XPAR_DEVICE at creation: the context and the device query on that device, the
 * caller's own untouched. */
static void test_env_device(int dev_app, int dev_env) {
  const int before_failures = failures;
  CK(cudaSetDevice(dev_app));
  const caller before = caller_now();
  char v[16];
  snprintf(v, sizeof v, "%d", dev_env);
  setenv("XPAR_DEVICE", v, 1);
  xpar_device_info info;
  CALL_OK("device query with XPAR_DEVICE", xpar_device_query(&info));
  if (info.device != dev_env) FAIL("XPAR_DEVICE=%d: the query describes device %d", dev_env, info.device);
  xpar_context *ctx;
  CALL_OK("create with XPAR_DEVICE", xpar_context_create(&ctx));
  unsetenv("XPAR_DEVICE");
  arrays a;
  arrays_make(&a, dev_env, (size_t)1 << 18, (unsigned)seed + 11);
  run_ops(ctx, &a, "XPAR_DEVICE context");
  arrays_free(&a);
  CALL_OK("destroy", xpar_context_destroy(ctx));
  printf("XPAR_DEVICE=%d from a thread on device %d: %s\n", dev_env, dev_app,
         failures == before_failures ? "ok" : "FAILED");
}

/* Every op on arrays of device `dev_arrays` through a context on `dev_ctx`, which
 * cannot access them: refused, naming the device, nothing written. */
static void expect_refused(xpar_context *ctx, arrays *a, int dev_ctx, const char *label) {
  const caller before = caller_now();
  const size_t n = a->n;
  const std::vector<int32_t> poison(n, 0x7E7E7E7E);
  CK(cudaMemcpy(a->z, poison.data(), n * sizeof(int32_t), cudaMemcpyDefault));
  const int32_t alpha = 2, value = 9;
  int32_t host_result = 0x5A5A5A5A;
  const xpar_backend backends[] = {XPAR_BACKEND_AUTO, XPAR_BACKEND_CUDA, XPAR_BACKEND_CPU};
  for (int b = 0; b < 3; b++) {
    XK(xpar_context_set_backend(ctx, backends[b]));
    struct {
      const char *op;
      xpar_status st;
    } calls[] = {
        {"reduce", xpar_reduce(ctx, XPAR_INT32, XPAR_SUM, a->x, n, &host_result)},
        {"dot", xpar_dot(ctx, XPAR_INT32, a->x, a->y, n, &host_result)},
        {"scan", xpar_scan(ctx, XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE, a->x, a->z, n)},
        {"add", xpar_add(ctx, XPAR_INT32, a->x, a->y, a->z, n)},
        {"fill", xpar_fill(ctx, XPAR_INT32, &value, a->z, n)},
        {"axpy (y = z)", xpar_axpy(ctx, XPAR_INT32, &alpha, a->x, a->z, n)},
        {"nowait reduce", xpar_reduce_nowait(ctx, XPAR_INT32, XPAR_SUM, a->x, n, a->result)},
    };
    for (auto &c : calls) {
      if (c.st != XPAR_ERR_INVALID_ARGUMENT)
        FAIL("%s, backend %d: %s on device %d's memory through a context on device %d: %s, "
             "expected ERR_INVALID_ARGUMENT",
             label, b, c.op, a->device, dev_ctx, xpar_status_name(c.st));
    }
    expect_caller(&before, label);
  }
  /* the detail names the device */
  XK(xpar_context_set_backend(ctx, XPAR_BACKEND_AUTO));
  const xpar_status st = xpar_reduce(ctx, XPAR_INT32, XPAR_SUM, a->x, n, &host_result);
  char want[32];
  snprintf(want, sizeof want, "device %d", a->device);
  if (st != XPAR_ERR_INVALID_ARGUMENT || !strstr(xpar_last_error_detail(), want))
    FAIL("%s: the refusal's detail does not name %s: \"%s\"", label, want, xpar_last_error_detail());
  if (host_result != 0x5A5A5A5A) FAIL("%s: a refused reduce wrote its result", label);
  check_elements(a->z, poison, "a refused call's output");
  /* a synchronous result in the other device's memory, input on the context's device */
  {
    arrays own;
    arrays_make(&own, dev_ctx, 4096, 3);
    const xpar_status s = xpar_reduce(ctx, XPAR_INT32, XPAR_SUM, own.x, own.n, a->result);
    if (s != XPAR_ERR_INVALID_ARGUMENT)
      FAIL("%s: a reduce into device %d's memory: %s, expected ERR_INVALID_ARGUMENT", label,
           a->device, xpar_status_name(s));
    arrays_free(&own);
  }
  /* the query refuses what the calls refuse (xpar_mpi asks it before its exchange) */
  xpar_memory_kind kind = XPAR_MEMORY_KIND_COUNT_;
  const xpar_status q = xpar_memory_query(ctx, a->x, n * sizeof(int32_t), &kind);
  if (q != XPAR_ERR_INVALID_ARGUMENT || !strstr(xpar_last_error_detail(), want))
    FAIL("%s: xpar_memory_query on device %d's memory: %s (\"%s\"), expected "
         "ERR_INVALID_ARGUMENT naming %s", label, a->device, xpar_status_name(q),
         xpar_last_error_detail(), want);
  if (kind != XPAR_MEMORY_KIND_COUNT_) FAIL("%s: a refused memory query wrote its kind", label);
  expect_caller(&before, "the memory query");
}

static void test_foreign_memory(int dev0, int dev1) {
  const int before_failures = failures;
  CK(cudaSetDevice(dev0));
  xpar_context *ctx;
  XK(xpar_context_create(&ctx));
  XK(xpar_context_set_device(ctx, dev1));
  const size_t sizes[] = {256, (size_t)1 << 20};
  for (size_t k = 0; k < 2; k++) {
    arrays a;
    arrays_make(&a, dev0, sizes[k], (unsigned)(seed + 21 + k));
    expect_refused(ctx, &a, dev1, "no peer access");
    /* the CUDA contexts are intact: the context runs on its own device's memory */
    arrays own;
    arrays_make(&own, dev1, sizes[k], (unsigned)(seed + 31 + k));
    XK(xpar_context_set_backend(ctx, XPAR_BACKEND_CUDA));
    run_ops(ctx, &own, "after the refusals");
    arrays_free(&own);
    int can = 0;
    CK(cudaDeviceCanAccessPeer(&can, dev1, dev0));
    if (can) {
      CK(cudaSetDevice(dev1));
      CK(cudaDeviceEnablePeerAccess(dev0, 0));
      CK(cudaSetDevice(dev0));
      const xpar_backend backends[] = {XPAR_BACKEND_AUTO, XPAR_BACKEND_CUDA};
      for (int b = 0; b < 2; b++) {
        XK(xpar_context_set_backend(ctx, backends[b]));
        run_ops(ctx, &a, "device 0's memory with peer access enabled");
      }
      CK(cudaSetDevice(dev1));
      CK(cudaDeviceDisablePeerAccess(dev0));
      CK(cudaSetDevice(dev0));
      expect_refused(ctx, &a, dev1, "peer access disabled again");
    } else {
      printf("device %d cannot access device %d's memory: peer case not run\n", dev1, dev0);
    }
    arrays_free(&a);
  }
  XK(xpar_context_destroy(ctx));
  printf("another device's memory: %s\n", failures == before_failures ? "ok" : "FAILED");
}

/* The application's streams: one of another device than the context's is refused, and
 * so is moving a context away from its stream's device; the per-thread handle follows
 * the context's device. */
static void test_streams(int dev0, int dev1) {
  const int before_failures = failures;
  cudaStream_t s0, s1;
  CK(cudaSetDevice(dev0));
  CK(cudaStreamCreate(&s0));
  CK(cudaSetDevice(dev1));
  CK(cudaStreamCreate(&s1));
  CK(cudaSetDevice(dev0));
  xpar_context *ctx;
  XK(xpar_context_create(&ctx));
  XK(xpar_context_set_device(ctx, dev1));
  xpar_status st = xpar_context_set_stream(ctx, (void *)s0);
  if (st != XPAR_ERR_INVALID_ARGUMENT)
    FAIL("a stream of device %d on a context of device %d: %s, expected ERR_INVALID_ARGUMENT",
         dev0, dev1, xpar_status_name(st));
  XK(xpar_context_set_stream(ctx, (void *)s1));
  arrays a;
  arrays_make(&a, dev1, (size_t)1 << 18, (unsigned)seed + 61);
  XK(xpar_context_set_backend(ctx, XPAR_BACKEND_CUDA));
  run_ops(ctx, &a, "the application's stream of the context's device");
  st = xpar_context_set_device(ctx, dev0);
  if (st != XPAR_ERR_INVALID_ARGUMENT)
    FAIL("moving a context away from its stream's device: %s, expected ERR_INVALID_ARGUMENT",
         xpar_status_name(st));
  run_ops(ctx, &a, "after the refused move");
  XK(xpar_context_set_stream(ctx, cudaStreamPerThread));
  run_ops(ctx, &a, "the per-thread stream");
  XK(xpar_context_set_stream(ctx, NULL));
  XK(xpar_context_set_device(ctx, dev0));
  arrays_free(&a);
  XK(xpar_context_destroy(ctx));
  CK(cudaStreamDestroy(s0));
  CK(cudaSetDevice(dev1));
  CK(cudaStreamDestroy(s1));
  CK(cudaSetDevice(dev0));
  printf("the application's streams on two devices: %s\n",
         failures == before_failures ? "ok" : "FAILED");
}

/* One thread per device at once, thread t on device t with a context on device t + 1
 * (mod the count). */
static void test_threads(int count) {
  const int before_failures = failures;
  auto worker = [&](int dev_thread, int dev_ctx, unsigned salt) {
    CK(cudaSetDevice(dev_thread));
    CK(cudaFree(0));
    xpar_context *ctx;
    XK(xpar_context_create(&ctx));
    XK(xpar_context_set_device(ctx, dev_ctx));
    arrays big, small;
    arrays_make(&big, dev_ctx, (size_t)1 << 20, salt);
    arrays_make(&small, dev_ctx, 1000, salt + 1);
    char label[64];
    snprintf(label, sizeof label, "thread on device %d", dev_thread);
    for (int r = 0; r < 20; r++) {
      run_ops(ctx, &big, label);
      run_ops(ctx, &small, label);
    }
    arrays_free(&big);
    arrays_free(&small);
    XK(xpar_context_destroy(ctx));
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < count; t++)
    threads.emplace_back(worker, t, (t + 1) % count, (unsigned)seed + 41 + 10 * t);
  for (auto &t : threads) t.join();
  printf("%d threads, a context each on another device than the thread's: %s\n", count,
         failures == before_failures ? "ok" : "FAILED");
}

/* Application kernels, operators, a kernel's calibration and shadow mode through a
 * context on dev_ctx from a thread on dev_app, on dev_ctx's arrays: results right and
 * the thread's device and context as before each call. */
static void test_kernels_other_device(int dev_app, int dev_ctx) {
  const int before_failures = failures;
  CK(cudaSetDevice(dev_app));
  CK(cudaFree(0));
  const caller before = caller_now();
  xpar_context *ctx;
  CALL_OK("create", xpar_context_create(&ctx));
  CALL_OK("set_device", xpar_context_set_device(ctx, dev_ctx));
  const size_t sizes[] = {300, (size_t)1 << 20};
  char what[200];
  for (size_t k = 0; k < 2; k++) {
    arrays a;
    arrays_make(&a, dev_ctx, sizes[k], (unsigned)seed + 71 + (unsigned)k);
    const size_t n = a.n;
    const xpar_backend backends[] = {XPAR_BACKEND_AUTO, XPAR_BACKEND_CUDA};
    for (int b = 0; b < 2; b++) {
      CALL_OK("set_backend", xpar_context_set_backend(ctx, backends[b]));
      /* xpar_launch: y = 3 x + y in uint32, on the device arrays */
      const uint32_t alpha = 3;
      xpar_arg args[3] = {XPAR_ARG_SCALAR_OF(XPAR_UINT32, &alpha),
                          XPAR_ARG_IN(XPAR_UINT32, a.x, n), XPAR_ARG_INOUT(XPAR_UINT32, a.y, n)};
      snprintf(what, sizeof what, "device %d from device %d, %s, n = %zu, xpar_launch", dev_ctx,
               dev_app, b ? "cuda" : "auto", n);
      CALL_OK(what, xpar_launch(ctx, &xk_axpy_u32, n, args, 3));
      std::vector<int32_t> want(n);
      for (size_t i = 0; i < n; i++)
        want[i] = (int32_t)(alpha * (uint32_t)a.hx[i] + (uint32_t)a.hy[i]);
      check_elements(a.y, want, what);
      CK(cudaMemcpy(a.y, a.hy.data(), n * sizeof(int32_t), cudaMemcpyDefault)); /* y back */
      /* operators: the uint32 sum, reduce and inclusive scan */
      uint32_t sum = 0x5A5A5A5Au, want_sum = 0;
      for (size_t i = 0; i < n; i++) want_sum += (uint32_t)a.hx[i];
      snprintf(what, sizeof what, "device %d from device %d, %s, n = %zu, operator reduce",
               dev_ctx, dev_app, b ? "cuda" : "auto", n);
      CALL_OK(what, xpar_reduce_op(ctx, &xk_sum_u32, a.x, n, &sum));
      if (sum != want_sum) FAIL("%s: %u, expected %u", what, sum, want_sum);
      snprintf(what, sizeof what, "device %d from device %d, %s, n = %zu, operator scan",
               dev_ctx, dev_app, b ? "cuda" : "auto", n);
      CALL_OK(what, xpar_scan_op(ctx, &xk_sum_u32, XPAR_INCLUSIVE, a.x, a.z, n));
      uint32_t run = 0;
      for (size_t i = 0; i < n; i++) want[i] = (int32_t)(run += (uint32_t)a.hx[i]);
      check_elements(a.z, want, what);
    }
    /* shadow mode: a CPU shadow of the CUDA tier, then a CUDA shadow of the CPU tier,
     * a mismatch failing the call */
    CALL_OK("set_backend", xpar_context_set_backend(ctx, XPAR_BACKEND_CUDA));
    CALL_OK("set_shadow", xpar_context_set_shadow(ctx, XPAR_TIER_CPU_SERIAL, 1));
    snprintf(what, sizeof what, "context on device %d, cpu-serial shadow of cuda", dev_ctx);
    run_ops(ctx, &a, what);
    CALL_OK("set_backend", xpar_context_set_backend(ctx, XPAR_BACKEND_CPU));
    CALL_OK("set_shadow", xpar_context_set_shadow(ctx, XPAR_TIER_CUDA, 1));
    snprintf(what, sizeof what, "context on device %d, cuda shadow of the cpu", dev_ctx);
    run_ops(ctx, &a, what);
    CALL_OK("shadow off", xpar_context_set_shadow(ctx, XPAR_TIER_NONE, 0));
    arrays_free(&a);
  }
  /* a kernel's calibration on the context's device arrays (y accumulates: its
   * contents afterwards are not checked) */
  {
    arrays a;
    arrays_make(&a, dev_ctx, (size_t)1 << 16, (unsigned)seed + 81);
    CALL_OK("set_backend", xpar_context_set_backend(ctx, XPAR_BACKEND_AUTO));
    const uint32_t alpha = 5;
    xpar_arg args[3] = {XPAR_ARG_SCALAR_OF(XPAR_UINT32, &alpha),
                        XPAR_ARG_IN(XPAR_UINT32, a.x, a.n), XPAR_ARG_INOUT(XPAR_UINT32, a.y, a.n)};
    xpar_kernel_calibration report;
    memset(&report, 0, sizeof report);
    snprintf(what, sizeof what, "device %d from device %d, xpar_kernel_calibrate", dev_ctx,
             dev_app);
    CALL_OK(what, xpar_kernel_calibrate(ctx, &xk_axpy_u32, a.n, args, 3, &report));
    if (!report.tier_measured[XPAR_TIER_CUDA]) FAIL("%s: the CUDA tier was not timed", what);
    /* the context still runs right on its device afterwards */
    const uint32_t one = 1;
    xpar_arg again[3] = {XPAR_ARG_SCALAR_OF(XPAR_UINT32, &one),
                         XPAR_ARG_IN(XPAR_UINT32, a.x, a.n), XPAR_ARG_INOUT(XPAR_UINT32, a.z, a.n)};
    const std::vector<int32_t> zeros(a.n, 0);
    CK(cudaMemcpy(a.z, zeros.data(), a.n * sizeof(int32_t), cudaMemcpyDefault));
    snprintf(what, sizeof what, "device %d, xpar_launch after the calibration", dev_ctx);
    CALL_OK(what, xpar_launch(ctx, &xk_axpy_u32, a.n, again, 3));
    check_elements(a.z, a.hx, what);
    arrays_free(&a);
  }
  CALL_OK("destroy", xpar_context_destroy(ctx));
  printf("kernels, operators, calibration, shadow on device %d from device %d: %s\n", dev_ctx,
         dev_app, failures == before_failures ? "ok" : "FAILED");
}

/* ---- one GPU is enough ------------------------------------------------------------- */

/* The driver functions the one-GPU cases use, through the runtime's entry point (the
 * test, like the library, does not link libcuda). */
static struct {
  PFN_cuDeviceGet_v2000 device_get;
  PFN_cuCtxCreate_v12050 create;
  PFN_cuCtxDestroy_v4000 destroy;
} drv;

static void *driver_fn(const char *name, int version) {
  void *fn = NULL;
  cudaDriverEntryPointQueryResult found;
  CK(cudaGetDriverEntryPointByVersion(name, &fn, version, cudaEnableDefault, &found));
  if (found != cudaDriverEntryPointSuccess || !fn) {
    fprintf(stderr, "driver entry point %s (%d) not found\n", name, version);
    exit(2);
  }
  return fn;
}

#define DK(call)                                                                   \
  do {                                                                             \
    const CUresult r_ = (call);                                                    \
    if (r_ != CUDA_SUCCESS) {                                                      \
      fprintf(stderr, "%s:%d: %s: CUresult %d\n", __FILE__, __LINE__, #call, (int)r_); \
      exit(2);                                                                     \
    }                                                                              \
  } while (0)

/*
 * A fresh thread (no context current, its runtime device never set) calls a context on
 * dev_ctx: after each call, before any runtime call of the test's own (which would bind
 * a context), no context is current; afterwards the thread's runtime device is still 0
 * and its next cudaMalloc lands on device 0 -- xpar switched through the driver alone,
 * not cudaSetDevice.  Device arrays (made by the main thread on dev_ctx) on the CPU
 * tier go through the context's pinned staging, grown three times: each growth frees
 * the old block in the context's device's context, not by binding one to the thread.
 */
static void test_fresh_thread(int dev_ctx) {
  const int before_failures = failures;
  const size_t sizes[3] = {1000, (size_t)1 << 16, (size_t)1 << 20};
  arrays a;
  arrays_make(&a, dev_ctx, sizes[2], (unsigned)seed + 91);
  const std::vector<int32_t> poison(a.n, 0x7E7E7E7E);
  CK(cudaMemcpy(a.z, poison.data(), a.n * sizeof(int32_t), cudaMemcpyDefault));
  int64_t sums[2][3]; /* [backend][size]: the thread's reduce results */
  int device_after = -1, malloc_device = -1;
  std::thread t([&] {
    auto none_current = [&](const char *after_what) {
      const CUcontext c = current_context();
      if (c != NULL)
        FAIL("fresh thread, context on device %d: after %s a context (%p) is current", dev_ctx,
             after_what, (void *)c);
    };
    none_current("nothing");
    xpar_context *ctx;
    XK(xpar_context_create(&ctx));
    none_current("xpar_context_create");
    XK(xpar_context_set_device(ctx, dev_ctx));
    none_current("xpar_context_set_device");
    xpar_device_info info;
    XK(xpar_device_query(&info));
    none_current("xpar_device_query");
    const xpar_backend backends[2] = {XPAR_BACKEND_CPU, XPAR_BACKEND_CUDA};
    for (int b = 0; b < 2; b++) {
      XK(xpar_context_set_backend(ctx, backends[b]));
      for (int k = 0; k < 3; k++) {
        int64_t wide = 0;
        XK(xpar_reduce_sum_wide(ctx, XPAR_INT32, a.x, sizes[k], &wide));
        sums[b][k] = wide;
        none_current(b ? "a reduce of device arrays on cuda" : "a reduce of device arrays on the cpu");
      }
    }
    /* the last: a scan into device memory on the CPU tier (staged back) */
    XK(xpar_context_set_backend(ctx, XPAR_BACKEND_CPU));
    XK(xpar_scan(ctx, XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE, a.x, a.z, a.n));
    none_current("a scan of device arrays on the cpu");
    /* host arrays on CUDA, a mapping */
    XK(xpar_context_set_backend(ctx, XPAR_BACKEND_CUDA));
    std::vector<int32_t> hx(a.hx);
    int32_t hsum = 0, want = 0;
    for (size_t i = 0; i < hx.size(); i++) want += hx[i];
    XK(xpar_reduce(ctx, XPAR_INT32, XPAR_SUM, hx.data(), hx.size(), &hsum));
    none_current("a reduce of host arrays on cuda");
    if (hsum != want) FAIL("fresh thread: host reduce %d, expected %d", hsum, want);
    XK(xpar_map(ctx, hx.data(), hx.size() * sizeof(int32_t), XPAR_MAP_TO));
    hsum = 0;
    XK(xpar_reduce(ctx, XPAR_INT32, XPAR_SUM, hx.data(), hx.size(), &hsum));
    XK(xpar_unmap(ctx, hx.data(), XPAR_UNMAP_RELEASE));
    none_current("a mapping's reduce and unmap");
    if (hsum != want) FAIL("fresh thread: mapped reduce %d, expected %d", hsum, want);
    XK(xpar_context_release_memory(ctx));
    none_current("xpar_context_release_memory");
    XK(xpar_context_destroy(ctx));
    none_current("xpar_context_destroy");
    /* the runtime's own device: what a fresh thread has, 0 */
    CK(cudaGetDevice(&device_after));
    void *p = NULL;
    CK(cudaMalloc(&p, 256));
    cudaPointerAttributes attr;
    CK(cudaPointerGetAttributes(&attr, p));
    malloc_device = attr.device;
    CK(cudaFree(p));
  });
  t.join();
  if (device_after != 0)
    FAIL("fresh thread after calls on device %d: cudaGetDevice says %d, not 0", dev_ctx,
         device_after);
  if (malloc_device != 0)
    FAIL("fresh thread after calls on device %d: its next cudaMalloc landed on device %d, "
         "not 0", dev_ctx, malloc_device);
  for (int b = 0; b < 2; b++)
    for (int k = 0; k < 3; k++) {
      int64_t want = 0;
      for (size_t i = 0; i < sizes[k]; i++) want += a.hx[i];
      if (sums[b][k] != want)
        FAIL("fresh thread, %s, n = %zu: wide sum %lld, expected %lld", b ? "cuda" : "cpu",
             sizes[k], (long long)sums[b][k], (long long)want);
    }
  std::vector<int32_t> want(a.n);
  int32_t run = 0;
  for (size_t i = 0; i < a.n; i++) want[i] = run += a.hx[i];
  check_elements(a.z, want, "fresh thread: the scan into device memory on the cpu");
  arrays_free(&a);
  printf("a fresh thread calling a context on device %d: %s\n", dev_ctx,
         failures == before_failures ? "ok" : "FAILED");
}

/*
 * Device memory of a driver context the application created (cuCtxCreate) on the
 * context's device -- cudaMalloc'd while that context is current, as the runtime then
 * allocates in it -- is used like any device memory: the primary context reaches it (the
 * H100 host, driver 580.159), every backend computes on it (results checked), the query
 * says device memory; as a fill value it is refused like any device scalar; and the
 * context runs on the primary context's memory after the application's context goes.
 */
static void test_application_context_memory(int dev) {
  const int before_failures = failures;
  CK(cudaSetDevice(dev));
  CK(cudaFree(0));
  const CUcontext primary = current_context();
  CUdevice handle;
  DK(drv.device_get(&handle, dev));
  CUcontext own = NULL;
  DK(drv.create(&own, NULL, 0, handle)); /* pushed: current on this thread */
  const size_t n = 4096;
  int32_t *x = NULL, *z = NULL;
  CK(cudaMalloc(&x, n * sizeof *x)); /* in `own`, the current context */
  CK(cudaMalloc(&z, n * sizeof *z));
  std::vector<int32_t> hx(n);
  for (size_t i = 0; i < n; i++) hx[i] = value_at(i, (unsigned)seed + 101);
  const std::vector<int32_t> poison(n, 0x7E7E7E7E);
  CK(cudaMemcpy(x, hx.data(), n * sizeof *x, cudaMemcpyDefault));
  CK(cudaMemcpy(z, poison.data(), n * sizeof *z, cudaMemcpyDefault));
  CK(cudaDeviceSynchronize());
  const caller before = caller_now();
  xpar_context *ctx;
  XK(xpar_context_create(&ctx));
  XK(xpar_context_set_device(ctx, dev));
  const xpar_backend backends[3] = {XPAR_BACKEND_AUTO, XPAR_BACKEND_CUDA, XPAR_BACKEND_CPU};
  std::vector<int32_t> host_out(n, 0x3C3C3C3C);
  int32_t want_sum = 0;
  std::vector<int32_t> want_scan(n), want_fill(n, 9);
  for (size_t i = 0; i < n; i++) want_scan[i] = want_sum = (int32_t)((uint32_t)want_sum + (uint32_t)hx[i]);
  for (int b = 0; b < 3; b++) {
    XK(xpar_context_set_backend(ctx, backends[b]));
    char what[96];
    int32_t result = 0x5A5A5A5A;
    const int32_t value = 9;
    /* every tier computes on it: the primary context reaches it (the CPU tiers copy) */
    snprintf(what, sizeof what, "backend %d: reduce of the application's context's memory", b);
    CALL_OK(what, xpar_reduce(ctx, XPAR_INT32, XPAR_SUM, x, n, &result));
    if (result != want_sum) FAIL("%s: %d, expected %d", what, result, want_sum);
    snprintf(what, sizeof what, "backend %d: scan into the application's context's memory", b);
    CALL_OK(what, xpar_scan(ctx, XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE, x, z, n));
    check_elements(z, want_scan, what);
    snprintf(what, sizeof what, "backend %d: fill of the application's context's memory", b);
    CALL_OK(what, xpar_fill(ctx, XPAR_INT32, &value, z, n));
    check_elements(z, want_fill, what);
    /* a fill value in device memory is refused whatever context owns it (a host scalar) */
    const xpar_status st = xpar_fill(ctx, XPAR_INT32, x, host_out.data(), n);
    if (st != XPAR_ERR_INVALID_ARGUMENT)
      FAIL("backend %d: a fill value in device memory: %s, expected ERR_INVALID_ARGUMENT", b,
           xpar_status_name(st));
    snprintf(what, sizeof what, "backend %d: a result in the application's context's memory", b);
    CALL_OK(what, xpar_reduce(ctx, XPAR_INT32, XPAR_SUM, hx.data(), n, (void *)z));
    std::vector<int32_t> want_first(want_fill);
    want_first[0] = want_sum;
    check_elements(z, want_first, what);
    expect_caller(&before, "calls on the application's context's memory");
  }
  XK(xpar_context_set_backend(ctx, XPAR_BACKEND_AUTO));
  xpar_memory_kind kind = XPAR_MEMORY_KIND_COUNT_;
  const xpar_status q = xpar_memory_query(ctx, x, n * sizeof *x, &kind);
  if (q != XPAR_OK || kind != XPAR_MEMORY_DEVICE)
    FAIL("xpar_memory_query on the application's context's memory: %s, kind %d, expected OK "
         "and device memory", xpar_status_name(q), (int)kind);
  expect_caller(&before, "the memory query");
  for (size_t i = 0; i < n; i++)
    if (host_out[i] != 0x3C3C3C3C) {
      FAIL("a refused fill wrote host element %zu", i);
      break;
    }
  /* the application's context goes, with its memory (popped: the primary context is
   * current again); the xpar context runs right on the primary context's memory */
  DK(drv.destroy(own));
  if (current_context() != primary) FAIL("cuCtxDestroy did not leave the primary context current");
  arrays a;
  arrays_make(&a, dev, (size_t)1 << 18, (unsigned)seed + 111);
  XK(xpar_context_set_backend(ctx, XPAR_BACKEND_CUDA));
  run_ops(ctx, &a, "the primary context's memory after the application's context went");
  arrays_free(&a);
  XK(xpar_context_destroy(ctx));
  printf("memory of the application's own driver context on device %d: %s\n", dev,
         failures == before_failures ? "ok" : "FAILED");
}

int main(void) {
  const char *s = getenv("XPAR_TEST_SEED");
  seed = s ? strtoull(s, NULL, 0) : (unsigned long long)time(NULL);
  printf("test_devices_gpu: seed %llu\n", seed);
  unsetenv("XPAR_DEVICE");
  xpar_device_info info;
  XK(xpar_device_query(&info));
  if (!info.usable || info.device_count < 1) {
    printf("skipped: needs a usable GPU (%d visible; %s)\n", info.device_count, info.reason);
    return 77;
  }
  const int count = info.device_count;
  void *fn = NULL;
  cudaDriverEntryPointQueryResult found;
  CK(cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &fn, 4000, cudaEnableDefault, &found));
  if (found != cudaDriverEntryPointSuccess || !fn) {
    fprintf(stderr, "cuCtxGetCurrent not found\n");
    return 2;
  }
  get_current = (PFN_cuCtxGetCurrent_v4000)fn;
  drv.device_get = (PFN_cuDeviceGet_v2000)driver_fn("cuDeviceGet", 2000);
  drv.create = (PFN_cuCtxCreate_v12050)driver_fn("cuCtxCreate", 12050);
  drv.destroy = (PFN_cuCtxDestroy_v4000)driver_fn("cuCtxDestroy", 4000);
  /* first: the fresh thread must find the runtime's device of a process in which no
   * thread has set one but the main thread's cudaSetDevice (arrays_make) */
  test_fresh_thread(count - 1);
  test_application_context_memory(count - 1);
  if (count < 2) {
    printf("1 GPU visible: the cases of several devices skipped\n");
  } else {
    for (int d = 0; d < count; d++) test_other_device_context((d + 1) % count, d);
    for (int d = 0; d < count; d++) test_kernels_other_device((d + 1) % count, d);
    test_env_device(0, count - 1);
    for (int d = 1; d < count; d++) test_foreign_memory(0, d);
    test_foreign_memory(count - 1, 0);
    test_streams(0, count - 1);
    test_threads(count);
  }
  printf("test_devices_gpu: %s\n", failures ? "FAILED" : "passed");
  return failures ? 1 : 0;
}
