/*
 * `xpar-gpu-bench --sort`: the CUDA backend's stable sort (backend_cuda/device_sort.cu)
 *  1. checked: every key dtype x order x (keys, keys in place, pairs with 4- and 8-byte
 *     values, pairs in place, argsort int32 / int64 with and without keys) x n (0, 1, 2,
 *     primes, 2^k +- 1, the tiles +- 1 of every path) against a CPU stable sort by
 *     base/sort_key.h's radix key, bit for bit, on keys with many duplicates, -0.0 / +0.0,
 *     NaNs of either sign and several payloads, infinities; the serial tier, queued
 *     (nowait) calls and a call captured into a CUDA graph too;
 *  2. timed beside CUB's DeviceRadixSort (SortKeys / SortPairs; argsort as SortPairs with
 *     an index sequence), ascending, n = 2^16..2^30, CUDA events, CUB and xpar
 *     interleaved, median; each row's output compared with CUB's; keys/s, ratio (CUB time
 *     / xpar time, > 1: xpar faster), bytes per key per pass at the measured d2d copy
 *     bandwidth and the share of the bandwidth bound;
 *  3. a synchronous sort of 2^10 int32 (host wall clock, median of 2001) beside the
 *     launch-and-flag floor (a one-thread kernel stamping a pinned word the host spins
 *     on) and CUB's SortKeys + stream sync.
 * Lines: "SORTCHECK ...", "SORTROW ...", "SORTSMALL ...".
 */
#include <string.h>

#include <algorithm>
#include <chrono>
#include <numeric>
#include <random>
#include <vector>

#include <cub/device/device_radix_sort.cuh>

#include "backend_cuda/sort_kernel.cuh"
#include "base/sort_key.h"
#include "gpu_bench.h"
#include "backend_cuda/cuda_state.cuh"
#include "gpu_timing_util.cuh"

namespace {

const xpar__backend &B = xpar__cuda_backend;

double now_us() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int key_class_of(xpar_dtype t) {
  if (t == XPAR_FLOAT || t == XPAR_DOUBLE) return XPAR__SORT_KEY_FLOAT;
  if (t == XPAR_UINT32 || t == XPAR_UINT64) return XPAR__SORT_KEY_UNSIGNED;
  return XPAR__SORT_KEY_SIGNED;
}

size_t dsize(xpar_dtype t) { return xpar_dtype_size(t); }

uint64_t radix_of(const void *p, size_t i, xpar_dtype t, int desc) {
  if (dsize(t) == 4) {
    uint32_t b;
    memcpy(&b, (const char *)p + 4 * i, 4);
    return xpar__sort_radix32(b, key_class_of(t), desc);
  }
  uint64_t b;
  memcpy(&b, (const char *)p + 8 * i, 8);
  return xpar__sort_radix64(b, key_class_of(t), desc);
}

/* Keys with duplicates and the float corner cases. */
void make_keys(std::vector<unsigned char> &k, xpar_dtype t, size_t n, std::mt19937_64 &rng) {
  const size_t ks = dsize(t);
  k.resize(n * ks + 8);
  const int spread = (int)(rng() % 3);
  for (size_t i = 0; i < n; i++) {
    uint64_t r = rng();
    if (spread == 0) r %= 16;            /* many duplicates */
    else if (spread == 1) r = (r % 1000) * 0x9e3779b97f4a7c15ull; /* duplicates, all bits */
    if (t == XPAR_FLOAT) {
      float f;
      const int c = (int)(rng() % 16);
      if (c == 0) f = 0.0f;
      else if (c == 1) f = -0.0f;
      else if (c == 2) { uint32_t b = 0x7fc00000u | (uint32_t)(rng() % 4); memcpy(&f, &b, 4); }
      else if (c == 3) { uint32_t b = 0xff800001u + (uint32_t)(rng() % 4); memcpy(&f, &b, 4); }
      else if (c == 4) f = (rng() & 1) ? INFINITY : -INFINITY;
      else f = (float)((int64_t)(r % 2001) - 1000) * 0.25f;
      memcpy(&k[i * 4], &f, 4);
    } else if (t == XPAR_DOUBLE) {
      double f;
      const int c = (int)(rng() % 16);
      if (c == 0) f = 0.0;
      else if (c == 1) f = -0.0;
      else if (c == 2) { uint64_t b = 0x7ff8000000000000ull | (rng() % 4); memcpy(&f, &b, 8); }
      else if (c == 3) { uint64_t b = 0xfff0000000000001ull + (rng() % 4); memcpy(&f, &b, 8); }
      else if (c == 4) f = (rng() & 1) ? INFINITY : -INFINITY;
      else f = (double)((int64_t)(r % 2001) - 1000) * 0.25 + (spread == 2 ? (double)(r >> 40) : 0);
      memcpy(&k[i * 8], &f, 8);
    } else {
      memcpy(&k[i * ks], &r, ks);
    }
  }
}

enum Mode { KEYS, KEYS_INPLACE, PAIRS4, PAIRS8, PAIRS_INPLACE, ARGSORT32, ARGSORT64, ARGSORT_KEYS };
const char *mode_name[] = {"keys", "keys-inplace", "pairs-v4", "pairs-v8", "pairs-inplace",
                           "argsort32", "argsort64", "argsort+keys"};

struct CheckBufs {
  void *kin, *kout, *vin, *vout;
  size_t cap;
};

/* One checked sort; returns 1 on a mismatch (printed). tier: 0 sync, 1 nowait + wait,
 * 2 serial, 3 captured into a graph and replayed. */
int check_one(xpar__cuda_state *st, CheckBufs &d, xpar_dtype kt, int desc, Mode m, size_t n,
              int tier, std::mt19937_64 &rng) {
  const size_t ks = dsize(kt);
  std::vector<unsigned char> keys;
  make_keys(keys, kt, n, rng);
  const bool argsort = m == ARGSORT32 || m == ARGSORT64 || m == ARGSORT_KEYS;
  const bool pairs = m == PAIRS4 || m == PAIRS8 || m == PAIRS_INPLACE || argsort;
  const xpar_dtype vt = m == PAIRS4 || m == ARGSORT32 || m == ARGSORT_KEYS ? XPAR_INT32
                        : m == PAIRS_INPLACE ? XPAR_FLOAT : XPAR_INT64;
  const size_t vs = pairs ? dsize(vt) : 0;
  std::vector<unsigned char> vals(n * 8 + 8);
  for (size_t i = 0; i < n * vs; i++) vals[i] = (unsigned char)rng();
  /* reference: a stable sort of the positions by radix key */
  std::vector<size_t> perm(n);
  std::iota(perm.begin(), perm.end(), 0);
  std::vector<uint64_t> rk(n);
  for (size_t i = 0; i < n; i++) rk[i] = radix_of(keys.data(), i, kt, desc);
  std::stable_sort(perm.begin(), perm.end(), [&](size_t a, size_t b) { return rk[a] < rk[b]; });

  const bool inplace = m == KEYS_INPLACE || m == PAIRS_INPLACE;
  GB_CUDA(cudaMemcpy(d.kin, keys.data(), n * ks, cudaMemcpyHostToDevice));
  if (pairs && !argsort) GB_CUDA(cudaMemcpy(d.vin, vals.data(), n * vs, cudaMemcpyHostToDevice));
  GB_CUDA(cudaMemset(d.kout, 0xA5, d.cap));
  GB_CUDA(cudaMemset(d.vout, 0xA5, d.cap));
  xpar__sort_spec s;
  memset(&s, 0, sizeof s);
  s.key_dtype = kt;
  s.value_dtype = vt;
  s.descending = desc;
  s.values_are_indices = argsort;
  s.keys_in = d.kin;
  s.keys_out = inplace ? d.kin : (m == ARGSORT32 || m == ARGSORT64) ? NULL : d.kout;
  s.values_in = pairs && !argsort ? d.vin : NULL;
  s.values_out = pairs ? (inplace ? d.vin : d.vout) : NULL;
  s.n = n;
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
    GB_XPAR(B.sort(&ex, &s));
    GB_CUDA(cudaStreamEndCapture(cs, &g));
    GB_CUDA(cudaGraphInstantiate(&ge, g, 0));
    for (int r = 0; r < 2; r++) { /* replays: the second finds the first's words */
      if (inplace && r == 1) break;
      GB_CUDA(cudaGraphLaunch(ge, cs));
      GB_CUDA(cudaStreamSynchronize(cs));
    }
    GB_CUDA(cudaGraphExecDestroy(ge));
    GB_CUDA(cudaGraphDestroy(g));
    GB_XPAR(B.set_stream(st, NULL));
    GB_CUDA(cudaStreamDestroy(cs));
  } else {
    GB_XPAR(B.sort(&ex, &s));
    if (tier == 1) GB_XPAR(B.wait(st));
  }
  std::vector<unsigned char> ko(n * ks + 8), vo(n * 8 + 8), kin_after(n * ks + 8);
  if (s.keys_out) GB_CUDA(cudaMemcpy(ko.data(), s.keys_out, n * ks, cudaMemcpyDeviceToHost));
  if (pairs) GB_CUDA(cudaMemcpy(vo.data(), s.values_out, n * vs, cudaMemcpyDeviceToHost));
  if (!inplace) GB_CUDA(cudaMemcpy(kin_after.data(), d.kin, n * ks, cudaMemcpyDeviceToHost));
  size_t bad = 0, first = (size_t)-1;
  for (size_t i = 0; i < n; i++) {
    const size_t j = perm[i];
    bool ok = true;
    if (s.keys_out) ok &= memcmp(&ko[i * ks], &keys[j * ks], ks) == 0;
    if (pairs) {
      if (argsort) {
        const uint64_t idx = vs == 4 ? (uint64_t)*(uint32_t *)&vo[i * 4] : *(uint64_t *)&vo[i * 8];
        ok &= idx == j;
      } else {
        ok &= memcmp(&vo[i * vs], &vals[j * vs], vs) == 0;
      }
    }
    if (!ok) {
      bad++;
      if (first == (size_t)-1) first = i;
    }
  }
  if (!inplace && n && memcmp(kin_after.data(), keys.data(), n * ks) != 0) bad++, first = 0;
  /* nothing written past n */
  if (s.keys_out && !inplace) {
    unsigned char tail[8];
    GB_CUDA(cudaMemcpy(tail, (char *)s.keys_out + n * ks, 4, cudaMemcpyDeviceToHost));
    if (tail[0] != 0xA5 || tail[3] != 0xA5) bad++;
  }
  if (bad) {
    printf("SORTCHECK FAIL %s %s %s n=%zu tier=%d: %zu bad, first at %zu\n", xpar_dtype_name(kt),
           desc ? "desc" : "asc", mode_name[m], n, tier, bad, first);
    return 1;
  }
  return 0;
}

/* quick (compute-sanitizer runs): three key dtypes, sizes up to a few tiles. */
int sort_check(xpar__cuda_state *st, unsigned long long seed, int quick) {
  std::mt19937_64 rng(seed);
  const size_t big = 3000017; /* a prime */
  CheckBufs d;
  d.cap = big * 8 + 64;
  GB_CUDA(cudaMalloc(&d.kin, d.cap));
  GB_CUDA(cudaMalloc(&d.kout, d.cap));
  GB_CUDA(cudaMalloc(&d.vin, d.cap));
  GB_CUDA(cudaMalloc(&d.vout, d.cap));
  const size_t sizes[] = {0, 1, 2, 3, 31, 32, 33, 97, 255, 256, 257, 1023, 1024, 1025, 2047,
                          4095, 4096, 4097, 5759, 5760, 5761, 7679, 7680, 7681, 8447, 8448,
                          8449, 16999, 65535, 65536, 65537, 100003, 1048575, 1048577, big};
  const xpar_dtype kts[] = {XPAR_INT32, XPAR_UINT32, XPAR_FLOAT, XPAR_INT64, XPAR_UINT64,
                            XPAR_DOUBLE};
  int fails = 0, runs = 0;
  const double t0 = now_us();
  const size_t quick_max = 17000; /* two to three tiles of every tuning */
  for (xpar_dtype kt : kts)
    for (int desc = 0; desc < 2; desc++)
      for (int m = KEYS; m <= ARGSORT_KEYS; m++)
        for (size_t n : sizes) {
          if (quick && (n > quick_max || kt == XPAR_UINT32 || kt == XPAR_UINT64)) continue;
          if (n > 100003 && m != KEYS && m != PAIRS8 && m != ARGSORT32) continue;
          fails += check_one(st, d, kt, desc, (Mode)m, n, 0, rng);
          runs++;
        }
  /* the other tiers, fewer sizes */
  const size_t tier_sizes[] = {0, 1, 2, 1000, 1025, 5000, 9001, 70001};
  for (int tier = 1; tier <= 3; tier++)
    for (xpar_dtype kt : kts)
      for (int m = KEYS; m <= ARGSORT_KEYS; m++)
        for (size_t n : tier_sizes) {
          if ((tier == 2 || quick) && n > 9001) continue; /* one thread */
          fails += check_one(st, d, kt, (int)(n & 1), (Mode)m, n, tier, rng);
          runs++;
        }
  /* release_cache, then a sort regrows its scratch */
  GB_XPAR(B.release_cache(st));
  fails += check_one(st, d, XPAR_INT32, 0, PAIRS4, 100003, 0, rng);
  runs++;
  GB_CUDA(cudaFree(d.kin));
  GB_CUDA(cudaFree(d.kout));
  GB_CUDA(cudaFree(d.vin));
  GB_CUDA(cudaFree(d.vout));
  printf("SORTCHECK %d sorts, %d failed, seed %llu, %.1f s\n", runs, fails, seed,
         (now_us() - t0) * 1e-6);
  return fails != 0;
}

/* ---- timings ---------------------------------------------------------------------- */

__global__ void iota_kernel(uint32_t *p, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    p[i] = (uint32_t)i;
}
__global__ void stamp_one(unsigned long long *w, unsigned long long v) {
  asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(w), "l"(v) : "memory");
}

struct Ctx {
  xpar__cuda_state *st;
  xpar__exec ex; /* queued, on the legacy stream (as CUB and the events) */
  double copy_gbs;
  CompareResult *cmp;
  int sms;
};

template <class K, class V>
void sort_row(Ctx &c, xpar_dtype kt, xpar_dtype vt, const char *name, int vmode, size_t n) {
  /* vmode 0: keys, 1: pairs, 2: argsort (V = index) */
  const size_t ks = sizeof(K), vs = vmode ? sizeof(V) : 0;
  K *kin, *kout_x, *kout_c;
  V *vin = NULL, *vout_x = NULL, *vout_c = NULL;
  GB_CUDA(cudaMalloc(&kin, n * ks));
  GB_CUDA(cudaMalloc(&kout_x, n * ks));
  GB_CUDA(cudaMalloc(&kout_c, n * ks));
  if (vmode) {
    GB_CUDA(cudaMalloc(&vin, n * vs));
    GB_CUDA(cudaMalloc(&vout_x, n * vs));
    GB_CUDA(cudaMalloc(&vout_c, n * vs));
  }
  if (kt == XPAR_FLOAT)
    fill_unit_floats<<<4 * c.sms, 256>>>((float *)kin, n);
  else if (kt == XPAR_DOUBLE)
    fill_unit_doubles<<<4 * c.sms, 256>>>((double *)kin, n);
  else
    fill_random<<<4 * c.sms, 256>>>((uint32_t *)kin, n * ks / 4, 1234u);
  if (vmode == 1) fill_random<<<4 * c.sms, 256>>>((uint32_t *)vin, n * vs / 4, 99u);
  if (vmode == 2) {
    if (vs == 4) iota_kernel<<<4 * c.sms, 256>>>((uint32_t *)vin, n);
    else GB_CUDA(cudaErrorInvalidValue); /* argsort rows use int32 indices */
  }
  GB_CUDA(cudaGetLastError());
  void *temp = NULL;
  size_t tb = 0;
  if (vmode)
    GB_CUDA(cub::DeviceRadixSort::SortPairs(temp, tb, kin, kout_c, vin, vout_c, (int64_t)n));
  else
    GB_CUDA(cub::DeviceRadixSort::SortKeys(temp, tb, kin, kout_c, (int64_t)n));
  GB_CUDA(cudaMalloc(&temp, tb));
  auto cub_call = [&] {
    if (vmode)
      GB_CUDA(cub::DeviceRadixSort::SortPairs(temp, tb, kin, kout_c, vin, vout_c, (int64_t)n));
    else
      GB_CUDA(cub::DeviceRadixSort::SortKeys(temp, tb, kin, kout_c, (int64_t)n));
  };
  xpar__sort_spec s;
  memset(&s, 0, sizeof s);
  s.key_dtype = kt;
  s.value_dtype = vt;
  s.keys_in = kin;
  s.keys_out = vmode == 2 ? NULL : kout_x;
  s.values_in = vmode == 1 ? vin : NULL;
  s.values_out = vmode ? vout_x : NULL;
  s.values_are_indices = vmode == 2;
  s.n = n;
  auto xpar_call = [&] { GB_XPAR(B.sort(&c.ex, &s)); };
  cudaEvent_t a, b;
  GB_CUDA(cudaEventCreate(&a));
  GB_CUDA(cudaEventCreate(&b));
  const int reps = n >= ((size_t)1 << 28) ? 5 : n >= ((size_t)1 << 24) ? 9 : 21;
  for (int i = 0; i < 2; i++) cub_call(), xpar_call();
  std::vector<double> tc, tx;
  auto timed = [&](auto &&call, std::vector<double> &t) {
    GB_CUDA(cudaEventRecord(a, 0));
    call();
    GB_CUDA(cudaEventRecord(b, 0));
    GB_CUDA(cudaEventSynchronize(b));
    float ms = 0;
    GB_CUDA(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms);
  };
  for (int i = 0; i < reps; i++) timed(cub_call, tc), timed(xpar_call, tx);
  GB_CUDA(cudaDeviceSynchronize());
  const double mc = median_of(tc), mx = median_of(tx);
  /* compare with CUB (ascending, no NaN or -0.0 in these inputs: the same order) */
  CompareResult r = compare_with(kout_x, kout_c, vmode == 2 ? 0 : n * ks / 4, 0, c.cmp, c.sms);
  unsigned long long bad = r.bad;
  if (vmode) bad += compare_with(vout_x, vout_c, n * vs / 4, 0, c.cmp, c.sms).bad;
  const int passes = (int)ks;
  /* the fewest bytes: the histogram's read, then each pass reads and writes keys and
   * values (argsort: no value read in pass 0, no key write in the last) */
  double bytes = (double)n * ks + (double)passes * n * 2.0 * (ks + vs);
  if (vmode == 2) bytes -= (double)n * (vs + ks);
  const double bound_ms = bytes / (c.copy_gbs * 1e9) * 1e3;
  const double bpkp = c.copy_gbs * 1e9 * mx * 1e-3 / ((double)n * passes);
  printf("SORTROW %-14s n=2^%-2d  xpar %9.3f ms %7.2f Gkeys/s | CUB %9.3f ms %7.2f Gkeys/s | "
         "ratio %.3f | %5.1f B/key/pass at copy bw (min %4.1f) | %5.1f%% of bw bound | %s\n",
         name, (int)log2((double)n), mx, n / (mx * 1e6), mc, n / (mc * 1e6), mc / mx, bpkp,
         2.0 * (ks + vs), 100.0 * bound_ms / mx, bad ? "DIFFER" : "equal");
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  GB_CUDA(cudaFree(temp));
  GB_CUDA(cudaFree(kin));
  GB_CUDA(cudaFree(kout_x));
  GB_CUDA(cudaFree(kout_c));
  if (vmode) {
    GB_CUDA(cudaFree(vin));
    GB_CUDA(cudaFree(vout_x));
    GB_CUDA(cudaFree(vout_c));
  }
  GB_XPAR(B.release_cache(c.st)); /* the next row's memory */
}

void small_sort(Ctx &c) {
  const size_t n = 1024;
  int32_t *in, *out, *out_c;
  GB_CUDA(cudaMalloc(&in, n * 4));
  GB_CUDA(cudaMalloc(&out, n * 4));
  GB_CUDA(cudaMalloc(&out_c, n * 4));
  fill_random<<<8, 256>>>((uint32_t *)in, n, 777u);
  GB_CUDA(cudaDeviceSynchronize());
  cudaStream_t s;
  GB_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  xpar__cuda_state *st;
  GB_XPAR(B.state_create(0, (void *)s, &st));
  xpar__exec ex;
  memset(&ex, 0, sizeof ex);
  ex.cuda = st;
  xpar__sort_spec sp;
  memset(&sp, 0, sizeof sp);
  sp.key_dtype = XPAR_INT32;
  sp.keys_in = in;
  sp.keys_out = out;
  sp.n = n;
  const int reps = 2001;
  auto wall = [&](auto &&f) {
    for (int i = 0; i < 200; i++) f();
    std::vector<double> t;
    for (int i = 0; i < reps; i++) {
      const double t0 = now_us();
      f();
      t.push_back(now_us() - t0);
    }
    return median_of(t);
  };
  void *temp = NULL;
  size_t tb = 0;
  GB_CUDA(cub::DeviceRadixSort::SortKeys(temp, tb, in, out_c, (int)n, 0, 32, s));
  GB_CUDA(cudaMalloc(&temp, tb));
  unsigned long long *stamp_h, *stamp_d;
  GB_CUDA(cudaHostAlloc((void **)&stamp_h, 64, cudaHostAllocMapped));
  GB_CUDA(cudaHostGetDevicePointer((void **)&stamp_d, stamp_h, 0));
  *stamp_h = 0;
  unsigned long long stamp = 0;
  double xs[2], fl[2], cu[2];
  for (int round = 0; round < 2; round++) { /* twice, interleaved: the spread */
    xs[round] = wall([&] { GB_XPAR(B.sort(&ex, &sp)); });
    fl[round] = wall([&] {
      ++stamp;
      stamp_one<<<1, 32, 0, s>>>(stamp_d, stamp);
      while (__atomic_load_n(stamp_h, __ATOMIC_ACQUIRE) != stamp) {
      }
    });
    cu[round] = wall([&] {
      GB_CUDA(cub::DeviceRadixSort::SortKeys(temp, tb, in, out_c, (int)n, 0, 32, s));
      GB_CUDA(cudaStreamSynchronize(s));
    });
  }
  /* the one-block kernel's shapes (threads x items, digit bits), launched by the runtime
   * and waited for on the done flag as the library does */
  auto variant = [&](auto kernel, int threads, int items, int bits) {
    xpar_cuda::sort::SortParams p;
    memset(&p, 0, sizeof p);
    p.keys_in = in;
    p.keys_out = out;
    p.n = n;
    p.mask = 0x80000000u;
    const double us = wall([&] {
      GB_XPAR(xpar__cuda_done_signal(st, true, &p.done));
      kernel<<<1, threads, 0, s>>>(p);
      GB_XPAR(xpar__cuda_finish(st, p.done, "sort variant"));
    });
    GB_CUDA(cudaStreamSynchronize(s));
    const unsigned long long bad = compare_with(out, out_c, n, 0, c.cmp, c.sms).bad;
    printf("SORTSMALL variant %4d threads x %2d items, %d-bit digits: %.2f us (%.2f x floor) %s\n",
           threads, items, bits, us, us / fl[1], bad ? "DIFFER" : "equal");
  };
  using xpar_cuda::sort::NoValue;
  using xpar_cuda::sort::small_sort_kernel;
  variant(small_sort_kernel<uint32_t, NoValue, 256, 4, 4>, 256, 4, 4);
  variant(small_sort_kernel<uint32_t, NoValue, 256, 4, 5>, 256, 4, 5);
  variant(small_sort_kernel<uint32_t, NoValue, 256, 4, 6>, 256, 4, 6);
  variant(small_sort_kernel<uint32_t, NoValue, 128, 8, 4>, 128, 8, 4);
  variant(small_sort_kernel<uint32_t, NoValue, 128, 8, 6>, 128, 8, 6);
  variant(small_sort_kernel<uint32_t, NoValue, 512, 2, 4>, 512, 2, 4);
  variant(small_sort_kernel<uint32_t, NoValue, 1024, 1, 4>, 1024, 1, 4);
  variant(small_sort_kernel<uint32_t, NoValue, 64, 16, 4>, 64, 16, 4);
  GB_XPAR(B.sort(&ex, &sp));
  GB_CUDA(cudaStreamSynchronize(s));
  const unsigned long long bad = compare_with(out, out_c, n, 0, c.cmp, c.sms).bad;
  printf("SORTSMALL sync sort of 2^10 int32: xpar %.2f / %.2f us; launch+flag floor %.2f / %.2f "
         "us (ratio %.2f / %.2f); CUB SortKeys + stream sync %.2f / %.2f us; %s\n",
         xs[0], xs[1], fl[0], fl[1], xs[0] / fl[0], xs[1] / fl[1], cu[0], cu[1],
         bad ? "DIFFER" : "equal");
  B.state_destroy(st);
  cudaFreeHost(stamp_h);
  GB_CUDA(cudaFree(temp));
  GB_CUDA(cudaFree(in));
  GB_CUDA(cudaFree(out));
  GB_CUDA(cudaFree(out_c));
  GB_CUDA(cudaStreamDestroy(s));
}

} // namespace

int gpu_sort_run(int quick, unsigned long long seed, int what) {
  cudaDeviceProp prop;
  GB_CUDA(cudaGetDeviceProperties(&prop, 0));
  printf("device: %s, %d SMs\n", prop.name, prop.multiProcessorCount);
  int rc = 0;
  if (what & 1) {
    xpar__cuda_state *st;
    GB_XPAR(B.state_create(0, NULL, &st));
    rc |= sort_check(st, seed, quick);
    B.state_destroy(st);
  }
  if (!(what & 2)) return rc;
  Ctx c;
  c.ex = queued_exec_on_default_stream(&c.st);
  c.sms = prop.multiProcessorCount;
  GB_CUDA(cudaMalloc(&c.cmp, sizeof(CompareResult)));
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
  small_sort(c);
  const int lg4[] = {16, 20, 24, 28, 30};
  const int lg8[] = {16, 20, 24, 28, 29};
  const int nq = quick ? 3 : 5;
  for (int i = 0; i < nq; i++) sort_row<int32_t, int32_t>(c, XPAR_INT32, XPAR_INT32, "keys-int32", 0, (size_t)1 << lg4[i]);
  for (int i = 0; i < nq; i++) sort_row<uint32_t, int32_t>(c, XPAR_UINT32, XPAR_INT32, "keys-uint32", 0, (size_t)1 << lg4[i]);
  for (int i = 0; i < nq; i++) sort_row<float, int32_t>(c, XPAR_FLOAT, XPAR_INT32, "keys-float", 0, (size_t)1 << lg4[i]);
  for (int i = 0; i < nq; i++) sort_row<int64_t, int32_t>(c, XPAR_INT64, XPAR_INT32, "keys-int64", 0, (size_t)1 << lg8[i]);
  for (int i = 0; i < nq; i++) sort_row<double, int32_t>(c, XPAR_DOUBLE, XPAR_INT32, "keys-double", 0, (size_t)1 << lg8[i]);
  for (int i = 0; i < nq; i++) sort_row<int32_t, int32_t>(c, XPAR_INT32, XPAR_INT32, "pairs-i32/i32", 1, (size_t)1 << lg4[i]);
  for (int i = 0; i < nq; i++) sort_row<int64_t, int64_t>(c, XPAR_INT64, XPAR_INT64, "pairs-i64/i64", 1, (size_t)1 << lg8[i]);
  for (int i = 0; i < nq; i++) sort_row<float, int32_t>(c, XPAR_FLOAT, XPAR_INT32, "pairs-f32/i32", 1, (size_t)1 << lg4[i]);
  for (int i = 0; i < nq; i++) sort_row<int32_t, int32_t>(c, XPAR_INT32, XPAR_INT32, "argsort-i32", 2, (size_t)1 << lg4[i]);
  B.state_destroy(c.st);
  return rc;
}
