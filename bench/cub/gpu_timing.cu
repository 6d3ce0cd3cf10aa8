/*
 * `xpar-gpu-bench` timing: the CUDA backend side by side with CUB in one run.
 *
 *  - device-to-device copy bandwidth (bytes read + written): the ceiling;
 *  - reduce sum int32 / float and inclusive scan int32 / float at 2^28 and
 *    2^30 (well beyond the 50 MB L2), CUB vs xpar, CUDA events around each
 *    call, warm-up, median of the reps; xpar runs queued (nowait) with the
 *    result on the device, as CUB's figure is;
 *  - scan_init vs scan: xpar's inclusive and exclusive sum with and without a
 *    carry-in, int32 and double at 2^28 (the same kernels: the init must cost
 *    nothing); SCANINIT lines, repeated in the summary;
 *  - small-N latency: 1,024 device-resident int32, synchronous, host wall
 *    clock: CUB reduce + cudaMemcpy of the result vs xpar's reduce with the
 *    result on the host (pinned mapped slot + stream sync);
 *  - --scan-variants: every scan variant against CUB (int32, float, double).
 * The scan's tuning sweep is --scan-sweep (scan_sweep.cu).
 */
#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>

#include "backend_cuda/cuda_state.cuh"
#include "backend_cuda/launch_shape.cuh"
#include "gpu_bench.h"
#include "gpu_timing_util.cuh"

namespace {

const xpar__backend &B = xpar__cuda_backend;

template <class F> double median_wall_us(F &&run, int warmup, int reps) {
  for (int i = 0; i < warmup; i++) run();
  std::vector<double> t;
  for (int i = 0; i < reps; i++) {
    auto t0 = std::chrono::steady_clock::now();
    run();
    auto t1 = std::chrono::steady_clock::now();
    t.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

struct Row {
  const char *op, *dtype;
  size_t n;
  double bytes;
  double cub_ms, xpar_ms;
};
std::vector<Row> g_rows;

void print_row(const Row &r) {
  printf("%-12s %-6s 2^%-3d %9.3f %9.3f %8.0f %8.0f %6.3f\n", r.op, r.dtype,
         (int)(log2((double)r.n) + 0.5), r.cub_ms, r.xpar_ms, r.bytes / r.cub_ms / 1e6,
         r.bytes / r.xpar_ms / 1e6, r.cub_ms / r.xpar_ms);
  fflush(stdout);
}

} // namespace

int gpu_bench_run(int quick) {
  cudaDeviceProp prop;
  GB_CUDA(cudaGetDeviceProperties(&prop, 0));
  printf("device: %s, %d SMs, L2 %d MB\n", prop.name, prop.multiProcessorCount,
         prop.l2CacheSize >> 20);
  const size_t max_n = quick ? (1u << 24) : (1u << 30);
  const int reps = quick ? 5 : 25;

  char *in = NULL, *out = NULL;
  GB_CUDA(cudaMalloc(&in, max_n * 4));
  GB_CUDA(cudaMalloc(&out, max_n * 4));
  void *d_result = NULL;
  GB_CUDA(cudaMalloc(&d_result, 64));
  fill_random<<<1024, 256>>>((uint32_t *)in, max_n, 12345u);
  GB_CUDA(cudaDeviceSynchronize());

  xpar__cuda_state *st = NULL;
  xpar__exec ex = queued_exec_on_default_stream(&st);

  /* ---- ceiling: device-to-device copy ---- */
  const double copy_ms = median_ms(
      [&] { GB_CUDA(cudaMemcpyAsync(out, in, max_n * 4, cudaMemcpyDeviceToDevice, 0)); }, 2, reps);
  const double copy_gbs = 2.0 * max_n * 4 / copy_ms / 1e6;
  printf("d2d copy %zu MiB: %.3f ms, %.0f GB/s (read + write)\n", (max_n * 4) >> 20, copy_ms,
         copy_gbs);

  /* CUB temporary storage, sized for the largest call of each algorithm */
  size_t temp_bytes = 0, t1 = 0, t2 = 0;
  cub::DeviceReduce::Sum(NULL, t1, (const int *)in, (int *)d_result, (int64_t)max_n);
  cub::DeviceScan::InclusiveSum(NULL, t2, (const int *)in, (int *)out, (int64_t)max_n);
  temp_bytes = std::max(t1, t2);
  size_t t3 = 0, t4 = 0;
  cub::DeviceReduce::Sum(NULL, t3, (const float *)in, (float *)d_result, (int64_t)max_n);
  cub::DeviceScan::InclusiveSum(NULL, t4, (const float *)in, (float *)out, (int64_t)max_n);
  temp_bytes = std::max(temp_bytes, std::max(t3, t4));
  void *temp = NULL;
  GB_CUDA(cudaMalloc(&temp, temp_bytes));

  /* (v3's look-back knob sweep that stood here is superseded by --scan-sweep, which
   * sweeps the occupancy kernels' shapes, tile order and delays beside CUB.) */
  printf("scan variant in use: %s\n", xpar__cuda_scan_variant_name(st->scan_tuning.variant));

  printf("\n%-12s %-6s %-5s %9s %9s %8s %8s %6s\n", "op", "dtype", "N", "CUB ms", "xpar ms",
         "CUB GB/s", "xpar GB/s", "ratio");
  const std::vector<size_t> sizes =
      quick ? std::vector<size_t>{1u << 24} : std::vector<size_t>{1u << 28, 1u << 30};
  for (int dt = 0; dt < 2; dt++) {
    if (dt == 1) {
      fill_unit_floats<<<1024, 256>>>((float *)in, max_n);
      GB_CUDA(cudaDeviceSynchronize());
    }
    for (size_t n : sizes) {
      Row r{"reduce-sum", dt ? "float" : "int32", n, 4.0 * n, 0, 0};
      size_t tb = temp_bytes;
      r.cub_ms = median_ms(
          [&] {
            if (dt)
              cub::DeviceReduce::Sum(temp, tb, (const float *)in, (float *)d_result, (int64_t)n);
            else
              cub::DeviceReduce::Sum(temp, tb, (const int *)in, (int *)d_result, (int64_t)n);
          },
          3, reps);
      xpar__exec re = ex;
      re.block = 0;
      r.xpar_ms = median_ms(
          [&] { GB_XPAR(B.reduce(&re, dt ? XPAR_FLOAT : XPAR_INT32, XPAR_SUM, in, n, d_result)); },
          3, reps);
      g_rows.push_back(r);
      print_row(r);
    }
    for (size_t n : sizes) {
      Row r{"scan-incl", dt ? "float" : "int32", n, 8.0 * n, 0, 0};
      size_t tb = temp_bytes;
      r.cub_ms = median_ms(
          [&] {
            if (dt)
              cub::DeviceScan::InclusiveSum(temp, tb, (const float *)in, (float *)out, (int64_t)n);
            else
              cub::DeviceScan::InclusiveSum(temp, tb, (const int *)in, (int *)out, (int64_t)n);
          },
          3, reps);
      r.xpar_ms = median_ms(
          [&] {
            GB_XPAR(B.scan(&ex, dt ? XPAR_FLOAT : XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE, NULL, in, out, n));
          },
          3, reps);
      g_rows.push_back(r);
      print_row(r);
    }
  }
  /* elementwise against the copy ceiling (no CUB counterpart) */
  {
    const size_t n = quick ? (1u << 22) : (1u << 28);
    float alpha = 0.5f;
    xpar__exec ew = ex;
    ew.block = 0;
    const double ms = median_ms(
        [&] { GB_XPAR(B.axpy(&ew, XPAR_FLOAT, &alpha, in, out, n)); }, 3, reps);
    printf("%-12s %-6s 2^%-3d %9s %9.3f %8s %8.0f  (%.0f%% of d2d copy)\n", "axpy", "float",
           (int)(log2((double)n) + 0.5), "-", ms, "-", 12.0 * n / ms / 1e6,
           100.0 * (12.0 * n / ms / 1e6) / copy_gbs);
    const double dms = median_ms(
        [&] { GB_XPAR(B.dot(&ew, XPAR_FLOAT, in, out, n, d_result)); }, 3, reps);
    printf("%-12s %-6s 2^%-3d %9s %9.3f %8s %8.0f  (%.0f%% of d2d copy)\n", "dot", "float",
           (int)(log2((double)n) + 0.5), "-", dms, "-", 8.0 * n / dms / 1e6,
           100.0 * (8.0 * n / dms / 1e6) / copy_gbs);
  }

  /* scan_init vs scan, xpar against itself: plain scan first, then with a carry-in, the
   * same data and buffers (the input fits as 2^28 doubles: in holds max_n * 4 bytes; the
   * float data of the rows above is not needed after this) */
  std::vector<std::string> init_lines;
  {
    const size_t n = quick ? (1u << 22) : (1u << 28);
    const int lg = (int)(log2((double)n) + 0.5);
    printf("\nscan_init vs scan (xpar, sum, events, median of %d; ratio = scan ms / scan_init "
           "ms)\n", reps);
    for (int dt = 0; dt < 2; dt++) {
      if (dt)
        fill_unit_doubles<<<1024, 256>>>((double *)in, n);
      else
        fill_random<<<1024, 256>>>((uint32_t *)in, n, 4321u);
      GB_CUDA(cudaDeviceSynchronize());
      const xpar_dtype xdt = dt ? XPAR_DOUBLE : XPAR_INT32;
      const double bytes = (dt ? 16.0 : 8.0) * n; /* read + write */
      xpar__scalar init;
      memset(&init, 0, sizeof init);
      if (dt)
        init.f64 = 0.5;
      else
        init.i32 = 123456789;
      for (int k = 0; k < 2; k++) {
        const xpar_scan_kind kind = k ? XPAR_EXCLUSIVE : XPAR_INCLUSIVE;
        const double plain_ms = median_ms(
            [&] { GB_XPAR(B.scan(&ex, xdt, XPAR_SUM, kind, NULL, in, out, n)); }, 3, reps);
        const double init_ms = median_ms(
            [&] { GB_XPAR(B.scan(&ex, xdt, XPAR_SUM, kind, &init, in, out, n)); }, 3, reps);
        char line[192];
        snprintf(line, sizeof line,
                 "SCANINIT %-6s %-9s 2^%-3d scan %8.3f ms %5.0f GB/s  scan_init %8.3f ms %5.0f "
                 "GB/s  ratio %6.3f",
                 dt ? "double" : "int32", k ? "exclusive" : "inclusive", lg, plain_ms,
                 bytes / plain_ms / 1e6, init_ms, bytes / init_ms / 1e6, plain_ms / init_ms);
        puts(line);
        fflush(stdout);
        init_lines.push_back(line);
      }
    }
  }

  /* ---- small-N latency, synchronous, host wall clock ---- */
  fill_random<<<64, 256>>>((uint32_t *)in, 1024, 777u);
  GB_CUDA(cudaDeviceSynchronize());
  cudaStream_t s;
  GB_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  GB_XPAR(B.set_stream(st, NULL)); /* the state's own stream, as an application has it */
  int host_result = 0;
  size_t tb = temp_bytes;
  const double cub_us = median_wall_us(
      [&] {
        cub::DeviceReduce::Sum(temp, tb, (const int *)in, (int *)d_result, 1024, s);
        GB_CUDA(cudaMemcpyAsync(&host_result, d_result, 4, cudaMemcpyDeviceToHost, s));
        GB_CUDA(cudaStreamSynchronize(s));
      },
      200, 2001);
  xpar__exec sync_ex;
  memset(&sync_ex, 0, sizeof sync_ex);
  sync_ex.cuda = st;
  int xpar_result = 0;
  const double xpar_us = median_wall_us(
      [&] { GB_XPAR(B.reduce(&sync_ex, XPAR_INT32, XPAR_SUM, in, 1024, &xpar_result)); }, 200,
      2001);
  printf("\nsmall-N reduce, 1024 int32 on the device, result on the host (wall clock median):\n"
         "  CUB reduce + cudaMemcpy + sync: %.1f us   xpar reduce (sync): %.1f us   ratio %.2f  "
         "results %s\n",
         cub_us, xpar_us, cub_us / xpar_us, host_result == xpar_result ? "equal" : "DIFFER");
  GB_CUDA(cudaStreamDestroy(s));

  printf("\nSUMMARY (ratio = CUB time / xpar time; d2d copy %.0f GB/s)\n", copy_gbs);
  printf("%-12s %-6s %-5s %9s %9s %8s %8s %6s\n", "op", "dtype", "N", "CUB ms", "xpar ms",
         "CUB GB/s", "xpar GB/s", "ratio");
  for (const Row &r : g_rows) print_row(r);
  for (const std::string &l : init_lines) puts(l.c_str());
  printf("small-N reduce 1024 int32 sync: CUB+memcpy %.1f us, xpar %.1f us\n", cub_us, xpar_us);

  B.state_destroy(st);
  cudaFree(temp);
  cudaFree(in);
  cudaFree(out);
  cudaFree(d_result);
  return 0;
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
  GB_XPAR(B.state_create(0, &st));
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

/* ---- --scan-variants: CUB vs every scan variant, one run --------------------------- */

int gpu_scan_variants_run(int quick) {
  cudaDeviceProp prop;
  GB_CUDA(cudaGetDeviceProperties(&prop, 0));
  const size_t max_n = quick ? (1u << 24) : (1u << 30);
  const int reps = quick ? 5 : 9;
  printf("scan variants: %s, %d SMs; CUB InclusiveSum vs xpar inclusive sum (int32, float, "
         "double), events, "
         "2 warm-ups, median of %d\n", prop.name, prop.multiProcessorCount, reps);

  xpar__cuda_state *st = NULL;
  xpar__exec ex = queued_exec_on_default_stream(&st);
  const xpar__cuda_scan_tuning saved = st->scan_tuning;

  for (int v = 0; v < XPAR_CUDA_SCAN_VARIANTS; v++) {
    int regs = 0, local = 0, block = 0, per_sm = 0;
    if (xpar__cuda_scan_variant_resources(v, &regs, &local, &block, &per_sm) == 0)
      printf("  %-7s int32-sum kernel: block %4d, %d registers, %d local bytes, %d blocks/SM "
             "resident\n", xpar__cuda_scan_variant_name(v), block, regs, local, per_sm);
  }

  char *in = NULL, *out = NULL, *ref = NULL;
  GB_CUDA(cudaMalloc(&in, max_n * 8)); /* 8 bytes: the double rows */
  GB_CUDA(cudaMalloc(&out, max_n * 8));
  GB_CUDA(cudaMalloc(&ref, max_n * 8));
  CompareResult *cmp = NULL;
  GB_CUDA(cudaMalloc(&cmp, sizeof(CompareResult)));
  size_t temp_bytes = 0, t1 = 0, t2 = 0;
  cub::DeviceScan::InclusiveSum(NULL, temp_bytes, (const int *)in, (int *)out, (int64_t)max_n);
  cub::DeviceScan::InclusiveSum(NULL, t1, (const float *)in, (float *)out, (int64_t)max_n);
  cub::DeviceScan::InclusiveSum(NULL, t2, (const double *)in, (double *)out, (int64_t)max_n);
  temp_bytes = std::max(temp_bytes, std::max(t1, t2));
  void *temp = NULL;
  GB_CUDA(cudaMalloc(&temp, temp_bytes));

  /* The configurations: each variant with its defaults, and v5 with tickets. */
  struct Config {
    const char *name;
    xpar__cuda_scan_tuning tuning;
  };
  std::vector<Config> configs;
  configs.push_back({"v3", xpar__cuda_scan_tuning_for(XPAR_CUDA_SCAN_V3)});
  configs.push_back({"v4", xpar__cuda_scan_tuning_for(XPAR_CUDA_SCAN_V4)});
  configs.push_back({"v5", xpar__cuda_scan_tuning_for(XPAR_CUDA_SCAN_V5)});
  {
    /* v5's shape with v4's tile order (tickets), to keep the price of the ticket visible */
    xpar__cuda_scan_tuning t = xpar__cuda_scan_tuning_for(XPAR_CUDA_SCAN_V5);
    t.tile_order = XPAR_CUDA_TILES_TICKET;
    configs.push_back({"v5 tickets", t});
  }


  int failures = 0;
  printf("\n%-16s %-6s %-5s %9s %9s %6s %s\n", "variant", "dtype", "N", "ms", "GB/s", "vs CUB",
         "check vs CUB");
  const std::vector<size_t> sizes =
      quick ? std::vector<size_t>{1u << 22, 1u << 24}
            : std::vector<size_t>{1u << 20, 1u << 24, 1u << 28, 1u << 30};
  std::vector<std::string> table;
  /* dt: 0 int32, 1 float, 2 double */
  for (int dt = 0; dt < 3; dt++) {
    if (dt == 0)
      fill_random<<<1024, 256>>>((uint32_t *)in, max_n, 2468u);
    else if (dt == 1)
      fill_unit_floats<<<1024, 256>>>((float *)in, max_n);
    else
      fill_unit_doubles<<<1024, 256>>>((double *)in, max_n);
    GB_CUDA(cudaDeviceSynchronize());
    const char *dname = dt == 2 ? "double" : dt ? "float" : "int32";
    const xpar_dtype xdt = dt == 2 ? XPAR_DOUBLE : dt ? XPAR_FLOAT : XPAR_INT32;
    const double bytes_per_item = dt == 2 ? 16.0 : 8.0; /* read + write */
    for (size_t n : sizes) {
      const int lg = (int)(log2((double)n) + 0.5);
      size_t tb = temp_bytes;
      auto cub_run = [&] {
        if (dt == 2)
          cub::DeviceScan::InclusiveSum(temp, tb, (const double *)in, (double *)ref, (int64_t)n);
        else if (dt)
          cub::DeviceScan::InclusiveSum(temp, tb, (const float *)in, (float *)ref, (int64_t)n);
        else
          cub::DeviceScan::InclusiveSum(temp, tb, (const int *)in, (int *)ref, (int64_t)n);
      };
      const double cub_ms = median_ms(cub_run, 2, reps);
      GB_CUDA(cudaDeviceSynchronize()); /* ref holds CUB's result */
      char line[256];
      snprintf(line, sizeof line, "%-16s %-6s 2^%-3d %9.3f %9.0f %6.3f %s", "CUB", dname, lg,
               cub_ms, bytes_per_item * n / cub_ms / 1e6, 1.0, "-");
      puts(line);
      table.push_back(line);
      for (const Config &c : configs) {
        st->scan_tuning = c.tuning;
        GB_CUDA(cudaMemset(out, 0xA5, n * (dt == 2 ? 8 : 4)));
        const double ms = median_ms(
            [&] { GB_XPAR(B.scan(&ex, xdt, XPAR_SUM, XPAR_INCLUSIVE, NULL, in, out, n)); }, 2, reps);
        const CompareResult h = compare_with(out, ref, n, dt, cmp, prop.multiProcessorCount);
        char verdict[96];
        if (h.bad) {
          snprintf(verdict, sizeof verdict, "MISMATCH %llu elements, first at %llu", h.bad,
                   h.first);
          failures++;
        } else if (dt) {
          snprintf(verdict, sizeof verdict, "ok (max rel diff %.1e)", h.max_rel_e9 * 1e-9);
        } else {
          snprintf(verdict, sizeof verdict, "ok (exact)");
        }
        snprintf(line, sizeof line, "%-16s %-6s 2^%-3d %9.3f %9.0f %6.3f %s", c.name, dname, lg,
                 ms, bytes_per_item * n / ms / 1e6, cub_ms / ms, verdict);
        puts(line);
        fflush(stdout);
        table.push_back(line);
      }
    }
  }
  st->scan_tuning = saved;
  printf("\nSCANVAR table (ratio = CUB time / variant time; GB/s = bytes read + written)\n");
  printf("SCANVAR %-16s %-6s %-5s %9s %9s %6s %s\n", "variant", "dtype", "N", "ms", "GB/s",
         "vs CUB", "check vs CUB");
  for (const std::string &l : table) printf("SCANVAR %s\n", l.c_str());
  printf("SCANVAR %s\n", failures ? "FAILED (a variant differs from CUB)" : "all variants match CUB");

  B.state_destroy(st);
  cudaFree(temp);
  cudaFree(cmp);
  cudaFree(in);
  cudaFree(out);
  cudaFree(ref);
  return failures ? 1 : 0;
}
