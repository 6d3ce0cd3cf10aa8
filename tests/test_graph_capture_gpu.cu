/*
 * xpar while the context's stream is capturing a CUDA graph (xpar.h,
 * xpar_context_set_stream, "CUDA graphs"), on the GPU:
 *  - the nowait axpy, add, fill, reduce (sum, max) and dot and a nowait
 *    xpar_launch kernel are captured: nothing runs at capture time, and every
 *    replay of the graph computes them from the arrays' contents at that
 *    replay (the reductions' scratch allocated inside the graph);
 *    (AUTO keeps a small nowait call on device data on the GPU: captured);
 *  - the other nowait calls (scan, a forced CPU backend's
 *    copies of device data) return XPAR_ERR_NOT_SUPPORTED with a detail, write
 *    nothing, and leave the capture valid (it still ends into a graph that
 *    runs); xpar_wait after captured calls alone has nothing to wait for;
 *  - a synchronous GPU call (reduce, add, xpar_launch, set_stream's wait),
 *    and xpar_wait or a host call while nowait work queued before the
 *    capture is outstanding, return XPAR_ERR_NOT_SUPPORTED with a detail and
 *    write nothing; the runtime has ended the capture (invalidated);
 *  - a CPU call on host data runs as usual during the capture;
 *  - after the capture the context works as before.
 * Exit 77 without a usable GPU (CTest: skipped).  Seed: XPAR_TEST_SEED.
 */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <vector>

#include <xpar/xpar.h>
#include <xpar/xpar_kernel.h>

#include "common/gpu_app_checks.h"
#include "kernels/test_kernels.h"

static int failures = 0;

static unsigned long long rng_state;
static uint32_t next_u32(void) {
  rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(rng_state >> 33);
}

static std::vector<int32_t> random_i32(size_t n) {
  std::vector<int32_t> v(n);
  for (auto &e : v) e = (int32_t)(next_u32() % 2001u) - 1000;
  return v;
}

static std::vector<int32_t> to_host(const int32_t *d, size_t n) {
  std::vector<int32_t> h(n);
  CK(cudaMemcpy(h.data(), d, n * sizeof(int32_t), cudaMemcpyDeviceToHost));
  return h;
}

static void capture_status_is(cudaStream_t s, cudaStreamCaptureStatus want, const char *after) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  CK(cudaStreamIsCapturing(s, &status));
  if (status != want)
    FAIL("after %s: capture status %d, expected %d", after, (int)status, (int)want);
}
static void still_capturing(cudaStream_t s, const char *after) {
  capture_status_is(s, cudaStreamCaptureStatusActive, after);
}

/* A call that must be refused during the capture: XPAR_ERR_NOT_SUPPORTED, a detail
 * naming the capture, and the capture then in state `after` (active: refused before
 * anything was queued; invalidated: the runtime refused xpar's wait). */
static void expect_refused(xpar_status st, cudaStream_t s, const char *what,
                           cudaStreamCaptureStatus after = cudaStreamCaptureStatusActive) {
  if (st != XPAR_ERR_NOT_SUPPORTED)
    FAIL("%s during the capture: %s, expected ERR_NOT_SUPPORTED", what, xpar_status_name(st));
  else if (!strstr(xpar_last_error_detail(), "capturing"))
    FAIL("%s: the detail does not name the capture: \"%s\"", what, xpar_last_error_detail());
  capture_status_is(s, after, what);
}

/* End a capture the runtime has invalidated: no graph. */
static void end_invalidated(cudaStream_t s, const char *what) {
  cudaGraph_t graph = NULL;
  const cudaError_t e = cudaStreamEndCapture(s, &graph);
  if (e != cudaErrorStreamCaptureInvalidated)
    FAIL("%s: ending the capture gave %s, expected cudaErrorStreamCaptureInvalidated", what,
         cudaGetErrorName(e));
  if (graph) cudaGraphDestroy(graph);
  (void)cudaGetLastError();
}

static void check_equal(const char *what, const std::vector<int32_t> &got,
                        const std::vector<int32_t> &want) {
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < want.size(); i++)
    if (got[i] != want[i] && bad++ == 0) first = i;
  if (bad)
    FAIL("%s: %zu of %zu elements wrong, first [%zu] = %d, expected %d", what, bad, want.size(),
         first, got[first], want[first]);
}

static void capture_at(size_t n) {
  const size_t bytes = n * sizeof(int32_t);
  const int before = failures;
  xpar_context *ctx = NULL;
  XK(xpar_context_create(&ctx));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  XK(xpar_context_set_stream(ctx, (void *)s));
  XK(xpar_context_set_backend(ctx, XPAR_BACKEND_CUDA));

  int32_t *x, *y, *z, *w, *f, *u, *scan_out, *result, *g8;
  CK(cudaMalloc(&x, bytes));
  CK(cudaMalloc(&y, bytes));
  CK(cudaMalloc(&z, bytes));
  CK(cudaMalloc(&w, bytes));
  CK(cudaMalloc(&f, bytes));
  CK(cudaMalloc(&u, bytes));
  CK(cudaMalloc(&scan_out, bytes));
  CK(cudaMalloc(&result, 64));
  CK(cudaMalloc(&g8, 8 * sizeof(int32_t)));
  CK(cudaMemset(g8, 0xAB, 8 * sizeof(int32_t)));
  const std::vector<int32_t> poison(n, (int32_t)0xABABABAB);
  std::vector<int32_t> hx = random_i32(n), hy = random_i32(n), hw = random_i32(n),
                       hu = random_i32(n);
  CK(cudaMemcpy(x, hx.data(), bytes, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(y, hy.data(), bytes, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(w, hw.data(), bytes, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(u, hu.data(), bytes, cudaMemcpyHostToDevice));
  for (int32_t *p : {z, f, scan_out}) CK(cudaMemcpy(p, poison.data(), bytes, cudaMemcpyHostToDevice));
  CK(cudaMemset(result, 0xAB, 64));
  std::vector<int32_t> host_in = random_i32(n);
  const int32_t alpha = 3, value = 17;
  const uint32_t ualpha = 5;

  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  /* captured */
  XK(xpar_add_nowait(ctx, XPAR_INT32, x, y, z, n));
  XK(xpar_axpy_nowait(ctx, XPAR_INT32, &alpha, x, w, n));
  XK(xpar_fill_nowait(ctx, XPAR_INT32, &value, f, n));
  xpar_arg args[3] = {XPAR_ARG_SCALAR_OF(XPAR_UINT32, &ualpha), XPAR_ARG_IN(XPAR_UINT32, x, n),
                      XPAR_ARG_INOUT(XPAR_UINT32, u, n)};
  XK(xpar_context_set_kernel_threshold(ctx, &xk_axpy_u32, XPAR_THRESHOLD_GPU_DEVICE_DATA, 0));
  XK(xpar_launch_nowait(ctx, &xk_axpy_u32, n, args, 3));
  /* reductions: scratch from cudaMallocAsync inside the graph */
  int32_t *r_sum = result, *r_max = result + 4, *r_dot = result + 8;
  XK(xpar_reduce_nowait(ctx, XPAR_INT32, XPAR_SUM, x, n, r_sum));
  XK(xpar_reduce_nowait(ctx, XPAR_INT32, XPAR_MAX, y, n, r_max));
  XK(xpar_dot_nowait(ctx, XPAR_INT32, x, y, n, r_dot));
  still_capturing(s, "the captured calls");
  /* refused */
  int64_t host_sum = 0;
  expect_refused(xpar_scan_nowait(ctx, XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE, x, scan_out, n), s,
                 "scan_nowait");
  XK(xpar_wait(ctx)); /* the captured calls queued nothing */
  still_capturing(s, "xpar_wait");
  /* AUTO keeps a nowait call on device data on the GPU below its threshold (the
   * copies would make it synchronous): captured too */
  const size_t small = n < 8 ? n : 8;
  XK(xpar_context_set_backend(ctx, XPAR_BACKEND_AUTO));
  XK(xpar_fill_nowait(ctx, XPAR_INT32, &value, g8, small));
  still_capturing(s, "AUTO fill_nowait of 8 device elements");
  /* a forced CPU backend copies device data: refused */
  XK(xpar_context_set_backend(ctx, XPAR_BACKEND_CPU_SERIAL));
  expect_refused(xpar_fill_nowait(ctx, XPAR_INT32, &value, scan_out, small), s,
                 "forced-CPU fill_nowait of device elements");
  /* host data on the CPU: runs */
  int32_t cpu_sum = 0;
  XK(xpar_reduce(ctx, XPAR_INT32, XPAR_SUM, host_in.data(), n, &cpu_sum));
  int32_t want_sum = 0;
  for (int32_t v : host_in) want_sum = (int32_t)((uint32_t)want_sum + (uint32_t)v);
  if (cpu_sum != want_sum) FAIL("n = %zu: host reduce during the capture %d, expected %d", n, cpu_sum, want_sum);
  still_capturing(s, "a host reduce");
  XK(xpar_context_set_backend(ctx, XPAR_BACKEND_CUDA));

  cudaGraph_t graph;
  CK(cudaStreamEndCapture(s, &graph));
  /* Nothing ran at capture time. */
  check_equal("z before the first replay", to_host(z, n), poison);
  check_equal("f before the first replay", to_host(f, n), poison);
  check_equal("w before the first replay", to_host(w, n), hw);
  check_equal("the AUTO fill before the first replay", to_host(g8, small),
              std::vector<int32_t>(small, (int32_t)0xABABABAB));
  check_equal("scan out (refused)", to_host(scan_out, n), poison);
  {
    unsigned char r[64];
    CK(cudaMemcpy(r, result, 64, cudaMemcpyDeviceToHost));
    for (int i = 0; i < 64; i++)
      if (r[i] != 0xAB) {
        FAIL("n = %zu: a captured reduce / dot wrote its result at capture (byte %d = %#x)", n,
             i, r[i]);
        break;
      }
  }

  cudaGraphExec_t exec;
  CK(cudaGraphInstantiate(&exec, graph, 0));
  for (int replay = 0; replay < 3; replay++) {
    /* Each replay reads the arrays as they are then. */
    if (replay > 0) {
      hx = random_i32(n), hy = random_i32(n);
      CK(cudaMemcpy(x, hx.data(), bytes, cudaMemcpyHostToDevice));
      CK(cudaMemcpy(y, hy.data(), bytes, cudaMemcpyHostToDevice));
    }
    const std::vector<int32_t> w0 = to_host(w, n), u0 = to_host(u, n);
    CK(cudaGraphLaunch(exec, s));
    CK(cudaStreamSynchronize(s));
    std::vector<int32_t> want_z(n), want_w(n), want_u(n), want_f(n, value);
    for (size_t i = 0; i < n; i++) {
      want_z[i] = (int32_t)((uint32_t)hx[i] + (uint32_t)hy[i]);
      want_w[i] = (int32_t)((uint32_t)alpha * (uint32_t)hx[i] + (uint32_t)w0[i]);
      want_u[i] = (int32_t)(ualpha * (uint32_t)hx[i] + (uint32_t)u0[i]);
    }
    char label[64];
    snprintf(label, sizeof label, "n = %zu replay %d: add", n, replay);
    check_equal(label, to_host(z, n), want_z);
    snprintf(label, sizeof label, "n = %zu replay %d: axpy", n, replay);
    check_equal(label, to_host(w, n), want_w);
    snprintf(label, sizeof label, "n = %zu replay %d: fill", n, replay);
    check_equal(label, to_host(f, n), want_f);
    snprintf(label, sizeof label, "n = %zu replay %d: xpar_launch", n, replay);
    check_equal(label, to_host(u, n), want_u);
    snprintf(label, sizeof label, "n = %zu replay %d: AUTO fill of %zu", n, replay, small);
    check_equal(label, to_host(g8, small), std::vector<int32_t>(small, value));
    uint32_t want_sum = 0, want_dot = 0;
    int32_t want_max = INT32_MIN;
    for (size_t i = 0; i < n; i++) {
      want_sum += (uint32_t)hx[i];
      want_dot += (uint32_t)hx[i] * (uint32_t)hy[i];
      if (hy[i] > want_max) want_max = hy[i];
    }
    int32_t got[12];
    CK(cudaMemcpy(got, result, sizeof got, cudaMemcpyDeviceToHost));
    if (got[0] != (int32_t)want_sum || got[4] != want_max || got[8] != (int32_t)want_dot)
      FAIL("n = %zu replay %d: reduce sum %d (want %d), max %d (want %d), dot %d (want %d)", n,
           replay, got[0], (int32_t)want_sum, got[4], want_max, got[8], (int32_t)want_dot);
  }
  CK(cudaGraphExecDestroy(exec));
  CK(cudaGraphDestroy(graph));

  /* Synchronous calls: each in a capture of its own, which the runtime ends when xpar
   * waits; nothing is written. */
  {
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    expect_refused(xpar_reduce(ctx, XPAR_INT32, XPAR_SUM, x, n, &host_sum), s, "reduce",
                   cudaStreamCaptureStatusInvalidated);
    end_invalidated(s, "reduce");
    if (host_sum != 0)
      FAIL("n = %zu: the refused synchronous reduce wrote %lld", n, (long long)host_sum);
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    expect_refused(xpar_add(ctx, XPAR_INT32, x, y, scan_out, n), s, "add (synchronous)",
                   cudaStreamCaptureStatusInvalidated);
    end_invalidated(s, "add");
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    expect_refused(xpar_launch(ctx, &xk_axpy_u32, n, args, 3), s, "xpar_launch (synchronous)",
                   cudaStreamCaptureStatusInvalidated);
    end_invalidated(s, "xpar_launch");
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    expect_refused(xpar_context_set_stream(ctx, NULL), s, "set_stream",
                   cudaStreamCaptureStatusInvalidated);
    end_invalidated(s, "set_stream");
    CK(cudaStreamSynchronize(s));
    check_equal("scan out / add out of the refused calls", to_host(scan_out, n), poison);
  }

  /* After the capture: the refused calls work. */
  int64_t sum = 0;
  XK(xpar_reduce_sum_wide(ctx, XPAR_INT32, x, n, &sum));
  int64_t want = 0;
  for (int32_t v : hx) want += v;
  if (sum != want) FAIL("n = %zu: reduce after the capture %lld, expected %lld", n, (long long)sum, (long long)want);
  XK(xpar_scan_nowait(ctx, XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE, x, scan_out, n));
  XK(xpar_wait(ctx));
  {
    std::vector<int32_t> got = to_host(scan_out, n), want_scan(n);
    uint32_t acc = 0;
    for (size_t i = 0; i < n; i++) want_scan[i] = (int32_t)(acc += (uint32_t)hx[i]);
    check_equal("scan after the capture", got, want_scan);
  }
  XK(xpar_context_set_stream(ctx, NULL));
  xpar_context_destroy(ctx);
  CK(cudaStreamDestroy(s));
  for (int32_t *p : {x, y, z, w, f, u, scan_out, result, g8}) cudaFree(p);
  printf("capture, n = %zu: %s\n", n, failures == before ? "ok" : "FAILED");
}

/* Nowait work queued (for real) before the capture begins: waiting for it during the
 * capture is refused (a stream synchronisation would end the capture), and so is a host
 * call that must wait for it first; after the capture, xpar_wait waits for it. */
static void queued_before_capture(void) {
  const int before = failures;
  const size_t n = (size_t)1 << 22;
  xpar_context *ctx = NULL;
  XK(xpar_context_create(&ctx));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  XK(xpar_context_set_stream(ctx, (void *)s));
  XK(xpar_context_set_backend(ctx, XPAR_BACKEND_CUDA));
  int32_t *x, *z;
  CK(cudaMalloc(&x, n * sizeof(int32_t)));
  CK(cudaMalloc(&z, n * sizeof(int32_t)));
  const std::vector<int32_t> hx = random_i32(n);
  CK(cudaMemcpy(x, hx.data(), n * sizeof(int32_t), cudaMemcpyHostToDevice));
  XK(xpar_add_nowait(ctx, XPAR_INT32, x, x, z, n));
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  expect_refused(xpar_wait(ctx), s, "xpar_wait with work queued before the capture",
                 cudaStreamCaptureStatusInvalidated);
  XK(xpar_context_set_backend(ctx, XPAR_BACKEND_AUTO));
  std::vector<int32_t> host(1000, 1);
  int32_t sum = -1;
  expect_refused(xpar_reduce(ctx, XPAR_INT32, XPAR_SUM, host.data(), host.size(), &sum), s,
                 "a host reduce with work queued before the capture",
                 cudaStreamCaptureStatusInvalidated);
  if (sum != -1) FAIL("the refused host reduce wrote %d", sum);
  end_invalidated(s, "work queued before the capture");
  XK(xpar_wait(ctx));
  std::vector<int32_t> want(n);
  for (size_t i = 0; i < n; i++) want[i] = (int32_t)(2u * (uint32_t)hx[i]);
  check_equal("the add queued before the capture", to_host(z, n), want);
  XK(xpar_reduce(ctx, XPAR_INT32, XPAR_SUM, host.data(), host.size(), &sum));
  if (sum != 1000) FAIL("host reduce after the capture: %d, expected 1000", sum);
  XK(xpar_context_set_stream(ctx, NULL));
  xpar_context_destroy(ctx);
  CK(cudaStreamDestroy(s));
  cudaFree(x), cudaFree(z);
  printf("work queued before the capture: %s\n", failures == before ? "ok" : "FAILED");
}

int main(void) {
  const char *s = getenv("XPAR_TEST_SEED");
  const unsigned long long seed = s ? strtoull(s, NULL, 0) : (unsigned long long)time(NULL);
  rng_state = seed;
  printf("test_graph_capture_gpu: seed %llu\n", seed);
  xpar_device_info info;
  XK(xpar_device_query(&info));
  if (!info.usable) {
    printf("skipped: no usable GPU (%s)\n", info.reason);
    return 77;
  }
  {
    /* What the capture check costs a GPU call (each refusable step asks once); printed
     * for the notes, not judged. */
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaStreamCaptureStatus status;
    const int reps = 200000;
    timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < reps; i++) CK(cudaStreamIsCapturing(s, &status));
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("cudaStreamIsCapturing: %.1f ns per query\n",
           ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / reps);
    /* the driver's, which the library asks */
    void *fn = NULL;
    cudaDriverEntryPointQueryResult found;
    if (cudaGetDriverEntryPointByVersion("cuStreamIsCapturing", &fn, 12000, cudaEnableDefault,
                                         &found) == cudaSuccess && fn) {
      typedef int (*is_capturing_fn)(cudaStream_t, int *);
      int dstatus = 0;
      clock_gettime(CLOCK_MONOTONIC, &t0);
      for (int i = 0; i < reps; i++) ((is_capturing_fn)fn)(s, &dstatus);
      clock_gettime(CLOCK_MONOTONIC, &t1);
      printf("cuStreamIsCapturing: %.1f ns per query\n",
             ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / reps);
    }
    (void)cudaGetLastError();
    CK(cudaStreamDestroy(s));
  }
  for (size_t n : {(size_t)1, (size_t)1000, (size_t)(1u << 20) + 3, (size_t)(1u << 23) + 5})
    capture_at(n);
  queued_before_capture();
  printf("test_graph_capture_gpu: %s\n", failures ? "FAILED" : "passed");
  return failures ? 1 : 0;
}
