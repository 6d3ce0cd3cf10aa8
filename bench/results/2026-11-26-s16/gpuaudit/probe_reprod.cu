/*
 * probe_reprod: reproducible mode on the GPU (xpar.h:358-378,
 * docs/reproducible.md): float and double reduce SUM, reduce_sum_wide, dot,
 * scan SUM (inclusive / exclusive) and scan_init SUM (both kinds) give the
 * same bits on cpu-serial, cpu-openmp (1, 3, 16 threads, OpenMP threshold 0),
 * cuda (default shape, 1x1, 7x33, 1000x256, 3x1024), cuda-serial, AUTO
 * (default and with GPU thresholds 0), "for any alignment of the arrays"
 * (element offsets 0..3) and for any memory kind (device, pinned, pageable,
 * managed, mapped), and for the nowait variants (device outputs); the result
 * is within the stated bound of the exact value (h u / (1 - h u) sum|terms|,
 * h = 19 + ceil(log2 nb); scans h = 34 + 2 ceil(log2 nb)).
 * The reference is cpu-serial on pageable memory at offset 0.
 */
#define PROBE_NAME "reprod"
#include <string>
#include "probe_ops.h"

static const int OPS[] = {OP_RSUM, OP_WIDE, OP_DOT, OP_SCAN_IS, OP_SCAN_ES, OP_SINIT_I, OP_SINIT_E, OP_SCAN_INPLACE};
#define NOPS (sizeof OPS / sizeof OPS[0])

struct tier_case {
  const char *name;
  xpar_backend b;
  int threads; /* cpu: OpenMP threads */
  unsigned grid, block;
  int gpu0;
  size_t nmax; /* skip bigger n (cuda-serial) */
};

static double bound_h(int op, size_t n) {
  size_t nb = (n + 8191) / 8192;
  int lg = 0;
  while (((size_t)1 << lg) < nb) lg++;
  return (op == OP_RSUM || op == OP_WIDE || op == OP_DOT) ? 19 + lg : 34 + 2 * lg;
}

int main(void) {
  probe_require_gpu();
  const size_t sizes[] = {1, 7, 8191, 8193, 3 * 8192 + 5, 100003, (1 << 20) + 1};
  const size_t NMAX = (1 << 20) + 1;
  const tier_case tiers[] = {
      {"cuda", XPAR_BACKEND_CUDA, 0, 0, 0, 0, NMAX},
      {"cuda 1x1", XPAR_BACKEND_CUDA, 0, 1, 1, 0, 100003},
      {"cuda 7x33", XPAR_BACKEND_CUDA, 0, 7, 33, 0, NMAX},
      {"cuda 1000x256", XPAR_BACKEND_CUDA, 0, 1000, 256, 0, NMAX},
      {"cuda 3x1024", XPAR_BACKEND_CUDA, 0, 3, 1024, 0, NMAX},
      {"cuda-serial", XPAR_BACKEND_CUDA_SERIAL, 0, 0, 0, 0, 100003},
      {"cpu 1 thread", XPAR_BACKEND_CPU, 1, 0, 0, 0, NMAX},
      {"cpu 3 threads", XPAR_BACKEND_CPU, 3, 0, 0, 0, NMAX},
      {"cpu 16 threads", XPAR_BACKEND_CPU, 16, 0, 0, 0, NMAX},
      {"auto", XPAR_BACKEND_AUTO, 0, 0, 0, 0, NMAX},
      {"auto gpu0", XPAR_BACKEND_AUTO, 0, 0, 0, 1, NMAX},
  };
  const int NT = sizeof tiers / sizeof tiers[0];
  xpar_context *ctxs[16];
  for (int t = 0; t < NT; t++) {
    ctxs[t] = ctx_new(tiers[t].b);
    XOK(xpar_context_set_reproducible(ctxs[t], 1));
    if (tiers[t].grid) XOK(xpar_context_set_launch_shape(ctxs[t], tiers[t].grid, tiers[t].block));
    if (tiers[t].threads) {
      XOK(xpar_context_set_num_threads(ctxs[t], tiers[t].threads));
      for (int op = 0; op < XPAR_OP_COUNT_; op++)
        for (int d = 0; d < N_DTYPES; d++)
          xpar_context_set_threshold(ctxs[t], (xpar_op)op, ALL_DTYPES[d], XPAR_THRESHOLD_OPENMP, 0);
    }
    if (tiers[t].gpu0) ctx_gpu_thresholds(ctxs[t], 0);
  }
  xpar_context *ref = ctx_new(XPAR_BACKEND_CPU_SERIAL);
  XOK(xpar_context_set_reproducible(ref, 1));

  static buf_t bx[MK_COUNT], by[MK_COUNT], bo[MK_COUNT];
  for (int k = 0; k < MK_COUNT; k++) {
    buf_alloc(&bx[k], (enum mem_kind)k, NMAX * 8 + 64);
    buf_alloc(&by[k], (enum mem_kind)k, NMAX * 8 + 64);
    buf_alloc(&bo[k], (enum mem_kind)k, NMAX * 8 + 64);
  }
  unsigned char *hx = (unsigned char *)malloc(NMAX * 8), *hy = (unsigned char *)malloc(NMAX * 8),
                *want = (unsigned char *)malloc(NMAX * 8), *img = (unsigned char *)malloc(bx[0].total),
                *work = (unsigned char *)malloc(NMAX * 8);
  unsigned char *dres;
  CK(cudaMalloc((void **)&dres, 16));

  const xpar_dtype dts[2] = {XPAR_FLOAT, XPAR_DOUBLE};
  for (int di = 0; di < 2; di++) {
    const xpar_dtype dt = dts[di];
    const size_t es = dsize(dt);
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
      const size_t n = sizes[si], bytes = n * es;
      rng_t r = rng_make(di * 100 + si);
      fill_random(dt, hx, n, &r);
      fill_random(dt, hy, n, &r);
      /* wide magnitudes and cancelling pairs, so that any other order rounds differently */
      for (size_t i = 0; i + 1 < n; i += 7) {
        if (dt == XPAR_FLOAT) { ((float *)hx)[i] *= 65536.0f; ((float *)hx)[i + 1] = -((float *)hx)[i] * 0.999f; }
        else { ((double *)hx)[i] *= 1e12; ((double *)hx)[i + 1] = -((double *)hx)[i] * (1 - 1e-9); }
      }
      scal_t sc;
      rand_scalar(dt, &sc, &r);
      for (size_t oi = 0; oi < NOPS; oi++) {
        const int op = OPS[oi];
        const char w = op_writes(op);
        /* reference: cpu-serial, pageable, offset 0 */
        scal_t rres;
        memset(&rres, 0, sizeof rres);
        memcpy(work, hx, bytes);
        memset(want, POISON_BYTE, bytes);
        XOK(run_op(ref, dt, op, work, hy, want, n, &sc, &rres, 0));
        const unsigned char *wantp = op_scalar(op) ? rres.b : w == 'x' ? work : want;
        const size_t wbytes = op_scalar(op) ? op_result_bytes(dt, op) : bytes;
        {
          char label[128];
          snprintf(label, sizeof label, "reproducible cpu-serial reference, dtype %s n=%zu op %s", xpar_dtype_name(dt), n, op_id_name[op]);
          /* the stated bound against the exact value */
          const double hb = bound_h(op, n);
          dd_t e = {0, 0};
          double mag = 0;
          const int is_scan = !op_scalar(op);
          double init = 0;
          if (op == OP_SINIT_I || op == OP_SINIT_E) init = dt == XPAR_FLOAT ? (double)sc.f : sc.d;
          dd_add(&e, init);
          mag = fabs(init);
          xpar_dtype bt = (op == OP_WIDE) ? XPAR_DOUBLE : dt;
          double u = bt == XPAR_FLOAT ? ldexp(1.0, -24) : ldexp(1.0, -53);
          double coef = hb * u / (1 - hb * u);
          int bad = 0;
          for (size_t i = 0; i < n && !bad; i++) {
            double xi = dt == XPAR_FLOAT ? (double)((float *)hx)[i] : ((double *)hx)[i];
            double yi = dt == XPAR_FLOAT ? (double)((float *)hy)[i] : ((double *)hy)[i];
            const int excl = op == OP_SCAN_ES || op == OP_SINIT_E;
            const double before = dd_val(e);
            if (op == OP_DOT) { dd_add_prod(&e, xi, yi); mag += fabs(xi * yi); }
            else { dd_add(&e, xi); mag += fabs(xi); }
            if (is_scan) {
              /* the header's bound for element i: (|init| + sum_{j <= i} |x_j|), both kinds */
              const double ex = excl ? before : dd_val(e);
              double g = dt == XPAR_FLOAT ? (double)((const float *)wantp)[i] : ((const double *)wantp)[i];
              if (!(fabs(g - ex) <= coef * mag)) {
                FAILF("%s: out[%zu] = %.17g, exact %.17g, beyond the stated bound %.3g", label, i, g, ex, coef * mag);
                bad = 1;
              }
            }
          }
          if (!is_scan) {
            double g = op == OP_WIDE ? rres.d : dt == XPAR_FLOAT ? (double)rres.f : rres.d;
            CHECK(fabs(g - dd_val(e)) <= coef * mag, "%s: %.17g, exact %.17g, beyond the stated bound %.3g", label, g,
                  dd_val(e), coef * mag);
          } else {
            g_checks++;
          }
        }
        for (int t = 0; t < NT; t++) {
          if (n > tiers[t].nmax) continue;
          for (int nowait = 0; nowait < 2; nowait++) {
            if (nowait && tiers[t].b != XPAR_BACKEND_CUDA && tiers[t].b != XPAR_BACKEND_AUTO) continue;
            if (nowait && op == OP_WIDE) continue;
            const int kx = (int)((t + si + oi + nowait) % MK_COUNT), ky = (kx + 1) % MK_COUNT;
            /* nowait: outputs on the device */
            int ko = (int)((t + oi) % MK_COUNT);
            int kxx = kx;
            if (nowait) {
              ko = (ko % 2) ? MK_MANAGED : MK_DEVICE;
              if (w == 'x') kxx = (kx % 2) ? MK_MAPPED : MK_DEVICE;
            }
            const size_t off = ((t + si + oi) % 4) * es;
            xpar_context *ctx = ctxs[t];
            buf_map(&bx[kxx], ctx);
            buf_map(&by[ky], ctx);
            buf_map(&bo[ko], ctx);
            buf_write(&bx[kxx], off, hx, bytes);
            if (op == OP_DOT) buf_write(&by[ky], 0, hy, bytes);
            if (w == 'o') buf_write(&bo[ko], off, NULL, bytes);
            scal_t res;
            memset(&res, POISON_BYTE, sizeof res);
            CK(cudaMemset(dres, POISON_BYTE, 16));
            xpar_status st = run_op(ctx, dt, op, buf_ptr(&bx[kxx], off), buf_ptr(&by[ky], 0), buf_ptr(&bo[ko], off), n, &sc,
                                    nowait ? (void *)dres : (void *)&res, nowait);
            char label[256];
            snprintf(label, sizeof label, "reproducible %s%s dtype %s n=%zu op %s x=%s+%zu%s out=%s", tiers[t].name,
                     nowait ? " nowait" : "", xpar_dtype_name(dt), n, op_id_name[op], mk_name[kxx], off / es,
                     op == OP_DOT ? (std::string(" y=") + mk_name[ky]).c_str() : "", w == 'o' ? mk_name[ko] : "-");
            g_checks++;
            if (st != XPAR_OK) {
              FAILF("%s: status %s (%s)", label, xpar_status_name(st), xpar_last_error_detail());
            } else {
              xpar_decision d = last_decision(ctx);
              CHECK(d.reproducible == 1, "%s: decision record says reproducible %d", label, d.reproducible);
              if (nowait) XOK(xpar_wait(ctx));
              const unsigned char *got;
              if (op_scalar(op)) {
                if (nowait) CK(cudaMemcpy(&res, dres, 16, cudaMemcpyDeviceToHost));
                got = res.b;
              } else {
                buf_t *b = w == 'x' ? &bx[kxx] : &bo[ko];
                buf_read(b, img);
                g_checks++;
                guards_ok(b, img, off, bytes, label);
                got = img + GUARD + off;
              }
              size_t first = 0;
              while (first < wbytes && got[first] == wantp[first]) first++;
              char a[64], bb[64];
              const xpar_dtype rt = op == OP_WIDE ? XPAR_DOUBLE : dt;
              const size_t re = dsize(rt);
              CHECK(first == wbytes, "%s (tier %s): differs from cpu-serial at element %zu: %s vs %s", label,
                    xpar_tier_name(d.tier), first / re, fmt_elem(rt, got, first / re, a, 64),
                    fmt_elem(rt, wantp, first / re, bb, 64));
            }
            buf_unmap(&bx[kxx]);
            buf_unmap(&by[ky]);
            buf_unmap(&bo[ko]);
          }
        }
      }
    }
  }
  for (int t = 0; t < NT; t++) xpar_context_destroy(ctxs[t]);
  xpar_context_destroy(ref);
  return probe_summary();
}
