/*
 * probe_nowait: the nowait variants (xpar.h:729-760).
 *  - every nowait op x dtype, outputs in device / managed / mapped memory,
 *    scalar results in device and managed memory, inputs of every kind,
 *    queued back to back on one context, one xpar_wait, then all checked
 *    (backends CUDA, AUTO, AUTO with GPU thresholds 0, CUDA_SERIAL);
 *  - scan_init_nowait reads *init before it returns (the caller's temporary
 *    is overwritten at once);
 *  - AUTO: a nowait call on device-only data stays on the GPU at any n
 *    (xpar.h:249-258); a nowait call AUTO runs on the CPU has completed when
 *    it returns (xpar.h:737-738; observed on managed memory, no wait);
 *  - argument errors of nowait calls: returned at once, nothing written, and
 *    the next xpar_wait reports nothing from them; the context keeps working;
 *  - xpar_wait with nothing queued, xpar_wait(NULL).
 */
#define PROBE_NAME "nowait"
#include "probe_ops.h"

#define NMAX ((size_t)300007)
static const int OPS[] = {OP_RSUM, OP_RMIN, OP_RMAX, OP_SCAN_IS, OP_SCAN_ES, OP_SCAN_IMIN, OP_SCAN_EMAX,
                          OP_SINIT_I, OP_SINIT_E, OP_AXPY, OP_ADD, OP_FILL, OP_DOT, OP_SCAN_INPLACE,
                          OP_ADD_ALIAS, OP_AXPY_SAME};
#define NOPS (sizeof OPS / sizeof OPS[0])
static const enum mem_kind IN_KINDS[5] = {MK_DEVICE, MK_PINNED, MK_PAGEABLE, MK_MANAGED, MK_MAPPED};
static const enum mem_kind OUT_KINDS[3] = {MK_DEVICE, MK_MANAGED, MK_MAPPED};

int main(void) {
  probe_require_gpu();
  /* per queued op: x, y, out buffers */
  static buf_t bx[NOPS], by[NOPS], bo[NOPS];
  unsigned char *res_dev, *res_man;
  CK(cudaMalloc((void **)&res_dev, NOPS * 16));
  CK(cudaMallocManaged((void **)&res_man, NOPS * 16, cudaMemAttachGlobal));
  unsigned char *img = (unsigned char *)malloc(NMAX * 8 + 2 * GUARD + 64);
  static unsigned char *hx[NOPS], *hy[NOPS];
  for (size_t i = 0; i < NOPS; i++) {
    hx[i] = (unsigned char *)malloc(NMAX * 8);
    hy[i] = (unsigned char *)malloc(NMAX * 8);
  }
  struct {
    const char *name;
    xpar_backend b;
    int gpu0;
    size_t n;
  } cases[] = {{"cuda", XPAR_BACKEND_CUDA, 0, NMAX},
               {"auto", XPAR_BACKEND_AUTO, 0, NMAX},
               {"auto-small", XPAR_BACKEND_AUTO, 0, 999},
               {"auto-gpu0", XPAR_BACKEND_AUTO, 1, 4097},
               {"cuda-serial", XPAR_BACKEND_CUDA_SERIAL, 0, 5003}};
  for (int bc = 0; bc < 5; bc++) {
    for (int round = 0; round < 3; round++) {
      xpar_context *ctx = ctx_new(cases[bc].b);
      if (cases[bc].gpu0) ctx_gpu_thresholds(ctx, 0);
      const size_t n = cases[bc].n;
      for (int di = 0; di < N_DTYPES; di++) {
        const xpar_dtype dt = ALL_DTYPES[di];
        const size_t es = dsize(dt), bytes = n * es;
        scal_t sc[NOPS];
        char label[NOPS][200];
        int queued[NOPS];
        unsigned char *resp[NOPS];
        /* set up and queue every op */
        for (size_t k = 0; k < NOPS; k++) {
          const int op = OPS[k];
          const size_t r5 = (k + round + di) % 5;
          enum mem_kind kx = IN_KINDS[r5], ky = IN_KINDS[(r5 + 2) % 5], ko = OUT_KINDS[(k + round) % 3];
          const char w = op_writes(op);
          /* outputs live on the device (xpar.h:733-736) */
          if (w == 'x') kx = OUT_KINDS[(k + round + 1) % 3];
          if (w == 'y') ky = OUT_KINDS[(k + round + 2) % 3];
          buf_alloc(&bx[k], kx, bytes + 16);
          buf_alloc(&by[k], ky, bytes + 16);
          buf_alloc(&bo[k], ko, bytes + 16);
          buf_map(&bx[k], ctx);
          buf_map(&by[k], ctx);
          buf_map(&bo[k], ctx);
          rng_t r = rng_make(((uint64_t)bc << 40) ^ ((uint64_t)round << 32) ^ (di << 16) ^ k);
          fill_random(dt, hx[k], n, &r);
          fill_random(dt, hy[k], n, &r);
          rand_scalar(dt, &sc[k], &r);
          const size_t off = (k & 1) ? es : 0;
          buf_write(&bx[k], off, hx[k], bytes);
          buf_write(&by[k], 0, hy[k], bytes);
          buf_write(&bo[k], off, NULL, bytes);
          resp[k] = ((k + round) & 1) ? res_man + 16 * k : res_dev + 16 * k;
          snprintf(label[k], sizeof label[k], "backend=%s round=%d dtype=%s n=%zu op=%s nowait x=%s y=%s out=%s result=%s",
                   cases[bc].name, round, xpar_dtype_name(dt), n, op_id_name[op], mk_name[kx],
                   op_uses_y(op) ? mk_name[ky] : "-", w == 'o' ? mk_name[ko] : "-",
                   op_scalar(op) ? (((k + round) & 1) ? "managed" : "device") : "-");
        }
        CK(cudaMemset(res_dev, POISON_BYTE, NOPS * 16));
        memset(res_man, POISON_BYTE, NOPS * 16);
        CK(cudaDeviceSynchronize());
        for (size_t k = 0; k < NOPS; k++) {
          const int op = OPS[k];
          const size_t off = (k & 1) ? es : 0;
          scal_t tmp = sc[k]; /* a temporary: overwritten right after the call */
          xpar_status st = run_op(ctx, dt, op, buf_ptr(&bx[k], off), op_uses_y(op) ? buf_ptr(&by[k], 0) : NULL,
                                  op_writes(op) == 'o' ? buf_ptr(&bo[k], off) : NULL, n, &tmp, resp[k], 1);
          memset(&tmp, 0x3C, sizeof tmp);
          queued[k] = st == XPAR_OK;
          XSTATUS(XPAR_OK, st, "%s", label[k]);
        }
        XOK(xpar_wait(ctx));
        for (size_t k = 0; k < NOPS; k++) {
          if (!queued[k]) continue;
          const int op = OPS[k];
          const char w = op_writes(op);
          const size_t off = (k & 1) ? es : 0;
          const unsigned char *got;
          scal_t res;
          if (op_scalar(op)) {
            CK(cudaMemcpy(&res, resp[k], 16, cudaMemcpyDefault));
            got = res.b;
            size_t rb = op_result_bytes(dt, op);
            int untouched = 1;
            for (size_t i = rb; i < 16; i++) untouched &= res.b[i] == POISON_BYTE;
            CHECK(untouched, "%s: bytes past the scalar result were written", label[k]);
          } else {
            buf_t *b = w == 'o' ? &bo[k] : w == 'y' ? &by[k] : &bx[k];
            size_t o = w == 'y' ? 0 : off;
            buf_read(b, img);
            g_checks++;
            guards_ok(b, img, o, bytes, label[k]);
            got = img + GUARD + o;
          }
          check_op(dt, op, n, hx[k], hy[k], &sc[k], got, label[k]);
          if (w != 'x') {
            buf_read(&bx[k], img);
            CHECK(!memcmp(img + GUARD + off, hx[k], bytes), "%s: input x was modified", label[k]);
          }
        }
        for (size_t k = 0; k < NOPS; k++) {
          buf_free(&bx[k]);
          buf_free(&by[k]);
          buf_free(&bo[k]);
        }
      }
      XOK(xpar_context_destroy(ctx));
    }
  }

  /* ---- AUTO: nowait on device-only data stays on the GPU at any n ---- */
  {
    xpar_context *ctx = ctx_new(XPAR_BACKEND_AUTO);
    double *d, *dout, *dr;
    CK(cudaMalloc((void **)&d, 64 * 8));
    CK(cudaMalloc((void **)&dout, 64 * 8));
    CK(cudaMalloc((void **)&dr, 8));
    double h[64];
    for (int i = 0; i < 64; i++) h[i] = i + 0.5;
    CK(cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice));
    const size_t ns[] = {1, 7, 64};
    for (int i = 0; i < 3; i++) {
      XOK(xpar_reduce_nowait(ctx, XPAR_DOUBLE, XPAR_SUM, d, ns[i], dr));
      xpar_decision dd = last_decision(ctx);
      CHECK(dd.tier == XPAR_TIER_CUDA, "auto reduce_nowait on device data, n=%zu: ran on %s (reason \"%s\")",
            ns[i], xpar_tier_name(dd.tier), dd.reason);
      XOK(xpar_scan_nowait(ctx, XPAR_DOUBLE, XPAR_SUM, XPAR_INCLUSIVE, d, dout, ns[i]));
      dd = last_decision(ctx);
      CHECK(dd.tier == XPAR_TIER_CUDA, "auto scan_nowait on device data, n=%zu: ran on %s (reason \"%s\")",
            ns[i], xpar_tier_name(dd.tier), dd.reason);
      XOK(xpar_wait(ctx));
      double s = 0, want = 0;
      CK(cudaMemcpy(&s, dr, 8, cudaMemcpyDeviceToHost));
      for (size_t j = 0; j < ns[i]; j++) want += h[j];
      CHECK(s == want, "auto reduce_nowait on device data, n=%zu: %.17g, expected %.17g", ns[i], s, want);
    }
    /* a nowait call AUTO runs on the CPU (managed output, small n) has
     * completed when it returns: read on the host at once, no wait */
    double *m;
    CK(cudaMallocManaged((void **)&m, 4096 * 8, cudaMemAttachGlobal));
    for (int i = 0; i < 4096; i++) m[i] = -1;
    CK(cudaDeviceSynchronize());
    int saw_cpu = 0;
    for (int rep = 0; rep < 4; rep++) {
      const double v = 11.0 + rep;
      const size_t n = 100 + rep * 1000;
      XOK(xpar_fill_nowait(ctx, XPAR_DOUBLE, &v, m, n));
      xpar_decision dd = last_decision(ctx);
      if (dd.tier == XPAR_TIER_CPU_SERIAL || dd.tier == XPAR_TIER_CPU_OPENMP) {
        saw_cpu = 1;
        size_t bad = n;
        for (size_t i = 0; i < n && bad == n; i++)
          if (m[i] != v) bad = i;
        CHECK(bad == n, "auto fill_nowait on managed memory ran on %s but was not complete when it returned: "
              "m[%zu] = %g", xpar_tier_name(dd.tier), bad, bad < n ? m[bad] : 0.0);
      }
      XOK(xpar_wait(ctx));
    }
    if (!saw_cpu) printf("# nowait: AUTO ran every small managed fill on the GPU; the CPU-completion check did not apply\n");
    cudaFree(m);
    cudaFree(d);
    cudaFree(dout);
    cudaFree(dr);
    XOK(xpar_context_destroy(ctx));
  }

  /* ---- argument errors of nowait calls ---- */
  {
    xpar_context *ctx = ctx_new(XPAR_BACKEND_CUDA);
    const size_t n = 4096;
    unsigned char *d, *out, *res;
    CK(cudaMalloc((void **)&d, n * 8 + 64));
    CK(cudaMalloc((void **)&out, n * 8 + 64));
    CK(cudaMalloc((void **)&res, 64));
    CK(cudaMemset(d, 0, n * 8 + 64));
    CK(cudaMemset(out, POISON_BYTE, n * 8 + 64));
    CK(cudaMemset(res, POISON_BYTE, 64));
    const double one = 1.0;
    XSTATUS(XPAR_ERR_INVALID_ARGUMENT, xpar_scan_nowait(ctx, XPAR_DOUBLE, XPAR_SUM, XPAR_INCLUSIVE, d + 4, out, n), "misaligned input");
    {
      xpar_status st = xpar_reduce_nowait(ctx, XPAR_DOUBLE, XPAR_SUM, d, n, res + 4);
      CHECK(st != XPAR_OK, "reduce_nowait into a device result misaligned for double (xpar.h:736-737) was accepted");
    }
    XSTATUS(XPAR_ERR_NULL_POINTER, xpar_reduce_nowait(ctx, XPAR_DOUBLE, XPAR_SUM, d, n, NULL), "NULL result");
    XSTATUS(XPAR_ERR_OVERLAP, xpar_scan_nowait(ctx, XPAR_DOUBLE, XPAR_SUM, XPAR_INCLUSIVE, d, d + 8, n), "partial overlap");
    XSTATUS(XPAR_ERR_OVERLAP, xpar_add_nowait(ctx, XPAR_DOUBLE, d, d, d + 16, n), "partial overlap of z");
    XSTATUS(XPAR_ERR_NULL_POINTER, xpar_fill_nowait(ctx, XPAR_DOUBLE, NULL, out, n), "NULL value");
    XSTATUS(XPAR_ERR_INVALID_ENUM, xpar_fill_nowait(ctx, (xpar_dtype)77, &one, out, n), "bad dtype");
    XSTATUS(XPAR_ERR_SIZE_OVERFLOW, xpar_fill_nowait(ctx, XPAR_DOUBLE, &one, out, SIZE_MAX / 4), "n*8 overflows");
    XSTATUS(XPAR_OK, xpar_wait(ctx), "xpar_wait after refused nowait calls");
    unsigned char *back = (unsigned char *)malloc(n * 8 + 64);
    CK(cudaMemcpy(back, out, n * 8 + 64, cudaMemcpyDeviceToHost));
    int untouched = 1;
    for (size_t i = 0; i < n * 8 + 64; i++) untouched &= back[i] == POISON_BYTE;
    CHECK(untouched, "refused nowait calls wrote their output array");
    CK(cudaMemcpy(back, res, 64, cudaMemcpyDeviceToHost));
    untouched = 1;
    for (size_t i = 0; i < 64; i++) untouched &= back[i] == POISON_BYTE;
    CHECK(untouched, "refused nowait reduces wrote their device result");
    /* still works */
    XOK(xpar_fill_nowait(ctx, XPAR_DOUBLE, &one, d, n));
    XOK(xpar_reduce_nowait(ctx, XPAR_DOUBLE, XPAR_SUM, d, n, res));
    XOK(xpar_wait(ctx));
    double s = 0;
    CK(cudaMemcpy(&s, res, 8, cudaMemcpyDeviceToHost));
    CHECK(s == (double)n, "nowait after refused calls: sum %.17g, expected %zu", s, n);
    XSTATUS(XPAR_OK, xpar_wait(ctx), "xpar_wait with nothing queued");
    XSTATUS(XPAR_ERR_NULL_CONTEXT, xpar_wait(NULL), "xpar_wait(NULL)");
    /* a pageable output for a nowait call: the headers leave this open
     * (outputs "must live on the device"); report what happens as notes */
    g_soft = 1;
    double hres = -123;
    xpar_status st = xpar_reduce_nowait(ctx, XPAR_DOUBLE, XPAR_SUM, d, n, &hres);
    xpar_status w = xpar_wait(ctx);
    if (st == XPAR_OK) {
      CHECK(hres == (double)n && w == XPAR_OK, "reduce_nowait into a pageable result: OK, but after xpar_wait (%s) the result is %.17g", xpar_status_name(w), hres);
    } else {
      CHECK(hres == -123, "reduce_nowait into a pageable result refused (%s) but wrote it", xpar_status_name(st));
      printf("# nowait: reduce_nowait into a pageable result: %s (%s)\n", xpar_status_name(st), xpar_last_error_detail());
    }
    g_soft = 0;
    free(back);
    cudaFree(d);
    cudaFree(out);
    cudaFree(res);
    XOK(xpar_context_destroy(ctx));
  }
  return probe_summary();
}
