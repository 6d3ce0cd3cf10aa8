/*
 * A CUDA graph capture on a device without the stream-ordered allocator
 * (cudaDevAttrMemoryPoolsSupported = 0: some virtualised GPUs, old drivers), as
 * xpar.h promises for xpar_context_set_stream: the nowait calls that need scratch
 * owned by the graph (a reduce's ticket and partials, a multi-tile scan's tile
 * status, an operator's scratch) return XPAR_ERR_NOT_SUPPORTED with a detail
 * naming the capture and the allocator, write nothing and leave the capture valid;
 * the calls that need none (add, a one-block scan) are captured and every replay
 * computes them from the arrays of that replay.  After the capture the context
 * runs the refused calls as usual.
 *
 * Every lent card has the allocator, so the test tells the context's GPU state
 * that its device has none (xpar__cuda_state::memory_pools, which state creation
 * reads from the device): it links the library's objects to reach that hidden
 * state.  Exit 77 without a usable GPU (CTest: skipped).  Seed: XPAR_TEST_SEED.
 */
#include <cuda_runtime.h>
#include <execinfo.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <vector>

#include <xpar/xpar.h>
#include <xpar/xpar_kernel.h>

#include "backend_cuda/cuda_state.cuh"
#include "operators/operators.h"

/* dispatch/state.h (C11 atomics: not for a C++ file): the context's GPU state. */
extern "C" xpar_status xpar__gpu_state(xpar_context *ctx, struct xpar__cuda_state **out);

static int failures = 0;

#include "common/gpu_capture_checks.h"

static size_t written_bytes(const void *d, size_t bytes) {
  size_t w = 0;
  for (unsigned char b : to_host(static_cast<const unsigned char *>(d), bytes)) w += b != 0xAB;
  return w;
}

static void expect_refused(xpar_status st, cudaStream_t s, const char *what) {
  if (st != XPAR_ERR_NOT_SUPPORTED)
    FAIL("%s during the capture: %s, expected ERR_NOT_SUPPORTED", what, xpar_status_name(st));
  else if (!strstr(xpar_last_error_detail(), "capturing") ||
           !strstr(xpar_last_error_detail(), "stream-ordered allocator"))
    FAIL("%s: the detail does not name the capture and the allocator: \"%s\"", what,
         xpar_last_error_detail());
  still_capturing(s, what);
}

static std::vector<int32_t> inclusive_sum(const std::vector<int32_t> &v) {
  std::vector<int32_t> w(v.size());
  uint32_t acc = 0;
  for (size_t i = 0; i < v.size(); i++) w[i] = (int32_t)(acc += (uint32_t)v[i]);
  return w;
}

/* A crash names where it happened (the test reaches the library's internals). */
static void on_crash(int sig) {
  void *frames[64];
  const int k = backtrace(frames, 64);
  fprintf(stderr, "test_capture_no_pools_gpu: signal %d, backtrace:\n", sig);
  backtrace_symbols_fd(frames, k, 2);
  _exit(3);
}

int main(void) {
  setvbuf(stdout, NULL, _IONBF, 0); /* progress lines survive a crash */
  signal(SIGSEGV, on_crash);
  signal(SIGBUS, on_crash);
  if (!seeded_with_gpu("test_capture_no_pools_gpu")) return 77;
  const size_t small = 1000, large = ((size_t)1 << 20) + 3; /* one block; many tiles */
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  xpar_context *ctx = NULL;
  XK(xpar_context_create(&ctx));
  XK(xpar_context_set_stream(ctx, (void *)s));
  XK(xpar_context_set_backend(ctx, XPAR_BACKEND_CUDA));

  std::vector<int32_t> hs = random_i32(small), hx = random_i32(large), hy = random_i32(large);
  int32_t *xs = device_copy(hs), *x = device_copy(hx), *y = device_copy(hy);
  int32_t *scan_small = device_poisoned<int32_t>(small), *scan_large = device_poisoned<int32_t>(large);
  int32_t *sum_xy = device_poisoned<int32_t>(large);
  uint32_t *op_scan = device_poisoned<uint32_t>(small);
  unsigned char *res = device_poisoned<unsigned char>(64); /* reduce, dot, operator reduce */

  /* Each call once outside the capture: the context's scratch exists, so what the
   * capture refuses is the graph's own scratch, not a first set-up. */
  XK(xpar_scan(ctx, XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE, x, scan_large, large));
  XK(xpar_reduce_nowait(ctx, XPAR_INT32, XPAR_SUM, x, large, res));
  XK(xpar_wait(ctx));
  XK(xpar_scan_op(ctx, &xk_sum_u32, XPAR_INCLUSIVE, xs, op_scan, small));
  CK(cudaMemset(scan_large, 0xAB, large * 4));
  CK(cudaMemset(res, 0xAB, 64));
  CK(cudaMemset(op_scan, 0xAB, small * 4));
  CK(cudaDeviceSynchronize());

  printf("set-up done; the device's allocator hidden\n");
  xpar__cuda_state *st = NULL;
  XK(xpar__gpu_state(ctx, &st));
  if (!st->memory_pools) printf("note: this device has no stream-ordered allocator itself\n");
  st->memory_pools = false;

  printf("capture begins\n");
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  XK(xpar_add_nowait(ctx, XPAR_INT32, x, y, sum_xy, large));
  XK(xpar_scan_nowait(ctx, XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE, xs, scan_small, small));
  still_capturing(s, "the captured add and one-block scan");
  expect_refused(xpar_scan_nowait(ctx, XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE, x, scan_large, large),
                 s, "a scan of many tiles");
  expect_refused(xpar_reduce_nowait(ctx, XPAR_INT32, XPAR_SUM, x, large, res), s, "a reduce");
  expect_refused(xpar_dot_nowait(ctx, XPAR_INT32, x, y, large, res + 8), s, "a dot");
  expect_refused(xpar_reduce_op_nowait(ctx, &xk_sum_u32, x, large, res + 16), s,
                 "an operator reduce");
  expect_refused(xpar_scan_op_nowait(ctx, &xk_sum_u32, XPAR_INCLUSIVE, xs, op_scan, small), s,
                 "an operator scan");
  cudaGraph_t graph = NULL;
  CK(cudaStreamEndCapture(s, &graph));
  printf("capture ended\n");
  st->memory_pools = true; /* the device's own answer again (every lent card: yes) */

  const size_t refused_written = written_bytes(scan_large, large * 4) + written_bytes(res, 64) +
                                 written_bytes(op_scan, small * 4);
  if (refused_written) FAIL("the refused calls wrote %zu bytes", refused_written);
  if (written_bytes(sum_xy, large * 4) + written_bytes(scan_small, small * 4))
    FAIL("a captured call ran at capture time");

  cudaGraphExec_t exec;
  CK(cudaGraphInstantiate(&exec, graph, 0));
  char label[96];
  for (int replay = 0; replay < 3; replay++) {
    if (replay > 0) {
      hs = random_i32(small), hx = random_i32(large), hy = random_i32(large);
      upload(xs, hs), upload(x, hx), upload(y, hy);
    }
    CK(cudaGraphLaunch(exec, s));
    CK(cudaStreamSynchronize(s));
    std::vector<int32_t> want(large);
    for (size_t i = 0; i < large; i++) want[i] = (int32_t)((uint32_t)hx[i] + (uint32_t)hy[i]);
    snprintf(label, sizeof label, "replay %d: the captured add", replay);
    check_equal(label, to_host(sum_xy, large), want);
    snprintf(label, sizeof label, "replay %d: the captured one-block scan", replay);
    check_equal(label, to_host(scan_small, small), inclusive_sum(hs));
  }
  if (written_bytes(scan_large, large * 4) + written_bytes(res, 64) +
      written_bytes(op_scan, small * 4))
    FAIL("a replay wrote the refused calls' outputs");

  printf("replays done\n");
  /* After the capture: the refused calls run (synchronous, the context's scratch). */
  XK(xpar_scan(ctx, XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE, x, scan_large, large));
  check_equal("the scan of many tiles after the capture", to_host(scan_large, large),
              inclusive_sum(hx));
  int32_t total = 0;
  XK(xpar_reduce(ctx, XPAR_INT32, XPAR_SUM, x, large, &total));
  uint32_t want_total = 0;
  for (int32_t v : hx) want_total += (uint32_t)v;
  if ((uint32_t)total != want_total)
    FAIL("the reduce after the capture: %d, expected %d", total, (int32_t)want_total);

  CK(cudaGraphExecDestroy(exec));
  CK(cudaGraphDestroy(graph));
  xpar_context_destroy(ctx);
  for (void *p : {(void *)xs, (void *)x, (void *)y, (void *)scan_small, (void *)scan_large,
                  (void *)sum_xy, (void *)op_scan, (void *)res})
    CK(cudaFree(p));
  CK(cudaStreamDestroy(s));
  printf("test_capture_no_pools_gpu: %s\n", failures ? "FAILED" : "passed");
  return failures ? 1 : 0;
}
