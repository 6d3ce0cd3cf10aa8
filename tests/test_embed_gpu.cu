/*
 * xpar inside a CUDA application, on the GPU:
 *  - stream order: the application's stream-0 kernels and copies before a
 *    call, stream-0 kernels consuming its outputs after it (synchronous and
 *    nowait), the application's own stream set on the context, and
 *    cudaStreamPerThread; pinned inputs that a stream-0 copy writes;
 *  - the host-page cache after pinned memory is freed and the address comes
 *    back pageable, and after cudaHostRegister / cudaHostUnregister;
 *  - launch-shape extremes that set_launch_shape accepts, on every op;
 *  - cached GPU memory: released on request, and released before an
 *    allocation is refused;
 *  - the calling thread's driver context: the application's own context
 *    current, none current (a fresh thread), the primary one current;
 *  - synchronous calls that return on their kernel's done flag: every output
 *    element visible to another stream at once;
 *  - a synchronous reduce, wide sum, dot and operator reduce whose result is a
 *    cudaMalloc'd scalar, on every tier, host and device inputs, repeated: the
 *    result written there (and nothing beside it), never dereferenced on the host.
 * Every race here is made likely: the application's kernels first spin for
 * ~200 us, so work that is not ordered after them reads the old contents.
 * Exit 77 without a usable GPU (CTest: skipped).  Seed: XPAR_TEST_SEED.
 */
#include <cuda.h> /* driver types; the functions through the runtime (drv below) */
#include <cudaTypedefs.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <algorithm>
#include <thread>
#include <vector>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include <xpar/xpar.h>

#include "common/gpu_app_checks.h"
#include "kernels/test_kernels.h"
#include "operators/operators.h"

static int failures = 0;
static unsigned long long seed;

/* ---- the application's kernels ------------------------------------------------ */

__device__ void spin_ns(unsigned long long ns) {
  unsigned long long t0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  for (;;) {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    if (t - t0 >= ns) break;
  }
}

/* a[i] = pattern(i, salt), after a delay: late writes are what a missing
 * order would expose. */
__host__ __device__ inline int32_t pattern(size_t i, unsigned salt) {
  return (int32_t)((i * 7u + salt) % 13u) - 6;
}
__global__ void slow_write(int32_t *a, size_t n, unsigned salt, unsigned long long delay_ns) {
  if (threadIdx.x == 0) spin_ns(delay_ns);
  __syncthreads();
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    a[i] = pattern(i, salt);
}
/* dst[i] = src[i], after a delay (the consumer of xpar's output). */
__global__ void slow_copy(const int32_t *src, int32_t *dst, size_t n, unsigned long long delay_ns) {
  if (threadIdx.x == 0) spin_ns(delay_ns);
  __syncthreads();
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    dst[i] = src[i];
}

/* ---- host references ------------------------------------------------------------ */

static void host_pattern(int32_t *a, size_t n, unsigned salt) {
  for (size_t i = 0; i < n; i++) a[i] = pattern(i, salt);
}
static int check_array(const char *what, const int32_t *got_dev, const int32_t *want, size_t n,
                       int32_t *scratch) {
  CK(cudaMemcpy(scratch, got_dev, n * sizeof(int32_t), cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < n; i++)
    if (scratch[i] != want[i]) {
      FAIL("%s: element %zu is %d, expected %d (seed %llu)", what, i, scratch[i], want[i], seed);
      return 0;
    }
  return 1;
}

/* ---- stream order ----------------------------------------------------------------- */

enum Op { OP_REDUCE, OP_SUM_WIDE, OP_SCAN, OP_AXPY, OP_ADD, OP_FILL, OP_DOT, OP_COUNT };
static const char *op_names[OP_COUNT] = {"reduce", "reduce_sum_wide", "scan", "axpy",
                                         "add",    "fill",            "dot"};

struct Buffers {
  size_t n;
  int32_t *x, *y, *out, *out2; /* device */
  int32_t *hx, *hy, *want, *scratch; /* host */
  int32_t *pinned;
};

/* Run op on the device arrays (x, y written by the application just before,
 * on `app_stream`), then check the result.  The call is issued first thing:
 * any host work between the application's launch and the call (computing the
 * reference takes tens of milliseconds at 2^24) would let the application's
 * kernel finish and hide a missing order.  The array output is checked
 * through a slow copy queued on app_stream right after the call: the output
 * must be complete whenever stream order says so. */
static void run_and_check(xpar_context *ctx, Op op, Buffers &b, unsigned salt, int nowait,
                          cudaStream_t app_stream, const char *label) {
  const size_t n = b.n;
  const int32_t alpha = 3, value = 0x5a5a;
  int32_t *dres = b.out2; /* nowait scalar results: device memory */
  int32_t got32 = 0;
  int64_t got = 0;
  switch (op) {
    case OP_REDUCE:
      if (nowait) XK(xpar_reduce_nowait(ctx, XPAR_INT32, XPAR_SUM, b.x, n, dres));
      else XK(xpar_reduce(ctx, XPAR_INT32, XPAR_SUM, b.x, n, &got32));
      break;
    case OP_DOT:
      if (nowait) XK(xpar_dot_nowait(ctx, XPAR_INT32, b.x, b.y, n, dres));
      else XK(xpar_dot(ctx, XPAR_INT32, b.x, b.y, n, &got32));
      break;
    case OP_SUM_WIDE:
      if (nowait) return; /* no nowait variant */
      XK(xpar_reduce_sum_wide(ctx, XPAR_INT32, b.x, n, &got));
      break;
    case OP_SCAN:
      if (nowait) XK(xpar_scan_nowait(ctx, XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE, b.x, b.out, n));
      else XK(xpar_scan(ctx, XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE, b.x, b.out, n));
      break;
    case OP_AXPY: /* y = alpha x + y, in place: the output is y */
      if (nowait) XK(xpar_axpy_nowait(ctx, XPAR_INT32, &alpha, b.x, b.y, n));
      else XK(xpar_axpy(ctx, XPAR_INT32, &alpha, b.x, b.y, n));
      break;
    case OP_ADD:
      if (nowait) XK(xpar_add_nowait(ctx, XPAR_INT32, b.x, b.y, b.out, n));
      else XK(xpar_add(ctx, XPAR_INT32, b.x, b.y, b.out, n));
      break;
    case OP_FILL: /* the application wrote poison into out just before */
      if (nowait) XK(xpar_fill_nowait(ctx, XPAR_INT32, &value, b.out, n));
      else XK(xpar_fill(ctx, XPAR_INT32, &value, b.out, n));
      break;
    default: return;
  }
  const int scalar = op == OP_REDUCE || op == OP_DOT || op == OP_SUM_WIDE;
  int32_t *result = op == OP_AXPY ? b.y : b.out;
  /* The application's consumer, queued right after the call on its stream. */
  if (!scalar) {
    slow_copy<<<264, 256, 0, app_stream>>>(result, b.out2, n, 200000);
    CK(cudaGetLastError());
  }

  char what[160];
  snprintf(what, sizeof what, "%s: %s%s salt %u", label, op_names[op], nowait ? " nowait" : "",
           salt);
  host_pattern(b.hx, n, salt);
  host_pattern(b.hy, n, salt + 5);
  if (scalar) {
    if (nowait) {
      XK(xpar_wait(ctx));
      CK(cudaMemcpy(&got32, dres, sizeof got32, cudaMemcpyDeviceToHost));
    }
    if (op != OP_SUM_WIDE) got = got32;
    int64_t want = 0;
    for (size_t i = 0; i < n; i++) want += op == OP_DOT ? (int64_t)b.hx[i] * b.hy[i] : b.hx[i];
    if (op != OP_SUM_WIDE) want = (int32_t)(uint32_t)(uint64_t)want;
    if (got != want)
      FAIL("%s: %lld, expected %lld (seed %llu)", what, (long long)got, (long long)want, seed);
    return;
  }
  uint32_t run = 0;
  for (size_t i = 0; i < n; i++) {
    switch (op) {
      case OP_SCAN: b.want[i] = (int32_t)(run += (uint32_t)b.hx[i]); break;
      case OP_AXPY: b.want[i] = alpha * b.hx[i] + b.hy[i]; break;
      case OP_ADD: b.want[i] = b.hx[i] + b.hy[i]; break;
      default: b.want[i] = value; break;
    }
  }
  CK(cudaStreamSynchronize(app_stream));
  if (nowait) XK(xpar_wait(ctx));
  check_array(what, b.out2, b.want, n, b.scratch);
}

/* The application writes x and y on app_stream (a slow kernel, or an async
 * copy from pinned memory), then calls xpar at once. */
static void stream_order_case(xpar_context *ctx, Buffers &b, cudaStream_t app_stream,
                              const char *label, int reps) {
  for (int op = 0; op < OP_COUNT; op++)
    for (int nowait = 0; nowait < 2; nowait++)
      for (int r = 0; r < reps; r++) {
        const unsigned salt = (unsigned)(seed + 31u * r + 7u * op) % 1000u + 1u;
        const size_t bytes = b.n * sizeof(int32_t);
        CK(cudaMemset(b.x, 0, bytes));
        CK(cudaMemset(b.y, 0, bytes));
        CK(cudaMemset(b.out, 0x7f, bytes));
        CK(cudaDeviceSynchronize());
        if (r % 2 == 0) {
          slow_write<<<264, 256, 0, app_stream>>>(b.x, b.n, salt, 200000);
          slow_write<<<264, 256, 0, app_stream>>>(b.y, b.n, salt + 5, 0);
          if (op == OP_FILL) slow_write<<<264, 256, 0, app_stream>>>(b.out, b.n, salt + 9, 0);
          CK(cudaGetLastError());
        } else { /* the CuPy-like upload: async copies from pinned memory */
          host_pattern(b.pinned, b.n, salt);
          CK(cudaMemcpyAsync(b.x, b.pinned, bytes, cudaMemcpyHostToDevice, app_stream));
          host_pattern(b.pinned + b.n, b.n, salt + 5);
          CK(cudaMemcpyAsync(b.y, b.pinned + b.n, bytes, cudaMemcpyHostToDevice, app_stream));
        }
        run_and_check(ctx, (Op)op, b, salt, nowait, app_stream, label);
      }
}

static void test_stream_order(void) {
  Buffers b;
  b.n = (size_t)1 << 24;
  const size_t bytes = b.n * sizeof(int32_t);
  CK(cudaMalloc(&b.x, bytes));
  CK(cudaMalloc(&b.y, bytes));
  CK(cudaMalloc(&b.out, bytes));
  CK(cudaMalloc(&b.out2, bytes));
  CK(cudaMallocHost(&b.pinned, 2 * bytes));
  b.hx = (int32_t *)malloc(bytes);
  b.hy = (int32_t *)malloc(bytes);
  b.want = (int32_t *)malloc(bytes);
  b.scratch = (int32_t *)malloc(bytes);
  const int before = failures;

  for (int backend = 0; backend < 2; backend++) {
    xpar_context *ctx;
    XK(xpar_context_create(&ctx));
    XK(xpar_context_set_backend(ctx, backend ? XPAR_BACKEND_CUDA : XPAR_BACKEND_AUTO));
    const char *bname = backend ? "cuda" : "auto";
    char label[96];
    snprintf(label, sizeof label, "%s, legacy stream 0", bname);
    stream_order_case(ctx, b, 0, label, 6);

    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    XK(xpar_context_set_stream(ctx, s));
    snprintf(label, sizeof label, "%s, the application's stream", bname);
    stream_order_case(ctx, b, s, label, 2);
    XK(xpar_context_set_stream(ctx, cudaStreamPerThread));
    snprintf(label, sizeof label, "%s, cudaStreamPerThread", bname);
    stream_order_case(ctx, b, cudaStreamPerThread, label, 2);
    XK(xpar_context_set_stream(ctx, NULL));
    CK(cudaStreamDestroy(s));
    XK(xpar_context_destroy(ctx));
  }
  printf("stream order: %s (%d failures)\n", failures == before ? "ok" : "FAILED", failures - before);
  cudaFree(b.x), cudaFree(b.y), cudaFree(b.out), cudaFree(b.out2), cudaFreeHost(b.pinned);
  free(b.hx), free(b.hy), free(b.want), free(b.scratch);
}

/* ---- pinned inputs that the application's stream-0 copy writes ------------------------- */

/* The application copies a device result into a pinned buffer on stream 0
 * (queued behind a slow kernel) and hands the buffer to a call that runs on
 * the GPU: the call's read of it is GPU work, ordered after stream 0.  The
 * driver reads a small pinned source at cudaMemcpyAsync unless the stream has
 * a dependency queued (4-16 KiB were stale 10 times in 10 on the H100 before
 * xpar copied them by kernel: cuda_state.cu), so sizes from 1 KiB to 256 KiB. */
static void test_pinned_input_order(void) {
  const size_t max_n = (size_t)1 << 16;
  int32_t *stage, *y, *out, *px, *want = (int32_t *)malloc(max_n * 4),
                                *back = (int32_t *)malloc(max_n * 4);
  CK(cudaMalloc(&stage, max_n * 4));
  CK(cudaMalloc(&y, max_n * 4));
  CK(cudaMalloc(&out, max_n * 4));
  CK(cudaMallocHost(&px, max_n * 4));
  const int before = failures;
  xpar_context *cuda, *autoc;
  XK(xpar_context_create(&cuda));
  XK(xpar_context_set_backend(cuda, XPAR_BACKEND_CUDA));
  XK(xpar_context_create(&autoc));
  for (size_t n = 256; n <= max_n; n *= 4)
    for (int op = 0; op < 3; op++)
      for (int r = 0; r < 3; r++) {
        const unsigned salt = (unsigned)(seed + 17u * r + 5u * op + n) % 1000u + 1u;
        slow_write<<<264, 256>>>(y, n, salt + 3, 0);
        CK(cudaDeviceSynchronize());
        memset(px, 0, n * 4); /* the old contents */
        slow_write<<<264, 256>>>(stage, n, salt, 200000);
        CK(cudaGetLastError());
        CK(cudaMemcpyAsync(px, stage, n * 4, cudaMemcpyDeviceToHost, 0));
        host_pattern(want, n, salt);
        int32_t got = 0;
        uint32_t expect = 0;
        char what[128];
        if (op == 0) { /* forced GPU reduce of the pinned array */
          XK(xpar_reduce(cuda, XPAR_INT32, XPAR_SUM, px, n, &got));
          for (size_t i = 0; i < n; i++) expect += (uint32_t)want[i];
          snprintf(what, sizeof what, "cuda reduce, pinned x written by a stream-0 copy, n=%zu", n);
        } else if (op == 1) { /* AUTO: device y keeps the dot on the GPU */
          XK(xpar_dot(autoc, XPAR_INT32, px, y, n, &got));
          for (size_t i = 0; i < n; i++) expect += (uint32_t)want[i] * (uint32_t)pattern(i, salt + 3);
          snprintf(what, sizeof what, "auto dot (device y), pinned x written by a stream-0 copy, n=%zu", n);
        } else { /* forced GPU scan into device memory */
          XK(xpar_scan(cuda, XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE, px, out, n));
          CK(cudaMemcpy(back, out, n * 4, cudaMemcpyDeviceToHost));
          uint32_t run = 0;
          for (size_t i = 0; i < n; i++)
            if ((int32_t)(run += (uint32_t)want[i]) != back[i]) {
              FAIL("cuda scan, pinned x written by a stream-0 copy, n=%zu: element %zu is %d, "
                   "expected %d (seed %llu)", n, i, back[i], (int32_t)run, seed);
              break;
            }
          continue;
        }
        if (got != (int32_t)expect)
          FAIL("%s: %d, expected %d (seed %llu)", what, got, (int32_t)expect, seed);
      }
  printf("pinned inputs after stream-0 copies: %s (%d failures)\n",
         failures == before ? "ok" : "FAILED", failures - before);
  XK(xpar_context_destroy(cuda));
  XK(xpar_context_destroy(autoc));
  cudaFree(stage), cudaFree(y), cudaFree(out), cudaFreeHost(px);
  free(want), free(back);
}

/* ---- the host-page cache after memory changes kind ----------------------------------- */

static void expect_place(xpar_context *ctx, const char *label, int want_gpu, const char *phrase) {
  xpar_decision d;
  XK(xpar_last_decision(ctx, &d));
  const int on_gpu = d.tier == XPAR_TIER_CUDA;
  if (on_gpu != want_gpu || (phrase && !strstr(d.reason, phrase)))
    FAIL("%s: ran on %s (\"%s\"), expected %s%s%s", label, xpar_tier_name(d.tier), d.reason,
         want_gpu ? "cuda" : "the CPU", phrase ? " for " : "", phrase ? phrase : "");
}

static void scan_and_check(xpar_context *ctx, int32_t *buf, size_t n, const char *label) {
  for (size_t i = 0; i < n; i++) buf[i] = pattern(i, 3);
  XK(xpar_scan(ctx, XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE, buf, buf, n));
  uint32_t run = 0;
  for (size_t i = 0; i < n; i++) {
    run += (uint32_t)pattern(i, 3);
    if (buf[i] != (int32_t)run) {
      FAIL("%s: element %zu is %d, expected %d", label, i, buf[i], (int32_t)run);
      return;
    }
  }
}

static void test_page_reuse(void) {
  const int before = failures;
  xpar_context *ctx;
  XK(xpar_context_create(&ctx));
  /* Pinned data goes to the GPU from 4096 elements, pageable data never:
   * where a call runs says how its memory was classified -- with the
   * thresholds alone (adaptation could move a call timed slower). */
  XK(xpar_context_set_adapt(ctx, 0));
  XK(xpar_context_set_threshold(ctx, XPAR_OP_SCAN, XPAR_INT32, XPAR_THRESHOLD_GPU_PINNED_DATA, 4096));
  XK(xpar_context_set_threshold(ctx, XPAR_OP_SCAN, XPAR_INT32, XPAR_THRESHOLD_GPU_PAGEABLE_DATA,
                                XPAR_NEVER));
  /* 32 MiB: large enough that the driver maps each pinned allocation on its
   * own instead of carving it out of a pool. */
  const size_t n = 1 << 16, bytes = 32u << 20;

  /* cudaFreeHost, then the same address mapped again as pageable memory. */
  int32_t *p;
  CK(cudaMallocHost(&p, bytes));
  scan_and_check(ctx, p, 256, "pinned, small");
  expect_place(ctx, "pinned, small", 0, "host data");
  scan_and_check(ctx, p, n, "pinned");
  expect_place(ctx, "pinned", 1, "pinned host data");
  CK(cudaFreeHost(p));
  void *again = mmap(p, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
  if (again != (void *)p) {
    FAIL("could not map the freed pinned range again (%p)", again);
  } else {
    scan_and_check(ctx, p, 256, "freed pinned -> pageable, small");
    expect_place(ctx, "freed pinned -> pageable, small", 0, "host data");
    scan_and_check(ctx, p, n, "freed pinned -> pageable");
    expect_place(ctx, "freed pinned -> pageable", 0, "pageable host data");
    munmap(p, bytes);
  }

  /* cudaFreeHost, then cudaMalloc handing the same addresses out as device
   * memory (pinned and device allocations share the driver's address range).
   * A small AUTO call on it must not run on the CPU from a stale host-page
   * entry: with pinned pages cached, this read device memory on the host and
   * crashed (H100 regret run, 2026-11-25). */
  {
    int32_t *pin;
    CK(cudaMallocHost(&pin, bytes));
    scan_and_check(ctx, pin, 256, "pinned before reuse, small");
    CK(cudaFreeHost(pin));
    int32_t *dev[8] = {0}, *hit = NULL;
    for (int k = 0; k < 8 && !hit; k++) {
      CK(cudaMalloc(&dev[k], bytes));
      if (dev[k] == pin) hit = dev[k];
    }
    if (!hit) {
      printf("page reuse: cudaMalloc did not return the freed pinned address in 8 tries "
             "(pinned -> device case not exercised on this driver)\n");
    } else {
      int32_t host[256];
      for (int i = 0; i < 256; i++) host[i] = pattern((size_t)i, 5);
      CK(cudaMemcpy(hit, host, sizeof host, cudaMemcpyHostToDevice));
      CK(cudaDeviceSynchronize()); /* a pageable copy may return before its DMA lands */
      int64_t sum = 0;
      XK(xpar_reduce_sum_wide(ctx, XPAR_INT32, hit, 256, &sum));
      int64_t want = 0;
      for (int i = 0; i < 256; i++) want += host[i];
      if (sum != want) FAIL("freed pinned -> device: sum %lld, expected %lld", (long long)sum,
                            (long long)want);
      XK(xpar_scan(ctx, XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE, hit, hit, 256));
      xpar_decision d;
      XK(xpar_last_decision(ctx, &d));
      if (!strstr(d.reason, "device"))
        FAIL("freed pinned -> device: decided \"%s\" without seeing device data", d.reason);
      int32_t back[256];
      CK(cudaMemcpy(back, hit, sizeof back, cudaMemcpyDeviceToHost));
      uint32_t run = 0;
      for (int i = 0; i < 256; i++) {
        run += (uint32_t)host[i];
        if (back[i] != (int32_t)run) {
          FAIL("freed pinned -> device: scan element %d is %d, expected %d", i, back[i],
               (int32_t)run);
          break;
        }
      }
      printf("page reuse: freed pinned address came back from cudaMalloc; ran as \"%s\"\n",
             d.reason);
    }
    for (int k = 0; k < 8; k++)
      if (dev[k]) cudaFree(dev[k]);
  }

  /* cudaHostRegister / cudaHostUnregister of one buffer. */
  int32_t *h = (int32_t *)aligned_alloc(4096, bytes);
  scan_and_check(ctx, h, n, "pageable");
  expect_place(ctx, "pageable", 0, "pageable host data");
  CK(cudaHostRegister(h, bytes, cudaHostRegisterDefault));
  scan_and_check(ctx, h, n, "registered");
  expect_place(ctx, "registered", 1, "pinned host data");
  CK(cudaHostUnregister(h));
  scan_and_check(ctx, h, n, "unregistered");
  expect_place(ctx, "unregistered", 0, "pageable host data");
  free(h);

  /* A new pinned pool: two 2 MiB-aligned pinned arrays used together. */
  int32_t *a, *c;
  CK(cudaMallocHost(&a, bytes));
  CK(cudaMallocHost(&c, bytes));
  for (int r = 0; r < 3; r++) {
    for (size_t i = 0; i < n; i++) a[i] = pattern(i, 11);
    XK(xpar_scan(ctx, XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE, a, c, n));
    expect_place(ctx, "pinned pool, pinned to pinned", 1, "pinned host data");
    XK(xpar_scan(ctx, XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE, a, c, 256));
    expect_place(ctx, "pinned pool, pinned to pinned, small", 0, "host data");
  }
  cudaFreeHost(a), cudaFreeHost(c);
  XK(xpar_context_destroy(ctx));
  printf("page reuse: %s (%d failures)\n", failures == before ? "ok" : "FAILED", failures - before);
}

/* ---- launch-shape extremes ------------------------------------------------------------- */

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

static void test_launch_extremes(void) {
  const int before = failures;
  const size_t n = 300001;
  const unsigned shapes[][2] = {{2147483647u, 1}, {2147483647u, 1024}, {2147483647u, 0},
                                {1, 1024},        {1, 1},              {0, 1},
                                {65535, 32},      {3, 1024}};
  int32_t *x, *y, *out;
  CK(cudaMalloc(&x, n * 4));
  CK(cudaMalloc(&y, n * 4));
  CK(cudaMalloc(&out, n * 4));
  int32_t *hx = (int32_t *)malloc(n * 4), *got = (int32_t *)malloc(n * 4);
  host_pattern(hx, n, 5);
  CK(cudaMemcpy(x, hx, n * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(y, hx, n * 4, cudaMemcpyHostToDevice));
  CK(cudaDeviceSynchronize()); /* a pageable copy may return before its DMA lands */
  int64_t sum = 0, dot = 0;
  for (size_t i = 0; i < n; i++) sum += hx[i], dot += (int64_t)hx[i] * hx[i];
  xpar_context *ctx;
  XK(xpar_context_create(&ctx));
  XK(xpar_context_set_backend(ctx, XPAR_BACKEND_CUDA));
  for (const auto &s : shapes) {
    XK(xpar_context_set_launch_shape(ctx, s[0], s[1]));
    const double t0 = now_s();
    int32_t r32 = 0;
    int64_t r64 = 0;
    XK(xpar_reduce(ctx, XPAR_INT32, XPAR_SUM, x, n, &r32));
    if (r32 != (int32_t)sum) FAIL("shape %u x %u: reduce %d, expected %lld", s[0], s[1], r32, (long long)sum);
    XK(xpar_reduce_sum_wide(ctx, XPAR_INT32, x, n, &r64));
    if (r64 != sum) FAIL("shape %u x %u: sum_wide %lld", s[0], s[1], (long long)r64);
    XK(xpar_dot(ctx, XPAR_INT32, x, y, n, &r32));
    if (r32 != (int32_t)dot) FAIL("shape %u x %u: dot %d", s[0], s[1], r32);
    XK(xpar_scan(ctx, XPAR_INT32, XPAR_SUM, XPAR_EXCLUSIVE, x, out, n));
    CK(cudaMemcpy(got, out, n * 4, cudaMemcpyDeviceToHost));
    uint32_t run = 0;
    for (size_t i = 0; i < n; i++) {
      if (got[i] != (int32_t)run) {
        FAIL("shape %u x %u: scan element %zu", s[0], s[1], i);
        break;
      }
      run += (uint32_t)hx[i];
    }
    const int32_t v = 17, alpha = 2;
    XK(xpar_fill(ctx, XPAR_INT32, &v, out, n));
    XK(xpar_axpy(ctx, XPAR_INT32, &alpha, x, out, n));
    XK(xpar_add(ctx, XPAR_INT32, x, out, out, n));
    CK(cudaMemcpy(got, out, n * 4, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < n; i++)
      if (got[i] != 17 + 3 * hx[i]) {
        FAIL("shape %u x %u: fill/axpy/add element %zu is %d", s[0], s[1], i, got[i]);
        break;
      }
    const double secs = now_s() - t0;
    if (secs > 5.0) FAIL("shape %u x %u: seven calls took %.1f s", s[0], s[1], secs);
    printf("  launch shape %10u x %4u: seven ops in %.3f s\n", s[0], s[1], secs);
  }
  XK(xpar_context_destroy(ctx));
  cudaFree(x), cudaFree(y), cudaFree(out), free(hx), free(got);
  printf("launch extremes: %s (%d failures)\n", failures == before ? "ok" : "FAILED", failures - before);
}

/* ---- cached GPU memory ------------------------------------------------------------------- */

static size_t free_bytes(void) {
  size_t f = 0, t = 0;
  CK(cudaMemGetInfo(&f, &t));
  return f;
}

static void test_release_memory(void) {
  const int before = failures;
  const size_t MiB = 1u << 20;
  xpar_context *ctx;
  XK(xpar_context_create(&ctx));
  XK(xpar_context_set_backend(ctx, XPAR_BACKEND_CUDA));
  /* add(x, x, z) on host arrays of 2^26 doubles: x once (exact aliasing is
   * one operand) and z, two staging slots of 768 MiB (grown by half) */
  const size_t n1 = (size_t)1 << 26;
  double *hx = (double *)malloc(n1 * 8), *hz = (double *)malloc(n1 * 8);
  for (size_t i = 0; i < n1; i++) hx[i] = (double)(i % 1000);
  const size_t f0 = free_bytes();
  XK(xpar_add(ctx, XPAR_DOUBLE, hx, hx, hz, n1));
  const size_t held = f0 - free_bytes();
  if (held < 3 * n1 * 8)
    FAIL("add on 2 x %zu MiB of host data holds only %zu MiB (expected 2 x 1.5 x that)",
         n1 * 8 / MiB, held / MiB);
  XK(xpar_context_release_memory(ctx));
  const size_t after = f0 > free_bytes() ? f0 - free_bytes() : 0;
  if (after > 64 * MiB) FAIL("after xpar_context_release_memory %zu MiB are still held", after / MiB);
  printf("  release: a forced-cuda add held %zu MiB, after release %zu MiB\n", held / MiB, after / MiB);

  /* Out of memory with stale cache: the application takes all but 128 MiB;
   * a reduce of 2^27 host doubles needs a 1 GiB staging slot, which fits
   * only once the add's stale slots 1 and 2 are released. */
  XK(xpar_add(ctx, XPAR_DOUBLE, hx, hx, hz, n1));
  size_t take = free_bytes() - 128 * MiB;
  void *hog = NULL;
  while (cudaMalloc(&hog, take) != cudaSuccess) {
    (void)cudaGetLastError();
    take -= 64 * MiB;
  }
  const size_t n2 = (size_t)1 << 27;
  double *big = (double *)malloc(n2 * 8);
  for (size_t i = 0; i < n2; i++) big[i] = 1.0;
  double r = 0;
  xpar_status st = xpar_reduce(ctx, XPAR_DOUBLE, XPAR_SUM, big, n2, &r);
  if (st != XPAR_OK) FAIL("reduce with a stale cache and little free memory: %s (%s)", xpar_status_name(st), xpar_last_error_detail());
  else if (r != (double)n2) FAIL("reduce with a stale cache: %g", r);
  cudaFree(hog);
  XK(xpar_context_destroy(ctx));
  free(hx), free(hz), free(big);
  printf("release memory: %s (%d failures)\n", failures == before ? "ok" : "FAILED", failures - before);
}

/* ---- the calling thread's driver context ---------------------------------------------- */

#define DK(call)                                                                     \
  do {                                                                               \
    CUresult r_ = (call);                                                            \
    if (r_ != CUDA_SUCCESS) {                                                        \
      fprintf(stderr, "%s:%d: %s: CUresult %d\n", __FILE__, __LINE__, #call, (int)r_); \
      exit(2);                                                                       \
    }                                                                                \
  } while (0)

/* The driver functions the test uses, through the runtime's entry point: the test, like
 * the library, does not link libcuda (a machine without a driver must still start it
 * and skip). */
static struct {
  PFN_cuCtxGetCurrent_v4000 get_current;
  PFN_cuCtxSetCurrent_v4000 set_current;
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

/* A device reduce and scan on ctx, checked: the arrays are the primary context's. */
static void device_calls_check(xpar_context *ctx, const int32_t *dx, int32_t *dy, size_t n,
                               const int32_t *host, const char *label) {
  int32_t sum = 0x5A5A5A5A; /* poison: the call must write it */
  xpar_status st = xpar_reduce(ctx, XPAR_INT32, XPAR_SUM, dx, n, &sum);
  int32_t want = 0;
  for (size_t i = 0; i < n; i++) want += host[i];
  if (st != XPAR_OK)
    FAIL("%s: reduce: %s (%s)", label, xpar_status_name(st), xpar_last_error_detail());
  else if (sum != want)
    FAIL("%s: reduce %d, expected %d", label, sum, want);
  st = xpar_scan(ctx, XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE, dx, dy, n);
  if (st != XPAR_OK) {
    FAIL("%s: scan: %s (%s)", label, xpar_status_name(st), xpar_last_error_detail());
    return;
  }
  int32_t *got = (int32_t *)malloc(n * sizeof *got);
  CK(cudaMemcpy(got, dy, n * sizeof *got, cudaMemcpyDeviceToHost));
  int32_t run = 0;
  for (size_t i = 0; i < n; i++) {
    run += host[i];
    if (got[i] != run) {
      FAIL("%s: scan element %zu is %d, expected %d", label, i, got[i], run);
      break;
    }
  }
  free(got);
}

/* xpar makes its device's primary context current before its GPU work (cudaSetDevice),
 * skipping that only where the primary context already is current, and puts the
 * thread's own context back when the call returns: with the application's own driver
 * context current, with none (a fresh thread), and with the primary one, every call on
 * device arrays must run and be right, on CUDA (2^20 elements) and on the CPU tier's
 * copies (2^8), and leave the thread's current context as it found it. */
static void test_thread_contexts(void) {
  const int before = failures;
  drv.get_current = (PFN_cuCtxGetCurrent_v4000)driver_fn("cuCtxGetCurrent", 4000);
  drv.set_current = (PFN_cuCtxSetCurrent_v4000)driver_fn("cuCtxSetCurrent", 4000);
  drv.device_get = (PFN_cuDeviceGet_v2000)driver_fn("cuDeviceGet", 2000);
  drv.create = (PFN_cuCtxCreate_v12050)driver_fn("cuCtxCreate", 12050);
  drv.destroy = (PFN_cuCtxDestroy_v4000)driver_fn("cuCtxDestroy", 4000);
  xpar_context *ctx;
  XK(xpar_context_create(&ctx));
  const size_t sizes[2] = {(size_t)1 << 8, (size_t)1 << 20};
  int32_t *host = (int32_t *)malloc(sizes[1] * sizeof *host);
  host_pattern(host, sizes[1], (unsigned)seed);
  int32_t *dx, *dy;
  CK(cudaMalloc(&dx, sizes[1] * sizeof *dx));
  CK(cudaMalloc(&dy, sizes[1] * sizeof *dy));
  int32_t *dsum;
  CK(cudaMalloc(&dsum, sizeof *dsum));
  CK(cudaMemcpy(dx, host, sizes[1] * sizeof *dx, cudaMemcpyHostToDevice));
  CK(cudaDeviceSynchronize()); /* a pageable copy may return before its DMA lands */
  for (int k = 0; k < 2; k++) device_calls_check(ctx, dx, dy, sizes[k], host, "primary current");
  CUcontext primary = NULL, own = NULL, now = NULL;
  DK(drv.get_current(&primary));
  /* the application's own context on the same device, current */
  CUdevice dev;
  DK(drv.device_get(&dev, 0));
  DK(drv.create(&own, NULL, 0, dev));
  DK(drv.get_current(&now));
  if (now != own) FAIL("cuCtxCreate did not make the new context current");
  for (int k = 0; k < 2; k++) {
    device_calls_check(ctx, dx, dy, sizes[k], host, "the application's context current");
    DK(drv.get_current(&now));
    if (now != own)
      FAIL("n = %zu: after the calls the application's own context is no longer current "
           "(%p, its own %p, the primary %p)", sizes[k], (void *)now, (void *)own,
           (void *)primary);
  }
  /* a nowait call, then xpar_wait, each from the application's context (the result
   * the primary context's memory, as xpar's kernels run there) */
  XK(xpar_reduce_nowait(ctx, XPAR_INT32, XPAR_SUM, dx, sizes[1], dsum));
  DK(drv.get_current(&now));
  if (now != own) FAIL("after a nowait call the application's own context is not current");
  XK(xpar_wait(ctx));
  DK(drv.get_current(&now));
  if (now != own) FAIL("after xpar_wait the application's own context is not current");
  {
    int32_t got = 0, want = 0;
    for (size_t i = 0; i < sizes[1]; i++) want += host[i];
    CK(cudaMemcpy(&got, dsum, sizeof got, cudaMemcpyDeviceToHost)); /* in `own`: UVA */
    if (got != want) FAIL("nowait reduce from the application's context: %d, expected %d", got, want);
  }
  /* again after the application made the primary context current and its own once more */
  DK(drv.set_current(primary));
  DK(drv.set_current(own));
  for (int k = 0; k < 2; k++)
    device_calls_check(ctx, dx, dy, sizes[k], host, "the application's context current again");
  DK(drv.get_current(&now));
  if (now != own) FAIL("after the calls the application's context is not current again");
  /* none current: a fresh thread, the same xpar context, and one of its own */
  std::thread t([&] {
    CUcontext none = (CUcontext)1;
    DK(drv.get_current(&none));
    if (none != NULL) FAIL("a fresh thread has a current context");
    /* Right after xpar's calls, before the test's own runtime calls (its cudaMemcpy
     * makes the runtime bind the primary context to a thread that has none). */
    auto still_none = [&](const char *after_what) {
      CUcontext after = (CUcontext)1;
      DK(drv.get_current(&after));
      if (after != NULL)
        FAIL("a thread with no context current has one after %s", after_what);
    };
    int32_t sum = 0;
    XK(xpar_reduce(ctx, XPAR_INT32, XPAR_SUM, dx, sizes[1], &sum));
    still_none("a reduce on the shared context");
    XK(xpar_scan(ctx, XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE, dx, dy, sizes[0]));
    still_none("a scan on the shared context");
    for (int k = 0; k < 2; k++)
      device_calls_check(ctx, dx, dy, sizes[k], host, "fresh thread, shared xpar context");
    DK(drv.set_current(NULL)); /* pops what the test's cudaMemcpy bound */
    xpar_context *mine;
    XK(xpar_context_create(&mine));
    XK(xpar_reduce(mine, XPAR_INT32, XPAR_SUM, dx, sizes[1], &sum));
    still_none("a reduce on a new context");
    XK(xpar_context_release_memory(mine));
    still_none("releasing the new context's memory");
    for (int k = 0; k < 2; k++)
      device_calls_check(mine, dx, dy, sizes[k], host, "no context current, new xpar context");
    DK(drv.set_current(NULL));
    XK(xpar_context_destroy(mine));
    still_none("destroying the new context");
  });
  t.join();
  DK(drv.set_current(primary));
  CK(cudaFree(dsum));
  DK(drv.destroy(own));
  CK(cudaFree(dx));
  CK(cudaFree(dy));
  XK(xpar_context_destroy(ctx));
  free(host);
  printf("thread contexts: %s (%d failures)\n", failures == before ? "ok" : "FAILED",
         failures - before);
}

/* ---- synchronous calls that return on the kernel's done signal --------------------------- */

__global__ void count_mismatches(const int32_t *got, const int32_t *want, size_t n,
                                 unsigned *bad) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    if (got[i] != want[i]) atomicAdd(bad, 1u);
}

/* The host's side of the done signal: double arrays in managed memory, synchronous calls
 * back to back with no synchronisation of the application's between them, and the host
 * reading every output element right after each call (the kernel may still be retiring:
 * the flag's system-scope release must have made the stores visible to the host).
 * Small integers in doubles: every sum is exact. */
static void done_signal_managed_chain(void) {
  const size_t sizes[] = {1000, 65539, ((size_t)1 << 20) + 5};
  const size_t max_n = sizes[2];
  double *x, *y, *z;
  CK(cudaMallocManaged(&x, max_n * sizeof *x));
  CK(cudaMallocManaged(&y, max_n * sizeof *y));
  CK(cudaMallocManaged(&z, max_n * sizeof *z));
  xpar_context *ctx;
  XK(xpar_context_create(&ctx));
  XK(xpar_context_set_backend(ctx, XPAR_BACKEND_CUDA));
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    const size_t n = sizes[k];
    const unsigned salt = (unsigned)(seed % 97u) + (unsigned)k;
    CK(cudaDeviceSynchronize());
    for (size_t i = 0; i < n; i++) {
      x[i] = (double)((int)((i * 7u + salt) % 13u) - 6);
      y[i] = (double)((i + salt) % 5u);
      z[i] = -1e300;
    }
    const char *step = "add";
    XK(xpar_add(ctx, XPAR_DOUBLE, x, y, z, n)); /* z = x + y */
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; i++)
      if (z[i] != x[i] + y[i] && !bad++) first = i;
    if (!bad) {
      step = "inclusive scan";
      XK(xpar_scan(ctx, XPAR_DOUBLE, XPAR_SUM, XPAR_INCLUSIVE, z, z, n)); /* in place */
      double run = 0;
      for (size_t i = 0; i < n; i++)
        if (z[i] != (run += x[i] + y[i]) && !bad++) first = i;
    }
    if (!bad) {
      step = "axpy";
      const double alpha = 2;
      XK(xpar_axpy(ctx, XPAR_DOUBLE, &alpha, x, y, n)); /* y = 2x + y */
      for (size_t i = 0; i < n; i++)
        if (y[i] != 2 * x[i] + (double)((i + salt) % 5u) && !bad++) first = i;
    }
    if (!bad) {
      step = "reduce";
      double sum = 0, want = 0;
      XK(xpar_reduce(ctx, XPAR_DOUBLE, XPAR_SUM, y, n, &sum));
      for (size_t i = 0; i < n; i++) want += y[i];
      if (sum != want) bad = 1, first = 0;
    }
    if (!bad) {
      step = "fill";
      const double v = 0.5 + salt;
      XK(xpar_fill(ctx, XPAR_DOUBLE, &v, x, n));
      for (size_t i = 0; i < n; i++)
        if (x[i] != v && !bad++) first = i;
    }
    if (bad)
      FAIL("done signal, managed double, n %zu: after the %s, %zu elements wrong on the host "
           "(the first at %zu; seed %llu)", n, step, bad, first, seed);
  }
  XK(xpar_context_destroy(ctx));
  CK(cudaFree(x));
  CK(cudaFree(y));
  CK(cudaFree(z));
}

/* A synchronous scan, add, axpy, fill or application kernel (xpar_launch: the XPAR_KERNEL
 * grid-stride kernel compiled in the application) on the GPU up to 2^22 elements returns when its
 * kernel's last block has raised a flag in pinned memory, not when the stream is idle
 * (backend_cuda/done_signal.cuh).  Right after each call, a kernel on a stream that is
 * not ordered with xpar's compares every element with the expected one: an early flag
 * (a wrong ticket count, a block that signals before its stores) leaves old elements
 * (the inputs change every call and the output is poisoned before it).  Sizes change
 * from call to call (the ticket must start at 0 for every grid), on xpar's own stream,
 * the application's non-blocking stream, grid overrides (several tiles per block) and
 * cuda-serial, and just above the limit (the stream's synchronisation). */
static void test_done_signal(void) {
  const int before = failures;
  const size_t max_n = ((size_t)1 << 22) + 1;
  const size_t sizes[] = {1, 1000, 4096, 4097, 65539, ((size_t)1 << 20) + 3, (size_t)1 << 22,
                          max_n, 31};
  const int n_sizes = (int)(sizeof sizes / sizeof sizes[0]);
  int32_t *x, *y, *out, *want_dev;
  unsigned *bad;
  CK(cudaMalloc(&x, max_n * 4));
  CK(cudaMalloc(&y, max_n * 4));
  CK(cudaMalloc(&out, max_n * 4));
  CK(cudaMalloc(&want_dev, max_n * 4));
  CK(cudaMallocHost(&bad, sizeof *bad));
  int32_t *hx = (int32_t *)malloc(max_n * 4), *hy = (int32_t *)malloc(max_n * 4),
          *want = (int32_t *)malloc(max_n * 4);
  cudaStream_t checker, app;
  /* The checker's blocks go ahead of any of xpar's still waiting to run. */
  int least_priority = 0, greatest_priority = 0;
  CK(cudaDeviceGetStreamPriorityRange(&least_priority, &greatest_priority));
  CK(cudaStreamCreateWithPriority(&checker, cudaStreamNonBlocking, greatest_priority));
  CK(cudaStreamCreateWithFlags(&app, cudaStreamNonBlocking));
  std::vector<double> call_us; /* own and application stream, n <= 2^20 */
  const char *configs[4] = {"own stream", "the application's stream", "grid 3 x 64",
                            "cuda-serial"};
  long calls = 0;
  for (int config = 0; config < 4; config++) {
    xpar_context *ctx;
    XK(xpar_context_create(&ctx));
    XK(xpar_context_set_backend(ctx, config == 3 ? XPAR_BACKEND_CUDA_SERIAL : XPAR_BACKEND_CUDA));
    if (config == 1) XK(xpar_context_set_stream(ctx, app));
    if (config == 2) XK(xpar_context_set_launch_shape(ctx, 3, 64));
    for (int rep = 0; rep < 2; rep++)
      for (int k = 0; k < n_sizes; k++) {
        const size_t n = sizes[(k * 5 + rep * 3 + (int)(seed % 7)) % n_sizes];
        if (config == 3 && n > 65539) continue; /* one thread: minutes at 2^22 */
        for (int op = 0; op < 6; op++) {
          const unsigned salt = (unsigned)(seed + 977u * (unsigned)calls) % 100000u + 1u;
          host_pattern(hx, n, salt);
          host_pattern(hy, n, salt + 3);
          const int32_t alpha = (int32_t)(salt % 5) + 2, value = (int32_t)salt;
          uint32_t run = 0;
          for (size_t i = 0; i < n; i++) switch (op) {
              case 0: want[i] = (int32_t)(run += (uint32_t)hx[i]); break;          /* inclusive */
              case 1: want[i] = (int32_t)run; run += (uint32_t)hx[i]; break;       /* exclusive */
              case 2: want[i] = hx[i] + hy[i]; break;                              /* add */
              case 3: /* axpy */
              case 5: want[i] = alpha * hx[i] + hy[i]; break; /* the application's axpy */
              default: want[i] = value; break;                                     /* fill */
            }
          CK(cudaMemcpy(x, hx, n * 4, cudaMemcpyHostToDevice));
          CK(cudaMemcpy(y, hy, n * 4, cudaMemcpyHostToDevice));
          CK(cudaMemcpy(want_dev, want, n * 4, cudaMemcpyHostToDevice));
          CK(cudaMemset(out, 0x7f, n * 4));
          CK(cudaDeviceSynchronize());
          xpar_status st = XPAR_OK;
          int32_t *result = out;
          const double t0 = now_s();
          switch (op) {
            case 0: st = xpar_scan(ctx, XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE, x, out, n); break;
            case 1: st = xpar_scan(ctx, XPAR_INT32, XPAR_SUM, XPAR_EXCLUSIVE, x, out, n); break;
            case 2: st = xpar_add(ctx, XPAR_INT32, x, y, out, n); break;
            case 3: st = xpar_axpy(ctx, XPAR_INT32, &alpha, x, y, n), result = y; break;
            case 4: st = xpar_fill(ctx, XPAR_INT32, &value, out, n); break;
            default: {
              const uint32_t ualpha = (uint32_t)alpha;
              xpar_arg args[3] = {XPAR_ARG_SCALAR_OF(XPAR_UINT32, &ualpha),
                                  XPAR_ARG_IN(XPAR_UINT32, x, n), XPAR_ARG_INOUT(XPAR_UINT32, y, n)};
              st = xpar_launch(ctx, &xk_axpy_u32, n, args, 3), result = y;
              break;
            }
          }
          if (config < 2 && n <= ((size_t)1 << 20)) call_us.push_back((now_s() - t0) * 1e6);
          /* at once, on a stream xpar's work is not ordered with */
          *bad = 0;
          count_mismatches<<<132, 256, 0, checker>>>(result, want_dev, n, bad);
          CK(cudaGetLastError());
          CK(cudaStreamSynchronize(checker));
          calls++;
          static const char *ops[6] = {"inclusive scan", "exclusive scan", "add", "axpy", "fill",
                                       "xpar_launch axpy"};
          if (st != XPAR_OK)
            FAIL("done signal, %s: %s of %zu: %s (%s)", configs[config], ops[op], n,
                 xpar_status_name(st), xpar_last_error_detail());
          else if (*bad)
            FAIL("done signal, %s: %s of %zu: %u elements not there when the call returned "
                 "(seed %llu)", configs[config], ops[op], n, *bad, seed);
        }
      }
    XK(xpar_context_destroy(ctx));
  }
  /* A signal that never comes (a ticket that does not reach the grid's size) leaves
   * every output right but costs each call the spin limit, 200 us, before the stream's
   * synchronisation; these calls take 10-30 us. */
  std::sort(call_us.begin(), call_us.end());
  const double median_us = call_us.empty() ? 0 : call_us[call_us.size() / 2];
  if (median_us > 150)
    FAIL("done signal: synchronous calls of at most 2^20 elements took %.1f us (median of %zu): "
         "the flag did not come",
         median_us, call_us.size());
  CK(cudaStreamDestroy(checker));
  CK(cudaStreamDestroy(app));
  cudaFree(x), cudaFree(y), cudaFree(out), cudaFree(want_dev), cudaFreeHost(bad);
  free(hx), free(hy), free(want);
  done_signal_managed_chain();
  printf("done signal: %s (%ld calls, median %.1f us at n <= 2^20, %d failures)\n",
         failures == before ? "ok" : "FAILED", calls, median_us, failures - before);
}

/* Result slots in device memory: slot 1 of three is the result, 0 and 2 its guards. */
static void device_result_check(const char *what, const unsigned char *slots, size_t size,
                                const void *want) {
  unsigned char got[3 * 16];
  CK(cudaMemcpy(got, slots, 3 * size, cudaMemcpyDeviceToHost));
  if (memcmp(got + size, want, size) != 0) FAIL("%s: the device result is wrong", what);
  for (size_t i = 0; i < size; i++)
    if (got[i] != 0xC5 || got[2 * size + i] != 0xC5) {
      FAIL("%s: a byte beside the device result was written", what);
      break;
    }
}

static void test_device_results(void) {
  const int before = failures;
  static const xpar_backend backends[] = {XPAR_BACKEND_AUTO, XPAR_BACKEND_CPU,
                                          XPAR_BACKEND_CPU_SERIAL, XPAR_BACKEND_CUDA,
                                          XPAR_BACKEND_CUDA_SERIAL};
  static const size_t sizes[] = {0, 100, 5000, (1u << 20) + 3};
  const size_t nmax = sizes[3];
  int32_t *hx = (int32_t *)malloc(nmax * 4), *dx = NULL;
  if (!hx) {
    fprintf(stderr, "out of host memory\n");
    exit(2);
  }
  host_pattern(hx, nmax, (unsigned)seed + 11);
  for (size_t i = 0; i < nmax; i++) hx[i] = hx[i] % 1000; /* no int32 sum overflows */
  unsigned char *slots = NULL;
  CK(cudaMalloc(&dx, nmax * 4));
  CK(cudaMemcpy(dx, hx, nmax * 4, cudaMemcpyHostToDevice));
  CK(cudaMalloc(&slots, 3 * 16));
  CK(cudaDeviceSynchronize());
  for (xpar_backend b : backends) {
    xpar_context *ctx;
    XK(xpar_context_create(&ctx));
    XK(xpar_context_set_backend(ctx, b));
    for (size_t n : sizes) {
      if (b == XPAR_BACKEND_CUDA_SERIAL && n > 5000) continue; /* one thread: slow */
      int32_t sum = 0, mx = INT32_MIN;
      int64_t wide = 0;
      uint32_t dot = 0;
      for (size_t i = 0; i < n; i++) {
        sum += hx[i];
        wide += hx[i];
        dot += (uint32_t)hx[i] * (uint32_t)hx[i];
        mx = hx[i] > mx ? hx[i] : mx;
      }
      for (int dev_in = 0; dev_in < 2; dev_in++)
        for (int rep = 0; rep < 2; rep++) { /* each call a second time (never a repeat:
                                                device results go the general path) */
          const int32_t *in = dev_in ? dx : hx;
          char what[160];
          snprintf(what, sizeof what, "backend %d, n = %zu, %s input, call %d", (int)b, n,
                   dev_in ? "device" : "host", rep);
          /* one call into slot 1 of `size` bytes, the slots poisoned first */
          auto into_slot = [&](const char *op, size_t size, const void *want, auto call) {
            CK(cudaMemset(slots, 0xC5, 3 * 16));
            CK(cudaDeviceSynchronize());
            XK(call(slots + size));
            char label[200];
            snprintf(label, sizeof label, "%s: %s", what, op);
            device_result_check(label, slots, size, want);
          };
          into_slot("reduce sum", 4, &sum,
                    [&](void *r) { return xpar_reduce(ctx, XPAR_INT32, XPAR_SUM, in, n, r); });
          into_slot("reduce max", 4, &mx,
                    [&](void *r) { return xpar_reduce(ctx, XPAR_INT32, XPAR_MAX, in, n, r); });
          into_slot("wide sum", 8, &wide,
                    [&](void *r) { return xpar_reduce_sum_wide(ctx, XPAR_INT32, in, n, r); });
          into_slot("dot", 4, &dot,
                    [&](void *r) { return xpar_dot(ctx, XPAR_UINT32, in, in, n, r); });
          into_slot("operator reduce", 4, &sum,
                    [&](void *r) { return xpar_reduce_op(ctx, &xk_sum_u32, in, n, r); });
          /* and a host result again, on the same context */
          int32_t host_sum = 0x5A5A5A5A;
          XK(xpar_reduce(ctx, XPAR_INT32, XPAR_SUM, in, n, &host_sum));
          if (host_sum != sum) FAIL("%s: host result %d, expected %d", what, host_sum, sum);
        }
    }
    xpar_context_destroy(ctx);
  }
  CK(cudaFree(dx));
  CK(cudaFree(slots));
  free(hx);
  printf("device results: %s (%d failures)\n", failures == before ? "ok" : "FAILED",
         failures - before);
}

/* A scalar input in device memory (axpy's alpha, fill's value, a scan's init):
 * the host would fault reading it, so every backend refuses it, writing
 * nothing, synchronous and nowait, first call and after a repeat of the same
 * call with a host scalar. */
static void test_device_scalars(void) {
  const int before = failures;
  static const xpar_backend backends[] = {XPAR_BACKEND_AUTO, XPAR_BACKEND_CPU,
                                          XPAR_BACKEND_CPU_SERIAL, XPAR_BACKEND_CUDA,
                                          XPAR_BACKEND_CUDA_SERIAL};
  const size_t n = 100;
  int32_t hx[100], hy[100], back[100];
  host_pattern(hx, n, (unsigned)seed + 17);
  int32_t *dx = NULL, *dy = NULL, *dscalar = NULL;
  CK(cudaMalloc(&dx, n * 4));
  CK(cudaMalloc(&dy, n * 4));
  CK(cudaMalloc(&dscalar, 16));
  CK(cudaMemcpy(dx, hx, n * 4, cudaMemcpyHostToDevice));
  CK(cudaMemset(dscalar, 0, 16));
  CK(cudaDeviceSynchronize());
  for (xpar_backend b : backends)
    for (int nowait = 0; nowait < 2; nowait++) {
      xpar_context *ctx;
      XK(xpar_context_create(&ctx));
      XK(xpar_context_set_backend(ctx, b));
      char what[96];
      snprintf(what, sizeof what, "backend %d%s", (int)b, nowait ? ", nowait" : "");
      /* outputs: host arrays for the synchronous calls, device ones for nowait */
      int32_t *y = nowait ? dy : hy;
      auto poison = [&]() {
        for (size_t i = 0; i < n; i++) hy[i] = 0x3C3C3C3C;
        CK(cudaMemset(dy, 0x3C, n * 4));
        CK(cudaDeviceSynchronize());
      };
      auto untouched = [&](const char *call) {
        XK(xpar_wait(ctx));
        if (nowait) CK(cudaMemcpy(back, dy, n * 4, cudaMemcpyDeviceToHost));
        const int32_t *got = nowait ? back : hy;
        for (size_t i = 0; i < n; i++)
          if (got[i] != 0x3C3C3C3C) {
            FAIL("%s: %s wrote element %zu", what, call, i);
            break;
          }
      };
      auto refused = [&](const char *call, xpar_status st) {
        if (st != XPAR_ERR_INVALID_ARGUMENT)
          FAIL("%s: %s with a device scalar returned %s", what, call, xpar_status_name(st));
        else if (!strstr(xpar_last_error_detail(), "device memory"))
          FAIL("%s: %s: the detail does not say why: \"%s\"", what, call,
               xpar_last_error_detail());
        untouched(call);
      };
      const int32_t two = 2, seven = 7;
      for (int warm = 0; warm < 2; warm++) {
        /* warm: the same call with a host scalar first, twice (a repeat on the CPU tiers) */
        if (warm) {
          for (int i = 0; i < 2; i++) {
            XK(nowait ? xpar_axpy_nowait(ctx, XPAR_INT32, &two, hx, y, n)
                      : xpar_axpy(ctx, XPAR_INT32, &two, hx, y, n));
            XK(nowait ? xpar_fill_nowait(ctx, XPAR_INT32, &seven, y, n)
                      : xpar_fill(ctx, XPAR_INT32, &seven, y, n));
          }
          XK(xpar_wait(ctx));
        }
        poison();
        refused("axpy", nowait ? xpar_axpy_nowait(ctx, XPAR_INT32, dscalar, hx, y, n)
                               : xpar_axpy(ctx, XPAR_INT32, dscalar, hx, y, n));
        poison();
        refused("fill", nowait ? xpar_fill_nowait(ctx, XPAR_INT32, dscalar, y, n)
                               : xpar_fill(ctx, XPAR_INT32, dscalar, y, n));
        poison();
        refused("scan_init",
                nowait ? xpar_scan_init_nowait(ctx, XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE,
                                               dscalar, dx, y, n)
                       : xpar_scan_init(ctx, XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE, dscalar,
                                        dx, y, n));
      }
      /* n = 0 reads no scalar: accepted */
      XK(xpar_axpy(ctx, XPAR_INT32, dscalar, hx, hy, 0));
      xpar_context_destroy(ctx);
    }
  CK(cudaFree(dx));
  CK(cudaFree(dy));
  CK(cudaFree(dscalar));
  printf("device scalars: %s (%d failures)\n", failures == before ? "ok" : "FAILED",
         failures - before);
}

int main(void) {
  const char *s = getenv("XPAR_TEST_SEED");
  seed = s ? strtoull(s, NULL, 0) : (unsigned long long)time(NULL);
  printf("test_embed_gpu: seed %llu\n", seed);
  xpar_device_info info;
  XK(xpar_device_query(&info));
  if (!info.usable) {
    printf("skipped: no usable GPU (%s)\n", info.reason);
    return 77;
  }
  test_stream_order();
  test_pinned_input_order();
  test_page_reuse();
  test_launch_extremes();
  test_release_memory();
  test_thread_contexts();
  test_done_signal();
  test_device_results();
  test_device_scalars();
  printf("test_embed_gpu: %s\n", failures ? "FAILED" : "passed");
  return failures ? 1 : 0;
}
