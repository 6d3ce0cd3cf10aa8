/*
 * `xpar-gpu-bench --runs`: the CUDA backend's runs (backend_cuda/device_runs.cu):
 * xpar_run_length_encode and xpar_reduce_by_key
 *  1. checked (--runs-check): run-length encode and reduce by key (SUM, MIN, MAX) x every
 *     key dtype (and value dtype: each key dtype with every value dtype in a sweep of its
 *     own) x n (0, 1, 2, the tile of 2048 elements and its multiples +- 1, primes up to
 *     3e6: past 500 tiles, the look-back's poll delays) x runs of mean length 1, 4, 64
 *     and one run of all n x offsets (aligned, one element off) x tiers (synchronous with
 *     a host count, queued with a device count, synchronous with a device count,
 *     cuda-serial, captured into a CUDA graph and replayed twice) x reproducible mode
 *     (float and double sums; not captured: refused) against a CPU loop written here;
 *     the count, every run's key (its first key's bits) and value, and the memory around
 *     the runs (the 0xA5 fill: nothing before the outputs, nothing at or past the count),
 *     the inputs unchanged; keys with -0.0 / +0.0 and NaNs of either sign and several
 *     payloads (one run: the header's equality), infinities;
 *     values compared: integers and lengths bit for bit; float MIN / MAX by value
 *     (-0.0 == +0.0, the values hold no NaN: the header leaves a NaN's choice open);
 *     float SUM bit for bit where the values are small multiples of 1/4 (every order gives
 *     the same sum) and on cuda-serial (the element order of the loop), otherwise within
 *     2 gamma_len sum |v| of the loop (xpar.h); reproducible SUM bit for bit against the
 *     CPU backend's reproducible reduce of the run as an array of its own (cpu_repro.c:
 *     the header's definition of those bits);
 *  2. timed (--runs-bench) beside CUB's DeviceRunLengthEncode::Encode (lengths as
 *     uint64, xpar's) and DeviceReduce::ReduceByKey (plus), int32 keys with int32 values
 *     and double keys with double values, runs of mean length 1, 4 and 64 (geometric
 *     lengths), n = 2^20, 2^24, 2^28, 2^30 (8-byte: 2^29); CUB with int offsets (its
 *     fastest; n < 2^31); CUDA events, CUB and xpar interleaved, median; each row's
 *     count, keys and values compared with CUB's bit for bit (the double values are
 *     small integers: exact sums); GB/s of the fewest bytes (read n keys, and n values
 *     for reduce by key; write runs x (key + length or value)) and each side's share of
 *     the d2d copy bandwidth measured in the same run.
 * Lines: "RUNSCHECK ...", "RUNSROW ...".
 */
#include <math.h>
#include <string.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <type_traits>
#include <vector>

#include <cuda/std/functional>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_run_length_encode.cuh>

#include "base/repro_spec.h"
#include "base/sort_key.h"
#include "gpu_bench.h"
#include "gpu_timing_util.cuh"

extern "C" {
#include "backend_cpu/cpu_repro.h"
}

namespace {

const xpar__backend &B = xpar__cuda_backend;

/* the look-back kernel's tile (backend_cuda/runs_kernel.cuh: runs_block x runs_items) */
constexpr size_t kTile = 2048;

/* op: RLE or an xpar_reduction */
constexpr int RLE = -1;

double now_us() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

const char *op_label(int op) {
  return op == RLE ? "rle" : op == XPAR_SUM ? "sum" : op == XPAR_MIN ? "min" : "max";
}

/* The runs' equality (base/sort_key.h's radix keys): -0.0 == +0.0, NaN == NaN;
 * integers by their bits. */
template <class T> uint64_t eq_key(T x) {
  if (sizeof(T) == 4) {
    uint32_t b;
    memcpy(&b, &x, 4);
    return std::is_same<T, float>::value ? xpar__sort_radix32(b, XPAR__SORT_KEY_FLOAT, 0) : b;
  }
  uint64_t b;
  memcpy(&b, &x, 8);
  return std::is_same<T, double>::value ? xpar__sort_radix64(b, XPAR__SORT_KEY_FLOAT, 0) : b;
}

template <class T> void set_nan_payload(T &x, uint64_t p) {
  if (sizeof(T) == 4) {
    uint32_t b;
    memcpy(&b, &x, 4);
    b |= (uint32_t)p;
    memcpy(&x, &b, 4);
  } else {
    uint64_t b;
    memcpy(&b, &x, 8);
    b |= p;
    memcpy(&x, &b, 8);
  }
}

/* A key: spread 0 (8 values: runs merge often), 1 (1000 values), 2 (any bits); floats
 * one time in four a special (+-0.0, NaNs of either sign with payloads, +-inf). */
template <class K> K random_key(std::mt19937_64 &rng, int spread) {
  uint64_t r = rng();
  if (spread == 0) r %= 8;
  else if (spread == 1) r %= 1000;
  if (std::is_floating_point<K>::value) {
    const int c = (int)(rng() % 16);
    K k;
    if (c == 0) k = K(0.0);
    else if (c == 1) k = K(-0.0);
    else if (c == 2 || c == 3) {
      k = (K)(c == 2 ? NAN : -NAN);
      set_nan_payload(k, rng() % 4);
    } else if (c == 4) k = (K)((rng() & 1) ? INFINITY : -INFINITY);
    else if (spread == 2) k = (K)(((double)(int64_t)(r >> 11) - 4.5e15) * 0x1p-20);
    else k = (K)(((double)(int64_t)(r % 2001) - 1000.0) * 0.25);
    return k;
  }
  K k;
  if (spread == 2) memcpy(&k, &r, sizeof k);
  else k = (K)((int64_t)r - 500);
  return k;
}

/* n keys in runs of mean length `mean` (geometric; 0: one run of all n). */
template <class K> void make_keys(std::vector<K> &k, size_t n, int mean, std::mt19937_64 &rng) {
  k.resize(n);
  const int spread = mean == 1 ? 2 : (int)(rng() % 3);
  size_t left = 0;
  K cur = K(0);
  for (size_t i = 0; i < n; i++) {
    if (left == 0) {
      cur = random_key<K>(rng, spread);
      if (mean == 0) {
        left = n;
      } else {
        left = 1;
        while (rng() % (uint64_t)mean != 0) left++;
      }
    }
    k[i] = cur;
    left--;
  }
}

/* Value patterns: 0 integers of any bits / floats that are small multiples of 1/4 (float
 * sums exact in every order) with +-0.0 and for MIN / MAX +-inf; 1 floats of any
 * magnitude between 2^-20 and 2^20, either sign (SUM: the bound; reproducible mode: the
 * order matters).  No NaN: a NaN's MIN / MAX is the header's unspecified choice, and a
 * NaN sum's payload is the hardware's. */
template <class V> void make_values(std::vector<V> &v, size_t n, int op, int pattern,
                                    std::mt19937_64 &rng) {
  v.resize(n);
  for (size_t i = 0; i < n; i++) {
    const uint64_t r = rng();
    if (!std::is_floating_point<V>::value) {
      memcpy(&v[i], &r, sizeof(V));
    } else if (pattern == 0) {
      const int c = (int)(r % 32);
      if (c == 0) v[i] = V(0.0);
      else if (c == 1) v[i] = V(-0.0);
      else if (c == 2 && op != XPAR_SUM) v[i] = (V)((r & 64) ? INFINITY : -INFINITY);
      else v[i] = (V)(((double)(int64_t)((r >> 8) % 2001) - 1000.0) * 0.25);
    } else {
      const double m = (double)((r >> 11) & 0xfffff) * 0x1p-20 + 1.0;
      const int e = (int)((r >> 40) % 41) - 20;
      v[i] = (V)((r & 1 ? -m : m) * ldexp(1.0, e));
    }
  }
}

template <class V> V combine(int op, V a, V b) {
  if (op == XPAR_SUM) {
    if constexpr (std::is_floating_point<V>::value) return a + b;
    else {
      using U = typename std::make_unsigned<V>::type;
      return (V)((U)a + (U)b);
    }
  }
  if (op == XPAR_MIN) return b < a ? b : a;
  return b > a ? b : a;
}

struct CheckBufs {
  char *keys, *vals, *kout, *vout;
  uint64_t *dcount;
  size_t cap;
};

/* tier: 0 sync (host count), 1 nowait + device count + wait, 2 sync with a device count,
 * 3 cuda-serial (host count), 4 captured into a graph (device count), replayed twice.
 * op RLE: V is uint64_t (the lengths), vt XPAR_UINT64. */
template <class K, class V>
int check_one(xpar__cuda_state *st, CheckBufs &d, xpar_dtype kt, xpar_dtype vt, int op, int mean,
              size_t n, size_t offset, int tier, bool repro, std::mt19937_64 &rng) {
  const bool rle = op == RLE;
  const bool vfloat = std::is_floating_point<V>::value;
  const int pattern = rle ? 0 : repro ? 1 : (int)(rng() % 2);
  std::vector<K> keys;
  std::vector<V> vals;
  make_keys(keys, n, mean, rng);
  if (!rle) make_values(vals, n, op, pattern, rng);

  /* the reference: the loop in element order */
  std::vector<K> want_k;
  std::vector<V> want_v;
  std::vector<double> abs_sum;
  std::vector<size_t> start;
  for (size_t i = 0; i < n; i++) {
    const V x = rle ? V(1) : vals[i];
    if (i == 0 || eq_key<K>(keys[i]) != eq_key<K>(keys[i - 1])) {
      want_k.push_back(keys[i]);
      want_v.push_back(x);
      abs_sum.push_back(fabs((double)x));
      start.push_back(i);
    } else {
      want_v.back() = combine<V>(rle ? XPAR_SUM : op, want_v.back(), x);
      abs_sum.back() += fabs((double)x);
    }
  }
  const size_t runs = want_k.size();
  start.push_back(n);
  if (repro) { /* each run's reproducible sum, as an array of its own */
    xpar__exec one;
    memset(&one, 0, sizeof one);
    one.serial = 1;
    one.num_threads = 1;
    one.reproducible = 1;
    for (size_t r = 0; r < runs; r++)
      GB_XPAR(xpar__cpu_repro_reduce(&one, XPAR__REPRO_SUM, vt, vals.data() + start[r], NULL,
                                     start[r + 1] - start[r], &want_v[r]));
  }

  K *dkeys = reinterpret_cast<K *>(d.keys) + offset;
  V *dvals = reinterpret_cast<V *>(d.vals) + offset;
  K *dkout = reinterpret_cast<K *>(d.kout) + offset;
  V *dvout = reinterpret_cast<V *>(d.vout) + offset;
  GB_CUDA(cudaMemset(d.kout, 0xA5, d.cap));
  GB_CUDA(cudaMemset(d.vout, 0xA5, d.cap));
  GB_CUDA(cudaMemset(d.dcount, 0xA5, 8));
  if (n) GB_CUDA(cudaMemcpy(dkeys, keys.data(), n * sizeof(K), cudaMemcpyHostToDevice));
  if (n && !rle) GB_CUDA(cudaMemcpy(dvals, vals.data(), n * sizeof(V), cudaMemcpyHostToDevice));

  xpar__runs_spec s;
  memset(&s, 0, sizeof s);
  s.key_dtype = kt;
  s.value_dtype = rle ? XPAR_UINT64 : vt;
  s.op = rle ? XPAR_SUM : (xpar_reduction)op;
  s.lengths = rle;
  s.keys_in = dkeys;
  s.values_in = rle ? NULL : dvals;
  s.keys_out = dkout;
  s.values_out = dvout;
  s.n = n;
  uint64_t host_count = 0xA5A5A5A5ull;
  const bool on_device = tier == 1 || tier == 2 || tier == 4;
  s.count = on_device ? d.dcount : &host_count;
  xpar__exec ex;
  memset(&ex, 0, sizeof ex);
  ex.cuda = st;
  ex.serial = tier == 3;
  ex.nowait = tier == 1 || tier == 4;
  ex.result_on_device = on_device;
  ex.reproducible = repro;
  if (tier == 4) {
    cudaStream_t cs;
    GB_CUDA(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking));
    GB_XPAR(B.set_stream(st, (void *)cs));
    cudaGraph_t g;
    cudaGraphExec_t ge;
    GB_CUDA(cudaStreamBeginCapture(cs, cudaStreamCaptureModeGlobal));
    ex.captured = 1;
    GB_XPAR(B.runs(&ex, &s));
    GB_CUDA(cudaStreamEndCapture(cs, &g));
    GB_CUDA(cudaGraphInstantiate(&ge, g, 0));
    for (int r = 0; r < 2; r++) { /* the second replay finds the first's status words */
      GB_CUDA(cudaGraphLaunch(ge, cs));
      GB_CUDA(cudaStreamSynchronize(cs));
    }
    GB_CUDA(cudaGraphExecDestroy(ge));
    GB_CUDA(cudaGraphDestroy(g));
    GB_XPAR(B.set_stream(st, NULL));
    GB_CUDA(cudaStreamDestroy(cs));
  } else {
    GB_XPAR(B.runs(&ex, &s));
    if (tier == 1) GB_XPAR(B.wait(st));
  }
  uint64_t got_count = host_count;
  if (on_device) GB_CUDA(cudaMemcpy(&got_count, d.dcount, 8, cudaMemcpyDeviceToHost));

  /* the outputs from their buffers' start to 4 past n: the runs, and 0xA5 elsewhere */
  const size_t span = offset + n + 4;
  std::vector<K> got_k(span);
  std::vector<V> got_v(span);
  GB_CUDA(cudaMemcpy(got_k.data(), d.kout, span * sizeof(K), cudaMemcpyDeviceToHost));
  GB_CUDA(cudaMemcpy(got_v.data(), d.vout, span * sizeof(V), cudaMemcpyDeviceToHost));
  size_t bad = 0, first = (size_t)-1;
  auto fail_at = [&](size_t i) {
    bad++;
    if (first == (size_t)-1) first = i;
  };
  if (got_count != (uint64_t)runs) fail_at(0);
  const double u = sizeof(V) == 4 ? 0x1p-24 : 0x1p-53;
  const bool exact_sum = pattern == 0 || tier == 3 || repro;
  for (size_t j = 0; j < span && got_count == (uint64_t)runs; j++) {
    const bool in_runs = j >= offset && j - offset < runs;
    if (!in_runs) {
      unsigned char fk[sizeof(K)], fv[sizeof(V)];
      memset(fk, 0xA5, sizeof fk);
      memset(fv, 0xA5, sizeof fv);
      if (memcmp(&got_k[j], fk, sizeof(K)) != 0 || memcmp(&got_v[j], fv, sizeof(V)) != 0)
        fail_at(j);
      continue;
    }
    const size_t r = j - offset;
    bool ok = memcmp(&got_k[j], &want_k[r], sizeof(K)) == 0;
    const V g = got_v[j], w = want_v[r];
    if (!vfloat || (op == XPAR_SUM && exact_sum)) {
      ok = ok && memcmp(&g, &w, sizeof(V)) == 0;
    } else if (op != XPAR_SUM) {
      ok = ok && g == w; /* -0.0 == +0.0: the choice between equal values is open */
    } else {
      const double len = (double)(start[r + 1] - start[r]);
      const double gamma = len * u / (1.0 - len * u);
      ok = ok && fabs((double)g - (double)w) <= 2.0 * gamma * abs_sum[r];
    }
    if (!ok) fail_at(j);
  }
  /* the inputs unchanged */
  if (n) {
    std::vector<K> ka(n);
    GB_CUDA(cudaMemcpy(ka.data(), dkeys, n * sizeof(K), cudaMemcpyDeviceToHost));
    if (memcmp(ka.data(), keys.data(), n * sizeof(K)) != 0) fail_at((size_t)-2);
    if (!rle) {
      std::vector<V> va(n);
      GB_CUDA(cudaMemcpy(va.data(), dvals, n * sizeof(V), cudaMemcpyDeviceToHost));
      if (memcmp(va.data(), vals.data(), n * sizeof(V)) != 0) fail_at((size_t)-2);
    }
  }
  if (bad) {
    printf("RUNSCHECK FAIL %s keys %s values %s mean %d n=%zu offset=%zu tier=%d%s pattern=%d: "
           "count %llu (want %zu), %zu bad, first at %zu\n",
           op_label(op), xpar_dtype_name(kt), rle ? "lengths" : xpar_dtype_name(vt), mean, n,
           offset, tier, repro ? " reproducible" : "", pattern, (unsigned long long)got_count,
           runs, bad, first);
    return 1;
  }
  return 0;
}

template <class K>
int check_key(xpar__cuda_state *st, CheckBufs &d, xpar_dtype kt, xpar_dtype vt, int op, int mean,
              size_t n, size_t offset, int tier, bool repro, std::mt19937_64 &rng) {
  if (op == RLE)
    return check_one<K, uint64_t>(st, d, kt, XPAR_UINT64, op, mean, n, offset, tier, repro, rng);
  switch (vt) {
    case XPAR_INT32: return check_one<K, int32_t>(st, d, kt, vt, op, mean, n, offset, tier, repro, rng);
    case XPAR_UINT32: return check_one<K, uint32_t>(st, d, kt, vt, op, mean, n, offset, tier, repro, rng);
    case XPAR_FLOAT: return check_one<K, float>(st, d, kt, vt, op, mean, n, offset, tier, repro, rng);
    case XPAR_INT64: return check_one<K, int64_t>(st, d, kt, vt, op, mean, n, offset, tier, repro, rng);
    case XPAR_UINT64: return check_one<K, uint64_t>(st, d, kt, vt, op, mean, n, offset, tier, repro, rng);
    default: return check_one<K, double>(st, d, kt, vt, op, mean, n, offset, tier, repro, rng);
  }
}

int check_dispatch(xpar__cuda_state *st, CheckBufs &d, xpar_dtype kt, xpar_dtype vt, int op,
                   int mean, size_t n, size_t offset, int tier, bool repro, std::mt19937_64 &rng) {
  switch (kt) {
    case XPAR_INT32: return check_key<int32_t>(st, d, kt, vt, op, mean, n, offset, tier, repro, rng);
    case XPAR_UINT32: return check_key<uint32_t>(st, d, kt, vt, op, mean, n, offset, tier, repro, rng);
    case XPAR_FLOAT: return check_key<float>(st, d, kt, vt, op, mean, n, offset, tier, repro, rng);
    case XPAR_INT64: return check_key<int64_t>(st, d, kt, vt, op, mean, n, offset, tier, repro, rng);
    case XPAR_UINT64: return check_key<uint64_t>(st, d, kt, vt, op, mean, n, offset, tier, repro, rng);
    default: return check_key<double>(st, d, kt, vt, op, mean, n, offset, tier, repro, rng);
  }
}

int runs_check(xpar__cuda_state *st, unsigned long long seed, int quick) {
  std::mt19937_64 rng(seed);
  const size_t big = 3000017; /* a prime; 1465 tiles */
  CheckBufs d;
  d.cap = (big + 16) * 8;
  GB_CUDA(cudaMalloc(&d.keys, d.cap));
  GB_CUDA(cudaMalloc(&d.vals, d.cap));
  GB_CUDA(cudaMalloc(&d.kout, d.cap));
  GB_CUDA(cudaMalloc(&d.vout, d.cap));
  GB_CUDA(cudaMalloc(&d.dcount, 8));
  const size_t sizes[] = {0, 1, 2, 3, 31, 32, 33, 255, 256, 257, kTile - 1, kTile, kTile + 1,
                          2 * kTile - 1, 2 * kTile, 2 * kTile + 1, 3 * kTile - 1,
                          3 * kTile + 1, 8191, 65537, 100003, 1000003, big};
  const xpar_dtype ts[] = {XPAR_INT32, XPAR_UINT32, XPAR_FLOAT, XPAR_INT64, XPAR_UINT64,
                           XPAR_DOUBLE};
  const int ops[] = {RLE, XPAR_SUM, XPAR_MIN, XPAR_MAX};
  const int means[] = {1, 4, 64, 0};
  int fails = 0, calls = 0;
  const double t0 = now_us();
  /* every key dtype x op x size x run length; the value dtype turns with them */
  int turn = 0, cell = 0;
  for (xpar_dtype kt : ts)
    for (int op : ops)
      for (size_t n : sizes) {
        cell++;
        for (int mean : means) {
          turn++;
          if (quick && (n > 20000 || kt == XPAR_UINT32 || kt == XPAR_UINT64)) continue;
          if (quick && mean != means[cell % 4]) continue; /* one run length each */
          if (n == big && mean != means[cell % 4]) continue; /* one run length each */
          if (n == 1000003 && mean == 4) continue;
          const xpar_dtype vt = ts[turn % 6];
          const size_t offset = n <= 100003 && turn % 3 == 0 ? 1 : 0;
          fails += check_dispatch(st, d, kt, vt, op, mean, n, offset, 0, false, rng);
          calls++;
        }
      }
  /* every key dtype with every value dtype, every op */
  for (xpar_dtype kt : ts)
    for (xpar_dtype vt : ts)
      for (int op : {(int)XPAR_SUM, (int)XPAR_MIN, (int)XPAR_MAX})
        for (size_t n : {(size_t)1000, 2 * kTile + 1, (size_t)70001}) {
          if (quick && (n > 1000 || op != (int)(kt + vt) % 3)) continue;
          fails += check_dispatch(st, d, kt, vt, op, means[rng() % 4], n, 0, 0, false, rng);
          calls++;
        }
  /* the other tiers, fewer sizes */
  const size_t tier_sizes[] = {0, 1, 1000, kTile + 1, 9001, 70001};
  for (int tier = 1; tier <= 4; tier++)
    for (xpar_dtype kt : ts)
      for (int op : ops)
        for (size_t n : tier_sizes) {
          if ((tier == 3 || quick) && n > 9001) continue; /* one thread */
          if (quick && (n == 1000 || n == 9001 || kt == XPAR_UINT32 || kt == XPAR_UINT64))
            continue;
          const xpar_dtype vt = ts[rng() % 6];
          fails += check_dispatch(st, d, kt, vt, op, means[rng() % 4], n, 0, tier, false, rng);
          calls++;
        }
  /* reproducible float and double sums: every key dtype, run length, three tiers */
  const size_t repro_sizes[] = {0, 1, kTile + 1, 70001, 1000003};
  for (int tier : {0, 1, 3})
    for (xpar_dtype kt : ts)
      for (xpar_dtype vt : {XPAR_FLOAT, XPAR_DOUBLE})
        for (size_t n : repro_sizes)
          for (int mean : means) {
            if ((tier == 3 || quick) && n > 9001) continue;
            if (tier != 0 && n > 100003) continue;
            if (quick && mean != means[rng() % 4]) continue;
            fails += check_dispatch(st, d, kt, vt, XPAR_SUM, mean, n, 0, tier, true, rng);
            calls++;
          }
  /* release_cache, then a call regrows the status words */
  GB_XPAR(B.release_cache(st));
  fails += check_dispatch(st, d, XPAR_INT32, XPAR_DOUBLE, XPAR_SUM, 4, 100003, 0, 0, false, rng);
  calls++;
  GB_CUDA(cudaFree(d.keys));
  GB_CUDA(cudaFree(d.vals));
  GB_CUDA(cudaFree(d.kout));
  GB_CUDA(cudaFree(d.vout));
  GB_CUDA(cudaFree(d.dcount));
  printf("RUNSCHECK %d calls, %d failed, seed %llu, %.1f s\n", calls, fails, seed,
         (now_us() - t0) * 1e-6);
  return fails != 0;
}

/* ---- timings ---------------------------------------------------------------------- */

__device__ __forceinline__ uint32_t mix32(uint32_t z) {
  z ^= z >> 16;
  z *= 0x85ebca6bu;
  z ^= z >> 13;
  z *= 0xc2b2ae35u;
  z ^= z >> 16;
  return z;
}

/* Element i starts a run with probability 1 / mean (mean 1: every element). */
__device__ __forceinline__ bool is_head(size_t i, unsigned mean, uint32_t salt) {
  return i == 0 || mean <= 1 || mix32((uint32_t)i ^ salt) % mean == 0;
}

/* Keys: runs of geometric length with mean `mean`, each run's key a hash of its head's
 * index (neighbouring runs differ but for a hash collision, which both sides see);
 * values: small integers (double sums exact in any order). */
template <class K, class V>
__global__ void fill_runs(K *keys, V *vals, size_t n, unsigned mean, uint32_t salt) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    size_t h = i;
    while (!is_head(h, mean, salt)) h--;
    const uint32_t kh = mix32((uint32_t)h * 0x9e3779b9u + (uint32_t)(h >> 32) + salt);
    keys[i] = (K)kh;
    if (vals) vals[i] = (V)(mix32((uint32_t)i ^ 0x5bd1e995u) & 1023u);
  }
}

struct Ctx {
  xpar__cuda_state *st;
  xpar__exec ex;
  int sms;
  double copy_gbs;
  CompareResult *cmp;
};

/* One row: run-length encode (rle) or reduce by key (SUM) of n keys K (values V) in runs
 * of mean length `mean`. */
template <class K, class V>
void runs_row(Ctx &c, xpar_dtype kt, xpar_dtype vt, bool rle, unsigned mean, size_t n) {
  using L = uint64_t; /* the lengths */
  const size_t os = rle ? sizeof(L) : sizeof(V);
  K *keys, *kout_x, *kout_c;
  V *vals = NULL;
  void *vout_x, *vout_c;
  uint64_t *cnt_x, *cnt_c;
  GB_CUDA(cudaMalloc(&keys, n * sizeof(K)));
  if (!rle) GB_CUDA(cudaMalloc(&vals, n * sizeof(V)));
  GB_CUDA(cudaMalloc(&kout_x, n * sizeof(K)));
  GB_CUDA(cudaMalloc(&kout_c, n * sizeof(K)));
  GB_CUDA(cudaMalloc(&vout_x, n * os));
  GB_CUDA(cudaMalloc(&vout_c, n * os));
  GB_CUDA(cudaMalloc(&cnt_x, 8));
  GB_CUDA(cudaMalloc(&cnt_c, 8));
  fill_runs<K, V><<<8 * c.sms, 256>>>(keys, vals, n, mean, 0x2545f491u);
  GB_CUDA(cudaGetLastError());
  void *temp = NULL;
  size_t tb = 0;
  const int nn = (int)n;
  auto cub_call = [&] {
    if (rle)
      GB_CUDA(cub::DeviceRunLengthEncode::Encode(temp, tb, keys, kout_c, (L *)vout_c, cnt_c, nn));
    else
      GB_CUDA(cub::DeviceReduce::ReduceByKey(temp, tb, keys, kout_c, vals, (V *)vout_c, cnt_c,
                                             ::cuda::std::plus<>{}, nn));
  };
  cub_call(); /* sizes the temporary storage */
  GB_CUDA(cudaMalloc(&temp, tb));
  xpar__runs_spec s;
  memset(&s, 0, sizeof s);
  s.key_dtype = kt;
  s.value_dtype = rle ? XPAR_UINT64 : vt;
  s.op = XPAR_SUM;
  s.lengths = rle;
  s.keys_in = keys;
  s.values_in = vals;
  s.keys_out = kout_x;
  s.values_out = vout_x;
  s.n = n;
  s.count = cnt_x;
  auto xpar_call = [&] { GB_XPAR(B.runs(&c.ex, &s)); };
  cudaEvent_t a, b;
  GB_CUDA(cudaEventCreate(&a));
  GB_CUDA(cudaEventCreate(&b));
  const int reps = n >= ((size_t)1 << 28) ? 7 : n >= ((size_t)1 << 24) ? 11 : 31;
  for (int i = 0; i < 2; i++) cub_call(), xpar_call();
  std::vector<double> tc, tx;
  auto timed = [&](auto &&call, std::vector<double> &tv) {
    GB_CUDA(cudaEventRecord(a, 0));
    call();
    GB_CUDA(cudaEventRecord(b, 0));
    GB_CUDA(cudaEventSynchronize(b));
    float ms = 0;
    GB_CUDA(cudaEventElapsedTime(&ms, a, b));
    tv.push_back(ms);
  };
  for (int i = 0; i < reps; i++) timed(cub_call, tc), timed(xpar_call, tx);
  GB_CUDA(cudaDeviceSynchronize());
  const double mc = median_of(tc), mx = median_of(tx);
  uint64_t kx = 0, kc = 0;
  GB_CUDA(cudaMemcpy(&kx, cnt_x, 8, cudaMemcpyDeviceToHost));
  GB_CUDA(cudaMemcpy(&kc, cnt_c, 8, cudaMemcpyDeviceToHost));
  unsigned long long bad = 0;
  if (kx == kc && kx <= n) {
    bad += compare_with(kout_x, kout_c, (size_t)kx * sizeof(K) / 4, 0, c.cmp, c.sms).bad;
    bad += compare_with(vout_x, vout_c, (size_t)kx * os / 4, 0, c.cmp, c.sms).bad;
  } else {
    bad = 1;
  }
  const double bytes = (double)n * (double)(sizeof(K) + (rle ? 0 : sizeof(V))) +
                       (double)kx * (double)(sizeof(K) + os);
  const double gx = bytes / (mx * 1e6), gc = bytes / (mc * 1e6);
  printf("RUNSROW %-13s %-6s mean=%-2u n=2^%-2d runs/n=%.3f  xpar %8.3f ms %7.1f GB/s | "
         "CUB %8.3f ms %7.1f GB/s | ratio %.3f | of copy bw: xpar %5.1f%% CUB %5.1f%% | %s\n",
         rle ? "rle" : "reduce_by_key", kt == XPAR_INT32 ? "int32" : "double", mean,
         (int)log2((double)n), (double)kx / (double)n, mx, gx, mc, gc, mc / mx,
         100.0 * gx / c.copy_gbs, 100.0 * gc / c.copy_gbs, bad ? "DIFFER" : "equal");
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  GB_CUDA(cudaFree(temp));
  GB_CUDA(cudaFree(keys));
  if (vals) GB_CUDA(cudaFree(vals));
  GB_CUDA(cudaFree(kout_x));
  GB_CUDA(cudaFree(kout_c));
  GB_CUDA(cudaFree(vout_x));
  GB_CUDA(cudaFree(vout_c));
  GB_CUDA(cudaFree(cnt_x));
  GB_CUDA(cudaFree(cnt_c));
  GB_XPAR(B.release_cache(c.st));
}

} // namespace

int gpu_runs_run(int quick, unsigned long long seed, int what) {
  cudaDeviceProp prop;
  GB_CUDA(cudaGetDeviceProperties(&prop, 0));
  printf("device: %s, %d SMs\n", prop.name, prop.multiProcessorCount);
  int rc = 0;
  if (what & 1) {
    xpar__cuda_state *st;
    GB_XPAR(B.state_create(0, NULL, &st));
    rc |= runs_check(st, seed, quick);
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
  const int lg4[] = {20, 24, 28, 30};
  const int lg8[] = {20, 24, 28, 29};
  const int nq = quick ? 2 : 4;
  for (int rle = 1; rle >= 0; rle--)
    for (unsigned mean : {1u, 4u, 64u}) {
      for (int i = 0; i < nq; i++)
        runs_row<int32_t, int32_t>(c, XPAR_INT32, XPAR_INT32, rle != 0, mean, (size_t)1 << lg4[i]);
      for (int i = 0; i < nq; i++)
        runs_row<double, double>(c, XPAR_DOUBLE, XPAR_DOUBLE, rle != 0, mean, (size_t)1 << lg8[i]);
    }
  GB_CUDA(cudaFree(c.cmp));
  B.state_destroy(c.st);
  return rc;
}
