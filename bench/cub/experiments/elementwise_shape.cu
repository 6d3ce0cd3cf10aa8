/*
 * Experiment (issue 12, session 9's regret run on device data): why does the
 * library's elementwise kernel trail CUB by 5-9 % for 8-byte axpy / add and
 * for fill at 2^24, while it leads CUB by 11-14 % for 4-byte types?
 *
 * The library's kernel (backend_cuda/device_elementwise.cu): 256 threads,
 * U = 4 16-byte vectors per operand per thread in flight, a grid-stride loop
 * over a grid capped at 8 blocks per SM (132 x 8 = 1,056 blocks), plain
 * 16-byte loads and st.global.v4 / v2 stores.  This times, in one process,
 * interleaved, CUDA events, median of ROUNDS, the same loop body with:
 *   U         2, 4, 8 vectors per thread in flight;
 *   grid      capped (8 blocks / SM, grid-stride) or one block per tile
 *             (uncapped, each thread one pass: CUB's shape);
 *   stores    st.global (default) or st.global.cs (evict-first: streaming);
 * for axpy (y = 2x + y, in place), double and int32, and fill, double and
 * int32, at 2^22, 2^24 and 2^26 elements, against CUB (DeviceTransform::
 * Transform, DeviceFor::Bulk) and the device-to-device copy of the same
 * bytes.  Every variant's output is compared with CUB's.
 *
 *   nvcc -O3 -arch=sm_90 -std=c++17 -o es bench/cub/experiments/elementwise_shape.cu && ./es
 */
#include <cub/device/device_for.cuh>
#include <cub/device/device_transform.cuh>
#include <cuda/std/tuple>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "axpy_vectors.cuh"
#include "check_cuda.cuh"

namespace {

constexpr int kBlock = 256;
constexpr int kRounds = 15;

template <class T> struct FillOp {
  T *out;
  T v;
  __device__ void operator()(long long i) const { out[i] = v; }
};

/* axpy over `vectors` 16-byte vectors (n a multiple of the vector). */
template <class T, int U, bool CS>
__global__ void __launch_bounds__(kBlock) axpy_kernel(Axpy<T> f, const int4 *x, int4 *y, size_t vectors) {
  axpy_vectors<T, U, CS>(f, x, y, vectors);
}

template <int U, bool CS>
__global__ void __launch_bounds__(kBlock) fill_kernel(int4 value, int4 *out, size_t vectors) {
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  size_t v = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  for (; v + (U - 1) * stride < vectors; v += U * stride) {
#pragma unroll
    for (int u = 0; u < U; ++u) st16<CS>(&out[v + u * stride], value);
  }
  for (; v < vectors; v += stride) st16<CS>(&out[v], value);
}

struct Timer {
  cudaEvent_t a, b;
  Timer() {
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
  }
  float time(const std::function<void()> &f) {
    CK(cudaEventRecord(a));
    f();
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, a, b));
    return ms * 1e3f;
  }
};

struct Variant {
  std::string name;
  std::function<void()> run;
  std::vector<float> t;
};

int g_sms = 0;

unsigned grid_for(size_t vectors, int u, bool capped, const void *kernel) {
  size_t tiles = (vectors + (size_t)kBlock * u - 1) / ((size_t)kBlock * u);
  if (!capped) return (unsigned)std::max<size_t>(tiles, 1);
  int resident = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, kBlock, 0));
  size_t cap = (size_t)g_sms * std::min(resident, 8);
  return (unsigned)std::max<size_t>(std::min(tiles, cap), 1);
}

std::string variant_name(int u, bool capped, bool cs, unsigned grid) {
  char name[96];
  std::snprintf(name, sizeof name, "U=%d %s %s (grid %u)", u, capped ? "capped" : "tiles",
                cs ? "st.cs" : "st", grid);
  return name;
}

template <class T, int U, bool CS>
void add_axpy(std::vector<Variant> &vs, const T *x, T *y, size_t n, bool capped) {
  const size_t vectors = n * sizeof(T) / 16;
  auto k = axpy_kernel<T, U, CS>;
  unsigned grid = grid_for(vectors, U, capped, (const void *)k);
  vs.push_back({variant_name(U, capped, CS, grid), [=] {
                  k<<<grid, kBlock>>>(Axpy<T>{T(2)}, reinterpret_cast<const int4 *>(x),
                                      reinterpret_cast<int4 *>(y), vectors);
                }});
}

template <class T, int U, bool CS> void add_fill(std::vector<Variant> &vs, T *out, size_t n, bool capped) {
  const size_t vectors = n * sizeof(T) / 16;
  auto k = fill_kernel<U, CS>;
  unsigned grid = grid_for(vectors, U, capped, (const void *)k);
  T v[16 / sizeof(T)];
  for (auto &e : v) e = T(7);
  int4 value;
  std::memcpy(&value, v, 16);
  vs.push_back({variant_name(U, capped, CS, grid), [=] { k<<<grid, kBlock>>>(value, reinterpret_cast<int4 *>(out), vectors); }});
}

template <class T> void init(T *p, size_t n, int seed) {
  std::vector<T> h(n);
  for (size_t i = 0; i < n; ++i) h[i] = T((int)((i * 2654435761u + seed) % 9) - 4);
  CK(cudaMemcpy(p, h.data(), n * sizeof(T), cudaMemcpyHostToDevice));
}

void report(const char *what, std::vector<Variant> &vs, double bytes) {
  std::printf("## %s\n", what);
  float cub = 0;
  for (auto &v : vs) {
    std::sort(v.t.begin(), v.t.end());
    float med = v.t[v.t.size() / 2];
    if (v.name.rfind("CUB", 0) == 0) cub = med;
    std::printf("  %-40s %9.1f us %7.0f GB/s %s\n", v.name.c_str(), med, bytes / (med * 1e3),
                cub > 0 && v.name.rfind("CUB", 0) != 0 ? (std::to_string(cub / med).substr(0, 5) + " x CUB").c_str() : "");
  }
}

void shuffle_rounds(std::vector<Variant> &vs, Timer &tm) {
  unsigned s = 12345;
  std::vector<size_t> order(vs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  for (auto &v : vs) v.run(); /* warm */
  CK(cudaDeviceSynchronize());
  for (int r = 0; r < kRounds; ++r) {
    for (size_t i = order.size() - 1; i > 0; --i) {
      s = s * 1103515245u + 12345u;
      std::swap(order[i], order[s % (i + 1)]);
    }
    for (size_t i : order) vs[i].t.push_back(tm.time(vs[i].run));
  }
}

template <class T> int axpy_case(size_t n, Timer &tm, void *scratch) {
  T *x, *y;
  CK(cudaMalloc(&x, n * sizeof(T)));
  CK(cudaMalloc(&y, n * sizeof(T)));
  init(x, n, 1);
  std::vector<Variant> vs;
  vs.push_back({"CUB DeviceTransform", [=] {
                  CK(cub::DeviceTransform::Transform(cuda::std::make_tuple(x, y), y, (long long)n,
                                                             Axpy<T>{T(2)}));
                }});
  /* read 1.5 arrays, write 1.5: the axpy's three arrays of traffic */
  vs.push_back({"d2d copy (the same bytes)", [=] {
                  const size_t half = n * sizeof(T) * 3 / 2;
                  char *s = static_cast<char *>(scratch);
                  CK(cudaMemcpyAsync(s + half, s, half, cudaMemcpyDeviceToDevice));
                }});
  for (int capped = 1; capped >= 0; --capped) {
    add_axpy<T, 2, false>(vs, x, y, n, capped);
    add_axpy<T, 4, false>(vs, x, y, n, capped);
    add_axpy<T, 8, false>(vs, x, y, n, capped);
    add_axpy<T, 4, true>(vs, x, y, n, capped);
  }
  /* check: every variant from the same y gives CUB's y */
  int bad = 0;
  std::vector<T> a(n), b(n);
  init(y, n, 2);
  vs[0].run();
  CK(cudaMemcpy(a.data(), y, n * sizeof(T), cudaMemcpyDeviceToHost));
  for (size_t i = 2; i < vs.size(); ++i) {
    init(y, n, 2);
    vs[i].run();
    CK(cudaMemcpy(b.data(), y, n * sizeof(T), cudaMemcpyDeviceToHost));
    if (std::memcmp(a.data(), b.data(), n * sizeof(T))) {
      std::printf("  WRONG: %s\n", vs[i].name.c_str());
      bad++;
    }
  }
  init(y, n, 2);
  shuffle_rounds(vs, tm);
  char what[96];
  std::snprintf(what, sizeof what, "axpy %s, 2^%d (read 2, write 1)", sizeof(T) == 8 ? "double" : "int32",
                (int)__builtin_ctzll(n));
  report(what, vs, 3.0 * n * sizeof(T));
  CK(cudaFree(x));
  CK(cudaFree(y));
  return bad;
}

template <class T> int fill_case(size_t n, Timer &tm, void *scratch) {
  T *out;
  CK(cudaMalloc(&out, n * sizeof(T)));
  std::vector<Variant> vs;
  vs.push_back({"CUB DeviceFor::Bulk", [=] {
                  CK(cub::DeviceFor::Bulk((long long)n, FillOp<T>{out, T(7)}));
                }});
  vs.push_back({"cudaMemsetAsync (same bytes)", [=] {
                  CK(cudaMemsetAsync(scratch, 7, n * sizeof(T)));
                }});
  for (int capped = 1; capped >= 0; --capped) {
    add_fill<T, 2, false>(vs, out, n, capped);
    add_fill<T, 4, false>(vs, out, n, capped);
    add_fill<T, 8, false>(vs, out, n, capped);
    add_fill<T, 4, true>(vs, out, n, capped);
  }
  int bad = 0;
  std::vector<T> a(n);
  for (size_t i = 2; i < vs.size(); ++i) {
    CK(cudaMemset(out, 0, n * sizeof(T)));
    vs[i].run();
    CK(cudaMemcpy(a.data(), out, n * sizeof(T), cudaMemcpyDeviceToHost));
    for (size_t j = 0; j < n; ++j)
      if (a[j] != T(7)) {
        std::printf("  WRONG: %s at %zu\n", vs[i].name.c_str(), j);
        bad++;
        break;
      }
  }
  shuffle_rounds(vs, tm);
  char what[96];
  std::snprintf(what, sizeof what, "fill %s, 2^%d (write 1)", sizeof(T) == 8 ? "double" : "int32",
                (int)__builtin_ctzll(n));
  report(what, vs, 1.0 * n * sizeof(T));
  CK(cudaFree(out));
  return bad;
}

} // namespace

int main() {
  CK(cudaDeviceGetAttribute(&g_sms, cudaDevAttrMultiProcessorCount, 0));
  Timer tm;
  void *scratch;
  const size_t max_bytes = ((size_t)1 << 26) * 8 * 3; /* the copy's two halves at 2^26 doubles */
  CK(cudaMalloc(&scratch, max_bytes));
  int bad = 0;
  for (int e : {22, 24, 26}) {
    size_t n = (size_t)1 << e;
    bad += axpy_case<double>(n, tm, scratch);
    bad += axpy_case<unsigned>(n, tm, scratch);
    bad += fill_case<double>(n, tm, scratch);
    bad += fill_case<unsigned>(n, tm, scratch);
  }
  std::printf("elementwise_shape: %s\n", bad ? "SOME VARIANTS WRONG" : "every variant matched CUB");
  return bad ? 1 : 0;
}
