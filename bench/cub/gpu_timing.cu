/*
 * `xpar-gpu-bench --bench`: the CUDA backend side by side with CUB in one run, as the
 * targets' table (table_line below) asks:
 *  - synchronous calls as an application sees them, on the state's own stream: xpar's
 *    reduce with the result on the host against CUB's reduce + cudaMemcpy of the result;
 *    xpar's scan against CUB's scan + cudaStreamSynchronize;
 *  - host wall clock AND CUDA events around every call, CUB and xpar interleaved call by
 *    call, 3 warm-ups each, median of 21; ratio = CUB time / xpar time (> 1: xpar faster);
 *  - every row checked: scans against CUB's output (integers exact, floats relative
 *    1e-3), reduces against CUB's result;
 *  - sizes 2^26..2^30 (4-byte) / 2^26..2^29 (8-byte scans), far beyond the 50 MB L2;
 *    the device-to-device copy as the ceiling;
 *  - small N: 1,024 device int32, synchronous, and the floors beside them (an empty
 *    kernel's launch alone, empty kernel + stream sync, a kernel stamping a pinned word
 *    that the host spins on).
 * Lines: "ROW ..." per measurement, then "TABLE ..." per row of the targets' table with
 * the range of ratios over N and the target.
 */
#include <algorithm>
#include <chrono>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include <cuda.h> /* types only: the driver is reached through the runtime */
#include <cudaTypedefs.h>
#include <cuda/functional>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>

#include "backend_cuda/cuda_state.cuh"
#include "backend_cuda/launch_shape.cuh"
#include "backend_cuda/reduce_kernel.cuh"
#include "gpu_bench.h"
#include "gpu_timing_util.cuh"

namespace {

const xpar__backend &B = xpar__cuda_backend;

double now_us() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

template <class F> double median_wall_us(F &&run, int warmup, int reps) {
  for (int i = 0; i < warmup; i++) run();
  std::vector<double> t;
  for (int i = 0; i < reps; i++) {
    const double t0 = now_us();
    run();
    t.push_back(now_us() - t0);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

/* GPU time of one call on stream s between two events (no host launch cost), median. */
template <class F> double median_event_us(cudaStream_t s, F &&run, int warmup, int reps) {
  cudaEvent_t a, b;
  GB_CUDA(cudaEventCreate(&a));
  GB_CUDA(cudaEventCreate(&b));
  for (int i = 0; i < warmup; i++) run();
  GB_CUDA(cudaStreamSynchronize(s));
  std::vector<double> t;
  for (int i = 0; i < reps; i++) {
    GB_CUDA(cudaEventRecord(a, s));
    run();
    GB_CUDA(cudaEventRecord(b, s));
    GB_CUDA(cudaEventSynchronize(b));
    float ms = 0;
    GB_CUDA(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms * 1e3);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

/* CUB and xpar, interleaved call by call: wall clock (us) and events (ms) of each. */
struct Pair {
  double cub_wall, xpar_wall, cub_ev, xpar_ev;
};
template <class C, class X>
Pair time_pair(cudaStream_t s, C &&cub_call, X &&xpar_call, int warmup, int reps) {
  cudaEvent_t a, b;
  GB_CUDA(cudaEventCreate(&a));
  GB_CUDA(cudaEventCreate(&b));
  for (int i = 0; i < warmup; i++) cub_call(), xpar_call();
  std::vector<double> cw, xw, ce, xe;
  auto one = [&](auto &&call, std::vector<double> &wall, std::vector<double> &ev) {
    GB_CUDA(cudaEventRecord(a, s));
    const double t0 = now_us();
    call(); /* synchronous: returns with the result */
    wall.push_back(now_us() - t0);
    GB_CUDA(cudaEventRecord(b, s));
    GB_CUDA(cudaEventSynchronize(b));
    float ms = 0;
    GB_CUDA(cudaEventElapsedTime(&ms, a, b));
    ev.push_back(ms);
  };
  for (int i = 0; i < reps; i++) {
    one(cub_call, cw, ce);
    one(xpar_call, xw, xe);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return {median_of(cw), median_of(xw), median_of(ce), median_of(xe)};
}

struct Row {
  std::string op, dtype;
  int lg;
  double bytes;
  Pair t;
  std::string check;
};
std::vector<Row> g_rows;

void print_row(const char *tag, const Row &r) {
  printf("%s %-18s %-7s 2^%-2d wall CUB %9.1f us xpar %9.1f us %6.3f | events CUB %8.3f ms "
         "xpar %8.3f ms %6.3f | xpar %5.0f GB/s  %s\n",
         tag, r.op.c_str(), r.dtype.c_str(), r.lg, r.t.cub_wall, r.t.xpar_wall,
         r.t.cub_wall / r.t.xpar_wall, r.t.cub_ev, r.t.xpar_ev, r.t.cub_ev / r.t.xpar_ev,
         r.bytes / (r.t.xpar_ev * 1e6), r.check.c_str());
  fflush(stdout);
}

template <class T> constexpr xpar_dtype dtype_of();
template <> constexpr xpar_dtype dtype_of<int32_t>() { return XPAR_INT32; }
template <> constexpr xpar_dtype dtype_of<float>() { return XPAR_FLOAT; }
template <> constexpr xpar_dtype dtype_of<int64_t>() { return XPAR_INT64; }
template <> constexpr xpar_dtype dtype_of<uint64_t>() { return XPAR_UINT64; }
template <> constexpr xpar_dtype dtype_of<double>() { return XPAR_DOUBLE; }
template <class T> const char *name_of();
template <> const char *name_of<int32_t>() { return "int32"; }
template <> const char *name_of<float>() { return "float"; }
template <> const char *name_of<int64_t>() { return "int64"; }
template <> const char *name_of<uint64_t>() { return "uint64"; }
template <> const char *name_of<double>() { return "double"; }

template <class T> void fill_input(void *in, size_t n, uint32_t salt) {
  if (std::is_same<T, float>::value)
    fill_unit_floats<<<1024, 256>>>((float *)in, n);
  else if (std::is_same<T, double>::value)
    fill_unit_doubles<<<1024, 256>>>((double *)in, n);
  else
    fill_random<<<1024, 256>>>((uint32_t *)in, n * sizeof(T) / 4, salt);
  GB_CUDA(cudaDeviceSynchronize());
}

struct Ctx {
  xpar__cuda_state *st;
  cudaStream_t s;
  void *in, *out_cub, *out_xpar, *d_result, *temp;
  size_t temp_bytes;
  CompareResult *cmp;
  int sms, reps;
};

enum ScanOpKind { SCAN_SUM, SCAN_MIN, SCAN_MAX };

/* One scan row: CUB's and xpar's synchronous scan of n elements of T. */
template <class T>
void scan_row(Ctx &c, ScanOpKind opk, bool exclusive, size_t n, const char *op_name) {
  xpar__exec ex;
  memset(&ex, 0, sizeof ex);
  ex.cuda = c.st;
  const T *in = (const T *)c.in;
  T *oc = (T *)c.out_cub, *ox = (T *)c.out_xpar;
  size_t tb = c.temp_bytes;
  const xpar_reduction xop = opk == SCAN_SUM ? XPAR_SUM : opk == SCAN_MIN ? XPAR_MIN : XPAR_MAX;
  auto cub_call = [&] {
    if (opk == SCAN_SUM && !exclusive)
      GB_CUDA(cub::DeviceScan::InclusiveSum(c.temp, tb, in, oc, (int64_t)n, c.s));
    else if (opk == SCAN_SUM)
      GB_CUDA(cub::DeviceScan::ExclusiveSum(c.temp, tb, in, oc, (int64_t)n, c.s));
    else if (opk == SCAN_MIN)
      GB_CUDA(cub::DeviceScan::InclusiveScan(c.temp, tb, in, oc, cuda::minimum<>{}, (int64_t)n, c.s));
    else
      GB_CUDA(cub::DeviceScan::InclusiveScan(c.temp, tb, in, oc, cuda::maximum<>{}, (int64_t)n, c.s));
    GB_CUDA(cudaStreamSynchronize(c.s));
  };
  auto xpar_call = [&] {
    GB_XPAR(B.scan(&ex, dtype_of<T>(), xop, exclusive ? XPAR_EXCLUSIVE : XPAR_INCLUSIVE, NULL,
                   in, ox, n));
  };
  GB_CUDA(cudaMemset(ox, 0xA5, n * sizeof(T)));
  Row r{op_name, name_of<T>(), (int)(log2((double)n) + 0.5), 2.0 * sizeof(T) * n,
        time_pair(c.s, cub_call, xpar_call, 3, c.reps), ""};
  const int mode = std::is_same<T, float>::value ? 1 : std::is_same<T, double>::value ? 2 : 0;
  const size_t words = mode == 0 ? n * sizeof(T) / 4 : n;
  const CompareResult h = compare_with(ox, oc, words, mode, c.cmp, c.sms);
  char v[64];
  snprintf(v, sizeof v, h.bad ? "MISMATCH %llu" : "ok", h.bad);
  r.check = v;
  g_rows.push_back(r);
  print_row("ROW", r);
}

/* One reduce row: CUB's reduce + cudaMemcpy of the result against xpar's reduce with the
 * result on the host.  kind: 0 sum, 1 min, 2 max. */
template <class T> void reduce_row(Ctx &c, int kind, size_t n, const char *op_name) {
  xpar__exec ex;
  memset(&ex, 0, sizeof ex);
  ex.cuda = c.st;
  const T *in = (const T *)c.in;
  T *dr = (T *)c.d_result;
  size_t tb = c.temp_bytes;
  T cub_r = 0, xpar_r = 0;
  auto cub_call = [&] {
    if (kind == 0)
      GB_CUDA(cub::DeviceReduce::Sum(c.temp, tb, in, dr, (int64_t)n, c.s));
    else if (kind == 1)
      GB_CUDA(cub::DeviceReduce::Min(c.temp, tb, in, dr, (int64_t)n, c.s));
    else
      GB_CUDA(cub::DeviceReduce::Max(c.temp, tb, in, dr, (int64_t)n, c.s));
    GB_CUDA(cudaMemcpyAsync(&cub_r, dr, sizeof(T), cudaMemcpyDeviceToHost, c.s));
    GB_CUDA(cudaStreamSynchronize(c.s));
  };
  auto xpar_call = [&] {
    GB_XPAR(B.reduce(&ex, dtype_of<T>(), kind == 0 ? XPAR_SUM : kind == 1 ? XPAR_MIN : XPAR_MAX,
                     in, n, &xpar_r));
  };
  Row r{op_name, name_of<T>(), (int)(log2((double)n) + 0.5), (double)sizeof(T) * n,
        time_pair(c.s, cub_call, xpar_call, 3, c.reps), ""};
  const double a = (double)cub_r, b = (double)xpar_r;
  const bool ok = std::is_integral<T>::value ? cub_r == xpar_r
                                             : fabs(a - b) <= 1e-6 * fmax(fabs(a), 1.0);
  r.check = ok ? "ok" : "DIFFERS";
  g_rows.push_back(r);
  print_row("ROW", r);
}

/* xpar-only rows against xpar's own sum (no CUB counterpart): wide sum, dot. */
void own_row(Ctx &c, const char *op, const char *dtype, size_t n, double bytes,
             const std::function<void()> &call, double sum_ms) {
  /* events on the legacy stream bracket the work of the state's (blocking) stream */
  const double ms = median_ms(call, 3, c.reps);
  printf("OWN %-18s %-7s 2^%-2d events %8.3f ms, %5.0f GB/s read (%.3f x the int32 sum's rate)\n",
         op, dtype, (int)(log2((double)n) + 0.5), ms, bytes / ms / 1e6,
         (bytes / ms) / (4.0 * n / sum_ms));
  fflush(stdout);
}

/* The reduce's former read path, as a bench-only source: the same kernel reading through
 * __ldg (ld.global.nc, L1-allocating, no L2 prefetch hint); the library reads with
 * ld.global.nc.L1::no_allocate.L2::256B (thread_load.cuh's load16_readonly). */
template <class T> struct LdgSource {
  using Loaded = xpar_cuda::Pack16<T>;
  static constexpr int per_vector = Loaded::count;
  const T *x;
  __device__ __forceinline__ T scalar(size_t i) const { return __ldg(x + i); }
  __device__ __forceinline__ Loaded vector(size_t head, size_t v) const {
    Loaded l;
    l.raw = __ldg(reinterpret_cast<const int4 *>(x + head + v * per_vector));
    return l;
  }
  __device__ __forceinline__ T element(const Loaded &l, int e) const { return l.e[e]; }
};

/* The reduce's tuning space: 16-byte loads in flight per thread x resident blocks per SM
 * (grid = SMs x that) x read path, sum, events, queued with the result on the device (as
 * CUB's), CUB interleaved. */
template <class T, unsigned LOADS>
xpar_status sweep_reduce(const xpar__exec *ex, const void *in, size_t n, void *result) {
  XPAR__FORWARD(xpar__cuda_begin(ex->cuda, "reduce"));
  const xpar_cuda::ArraySource<T, T> src{static_cast<const T *>(in), true}; /* streaming */
  return xpar_cuda::run_reduce<xpar_cuda::SumOp<T>, xpar_cuda::ArraySource<T, T>, LOADS,
                               xpar_cuda::ReducePath::loads>(
      ex, src, n, xpar_cuda::split_for_vectors<T>(in, n), result, "reduce");
}
template <class T, unsigned LOADS>
xpar_status sweep_reduce_ldg(const xpar__exec *ex, const void *in, size_t n, void *result) {
  XPAR__FORWARD(xpar__cuda_begin(ex->cuda, "reduce"));
  const LdgSource<T> src{static_cast<const T *>(in)};
  return xpar_cuda::run_reduce<xpar_cuda::SumOp<T>, LdgSource<T>, LOADS, xpar_cuda::ReducePath::loads>(
      ex, src, n, xpar_cuda::split_for_vectors<T>(in, n), result, "reduce");
}
template <class T> void reduce_sweep(Ctx &c, int lg_min, int lg_max, int lg_step) {
  typedef xpar_status (*Run)(const xpar__exec *, const void *, size_t, void *);
  struct Config {
    const char *name;
    Run run;
    unsigned per_sm;
  };
  const Config configs[] = {{"8 na256, 8/SM", sweep_reduce<T, 8>, 8}, /* the library's */
                            {"16 na256, 4/SM", sweep_reduce<T, 16>, 4},
                            {"4 na256, 8/SM", sweep_reduce<T, 4>, 8},
                            {"8 ldg, 8/SM", sweep_reduce_ldg<T, 8>, 8},
                            {"16 ldg, 4/SM", sweep_reduce_ldg<T, 16>, 4}};
  fill_input<T>(c.in, (size_t)1 << lg_max, 31u);
  for (int lg = lg_min; lg <= lg_max; lg += lg_step) {
    const size_t n = (size_t)1 << lg;
    size_t tb = c.temp_bytes;
    for (const Config &cf : configs) {
      xpar__exec ex;
      memset(&ex, 0, sizeof ex);
      ex.cuda = c.st;
      ex.nowait = 1;
      ex.result_on_device = 1;
      ex.block = 256;
      ex.grid = (unsigned)c.sms * cf.per_sm;
      const Pair t = time_pair(
          c.s,
          [&] {
            GB_CUDA(cub::DeviceReduce::Sum(c.temp, tb, (const T *)c.in, (T *)c.d_result,
                                           (int64_t)n, c.s));
          },
          [&] { GB_XPAR(cf.run(&ex, c.in, n, c.d_result)); }, 3, c.reps);
      printf("REDUCESWEEP %-6s 2^%d %-15s events CUB %8.3f ms xpar %8.3f ms  %6.3f x CUB  "
             "%5.0f GB/s\n", name_of<T>(), lg, cf.name, t.cub_ev, t.xpar_ev,
             t.cub_ev / t.xpar_ev, sizeof(T) * (double)n / t.xpar_ev / 1e6);
      fflush(stdout);
    }
  }
}

__global__ void empty_kernel() {}
__global__ void stamp_kernel(unsigned long long *w, unsigned long long v, int fence) {
  if (fence == 1) __threadfence_system();
  if (fence == 2)
    asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(w), "l"(v) : "memory");
  else
    asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(w), "l"(v) : "memory");
}

/* The targets' table: ratio range over the rows that match, against the target. */
void table_line(const char *what, const std::vector<std::string> &ops,
                const std::vector<std::string> &dtypes, double target) {
  double lo_w = 1e9, hi_w = 0, lo_e = 1e9, hi_e = 0;
  int rows = 0;
  for (const Row &r : g_rows) {
    if (std::find(ops.begin(), ops.end(), r.op) == ops.end()) continue;
    if (std::find(dtypes.begin(), dtypes.end(), r.dtype) == dtypes.end()) continue;
    const double w = r.t.cub_wall / r.t.xpar_wall, e = r.t.cub_ev / r.t.xpar_ev;
    lo_w = std::min(lo_w, w), hi_w = std::max(hi_w, w);
    lo_e = std::min(lo_e, e), hi_e = std::max(hi_e, e);
    rows++;
  }
  if (!rows) return;
  printf("TABLE %-58s wall %5.3f-%5.3f  events %5.3f-%5.3f  target >= %.2f  %s\n", what, lo_w,
         hi_w, lo_e, hi_e, target, std::min(lo_w, lo_e) >= target ? "MET" : "missed");
}

} // namespace

int gpu_bench_run(int quick) {
  cudaDeviceProp prop;
  GB_CUDA(cudaGetDeviceProperties(&prop, 0));
  printf("device: %s, %d SMs, L2 %d MB\n", prop.name, prop.multiProcessorCount,
         prop.l2CacheSize >> 20);
  const int lg_max = quick ? 24 : 30, lg_min = quick ? 22 : 26;
  const size_t max_n = (size_t)1 << lg_max;
  Ctx c;
  c.sms = prop.multiProcessorCount;
  c.reps = quick ? 5 : 21;
  GB_XPAR(B.state_create(0, NULL, &c.st));
  c.s = c.st->stream;
  GB_CUDA(cudaMalloc(&c.in, max_n * 8));
  GB_CUDA(cudaMalloc(&c.out_cub, max_n * 4));
  GB_CUDA(cudaMalloc(&c.out_xpar, max_n * 4));
  GB_CUDA(cudaMalloc(&c.d_result, 64));
  GB_CUDA(cudaMalloc(&c.cmp, sizeof(CompareResult)));
  c.temp_bytes = 64u << 20; /* CUB's scan and reduce need far less at 2^30 */
  {
    size_t t = 0;
    cub::DeviceScan::InclusiveSum(NULL, t, (const double *)c.in, (double *)c.out_cub, (int64_t)max_n);
    c.temp_bytes = std::max(c.temp_bytes, t);
  }
  GB_CUDA(cudaMalloc(&c.temp, c.temp_bytes));
  int sr = 0, sl = 0, sb = 0, sp = 0;
  for (int bytes : {4, 8})
    if (xpar__cuda_scan_resources(bytes, &sr, &sl, &sb, &sp) == 0)
      printf("scan kernel, %d-byte elements: block %d, %d registers, %d local bytes, %d "
             "blocks/SM resident\n", bytes, sb, sr, sl, sp);

  /* ---- ceiling: device-to-device copy ---- */
  fill_input<int32_t>(c.in, max_n, 12345u);
  const size_t copy_n = quick ? max_n : (size_t)1 << 30;
  const double copy_ms = median_ms(
      [&] { GB_CUDA(cudaMemcpyAsync(c.out_cub, c.in, copy_n * 4, cudaMemcpyDeviceToDevice, 0)); },
      2, c.reps);
  const double copy_gbs = 2.0 * copy_n * 4 / copy_ms / 1e6;
  printf("d2d copy %zu MiB: %.3f ms, %.0f GB/s (read + write)\n", (copy_n * 4) >> 20, copy_ms,
         copy_gbs);

  /* ---- reduce ---- */
  double sum_ms_28 = 0;
  auto reduce_sizes = [&](auto zero) {
    using T = decltype(zero);
    fill_input<T>(c.in, max_n, 777u);
    for (int lg = lg_min; lg <= lg_max; lg++) reduce_row<T>(c, 0, (size_t)1 << lg, "reduce-sum");
  };
  reduce_sizes(int32_t{});
  reduce_sizes(float{});
  reduce_sizes(int64_t{});
  reduce_sizes(double{});
  {
    const int lg = quick ? 24 : 28;
    const size_t n = (size_t)1 << lg;
    fill_input<int32_t>(c.in, max_n, 99u);
    reduce_row<int32_t>(c, 1, n, "reduce-min");
    reduce_row<int32_t>(c, 2, n, "reduce-max");
    fill_input<double>(c.in, n, 0);
    reduce_row<double>(c, 1, n, "reduce-min");
    reduce_row<double>(c, 2, n, "reduce-max");
    fill_input<int32_t>(c.in, max_n, 99u);
    for (const Row &r : g_rows)
      if (r.op == "reduce-sum" && r.dtype == "int32" && r.lg == lg) sum_ms_28 = r.t.xpar_ev;
    xpar__exec qe;
    memset(&qe, 0, sizeof qe);
    qe.cuda = c.st;
    int64_t wide = 0;
    own_row(c, "reduce-sum-wide", "int32", n, 4.0 * n,
            [&] { GB_XPAR(B.reduce_sum_wide(&qe, XPAR_INT32, c.in, n, &wide)); }, sum_ms_28);
    float dot = 0;
    fill_input<float>(c.in, max_n, 0);
    own_row(c, "dot", "float", n, 8.0 * n,
            [&] { GB_XPAR(B.dot(&qe, XPAR_FLOAT, c.in, (const char *)c.in + n * 4, n, &dot)); },
            sum_ms_28);
  }

  /* quick: every size of 2^22..2^24, around the 50 MB L2, where the read path changes */
  reduce_sweep<int32_t>(c, lg_min, lg_max, quick ? 1 : 2);
  reduce_sweep<double>(c, lg_min, lg_max - 1, quick ? 1 : 2);

  /* ---- scans ---- */
  auto scan_sizes = [&](auto zero, int lg_top) {
    using T = decltype(zero);
    fill_input<T>(c.in, (size_t)1 << lg_top, 4321u);
    for (int lg = lg_min; lg <= lg_top; lg++)
      scan_row<T>(c, SCAN_SUM, false, (size_t)1 << lg, "scan-incl-sum");
  };
  scan_sizes(int32_t{}, lg_max);
  scan_sizes(float{}, lg_max);
  scan_sizes(int64_t{}, lg_max - 1);
  scan_sizes(double{}, lg_max - 1);
  {
    /* every 8-byte op at every size of the 8-byte rows (2^26..2^29) */
    const size_t top = (size_t)1 << (lg_max - 1);
    fill_input<uint64_t>(c.in, top, 55u);
    for (int lg = lg_min; lg < lg_max; lg++) {
      scan_row<uint64_t>(c, SCAN_SUM, false, (size_t)1 << lg, "scan-incl-sum");
      scan_row<uint64_t>(c, SCAN_SUM, true, (size_t)1 << lg, "scan-excl-sum");
    }
    fill_input<int64_t>(c.in, top, 56u);
    for (int lg = lg_min; lg < lg_max; lg++) {
      scan_row<int64_t>(c, SCAN_SUM, true, (size_t)1 << lg, "scan-excl-sum");
      scan_row<int64_t>(c, SCAN_MIN, false, (size_t)1 << lg, "scan-incl-min");
      scan_row<int64_t>(c, SCAN_MAX, false, (size_t)1 << lg, "scan-incl-max");
    }
    fill_input<double>(c.in, top, 0);
    for (int lg = lg_min; lg < lg_max; lg++) {
      scan_row<double>(c, SCAN_SUM, true, (size_t)1 << lg, "scan-excl-sum");
      scan_row<double>(c, SCAN_MIN, false, (size_t)1 << lg, "scan-incl-min");
      scan_row<double>(c, SCAN_MAX, false, (size_t)1 << lg, "scan-incl-max");
    }
    const size_t n = (size_t)1 << (quick ? 24 : 28);
    fill_input<int32_t>(c.in, n, 57u);
    scan_row<int32_t>(c, SCAN_SUM, true, n, "scan-excl-sum");
    scan_row<int32_t>(c, SCAN_MAX, false, n, "scan-incl-max");
  }

  /* ---- small N: 1,024 device int32, synchronous, host wall clock, median of 2001 ---- */
  fill_input<int32_t>(c.in, 1024, 777u);
  xpar__exec sync_ex;
  memset(&sync_ex, 0, sizeof sync_ex);
  sync_ex.cuda = c.st;
  int host_result = 0, xpar_result = 0;
  size_t tb = c.temp_bytes;
  const int sreps = 2001;
  const double cub_reduce_us = median_wall_us(
      [&] {
        GB_CUDA(cub::DeviceReduce::Sum(c.temp, tb, (const int *)c.in, (int *)c.d_result, 1024, c.s));
        GB_CUDA(cudaMemcpyAsync(&host_result, c.d_result, 4, cudaMemcpyDeviceToHost, c.s));
        GB_CUDA(cudaStreamSynchronize(c.s));
      },
      200, sreps);
  const double xpar_reduce_us = median_wall_us(
      [&] { GB_XPAR(B.reduce(&sync_ex, XPAR_INT32, XPAR_SUM, c.in, 1024, &xpar_result)); }, 200,
      sreps);
  const double cub_scan_us = median_wall_us(
      [&] {
        GB_CUDA(cub::DeviceScan::InclusiveSum(c.temp, tb, (const int *)c.in, (int *)c.out_cub, 1024, c.s));
        GB_CUDA(cudaStreamSynchronize(c.s));
      },
      200, sreps);
  const double xpar_scan_us = median_wall_us(
      [&] {
        GB_XPAR(B.scan(&sync_ex, XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE, NULL, c.in, c.out_xpar, 1024));
      },
      200, sreps);
  const CompareResult small_scan = compare_with(c.out_xpar, c.out_cub, 1024, 0, c.cmp, c.sms);
  /* floors */
  const double launch_us = median_wall_us(
      [&] {
        empty_kernel<<<1, 32, 0, c.s>>>();
        GB_CUDA(cudaGetLastError());
      },
      200, sreps);
  GB_CUDA(cudaStreamSynchronize(c.s));
  const double empty_sync_us = median_wall_us(
      [&] {
        empty_kernel<<<1, 32, 0, c.s>>>();
        GB_CUDA(cudaStreamSynchronize(c.s));
      },
      200, sreps);
  unsigned long long *stamp_h = NULL, *stamp_d = NULL;
  GB_CUDA(cudaHostAlloc((void **)&stamp_h, 64, cudaHostAllocMapped));
  GB_CUDA(cudaHostGetDevicePointer((void **)&stamp_d, stamp_h, 0));
  *stamp_h = 0;
  unsigned long long stamp = 0;
  double stamp_us[3];
  for (int fence = 0; fence < 3; fence++) {
    stamp_us[fence] = median_wall_us(
        [&] {
          ++stamp;
          stamp_kernel<<<1, 32, 0, c.s>>>(stamp_d, stamp, fence);
          while (__atomic_load_n(stamp_h, __ATOMIC_ACQUIRE) != stamp) {
          }
        },
        200, sreps);
    GB_CUDA(cudaStreamSynchronize(c.s));
  }
  /* where the small scan's time goes: the same call queued + stream sync, other sizes and
   * blocks, and the reduce with its result on the device + stream sync */
  xpar__exec q_ex = sync_ex;
  q_ex.nowait = 1;
  const double scan_queued_sync_us = median_wall_us(
      [&] {
        GB_XPAR(B.scan(&q_ex, XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE, NULL, c.in, c.out_xpar, 1024));
        GB_CUDA(cudaStreamSynchronize(c.s));
      },
      200, sreps);
  xpar__exec b32 = sync_ex;
  b32.block = 32;
  const double scan_b32_us = median_wall_us(
      [&] { GB_XPAR(B.scan(&b32, XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE, NULL, c.in, c.out_xpar, 1024)); },
      200, sreps);
  const double scan_64_us = median_wall_us(
      [&] { GB_XPAR(B.scan(&sync_ex, XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE, NULL, c.in, c.out_xpar, 64)); },
      200, sreps);
  const double scan_8k_us = median_wall_us(
      [&] { GB_XPAR(B.scan(&sync_ex, XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE, NULL, c.in, c.out_xpar, 8192)); },
      200, sreps);
  xpar__exec rd_ex = sync_ex;
  rd_ex.result_on_device = 1;
  const double reduce_dev_us = median_wall_us(
      [&] { GB_XPAR(B.reduce(&rd_ex, XPAR_INT32, XPAR_SUM, c.in, 1024, c.d_result)); }, 200,
      sreps);
  const double set_device_us = median_wall_us([&] { GB_CUDA(cudaSetDevice(0)); }, 200, sreps);
  /* Components.  Host side: the time a queued (nowait) call takes to
   * return, i.e. argument checks + launch, with no waiting; device side: CUDA events
   * around one queued call (kernel start-up + run, no host cost). */
  xpar__exec qdev = sync_ex;
  qdev.nowait = 1;
  qdev.result_on_device = 1;
  const double host_scan_us = median_wall_us(
      [&] { GB_XPAR(B.scan(&q_ex, XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE, NULL, c.in, c.out_xpar, 1024)); },
      200, sreps);
  GB_CUDA(cudaStreamSynchronize(c.s));
  const double host_reduce_us = median_wall_us(
      [&] { GB_XPAR(B.reduce(&qdev, XPAR_INT32, XPAR_SUM, c.in, 1024, c.d_result)); }, 200, sreps);
  GB_CUDA(cudaStreamSynchronize(c.s));
  const double ev_empty_us =
      median_event_us(c.s, [&] { empty_kernel<<<1, 32, 0, c.s>>>(); }, 50, 501);
  const double ev_reduce_us = median_event_us(
      c.s, [&] { GB_XPAR(B.reduce(&qdev, XPAR_INT32, XPAR_SUM, c.in, 1024, c.d_result)); }, 50, 501);
  double ev_scan_us[3];
  const size_t ev_scan_n[3] = {64, 1024, 4096};
  for (int i = 0; i < 3; i++)
    ev_scan_us[i] = median_event_us(
        c.s,
        [&] {
          GB_XPAR(B.scan(&q_ex, XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE, NULL, c.in, c.out_xpar,
                         ev_scan_n[i]));
        },
        50, 501);
  /* The driver's cuLaunchKernel, reached through the runtime (no -lcuda), against the
   * runtime's launch: host time of the launch call, and the stamp floor through it. */
  double drv_launch_us = -1, drv_stamp_us = -1, rt_launch_us = -1;
  {
    void *fn = NULL;
    cudaDriverEntryPointQueryResult q;
    cudaFunction_t f_empty = NULL, f_stamp = NULL;
    if (cudaGetDriverEntryPointByVersion("cuLaunchKernel", &fn, 12000, cudaEnableDefault, &q) ==
            cudaSuccess &&
        q == cudaDriverEntryPointSuccess &&
        cudaGetFuncBySymbol(&f_empty, (const void *)empty_kernel) == cudaSuccess &&
        cudaGetFuncBySymbol(&f_stamp, (const void *)stamp_kernel) == cudaSuccess) {
      const PFN_cuLaunchKernel_v4000 launch = (PFN_cuLaunchKernel_v4000)fn;
      rt_launch_us = median_wall_us(
          [&] { GB_CUDA(cudaLaunchKernel((const void *)empty_kernel, 1, 32, NULL, 0, c.s)); },
          200, sreps);
      GB_CUDA(cudaStreamSynchronize(c.s));
      drv_launch_us = median_wall_us(
          [&] {
            if (launch((CUfunction)f_empty, 1, 1, 1, 32, 1, 1, 0, (CUstream)c.s, NULL, NULL) !=
                CUDA_SUCCESS)
              abort();
          },
          200, sreps);
      GB_CUDA(cudaStreamSynchronize(c.s));
      int zero = 0;
      drv_stamp_us = median_wall_us(
          [&] {
            ++stamp;
            void *args[] = {&stamp_d, &stamp, &zero};
            if (launch((CUfunction)f_stamp, 1, 1, 1, 32, 1, 1, 0, (CUstream)c.s, args, NULL) !=
                CUDA_SUCCESS)
              abort();
            while (__atomic_load_n(stamp_h, __ATOMIC_ACQUIRE) != stamp) {
            }
          },
          200, sreps);
      GB_CUDA(cudaStreamSynchronize(c.s));
    } else {
      (void)cudaGetLastError();
    }
  }
  cudaFreeHost(stamp_h);
  printf("\nSMALLN floors (1024 int32 on the device, synchronous, host wall clock, median of "
         "%d): empty-kernel launch alone %.1f us; empty kernel + cudaStreamSynchronize %.1f us; "
         "kernel stamping a pinned word + host spin %.1f us (after __threadfence_system "
         "%.1f us, as st.release.sys %.1f us); cudaSetDevice %.2f us\n",
         sreps, launch_us, empty_sync_us, stamp_us[0], stamp_us[1], stamp_us[2], set_device_us);
  printf("SMALLN scan paths: 1024 queued + stream sync %.1f us; 1024 with block 32 %.1f us; "
         "64 elements %.1f us; 8192 (2 blocks, stream sync) %.1f us; reduce 1024 with the "
         "result on the device (stream sync) %.1f us\n",
         scan_queued_sync_us, scan_b32_us, scan_64_us, scan_8k_us, reduce_dev_us);
  printf("SMALLN components: host time of a queued call (returns without waiting): scan "
         "1024 %.2f us, reduce 1024 %.2f us, cudaLaunchKernel (empty) %.2f us, cuLaunchKernel "
         "(empty) %.2f us; stamp floor through cuLaunchKernel %.1f us; device time (events "
         "around one queued call): empty kernel %.1f us, reduce 1024 %.1f us, scan 64 / 1024 / "
         "4096 %.1f / %.1f / %.1f us\n",
         host_scan_us, host_reduce_us, rt_launch_us, drv_launch_us, drv_stamp_us, ev_empty_us,
         ev_reduce_us, ev_scan_us[0], ev_scan_us[1], ev_scan_us[2]);
  printf("SMALLN reduce: CUB + cudaMemcpy %.1f us, xpar %.1f us (ratio %.2f, results %s)\n",
         cub_reduce_us, xpar_reduce_us, cub_reduce_us / xpar_reduce_us,
         host_result == xpar_result ? "equal" : "DIFFER");
  printf("SMALLN scan: CUB + sync %.1f us, xpar %.1f us (ratio %.2f, outputs %s)\n",
         cub_scan_us, xpar_scan_us, cub_scan_us / xpar_scan_us,
         small_scan.bad ? "DIFFER" : "equal");

  printf("\nSUMMARY (ratio = CUB time / xpar time; d2d copy %.0f GB/s; median of %d, "
         "interleaved)\n", copy_gbs, c.reps);
  for (const Row &r : g_rows) print_row("SUMMARY", r);
  table_line("inclusive scan int64 / uint64 / double, 2^26-2^29", {"scan-incl-sum"},
             {"int64", "uint64", "double"}, 1.00);
  table_line("8-byte scans sum/min/max incl/excl, 2^26-2^29 (+ uint64)",
             {"scan-excl-sum", "scan-incl-min", "scan-incl-max"}, {"int64", "uint64", "double"}, 1.00);
  table_line("inclusive scan int32 / float, 2^26-2^30", {"scan-incl-sum"}, {"int32", "float"}, 1.08);
  table_line("reduce sum int32 / float / int64 / double, 2^26-2^30", {"reduce-sum"},
             {"int32", "float", "int64", "double"}, 1.02);
  table_line("reduce min / max int32 / double, 2^28", {"reduce-min", "reduce-max"},
             {"int32", "double"}, 1.02);
  printf("TABLE %-58s xpar %.1f us (CUB + memcpy %.1f us)  target <= 6 us  %s\n",
         "sync reduce of 1,024 device int32, result on the host", xpar_reduce_us, cub_reduce_us,
         xpar_reduce_us <= 6.0 ? "MET" : "missed");
  printf("TABLE %-58s xpar %.1f us (CUB + sync %.1f us)  target <= 6 us  %s\n",
         "sync scan of 1,024 device int32", xpar_scan_us, cub_scan_us,
         xpar_scan_us <= 6.0 ? "MET" : "missed");
  int bad = 0;
  for (const Row &r : g_rows) bad += r.check != "ok";
  bad += host_result != xpar_result || small_scan.bad;
  printf("BENCH checks: %s\n", bad ? "FAILED (a row differs from CUB)" : "every row matches CUB");

  B.state_destroy(c.st);
  cudaFree(c.temp);
  cudaFree(c.cmp);
  cudaFree(c.in);
  cudaFree(c.out_cub);
  cudaFree(c.out_xpar);
  cudaFree(c.d_result);
  return bad ? 1 : 0;
}

/* Three CUB and five xpar int32 inclusive scans of 2^28 elements, for a profiler to pick
 * from (ncu -k regex:DeviceScanKernel / regex:scan_). */
int gpu_profile_scan(void) {
  const size_t n = 1u << 28;
  char *in = NULL, *out = NULL;
  GB_CUDA(cudaMalloc(&in, n * 4));
  GB_CUDA(cudaMalloc(&out, n * 4));
  fill_random<<<1024, 256>>>((uint32_t *)in, n, 4242u);
  GB_CUDA(cudaDeviceSynchronize());
  xpar__cuda_state *st = NULL;
  GB_XPAR(B.state_create(0, NULL, &st));
  xpar__exec ex;
  memset(&ex, 0, sizeof ex);
  ex.cuda = st;
  size_t temp_bytes = 0;
  cub::DeviceScan::InclusiveSum(NULL, temp_bytes, (const int *)in, (int *)out, (int64_t)n);
  void *temp = NULL;
  GB_CUDA(cudaMalloc(&temp, temp_bytes));
  for (int i = 0; i < 3; i++)
    GB_CUDA(cub::DeviceScan::InclusiveSum(temp, temp_bytes, (const int *)in, (int *)out,
                                          (int64_t)n));
  GB_CUDA(cudaDeviceSynchronize());
  cudaFree(temp);
  for (int i = 0; i < 5; i++)
    GB_XPAR(B.scan(&ex, XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE, NULL, in, out, n));
  B.state_destroy(st);
  cudaFree(in);
  cudaFree(out);
  return 0;
}

