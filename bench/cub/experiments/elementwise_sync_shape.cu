/*
 * Experiment (session 22): the shape of a synchronous elementwise call between 2^18 and 2^24
 * elements on device data.  Session 21 (launch_done_cost.cu) found the application's
 * grid-stride kernel (one element per thread per step, 8 blocks of 256 per SM) 2.25 us
 * *faster* than the built-in xpar_axpy at 2^22 floats (16.0 against 18.3 us), both ending
 * on the done signal.  The built-in kernel (backend_cuda/device_elementwise.cu) is compiled
 * with __launch_bounds__(1024) and takes 56-60 registers with the done signal's epilogue,
 * so 4 blocks of 256 fit an SM; at 2^22 floats its one-block-per-tile grid (4 vectors of 16
 * bytes per operand per thread) is 1,024 blocks, about two waves of 528.
 *
 * Host wall clock around synchronous calls, each variant ending as the library's do (every
 * block calls signal_block_done, xpar/detail/cuda_done_signal.cuh; the host spins on the
 * pinned flag), rows interleaved batch by batch (100 calls), median of the rounds' per-call
 * means; xpar_axpy itself (CUDA forced) and CUB's DeviceTransform + cudaStreamSynchronize
 * in the same rounds.  Variants of y = a x + y on 16-byte vectors:
 *   lb1024   __launch_bounds__(1024) (the library's), lb256x8 __launch_bounds__(256, 8)
 *            (at most 32 registers: 8 blocks of 256 per SM);
 *   U        vectors per operand per thread in flight;
 *   tiles    one block per 256 x U vectors (the library's), or capped: a grid-stride loop
 *            over the blocks that fit the SMs at once (one wave);
 *   scalar   the application kernel's shape (one element per thread per step, 8 x SMs).
 * Every variant's y is compared, element by element, with a host reference (a = 2, exact).
 *
 *   nvcc -O3 -arch=sm_90 -std=c++17 -Xptxas -v -I include -o ess \
 *        bench/cub/experiments/elementwise_sync_shape.cu -L BUILD -lxpar -Xlinker -rpath=BUILD
 */
#include <cub/device/device_transform.cuh>
#include <cuda/std/tuple>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "axpy_vectors.cuh"
#include "check_cuda.cuh"
#include "xpar/detail/cuda_done_signal.cuh"
#include "xpar/xpar.h"

namespace {

constexpr int kBlock = 256;
constexpr int kRounds = 15;
constexpr int kBatch = 100;

template <class T, int U>
__global__ void __launch_bounds__(1024)
    axpy_lb1024(Axpy<T> f, const int4 *x, int4 *y, size_t vectors, xpar_kernel_done d) {
  axpy_vectors<T, U, false>(f, x, y, vectors);
  xpar_cuda::signal_block_done(d);
}

template <class T, int U>
__global__ void __launch_bounds__(256, 8)
    axpy_lb256x8(Axpy<T> f, const int4 *x, int4 *y, size_t vectors, xpar_kernel_done d) {
  axpy_vectors<T, U, false>(f, x, y, vectors);
  xpar_cuda::signal_block_done(d);
}

/* XPAR_KERNEL's grid-stride loop: one element per thread per step. */
template <class T>
__global__ void axpy_scalar(Axpy<T> f, const T *x, T *y, size_t n, xpar_kernel_done d) {
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    y[i] = f(x[i], y[i]);
  xpar_cuda::signal_block_done(d);
}

/* The done signal's host side, as backend_cuda/cuda_state.cu has it. */
struct DoneFlag {
  unsigned *ticket = nullptr;
  unsigned *flag_host = nullptr;
  unsigned *flag_dev = nullptr;
  unsigned seq = 0;
  long fallbacks = 0;
  DoneFlag() {
    CK(cudaMalloc(&ticket, 16));
    CK(cudaMemset(ticket, 0, 16));
    CK(cudaHostAlloc(&flag_host, 64, cudaHostAllocMapped));
    *flag_host = 0;
    CK(cudaHostGetDevicePointer((void **)&flag_dev, flag_host, 0));
  }
  xpar_kernel_done next() { return xpar_kernel_done{ticket, flag_dev, ++seq}; }
  void wait(cudaStream_t s) {
    const auto t0 = std::chrono::steady_clock::now();
    while (__atomic_load_n(flag_host, __ATOMIC_ACQUIRE) != seq) {
      if (std::chrono::steady_clock::now() - t0 > std::chrono::microseconds(200)) {
        CK(cudaStreamSynchronize(s));
        fallbacks++;
        if (__atomic_load_n(flag_host, __ATOMIC_ACQUIRE) != seq) {
          std::fprintf(stderr, "done flag never raised (seq %u)\n", seq);
          std::exit(1);
        }
        break;
      }
    }
  }
};

struct Row {
  std::string name;
  std::function<void()> run; /* one synchronous call */
  std::vector<double> t;
};

int g_sms = 0;

template <class K> unsigned one_wave(K kernel) {
  int resident = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, kBlock, 0));
  return (unsigned)(g_sms * std::min(resident, 8));
}

template <class T, int U, bool LB8>
void add_vector_row(std::vector<Row> &rows, DoneFlag &df, cudaStream_t s, const T *x, T *y,
                    size_t n, bool capped, const T *a) {
  const size_t vectors = n * sizeof(T) / 16;
  auto k = LB8 ? axpy_lb256x8<T, U> : axpy_lb1024<T, U>;
  const size_t tiles = (vectors + (size_t)kBlock * U - 1) / ((size_t)kBlock * U);
  const unsigned grid = (unsigned)(capped ? std::min<size_t>(tiles, one_wave(k)) : tiles);
  cudaFuncAttributes attr;
  CK(cudaFuncGetAttributes(&attr, k));
  char name[96];
  std::snprintf(name, sizeof name, "%s U=%d %s grid %u (%d regs)", LB8 ? "lb256x8" : "lb1024", U,
                capped ? "capped" : "tiles", grid, attr.numRegs);
  rows.push_back({name, [=, &df] {
                    k<<<grid, kBlock, 0, s>>>(Axpy<T>{*a}, reinterpret_cast<const int4 *>(x),
                                              reinterpret_cast<int4 *>(y), vectors, df.next());
                    CK(cudaGetLastError());
                    df.wait(s);
                  }});
}

const char *type_name(float) { return "float"; }
const char *type_name(double) { return "double"; }
xpar_dtype type_code(float) { return XPAR_FLOAT; }
xpar_dtype type_code(double) { return XPAR_DOUBLE; }

template <class T>
int axpy_case(size_t n, xpar_context *ctx, cudaStream_t s, DoneFlag &df) {
  static T alpha; /* read by every row at each call: 2 for the check, 1 for the timing */
  const T *a = &alpha;
  T *x, *y;
  CK(cudaMalloc(&x, n * sizeof(T)));
  CK(cudaMalloc(&y, n * sizeof(T)));
  std::vector<T> hx(n), hy(n), want(n), got(n);
  for (size_t i = 0; i < n; ++i) {
    hx[i] = T((int)(i % 9) - 4);
    hy[i] = T((int)(i % 7) - 3);
    want[i] = T(2) * hx[i] + hy[i];
  }
  CK(cudaMemcpy(x, hx.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  CK(cudaDeviceSynchronize());

  std::vector<Row> rows;
  rows.push_back({"xpar_axpy (CUDA forced)", [=] {
                    if (xpar_axpy(ctx, type_code(T()), a, x, y, n) != XPAR_OK) {
                      std::fprintf(stderr, "xpar_axpy: %s\n", xpar_last_error_detail());
                      std::exit(1);
                    }
                  }});
  rows.push_back({"CUB DeviceTransform + sync", [=] {
                    CK(cub::DeviceTransform::Transform(cuda::std::make_tuple(x, y), y,
                                                       (long long)n, Axpy<T>{*a}, s));
                    CK(cudaStreamSynchronize(s));
                  }});
  add_vector_row<T, 4, false>(rows, df, s, x, y, n, false, a);
  add_vector_row<T, 4, false>(rows, df, s, x, y, n, true, a);
  add_vector_row<T, 2, false>(rows, df, s, x, y, n, false, a);
  add_vector_row<T, 4, true>(rows, df, s, x, y, n, false, a);
  add_vector_row<T, 4, true>(rows, df, s, x, y, n, true, a);
  add_vector_row<T, 2, true>(rows, df, s, x, y, n, false, a);
  add_vector_row<T, 1, true>(rows, df, s, x, y, n, false, a);
  {
    const unsigned grid = (unsigned)std::min<size_t>((n + kBlock - 1) / kBlock, (size_t)g_sms * 8);
    char name[64];
    std::snprintf(name, sizeof name, "scalar grid-stride grid %u", grid);
    rows.push_back({name, [=, &df] {
                      axpy_scalar<T><<<grid, kBlock, 0, s>>>(Axpy<T>{*a}, x, y, n, df.next());
                      CK(cudaGetLastError());
                      df.wait(s);
                    }});
  }

  /* Every row from the same y with a = 2 gives the reference, every element. */
  int bad = 0;
  alpha = T(2);
  for (auto &r : rows) {
    /* A pageable copy may return before its DMA lands, and s does not wait for the
     * legacy stream: the device synchronisation orders the copy before the row. */
    CK(cudaMemcpy(y, hy.data(), n * sizeof(T), cudaMemcpyHostToDevice));
    CK(cudaDeviceSynchronize());
    r.run();
    CK(cudaMemcpy(got.data(), y, n * sizeof(T), cudaMemcpyDeviceToHost));
    if (std::memcmp(got.data(), want.data(), n * sizeof(T)) != 0) {
      std::printf("  WRONG: %s\n", r.name.c_str());
      bad++;
    }
  }
  alpha = T(1);
  CK(cudaMemcpy(y, hy.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  CK(cudaDeviceSynchronize());
  for (int round = -1; round < kRounds; ++round)
    for (auto &r : rows) {
      const auto t0 = std::chrono::steady_clock::now();
      for (int k = 0; k < kBatch; ++k) r.run();
      const double us =
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() /
          kBatch;
      if (round >= 0) r.t.push_back(us);
    }
  std::printf("## axpy %s, 2^%d, synchronous, us per call (p50 / p90 of %d rounds x %d)\n",
              type_name(T()), (int)__builtin_ctzll(n), kRounds, kBatch);
  double lib = 0;
  for (auto &r : rows) {
    std::sort(r.t.begin(), r.t.end());
    const double p50 = r.t[r.t.size() / 2], p90 = r.t[r.t.size() * 9 / 10];
    if (lib == 0) lib = p50;
    std::printf("  %-44s %8.2f / %-8.2f  %+6.2f us vs xpar_axpy\n", r.name.c_str(), p50, p90,
                p50 - lib);
  }
  CK(cudaFree(x));
  CK(cudaFree(y));
  return bad;
}

} // namespace

int main() {
  CK(cudaDeviceGetAttribute(&g_sms, cudaDevAttrMultiProcessorCount, 0));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  xpar_context *ctx = nullptr;
  if (xpar_context_create(&ctx) != XPAR_OK || xpar_context_set_backend(ctx, XPAR_BACKEND_CUDA) != XPAR_OK ||
      xpar_context_set_stream(ctx, s) != XPAR_OK) {
    std::fprintf(stderr, "xpar context: %s\n", xpar_last_error_detail());
    return 1;
  }
  DoneFlag df;
  int bad = 0;
  for (int e : {18, 20, 21, 22, 23, 24}) {
    bad += axpy_case<float>((size_t)1 << e, ctx, s, df);
    bad += axpy_case<double>((size_t)1 << e, ctx, s, df);
  }
  std::printf("elementwise_sync_shape: %s, %ld spin fallbacks\n",
              bad ? "SOME ROWS WRONG" : "every row matched the reference", df.fallbacks);
  xpar_context_set_stream(ctx, nullptr);
  xpar_context_destroy(ctx);
  return bad ? 1 : 0;
}
