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
 * at 80 (256 x 8 / 4: 12 B of spills).  Run 1 of the second issue-11 session chose
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

} // namespace

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
