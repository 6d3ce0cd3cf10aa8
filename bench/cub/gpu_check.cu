/*
 * `xpar-gpu-bench --check`: the CUDA backend against CPU references, on the
 * GPU, every element checked.
 *
 *  - every op x dtype x n in {0, 1, 31, 33, 1000, 65537, 2^20 + 3} x input
 *    offsets 0..3 (pointers 0..3 elements past a 256-byte boundary, so the
 *    vector paths see every head/tail split; x and y of two-input ops at
 *    different offsets, so mismatched alignment is covered too);
 *  - launch shapes: the tuned default, cuda-serial, 1x1, 3x97, 7x33, 1000x64,
 *    2x1024, 1x256, 5x256 (odd blocks, partial warps, more blocks than work; 5x256: the
 *    tuned scan kernel with fewer blocks than tiles, i.e. in ticket order);
 *  - grid = block = 1 (cuda-serial and the 1x1 override): float and double
 *    sums, scans, dot and wide sums equal the CPU serial loop BIT FOR BIT;
 *  - other shapes: integers exact (wrapping), min/max exact, float sums
 *    within (k + 2) * eps * sum|x| of a long double reference;
 *  - every scan case also from a random carry-in (xpar_scan_init), exact on
 *    one thread, every shape; and every scan case again with the look-back's sleeps
 *    on at every grid size ("sleeps": the default sizes stay below the 500 blocks
 *    where they start);
 *  - outputs are poisoned first; elements before and after the range must
 *    stay poisoned; in-place scan, axpy with x == y, add with z == x;
 *  - reduce with the result on the device (nowait) gives the same bits as
 *    the host-result call (deterministic for a fixed shape);
 *  - error paths: n = 0, out-of-memory, pointer kinds, query, streams.
 * Inputs are seeded random values (seed printed; --seed N repeats a run).
 */
#include <math.h>
#include <string.h>

#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "backend_cuda/cuda_state.cuh"
#include "backend_cuda/launch_shape.cuh"
#include "backend_cuda/reduce_kernel.cuh"
#include "backend_cuda/scan_kernel.cuh"
#include "gpu_bench.h"

namespace {

const xpar__backend &B = xpar__cuda_backend;

/* ---- types ----------------------------------------------------------------- */

template <class T> struct Traits;
#define GB_TRAITS(T_, ID, U_, W_, FLT, NAME)                 \
  template <> struct Traits<T_> {                            \
    static constexpr xpar_dtype id = ID;                     \
    using U = U_;                                            \
    using Wide = W_;                                         \
    static constexpr bool is_float = FLT;                    \
    static const char *name() { return NAME; }               \
  };
GB_TRAITS(int32_t, XPAR_INT32, uint32_t, int64_t, false, "int32")
GB_TRAITS(int64_t, XPAR_INT64, uint64_t, int64_t, false, "int64")
GB_TRAITS(uint32_t, XPAR_UINT32, uint32_t, uint64_t, false, "uint32")
GB_TRAITS(uint64_t, XPAR_UINT64, uint64_t, uint64_t, false, "uint64")
GB_TRAITS(float, XPAR_FLOAT, uint32_t, double, true, "float")
GB_TRAITS(double, XPAR_DOUBLE, uint64_t, double, true, "double")
#undef GB_TRAITS

/* Host arithmetic exactly as the CPU serial tier: wrapping integers, and
 * float operations rounded one at a time (volatile: no contraction). */
template <class T> T h_add(T a, T b) {
  if constexpr (Traits<T>::is_float) {
    volatile T r = a + b;
    return r;
  } else {
    using U = typename Traits<T>::U;
    return (T)((U)a + (U)b);
  }
}
template <class T> T h_mul(T a, T b) {
  if constexpr (Traits<T>::is_float) {
    volatile T r = a * b;
    return r;
  } else {
    using U = typename Traits<T>::U;
    return (T)((U)a * (U)b);
  }
}
template <class T> T h_identity(xpar_reduction op) {
  if (op == XPAR_SUM) return T(0);
  if constexpr (Traits<T>::is_float)
    return op == XPAR_MIN ? (T)INFINITY : (T)-INFINITY;
  else
    return op == XPAR_MIN ? std::numeric_limits<T>::max() : std::numeric_limits<T>::lowest();
}
template <class T> T h_apply(xpar_reduction op, T acc, T x) {
  if (op == XPAR_SUM) return h_add(acc, x);
  if (op == XPAR_MIN) return (x < acc) ? x : acc;
  return (x > acc) ? x : acc;
}

/* ---- random inputs ---------------------------------------------------------- */

struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
};
template <class T> T random_value(Rng &r) {
  if constexpr (Traits<T>::is_float)
    return (T)((double)(r.next() >> 11) * 0x1.0p-53 * 2.0 - 1.0);
  else
    return (T)r.next();
}

/* ---- bookkeeping ------------------------------------------------------------- */

long g_checks;
long g_failures;
unsigned long long g_seed;

struct Shape {
  const char *name;
  int serial;
  unsigned grid, block;
};
bool one_thread(const Shape &s) { return s.serial || (s.grid == 1 && s.block == 1); }

struct Case {
  const char *dtype;
  const char *shape;
  size_t n;
  int off;
};

template <class T> std::string show(T v) {
  char buf[80];
  if constexpr (Traits<T>::is_float) {
    typename Traits<T>::U bits;
    memcpy(&bits, &v, sizeof v);
    snprintf(buf, sizeof buf, "%.17g (0x%llx)", (double)v, (unsigned long long)bits);
  } else if constexpr (std::is_signed<T>::value) {
    snprintf(buf, sizeof buf, "%lld", (long long)v);
  } else {
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
  }
  return buf;
}

template <class T>
void report(const Case &c, const char *what, size_t index, T got, T want, const char *note = "") {
  g_failures++;
  if (g_failures <= 25)
    printf("FAIL %s %s n=%zu off=%d shape=%s [%zu]: got %s want %s %s (seed %llu)\n", what,
           c.dtype, c.n, c.off, c.shape, index, show(got).c_str(), show(want).c_str(), note,
           g_seed);
}

template <class T> bool same_bits(T a, T b) { return memcmp(&a, &b, sizeof a) == 0; }

/* Exact, or within tol of a long double reference (parallel float sums). */
template <class T> bool close_enough(T got, T exact, long double ref, long double tol) {
  if (same_bits(got, exact) || got == exact) return true;
  if constexpr (Traits<T>::is_float) return fabsl((long double)got - ref) <= tol;
  return false;
}

/* ---- device buffers ----------------------------------------------------------- */

constexpr size_t kMaxN = (1u << 20) + 3;
constexpr size_t kPad = 8; /* elements checked beyond the end */

struct Buffers {
  char *a, *b, *c, *r; /* r: device results */
};

template <class T> T *at(char *base, int off) { return reinterpret_cast<T *>(base) + off; }

/* The backend runs on its own non-blocking stream, which does not order
 * itself after the legacy stream's memsets and copies: finish them first. */
template <class T> void poison(char *base, size_t n_total) {
  GB_CUDA(cudaMemset(base, 0xA5, n_total * sizeof(T)));
  GB_CUDA(cudaDeviceSynchronize());
}
void upload(void *dst, const void *src, size_t bytes) {
  GB_CUDA(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
  GB_CUDA(cudaDeviceSynchronize());
}

template <class T> std::vector<T> download(const char *base, size_t count) {
  std::vector<T> h(count);
  GB_CUDA(cudaMemcpy(h.data(), base, count * sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}

/* The poison word as T, for "untouched" checks. */
template <class T> T poison_value() {
  T v;
  memset(&v, 0xA5, sizeof v);
  return v;
}

/* Elements [0, off) and [off + n, off + n + kPad) of a downloaded buffer
 * must still hold the poison. */
template <class T>
void check_untouched(const Case &c, const char *what, const std::vector<T> &h, int off, size_t n) {
  const T p = poison_value<T>();
  for (int i = 0; i < off; i++)
    if (!same_bits(h[i], p)) report(c, what, (size_t)i, h[i], p, "(written before the range)");
  for (size_t i = off + n; i < off + n + kPad; i++)
    if (!same_bits(h[i], p)) report(c, what, i, h[i], p, "(written past the end)");
}

/* ---- one case: every op on one (dtype, shape, n, offset) ------------------------ */

/* Set while the scan-only pass with the look-back sleeps on runs (g_scan below). */
bool g_scans_only = false;

/* The library's scan with its tunings, but the look-back's sleeps from the first block
 * on (ScanDelays min_grid 0): the same kernels, the timing-dependent branches of the
 * look-back taken at the check's sizes. */
xpar_status scan_with_sleeps(const xpar__exec *ex, xpar_dtype t, xpar_reduction op,
                             xpar_scan_kind kind, const xpar__scalar *init, const void *in,
                             void *out, size_t n) {
  using namespace xpar_cuda;
  XPAR__FORWARD(xpar__cuda_begin(ex->cuda, "scan"));
  if (n == 0) return XPAR_OK;
  return with_dtype(t, [&](auto zero) -> xpar_status {
    using T = decltype(zero);
    return with_op<T>(op, [&](auto op_tag) -> xpar_status {
      using Tn = tuning::ScanTuning<sizeof(T)>;
      ScanDelays d = ScanDelays::of<Tn>();
      d.min_grid = 0;
      return scan_launch<decltype(op_tag), Tn>(ex, kind == XPAR_EXCLUSIVE, init, in, out, n, d);
    });
  });
}
xpar_status (*g_scan)(const xpar__exec *, xpar_dtype, xpar_reduction, xpar_scan_kind,
                      const xpar__scalar *, const void *, void *, size_t) = xpar__cuda_scan;

/* Set while the reduce-only pass with the bulk-copy kernel forced runs (below). */
bool g_reduces_only = false;

/* The library's reduce, reduce_sum_wide and dot with the bulk-copy kernel at every size
 * (the library picks it from 1 GiB up: launch_shape.cuh), so the check's sizes, heads
 * and tails run through its tiles, its remainder and its stages. */
const auto reduce_bulk = xpar_cuda::reduce_entry<xpar_cuda::ReducePath::bulk>;
const auto reduce_sum_wide_bulk = xpar_cuda::reduce_sum_wide_entry<xpar_cuda::ReducePath::bulk>;
const auto dot_bulk = xpar_cuda::dot_entry<xpar_cuda::ReducePath::bulk>;
xpar_status (*g_reduce)(const xpar__exec *, xpar_dtype, xpar_reduction, const void *, size_t,
                        void *) = xpar__cuda_reduce;
xpar_status (*g_reduce_sum_wide)(const xpar__exec *, xpar_dtype, const void *, size_t,
                                 void *) = xpar__cuda_reduce_sum_wide;
xpar_status (*g_dot)(const xpar__exec *, xpar_dtype, const void *, const void *, size_t,
                     void *) = xpar__cuda_dot;

template <class T>
void check_case(xpar__cuda_state *st, const Buffers &buf, const Shape &shape, size_t n, int off,
                bool exact_serial_only) {
  using W = typename Traits<T>::Wide;
  const Case c{Traits<T>::name(), shape.name, n, off};
  const xpar_dtype dt = Traits<T>::id;
  const long double eps = Traits<T>::is_float ? (long double)std::numeric_limits<T>::epsilon() : 0;
  const bool serial = one_thread(shape);
  xpar__exec ex;
  memset(&ex, 0, sizeof ex);
  ex.cuda = st;
  ex.serial = shape.serial;
  ex.grid = shape.grid;
  ex.block = shape.block;

  Rng rng{g_seed ^ (n * 0x100000001b3ull) ^ ((uint64_t)off << 40) ^ ((uint64_t)dt << 48) ^
          ((uint64_t)(shape.grid * 131 + shape.block) << 20)};
  std::vector<T> x(n), y(n);
  for (auto &v : x) v = random_value<T>(rng);
  for (auto &v : y) v = random_value<T>(rng);
  const int off_y = (off * 3) % 4; /* 0,3,2,1: equal and mismatched alignment */
  T *dx = at<T>(buf.a, off);
  T *dy = at<T>(buf.b, off_y);
  T *dout = at<T>(buf.c, off);
  if (n) {
    upload(dx, x.data(), n * sizeof(T));
    upload(dy, y.data(), n * sizeof(T));
  }

  /* Serial references (the CPU serial tier's loops) and long double ones. */
  long double abs_sum = 0, ref_sum = 0, abs_dot = 0, ref_dot = 0;
  for (size_t i = 0; i < n; i++) {
    abs_sum += fabsl((long double)x[i]);
    ref_sum += (long double)x[i];
    abs_dot += fabsl((long double)x[i] * (long double)y[i]);
    ref_dot += (long double)x[i] * (long double)y[i];
  }
  const long double tol_sum = (long double)(n + 2) * eps * abs_sum;

  /* reduce: sum, min, max */
  for (int o = 0; o < 3 && !g_scans_only; o++) {
    const xpar_reduction op = (xpar_reduction)o;
    const char *what = o == 0 ? "reduce-sum" : o == 1 ? "reduce-min" : "reduce-max";
    T want = h_identity<T>(op);
    for (size_t i = 0; i < n; i++) want = h_apply(op, want, x[i]);
    T got;
    memset(&got, 0x5A, sizeof got);
    g_checks++;
    xpar_status s = g_reduce(&ex, dt, op, dx, n, &got);
    if (s != XPAR_OK) {
      printf("FAIL %s %s n=%zu shape=%s: %s %s\n", what, c.dtype, n, c.shape, xpar_status_name(s),
             xpar_last_error_detail());
      g_failures++;
      continue;
    }
    const bool exact_needed = serial || o != 0 || !Traits<T>::is_float;
    if (exact_needed ? !same_bits(got, want) && !(got == want && o != 0)
                     : !close_enough(got, want, ref_sum, tol_sum))
      report(c, what, 0, got, want);

    /* The same reduce with the result on the device, queued (nowait). */
    if (o == 0 && !exact_serial_only) {
      xpar__exec dev = ex;
      dev.result_on_device = 1;
      dev.nowait = 1;
      GB_CUDA(cudaMemset(buf.r, 0x5A, 16));
      GB_CUDA(cudaDeviceSynchronize());
      g_checks++;
      s = g_reduce(&dev, dt, op, dx, n, buf.r);
      if (s == XPAR_OK) s = B.wait(st);
      T got_dev;
      GB_CUDA(cudaMemcpy(&got_dev, buf.r, sizeof got_dev, cudaMemcpyDeviceToHost));
      if (s != XPAR_OK || !same_bits(got_dev, got))
        report(c, "reduce-sum-result-on-device", 0, got_dev, got, "(differs from the host result)");
    }
  }
  /* reduce_sum_wide */
  if (!g_scans_only) {
    W want = 0;
    for (size_t i = 0; i < n; i++) want = h_add<W>(want, (W)x[i]);
    W got;
    memset(&got, 0x5A, sizeof got);
    g_checks++;
    xpar_status s = g_reduce_sum_wide(&ex, dt, dx, n, &got);
    const long double tol = (long double)(n + 2) * (long double)std::numeric_limits<W>::epsilon() *
                            (Traits<W>::is_float ? abs_sum : 0);
    if (s != XPAR_OK)
      report(c, "reduce_sum_wide (status)", 0, (W)s, (W)0);
    else if (serial || !Traits<T>::is_float ? !same_bits(got, want)
                                            : !close_enough(got, want, ref_sum, tol))
      report(c, "reduce_sum_wide", 0, got, want);
  }

  /* dot */
  if (!g_scans_only) {
    T want = 0;
    for (size_t i = 0; i < n; i++) want = h_add(want, h_mul(x[i], y[i]));
    T got;
    memset(&got, 0x5A, sizeof got);
    g_checks++;
    xpar_status s = g_dot(&ex, dt, dx, dy, n, &got);
    const long double tol = (long double)(n + 2) * eps * abs_dot;
    if (s != XPAR_OK)
      report(c, "dot (status)", 0, (T)s, (T)0);
    else if (serial || !Traits<T>::is_float ? !same_bits(got, want)
                                            : !close_enough(got, want, ref_dot, tol))
      report(c, "dot", 0, got, want);
  }

  if (g_reduces_only) return;

  /* scan: op x kind, out of place; in place for two of them; each again from a carry-in
   * (xpar_scan_init: one random init per case, for every op and kind) */
  const T init = random_value<T>(rng);
  xpar__scalar init_scalar;
  memset(&init_scalar, 0, sizeof init_scalar);
  memcpy(init_scalar.bytes, &init, sizeof init);
  for (int o = 0; o < 3; o++) {
    for (int k = 0; k < 2; k++) {
      if (exact_serial_only && o != 0) continue;
      const xpar_reduction op = (xpar_reduction)o;
      const xpar_scan_kind kind = (xpar_scan_kind)k;
      static const char *names[3][2] = {{"scan-sum-incl", "scan-sum-excl"},
                                        {"scan-min-incl", "scan-min-excl"},
                                        {"scan-max-incl", "scan-max-excl"}};
      for (int run_case = 0; run_case < 4; run_case++) {
        const int in_place = run_case & 1, with_init = run_case >> 1;
        if (in_place && !((o == 0 && k == 0) || (o == 2 && k == 1))) continue;
        char what[48];
        snprintf(what, sizeof what, "%s%s%s", names[o][k], in_place ? "-inplace" : "",
                 with_init ? "-init" : "");
        poison<T>(buf.c, n + 4 + kPad);
        const T *src = dx;
        if (in_place && n) {
          upload(dout, x.data(), n * sizeof(T));
          src = dout;
        }
        g_checks++;
        xpar_status s = g_scan(&ex, dt, op, kind, with_init ? &init_scalar : NULL, src, dout, n);
        if (s != XPAR_OK) {
          printf("FAIL %s %s n=%zu shape=%s: %s %s\n", what, c.dtype, n, c.shape,
                 xpar_status_name(s), xpar_last_error_detail());
          g_failures++;
          continue;
        }
        std::vector<T> h = download<T>(buf.c, off + n + kPad);
        check_untouched(c, what, h, off, n);
        /* The serial loop from init (or the identity); init is one more term of the
         * float tolerance. */
        T run = with_init ? init : h_identity<T>(op);
        long double ref = with_init ? (long double)init : 0;
        long double abs_prefix = with_init ? fabsl((long double)init) : 0;
        for (size_t i = 0; i < n; i++) {
          T want;
          long double ref_i, abs_i;
          if (kind == XPAR_EXCLUSIVE) {
            want = run, ref_i = ref, abs_i = abs_prefix;
            run = h_apply(op, run, x[i]);
            ref += (long double)x[i];
            abs_prefix += fabsl((long double)x[i]);
          } else {
            run = h_apply(op, run, x[i]);
            ref += (long double)x[i];
            abs_prefix += fabsl((long double)x[i]);
            want = run, ref_i = ref, abs_i = abs_prefix;
          }
          const T got = h[off + i];
          const bool exact_needed = serial || o != 0 || !Traits<T>::is_float;
          const bool ok = exact_needed ? (same_bits(got, want) || (o != 0 && got == want))
                                       : close_enough(got, want, ref_i,
                                                      (long double)(i + 2 + with_init) * eps *
                                                          abs_i);
          if (!ok) {
            report(c, what, i, got, want);
            break;
          }
        }
      }
    }
  }
  if (exact_serial_only || g_scans_only) return;

  /* axpy: y = alpha * x + y, and x == y */
  {
    const T alpha = random_value<T>(rng);
    for (int alias = 0; alias < 2; alias++) {
      const char *what = alias ? "axpy-x-is-y" : "axpy";
      poison<T>(buf.c, n + 4 + kPad);
      T *dyy = at<T>(buf.c, off_y);
      if (n) upload(dyy, y.data(), n * sizeof(T));
      g_checks++;
      xpar_status s = B.axpy(&ex, dt, &alpha, alias ? dyy : dx, dyy, n);
      if (s != XPAR_OK) {
        report(c, what, 0, (T)s, (T)0, "(status)");
        continue;
      }
      std::vector<T> h = download<T>(buf.c, off_y + n + kPad);
      check_untouched(c, what, h, off_y, n);
      for (size_t i = 0; i < n; i++) {
        const T xi = alias ? y[i] : x[i];
        const T want = h_add(h_mul(alpha, xi), y[i]);
        if (!same_bits(h[off_y + i], want)) {
          report(c, what, i, h[off_y + i], want);
          break;
        }
      }
    }
  }

  /* add: z = x + y, and z == x */
  for (int alias = 0; alias < 2; alias++) {
    const char *what = alias ? "add-z-is-x" : "add";
    poison<T>(buf.c, n + 4 + kPad);
    const T *xin = dx;
    if (alias && n) {
      upload(dout, x.data(), n * sizeof(T));
      xin = dout;
    }
    g_checks++;
    xpar_status s = B.add(&ex, dt, xin, dy, dout, n);
    if (s != XPAR_OK) {
      report(c, what, 0, (T)s, (T)0, "(status)");
      continue;
    }
    std::vector<T> h = download<T>(buf.c, off + n + kPad);
    check_untouched(c, what, h, off, n);
    for (size_t i = 0; i < n; i++) {
      const T want = h_add(x[i], y[i]);
      if (!same_bits(h[off + i], want)) {
        report(c, what, i, h[off + i], want);
        break;
      }
    }
  }

  /* fill */
  {
    const T value = random_value<T>(rng);
    poison<T>(buf.c, n + 4 + kPad);
    g_checks++;
    xpar_status s = B.fill(&ex, dt, &value, dout, n);
    if (s != XPAR_OK) {
      report(c, "fill", 0, (T)s, (T)0, "(status)");
    } else {
      std::vector<T> h = download<T>(buf.c, off + n + kPad);
      check_untouched(c, "fill", h, off, n);
      for (size_t i = 0; i < n; i++)
        if (!same_bits(h[off + i], value)) {
          report(c, "fill", i, h[off + i], value);
          break;
        }
    }
  }
}

template <class T>
void check_dtype(xpar__cuda_state *st, const Buffers &buf, const std::vector<Shape> &shapes,
                 const std::vector<size_t> &sizes, const std::vector<int> &offsets,
                 bool big_serial) {
  const long before = g_failures;
  for (const Shape &shape : shapes)
    for (size_t n : sizes) {
      /* One GPU thread walks the data: keep those sizes moderate (a serial
       * scan of 2^20 elements takes ~0.1 s); the large serial case is below. */
      if (one_thread(shape) && n > 65537) continue;
      for (int off : offsets) check_case<T>(st, buf, shape, n, off, false);
    }
  if (big_serial && Traits<T>::is_float) {
    const Shape serial{"cuda-serial", 1, 0, 0};
    for (int off : {0, 1}) check_case<T>(st, buf, serial, kMaxN, off, true);
  }
  printf("  %-7s %s\n", Traits<T>::name(), g_failures == before ? "ok" : "FAILED");
  fflush(stdout);
}

/* ---- error paths and management functions ------------------------------------- */

void expect(bool cond, const char *what) {
  g_checks++;
  if (!cond) {
    g_failures++;
    printf("FAIL %s (detail: %s)\n", what, xpar_last_error_detail());
  }
}

void check_management(xpar__cuda_state *st, const Buffers &buf, int quick) {
  xpar_device_info info;
  expect(B.query(-1, &info) == XPAR_OK && info.usable == 1 && info.built_with_cuda == 1 &&
             info.name[0] && info.multiprocessors > 0 && info.total_memory > 0,
         "query of the default device");
  printf("  device: %s, sm_%d%d, %d SMs, %.1f GiB, %d visible\n", info.name, info.compute_major,
         info.compute_minor, info.multiprocessors, info.total_memory / 1073741824.0,
         info.device_count);
  expect(B.query(99, &info) == XPAR_OK && info.usable == 0 && info.reason[0],
         "query of a device beyond the count reports unusable");
  printf("  query(99): \"%s\"\n", info.reason);

  /* out of memory maps to XPAR_ERR_DEVICE_OUT_OF_MEMORY and leaves no error
   * (not under compute-sanitizer, which reports the failing cudaMalloc) */
  if (!quick) {
    void *huge = NULL;
    xpar_status s = B.alloc(st, (size_t)1 << 50, &huge);
    expect(s == XPAR_ERR_DEVICE_OUT_OF_MEMORY, "alloc(2^50) -> XPAR_ERR_DEVICE_OUT_OF_MEMORY");
    printf("  alloc(2^50): %s: %s\n", xpar_status_name(s), xpar_last_error_detail());
  }
  int32_t r = -1;
  expect(B.reduce_sum_wide != NULL, "table complete");
  xpar__exec ex;
  memset(&ex, 0, sizeof ex);
  ex.cuda = st;
  int32_t ones[64];
  for (int i = 0; i < 64; i++) ones[i] = 1;
  upload(buf.a, ones, sizeof ones);
  expect(B.reduce(&ex, XPAR_INT32, XPAR_SUM, buf.a, 64, &r) == XPAR_OK && r == 64,
         "reduce after an out-of-memory error");

  /* n = 0: identities, nothing touched */
  int32_t mn = 0, mx = 0, sm = 7;
  double fmn = 0;
  expect(B.reduce(&ex, XPAR_INT32, XPAR_MIN, NULL, 0, &mn) == XPAR_OK && mn == INT32_MAX,
         "min of nothing is INT32_MAX");
  expect(B.reduce(&ex, XPAR_INT32, XPAR_MAX, NULL, 0, &mx) == XPAR_OK && mx == INT32_MIN,
         "max of nothing is INT32_MIN");
  expect(B.reduce(&ex, XPAR_INT32, XPAR_SUM, NULL, 0, &sm) == XPAR_OK && sm == 0,
         "sum of nothing is 0");
  expect(B.reduce(&ex, XPAR_DOUBLE, XPAR_MIN, NULL, 0, &fmn) == XPAR_OK && isinf(fmn) && fmn > 0,
         "double min of nothing is +inf");
  {
    xpar__exec dev = ex;
    dev.result_on_device = 1;
    GB_CUDA(cudaMemset(buf.r, 0x5A, 8));
    GB_CUDA(cudaDeviceSynchronize());
    double got = 0;
    expect(B.reduce(&dev, XPAR_DOUBLE, XPAR_MAX, NULL, 0, buf.r) == XPAR_OK &&
               cudaMemcpy(&got, buf.r, 8, cudaMemcpyDeviceToHost) == cudaSuccess && isinf(got) &&
               got < 0,
           "double max of nothing, result on device, is -inf");
  }
  expect(B.scan(&ex, XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE, NULL, NULL, NULL, 0) == XPAR_OK,
         "scan of nothing");
  {
    xpar__scalar init;
    memset(&init, 0x5A, sizeof init);
    expect(B.scan(&ex, XPAR_DOUBLE, XPAR_MAX, XPAR_EXCLUSIVE, &init, NULL, NULL, 0) == XPAR_OK,
           "scan of nothing from an init");
  }
  expect(B.fill(&ex, XPAR_INT32, &sm, NULL, 0) == XPAR_OK, "fill of nothing");

  /* pointer kinds */
  xpar__ptr_kind kind;
  int on_stack = 0;
  void *pinned = NULL, *managed = NULL;
  GB_CUDA(cudaMallocHost(&pinned, 64));
  GB_CUDA(cudaMallocManaged(&managed, 64));
  expect(B.pointer_kind(&on_stack, &kind) == XPAR_OK && kind == XPAR__PTR_HOST_PAGEABLE,
         "pointer_kind(stack) = pageable");
  expect(B.pointer_kind(pinned, &kind) == XPAR_OK && kind == XPAR__PTR_HOST_PINNED,
         "pointer_kind(cudaMallocHost) = pinned");
  expect(B.pointer_kind(buf.a, &kind) == XPAR_OK && kind == XPAR__PTR_DEVICE,
         "pointer_kind(cudaMalloc) = device");
  expect(B.pointer_kind(managed, &kind) == XPAR_OK && kind == XPAR__PTR_MANAGED,
         "pointer_kind(cudaMallocManaged) = managed");
  expect(cudaGetLastError() == cudaSuccess, "pointer_kind leaves no CUDA error behind");
  cudaFreeHost(pinned);
  cudaFree(managed);

  /* staging slots grow and persist; copies both ways */
  void *s0 = NULL, *s0_again = NULL;
  expect(B.staging(st, 0, 1000, &s0) == XPAR_OK && s0, "staging slot 0");
  expect(B.staging(st, 0, 10, &s0_again) == XPAR_OK && s0_again == s0,
         "staging slot is cached, not reallocated");
  int32_t back[64] = {0};
  expect(B.copy(st, s0, ones, sizeof ones, XPAR__HOST_TO_DEVICE) == XPAR_OK &&
             B.copy(st, back, s0, sizeof back, XPAR__DEVICE_TO_HOST) == XPAR_OK &&
             memcmp(back, ones, sizeof ones) == 0,
         "copy host -> staging -> host");

  /* the application's stream, and back */
  cudaStream_t app;
  GB_CUDA(cudaStreamCreateWithFlags(&app, cudaStreamNonBlocking));
  expect(B.set_stream(st, app) == XPAR_OK, "set_stream(app)");
  r = -1;
  expect(B.reduce(&ex, XPAR_INT32, XPAR_SUM, buf.a, 64, &r) == XPAR_OK && r == 64,
         "reduce on the application's stream");
  expect(B.set_stream(st, NULL) == XPAR_OK, "set_stream(NULL)");
  GB_CUDA(cudaStreamDestroy(app));

  /* misaligned element pointers are refused, not faulted on */
  expect(B.reduce(&ex, XPAR_DOUBLE, XPAR_SUM, buf.a + 4, 4, &fmn) == XPAR_ERR_INVALID_ARGUMENT,
         "double reduce on a 4-byte aligned pointer is refused");

  const unsigned long long launches = xpar__cuda_launch_count(st);
  expect(B.reduce(&ex, XPAR_INT32, XPAR_SUM, buf.a, 64, &r) == XPAR_OK &&
             xpar__cuda_launch_count(st) == launches + 1,
         "one reduce is one kernel launch");
}

/* Every dtype in turn (--quick: int32, float, double only), in the order the checks
 * have always run. */
void check_dtypes(xpar__cuda_state *st, const Buffers &buf, const std::vector<Shape> &shapes,
                  const std::vector<size_t> &sizes, const std::vector<int> &offsets,
                  bool big_serial, bool quick) {
  check_dtype<int32_t>(st, buf, shapes, sizes, offsets, big_serial);
  if (!quick) {
    check_dtype<int64_t>(st, buf, shapes, sizes, offsets, big_serial);
    check_dtype<uint32_t>(st, buf, shapes, sizes, offsets, big_serial);
    check_dtype<uint64_t>(st, buf, shapes, sizes, offsets, big_serial);
  }
  check_dtype<float>(st, buf, shapes, sizes, offsets, big_serial);
  check_dtype<double>(st, buf, shapes, sizes, offsets, big_serial);
}

} // namespace

int gpu_check_run(const CheckOptions &opt) {
  g_seed = opt.seed;
  printf("xpar-gpu-bench --check%s: seed %llu\n", opt.quick ? " --quick" : "", g_seed);
  xpar__cuda_state *st = NULL;
  GB_XPAR(B.state_create(-1, NULL, &st));
  Buffers buf;
  const size_t bytes = (kMaxN + 64) * 8;
  GB_CUDA(cudaMalloc(&buf.a, bytes));
  GB_CUDA(cudaMalloc(&buf.b, bytes));
  GB_CUDA(cudaMalloc(&buf.c, bytes));
  GB_CUDA(cudaMalloc(&buf.r, 64));

  check_management(st, buf, opt.quick);
  printf("  management and error paths: %s\n", g_failures ? "FAILED" : "ok");

  std::vector<Shape> shapes;
  std::vector<size_t> sizes;
  std::vector<int> offsets;
  if (opt.quick) {
    /* 2x256: the tuned scan kernel in ticket order (20000 is 3 int32 / 7 double tiles) */
    shapes = {{"default", 0, 0, 0}, {"cuda-serial", 1, 0, 0}, {"7x33", 0, 7, 33},
              {"2x256", 0, 2, 256}};
    /* 20000: 3 tiles of the default int32 scan (8192), so the tuned look-back kernel
     * runs under the sanitizers too (5000 and below are one block: up to 2,048 4-byte /
     * 1,024 8-byte elements the small tile, above it the generic tile in one block of up
     * to 1,024 threads -- 2049 and 3000 for the latter's edges) */
    sizes = {0, 1, 33, 1000, 2049, 3000, 5000, 20000};
    offsets = {0, 1};
  } else {
    shapes = {{"default", 0, 0, 0},   {"cuda-serial", 1, 0, 0}, {"1x1", 0, 1, 1},
              {"3x97", 0, 3, 97},     {"7x33", 0, 7, 33},       {"1000x64", 0, 1000, 64},
              {"2x1024", 0, 2, 1024}, {"1x256", 0, 1, 256},     {"5x256", 0, 5, 256}};
    /* the one-block tiles' edges (scan_launch): the small tile up to 2,048 4-byte / 1,024
     * 8-byte elements, the generic tile in one block up to 8,192 / 3,584 */
    sizes = {0, 1, 31, 33, 1000, 1025, 2048, 2049, 3584, 8191, 65537, kMaxN};
    offsets = {0, 1, 2, 3};
  }
  const bool big_serial = !opt.quick;
  check_dtypes(st, buf, shapes, sizes, offsets, big_serial, opt.quick);
  printf("  all ops: %s\n", g_failures ? "FAILED" : "ok");

  /* The scan checks again with the look-back sleeping at every grid size (all dtypes,
   * sizes, offsets, shapes; not under --quick: sleeps change timing, not code paths the
   * sanitizers would see differently). */
  if (!opt.quick) {
    g_scan = scan_with_sleeps;
    g_scans_only = true;
    /* FAIL lines name the configuration through the shape: "sleeps/7x33". */
    std::vector<std::string> names;
    for (const Shape &sh : shapes) names.push_back(std::string("sleeps/") + sh.name);
    std::vector<Shape> vshapes = shapes;
    for (size_t i = 0; i < vshapes.size(); i++) vshapes[i].name = names[i].c_str();
    const long before = g_failures;
    const long checks_before = g_checks;
    check_dtypes(st, buf, vshapes, sizes, offsets, false, false);
    g_scans_only = false;
    g_scan = xpar__cuda_scan;
    printf("  scans with the look-back sleeps on: %ld scan checks %s\n",
           g_checks - checks_before, g_failures > before ? "FAILED" : "ok");
  }

  /* Reduce, wide sum and dot again through the bulk-copy kernel, forced at every size
   * (also under --quick, so that the sanitizers see its copies and barriers); the
   * serial shape keeps the load kernel's serial loop. */
  {
    g_reduce = reduce_bulk;
    g_reduce_sum_wide = reduce_sum_wide_bulk;
    g_dot = dot_bulk;
    g_reduces_only = true;
    std::vector<Shape> bshapes = {{"bulk", 0, 0, 0}, {"bulk/cuda-serial", 1, 0, 0}};
    const long before = g_failures;
    const long checks_before = g_checks;
    check_dtypes(st, buf, bshapes, sizes, offsets, false, false);
    g_reduces_only = false;
    g_reduce = xpar__cuda_reduce;
    g_reduce_sum_wide = xpar__cuda_reduce_sum_wide;
    g_dot = xpar__cuda_dot;
    printf("  reduces through the bulk-copy kernel: %ld checks %s\n", g_checks - checks_before,
           g_failures > before ? "FAILED" : "ok");
  }

  cudaFree(buf.a);
  cudaFree(buf.b);
  cudaFree(buf.c);
  cudaFree(buf.r);
  B.state_destroy(st);
  printf("CHECK %s: %ld checks, %ld failures (seed %llu)\n", g_failures ? "FAILED" : "PASSED",
         g_checks, g_failures, g_seed);
  return g_failures ? 1 : 0;
}

/*
 * A context-corrupting error: a reduce over an unmapped device address.
 * It must come back as XPAR_ERR_DEVICE_STICKY, and so must every later call,
 * on this state and on a new one.  Run in its own process (it ruins the
 * process's CUDA context by design).
 */
int gpu_sticky_test(void) {
  xpar__cuda_state *st = NULL;
  GB_XPAR(B.state_create(-1, NULL, &st));
  xpar__exec ex;
  memset(&ex, 0, sizeof ex);
  ex.cuda = st;
  int32_t r = 0;
  xpar_status s1 = B.reduce(&ex, XPAR_INT32, XPAR_SUM, (const void *)0x10000, 1 << 20, &r);
  printf("sticky: bad reduce -> %s: %s\n", xpar_status_name(s1), xpar_last_error_detail());
  void *p = NULL;
  xpar_status s2 = B.alloc(st, 64, &p);
  printf("sticky: later alloc -> %s: %s\n", xpar_status_name(s2), xpar_last_error_detail());
  xpar__cuda_state *st2 = NULL;
  xpar_status s3 = B.state_create(-1, NULL, &st2);
  printf("sticky: new state -> %s: %s\n", xpar_status_name(s3), xpar_last_error_detail());
  const int ok = s1 == XPAR_ERR_DEVICE_STICKY && s2 == XPAR_ERR_DEVICE_STICKY &&
                 s3 == XPAR_ERR_DEVICE_STICKY;
  B.state_destroy(st);
  printf("STICKY %s\n", ok ? "PASSED" : "FAILED");
  return ok ? 0 : 1;
}
