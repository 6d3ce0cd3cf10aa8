/*
 * `xpar-gpu-bench --select`: the CUDA backend's compaction (backend_cuda/device_select.cu)
 *  1. checked (--select-check): select (every predicate), select_flagged, partition, unique
 *     x every dtype x n (0, 1, 2, the tiles +- 1 of every path, primes up to 3e6) x
 *     offsets (aligned, and one element off: the unvectorized loads) x in place (not for
 *     partition) x tiers (synchronous with a host count, queued with a device count,
 *     synchronous with a device count, cuda-serial, captured into a CUDA graph and
 *     replayed twice) against a CPU loop, bit for bit; the count, the elements, and the
 *     memory after the count (not written: the 0xA5 fill, or in place the input);
 *     inputs with runs of duplicates, -0.0 / +0.0, NaNs of either sign, infinities;
 *  2. timed (--select-bench) beside CUB's DeviceSelect::If, DeviceSelect::Flagged,
 *     DevicePartition::If and DeviceSelect::Unique, n = 2^20..2^30 (8-byte: 2^29), about
 *     half selected, CUDA events, CUB and xpar interleaved, median; each row's count and
 *     elements compared with CUB's (a partition's rejected part against CUB's reversed
 *     one); GB/s of the fewest bytes (read n, write k; a partition writes n) and the
 *     ratio CUB time / xpar time (> 1: xpar faster);
 *  3. a synchronous select of 1024 int32 with its count on the host (host wall clock,
 *     median of 2001) beside CUB's If + count copy + stream sync.
 * Lines: "SELECTCHECK ...", "SELECTROW ...", "SELECTSMALL ...".
 */
#include <math.h>
#include <string.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <limits>
#include <vector>

#include <cub/device/device_partition.cuh>
#include <cub/device/device_select.cuh>

#include "base/sort_key.h"
#include "gpu_bench.h"
#include "gpu_timing_util.cuh"

namespace {

const xpar__backend &B = xpar__cuda_backend;

double now_us() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

const char *kind_names[] = {"select", "flagged", "partition", "unique"};
const char *pred_names[] = {"LT", "LE", "EQ", "NE", "GE", "GT", "IN_RANGE"};

template <class T> bool host_holds(T x, int pred, T v, T hi) {
  switch (pred) {
    case XPAR_LT: return x < v;
    case XPAR_LE: return x <= v;
    case XPAR_EQ: return x == v;
    case XPAR_NE: return x != v;
    case XPAR_GE: return x >= v;
    case XPAR_GT: return x > v;
    default: return v <= x && x < hi;
  }
}

template <class T> uint64_t host_radix(T x) {
  if (sizeof(T) == 4) {
    uint32_t b;
    memcpy(&b, &x, 4);
    const int cls = std::is_same<T, float>::value      ? XPAR__SORT_KEY_FLOAT
                    : std::is_same<T, uint32_t>::value ? XPAR__SORT_KEY_UNSIGNED
                                                       : XPAR__SORT_KEY_SIGNED;
    return xpar__sort_radix32(b, cls, 0);
  }
  uint64_t b;
  memcpy(&b, &x, 8);
  const int cls = std::is_same<T, double>::value      ? XPAR__SORT_KEY_FLOAT
                  : std::is_same<T, uint64_t>::value ? XPAR__SORT_KEY_UNSIGNED
                                                     : XPAR__SORT_KEY_SIGNED;
  return xpar__sort_radix64(b, cls, 0);
}

/* Runs of duplicates; floats with the corner cases. */
template <class T> void make_values(std::vector<T> &v, size_t n, std::mt19937_64 &rng) {
  v.resize(n);
  const int spread = (int)(rng() % 3);
  T cur = T(0);
  for (size_t i = 0; i < n; i++) {
    if (i == 0 || rng() % 3 != 0) { /* a new value; else the run goes on */
      uint64_t r = rng();
      if (spread == 0) r %= 8;
      else if (spread == 1) r %= 1000;
      if (std::is_floating_point<T>::value) {
        const int c = (int)(rng() % 16);
        double f;
        if (c == 0) f = 0.0;
        else if (c == 1) f = -0.0;
        else if (c == 2) f = NAN;
        else if (c == 3) f = -NAN;
        else if (c == 4) f = (rng() & 1) ? INFINITY : -INFINITY;
        else f = ((double)(int64_t)(r % 2001) - 1000.0) * 0.25;
        cur = (T)f;
        if (c == 2 || c == 3) { /* NaN payloads */
          if (sizeof(T) == 4) {
            uint32_t b;
            memcpy(&b, &cur, 4);
            b |= (uint32_t)(rng() % 4);
            memcpy(&cur, &b, 4);
          } else {
            uint64_t b;
            memcpy(&b, &cur, 8);
            b |= rng() % 4;
            memcpy(&cur, &b, 8);
          }
        }
      } else if (spread == 2) {
        memcpy(&cur, &r, sizeof(T));
      } else {
        cur = (T)((int64_t)r - 500);
      }
    }
    v[i] = cur;
  }
}

struct CheckBufs {
  char *in, *out;
  unsigned char *flags;
  uint64_t *dcount;
  size_t cap;
};

/* tier: 0 sync (host count), 1 nowait + device count + wait, 2 sync with a device count,
 * 3 serial (host count), 4 captured into a graph (device count), replayed twice. */
template <class T>
int check_one(xpar__cuda_state *st, CheckBufs &d, xpar_dtype t, int kind, int pred, size_t n,
              size_t offset, bool inplace, int tier, std::mt19937_64 &rng) {
  std::vector<T> in;
  make_values(in, n, rng);
  std::vector<unsigned char> flags(n + 1);
  for (size_t i = 0; i < n; i++) {
    const uint64_t r = rng();
    flags[i] = (r & 1) ? 0 : (unsigned char)(1 + (r >> 8) % 255);
  }
  T v = n ? in[rng() % n] : T(1), hi = n ? in[rng() % n] : T(2);
  if (rng() % 4 == 0) hi = v; /* an empty range */
  /* reference */
  std::vector<T> want;
  want.reserve(n);
  std::vector<T> rejected;
  for (size_t i = 0; i < n; i++) {
    bool keep;
    if (kind == XPAR__SELECT_IF || kind == XPAR__PARTITION) keep = host_holds<T>(in[i], pred, v, hi);
    else if (kind == XPAR__SELECT_FLAGGED) keep = flags[i] != 0;
    else keep = i == 0 || host_radix<T>(in[i]) != host_radix<T>(in[i - 1]);
    if (keep) want.push_back(in[i]);
    else rejected.push_back(in[i]);
  }
  const uint64_t want_count = want.size();
  if (kind == XPAR__PARTITION) want.insert(want.end(), rejected.begin(), rejected.end());

  T *din = reinterpret_cast<T *>(d.in) + offset;
  T *dout = inplace ? din : reinterpret_cast<T *>(d.out) + offset;
  unsigned char *dflags = d.flags + offset;
  GB_CUDA(cudaMemset(d.out, 0xA5, d.cap));
  GB_CUDA(cudaMemset(d.dcount, 0xA5, 8));
  if (n) GB_CUDA(cudaMemcpy(din, in.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  if (n) GB_CUDA(cudaMemcpy(dflags, flags.data(), n, cudaMemcpyHostToDevice));

  xpar__select_spec s;
  memset(&s, 0, sizeof s);
  s.kind = (xpar__select_kind)kind;
  s.dtype = t;
  s.pred = (xpar_predicate)pred;
  memcpy(s.value.bytes, &v, sizeof(T));
  memcpy(s.hi.bytes, &hi, sizeof(T));
  s.in = din;
  s.flags = dflags;
  s.out = dout;
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
  if (tier == 4) {
    cudaStream_t cs;
    GB_CUDA(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking));
    GB_XPAR(B.set_stream(st, (void *)cs));
    cudaGraph_t g;
    cudaGraphExec_t ge;
    GB_CUDA(cudaStreamBeginCapture(cs, cudaStreamCaptureModeGlobal));
    ex.captured = 1;
    GB_XPAR(B.select(&ex, &s));
    GB_CUDA(cudaStreamEndCapture(cs, &g));
    GB_CUDA(cudaGraphInstantiate(&ge, g, 0));
    for (int r = 0; r < 2; r++) { /* the second replay finds the first's status words */
      if (inplace && r == 1) break;
      GB_CUDA(cudaGraphLaunch(ge, cs));
      GB_CUDA(cudaStreamSynchronize(cs));
    }
    GB_CUDA(cudaGraphExecDestroy(ge));
    GB_CUDA(cudaGraphDestroy(g));
    GB_XPAR(B.set_stream(st, NULL));
    GB_CUDA(cudaStreamDestroy(cs));
  } else {
    GB_XPAR(B.select(&ex, &s));
    if (tier == 1) GB_XPAR(B.wait(st));
  }
  uint64_t got_count = host_count;
  if (on_device) GB_CUDA(cudaMemcpy(&got_count, d.dcount, 8, cudaMemcpyDeviceToHost));
  std::vector<T> got(n + 1);
  if (n) GB_CUDA(cudaMemcpy(got.data(), dout, n * sizeof(T), cudaMemcpyDeviceToHost));
  std::vector<T> in_after(n + 1);
  if (n && !inplace) GB_CUDA(cudaMemcpy(in_after.data(), din, n * sizeof(T), cudaMemcpyDeviceToHost));
  size_t bad = 0, first = (size_t)-1;
  const size_t written = kind == XPAR__PARTITION ? n : (size_t)want_count;
  if (got_count != want_count) bad++, first = 0;
  for (size_t i = 0; i < n && got_count == want_count; i++) {
    bool ok;
    if (i < written) ok = memcmp(&got[i], &want[i], sizeof(T)) == 0;
    else if (inplace) ok = memcmp(&got[i], &in[i], sizeof(T)) == 0; /* not written */
    else {
      unsigned char fill[sizeof(T)];
      memset(fill, 0xA5, sizeof fill);
      ok = memcmp(&got[i], fill, sizeof(T)) == 0;
    }
    if (!ok) {
      bad++;
      if (first == (size_t)-1) first = i;
    }
  }
  if (!inplace && n && memcmp(in_after.data(), in.data(), n * sizeof(T)) != 0) bad++;
  if (!inplace) { /* nothing past n */
    unsigned char tail[4];
    GB_CUDA(cudaMemcpy(tail, dout + n, 4, cudaMemcpyDeviceToHost));
    if (tail[0] != 0xA5 || tail[3] != 0xA5) bad++;
  }
  if (bad) {
    printf("SELECTCHECK FAIL %s %s%s%s n=%zu offset=%zu tier=%d: count %llu (want %llu), "
           "%zu bad, first at %zu\n",
           kind_names[kind], xpar_dtype_name(t),
           kind == XPAR__SELECT_IF || kind == XPAR__PARTITION ? " " : "",
           kind == XPAR__SELECT_IF || kind == XPAR__PARTITION ? pred_names[pred] : "",
           n, offset, tier, (unsigned long long)got_count, (unsigned long long)want_count, bad,
           first);
    if (inplace) printf("SELECTCHECK (in place)\n");
    return 1;
  }
  return 0;
}

int check_dispatch(xpar__cuda_state *st, CheckBufs &d, xpar_dtype t, int kind, int pred,
                   size_t n, size_t offset, bool inplace, int tier, std::mt19937_64 &rng) {
  switch (t) {
    case XPAR_INT32: return check_one<int32_t>(st, d, t, kind, pred, n, offset, inplace, tier, rng);
    case XPAR_UINT32: return check_one<uint32_t>(st, d, t, kind, pred, n, offset, inplace, tier, rng);
    case XPAR_FLOAT: return check_one<float>(st, d, t, kind, pred, n, offset, inplace, tier, rng);
    case XPAR_INT64: return check_one<int64_t>(st, d, t, kind, pred, n, offset, inplace, tier, rng);
    case XPAR_UINT64: return check_one<uint64_t>(st, d, t, kind, pred, n, offset, inplace, tier, rng);
    default: return check_one<double>(st, d, t, kind, pred, n, offset, inplace, tier, rng);
  }
}

int select_check(xpar__cuda_state *st, unsigned long long seed, int quick) {
  std::mt19937_64 rng(seed);
  const size_t big = 3000017; /* a prime */
  CheckBufs d;
  d.cap = (big + 16) * 8;
  GB_CUDA(cudaMalloc(&d.in, d.cap));
  GB_CUDA(cudaMalloc(&d.out, d.cap));
  GB_CUDA(cudaMalloc(&d.flags, big + 16));
  GB_CUDA(cudaMalloc(&d.dcount, 8));
  /* one-block tiles: 512 x 4 / 512 x 2 items, its limit the look-back tile: 4096 / 2048 */
  const size_t sizes[] = {0, 1, 2, 3, 31, 32, 33, 127, 128, 129, 1023, 1024, 1025, 2047,
                          2048, 2049, 4095, 4096, 4097, 6143, 6144, 6145, 8191, 8192, 8193,
                          12289, 65537, 100003, 1048575, 1048577, big};
  const xpar_dtype ts[] = {XPAR_INT32, XPAR_UINT32, XPAR_FLOAT, XPAR_INT64, XPAR_UINT64,
                           XPAR_DOUBLE};
  int fails = 0, runs = 0;
  const double t0 = now_us();
  for (xpar_dtype t : ts)
    for (int kind = 0; kind < 4; kind++)
      for (size_t n : sizes)
        for (int variant = 0; variant < 3; variant++) {
          /* 0: aligned, 1: one element off, 2: in place (not a partition) */
          if (variant == 2 && kind == XPAR__PARTITION) continue;
          if (quick && (n > 20000 || t == XPAR_UINT32 || t == XPAR_UINT64)) continue;
          if (n > 100003 && variant == 1) continue;
          const int pred = (int)(rng() % XPAR_PREDICATE_COUNT_);
          fails += check_dispatch(st, d, t, kind, pred, n, variant == 1 ? 1 : 0, variant == 2,
                                  0, rng);
          runs++;
        }
  /* every predicate, both float types (NaN and -0.0 rules) and int32 */
  for (xpar_dtype t : {XPAR_INT32, XPAR_FLOAT, XPAR_DOUBLE})
    for (int pred = 0; pred < (int)XPAR_PREDICATE_COUNT_; pred++)
      for (size_t n : {(size_t)1000, (size_t)70001})
        for (int kind : {(int)XPAR__SELECT_IF, (int)XPAR__PARTITION}) {
          fails += check_dispatch(st, d, t, kind, pred, n, 0, false, 0, rng);
          runs++;
        }
  /* the other tiers, fewer sizes */
  const size_t tier_sizes[] = {0, 1, 1000, 4097, 9001, 70001};
  for (int tier = 1; tier <= 4; tier++)
    for (xpar_dtype t : ts)
      for (int kind = 0; kind < 4; kind++)
        for (size_t n : tier_sizes)
          for (int inplace = 0; inplace < 2; inplace++) {
            if (inplace && kind == XPAR__PARTITION) continue;
            if ((tier == 3 || quick) && n > 9001) continue; /* one thread */
            const int pred = (int)(rng() % XPAR_PREDICATE_COUNT_);
            fails += check_dispatch(st, d, t, kind, pred, n, 0, inplace != 0, tier, rng);
            runs++;
          }
  /* release_cache, then a call regrows the status words */
  GB_XPAR(B.release_cache(st));
  fails += check_dispatch(st, d, XPAR_INT32, XPAR__PARTITION, XPAR_LT, 100003, 0, false, 0, rng);
  runs++;
  GB_CUDA(cudaFree(d.in));
  GB_CUDA(cudaFree(d.out));
  GB_CUDA(cudaFree(d.flags));
  GB_CUDA(cudaFree(d.dcount));
  printf("SELECTCHECK %d calls, %d failed, seed %llu, %.1f s\n", runs, fails, seed,
         (now_us() - t0) * 1e-6);
  return fails != 0;
}

/* ---- timings ---------------------------------------------------------------------- */

template <class T> struct Less {
  T v;
  __host__ __device__ bool operator()(const T &x) const { return x < v; }
};

/* inputs of about half selected: random integers (< 0 for the signed types, below the
 * midpoint for unsigned), floats in [0, 1) (< 0.5); unique: runs of length 1 or 2 */
template <class T> __global__ void fill_unique_runs(T *p, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    uint32_t z = (uint32_t)i * 0x9e3779b9u;
    z ^= z >> 16;
    z *= 0x85ebca6bu;
    z ^= z >> 13;
    p[i] = (T)((i + (z & 1)) >> 1);
  }
}
/* flags set with probability keep_per_1024 / 1024 */
__global__ void fill_flags(unsigned char *f, size_t n, unsigned keep_per_1024) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    uint32_t z = (uint32_t)i * 0x9e3779b9u ^ 0x1234567u;
    z ^= z >> 16;
    z *= 0x85ebca6bu;
    z ^= z >> 13;
    f[i] = (unsigned char)((z & 1023u) < keep_per_1024);
  }
}
/* differences between xpar's partition tail (input order) and CUB's (reversed) */
template <class T>
__global__ void compare_tail(const T *x, const T *c, size_t k, size_t n, unsigned long long *bad) {
  for (size_t j = blockIdx.x * (size_t)blockDim.x + threadIdx.x; k + j < n;
       j += (size_t)gridDim.x * blockDim.x)
    if (x[k + j] != c[n - 1 - j]) atomicAdd(bad, 1ull);
}
template <class T>
__global__ void compare_prefix(const T *x, const T *c, size_t k, unsigned long long *bad) {
  for (size_t j = blockIdx.x * (size_t)blockDim.x + threadIdx.x; j < k;
       j += (size_t)gridDim.x * blockDim.x)
    if (x[j] != c[j]) atomicAdd(bad, 1ull);
}

struct Ctx {
  xpar__cuda_state *st;
  xpar__exec ex;
  int sms;
  unsigned long long *bad;
};

/* The value below which a fraction q of the inputs lies: uniform random bits for the
 * integers, [0, 1) for the floats. */
template <class T> T quantile_point(double q) {
  if constexpr (std::is_floating_point<T>::value) {
    return (T)q;
  } else {
    using U = typename std::make_unsigned<T>::type;
    const U step = (U)((double)(U)~U(0) * q);
    if constexpr (std::is_signed<T>::value)
      return (T)((U)std::numeric_limits<T>::min() + step);
    else
      return (T)step;
  }
}

/* One row: kind on n elements of T, a fraction q of them kept (select, flagged,
 * partition; unique keeps about two thirds, runs of one or two). */
template <class T>
void select_row(Ctx &c, xpar_dtype t, const char *tname, int kind, size_t n, double q = 0.5) {
  T *in, *out_x, *out_c;
  unsigned char *flags = NULL;
  uint64_t *cnt_x;
  int64_t *cnt_c;
  GB_CUDA(cudaMalloc(&in, n * sizeof(T)));
  GB_CUDA(cudaMalloc(&out_x, n * sizeof(T)));
  GB_CUDA(cudaMalloc(&out_c, n * sizeof(T)));
  GB_CUDA(cudaMalloc(&cnt_x, 8));
  GB_CUDA(cudaMalloc(&cnt_c, 8));
  if (kind == XPAR__UNIQUE)
    fill_unique_runs<T><<<4 * c.sms, 256>>>(in, n);
  else if (t == XPAR_FLOAT)
    fill_unit_floats<<<4 * c.sms, 256>>>((float *)in, n);
  else if (t == XPAR_DOUBLE)
    fill_unit_doubles<<<4 * c.sms, 256>>>((double *)in, n);
  else
    fill_random<<<4 * c.sms, 256>>>((uint32_t *)in, n * sizeof(T) / 4, 4321u);
  if (kind == XPAR__SELECT_FLAGGED) {
    GB_CUDA(cudaMalloc(&flags, n));
    fill_flags<<<4 * c.sms, 256>>>(flags, n, (unsigned)(q * 1024.0 + 0.5));
  }
  GB_CUDA(cudaGetLastError());
  const Less<T> op{quantile_point<T>(q)};
  void *temp = NULL;
  size_t tb = 0;
  const int64_t nn = (int64_t)n;
  auto cub_call = [&] {
    switch (kind) {
      case XPAR__SELECT_IF:
        GB_CUDA(cub::DeviceSelect::If(temp, tb, in, out_c, cnt_c, nn, op));
        break;
      case XPAR__SELECT_FLAGGED:
        GB_CUDA(cub::DeviceSelect::Flagged(temp, tb, in, flags, out_c, cnt_c, nn));
        break;
      case XPAR__PARTITION:
        GB_CUDA(cub::DevicePartition::If(temp, tb, in, out_c, cnt_c, nn, op));
        break;
      default:
        GB_CUDA(cub::DeviceSelect::Unique(temp, tb, in, out_c, cnt_c, nn));
        break;
    }
  };
  cub_call(); /* sizes the temporary storage */
  GB_CUDA(cudaMalloc(&temp, tb));
  xpar__select_spec s;
  memset(&s, 0, sizeof s);
  s.kind = (xpar__select_kind)kind;
  s.dtype = t;
  s.pred = XPAR_LT;
  const T v = quantile_point<T>(q);
  memcpy(s.value.bytes, &v, sizeof v);
  s.in = in;
  s.flags = flags;
  s.out = out_x;
  s.n = n;
  s.count = cnt_x;
  auto xpar_call = [&] { GB_XPAR(B.select(&c.ex, &s)); };
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
  uint64_t kx = 0;
  int64_t kc = 0;
  GB_CUDA(cudaMemcpy(&kx, cnt_x, 8, cudaMemcpyDeviceToHost));
  GB_CUDA(cudaMemcpy(&kc, cnt_c, 8, cudaMemcpyDeviceToHost));
  unsigned long long bad = 0;
  GB_CUDA(cudaMemset(c.bad, 0, 8));
  if ((int64_t)kx == kc) {
    compare_prefix<T><<<4 * c.sms, 256>>>(out_x, out_c, (size_t)kx, c.bad);
    if (kind == XPAR__PARTITION) compare_tail<T><<<4 * c.sms, 256>>>(out_x, out_c, (size_t)kx, n, c.bad);
    GB_CUDA(cudaMemcpy(&bad, c.bad, 8, cudaMemcpyDeviceToHost));
  } else {
    bad = 1;
  }
  const double es = (double)sizeof(T);
  double bytes = (double)n * es + (kind == XPAR__PARTITION ? (double)n : (double)kx) * es;
  if (kind == XPAR__SELECT_FLAGGED) bytes += (double)n;
  printf("SELECTROW %-9s %-6s n=2^%-2d k=%.3f  xpar %8.3f ms %7.1f GB/s | CUB %8.3f ms %7.1f GB/s | "
         "ratio %.3f | %s\n",
         kind_names[kind], tname, (int)log2((double)n), (double)kx / (double)n, mx,
         bytes / (mx * 1e6), mc, bytes / (mc * 1e6), mc / mx, bad ? "DIFFER" : "equal");
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  GB_CUDA(cudaFree(temp));
  GB_CUDA(cudaFree(in));
  GB_CUDA(cudaFree(out_x));
  GB_CUDA(cudaFree(out_c));
  GB_CUDA(cudaFree(cnt_x));
  GB_CUDA(cudaFree(cnt_c));
  if (flags) GB_CUDA(cudaFree(flags));
  GB_XPAR(B.release_cache(c.st));
}

void small_select(Ctx &c) {
  const size_t n = 1024;
  int32_t *in, *out, *out_c;
  int64_t *cnt_c, *cnt_h;
  GB_CUDA(cudaMalloc(&in, n * 4));
  GB_CUDA(cudaMalloc(&out, n * 4));
  GB_CUDA(cudaMalloc(&out_c, n * 4));
  GB_CUDA(cudaMalloc(&cnt_c, 8));
  GB_CUDA(cudaMallocHost(&cnt_h, 8));
  fill_random<<<8, 256>>>((uint32_t *)in, n, 777u);
  GB_CUDA(cudaDeviceSynchronize());
  cudaStream_t s;
  GB_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  xpar__cuda_state *st;
  GB_XPAR(B.state_create(0, (void *)s, &st));
  xpar__exec ex;
  memset(&ex, 0, sizeof ex);
  ex.cuda = st;
  xpar__select_spec sp;
  memset(&sp, 0, sizeof sp);
  sp.kind = XPAR__SELECT_IF;
  sp.dtype = XPAR_INT32;
  sp.pred = XPAR_LT;
  sp.in = in;
  sp.out = out;
  sp.n = n;
  uint64_t count = 0;
  sp.count = &count;
  const Less<int32_t> op{0};
  void *temp = NULL;
  size_t tb = 0;
  GB_CUDA(cub::DeviceSelect::If(temp, tb, in, out_c, cnt_c, (int)n, op, s));
  GB_CUDA(cudaMalloc(&temp, tb));
  auto wall = [&](auto &&f) {
    for (int i = 0; i < 200; i++) f();
    std::vector<double> tv;
    for (int i = 0; i < 2001; i++) {
      const double t0 = now_us();
      f();
      tv.push_back(now_us() - t0);
    }
    return median_of(tv);
  };
  double xs[2], cu[2];
  for (int round = 0; round < 2; round++) {
    xs[round] = wall([&] { GB_XPAR(B.select(&ex, &sp)); });
    cu[round] = wall([&] {
      GB_CUDA(cub::DeviceSelect::If(temp, tb, in, out_c, cnt_c, (int)n, op, s));
      GB_CUDA(cudaMemcpyAsync(cnt_h, cnt_c, 8, cudaMemcpyDeviceToHost, s));
      GB_CUDA(cudaStreamSynchronize(s));
    });
  }
  printf("SELECTSMALL select int32 n=1024, synchronous, count on the host: xpar %.2f / %.2f us; "
         "CUB If + count copy + stream sync %.2f / %.2f us; counts %llu / %lld %s\n",
         xs[0], xs[1], cu[0], cu[1], (unsigned long long)count, (long long)*cnt_h,
         (long long)count == *cnt_h ? "equal" : "DIFFER");
  B.state_destroy(st);
  GB_CUDA(cudaFree(temp));
  GB_CUDA(cudaFree(in));
  GB_CUDA(cudaFree(out));
  GB_CUDA(cudaFree(out_c));
  GB_CUDA(cudaFree(cnt_c));
  GB_CUDA(cudaFreeHost(cnt_h));
  GB_CUDA(cudaStreamDestroy(s));
}

} // namespace

int gpu_select_run(int quick, unsigned long long seed, int what) {
  cudaDeviceProp prop;
  GB_CUDA(cudaGetDeviceProperties(&prop, 0));
  printf("device: %s, %d SMs\n", prop.name, prop.multiProcessorCount);
  int rc = 0;
  if (what & 1) {
    xpar__cuda_state *st;
    GB_XPAR(B.state_create(0, NULL, &st));
    rc |= select_check(st, seed, quick);
    B.state_destroy(st);
  }
  if (!(what & 2)) return rc;
  Ctx c;
  c.ex = queued_exec_on_default_stream(&c.st);
  c.sms = prop.multiProcessorCount;
  GB_CUDA(cudaMalloc(&c.bad, 8));
  small_select(c);
  const int lg4[] = {20, 22, 24, 26, 28, 30};
  const int lg8[] = {20, 22, 24, 26, 28, 29};
  const int nq = quick ? 3 : 6;
  for (int kind = 0; kind < 4; kind++) {
    for (int i = 0; i < nq; i++) select_row<int32_t>(c, XPAR_INT32, "int32", kind, (size_t)1 << lg4[i]);
    if (kind != XPAR__SELECT_FLAGGED && kind != XPAR__UNIQUE)
      for (int i = 0; i < nq; i++) select_row<float>(c, XPAR_FLOAT, "float", kind, (size_t)1 << lg4[i]);
    for (int i = 0; i < nq; i++) select_row<int64_t>(c, XPAR_INT64, "int64", kind, (size_t)1 << lg8[i]);
    if (kind != XPAR__SELECT_FLAGGED && kind != XPAR__UNIQUE)
      for (int i = 0; i < nq; i++) select_row<double>(c, XPAR_DOUBLE, "double", kind, (size_t)1 << lg8[i]);
  }
  /* 1 % and 99 % kept, int32 and double, 2^20 .. 2^30 in steps of 2^4 (quick: 2^20) */
  const int lgq4[] = {20, 24, 28, 30}, lgq8[] = {20, 24, 28, 29};
  for (double q : {0.01, 0.99})
    for (int kind : {(int)XPAR__SELECT_IF, (int)XPAR__SELECT_FLAGGED, (int)XPAR__PARTITION})
      for (int i = 0; i < (quick ? 1 : 4); i++) {
        select_row<int32_t>(c, XPAR_INT32, "int32", kind, (size_t)1 << lgq4[i], q);
        select_row<double>(c, XPAR_DOUBLE, "double", kind, (size_t)1 << lgq8[i], q);
      }
  GB_CUDA(cudaFree(c.bad));
  B.state_destroy(c.st);
  return rc;
}
