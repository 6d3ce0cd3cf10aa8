/*
 * xpar-gpu-bench --scan-sweep: the search space of the scan's tuning (launch_shape.cuh's
 * ScanTuning<4> / <8>): tile shapes x look-back delays of the library's own kernel
 * (backend_cuda/scan_kernel.cuh, instantiated here with other tunings), inclusive sum of
 * int32 and double and inclusive max of double (the slowest 8-byte op), beside CUB's
 * DeviceScan in the same run; every
 * configuration is checked against CUB's output.  As CUB keeps %RANGE% in its
 * benchmarks, the ranges live here and only the winners in the library.
 *
 * Output: "SWEEPSHAPE" lines (registers, spills, residency of each shape), then one
 * "SWEEP" line per configuration at 2^26 and 2^28, with CUB before and after.
 */
#include <math.h>
#include <string.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <type_traits>
#include <vector>

#include <cuda/functional>
#include <cub/device/device_scan.cuh>

#include "backend_cuda/scan_kernel.cuh"
#include "gpu_timing_util.cuh"

namespace {

/* No `using namespace xpar_cuda`: with kernels in two anonymous namespaces (this file's
 * helpers and the backend's), nvcc's host stubs would name them ambiguously. */
using xpar_cuda::MaxOp;
using xpar_cuda::ScanDelays;
using xpar_cuda::SumOp;
using xpar_cuda::scan_kernel;
using xpar_cuda::scan_launch;

template <unsigned B, int V, unsigned M, int W, bool F> struct SweepTuning {
  static constexpr unsigned block = B;
  static constexpr int vectors = V;
  static constexpr unsigned min_blocks = M;
  static constexpr int window = W;
  static constexpr bool fixed_block = F;
};

typedef xpar_status (*SweepRun)(const xpar__exec *ex, const void *in, void *out, size_t n,
                                const ScanDelays &d);

template <class Op, class Tn>
xpar_status sweep_launch(const xpar__exec *ex, const void *in, void *out, size_t n,
                         const ScanDelays &d) {
  xpar__exec e = *ex;
  e.block = Tn::block;
  XPAR__FORWARD(xpar__cuda_begin(e.cuda, "scan"));
  return scan_launch<Op, Tn>(&e, false, NULL, in, out, n, d);
}

struct Shape {
  const char *name;
  int bytes;  /* element size: 4 (int32) or 8 (double) */
  bool max;   /* inclusive max instead of sum (8-byte only: the slowest 8-byte op) */
  SweepRun run;
  const void *kernel;
  unsigned block;
};

#define XPAR_SWEEP_SHAPE(OP, T, B, V, M, W, F)                                             \
  Shape {                                                                                  \
    #B "x" #V "v/" #M " w" #W " " #F, (int)sizeof(T), std::is_same<OP<T>, MaxOp<T>>::value, \
        sweep_launch<OP<T>, SweepTuning<B, V, M, W, F>>,                                   \
        (const void *)scan_kernel<OP<T>, SweepTuning<B, V, M, W, F>, true>, B              \
  }

/* threads x 16-byte vectors per thread / resident blocks per SM the registers are
 * budgeted for, look-back tiles per lane (the window is 32 x that), fixed_block (the
 * compiler told the block size: scan_kernel).  With fixed_block these shapes compile
 * without spills (ptxas, sm_90): 4-byte 256 x 8 / 3 at 72 registers, 256 x 8 / 4 at 64,
 * 256 x 10 / 3 at 80; 8-byte 256 x 6 / 4, 256 x 7 / 4, 128 x 6 / 8 at 62-64, 256 x 8 / 3
 * at 80 (256 x 8 / 4: 12 B of spills).  A sweep on the H100 host (2026-11-25) chose
 * 256 x 7 / 4 fixed for 8-byte elements (launch_shape.cuh has the rows). */
const Shape kShapes[] = {
    XPAR_SWEEP_SHAPE(SumOp, int32_t, 256, 8, 3, 1, false), /* ScanTuning<4> */
    XPAR_SWEEP_SHAPE(SumOp, int32_t, 256, 8, 3, 1, true),
    XPAR_SWEEP_SHAPE(SumOp, int32_t, 256, 10, 3, 1, true),
    XPAR_SWEEP_SHAPE(SumOp, double, 256, 7, 4, 1, true), /* ScanTuning<8> */
    XPAR_SWEEP_SHAPE(SumOp, double, 256, 6, 4, 1, true),
    XPAR_SWEEP_SHAPE(SumOp, double, 256, 8, 3, 1, true),
    XPAR_SWEEP_SHAPE(MaxOp, double, 256, 7, 4, 1, true),
    XPAR_SWEEP_SHAPE(MaxOp, double, 256, 6, 4, 1, true),
    XPAR_SWEEP_SHAPE(MaxOp, double, 256, 8, 3, 1, true),
};

const ScanDelays kDelays[] = {{800, 400, 500}};

/* ---- small n: the one-block path's tile shape (--small-scan-sweep) ------------------
 * A synchronous scan of up to a few thousand device elements runs one block
 * (scan_launch: grid 1, no more warps than the elements fill) of the generic kernel, whose
 * tile is min(vectors, 4) 16-byte vectors per thread.  Here the library's own path
 * (ScanTuning<4> / <8>) against the same code with 1 and 2 vectors per thread (a tuning
 * of 1 or 2 vectors also makes the look-back tiles that small: above one tile, n goes to
 * the look-back path with that tile).  Synchronous calls as an application makes them
 * (the done signal), host wall clock, shapes interleaved call by call in rounds; every
 * output checked against a host scan first. */
struct SmallShape {
  const char *name;
  xpar_status (*run)(const xpar__exec *ex, const void *in, void *out, size_t n);
};

/* Tn's tile, the library's look-back delays (SweepTuning names none). */
template <class Op, class Tn>
xpar_status small_launch(const xpar__exec *ex, const void *in, void *out, size_t n) {
  using Library = xpar_cuda::tuning::ScanTuning<sizeof(typename Op::Type)>;
  XPAR__FORWARD(xpar__cuda_begin(ex->cuda, "scan"));
  return scan_launch<Op, Tn>(ex, false, NULL, in, out, n, ScanDelays::of<Library>());
}

template <class T> int small_sweep(xpar__exec *ex, const char *dname) {
  using Tn = xpar_cuda::tuning::ScanTuning<sizeof(T)>;
  const SmallShape shapes[] = {
      {"library", small_launch<SumOp<T>, Tn>},
      {"2 vectors", small_launch<SumOp<T>, SweepTuning<256, 2, 3, 1, false>>},
      {"1 vector", small_launch<SumOp<T>, SweepTuning<256, 1, 3, 1, false>>},
  };
  constexpr int kShapes = sizeof shapes / sizeof shapes[0];
  const size_t sizes[] = {32, 64, 256, 1024, 2048, 4096, 8192};
  const size_t max_n = 8192;
  T *in = NULL, *out = NULL;
  GB_CUDA(cudaMalloc(&in, max_n * sizeof(T)));
  GB_CUDA(cudaMalloc(&out, max_n * sizeof(T)));
  std::vector<T> h(max_n), got(max_n);
  for (size_t i = 0; i < max_n; i++) h[i] = (T)((i * 2654435761u >> 24) % 100); /* exact sums */
  GB_CUDA(cudaMemcpy(in, h.data(), max_n * sizeof(T), cudaMemcpyHostToDevice));
  int failures = 0;
  for (size_t n : sizes) {
    for (const SmallShape &sh : shapes) { /* checked first */
      GB_CUDA(cudaMemset(out, 0xA5, max_n * sizeof(T)));
      GB_XPAR(sh.run(ex, in, out, n));
      GB_CUDA(cudaMemcpy(got.data(), out, max_n * sizeof(T), cudaMemcpyDeviceToHost));
      T run = 0;
      size_t bad = 0;
      for (size_t i = 0; i < n; i++) {
        run += h[i];
        bad += got[i] != run;
      }
      const unsigned char *tail = (const unsigned char *)(got.data() + n);
      for (size_t b = 0; b < (max_n - n) * sizeof(T); b++) bad += tail[b] != 0xA5;
      if (bad) {
        failures++;
        printf("SMALLSWEEP %-6s n %5zu %-10s MISMATCH (%zu wrong)\n", dname, n, sh.name, bad);
      }
    }
    constexpr int kRounds = 15, kCalls = 200;
    std::vector<double> t[kShapes];
    for (int r = 0; r < kRounds; r++)
      for (int k = 0; k < kShapes; k++) {
        const auto t0 = std::chrono::steady_clock::now();
        for (int c = 0; c < kCalls; c++) GB_XPAR(shapes[k].run(ex, in, out, n));
        const auto t1 = std::chrono::steady_clock::now();
        t[k].push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / kCalls);
      }
    printf("SMALLSWEEP %-6s n %5zu", dname, n);
    for (int k = 0; k < kShapes; k++) {
      std::sort(t[k].begin(), t[k].end());
      printf("  %s %6.2f us", shapes[k].name, t[k][kRounds / 2]);
    }
    printf("\n");
    fflush(stdout);
  }
  cudaFree(in);
  cudaFree(out);
  return failures;
}

} // namespace

int gpu_small_scan_sweep_run(void) {
  const xpar__backend &B = xpar__cuda_backend;
  xpar__cuda_state *st = NULL;
  GB_XPAR(B.state_create(0, NULL, &st));
  xpar__exec ex;
  memset(&ex, 0, sizeof ex);
  ex.cuda = st;
  printf("small scan sweep: synchronous inclusive sums of device arrays, host wall clock, "
         "median of 15 rounds x 200 calls, shapes interleaved by round\n");
  int failures = small_sweep<int32_t>(&ex, "int32");
  failures += small_sweep<double>(&ex, "double");
  printf("SMALLSWEEP %s\n", failures ? "FAILED" : "every output matches the host scan");
  B.state_destroy(st);
  return failures ? 1 : 0;
}

int gpu_scan_sweep_run(void) {
  cudaDeviceProp prop;
  GB_CUDA(cudaGetDeviceProperties(&prop, 0));
  const size_t max_n = (size_t)1 << 28;
  printf("scan sweep: %s, %d SMs; inclusive sum, CUDA events, 2 warm-ups, median of 7; "
         "GB/s = bytes read + written\n",
         prop.name, prop.multiProcessorCount);
  const xpar__backend &B = xpar__cuda_backend;
  xpar__cuda_state *st = NULL;
  xpar__exec ex = queued_exec_on_default_stream(&st);

  for (const Shape &s : kShapes) {
    cudaFuncAttributes attr;
    int resident = 0;
    GB_CUDA(cudaFuncGetAttributes(&attr, s.kernel));
    GB_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, s.kernel, (int)s.block, 0));
    printf("SWEEPSHAPE %-6s %-16s %3d registers, %3d local bytes, %2d blocks/SM resident\n",
           s.bytes == 4 ? "int32" : (s.max ? "dblmax" : "double"), s.name, attr.numRegs, (int)attr.localSizeBytes,
           resident);
  }

  char *in = NULL, *out = NULL, *ref = NULL;
  GB_CUDA(cudaMalloc(&in, max_n * 8));
  GB_CUDA(cudaMalloc(&out, max_n * 8));
  GB_CUDA(cudaMalloc(&ref, max_n * 8));
  CompareResult *cmp = NULL;
  GB_CUDA(cudaMalloc(&cmp, sizeof(CompareResult)));
  size_t temp_bytes = 0, t1 = 0, t2 = 0;
  cub::DeviceScan::InclusiveSum(NULL, temp_bytes, (const int *)in, (int *)out, (int64_t)max_n);
  cub::DeviceScan::InclusiveSum(NULL, t1, (const double *)in, (double *)out, (int64_t)max_n);
  cub::DeviceScan::InclusiveScan(NULL, t2, (const double *)in, (double *)out, cuda::maximum<>{},
                                 (int64_t)max_n);
  temp_bytes = std::max(temp_bytes, std::max(t1, t2));
  void *temp = NULL;
  GB_CUDA(cudaMalloc(&temp, temp_bytes));
  int failures = 0;

  for (int pass = 0; pass < 3; pass++) { /* int32 sum, double sum, double max */
    const int bytes = pass == 0 ? 4 : 8;
    const bool max = pass == 2;
    if (bytes == 8)
      fill_unit_doubles<<<1024, 256>>>((double *)in, max_n);
    else
      fill_random<<<1024, 256>>>((uint32_t *)in, max_n, 2468u);
    GB_CUDA(cudaDeviceSynchronize());
    const char *dname = bytes == 8 ? (max ? "dblmax" : "double") : "int32";
    for (size_t n : {(size_t)1 << 26, max_n}) {
      const int lg = (int)(log2((double)n) + 0.5);
      const double moved = 2.0 * bytes * n;
      auto cub_gbs = [&] {
        size_t tb = temp_bytes;
        const double ms = median_ms(
            [&] {
              if (max)
                cub::DeviceScan::InclusiveScan(temp, tb, (const double *)in, (double *)ref,
                                               cuda::maximum<>{}, (int64_t)n);
              else if (bytes == 8)
                cub::DeviceScan::InclusiveSum(temp, tb, (const double *)in, (double *)ref,
                                              (int64_t)n);
              else
                cub::DeviceScan::InclusiveSum(temp, tb, (const int *)in, (int *)ref, (int64_t)n);
            },
            2, 7);
        GB_CUDA(cudaDeviceSynchronize()); /* ref holds CUB's result */
        return moved / ms / 1e6;
      };
      const double cub = cub_gbs();
      printf("SWEEP %-6s 2^%d %-16s %-10s %7.0f GB/s\n", dname, lg, "CUB", "-", cub);
      for (const Shape &s : kShapes) {
        if (s.bytes != bytes || s.max != max) continue;
        for (const ScanDelays &d : kDelays) {
          GB_CUDA(cudaMemset(out, 0xA5, n * bytes));
          const double ms = median_ms([&] { GB_XPAR(s.run(&ex, in, out, n, d)); }, 2, 7);
          /* max: exact (mode 0 over the 32-bit words); sum: relative 1e-3 */
          const CompareResult h = compare_with(out, ref, max ? 2 * n : n,
                                               bytes == 8 && !max ? 2 : 0, cmp,
                                               prop.multiProcessorCount);
          if (h.bad) failures++;
          printf("SWEEP %-6s 2^%d %-16s d%4u/%-4u %7.0f GB/s %5.3f x CUB  %s\n", dname, lg,
                 s.name, d.first_poll_ns, d.poll_ns, moved / ms / 1e6, moved / ms / 1e6 / cub,
                 h.bad ? "MISMATCH" : "ok");
          fflush(stdout);
        }
      }
      printf("SWEEP %-6s 2^%d %-16s %-10s %7.0f GB/s (again)\n", dname, lg, "CUB", "-",
             cub_gbs());
    }
  }
  printf("SWEEP %s\n", failures ? "FAILED (a configuration differs from CUB)"
                                : "every configuration matches CUB");
  B.state_destroy(st);
  cudaFree(temp);
  cudaFree(cmp);
  cudaFree(in);
  cudaFree(out);
  cudaFree(ref);
  return failures ? 1 : 0;
}
