/*
 * Experiment (session 22): synchronous xpar_axpy / xpar_add / xpar_fill on device data
 * through the library, against CUB + cudaStreamSynchronize in the same rounds, at sizes
 * whose arrays together take 2 MB to 768 MB (the H100's L2 is 50 MB).  Built against two
 * trees -- before: one block per tile at every size; after: one wave of resident blocks
 * where the arrays fit tuning::elementwise_one_wave_max_l2 x L2 (launch_shape.cuh) -- and
 * run alternately, it measures the one-wave grid through the library's own kernels, done
 * signal and dispatch (elementwise_sync_shape.cu measured it on a copy of the loop).  A
 * reduce row (sum, result on the host, against CUB's DeviceReduce::Sum + a 4- or 8-byte
 * copy) shows the occupancy query the reduce no longer asks per call:
 *
 *   nvcc -O3 -arch=sm_90 -std=c++17 -I TREE/include -o ewab \
 *        bench/cub/experiments/elementwise_wave_ab.cu -L BUILD -lxpar -Xlinker -rpath=BUILD
 *
 * Rows take turns batch by batch (at least 40 calls and 2 ms), 15 rounds; median of the
 * rounds' per-call means, microseconds, host wall clock.  Before the timing, every row's
 * output is compared element by element with a host reference (inputs small integers:
 * exact in both types).
 */
#include <cub/device/device_for.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_transform.cuh>
#include <cuda/std/tuple>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "check_cuda.cuh"
#include "xpar/xpar.h"

namespace {

constexpr int kRounds = 15;

template <class T> struct AxpyOp {
  T a;
  __host__ __device__ T operator()(T x, T y) const { return a * x + y; }
};
template <class T> struct AddOp {
  __host__ __device__ T operator()(T x, T y) const { return x + y; }
};
template <class T> struct FillOp {
  T *out;
  T v;
  __device__ void operator()(long long i) const { out[i] = v; }
};

struct Row {
  std::string name;
  std::function<void()> run;
  std::vector<double> t;
};

void ok(xpar_status s, const char *what) {
  if (s != XPAR_OK) {
    std::fprintf(stderr, "%s: %s\n", what, xpar_last_error_detail());
    std::exit(1);
  }
}

const char *type_name(float) { return "float"; }
const char *type_name(double) { return "double"; }
xpar_dtype type_code(float) { return XPAR_FLOAT; }
xpar_dtype type_code(double) { return XPAR_DOUBLE; }

/* Runs the rows interleaved and prints their medians (rows[0] xpar, rows[1] CUB). */
void time_rows(const char *what, std::vector<Row> &rows) {
  for (int round = -1; round < kRounds; ++round)
    for (auto &r : rows) {
      int calls = 0;
      const auto t0 = std::chrono::steady_clock::now();
      double us = 0;
      do {
        r.run();
        ++calls;
        us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
      } while (calls < 40 || us < 2000);
      if (round >= 0) r.t.push_back(us / calls);
    }
  std::printf("%-30s", what);
  for (auto &r : rows) {
    std::sort(r.t.begin(), r.t.end());
    const double p50 = r.t[r.t.size() / 2];
    std::printf("  %s %8.2f", r.name.c_str(), p50);
  }
  std::printf("  xpar/CUB %.3f\n", rows[0].t[rows[0].t.size() / 2] / rows[1].t[rows[1].t.size() / 2]);
}

template <class T>
int check(const char *what, const std::function<void()> &run, T *dev, const std::vector<T> &want) {
  std::vector<T> got(want.size());
  run();
  CK(cudaMemcpy(got.data(), dev, want.size() * sizeof(T), cudaMemcpyDeviceToHost));
  if (std::memcmp(got.data(), want.data(), want.size() * sizeof(T)) == 0) return 0;
  std::printf("  WRONG: %s\n", what);
  return 1;
}

template <class T> int one_size(size_t n, xpar_context *ctx, cudaStream_t s) {
  T *x, *y, *z;
  CK(cudaMalloc(&x, n * sizeof(T)));
  CK(cudaMalloc(&y, n * sizeof(T)));
  CK(cudaMalloc(&z, n * sizeof(T)));
  std::vector<T> hx(n), hy(n), w_axpy(n), w_add(n), w_fill(n, T(7));
  for (size_t i = 0; i < n; ++i) {
    hx[i] = T((int)(i % 9) - 4);
    hy[i] = T((int)(i % 7) - 3);
    w_axpy[i] = T(2) * hx[i] + hy[i];
    w_add[i] = hx[i] + hy[i];
  }
  auto reset = [&] {
    CK(cudaMemcpy(x, hx.data(), n * sizeof(T), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(y, hy.data(), n * sizeof(T), cudaMemcpyHostToDevice));
    CK(cudaMemset(z, 0, n * sizeof(T)));
    CK(cudaDeviceSynchronize()); /* the pageable copies' DMA, before work on s */
  };
  static T alpha; /* 2 for the checks, 1 for the timing (y stays small) */
  const T seven = T(7);
  const xpar_dtype dt = type_code(T());
  auto xp_axpy = [=] { ok(xpar_axpy(ctx, dt, &alpha, x, y, n), "xpar_axpy"); };
  auto cub_axpy = [=] {
    CK(cub::DeviceTransform::Transform(cuda::std::make_tuple(x, y), y, (long long)n,
                                       AxpyOp<T>{alpha}, s));
    CK(cudaStreamSynchronize(s));
  };
  auto xp_add = [=] { ok(xpar_add(ctx, dt, x, y, z, n), "xpar_add"); };
  auto cub_add = [=] {
    CK(cub::DeviceTransform::Transform(cuda::std::make_tuple(x, y), z, (long long)n, AddOp<T>{},
                                       s));
    CK(cudaStreamSynchronize(s));
  };
  auto xp_fill = [=] { ok(xpar_fill(ctx, dt, &seven, z, n), "xpar_fill"); };
  auto cub_fill = [=] {
    CK(cub::DeviceFor::Bulk((long long)n, FillOp<T>{z, seven}, s));
    CK(cudaStreamSynchronize(s));
  };
  T *d_sum;
  void *temp = nullptr;
  size_t temp_bytes = 0;
  CK(cudaMalloc(&d_sum, sizeof(T)));
  CK(cub::DeviceReduce::Sum(temp, temp_bytes, x, d_sum, (long long)n, s));
  CK(cudaMalloc(&temp, temp_bytes));
  T sum_xpar = T(0), sum_cub = T(0);
  auto xp_reduce = [=, &sum_xpar] { ok(xpar_reduce(ctx, dt, XPAR_SUM, x, n, &sum_xpar), "xpar_reduce"); };
  auto cub_reduce = [=, &sum_cub] {
    size_t bytes = temp_bytes;
    CK(cub::DeviceReduce::Sum(temp, bytes, x, d_sum, (long long)n, s));
    CK(cudaMemcpyAsync(&sum_cub, d_sum, sizeof(T), cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));
  };
  int bad = 0;
  alpha = T(2);
  reset(), bad += check("xpar_axpy", xp_axpy, y, w_axpy);
  reset(), bad += check("CUB axpy", cub_axpy, y, w_axpy);
  reset(), bad += check("xpar_add", xp_add, z, w_add);
  reset(), bad += check("CUB add", cub_add, z, w_add);
  reset(), bad += check("xpar_fill", xp_fill, z, w_fill);
  reset(), bad += check("CUB fill", cub_fill, z, w_fill);
  {
    double want = 0; /* small integers: exact in either type */
    for (size_t i = 0; i < n; ++i) want += (double)hx[i];
    reset(), xp_reduce(), cub_reduce();
    if ((double)sum_xpar != want || (double)sum_cub != want) {
      std::printf("  WRONG: reduce %g / %g against %g\n", (double)sum_xpar, (double)sum_cub, want);
      bad++;
    }
  }
  alpha = T(1);
  reset();
  const int e = (int)__builtin_ctzll(n);
  const char *mult = (n >> e) == 3 ? "3x" : "";
  const double mb = (double)n * sizeof(T) / (1 << 20);
  char what[96];
  std::vector<Row> axpy = {{"xpar", xp_axpy}, {"CUB", cub_axpy}};
  std::snprintf(what, sizeof what, "axpy %-6s %s2^%d %5.0f MB", type_name(T()), mult, e, 2 * mb);
  time_rows(what, axpy);
  std::vector<Row> add = {{"xpar", xp_add}, {"CUB", cub_add}};
  std::snprintf(what, sizeof what, "add  %-6s %s2^%d %5.0f MB", type_name(T()), mult, e, 3 * mb);
  time_rows(what, add);
  std::vector<Row> fill = {{"xpar", xp_fill}, {"CUB", cub_fill}};
  std::snprintf(what, sizeof what, "fill %-6s %s2^%d %5.0f MB", type_name(T()), mult, e, mb);
  time_rows(what, fill);
  std::vector<Row> reduce = {{"xpar", xp_reduce}, {"CUB", cub_reduce}};
  std::snprintf(what, sizeof what, "sum  %-6s %s2^%d %5.0f MB", type_name(T()), mult, e, mb);
  time_rows(what, reduce);
  CK(cudaFree(temp));
  CK(cudaFree(d_sum));
  CK(cudaFree(x));
  CK(cudaFree(y));
  CK(cudaFree(z));
  return bad;
}

} // namespace

/* ./ewab [GRID [MAX_EXP]]: with GRID, every call of the library launches at most GRID blocks
 * (xpar_context_set_launch_shape; a grid is clamped to the tiles), sizes up to 2^MAX_EXP. */
int main(int argc, char **argv) {
  const unsigned grid = argc > 1 ? (unsigned)std::strtoul(argv[1], nullptr, 10) : 0;
  const int max_exp = argc > 2 ? std::atoi(argv[2]) : 25;
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  xpar_context *ctx = nullptr;
  ok(xpar_context_create(&ctx), "xpar_context_create");
  ok(xpar_context_set_backend(ctx, XPAR_BACKEND_CUDA), "set_backend");
  ok(xpar_context_set_stream(ctx, s), "set_stream");
  if (grid) ok(xpar_context_set_launch_shape(ctx, grid, 0), "set_launch_shape");
  std::printf("# elementwise_wave_ab: synchronous calls on device data, us per call (median of %d "
              "rounds); MB: the arrays the call touches; grid %u (0: the library's)\n",
              kRounds, grid);
  int bad = 0;
  const size_t sizes[] = {(size_t)1 << 18, (size_t)1 << 20, (size_t)1 << 21, (size_t)1 << 22,
                          (size_t)3 << 21, (size_t)1 << 23, (size_t)3 << 22, (size_t)1 << 24,
                          (size_t)1 << 25};
  for (size_t n : sizes) {
    if (n > ((size_t)1 << max_exp)) continue;
    bad += one_size<float>(n, ctx, s);
    bad += one_size<double>(n, ctx, s);
  }
  std::printf("elementwise_wave_ab: %s\n", bad ? "SOME OUTPUTS WRONG" : "every output matched");
  ok(xpar_context_set_stream(ctx, nullptr), "set_stream");
  xpar_context_destroy(ctx);
  return bad ? 1 : 0;
}
