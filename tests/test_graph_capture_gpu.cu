/*
 * xpar while the context's stream is capturing a CUDA graph (xpar.h,
 * xpar_context_set_stream, "CUDA graphs"), on the GPU:
 *  - the nowait axpy, add, fill, reduce (sum, max) and dot and a nowait
 *    xpar_launch kernel are captured: nothing runs at capture time, and every
 *    replay of the graph computes them from the arrays' contents at that
 *    replay (the reductions' scratch allocated inside the graph);
 *    (AUTO keeps a small nowait call on device data on the GPU: captured);
 *  - so are the calls that keep scratch between calls outside a capture --
 *    scans (4- and 8-byte tile status, block-index tiles and, under a grid
 *    override, tiles drawn from a counter), the reproducible sum and scan, and
 *    operator reduces and scans (an operator with the built-in tile status,
 *    one with its own in the scratch) -- with their scratch the graph's, each
 *    replay right on freshly drawn inputs, at grid = block = 1 too
 *    (cuda-serial); the context's own scan state is untouched by them;
 *  - a forced CPU backend's nowait call on device data (copies), and a GPU
 *    call's pinned input or output or host result (the context's staging
 *    memory), return XPAR_ERR_NOT_SUPPORTED with a detail, write nothing, and
 *    leave the capture valid (it still ends into a graph that runs); xpar_wait after
 *    captured calls alone has nothing to wait for;
 *  - a synchronous GPU call (reduce, add, xpar_launch, set_stream's wait),
 *    and xpar_wait or a host call while nowait work queued before the
 *    capture is outstanding, return XPAR_ERR_NOT_SUPPORTED with a detail and
 *    write nothing; the runtime has ended the capture (invalidated);
 *  - a CPU call on host data runs as usual during the capture;
 *  - a synchronous call that would set up the context's scratch with queued work
 *    (here its first scan and reduce) is refused before queuing anything, also in a
 *    relaxed capture; a synchronous scan recorded into a capture that then fails
 *    leaves the context's tile counter where it was;
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
#include "operators/operators.h"

static int failures = 0;

#include "common/gpu_capture_checks.h"

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

/* Byte-wise (for element types without a printable value); `same` compares two. */
template <class T, class Same>
static void check_same(const char *what, const std::vector<T> &got, const std::vector<T> &want,
                       Same same) {
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < want.size(); i++)
    if (!same(got[i], want[i]) && bad++ == 0) first = i;
  if (bad) FAIL("%s: %zu of %zu elements wrong, first at [%zu]", what, bad, want.size(), first);
}
template <class T> static void check_same(const char *what, const std::vector<T> &got,
                                          const std::vector<T> &want) {
  check_same(what, got, want, [](const T &a, const T &b) { return a == b; });
}
static bool same_arg(const xk_arg &a, const xk_arg &b) { return a.v == b.v && a.i == b.i; }
static bool same_affine(const xk_affine &a, const xk_affine &b) { return a.a == b.a && a.b == b.b; }

/* The shipped operators' combines (examples/operators/operators.xk.c), on the host. */
static xk_arg argmax_combine(xk_arg a, xk_arg b) {
  return (b.v > a.v || (b.v == a.v && b.i < a.i)) ? b : a;
}
static xk_affine affine_combine(xk_affine f, xk_affine g) {
  return xk_affine{f.a * g.a, g.a * f.b + g.b};
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
  to_device(x, hx.data(), bytes);
  to_device(y, hy.data(), bytes);
  to_device(w, hw.data(), bytes);
  to_device(u, hu.data(), bytes);
  for (int32_t *p : {z, f, scan_out}) to_device(p, poison.data(), bytes);
  CK(cudaMemset(result, 0xAB, 64));
  CK(cudaDeviceSynchronize()); /* the memsets land before work on the non-blocking stream */
  std::vector<int32_t> host_in = random_i32(n);
  int32_t *pinned;
  CK(cudaMallocHost(&pinned, bytes));
  memcpy(pinned, poison.data(), bytes);
  const int32_t alpha = 3, value = 17;
  const uint32_t ualpha = 5;

  /* Mapped arrays: one whose device copy is current, one whose device copy was never
   * written (XPAR_MAP_ALLOC). */
  std::vector<int32_t> mapped_out(n, 0), mapped_stale(n, 5);
  XK(xpar_map(ctx, mapped_out.data(), bytes, XPAR_MAP_TO));
  XK(xpar_map(ctx, mapped_stale.data(), bytes, XPAR_MAP_ALLOC));

  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  /* captured */
  XK(xpar_add_nowait(ctx, XPAR_INT32, x, y, z, n));
  XK(xpar_add_nowait(ctx, XPAR_INT32, x, y, mapped_out.data(), n)); /* into the device copy */
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
  int64_t host_sum = 0;
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
  /* host arrays and a host result of a GPU call would go through the context's staging
   * memory: refused */
  XK(xpar_context_set_backend(ctx, XPAR_BACKEND_CUDA));
  expect_refused(xpar_add_nowait(ctx, XPAR_INT32, pinned, y, scan_out, n), s,
                 "add_nowait of a pinned input");
  expect_refused(xpar_scan_nowait(ctx, XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE, x, pinned, n), s,
                 "scan_nowait into a pinned output");
  expect_refused(xpar_add_nowait(ctx, XPAR_INT32, mapped_stale.data(), y, scan_out, n), s,
                 "add_nowait of a mapped input whose device copy is stale");
  int32_t host_result = -7;
  expect_refused(xpar_reduce_nowait(ctx, XPAR_INT32, XPAR_SUM, x, n, &host_result), s,
                 "reduce_nowait into a host result");
  if (host_result != -7) FAIL("n = %zu: the refused reduce_nowait wrote %d", n, host_result);
  /* host data on the CPU: runs */
  XK(xpar_context_set_backend(ctx, XPAR_BACKEND_CPU_SERIAL));
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
  check_equal("scan out (refused calls only)", to_host(scan_out, n), poison);
  check_equal("the pinned output of the refused scan",
              std::vector<int32_t>(pinned, pinned + n), poison);
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
      to_device(x, hx.data(), bytes);
      to_device(y, hy.data(), bytes);
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
    XK(xpar_update(ctx, mapped_out.data(), XPAR_UPDATE_FROM_DEVICE));
    snprintf(label, sizeof label, "n = %zu replay %d: add into a mapped array", n, replay);
    check_equal(label, mapped_out, want_z);
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
   * waits; nothing is written.  The context's reduce scratch is set up first (so far
   * it made captured calls only, which take the graph's: its first synchronous reduce
   * in a capture would be refused before queuing anything, the capture left valid --
   * first_calls_in_relaxed_capture). */
  {
    int32_t set_up = 0;
    XK(xpar_reduce(ctx, XPAR_INT32, XPAR_SUM, x, n, &set_up));
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
  cudaFreeHost(pinned);
  printf("capture, n = %zu: %s\n", n, failures == before ? "ok" : "FAILED");
}

/* The calls that keep scratch between calls outside a capture, captured: scans (int32
 * inclusive sum, int64 exclusive max), the reproducible double sum and sum scan (a
 * context in reproducible mode on the same stream; integer-valued doubles, so every
 * order of the sum is exact), operator reduces and scans (xk_sum_u32: the built-in
 * 8-byte tile words; xk_argmax: 16-byte accumulators, the words in the scratch;
 * xk_recurrence: 16-byte words of a pair).  `grid` != 0 overrides the launch grid (the
 * scans then draw tiles from a counter); `backend` CUDA or CUDA_SERIAL. */
static void capture_stateful(size_t n, unsigned grid, xpar_backend backend) {
  const int before = failures;
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  xpar_context *ctx = NULL, *repro = NULL;
  XK(xpar_context_create(&ctx));
  XK(xpar_context_create(&repro));
  for (xpar_context *c : {ctx, repro}) {
    XK(xpar_context_set_stream(c, (void *)s));
    XK(xpar_context_set_backend(c, backend));
    XK(xpar_context_set_launch_shape(c, grid, 0));
  }
  XK(xpar_context_set_reproducible(repro, 1));

  /* A scan outside the capture first: the context's tile status and counter exist and
   * are in use; the captured scans must neither read nor advance them. */
  std::vector<int32_t> h32 = random_i32(n);
  int32_t *x32 = device_copy(h32), *s32 = device_poisoned<int32_t>(n);
  int32_t *ctx_out = device_poisoned<int32_t>(n);
  XK(xpar_scan(ctx, XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE, x32, s32, n));
  auto inclusive_sum = [&](const std::vector<int32_t> &v) {
    std::vector<int32_t> w(v.size());
    uint32_t acc = 0;
    for (size_t i = 0; i < v.size(); i++) w[i] = (int32_t)(acc += (uint32_t)v[i]);
    return w;
  };
  const std::vector<int32_t> s32_before = inclusive_sum(h32);

  std::vector<int64_t> h64(n);
  std::vector<double> hd(n);
  std::vector<xk_affine> ha(n);
  auto draw = [&]() {
    h32 = random_i32(n);
    for (size_t i = 0; i < n; i++) {
      const uint64_t bits = (uint64_t)next_u32() << 32 | next_u32();
      h64[i] = (int64_t)bits >> (next_u32() % 40); /* every magnitude, both signs */
      hd[i] = (double)((int32_t)(next_u32() % 2001u) - 1000);
      ha[i] = xk_affine{next_u32() | 1u, next_u32()}; /* odd: no product vanishes mod 2^32 */
    }
  };
  draw();
  upload(x32, h32);
  int64_t *x64 = device_copy(h64), *s64 = device_poisoned<int64_t>(n);
  double *xd = device_copy(hd), *sd = device_poisoned<double>(n);
  xk_affine *xa = device_copy(ha), *saff = device_poisoned<xk_affine>(n);
  uint32_t *su = device_poisoned<uint32_t>(n);
  xk_arg *sarg = device_poisoned<xk_arg>(n);
  unsigned char *res = device_poisoned<unsigned char>(256);
  double *r_dsum = (double *)res;
  uint32_t *r_u32 = (uint32_t *)(res + 16);
  xk_arg *r_arg = (xk_arg *)(res + 32);
  int64_t *r_min64 = (int64_t *)(res + 48);
  double *r_ddot = (double *)(res + 64);

  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  XK(xpar_scan_nowait(ctx, XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE, x32, s32, n));
  XK(xpar_scan_nowait(ctx, XPAR_INT64, XPAR_MAX, XPAR_EXCLUSIVE, x64, s64, n));
  XK(xpar_reduce_nowait(repro, XPAR_DOUBLE, XPAR_SUM, xd, n, r_dsum));
  XK(xpar_dot_nowait(repro, XPAR_DOUBLE, xd, xd, n, r_ddot));
  XK(xpar_reduce_nowait(ctx, XPAR_INT64, XPAR_MIN, x64, n, r_min64));
  XK(xpar_scan_nowait(repro, XPAR_DOUBLE, XPAR_SUM, XPAR_INCLUSIVE, xd, sd, n));
  XK(xpar_reduce_op_nowait(ctx, &xk_sum_u32, x32, n, r_u32));
  XK(xpar_scan_op_nowait(ctx, &xk_sum_u32, XPAR_INCLUSIVE, x32, su, n));
  XK(xpar_reduce_op_nowait(ctx, &xk_argmax, x32, n, r_arg));
  XK(xpar_scan_op_nowait(ctx, &xk_argmax, XPAR_EXCLUSIVE, x32, sarg, n));
  XK(xpar_scan_op_nowait(ctx, &xk_recurrence, XPAR_INCLUSIVE, xa, saff, n));
  still_capturing(s, "the captured scans and reductions");
  cudaGraph_t graph;
  CK(cudaStreamEndCapture(s, &graph));
  {
    /* Nothing ran at capture time: the outputs still hold the poison (s32 the scan
     * made before the capture). */
    const std::vector<unsigned char> r = to_host(res, 256);
    size_t written = 0;
    for (unsigned char b : r) written += b != 0xAB;
    auto poisoned = [](const auto &v) {
      size_t bad = 0;
      for (const auto &e : v) {
        const unsigned char *b = (const unsigned char *)&e;
        for (size_t k = 0; k < sizeof e; k++) bad += b[k] != 0xAB;
      }
      return bad;
    };
    written += poisoned(to_host(s64, n)) + poisoned(to_host(sd, n)) + poisoned(to_host(su, n)) +
               poisoned(to_host(saff, n));
    /* xk_arg's padding is never written: its value and index */
    for (const xk_arg &a : to_host(sarg, n))
      written += a.v != (int32_t)0xABABABAB || a.i != (int64_t)0xABABABABABABABABull;
    if (written) FAIL("n = %zu: %zu result / element bytes written at capture", n, written);
    check_equal("the scan before the capture", to_host(s32, n), s32_before);
  }
  {
    /* Every scratch block the graph allocates, it frees. */
    size_t count = 0;
    CK(cudaGraphGetNodes(graph, NULL, &count));
    std::vector<cudaGraphNode_t> nodes(count);
    CK(cudaGraphGetNodes(graph, nodes.data(), &count));
    size_t allocs = 0, frees = 0;
    for (cudaGraphNode_t node : nodes) {
      cudaGraphNodeType type;
      CK(cudaGraphNodeGetType(node, &type));
      allocs += type == cudaGraphNodeTypeMemAlloc;
      frees += type == cudaGraphNodeTypeMemFree;
    }
    if (allocs != frees || (n > 0 && allocs == 0))
      FAIL("n = %zu: the graph allocates %zu blocks and frees %zu", n, allocs, frees);
  }

  cudaGraphExec_t exec;
  CK(cudaGraphInstantiate(&exec, graph, 0));
  char label[96];
  for (int replay = 0; replay < 3; replay++) {
    if (replay > 0) {
      draw();
      upload(x32, h32), upload(x64, h64), upload(xd, hd), upload(xa, ha);
    }
    CK(cudaGraphLaunch(exec, s));
    CK(cudaStreamSynchronize(s));
    /* The context's own scan between replays (its words, epoch and counter): right, and
     * the graph's next replay must not see them. */
    XK(xpar_scan(ctx, XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE, x32, ctx_out, n));
    snprintf(label, sizeof label, "n = %zu grid %u replay %d: the context's scan between replays",
             n, grid, replay);
    check_equal(label, to_host(ctx_out, n), inclusive_sum(h32));
    std::vector<int32_t> w32(n);
    std::vector<int64_t> w64(n);
    std::vector<double> wd(n);
    std::vector<uint32_t> wu(n);
    std::vector<xk_arg> warg(n);
    std::vector<xk_affine> waff(n);
    uint32_t u = 0;
    int64_t m = INT64_MIN, lo = INT64_MAX;
    double d = 0, dd = 0;
    xk_arg best = {INT32_MIN, 0, INT64_MAX};
    xk_affine h = {1u, 0u};
    for (size_t i = 0; i < n; i++) {
      w64[i] = m;
      warg[i] = best;
      u += (uint32_t)h32[i];
      w32[i] = (int32_t)u;
      wu[i] = u;
      m = h64[i] > m ? h64[i] : m;
      lo = h64[i] < lo ? h64[i] : lo;
      wd[i] = d += hd[i];
      dd += hd[i] * hd[i];
      best = argmax_combine(best, xk_arg{h32[i], 0, (int64_t)i});
      waff[i] = h = affine_combine(h, ha[i]);
    }
    const char *tier = backend == XPAR_BACKEND_CUDA_SERIAL ? "cuda-serial" : "cuda";
#define CHECK_ARRAY(name, dev, want, ...)                                                      \
  snprintf(label, sizeof label, "n = %zu grid %u %s replay %d: %s", n, grid, tier, replay, name); \
  check_same(label, to_host(dev, n), want, ##__VA_ARGS__)
    CHECK_ARRAY("scan int32 inclusive sum", s32, w32);
    CHECK_ARRAY("scan int64 exclusive max", s64, w64);
    CHECK_ARRAY("reproducible scan double", sd, wd);
    CHECK_ARRAY("operator scan sum_u32", su, wu);
    CHECK_ARRAY("operator scan argmax exclusive", sarg, warg, same_arg);
    CHECK_ARRAY("operator scan recurrence", saff, waff, same_affine);
#undef CHECK_ARRAY
    const std::vector<unsigned char> r = to_host(res, 256);
    double got_d, got_dd;
    uint32_t got_u;
    xk_arg got_arg;
    int64_t got_lo;
    memcpy(&got_d, r.data(), sizeof got_d);
    memcpy(&got_u, r.data() + 16, sizeof got_u);
    memcpy(&got_arg, r.data() + 32, sizeof got_arg);
    memcpy(&got_lo, r.data() + 48, sizeof got_lo);
    memcpy(&got_dd, r.data() + 64, sizeof got_dd);
    if (got_d != d || got_dd != dd || got_u != u || !same_arg(got_arg, best) || got_lo != lo)
      FAIL("n = %zu grid %u %s replay %d: reproducible sum %.17g (want %.17g), dot %.17g (want "
           "%.17g), operator sum %u (want %u), argmax %d at %lld (want %d at %lld), min %lld "
           "(want %lld)",
           n, grid, tier, replay, got_d, d, got_dd, dd, got_u, u, got_arg.v, (long long)got_arg.i,
           best.v, (long long)best.i, (long long)got_lo, (long long)lo);
  }
  CK(cudaGraphExecDestroy(exec));
  CK(cudaGraphDestroy(graph));

  /* A synchronous scan during a capture is recorded up to its wait, which the runtime
   * refuses: its kernel never runs, so the context's counter must not move past it. */
  if (n > 0) {
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    expect_refused(xpar_scan(ctx, XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE, x32, ctx_out, n), s,
                   "a synchronous scan", cudaStreamCaptureStatusInvalidated);
    end_invalidated(s, "a synchronous scan");
  }
  /* The context's own scans after the capture, several in a row (its epoch and counter
   * go on from where the scans before left them). */
  for (int k = 0; k < 3; k++) {
    XK(xpar_scan(ctx, XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE, x32, s32, n));
    std::vector<int32_t> want(n);
    uint32_t acc = 0;
    for (size_t i = 0; i < n; i++) want[i] = (int32_t)(acc += (uint32_t)h32[i]);
    snprintf(label, sizeof label, "n = %zu grid %u: the context's scan %d after the capture", n,
             grid, k);
    check_equal(label, to_host(s32, n), want);
  }
  for (xpar_context *c : {ctx, repro}) {
    XK(xpar_context_set_stream(c, NULL));
    xpar_context_destroy(c);
  }
  CK(cudaStreamDestroy(s));
  cudaFree(x32), cudaFree(s32), cudaFree(x64), cudaFree(s64), cudaFree(xd), cudaFree(sd);
  cudaFree(xa), cudaFree(saff), cudaFree(su), cudaFree(sarg), cudaFree(res), cudaFree(ctx_out);
  printf("captured scans and reductions, n = %zu, grid %u, %s: %s\n", n, grid,
         xpar_backend_name(backend), failures == before ? "ok" : "FAILED");
}

/* A fresh context's first synchronous scan and reduce made during a capture in relaxed
 * mode (where allocations are allowed): the scratch they would set up with queued work
 * (the control block's zeroing, the tile status's clearing) would be recorded, never
 * run, so they are refused before anything is queued and the capture stays valid;
 * afterwards both are right. */
static void first_calls_in_relaxed_capture(void) {
  const int before = failures;
  const size_t n = ((size_t)1 << 20) + 3;
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  xpar_context *ctx = NULL;
  XK(xpar_context_create(&ctx));
  XK(xpar_context_set_stream(ctx, (void *)s));
  XK(xpar_context_set_backend(ctx, XPAR_BACKEND_CUDA));
  const std::vector<int32_t> hx = random_i32(n);
  int32_t *x = device_copy(hx), *out = device_poisoned<int32_t>(n);
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
  expect_refused(xpar_scan(ctx, XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE, x, out, n), s,
                 "a fresh context's first scan in a relaxed capture");
  int32_t sum = -1;
  expect_refused(xpar_reduce(ctx, XPAR_INT32, XPAR_SUM, x, n, &sum), s,
                 "a fresh context's first reduce in a relaxed capture");
  if (sum != -1) FAIL("the refused reduce wrote %d", sum);
  cudaGraph_t graph;
  CK(cudaStreamEndCapture(s, &graph));
  CK(cudaGraphDestroy(graph));
  check_equal("the refused scan's output", to_host(out, n),
              std::vector<int32_t>(n, (int32_t)0xABABABAB));
  XK(xpar_scan(ctx, XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE, x, out, n));
  std::vector<int32_t> want(n);
  uint32_t acc = 0;
  for (size_t i = 0; i < n; i++) want[i] = (int32_t)(acc += (uint32_t)hx[i]);
  check_equal("the scan after the relaxed capture", to_host(out, n), want);
  XK(xpar_reduce(ctx, XPAR_INT32, XPAR_SUM, x, n, &sum));
  if (sum != want[n - 1]) FAIL("the reduce after the relaxed capture: %d, expected %d", sum, want[n - 1]);
  XK(xpar_context_set_stream(ctx, NULL));
  xpar_context_destroy(ctx);
  CK(cudaStreamDestroy(s));
  cudaFree(x), cudaFree(out);
  printf("a fresh context's first calls in a relaxed capture: %s\n", failures == before ? "ok" : "FAILED");
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
  to_device(x, hx.data(), n * sizeof(int32_t));
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
  if (!seeded_with_gpu("test_graph_capture_gpu")) return 77;
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
  for (size_t n : {(size_t)0, (size_t)1, (size_t)1000, (size_t)(1u << 20) + 3, (size_t)(1u << 23) + 5})
    capture_stateful(n, 0, XPAR_BACKEND_CUDA);
  capture_stateful((size_t)(1u << 20) + 3, 40, XPAR_BACKEND_CUDA); /* tiles from a counter */
  capture_stateful(1000, 0, XPAR_BACKEND_CUDA_SERIAL);
  first_calls_in_relaxed_capture();
  queued_before_capture();
  printf("test_graph_capture_gpu: %s\n", failures ? "FAILED" : "passed");
  return failures ? 1 : 0;
}
