/*
 * probe_decision: xpar_device_query with a GPU (xpar.h:556-575) against the
 * CUDA runtime's own answers; decision records of GPU calls (xpar.h:525-550);
 * offload policies (xpar.h:203-209); shadow mode on the GPU (xpar.h:383-405).
 *  - device_query: usable, built_with_cuda, device_count, device 0, name,
 *    compute capability, multiprocessors, total memory as cudaGetDeviceProperties;
 *  - MANDATORY offload: every call (n = 1, pageable) runs on cuda;
 *    DISABLED: every call on the CPU, no transfers, even at large n;
 *  - AUTO with every GPU threshold NEVER: synchronous calls on device-only data
 *    run on the CPU (copying to and from the host: bytes counted), nowait calls
 *    on device-only data stay on the GPU (xpar.h:249-258);
 *  - decision fields: op, dtype, n, reproducible, shadow_tier, kernel NULL,
 *    non-empty reason;
 *  - shadow mode (cpu-serial, fail on mismatch) with forced cuda on device and
 *    mapped data: OK, results right, no mismatch, and the mapping's validity is
 *    where the primary call left it (the next cuda read moves nothing).
 */
#define PROBE_NAME "decision"
#include "probe_ops.h"

#define N ((size_t)1 << 20)

int main(void) {
  probe_require_gpu();
  /* ---- device query ---- */
  {
    xpar_device_info info;
    memset(&info, 0x55, sizeof info);
    XOK(xpar_device_query(&info));
    int count = 0, dev = -1;
    CK(cudaGetDeviceCount(&count));
    CK(cudaGetDevice(&dev));
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    CHECK(info.usable == 1 && info.built_with_cuda == 1, "device_query: usable %d built_with_cuda %d", info.usable, info.built_with_cuda);
    CHECK(info.device_count == count, "device_query: device_count %d, cudaGetDeviceCount %d", info.device_count, count);
    CHECK(info.device == 0, "device_query: device %d, expected 0 (XPAR_DEVICE unset)", info.device);
    CHECK(memchr(info.name, 0, sizeof info.name) && !strcmp(info.name, p.name), "device_query: name \"%.128s\", CUDA says \"%s\"", info.name, p.name);
    CHECK(info.compute_major == p.major && info.compute_minor == p.minor, "device_query: sm_%d%d, CUDA says sm_%d%d",
          info.compute_major, info.compute_minor, p.major, p.minor);
    CHECK(info.multiprocessors == p.multiProcessorCount, "device_query: %d SMs, CUDA says %d", info.multiprocessors, p.multiProcessorCount);
    CHECK(info.total_memory == p.totalGlobalMem, "device_query: total_memory %zu, CUDA says %zu", info.total_memory, p.totalGlobalMem);
    CHECK(memchr(info.reason, 0, sizeof info.reason) != NULL, "device_query: reason not NUL-terminated");
    XSTATUS(XPAR_ERR_NULL_POINTER, xpar_device_query(NULL), "device_query(NULL)");
    printf("# decision: device_query: %s, sm_%d%d, %d SMs, %zu MiB, reason \"%s\"\n", info.name, info.compute_major,
           info.compute_minor, info.multiprocessors, info.total_memory >> 20, info.reason);
  }
  double *h = (double *)malloc(N * 8), *hout = (double *)malloc(N * 8);
  for (size_t i = 0; i < N; i++) h[i] = (double)(int)(i % 13) - 6;
  double want = 0;
  for (size_t i = 0; i < N; i++) want += h[i];
  double *d, *dout, *dres;
  CK(cudaMalloc((void **)&d, N * 8));
  CK(cudaMalloc((void **)&dout, N * 8));
  CK(cudaMalloc((void **)&dres, 8));
  CK(cudaMemcpy(d, h, N * 8, cudaMemcpyHostToDevice));

  /* ---- MANDATORY: n = 1, pageable, on the GPU ---- */
  {
    xpar_context *ctx = ctx_new(XPAR_BACKEND_AUTO);
    XOK(xpar_context_set_offload(ctx, XPAR_OFFLOAD_MANDATORY));
    for (int op = 0; op < OP_ID_COUNT; op++) {
      scal_t sc, res;
      memset(&sc, 0, sizeof sc);
      sc.d = 1.0;
      double x1[2] = {2.5, 1}, y1[2] = {4, 1}, o1[2] = {0, 0};
      XOK(run_op(ctx, XPAR_DOUBLE, op, x1, y1, o1, 1, &sc, &res, 0));
      xpar_decision dd = last_decision(ctx);
      CHECK(dd.tier == XPAR_TIER_CUDA, "MANDATORY offload, op %s n=1 pageable: tier %s (reason \"%s\")", op_id_name[op],
            xpar_tier_name(dd.tier), dd.reason);
      CHECK(dd.op == op_xop(op) && dd.dtype == XPAR_DOUBLE && dd.n == 1 && dd.reason[0] && dd.kernel == NULL &&
                dd.shadow_tier == XPAR_TIER_NONE && dd.reproducible == 0,
            "MANDATORY op %s: decision fields op %s dtype %s n %zu reason \"%s\" kernel %p shadow %s repro %d", op_id_name[op],
            xpar_op_name(dd.op), xpar_dtype_name(dd.dtype), dd.n, dd.reason, (const void *)dd.kernel,
            xpar_tier_name(dd.shadow_tier), dd.reproducible);
    }
    XOK(xpar_context_destroy(ctx));
  }
  /* ---- DISABLED: CPU, no transfers, at large n on pageable data ---- */
  {
    xpar_context *ctx = ctx_new(XPAR_BACKEND_AUTO);
    XOK(xpar_context_set_offload(ctx, XPAR_OFFLOAD_DISABLED));
    ctx_gpu_thresholds(ctx, 0);
    double s = 0;
    XOK(xpar_reduce(ctx, XPAR_DOUBLE, XPAR_SUM, h, N, &s));
    xpar_decision dd = last_decision(ctx);
    CHECK(s == want, "DISABLED: sum %.17g, expected %.17g", s, want);
    CHECK((dd.tier == XPAR_TIER_CPU_SERIAL || dd.tier == XPAR_TIER_CPU_OPENMP) && dd.bytes_to_device == 0 && dd.bytes_to_host == 0,
          "DISABLED with GPU thresholds 0: tier %s, %zu/%zu bytes moved", xpar_tier_name(dd.tier), dd.bytes_to_device, dd.bytes_to_host);
    XOK(xpar_context_destroy(ctx));
  }
  /* ---- AUTO, GPU thresholds NEVER, device-only data ---- */
  {
    xpar_context *ctx = ctx_new(XPAR_BACKEND_AUTO);
    ctx_gpu_thresholds(ctx, XPAR_NEVER);
    double s = 0;
    XOK(xpar_reduce(ctx, XPAR_DOUBLE, XPAR_SUM, d, N, &s));
    xpar_decision dd = last_decision(ctx);
    CHECK(s == want, "AUTO never, device data: sum %.17g, expected %.17g", s, want);
    CHECK((dd.tier == XPAR_TIER_CPU_SERIAL || dd.tier == XPAR_TIER_CPU_OPENMP) && dd.bytes_to_host == N * 8 && dd.bytes_to_device == 0,
          "AUTO never, device data, reduce: tier %s, %zu to host, %zu to device (expected CPU, %zu, 0; reason \"%s\")",
          xpar_tier_name(dd.tier), dd.bytes_to_host, dd.bytes_to_device, N * 8, dd.reason);
    CK(cudaMemset(dout, 0, N * 8));
    XOK(xpar_scan(ctx, XPAR_DOUBLE, XPAR_SUM, XPAR_INCLUSIVE, d, dout, N));
    dd = last_decision(ctx);
    CHECK((dd.tier == XPAR_TIER_CPU_SERIAL || dd.tier == XPAR_TIER_CPU_OPENMP) && dd.bytes_to_host == N * 8 && dd.bytes_to_device == N * 8,
          "AUTO never, device data, scan: tier %s, %zu to host, %zu to device (expected CPU, %zu each)",
          xpar_tier_name(dd.tier), dd.bytes_to_host, dd.bytes_to_device, N * 8);
    CK(cudaMemcpy(hout, dout, N * 8, cudaMemcpyDeviceToHost));
    scal_t sc;
    memset(&sc, 0, sizeof sc);
    check_op(XPAR_DOUBLE, OP_SCAN_IS, N, h, NULL, &sc, hout, "AUTO never, device data, scan");
    XOK(xpar_reduce_nowait(ctx, XPAR_DOUBLE, XPAR_SUM, d, N, dres));
    dd = last_decision(ctx);
    CHECK(dd.tier == XPAR_TIER_CUDA && dd.bytes_to_host == 0 && dd.bytes_to_device == 0,
          "AUTO never, device data, reduce_nowait: tier %s, %zu/%zu bytes (expected cuda, 0, 0)", xpar_tier_name(dd.tier),
          dd.bytes_to_device, dd.bytes_to_host);
    XOK(xpar_wait(ctx));
    CK(cudaMemcpy(&s, dres, 8, cudaMemcpyDeviceToHost));
    CHECK(s == want, "AUTO never, reduce_nowait: %.17g, expected %.17g", s, want);
    XOK(xpar_context_destroy(ctx));
  }
  /* ---- reproducible flag in the record ---- */
  {
    xpar_context *ctx = ctx_new(XPAR_BACKEND_CUDA);
    XOK(xpar_context_set_reproducible(ctx, 1));
    double s = 0;
    XOK(xpar_reduce(ctx, XPAR_DOUBLE, XPAR_SUM, d, N, &s));
    xpar_decision dd = last_decision(ctx);
    CHECK(dd.reproducible == 1 && strstr(dd.reason, "reproducible"), "reproducible mode: record says %d, reason \"%s\"",
          dd.reproducible, dd.reason);
    XOK(xpar_context_destroy(ctx));
  }
  /* ---- shadow mode with the GPU primary ---- */
  {
    xpar_context *ctx = ctx_new(XPAR_BACKEND_CUDA);
    XOK(xpar_context_set_shadow(ctx, XPAR_TIER_CPU_SERIAL, 1));
    for (int op = 0; op < OP_ID_COUNT; op++) {
      for (int dti = 0; dti < N_DTYPES; dti++) {
        const xpar_dtype dt = ALL_DTYPES[dti];
        const size_t n = 100003, bytes = n * dsize(dt);
        rng_t r = rng_make(op * 16 + dti);
        unsigned char *hx = (unsigned char *)malloc(bytes), *hy = (unsigned char *)malloc(bytes), *bk = (unsigned char *)malloc(bytes);
        fill_random(dt, hx, n, &r);
        fill_random(dt, hy, n, &r);
        scal_t sc, res;
        rand_scalar(dt, &sc, &r);
        unsigned char *dx, *dy, *dz;
        CK(cudaMalloc((void **)&dx, bytes));
        CK(cudaMalloc((void **)&dy, bytes));
        CK(cudaMalloc((void **)&dz, bytes));
        CK(cudaMemcpy(dx, hx, bytes, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(dy, hy, bytes, cudaMemcpyHostToDevice));
        xpar_status st = run_op(ctx, dt, op, dx, dy, dz, n, &sc, &res, 0);
        xpar_decision dd = last_decision(ctx);
        char label[160];
        snprintf(label, sizeof label, "shadow cpu-serial, primary cuda, device data, dtype %s op %s", xpar_dtype_name(dt), op_id_name[op]);
        CHECK(st == XPAR_OK && !dd.shadow_mismatch && dd.shadow_tier == XPAR_TIER_CPU_SERIAL && dd.tier == XPAR_TIER_CUDA,
              "%s: status %s, mismatch %d, shadow tier %s, tier %s (reason \"%s\")", label, xpar_status_name(st), dd.shadow_mismatch,
              xpar_tier_name(dd.shadow_tier), xpar_tier_name(dd.tier), dd.reason);
        const char w = op_writes(op);
        if (op_scalar(op)) check_op(dt, op, n, hx, hy, &sc, &res, label);
        else {
          CK(cudaMemcpy(bk, w == 'o' ? dz : w == 'y' ? dy : dx, bytes, cudaMemcpyDeviceToHost));
          check_op(dt, op, n, hx, hy, &sc, bk, label);
        }
        cudaFree(dx); cudaFree(dy); cudaFree(dz);
        free(hx); free(hy); free(bk);
      }
    }
    /* mapped data: the shadow copies, the mapping stays valid where the primary left it */
    double *m = (double *)malloc(N * 8);
    memcpy(m, h, N * 8);
    XOK(xpar_map(ctx, m, N * 8, XPAR_MAP_TO));
    const double two = 2;
    XOK(xpar_axpy(ctx, XPAR_DOUBLE, &two, m, m, N)); /* m = 3h on the device */
    double s = 0;
    XOK(xpar_reduce(ctx, XPAR_DOUBLE, XPAR_SUM, m, N, &s));
    xpar_decision dd = last_decision(ctx);
    CHECK(s == 3 * want, "shadow, mapped: sum %.17g, expected %.17g", s, 3 * want);
    CHECK(dd.bytes_to_device == 0, "shadow, mapped: the GPU read after a GPU write moved %zu bytes to the device "
          "(did the shadow move the mapping to the host?)", dd.bytes_to_device);
    XOK(xpar_unmap(ctx, m, XPAR_UNMAP_FROM));
    CHECK(m[5] == 3 * h[5] && m[N - 1] == 3 * h[N - 1], "shadow, mapped: unmap FROM gave %g, expected %g", m[5], 3 * h[5]);
    free(m);
    XOK(xpar_context_destroy(ctx));
  }
  cudaFree(d);
  cudaFree(dout);
  cudaFree(dres);
  return probe_summary();
}
