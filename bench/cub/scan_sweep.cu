/*
 * xpar-gpu-bench --scan-sweep: tile shapes x tile order x look-back delays of the
 * occupancy scan kernel (backend_cuda/scan_occupancy.cuh), int32 / float inclusive sum,
 * beside CUB's DeviceScan::InclusiveSum in the same run; every configuration is checked
 * against CUB's output.
 *
 * The shapes are instantiated here only (int32 and float sum), so that trying a shape
 * costs the library nothing; the winner moves into launch_shape.cuh.
 *
 * Output: one "SWEEP" line per configuration at 2^28 int32 (all of them), then the best
 * configurations at 2^30 int32 and 2^28 / 2^30 float ("SWEEPTOP").
 */
#include <math.h>
#include <string.h>

#include <algorithm>
#include <string>
#include <vector>

#include <cub/device/device_scan.cuh>

#include "backend_cuda/scan_occupancy.cuh"
#include "gpu_timing_util.cuh"

namespace {

typedef xpar_status (*SweepRun)(const xpar__exec *ex, const void *in, void *out, size_t n);

/* No `using namespace xpar_cuda`: with kernels in two anonymous namespaces (this file's
 * helpers and the backend's), nvcc's host stubs would name them ambiguously. */
using xpar_cuda::SumOp;
using xpar_cuda::occupancy_items_per_thread;
using xpar_cuda::scan_occupancy_kernel;
using xpar_cuda::scan_occupancy_launch;

template <class Op, unsigned BLOCK, int VECS, unsigned MIN_BLOCKS, int LOOKBACK>
xpar_status sweep_launch(const xpar__exec *ex, const void *in, void *out, size_t n) {
  using T = typename Op::Type;
  xpar__exec e = *ex;
  e.block = BLOCK;
  XPAR__FORWARD(xpar__cuda_begin(e.cuda, "scan"));
  xpar__cuda_shape shape;
  XPAR__FORWARD(xpar__cuda_choose_shape(
      &e, e.cuda, XPAR_CUDA_FAMILY_SCAN_V5,
      (const void *)scan_occupancy_kernel<Op, BLOCK, VECS, MIN_BLOCKS, LOOKBACK>, n,
      (unsigned)occupancy_items_per_thread<T, VECS>(), &shape));
  return scan_occupancy_launch<Op, BLOCK, VECS, MIN_BLOCKS, LOOKBACK>(&e, shape, false, NULL, in,
                                                                      out, n);
}

struct Shape {
  const char *name;
  SweepRun run_int32;
  SweepRun run_float;
  const void *kernel_int32;
  unsigned block;
};

#define XPAR_SWEEP_SHAPE(B, V, M, L)                                                       \
  Shape {                                                                                  \
    #B "x" #V "v/" #M " lb" #L, sweep_launch<SumOp<int32_t>, B, V, M, L>,                  \
        sweep_launch<SumOp<float>, B, V, M, L>,                                            \
        (const void *)scan_occupancy_kernel<SumOp<int32_t>, B, V, M, L>, B                 \
  }

/* threads x 16-byte vectors per thread / resident blocks per SM the registers allow,
 * look-back tiles per lane (the window is 32 x that) */
const Shape kShapes[] = {
    XPAR_SWEEP_SHAPE(256, 6, 3, 4), /* v5 as of the second sweep */
    XPAR_SWEEP_SHAPE(256, 6, 3, 2), /* int32: 8 B spilled instead of 156; float 92 vs 460 */
    XPAR_SWEEP_SHAPE(256, 6, 3, 1),
    XPAR_SWEEP_SHAPE(384, 6, 2, 2),
    XPAR_SWEEP_SHAPE(256, 6, 4, 2),
    XPAR_SWEEP_SHAPE(128, 6, 6, 2),
    XPAR_SWEEP_SHAPE(256, 4, 4, 2),
};

struct Delay {
  unsigned first, poll;
};
const Delay kDelays[] = {{1250, 650}, {1500, 650}, {1000, 650}, {800, 400}};

struct Result {
  int shape, order, delay;
  double gbs_int32_28;
};

} // namespace

int gpu_scan_sweep_run(void) {
  cudaDeviceProp prop;
  GB_CUDA(cudaGetDeviceProperties(&prop, 0));
  const size_t max_n = (size_t)1 << 30;
  printf("scan sweep: %s, %d SMs; inclusive sum, CUDA events, 2 warm-ups, median of 7; "
         "GB/s = bytes read + written\n",
         prop.name, prop.multiProcessorCount);
  const xpar__backend &B = xpar__cuda_backend;
  xpar__cuda_state *st = NULL;
  xpar__exec ex = queued_exec_on_default_stream(&st);

  for (const Shape &s : kShapes) {
    cudaFuncAttributes attr;
    int resident = 0;
    GB_CUDA(cudaFuncGetAttributes(&attr, s.kernel_int32));
    GB_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, s.kernel_int32,
                                                          (int)s.block, 0));
    printf("SWEEPSHAPE %-16s int32: %3d registers, %3d local bytes, %2d blocks/SM resident\n",
           s.name, attr.numRegs, (int)attr.localSizeBytes, resident);
  }

  char *in = NULL, *out = NULL, *ref = NULL;
  GB_CUDA(cudaMalloc(&in, max_n * 4));
  GB_CUDA(cudaMalloc(&out, max_n * 4));
  GB_CUDA(cudaMalloc(&ref, max_n * 4));
  CompareResult *cmp = NULL;
  GB_CUDA(cudaMalloc(&cmp, sizeof(CompareResult)));
  size_t temp_bytes = 0, t1 = 0;
  cub::DeviceScan::InclusiveSum(NULL, temp_bytes, (const int *)in, (int *)out, (int64_t)max_n);
  cub::DeviceScan::InclusiveSum(NULL, t1, (const float *)in, (float *)out, (int64_t)max_n);
  temp_bytes = std::max(temp_bytes, t1);
  void *temp = NULL;
  GB_CUDA(cudaMalloc(&temp, temp_bytes));
  int failures = 0;

  /* One measurement: CUB's time into *cub_ms (once per dtype and n), the configuration's
   * GB/s returned, its output checked against CUB's. */
  auto measure = [&](int dt, size_t n, const Shape &s, int order, const Delay &d,
                     std::string *verdict) -> double {
    st->scan_tuning.tile_order = order;
    st->scan_tuning.first_poll_delay_ns = d.first;
    st->scan_tuning.poll_delay_ns = d.poll;
    GB_CUDA(cudaMemset(out, 0xA5, n * 4));
    SweepRun run = dt ? s.run_float : s.run_int32;
    const double ms = median_ms([&] { GB_XPAR(run(&ex, in, out, n)); }, 2, 7);
    const CompareResult h = compare_with(out, ref, n, dt, cmp, prop.multiProcessorCount);
    char buf[96];
    if (h.bad) {
      snprintf(buf, sizeof buf, "MISMATCH %llu elements, first at %llu", h.bad, h.first);
      failures++;
    } else {
      snprintf(buf, sizeof buf, "ok");
    }
    *verdict = buf;
    return 8.0 * n / ms / 1e6;
  };
  auto cub_gbs = [&](int dt, size_t n) -> double {
    size_t tb = temp_bytes;
    const double ms = median_ms(
        [&] {
          if (dt)
            cub::DeviceScan::InclusiveSum(temp, tb, (const float *)in, (float *)ref, (int64_t)n);
          else
            cub::DeviceScan::InclusiveSum(temp, tb, (const int *)in, (int *)ref, (int64_t)n);
        },
        2, 7);
    GB_CUDA(cudaDeviceSynchronize()); /* ref holds CUB's result */
    return 8.0 * n / ms / 1e6;
  };
  auto fill = [&](int dt) {
    if (dt)
      fill_unit_floats<<<1024, 256>>>((float *)in, max_n);
    else
      fill_random<<<1024, 256>>>((uint32_t *)in, max_n, 2468u);
    GB_CUDA(cudaDeviceSynchronize());
  };
  const char *order_name[2] = {"ticket", "blockidx"};

  /* 1. everything at 2^28 int32 */
  fill(0);
  const size_t n28 = (size_t)1 << 28;
  const double cub28 = cub_gbs(0, n28);
  printf("SWEEP %-12s %-8s %-9s %7.0f GB/s\n", "CUB", "-", "-", cub28);
  std::vector<Result> results;
  const int nshapes = (int)(sizeof kShapes / sizeof kShapes[0]);
  const int ndelays = (int)(sizeof kDelays / sizeof kDelays[0]);
  for (int si = 0; si < nshapes; si++)
    for (int order = 0; order < 2; order++)
      for (int di = 0; di < ndelays; di++) {
        std::string verdict;
        const double gbs = measure(0, n28, kShapes[si], order, kDelays[di], &verdict);
        printf("SWEEP %-16s %-8s d%4u/%-4u %7.0f GB/s %5.3f x CUB  %s\n", kShapes[si].name,
               order_name[order], kDelays[di].first, kDelays[di].poll, gbs, gbs / cub28,
               verdict.c_str());
        fflush(stdout);
        results.push_back({si, order, di, gbs});
      }
  const double cub28_again = cub_gbs(0, n28);
  printf("SWEEP %-12s %-8s %-9s %7.0f GB/s (again, after the sweep)\n", "CUB", "-", "-",
         cub28_again);

  /* 2. the best six at 2^30 int32 and 2^28 / 2^30 float */
  std::sort(results.begin(), results.end(),
            [](const Result &a, const Result &b) { return a.gbs_int32_28 > b.gbs_int32_28; });
  if (results.size() > 6) results.resize(6);
  /* the first shape, block-index order, first delays: the reference row */
  bool have_reference = false;
  for (const Result &r : results) have_reference |= r.shape == 0 && r.order == 1 && r.delay == 0;
  if (!have_reference) results.push_back({0, 1, 0, 0.0});
  for (int dt = 0; dt < 2; dt++) {
    fill(dt);
    for (size_t n : {n28, max_n}) {
      if (dt == 0 && n == n28) continue;
      const double cub = cub_gbs(dt, n);
      const int lg = (int)(log2((double)n) + 0.5);
      printf("SWEEPTOP %-12s %-8s %-9s %-5s 2^%d %7.0f GB/s\n", "CUB", "-", "-",
             dt ? "float" : "int32", lg, cub);
      for (const Result &r : results) {
        std::string verdict;
        const double gbs =
            measure(dt, n, kShapes[r.shape], r.order, kDelays[r.delay], &verdict);
        printf("SWEEPTOP %-16s %-8s d%4u/%-4u %-5s 2^%d %7.0f GB/s %5.3f x CUB  %s\n",
               kShapes[r.shape].name, order_name[r.order], kDelays[r.delay].first,
               kDelays[r.delay].poll, dt ? "float" : "int32", lg, gbs, gbs / cub,
               verdict.c_str());
        fflush(stdout);
      }
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
