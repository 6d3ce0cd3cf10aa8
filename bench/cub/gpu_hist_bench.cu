/*
 * `xpar-gpu-bench --hist`: the CUDA backend's histogram (backend_cuda/device_histogram.cu)
 *  1. checked (--hist-check): xpar_histogram_even and xpar_histogram_range x every dtype x
 *     n (0, 1, primes up to 3e6; a sample one element off alignment) x bins (1, 2, 7, 32,
 *     256, 4,096, 12,288 and 12,289 -- the last bin count the shared-memory counters hold
 *     and the first the global path takes --, 100,000) x ranges (random, the dtype's
 *     widest, a few units or ulps) x tiers (synchronous, queued + wait, cuda-serial,
 *     captured into a CUDA graph and replayed twice: even bins only, a range histogram
 *     refuses the capture) against a CPU reference -- the CPU backend's own entry, whose
 *     integer arithmetic the tests check against 128-bit integers -- count for count;
 *     samples with the edges scattered in (lo, hi, just below hi, NaN, +-inf, -0.0, the
 *     dtype's extremes); and the memory past the counts (not written: the 0xA5 fill);
 *  2. timed (--hist-bench) beside CUB's DeviceHistogram::HistogramEven (levels of the
 *     sample type: int for int32, double for double) and HistogramRange, n = 2^20, 2^24,
 *     2^28, 2^30 (double: 2^29), 32, 256 and 4,096 bins, uniform samples and skewed ones (7 of 8 in
 *     one bin), CUDA events, CUB and xpar interleaved, median; CUB with 64-bit counters
 *     (xpar's) and with int counters (CUB's usual); each row's counts compared with
 *     CUB's; GB/s of the bytes (read n samples, write num_bins 8-byte counts), the share
 *     of the bandwidth bound (a device-to-device copy's rate), the ratio CUB / xpar (> 1:
 *     xpar faster).
 * Lines: "HISTCHECK ...", "HISTROW ...".
 */
#include <math.h>
#include <string.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include <cub/device/device_histogram.cuh>

#include "base/hist_bin.h"
#include "gpu_bench.h"
#include "gpu_timing_util.cuh"

namespace {

const xpar__backend &B = xpar__cuda_backend;

double now_us() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

template <class T> constexpr xpar_dtype dtype_of() {
  if (std::is_same<T, int32_t>::value) return XPAR_INT32;
  if (std::is_same<T, int64_t>::value) return XPAR_INT64;
  if (std::is_same<T, uint32_t>::value) return XPAR_UINT32;
  if (std::is_same<T, uint64_t>::value) return XPAR_UINT64;
  if (std::is_same<T, float>::value) return XPAR_FLOAT;
  return XPAR_DOUBLE;
}

template <class T> T random_value(std::mt19937_64 &rng) {
  if constexpr (std::is_floating_point<T>::value) {
    const double m = std::ldexp(1.0 + (double)(rng() >> 11) * 0x1p-53, (int)(rng() % 21) - 10);
    return (T)(rng() & 1 ? -m : m);
  } else {
    return (T)rng();
  }
}

/* lo < hi: 0 random, 1 the dtype's widest (floats: -max .. max), 2 a few units / ulps */
template <class T> void pick_range(std::mt19937_64 &rng, int which, T &lo, T &hi) {
  for (;;) {
    if (which == 1) {
      lo = std::numeric_limits<T>::lowest();
      hi = std::numeric_limits<T>::max();
      return;
    }
    lo = random_value<T>(rng);
    if (which == 2) {
      if constexpr (std::is_floating_point<T>::value) {
        hi = lo;
        for (int k = 0; k < 3; k++) hi = std::nextafter(hi, std::numeric_limits<T>::infinity());
      } else {
        if (lo > std::numeric_limits<T>::max() - 4) continue;
        hi = (T)(lo + 1 + (T)(rng() % 3));
      }
      return;
    }
    hi = random_value<T>(rng);
    if (lo < hi) return;
    if (hi < lo) {
      std::swap(lo, hi);
      return;
    }
  }
}

template <class T> void make_samples(std::vector<T> &v, size_t n, T lo, T hi, std::mt19937_64 &rng) {
  v.resize(n);
  for (size_t i = 0; i < n; i++) {
    const unsigned c = (unsigned)(rng() % 8);
    if (c < 5) { /* inside [lo, hi) */
      if constexpr (std::is_floating_point<T>::value) {
        const double u = (double)(rng() >> 11) * 0x1p-53;
        double x = (double)lo * 0.5 + ((double)hi * 0.5 - (double)lo * 0.5) * u;
        x = x + x;
        T t = (T)x;
        v[i] = t >= lo && t < hi ? t : lo;
      } else {
        const uint64_t span = (uint64_t)hi - (uint64_t)lo;
        v[i] = (T)((uint64_t)lo + (span ? rng() % span : 0));
      }
    } else {
      v[i] = random_value<T>(rng);
    }
  }
  if (!n) return;
  std::vector<T> edges = {lo, hi, std::numeric_limits<T>::lowest(), std::numeric_limits<T>::max()};
  if constexpr (std::is_floating_point<T>::value) {
    edges.push_back(std::nextafter(hi, -std::numeric_limits<T>::infinity()));
    edges.push_back(std::nextafter(lo, -std::numeric_limits<T>::infinity()));
    edges.push_back(std::numeric_limits<T>::quiet_NaN());
    edges.push_back(-std::numeric_limits<T>::quiet_NaN());
    edges.push_back(std::numeric_limits<T>::infinity());
    edges.push_back(-std::numeric_limits<T>::infinity());
    edges.push_back((T)-0.0);
  } else {
    edges.push_back((T)(hi - 1));
    if (lo > std::numeric_limits<T>::lowest()) edges.push_back((T)(lo - 1));
  }
  for (size_t k = 0; k < edges.size() * 2; k++) v[rng() % n] = edges[k % edges.size()];
}

/* num_bins + 1 sorted boundaries, some repeated, some drawn from the samples */
template <class T>
void make_boundaries(std::vector<T> &b, size_t nb, const std::vector<T> &x, std::mt19937_64 &rng) {
  b.resize(nb + 1);
  for (size_t i = 0; i <= nb; i++) {
    if (!x.empty() && rng() % 4 == 0) b[i] = x[rng() % x.size()];
    else if (i > 0 && rng() % 8 == 0) b[i] = b[i - 1];
    else b[i] = random_value<T>(rng);
    if constexpr (std::is_floating_point<T>::value)
      if (std::isnan(b[i])) b[i] = (T)1;
  }
  std::sort(b.begin(), b.end());
}

struct CheckBufs {
  char *in;
  uint64_t *counts;
  size_t cap, count_cap;
};

/* tier: 0 sync, 1 nowait + wait, 2 serial, 3 captured into a graph (even only), replayed
 * twice: the counts are zeroed by each replay. */
template <class T>
int check_one(xpar__cuda_state *st, CheckBufs &d, bool range, size_t n, size_t nb, int which,
              size_t offset, int tier, std::mt19937_64 &rng) {
  const xpar_dtype t = dtype_of<T>();
  T lo, hi;
  pick_range<T>(rng, which, lo, hi);
  std::vector<T> x, b;
  make_samples<T>(x, n, lo, hi, rng);
  if (range) make_boundaries<T>(b, nb, x, rng);
  /* the reference: the CPU backend, one thread */
  xpar__hist_even even;
  xpar__hist_even_prepare(t, &lo, &hi, nb, &even);
  std::vector<uint64_t> want(nb);
  xpar__histogram_spec s;
  memset(&s, 0, sizeof s);
  s.dtype = t;
  s.samples = x.data();
  s.n = n;
  s.num_bins = nb;
  s.boundaries = range ? b.data() : NULL;
  s.even = &even;
  s.counts = want.data();
  xpar__host_scratch scratch = {NULL, 0};
  xpar__exec cex;
  memset(&cex, 0, sizeof cex);
  cex.serial = 1;
  cex.num_threads = 1;
  cex.host_scratch = &scratch;
  GB_XPAR(xpar__cpu_backend.histogram(&cex, &s));
  xpar__host_scratch_free(&scratch);

  T *din = reinterpret_cast<T *>(d.in) + offset;
  GB_CUDA(cudaMemset(d.counts, 0xA5, d.count_cap));
  if (n) GB_CUDA(cudaMemcpy(din, x.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  s.samples = din;
  s.counts = d.counts;
  xpar__exec ex;
  memset(&ex, 0, sizeof ex);
  ex.cuda = st;
  ex.serial = tier == 2;
  ex.nowait = tier == 1 || tier == 3;
  if (tier == 3) {
    cudaStream_t cs;
    GB_CUDA(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking));
    GB_XPAR(B.set_stream(st, (void *)cs));
    cudaGraph_t g;
    cudaGraphExec_t ge;
    GB_CUDA(cudaStreamBeginCapture(cs, cudaStreamCaptureModeGlobal));
    ex.captured = 1;
    GB_XPAR(B.histogram(&ex, &s));
    GB_CUDA(cudaStreamEndCapture(cs, &g));
    GB_CUDA(cudaGraphInstantiate(&ge, g, 0));
    for (int r = 0; r < 2; r++) {
      GB_CUDA(cudaGraphLaunch(ge, cs));
      GB_CUDA(cudaStreamSynchronize(cs));
    }
    GB_CUDA(cudaGraphExecDestroy(ge));
    GB_CUDA(cudaGraphDestroy(g));
    GB_XPAR(B.set_stream(st, NULL));
    GB_CUDA(cudaStreamDestroy(cs));
  } else {
    GB_XPAR(B.histogram(&ex, &s));
    if (tier == 1) GB_XPAR(B.wait(st));
  }
  std::vector<uint64_t> got(nb + 1);
  GB_CUDA(cudaMemcpy(got.data(), d.counts, (nb + 1) * 8, cudaMemcpyDeviceToHost));
  size_t bad = 0, first = (size_t)-1;
  for (size_t j = 0; j < nb; j++)
    if (got[j] != want[j]) {
      if (!bad) first = j;
      bad++;
    }
  if (got[nb] != 0xA5A5A5A5A5A5A5A5ull) bad++; /* nothing past the counts */
  if (bad) {
    printf("HISTCHECK FAIL %s %s n=%zu bins=%zu range=%d offset=%zu tier=%d: %zu bad, first "
           "at %zu (%llu, want %llu)\n",
           range ? "range" : "even", xpar_dtype_name(t), n, nb, which, offset, tier, bad, first,
           first < nb ? (unsigned long long)got[first] : 0ull,
           first < nb ? (unsigned long long)want[first] : 0ull);
    return 1;
  }
  return 0;
}

int check_dispatch(xpar__cuda_state *st, CheckBufs &d, xpar_dtype t, bool range, size_t n,
                   size_t nb, int which, size_t offset, int tier, std::mt19937_64 &rng) {
  switch (t) {
    case XPAR_INT32: return check_one<int32_t>(st, d, range, n, nb, which, offset, tier, rng);
    case XPAR_UINT32: return check_one<uint32_t>(st, d, range, n, nb, which, offset, tier, rng);
    case XPAR_FLOAT: return check_one<float>(st, d, range, n, nb, which, offset, tier, rng);
    case XPAR_INT64: return check_one<int64_t>(st, d, range, n, nb, which, offset, tier, rng);
    case XPAR_UINT64: return check_one<uint64_t>(st, d, range, n, nb, which, offset, tier, rng);
    default: return check_one<double>(st, d, range, n, nb, which, offset, tier, rng);
  }
}

int hist_check(xpar__cuda_state *st, unsigned long long seed, int quick) {
  std::mt19937_64 rng(seed);
  const size_t big = 3000017; /* a prime */
  CheckBufs d;
  d.cap = (big + 16) * 8;
  d.count_cap = (100000 + 1) * 8;
  GB_CUDA(cudaMalloc(&d.in, d.cap));
  GB_CUDA(cudaMalloc(&d.counts, d.count_cap));
  const size_t sizes[] = {0, 1, 2, 31, 257, 4099, 65537, 1048573, big};
  const size_t bins[] = {1, 2, 7, 32, 256, 4096, 12288, 12289, 100000};
  const xpar_dtype ts[] = {XPAR_INT32, XPAR_UINT32, XPAR_FLOAT, XPAR_INT64, XPAR_UINT64,
                           XPAR_DOUBLE};
  int fails = 0, runs = 0;
  const double t0 = now_us();
  for (xpar_dtype t : ts)
    for (int range = 0; range < 2; range++)
      for (size_t n : sizes)
        for (size_t nb : bins) {
          if (quick && (n > 70000 || nb > 4096)) continue;
          if (n > 65537 && nb >= 12288 && nb != 100000) continue;
          const int which = (int)(rng() % 3);
          const size_t offset = n <= 65537 && rng() % 2 ? 1 : 0;
          fails += check_dispatch(st, d, t, range != 0, n, nb, which, offset, 0, rng);
          runs++;
        }
  /* the other tiers, fewer sizes */
  const size_t tier_sizes[] = {0, 1, 1000, 9001, 70001};
  for (int tier = 1; tier <= 3; tier++)
    for (xpar_dtype t : ts)
      for (int range = 0; range < 2; range++)
        for (size_t n : tier_sizes)
          for (size_t nb : {(size_t)1, (size_t)32, (size_t)4096, (size_t)20000}) {
            if (tier == 3 && range) continue; /* refuses the capture */
            if ((tier == 2 || quick) && n > 9001) continue; /* one thread */
            fails += check_dispatch(st, d, t, range != 0, n, nb, (int)(rng() % 3), 0, tier, rng);
            runs++;
          }
  GB_CUDA(cudaFree(d.in));
  GB_CUDA(cudaFree(d.counts));
  printf("HISTCHECK %d calls, %d failed, seed %llu, %.1f s\n", runs, fails, seed,
         (now_us() - t0) * 1e-6);
  return fails != 0;
}

/* ---- timings ---------------------------------------------------------------------- */

/* Samples over [0, 1) (int32: [0, 2^24)): uniform, or skewed -- 7 of 8 in the first bin
 * of the coarsest histogram timed (32 bins), the rest uniform. */
template <class T> __global__ void fill_samples(T *p, size_t n, int skewed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    uint32_t z = (uint32_t)i * 0x9e3779b9u ^ 0x5bd1e995u;
    z ^= z >> 16;
    z *= 0x85ebca6bu;
    z ^= z >> 13;
    uint32_t u = z >> 8; /* 24 bits */
    if (skewed && (z & 7) != 0) u &= (1u << 19) - 1; /* [0, 2^24 / 32) */
    if constexpr (std::is_floating_point<T>::value) p[i] = (T)u * (T)(1.0 / 16777216.0);
    else p[i] = (T)u;
  }
}

__global__ void count_diff(const unsigned long long *a, const unsigned long long *b, size_t nb,
                           unsigned long long *bad) {
  for (size_t j = blockIdx.x * (size_t)blockDim.x + threadIdx.x; j < nb;
       j += (size_t)gridDim.x * blockDim.x)
    if (a[j] != b[j]) atomicAdd(bad, 1ull);
}

struct Ctx {
  xpar__cuda_state *st;
  xpar__exec ex;
  int sms;
  double copy_gbs;
  unsigned long long *bad;
};

template <class T>
void hist_row(Ctx &c, const char *tname, bool range, size_t n, int nb, int skewed) {
  const xpar_dtype t = dtype_of<T>();
  T *in;
  unsigned long long *cnt_x, *cnt_c;
  int *cnt_c32;
  T *levels;
  GB_CUDA(cudaMalloc(&in, n * sizeof(T)));
  GB_CUDA(cudaMalloc(&cnt_x, (size_t)nb * 8));
  GB_CUDA(cudaMalloc(&cnt_c, (size_t)nb * 8));
  GB_CUDA(cudaMalloc(&cnt_c32, (size_t)nb * 4));
  GB_CUDA(cudaMalloc(&levels, ((size_t)nb + 1) * sizeof(T)));
  fill_samples<T><<<4 * c.sms, 256>>>(in, n, skewed);
  GB_CUDA(cudaGetLastError());
  const T lo = 0, hi = std::is_floating_point<T>::value ? (T)1 : (T)(1 << 24);
  std::vector<T> hl(nb + 1);
  for (int i = 0; i <= nb; i++) /* exact: nb divides 2^24 */
    hl[i] = std::is_floating_point<T>::value ? (T)((double)i / nb) : (T)((int64_t)i * (1 << 24) / nb);
  GB_CUDA(cudaMemcpy(levels, hl.data(), hl.size() * sizeof(T), cudaMemcpyHostToDevice));
  void *temp = NULL, *temp32 = NULL;
  size_t tb = 0, tb32 = 0;
  const int64_t nn = (int64_t)n;
  auto cub_call = [&](bool wide) {
    if (range) {
      if (wide) GB_CUDA(cub::DeviceHistogram::HistogramRange(temp, tb, in, cnt_c, nb + 1, levels, nn));
      else GB_CUDA(cub::DeviceHistogram::HistogramRange(temp32, tb32, in, cnt_c32, nb + 1, levels, nn));
    } else {
      if (wide) GB_CUDA(cub::DeviceHistogram::HistogramEven(temp, tb, in, cnt_c, nb + 1, lo, hi, nn));
      else GB_CUDA(cub::DeviceHistogram::HistogramEven(temp32, tb32, in, cnt_c32, nb + 1, lo, hi, nn));
    }
  };
  cub_call(true); /* sizes the temporary storage */
  cub_call(false);
  GB_CUDA(cudaMalloc(&temp, tb ? tb : 1));
  GB_CUDA(cudaMalloc(&temp32, tb32 ? tb32 : 1));
  xpar__hist_even even;
  xpar__hist_even_prepare(t, &lo, &hi, (size_t)nb, &even);
  xpar__histogram_spec s;
  memset(&s, 0, sizeof s);
  s.dtype = t;
  s.samples = in;
  s.n = n;
  s.num_bins = (size_t)nb;
  s.boundaries = range ? hl.data() : NULL; /* host boundaries: copied in stream order */
  s.even = &even;
  s.counts = reinterpret_cast<uint64_t *>(cnt_x);
  auto xpar_call = [&] { GB_XPAR(B.histogram(&c.ex, &s)); };
  cudaEvent_t a, b;
  GB_CUDA(cudaEventCreate(&a));
  GB_CUDA(cudaEventCreate(&b));
  const int reps = n >= ((size_t)1 << 28) ? 7 : n >= ((size_t)1 << 24) ? 11 : 31;
  for (int i = 0; i < 2; i++) cub_call(true), cub_call(false), xpar_call();
  std::vector<double> tc, tc32, tx;
  auto timed = [&](auto &&call, std::vector<double> &tv) {
    GB_CUDA(cudaEventRecord(a, 0));
    call();
    GB_CUDA(cudaEventRecord(b, 0));
    GB_CUDA(cudaEventSynchronize(b));
    float ms = 0;
    GB_CUDA(cudaEventElapsedTime(&ms, a, b));
    tv.push_back(ms);
  };
  for (int i = 0; i < reps; i++) {
    timed([&] { cub_call(true); }, tc);
    timed([&] { cub_call(false); }, tc32);
    timed(xpar_call, tx);
  }
  GB_CUDA(cudaDeviceSynchronize());
  std::sort(tc.begin(), tc.end());
  std::sort(tc32.begin(), tc32.end());
  std::sort(tx.begin(), tx.end());
  const double mc = tc[tc.size() / 2], mc32 = tc32[tc32.size() / 2], mx = tx[tx.size() / 2];
  unsigned long long bad = 0;
  GB_CUDA(cudaMemset(c.bad, 0, 8));
  count_diff<<<4 * c.sms, 256>>>(cnt_x, cnt_c, (size_t)nb, c.bad);
  GB_CUDA(cudaMemcpy(&bad, c.bad, 8, cudaMemcpyDeviceToHost));
  const double bytes = (double)n * sizeof(T) + (double)nb * 8;
  const double bound_ms = bytes / (c.copy_gbs * 1e9) * 1e3;
  printf("HISTROW %-5s %-6s %-7s n=2^%-2d bins=%-4d xpar %8.3f ms %7.1f GB/s %5.1f%% of bw bound | "
         "CUB u64 %8.3f ms ratio %.3f | CUB int %8.3f ms ratio %.3f | %s\n",
         range ? "range" : "even", tname, skewed ? "skewed" : "uniform", (int)log2((double)n), nb,
         mx, bytes / (mx * 1e6), 100.0 * bound_ms / mx, mc, mc / mx, mc32, mc32 / mx,
         bad ? "DIFFER" : "equal");
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  GB_CUDA(cudaFree(temp));
  GB_CUDA(cudaFree(temp32));
  GB_CUDA(cudaFree(in));
  GB_CUDA(cudaFree(cnt_x));
  GB_CUDA(cudaFree(cnt_c));
  GB_CUDA(cudaFree(cnt_c32));
  GB_CUDA(cudaFree(levels));
}

} // namespace

int gpu_hist_run(int quick, unsigned long long seed, int what) {
  cudaDeviceProp prop;
  GB_CUDA(cudaGetDeviceProperties(&prop, 0));
  printf("device: %s, %d SMs\n", prop.name, prop.multiProcessorCount);
  int rc = 0;
  if (what & 1) {
    xpar__cuda_state *st;
    GB_XPAR(B.state_create(0, NULL, &st));
    rc |= hist_check(st, seed, quick);
    B.state_destroy(st);
  }
  if (!(what & 2)) return rc;
  Ctx c;
  c.ex = queued_exec_on_default_stream(&c.st);
  c.sms = prop.multiProcessorCount;
  GB_CUDA(cudaMalloc(&c.bad, 8));
  {
    const size_t bytes = (size_t)1 << 30;
    void *x, *y;
    GB_CUDA(cudaMalloc(&x, bytes));
    GB_CUDA(cudaMalloc(&y, bytes));
    GB_CUDA(cudaMemset(x, 1, bytes));
    const double ms = median_ms([&] { GB_CUDA(cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice)); }, 3, 11);
    c.copy_gbs = 2.0 * bytes / (ms * 1e-3) / 1e9;
    printf("d2d copy of 1 GiB: %.3f ms, %.0f GB/s (read + write)\n", ms, c.copy_gbs);
    GB_CUDA(cudaFree(x));
    GB_CUDA(cudaFree(y));
  }
  const int lg4[] = {20, 24, 28, 30};
  const int lg8[] = {20, 24, 28, 29};
  const int nq = quick ? 2 : 4;
  for (int range = 0; range < 2; range++)
    for (int skewed = 0; skewed < 2; skewed++)
      for (int nb : {32, 256, 4096}) {
        for (int i = 0; i < nq; i++)
          hist_row<int32_t>(c, "int32", range != 0, (size_t)1 << lg4[i], nb, skewed);
        for (int i = 0; i < nq; i++)
          hist_row<double>(c, "double", range != 0, (size_t)1 << lg8[i], nb, skewed);
      }
  GB_CUDA(cudaFree(c.bad));
  B.state_destroy(c.st);
  return rc;
}
