/*
 * probe_stream: stream order with the application's own work on the legacy
 * default stream (xpar.h:425-441), for float, double and uint64, on backends
 * CUDA, AUTO (GPU thresholds 0), AUTO (defaults: small device-only calls are
 * copied to the host and run there) and forced CPU (device operands staged):
 *   app kernel on stream 0 (spins ~300 us, then writes the input) -> xpar call
 *   -> app kernel on stream 0 (spins, then copies xpar's output) -> check.
 * Inputs: device, managed, and pinned written by a stream-0 cudaMemcpyAsync.
 * Synchronous and nowait calls (nowait: checked through the stream-0 consumer
 * before xpar_wait, as the header promises, then again after xpar_wait).
 * Also xpar_mapped_device_ptr / xpar_update with the application's kernels,
 * and an application stream set with xpar_context_set_stream.
 */
#define PROBE_NAME "stream"
#include "probe_ops.h"

#define N ((size_t)(1 << 20) + 7)
#define DELAY 300000ull

static const int OPS[] = {OP_RSUM, OP_RMAX, OP_SCAN_IS, OP_SINIT_E, OP_AXPY, OP_ADD, OP_FILL, OP_DOT, OP_SCAN_INPLACE};

/* kinds of the input x */
enum { IN_DEVICE, IN_MANAGED, IN_PINNED_ASYNC, IN_COUNT };
static const char *in_name[IN_COUNT] = {"device", "managed", "pinned(async copy on stream 0)"};

int main(void) {
  probe_require_gpu();
  const xpar_dtype dts[] = {XPAR_FLOAT, XPAR_DOUBLE, XPAR_UINT64};
  unsigned char *src, *dx[IN_COUNT], *dy, *dout, *dres, *dst, *stage;
  CK(cudaMalloc((void **)&src, 2 * N * 8));
  CK(cudaMalloc((void **)&dx[IN_DEVICE], N * 8));
  CK(cudaMallocManaged((void **)&dx[IN_MANAGED], N * 8, cudaMemAttachGlobal));
  CK(cudaMallocHost((void **)&dx[IN_PINNED_ASYNC], N * 8));
  CK(cudaMalloc((void **)&stage, N * 8));
  CK(cudaMalloc((void **)&dy, N * 8));
  CK(cudaMalloc((void **)&dout, N * 8));
  CK(cudaMalloc((void **)&dres, 64));
  CK(cudaMalloc((void **)&dst, N * 8));
  unsigned char *hx = (unsigned char *)malloc(N * 8), *hy = (unsigned char *)malloc(N * 8),
                *back = (unsigned char *)malloc(N * 8), *old = (unsigned char *)malloc(N * 8);

  struct {
    const char *name;
    xpar_backend b;
    int gpu0;
  } cases[] = {{"cuda", XPAR_BACKEND_CUDA, 0},
               {"auto-gpu0", XPAR_BACKEND_AUTO, 1},
               {"auto", XPAR_BACKEND_AUTO, 0},
               {"cpu", XPAR_BACKEND_CPU, 0}};
  for (int bc = 0; bc < 4; bc++) {
    xpar_context *ctx = ctx_new(cases[bc].b);
    if (cases[bc].gpu0) ctx_gpu_thresholds(ctx, 0);
    for (int di = 0; di < 3; di++) {
      const xpar_dtype dt = dts[di];
      const size_t es = dsize(dt);
      for (int ik = 0; ik < IN_COUNT; ik++) {
        for (size_t oi = 0; oi < sizeof OPS / sizeof OPS[0]; oi++) {
          const int op = OPS[oi];
          for (int nowait = 0; nowait < 2; nowait++) {
            if (nowait && (cases[bc].b == XPAR_BACKEND_CPU)) continue;
            /* nowait outputs must live on the device (xpar.h:733-736): not pinned */
            if (nowait && ik == IN_PINNED_ASYNC && op_writes(op) == 'x') continue;
            /* AUTO with default thresholds on small data: a small n so that
             * the device-only path may copy to the host. */
            const size_t n = cases[bc].b == XPAR_BACKEND_AUTO && !cases[bc].gpu0 ? 1000 + 3 * oi : N;
            const size_t bytes = n * es;
            char label[200];
            snprintf(label, sizeof label, "backend=%s dtype=%s n=%zu op=%s%s x=%s", cases[bc].name,
                     xpar_dtype_name(dt), n, op_id_name[op], nowait ? " nowait" : "", in_name[ik]);
            rng_t r = rng_make(((uint64_t)bc << 32) ^ (di << 24) ^ (ik << 16) ^ (oi << 8) ^ nowait);
            /* the old contents: what a call that does not wait for the app would see */
            fill_random(dt, old, n, &r);
            fill_random(dt, hx, n, &r);
            fill_random(dt, hy, n, &r);
            scal_t sc;
            rand_scalar(dt, &sc, &r);
            CK(cudaDeviceSynchronize());
            /* old contents in place */
            if (ik == IN_DEVICE) CK(cudaMemcpy(dx[ik], old, bytes, cudaMemcpyHostToDevice));
            else memcpy(dx[ik], old, bytes);
            CK(cudaMemcpy(src, hx, bytes, cudaMemcpyHostToDevice));
            CK(cudaMemcpy(dy, hy, bytes, cudaMemcpyHostToDevice));
            CK(cudaMemset(dout, POISON_BYTE, bytes));
            CK(cudaMemset(dres, POISON_BYTE, 64));
            CK(cudaMemset(dst, 0, bytes));
            CK(cudaDeviceSynchronize());
            /* the application's producer on stream 0 */
            void *x = dx[ik];
            if (ik == IN_PINNED_ASYNC) {
              gpuaudit_slow_copy<<<264, 256>>>(stage, src, bytes, DELAY);
              CK(cudaGetLastError());
              CK(cudaMemcpyAsync(dx[ik], stage, bytes, cudaMemcpyDeviceToHost, 0));
            } else {
              gpuaudit_slow_copy<<<264, 256>>>(dx[ik], src, bytes, DELAY);
              CK(cudaGetLastError());
            }
            if (nowait && ik == IN_PINNED_ASYNC) {
              /* nowait outputs must live on the device; the pinned input is fine */
            }
            scal_t hres;
            memset(&hres, POISON_BYTE, sizeof hres);
            const char w = op_writes(op);
            void *out = w == 'o' ? dout : NULL;
            void *result = nowait ? (void *)dres : (void *)&hres;
            xpar_status st = run_op(ctx, dt, op, x, op_uses_y(op) ? dy : NULL, out, n, &sc, result, nowait);
            g_checks++;
            if (st != XPAR_OK) {
              FAILF("%s: status %s (%s)", label, xpar_status_name(st), xpar_last_error_detail());
              CK(cudaDeviceSynchronize());
              xpar_wait(ctx);
              continue;
            }
            xpar_decision d = last_decision(ctx);
            /* the application's consumer on stream 0, queued right after the call */
            const unsigned char *res_src = op_scalar(op) ? (nowait ? dres : NULL)
                                           : w == 'o' ? dout : w == 'y' ? dy : (unsigned char *)x;
            size_t res_bytes = op_scalar(op) ? op_result_bytes(dt, op) : bytes;
            if (res_src) {
              gpuaudit_slow_copy<<<264, 256>>>(dst, res_src, res_bytes, DELAY);
              CK(cudaGetLastError());
            }
            /* check through the consumer, before any xpar_wait */
            const void *got;
            if (res_src) {
              CK(cudaMemcpy(back, dst, res_bytes, cudaMemcpyDeviceToHost)); /* stream 0: after the consumer */
              got = back;
            } else {
              got = &hres;
            }
            char l2[420];
            snprintf(l2, sizeof l2, "%s (tier %s%s)", label, xpar_tier_name(d.tier),
                     nowait ? ", read by a stream-0 consumer before xpar_wait" : "");
            /* A CPU-tier call reading managed or pinned memory that a stream-0
             * kernel / copy is still writing: the stream rule speaks of the
             * context's GPU work, so this is reported as a NOTE only. */
            const int cpu_tier = d.tier == XPAR_TIER_CPU_SERIAL || d.tier == XPAR_TIER_CPU_OPENMP;
            g_soft = cpu_tier && ik != IN_DEVICE;
            if (g_soft) snprintf(l2 + strlen(l2), sizeof l2 - strlen(l2), " [CPU tier on host-accessible memory written by stream-0 work]");
            check_op(dt, op, n, hx, hy, &sc, got, l2);
            g_soft = 0;
            if (nowait) {
              XOK(xpar_wait(ctx));
              if (res_src) {
                CK(cudaMemcpy(back, res_src, res_bytes, cudaMemcpyDeviceToHost));
                snprintf(l2, sizeof l2, "%s (tier %s, after xpar_wait)", label, xpar_tier_name(d.tier));
                check_op(dt, op, n, hx, hy, &sc, back, l2);
              }
            }
            CK(cudaDeviceSynchronize());
          }
        }
      }
    }
    XOK(xpar_context_destroy(ctx));
  }

  /* ---- mapped arrays and the application's kernels ---- */
  {
    const size_t n = N;
    double *h = (double *)malloc(n * 8), *want = (double *)malloc(n * 8);
    rng_t r = rng_make(777);
    fill_random(XPAR_DOUBLE, h, n, &r);
    for (int bk = 0; bk < 2; bk++) {
      const char *bn = bk ? "auto" : "cuda";
      xpar_context *ctx = ctx_new(bk ? XPAR_BACKEND_AUTO : XPAR_BACKEND_CUDA);
      XOK(xpar_map(ctx, h, n * 8, XPAR_MAP_TO));
      /* the host copy becomes the newer one (forced cpu-serial fill), then the
       * device pointer must hold it, for a stream-0 kernel queued right after */
      xpar_context_set_backend(ctx, XPAR_BACKEND_CPU_SERIAL);
      const double v = 3.25;
      XOK(xpar_fill(ctx, XPAR_DOUBLE, &v, h, n));
      xpar_context_set_backend(ctx, bk ? XPAR_BACKEND_AUTO : XPAR_BACKEND_CUDA);
      void *d = NULL;
      XOK(xpar_mapped_device_ptr(ctx, h, &d));
      if (d) {
        gpuaudit_slow_copy<<<264, 256>>>(dst, (const unsigned char *)d, n * 8, 0);
        CK(cudaGetLastError());
        CK(cudaMemcpy(back, dst, n * 8, cudaMemcpyDeviceToHost));
        size_t bad = n;
        for (size_t i = 0; i < n && bad == n; i++)
          if (((double *)back)[i] != v) bad = i;
        CHECK(bad == n, "%s: mapped_device_ptr after a CPU write: device[%zu] = %.17g, expected %.17g", bn,
              bad, bad < n ? ((double *)back)[bad] : 0.0, v);
        /* the application writes through the device pointer (a slow stream-0
         * kernel), then xpar_update(FROM_DEVICE) at once: the host sees it */
        for (size_t i = 0; i < n; i++) want[i] = (double)(i % 1000) - 500.25;
        CK(cudaMemcpy(src, want, n * 8, cudaMemcpyHostToDevice));
        CK(cudaDeviceSynchronize());
        gpuaudit_slow_copy<<<264, 256>>>((unsigned char *)d, src, n * 8, DELAY);
        CK(cudaGetLastError());
        XOK(xpar_update(ctx, h, XPAR_UPDATE_FROM_DEVICE));
        bad = n;
        for (size_t i = 0; i < n && bad == n; i++)
          if (h[i] != want[i]) bad = i;
        CHECK(bad == n, "%s: app kernel wrote through mapped_device_ptr, then xpar_update(FROM_DEVICE): "
              "h[%zu] = %.17g, expected %.17g", bn, bad, bad < n ? h[bad] : 0.0, bad < n ? want[bad] : 0.0);
        /* and an xpar call on the mapping now reads the application's data */
        double s = 0;
        XOK(xpar_reduce(ctx, XPAR_DOUBLE, XPAR_MAX, h, n, &s));
        CHECK(s == 498.75, "%s: reduce max over the mapping after update = %.17g, expected 498.75", bn, s);
        /* xpar writes the mapping on the GPU (forced cuda), a stream-0 kernel
         * reads it through the device pointer right after */
        xpar_context_set_backend(ctx, XPAR_BACKEND_CUDA);
        const double v2 = -7.5;
        XOK(xpar_fill(ctx, XPAR_DOUBLE, &v2, h, n));
        void *d2 = NULL;
        XOK(xpar_mapped_device_ptr(ctx, h, &d2));
        CHECK(d2 == d, "%s: mapped_device_ptr changed (%p, then %p)", bn, d, d2);
        gpuaudit_slow_copy<<<264, 256>>>(dst, (const unsigned char *)d2, n * 8, DELAY);
        CK(cudaGetLastError());
        CK(cudaMemcpy(back, dst, n * 8, cudaMemcpyDeviceToHost));
        bad = n;
        for (size_t i = 0; i < n && bad == n; i++)
          if (((double *)back)[i] != v2) bad = i;
        CHECK(bad == n, "%s: xpar fill on a mapping, then stream-0 kernel via mapped_device_ptr: [%zu] = %.17g",
              bn, bad, bad < n ? ((double *)back)[bad] : 0.0);
      }
      XOK(xpar_unmap(ctx, h, XPAR_UNMAP_FROM));
      size_t bad = n;
      for (size_t i = 0; i < n && bad == n; i++)
        if (h[i] != -7.5) bad = i;
      CHECK(bad == n, "%s: unmap FROM after a GPU fill: h[%zu] = %.17g", bn, bad, bad < n ? h[bad] : 0.0);
      XOK(xpar_context_destroy(ctx));
    }
    free(h);
    free(want);
  }

  /* ---- an application stream (non-blocking): everything ordered in it ---- */
  {
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    xpar_context *ctx = ctx_new(XPAR_BACKEND_CUDA);
    XOK(xpar_context_set_stream(ctx, (void *)s));
    const size_t n = N;
    for (int nowait = 0; nowait < 2; nowait++) {
      rng_t r = rng_make(4242 + nowait);
      fill_random(XPAR_FLOAT, hx, n, &r);
      fill_random(XPAR_FLOAT, old, n, &r);
      CK(cudaMemcpy(dx[IN_DEVICE], old, n * 4, cudaMemcpyHostToDevice));
      CK(cudaMemcpy(src, hx, n * 4, cudaMemcpyHostToDevice));
      CK(cudaMemset(dout, POISON_BYTE, n * 4));
      CK(cudaDeviceSynchronize());
      gpuaudit_slow_copy<<<264, 256, 0, s>>>(dx[IN_DEVICE], src, n * 4, DELAY);
      CK(cudaGetLastError());
      scal_t sc;
      memset(&sc, 0, sizeof sc);
      XOK(run_op(ctx, XPAR_FLOAT, OP_SCAN_ES, dx[IN_DEVICE], NULL, dout, n, &sc, NULL, nowait));
      gpuaudit_slow_copy<<<264, 256, 0, s>>>(dst, dout, n * 4, DELAY);
      CK(cudaGetLastError());
      CK(cudaMemcpyAsync(back, dst, n * 4, cudaMemcpyDeviceToHost, s));
      CK(cudaStreamSynchronize(s));
      char l[128];
      snprintf(l, sizeof l, "app stream (non-blocking) set on the context, scan%s", nowait ? " nowait" : "");
      check_op(XPAR_FLOAT, OP_SCAN_ES, n, hx, NULL, &sc, back, l);
      if (nowait) XOK(xpar_wait(ctx));
    }
    XOK(xpar_context_destroy(ctx));
    CK(cudaStreamSynchronize(s));
    CK(cudaStreamDestroy(s));
  }
  return probe_summary();
}
