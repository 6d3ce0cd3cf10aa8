/*
 * `xpar-gpu-bench --seg`: argmin / argmax and the segmented reduce and scan of the CUDA
 * backend (backend_cuda/device_segmented.cu)
 *  1. checked (--seg-check): segmented reduce (sum, min, max), segmented scan (inclusive,
 *     exclusive; sum, min, max), argmin / argmax of whole arrays and per segment, every
 *     dtype, offsets int32 / int64 / fixed segments, segment sizes all 1, all 16, all
 *     1,024, power-law, one half-size segment among tiny ones, random with empty segments
 *     first / in the middle / last, long on average with empty, tiny and huge ones, all empty, n_segments 0 and 1, offsets[0] above 0
 *     with data before and after; modes synchronous, queued (nowait, then wait) and
 *     cuda-serial; in place (scan); against the CPU backend's serial tier (itself checked
 *     by tests/test_segmented.c), bit for bit (floats are small integers: every order of
 *     summation exact; random floats on cuda-serial only, still bit for bit); the output
 *     outside the segments (not written: the 0xA5 fill); bad offsets (decreasing, past
 *     n, negative) refused with nothing written; reproducible mode: the float and double
 *     segmented sums and sum scans (inclusive, exclusive, in place) of random floats on
 *     every distribution, offsets form and mode (cuda-serial included) equal to the CPU
 *     backend's reproducible serial tier bit for bit (each segment's reproducible
 *     xpar_reduce(SUM) / xpar_scan); float and double min / max (reduce, scan, argmin /
 *     argmax) of values that are mostly -0.0 and +0.0, bit for bit: which zero comes out
 *     shows the order of the fold; a float sum run twice gives the same bits.
 *     SEG_CHECK_PARTS=reduce,scan,arg,zeros,repro,bad (any of them; unset: all) runs
 *     only those parts, SEG_CHECK_DTYPES=int32,double (say) the first three for those
 *     dtypes only;
 *  2. timed (--seg-bench) at 2^28 elements, int32 and double, device data, CUDA events,
 *     median, xpar and CUB interleaved: xpar_segmented_reduce (sum) beside CUB's
 *     DeviceSegmentedReduce::Sum for segment sizes all 1, 16, 1,024, 2^20, power-law,
 *     one half-size segment + tiny ones, long-mix (CCCL 3.0.1 in the toolkit has no size-hint
 *     overload: CUB is run without a hint, the hinted column says n/a); the segmented
 *     scan beside xpar's own whole-array scan; argmin per segment beside CUB's
 *     DeviceSegmentedReduce::ArgMin (same distributions); whole-array argmin / argmax
 *     beside xpar's min and CUB's DeviceReduce::ArgMin / ArgMax.  GB/s of the bytes each must move (input,
 *     offsets, output) and their share of the device-to-device copy bandwidth measured
 *     in the same run (read + write).  SEG_BENCH_LAYOUTS=all-16,all-1024 (say; the names
 *     of the rows) times those layouts only.
 * Lines: "SEGCHECK ...", "SEGROW ...", "SEGSCANROW ...", "SEGARGROW ...", "ARGROW ...",
 * "SEGBOUND ...".
 */
#include <math.h>
#include <string.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <vector>

#include <cub/device/device_reduce.cuh>
#include <cub/device/device_segmented_reduce.cuh>

#include "gpu_bench.h"
#include "gpu_timing_util.cuh"

namespace {

const xpar__backend &B = xpar__cuda_backend;

enum { D_ONES, D_16, D_1024, D_BIG, D_POWER, D_HALF, D_EMPTIES, D_ALL_EMPTY, D_NONE, D_ONE,
       D_LONG_MIX, D_COUNT };
const char *dist_names[D_COUNT] = {"all-1",     "all-16",   "all-1024",   "all-2^20",
                                   "power-law", "half+tiny", "empties",   "all-empty",
                                   "none",      "one",       "long-mix"};

/* Segment sizes for about `total` elements. */
std::vector<size_t> make_sizes(int dist, size_t total, std::mt19937_64 &rng) {
  std::vector<size_t> s;
  size_t sum = 0;
  switch (dist) {
    case D_NONE: return s;
    case D_ONE: s.push_back(total); return s;
    case D_ALL_EMPTY: s.assign(37, 0); return s;
    case D_HALF:
      s.push_back(0);
      while (sum < total / 2) s.push_back(rng() % 4), sum += s.back();
      s.push_back(total / 2);
      sum += total / 2;
      while (sum < total) s.push_back(rng() % 3), sum += s.back();
      s.push_back(0);
      return s;
    default: break;
  }
  while (sum < total) {
    size_t v;
    switch (dist) {
      case D_ONES: v = 1; break;
      case D_16: v = 16; break;
      case D_1024: v = 1024; break;
      case D_BIG: v = (size_t)1 << 20; break;
      case D_POWER: {
        const double u = (double)(rng() >> 11) * 0x1p-53 + 1e-12;
        double x = pow(u, -1.0 / 1.2);
        if (x > (double)(total / 4 + 1)) x = (double)(total / 4 + 1);
        v = (size_t)x - 1;
        break;
      }
      case D_LONG_MIX: { /* long on average (the warp-per-span path) with empty, tiny and
                          * huge segments among them */
        const uint64_t r = rng();
        v = r % 8 == 0   ? 0
            : r % 8 == 1 ? rng() % 5
            : r % 64 == 2 ? 20000 + rng() % 50000
                         : 100 + rng() % 2000;
        break;
      }
      default: v = rng() % 5 == 0 ? 0 : rng() % 40; break;
    }
    if (sum + v > total) v = total - sum;
    s.push_back(v);
    sum += v;
  }
  if (dist == D_EMPTIES && !s.empty()) {
    s.front() = 0;
    s[s.size() / 2] = 0;
    s.push_back(0);
  }
  return s;
}

template <class T> void fill_values(std::vector<T> &v, std::mt19937_64 &rng, bool exact, bool zeros) {
  for (auto &x : v) {
    const uint64_t r = rng();
    if constexpr (std::is_floating_point<T>::value) {
      if (zeros) { /* -0.0 and +0.0, a few +-1: which zero a min / max keeps shows its order */
        x = r % 8 == 0 ? (T)(r & 2 ? 1 : -1) : (T)(r & 1 ? -0.0 : 0.0);
        continue;
      }
      if (exact) x = (T)((int)(r % 17) - 8);
      else x = (T)((double)(r >> 11) * 0x1p-53 * 2.0 - 1.0);
      if (r % 97 == 0) x = (T)(r & 1 ? -0.0 : 0.0);
      if (r % 211 == 0) x = (T)NAN;
      if (r % 223 == 0) x = (T)(r & 2 ? INFINITY : -INFINITY);
    } else {
      x = (T)(r >> (r % 40));
      /* the identities of min and max among the data: an element equal to one still
       * wins argmin / argmax by its index */
      if (r % 229 == 0) x = std::numeric_limits<T>::max();
      if (r % 233 == 0) x = std::numeric_limits<T>::lowest();
    }
  }
}

struct CheckCase {
  int kind; /* xpar__seg_kind */
  xpar_reduction op;
  xpar_scan_kind scan_kind;
  int dist, form; /* form: 0 int32 offsets, 1 int64, 2 fixed */
  int mode;       /* 0 synchronous, 1 queued, 2 cuda-serial */
  bool inplace, exact;
  size_t total;
  bool repro; /* reproducible mode (a float or double SUM reduce) */
  bool zeros; /* values mostly -0.0 and +0.0 (a float min / max) */
};

/* A case of the layout given; the scan's kind and in place (a scan) drawn from rng, in
 * that order; exact, not reproducible, not zeros until the caller says otherwise. */
CheckCase layout_case(int kind, xpar_reduction op, int dist, int form, size_t total, int mode,
                      std::mt19937_64 &rng) {
  CheckCase k;
  k.kind = kind;
  k.op = op;
  k.scan_kind = rng() % 2 ? XPAR_EXCLUSIVE : XPAR_INCLUSIVE;
  k.dist = dist;
  k.form = form;
  k.mode = mode;
  k.inplace = kind == XPAR__SEG_SCAN && rng() % 4 == 0;
  k.exact = true;
  k.total = total;
  k.repro = false;
  k.zeros = false;
  return k;
}

template <class T>
int check_one(xpar__cuda_state *st, xpar_dtype t, const CheckCase &k, std::mt19937_64 &rng) {
  std::vector<size_t> sizes = make_sizes(k.dist, k.total, rng);
  size_t fixed = 0;
  if (k.form == 2) {
    fixed = sizes.empty() ? 0 : sizes[sizes.size() / 2];
    for (auto &v : sizes) v = fixed;
  }
  const size_t m = sizes.size();
  const size_t base = k.form == 2 ? 0 : rng() % 5;
  size_t sum = 0;
  for (size_t v : sizes) sum += v;
  const size_t n = base + sum + (k.form == 2 ? 0 : rng() % 4);
  std::vector<int64_t> off64(m + 1);
  std::vector<int32_t> off32(m + 1);
  for (size_t g = 0, at = base; g <= m; g++) {
    off64[g] = (int64_t)at;
    off32[g] = (int32_t)at;
    if (g < m) at += sizes[g];
  }
  std::vector<T> in(n + 1);
  fill_values(in, rng, k.exact, k.zeros);
  const bool scan = k.kind == XPAR__SEG_SCAN;
  const size_t out_n = scan ? n : m;
  /* the reference: the CPU backend's serial tier */
  std::vector<T> want(out_n + 1);
  std::vector<int64_t> want_i(m + 1, -7);
  std::vector<unsigned char> fill((out_n + 1) * sizeof(T), 0xA5);
  memcpy(want.data(), fill.data(), out_n * sizeof(T));
  if (k.inplace) memcpy(want.data(), in.data(), n * sizeof(T));
  xpar__seg_spec hs;
  memset(&hs, 0, sizeof hs);
  hs.kind = (xpar__seg_kind)k.kind;
  hs.dtype = t;
  hs.op = k.op;
  hs.scan_kind = k.scan_kind;
  hs.in = in.data();
  hs.n = n;
  hs.offsets = k.form == 0 ? (const void *)off32.data() : k.form == 1 ? (const void *)off64.data() : NULL;
  hs.offset_dtype = k.form == 0 ? XPAR_INT32 : XPAR_INT64;
  hs.segment_size = fixed;
  hs.n_segments = m;
  hs.out = want.data();
  hs.index = want_i.data();
  xpar__exec cex;
  memset(&cex, 0, sizeof cex);
  cex.serial = 1;
  cex.num_threads = 1;
  cex.reproducible = k.repro;
  GB_XPAR(xpar__cpu_backend.segmented(&cex, &hs));
  /* the device */
  T *din, *dout;
  void *doff;
  int64_t *didx;
  GB_CUDA(cudaMalloc(&din, (n + 1) * sizeof(T)));
  GB_CUDA(cudaMalloc(&dout, (out_n + 2) * sizeof(T)));
  GB_CUDA(cudaMalloc(&doff, (m + 1) * 8));
  GB_CUDA(cudaMalloc(&didx, (m + 1) * 8));
  GB_CUDA(cudaMemcpy(din, in.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  GB_CUDA(cudaMemset(dout, 0xA5, (out_n + 2) * sizeof(T)));
  GB_CUDA(cudaMemset(didx, 0xA5, (m + 1) * 8));
  if (k.form == 0) GB_CUDA(cudaMemcpy(doff, off32.data(), (m + 1) * 4, cudaMemcpyHostToDevice));
  if (k.form == 1) GB_CUDA(cudaMemcpy(doff, off64.data(), (m + 1) * 8, cudaMemcpyHostToDevice));
  xpar__seg_spec ds = hs;
  ds.report = k.mode != 1; /* queued: the offsets' verdict is not read back */
  ds.in = din;
  ds.out = k.inplace ? (void *)din : (void *)dout;
  ds.offsets = k.form == 2 ? NULL : doff;
  ds.index = didx;
  xpar__exec ex;
  memset(&ex, 0, sizeof ex);
  ex.cuda = st;
  ex.serial = k.mode == 2;
  ex.nowait = k.mode == 1;
  ex.reproducible = k.repro;
  GB_XPAR(B.segmented(&ex, &ds));
  if (k.mode == 1) GB_XPAR(B.wait(st));
  std::vector<T> got(out_n + 2);
  std::vector<int64_t> got_i(m + 1);
  GB_CUDA(cudaMemcpy(got.data(), k.inplace ? din : dout, (k.inplace ? n : out_n + 1) * sizeof(T),
                     cudaMemcpyDeviceToHost));
  if (m) GB_CUDA(cudaMemcpy(got_i.data(), didx, m * 8, cudaMemcpyDeviceToHost));
  size_t bad = 0, first = (size_t)-1;
  /* run to run the same bits: the sum again, compared with the first (a float sum is
   * not the serial tier's, so this is its only bit-for-bit check) */
  if (std::is_floating_point<T>::value && k.op == XPAR_SUM && k.mode == 0 && !k.inplace) {
    GB_CUDA(cudaMemset(dout, 0xA5, (out_n + 2) * sizeof(T)));
    GB_XPAR(B.segmented(&ex, &ds));
    std::vector<T> again(out_n);
    GB_CUDA(cudaMemcpy(again.data(), dout, out_n * sizeof(T), cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < out_n; i++)
      if (memcmp(&again[i], &got[i], sizeof(T)) != 0 && !(again[i] != again[i] && got[i] != got[i]) &&
          bad++ == 0)
        first = i;
  }
  for (size_t i = 0; i < out_n; i++)
    if (memcmp(&got[i], &want[i], sizeof(T)) != 0) {
      /* NaN payloads may differ */
      const bool both_nan = std::is_floating_point<T>::value && got[i] != got[i] && want[i] != want[i];
      if (!both_nan && bad++ == 0) first = i;
    }
  if (!k.inplace && memcmp(&got[out_n], fill.data(), sizeof(T)) != 0) bad++; /* past the end */
  if (k.kind == XPAR__SEG_ARGREDUCE)
    for (size_t g = 0; g < m; g++)
      if (got_i[g] != want_i[g] && bad++ == 0) first = g;
  GB_CUDA(cudaFree(din));
  GB_CUDA(cudaFree(dout));
  GB_CUDA(cudaFree(doff));
  GB_CUDA(cudaFree(didx));
  if (bad) {
    printf("SEGCHECK FAIL kind=%d op=%d scan_kind=%d %s dist=%s form=%d mode=%d inplace=%d "
           "exact=%d repro=%d zeros=%d n=%zu m=%zu: %zu bad, first at %zu\n",
           k.kind, (int)k.op, (int)k.scan_kind, xpar_dtype_name(t), dist_names[k.dist], k.form,
           k.mode, (int)k.inplace, (int)k.exact, (int)k.repro, (int)k.zeros, n, m, bad, first);
    return 1;
  }
  return 0;
}

int check_dispatch(xpar__cuda_state *st, xpar_dtype t, const CheckCase &k, std::mt19937_64 &rng) {
  switch (t) {
    case XPAR_INT32: return check_one<int32_t>(st, t, k, rng);
    case XPAR_UINT32: return check_one<uint32_t>(st, t, k, rng);
    case XPAR_FLOAT: return check_one<float>(st, t, k, rng);
    case XPAR_INT64: return check_one<int64_t>(st, t, k, rng);
    case XPAR_UINT64: return check_one<uint64_t>(st, t, k, rng);
    default: return check_one<double>(st, t, k, rng);
  }
}

/* Bad offsets: refused with nothing written (synchronous and cuda-serial). */
int check_bad_offsets(xpar__cuda_state *st) {
  const int64_t cases[][4] = {{0, 10, 5, 100}, {0, 10, 20, 101}, {-1, 10, 20, 30}, {50, 40, 60, 70}};
  int fails = 0;
  int32_t *din, *dout;
  int64_t *doff;
  GB_CUDA(cudaMalloc(&din, 100 * 4));
  GB_CUDA(cudaMalloc(&dout, 100 * 4));
  GB_CUDA(cudaMalloc(&doff, 4 * 8));
  GB_CUDA(cudaMemset(din, 0, 100 * 4));
  for (const auto &c : cases)
    for (int mode = 0; mode < 2; mode++)
      for (int kind = 0; kind < 3; kind++) {
        GB_CUDA(cudaMemcpy(doff, c, sizeof c, cudaMemcpyHostToDevice));
        GB_CUDA(cudaMemset(dout, 0xA5, 100 * 4));
        xpar__seg_spec s;
        memset(&s, 0, sizeof s);
        s.kind = (xpar__seg_kind)kind;
        s.dtype = XPAR_INT32;
        s.op = XPAR_MIN;
        s.in = din;
        s.n = 100;
        s.offsets = doff;
        s.offset_dtype = XPAR_INT64;
        s.n_segments = 3;
        s.out = dout;
        s.index = (int64_t *)(dout + 50);
        s.report = 1;
        xpar__exec ex;
        memset(&ex, 0, sizeof ex);
        ex.cuda = st;
        ex.serial = mode == 1;
        const xpar_status r = B.segmented(&ex, &s);
        std::vector<unsigned char> got(400);
        GB_CUDA(cudaMemcpy(got.data(), dout, 400, cudaMemcpyDeviceToHost));
        bool untouched = true;
        for (unsigned char b : got) untouched &= b == 0xA5;
        if (r != XPAR_ERR_INVALID_ARGUMENT || !untouched || !strstr(xpar_last_error_detail(), "offsets")) {
          printf("SEGCHECK FAIL bad offsets {%lld %lld %lld %lld} mode=%d kind=%d: status %s, %s, "
                 "detail \"%s\"\n",
                 (long long)c[0], (long long)c[1], (long long)c[2], (long long)c[3], mode, kind,
                 xpar_status_name(r), untouched ? "nothing written" : "WRITTEN",
                 xpar_last_error_detail());
          fails++;
        }
      }
  GB_CUDA(cudaFree(din));
  GB_CUDA(cudaFree(dout));
  GB_CUDA(cudaFree(doff));
  return fails;
}

/* Layouts a check skips, whatever its values: distributions fixed segments cannot
 * take, argmin over fixed rows but one, the one-thread tier past 100,003 elements,
 * all-2^20 below 3,000,017, the empty layouts beyond 1,000. */
bool layout_skipped(int kind, int dist, int form, size_t total, int mode) {
  if (form == 2 && (dist == D_POWER || dist == D_HALF || dist == D_EMPTIES || dist == D_LONG_MIX))
    return true;
  if (kind == XPAR__SEG_ARGREDUCE && form == 2 && dist != D_ONE) return true;
  if (mode == 2 && total > 100003) return true; /* one GPU thread */
  if (dist == D_BIG && total < 3000017) return true;
  return total > 1000 && (dist == D_ALL_EMPTY || dist == D_NONE);
}

/* The environment's SEG_CHECK_PARTS: a list of kSegParts (unset: all).  false, with a
 * message, where it names anything else. */
const char *const kSegParts[] = {"reduce", "scan", "arg", "zeros", "repro", "bad"};
bool parts_valid() {
  const char *list = getenv("SEG_CHECK_PARTS");
  for (const char *q = list; q && *q;) {
    const size_t len = strcspn(q, ",");
    bool known = false;
    for (const char *k : kSegParts) known |= strlen(k) == len && strncmp(q, k, len) == 0;
    if (!known) {
      fprintf(stderr, "SEG_CHECK_PARTS: unknown part '%.*s' (reduce, scan, arg, zeros, repro, "
                      "bad)\n", (int)len, q);
      return false;
    }
    q += len + (q[len] == ',');
  }
  return true;
}
/* Whether the comma-separated list in environment variable var names name (unset or
 * empty: every name). */
bool env_list_has(const char *var, const char *name) {
  const char *list = getenv(var);
  if (!list || !*list) return true;
  const size_t len = strlen(name);
  for (const char *q = list; (q = strstr(q, name)) != NULL; q += len)
    if ((q == list || q[-1] == ',') && (q[len] == ',' || q[len] == '\0')) return true;
  return false;
}
bool part_wanted(const char *part) { return env_list_has("SEG_CHECK_PARTS", part); }
/* Each part draws from its own generator, seeded from the seed and the part: a part
 * run alone (SEG_CHECK_PARTS) checks the data it checks in a full run. */
std::mt19937_64 part_rng(unsigned long long seed, const char *part) {
  unsigned long long h = 1469598103934665603ull; /* FNV-1a */
  for (const char *c = part; *c; c++) h = (h ^ (unsigned char)*c) * 1099511628211ull;
  return std::mt19937_64(seed ^ h);
}

int seg_check(xpar__cuda_state *st, unsigned long long seed, int quick) {
  if (!parts_valid()) return 1;
  static const char *const kind_parts[3] = {"reduce", "scan", "arg"};
  const xpar_dtype ts[] = {XPAR_INT32, XPAR_UINT32, XPAR_FLOAT, XPAR_INT64, XPAR_UINT64,
                           XPAR_DOUBLE};
  const size_t totals[] = {1000, 100003, 3000017};
  int fails = 0, runs = 0;
  const auto t_start = std::chrono::steady_clock::now();
  auto progress = [&](const char *what) {
    /* a line per dtype, flushed: a run cut short by its time limit still says how far
     * it got and what failed so far */
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
    printf("SEGCHECK progress: %s done, %d cases, %d failed, %.1f s\n", what, runs, fails, secs);
    fflush(stdout);
  };
  for (xpar_dtype t : ts) {
    if (!env_list_has("SEG_CHECK_DTYPES", xpar_dtype_name(t))) continue;
    for (int kind = 0; kind < 3; kind++) {
      if (!part_wanted(kind_parts[kind])) continue;
      std::mt19937_64 rng = part_rng(seed + 0x9E3779B97F4A7C15ull * (unsigned)t, kind_parts[kind]);
      for (int op = 0; op < 3; op++) {
        if (kind == XPAR__SEG_ARGREDUCE && op == XPAR_SUM) continue;
        for (int dist = 0; dist < D_COUNT; dist++)
          for (int form = 0; form < 3; form++)
            for (size_t total : totals)
              for (int mode = 0; mode < 3; mode++) {
                if (quick && (total > 1000 || t == XPAR_UINT32 || t == XPAR_UINT64)) continue;
                if (layout_skipped(kind, dist, form, total, mode)) continue;
                CheckCase k = layout_case(kind, (xpar_reduction)op, dist, form, total, mode, rng);
                /* random floats: bit for bit only where the order is the serial one */
                k.exact = !(mode == 2 && op == XPAR_SUM && rng() % 2);
                fails += check_dispatch(st, t, k, rng);
                runs++;
              }
      }
    }
    progress(xpar_dtype_name(t));
  }
  /* signed zeros: float and double min / max, reduce and scan (and argmin / argmax), over
   * values that are mostly -0.0 and +0.0, bit for bit the serial tier: only a fold in
   * element order, across threads, warps and tiles, keeps the right zero.  Quick too
   * (100,003 elements are 25 to 49 tiles). */
  std::mt19937_64 rng = part_rng(seed, "zeros");
  for (xpar_dtype t : {XPAR_FLOAT, XPAR_DOUBLE})
    for (int kind = 0; kind < 3 && part_wanted("zeros"); kind++)
      for (int op = 1; op < 3; op++)
        for (int dist = 0; dist < D_COUNT; dist++)
          for (int form = 0; form < 3; form++)
            for (size_t total : totals)
              for (int mode = 0; mode < 2; mode++) {
                if (quick && total > 100003) continue;
                if (layout_skipped(kind, dist, form, total, mode)) continue;
                CheckCase k = layout_case(kind, (xpar_reduction)op, dist, form, total, mode, rng);
                k.zeros = true;
                fails += check_dispatch(st, t, k, rng);
                runs++;
              }
  if (part_wanted("zeros")) progress("signed zeros");
  /* reproducible mode: float and double segmented sums and sum scans of random floats, bit
   * for bit the CPU's reproducible serial tier (one GPU thread per segment) */
  rng = part_rng(seed, "repro");
  for (xpar_dtype t : {XPAR_FLOAT, XPAR_DOUBLE})
    for (int kind = 0; kind < 2 && part_wanted("repro"); kind++)
      for (int dist = 0; dist < D_COUNT; dist++)
        for (int form = 0; form < 3; form++)
          for (size_t total : totals)
            for (int mode = 0; mode < 3; mode++) {
              if (quick && total > 1000) continue;
              if (layout_skipped(kind, dist, form, total, mode)) continue;
              CheckCase k = layout_case(kind, XPAR_SUM, dist, form, total, mode, rng);
              k.exact = false;
              k.repro = true;
              fails += check_dispatch(st, t, k, rng);
              runs++;
            }
  if (part_wanted("repro")) progress("reproducible");
  if (part_wanted("bad")) fails += check_bad_offsets(st);
  printf("SEGCHECK %s: %d cases, %d failed (seed %llu)\n", fails ? "FAIL" : "ok", runs, fails,
         seed);
  return fails ? 1 : 0;
}

/* ---- timings -------------------------------------------------------------------------- */

struct Timer {
  cudaEvent_t a, b;
  Timer() {
    GB_CUDA(cudaEventCreate(&a));
    GB_CUDA(cudaEventCreate(&b));
  }
  ~Timer() {
    cudaEventDestroy(a);
    cudaEventDestroy(b);
  }
  template <class F> double ms(F &&f) {
    GB_CUDA(cudaEventRecord(a, 0));
    f();
    GB_CUDA(cudaEventRecord(b, 0));
    GB_CUDA(cudaEventSynchronize(b));
    float t = 0;
    GB_CUDA(cudaEventElapsedTime(&t, a, b));
    return t;
  }
};

/* Two calls interleaved, reps times each: the medians. */
template <class F, class G> void timed_pair(F &&f, G &&g, int reps, double *mf, double *mg) {
  Timer tm;
  std::vector<double> tf, tg;
  for (int i = 0; i < 2; i++) f(), g();
  for (int i = 0; i < reps; i++) tf.push_back(tm.ms(f)), tg.push_back(tm.ms(g));
  *mf = median_of(tf);
  *mg = median_of(tg);
}

/* The device-to-device copy bandwidth (read + write), GB/s. */
double copy_bound(size_t bytes) {
  void *a, *b;
  GB_CUDA(cudaMalloc(&a, bytes));
  GB_CUDA(cudaMalloc(&b, bytes));
  Timer tm;
  std::vector<double> t;
  for (int i = 0; i < 9; i++)
    t.push_back(tm.ms([&] { GB_CUDA(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, 0)); }));
  GB_CUDA(cudaFree(a));
  GB_CUDA(cudaFree(b));
  return 2.0 * (double)bytes / (median_of(t) * 1e6);
}

template <class T>
void seg_row(xpar__exec &ex, xpar_dtype t, const char *tname, int dist, size_t n, double bound,
             int quick) {
  std::mt19937_64 rng(12345);
  std::vector<size_t> sizes = make_sizes(dist, n, rng);
  const size_t m = sizes.size();
  std::vector<int32_t> off(m + 1);
  for (size_t g = 0, at = 0; g <= m; g++) {
    off[g] = (int32_t)at;
    if (g < m) at += sizes[g];
  }
  T *in, *out_x, *out_c;
  int32_t *doff;
  GB_CUDA(cudaMalloc(&in, n * sizeof(T)));
  GB_CUDA(cudaMalloc(&out_x, (m > n ? m : n) * sizeof(T)));
  GB_CUDA(cudaMalloc(&out_c, m * sizeof(T)));
  GB_CUDA(cudaMalloc(&doff, (m + 1) * 4));
  GB_CUDA(cudaMemcpy(doff, off.data(), (m + 1) * 4, cudaMemcpyHostToDevice));
  if (t == XPAR_DOUBLE)
    fill_unit_doubles<<<1024, 256>>>((double *)in, n);
  else
    fill_random<<<1024, 256>>>((uint32_t *)in, n * sizeof(T) / 4, 99u);
  GB_CUDA(cudaGetLastError());
  void *temp = NULL;
  size_t tb = 0;
  GB_CUDA(cub::DeviceSegmentedReduce::Sum(temp, tb, in, out_c, (int64_t)m, doff, doff + 1));
  GB_CUDA(cudaMalloc(&temp, tb));
  xpar__seg_spec s;
  memset(&s, 0, sizeof s);
  s.kind = XPAR__SEG_REDUCE;
  s.dtype = t;
  s.op = XPAR_SUM;
  s.in = in;
  s.n = n;
  s.offsets = doff;
  s.offset_dtype = XPAR_INT32;
  s.n_segments = m;
  s.out = out_x;
  const int reps = quick ? 5 : 11;
  double mx, mc;
  timed_pair([&] { GB_XPAR(B.segmented(&ex, &s)); },
             [&] { GB_CUDA(cub::DeviceSegmentedReduce::Sum(temp, tb, in, out_c, (int64_t)m, doff, doff + 1)); },
             reps, &mx, &mc);
  /* the results: equal for integers, close for doubles (different orders) */
  std::vector<T> a(m), b(m);
  GB_CUDA(cudaMemcpy(a.data(), out_x, m * sizeof(T), cudaMemcpyDeviceToHost));
  GB_CUDA(cudaMemcpy(b.data(), out_c, m * sizeof(T), cudaMemcpyDeviceToHost));
  size_t differ = 0;
  for (size_t g = 0; g < m; g++) {
    const double x = (double)a[g], y = (double)b[g];
    if (std::is_floating_point<T>::value ? fabs(x - y) > 1e-9 * (1.0 + fabs(y)) * sqrt((double)sizes[g] + 1)
                                         : a[g] != b[g])
      differ++;
  }
  const double bytes = (double)n * sizeof(T) + (double)(m + 1) * 4 + (double)m * sizeof(T);
  const double gx = bytes / (mx * 1e6), gc = bytes / (mc * 1e6);
  printf("SEGROW reduce-sum %-6s %-9s n=2^%d m=%zu  xpar %8.3f ms %7.1f GB/s (%4.1f %% of bound) | "
         "CUB %8.3f ms %7.1f GB/s (%4.1f %%) | CUB hinted n/a | ratio %.2f | %s\n",
         tname, dist_names[dist], (int)log2((double)n), m, mx, gx, 100 * gx / bound, mc, gc,
         100 * gc / bound, mc / mx, differ ? "DIFFER" : "equal");
  /* the segmented scan beside xpar's whole-array scan */
  if (dist == D_16 || dist == D_1024 || dist == D_BIG || dist == D_HALF) {
    xpar__seg_spec sc = s;
    sc.kind = XPAR__SEG_SCAN;
    double ms_seg, ms_whole;
    timed_pair([&] { GB_XPAR(B.segmented(&ex, &sc)); },
               [&] { GB_XPAR(B.scan(&ex, t, XPAR_SUM, XPAR_INCLUSIVE, NULL, in, out_x, n)); }, reps,
               &ms_seg, &ms_whole);
    const double sb = 2.0 * (double)n * sizeof(T) + (double)(m + 1) * 4;
    const double wb = 2.0 * (double)n * sizeof(T);
    printf("SEGSCANROW scan-sum %-6s %-9s n=2^%d  segmented %8.3f ms %7.1f GB/s | whole-array %8.3f "
           "ms %7.1f GB/s | ratio (bandwidth) %.2f\n",
           tname, dist_names[dist], (int)log2((double)n), ms_seg, sb / (ms_seg * 1e6), ms_whole,
           wb / (ms_whole * 1e6), (sb / ms_seg) / (wb / ms_whole));
  }
  /* argmin per segment beside CUB's DeviceSegmentedReduce::ArgMin (its index counts
   * from the segment's start; xpar's from in's) */
  {
    using KV = cub::KeyValuePair<int, T>;
    KV *kv;
    int64_t *idx;
    GB_CUDA(cudaMalloc(&kv, m * sizeof(KV)));
    GB_CUDA(cudaMalloc(&idx, m * sizeof(int64_t)));
    void *atemp = NULL;
    size_t atb = 0;
    GB_CUDA(cub::DeviceSegmentedReduce::ArgMin(atemp, atb, in, kv, (int64_t)m, doff, doff + 1));
    GB_CUDA(cudaMalloc(&atemp, atb));
    xpar__seg_spec sa = s;
    sa.kind = XPAR__SEG_ARGREDUCE;
    sa.op = XPAR_MIN;
    sa.index = idx;
    double ma, mca;
    timed_pair([&] { GB_XPAR(B.segmented(&ex, &sa)); },
               [&] {
                 GB_CUDA(cub::DeviceSegmentedReduce::ArgMin(atemp, atb, in, kv, (int64_t)m, doff,
                                                            doff + 1));
               },
               reps, &ma, &mca);
    std::vector<T> av(m);
    std::vector<int64_t> ai(m);
    std::vector<KV> ck(m);
    GB_CUDA(cudaMemcpy(av.data(), out_x, m * sizeof(T), cudaMemcpyDeviceToHost));
    GB_CUDA(cudaMemcpy(ai.data(), idx, m * sizeof(int64_t), cudaMemcpyDeviceToHost));
    GB_CUDA(cudaMemcpy(ck.data(), kv, m * sizeof(KV), cudaMemcpyDeviceToHost));
    size_t adiffer = 0;
    for (size_t g = 0; g < m; g++)
      if (sizes[g] && (av[g] != ck[g].value || ai[g] != (int64_t)off[g] + ck[g].key)) adiffer++;
    const double ab = (double)n * sizeof(T) + (double)(m + 1) * 4 + (double)m * (sizeof(T) + 8);
    const double ga = ab / (ma * 1e6), gca = ab / (mca * 1e6);
    printf("SEGARGROW argmin %-6s %-9s n=2^%d m=%zu  xpar %8.3f ms %7.1f GB/s (%4.1f %% of bound) | "
           "CUB %8.3f ms %7.1f GB/s (%4.1f %%) | ratio %.2f | %s\n",
           tname, dist_names[dist], (int)log2((double)n), m, ma, ga, 100 * ga / bound, mca, gca,
           100 * gca / bound, mca / ma, adiffer ? "DIFFER" : "equal");
    GB_CUDA(cudaFree(atemp));
    GB_CUDA(cudaFree(kv));
    GB_CUDA(cudaFree(idx));
  }
  GB_CUDA(cudaFree(temp));
  GB_CUDA(cudaFree(in));
  GB_CUDA(cudaFree(out_x));
  GB_CUDA(cudaFree(out_c));
  GB_CUDA(cudaFree(doff));
  GB_XPAR(B.release_cache(ex.cuda));
}

template <class T>
void arg_row(xpar__exec &ex, xpar_dtype t, const char *tname, size_t n, double bound, int quick) {
  T *in, *vx, *mx_out, *cv;
  int64_t *ix, *ci;
  GB_CUDA(cudaMalloc(&in, n * sizeof(T)));
  GB_CUDA(cudaMalloc(&vx, 16));
  GB_CUDA(cudaMalloc(&mx_out, 16));
  GB_CUDA(cudaMalloc(&ix, 16));
  GB_CUDA(cudaMalloc(&cv, 16));
  GB_CUDA(cudaMalloc(&ci, 16));
  if (t == XPAR_DOUBLE)
    fill_unit_doubles<<<1024, 256>>>((double *)in, n);
  else
    fill_random<<<1024, 256>>>((uint32_t *)in, n * sizeof(T) / 4, 7u);
  GB_CUDA(cudaGetLastError());
  void *temp = NULL;
  size_t tb = 0;
  GB_CUDA(cub::DeviceReduce::ArgMin(temp, tb, in, cv, ci, (int64_t)n));
  GB_CUDA(cudaMalloc(&temp, tb));
  const int reps = quick ? 5 : 15;
  for (int is_max = 0; is_max < 2; is_max++) {
    xpar__seg_spec s;
    memset(&s, 0, sizeof s);
    s.kind = XPAR__SEG_ARGREDUCE;
    s.dtype = t;
    s.op = is_max ? XPAR_MAX : XPAR_MIN;
    s.in = in;
    s.n = n;
    s.segment_size = n;
    s.n_segments = 1;
    s.out = vx;
    s.index = ix;
    double m_arg, m_min, m_cub, unused;
    timed_pair([&] { GB_XPAR(B.segmented(&ex, &s)); },
               [&] { GB_XPAR(B.reduce(&ex, t, is_max ? XPAR_MAX : XPAR_MIN, in, n, mx_out)); }, reps,
               &m_arg, &m_min);
    timed_pair(
        [&] {
          if (is_max) GB_CUDA(cub::DeviceReduce::ArgMax(temp, tb, in, cv, ci, (int64_t)n));
          else GB_CUDA(cub::DeviceReduce::ArgMin(temp, tb, in, cv, ci, (int64_t)n));
        },
        [&] {}, reps, &m_cub, &unused);
    int64_t xi = -1, hk = -2;
    GB_CUDA(cudaMemcpy(&xi, ix, 8, cudaMemcpyDeviceToHost));
    GB_CUDA(cudaMemcpy(&hk, ci, 8, cudaMemcpyDeviceToHost));
    const double bytes = (double)n * sizeof(T);
    printf("ARGROW %s %-6s n=2^%d  xpar %8.3f ms %7.1f GB/s (%4.1f %% of bound) | xpar %s %8.3f ms "
           "%7.1f GB/s | argreduce/min bandwidth %.2f | CUB Arg%s %8.3f ms %7.1f GB/s | vs CUB %.2fx "
           "| index %lld / CUB %lld %s\n",
           is_max ? "argmax" : "argmin", tname, (int)log2((double)n), m_arg, bytes / (m_arg * 1e6),
           100 * bytes / (m_arg * 1e6) / bound, is_max ? "max" : "min", m_min,
           bytes / (m_min * 1e6), m_min / m_arg, is_max ? "Max" : "Min", m_cub,
           bytes / (m_cub * 1e6), m_cub / m_arg, (long long)xi, (long long)hk,
           xi == hk ? "equal" : "DIFFER");
  }
  GB_CUDA(cudaFree(temp));
  GB_CUDA(cudaFree(in));
  GB_CUDA(cudaFree(vx));
  GB_CUDA(cudaFree(mx_out));
  GB_CUDA(cudaFree(ix));
  GB_CUDA(cudaFree(cv));
  GB_CUDA(cudaFree(ci));
  GB_XPAR(B.release_cache(ex.cuda));
}

} // namespace

int gpu_seg_run(int quick, unsigned long long seed, int what) {
  cudaDeviceProp prop;
  GB_CUDA(cudaGetDeviceProperties(&prop, 0));
  printf("device: %s, %d SMs\n", prop.name, prop.multiProcessorCount);
  int rc = 0;
  if (what & 1) {
    xpar__cuda_state *st;
    GB_XPAR(B.state_create(0, NULL, &st));
    rc |= seg_check(st, seed, quick);
    B.state_destroy(st);
  }
  if (!(what & 2)) return rc;
  xpar__cuda_state *st;
  xpar__exec ex = queued_exec_on_default_stream(&st);
  const size_t n = quick ? (size_t)1 << 24 : (size_t)1 << 28;
  const double bound = copy_bound(n * 4);
  printf("SEGBOUND device-to-device copy of %zu MiB: %.1f GB/s (read + write): the bound below\n",
         n * 4 >> 20, bound);
  for (int dist : {D_ONES, D_16, D_1024, D_BIG, D_POWER, D_HALF, D_LONG_MIX}) {
    if (!env_list_has("SEG_BENCH_LAYOUTS", dist_names[dist])) continue;
    seg_row<int32_t>(ex, XPAR_INT32, "int32", dist, n, bound, quick);
    seg_row<double>(ex, XPAR_DOUBLE, "double", dist, n, bound, quick);
  }
  arg_row<int32_t>(ex, XPAR_INT32, "int32", n, bound, quick);
  arg_row<double>(ex, XPAR_DOUBLE, "double", n, bound, quick);
  B.state_destroy(st);
  return rc;
}
