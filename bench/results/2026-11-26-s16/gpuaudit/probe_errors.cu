/*
 * probe_errors: error paths with a GPU present (xpar.h:5-16 conventions: on
 * any status other than OK nothing is written and the detail says why).
 * On backends CUDA, CUDA_SERIAL, AUTO, AUTO with GPU thresholds 0, and CPU:
 *  - misaligned device / managed / pinned arrays -> XPAR_ERR_INVALID_ARGUMENT
 *    (xpar.h:22-23) for every op, outputs and scalar results untouched;
 *  - NULL arrays / scalars / results with n > 0 -> XPAR_ERR_NULL_POINTER;
 *  - partial overlaps of device arrays -> XPAR_ERR_OVERLAP (xpar.h:600-602, 631-636);
 *  - n * size overflowing size_t with device pointers -> XPAR_ERR_SIZE_OVERFLOW;
 *  - invalid enums -> XPAR_ERR_INVALID_ENUM;
 *  - n = 0 with device pointers and with NULL: OK, reduce / dot / wide sum
 *    write the identity (xpar.h:13-16, 583-585), array outputs untouched;
 *  - after a refused call the decision record's tier is NONE (xpar.h:228);
 *  - a huge n on pageable memory with the GPU forced (staging cannot be
 *    allocated): a status, not a crash; nothing written; the context works on.
 */
#define PROBE_NAME "errors"
#include "probe_ops.h"

#define N 4096
#define AREA (N * 8 + 1024)

static unsigned char *d_in, *d_out, *m_in, *p_in, *hbuf;

static void poison_outputs(void) {
  CK(cudaMemset(d_out, POISON_BYTE, AREA));
  CK(cudaDeviceSynchronize());
}
static int outputs_untouched(void) {
  CK(cudaMemcpy(hbuf, d_out, AREA, cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < AREA; i++)
    if (hbuf[i] != POISON_BYTE) return 0;
  return 1;
}

/* Expect `want` from the op; check nothing was written and the detail is set. */
static void expect_refused(xpar_context *ctx, const char *bname, xpar_dtype dt, int op, void *x, void *y,
                           void *out, size_t n, const void *scal, int null_result, xpar_status want,
                           const char *what) {
  fprintf(stderr, "# trying backend=%s dtype=%s op=%s n=%zu %s\n", bname, xpar_dtype_name(dt),
          op_id_name[op], n, what);
  scal_t sc;
  memset(&sc, 0, sizeof sc);
  if (scal) memcpy(&sc, scal, sizeof sc);
  scal_t res;
  memset(&res, POISON_BYTE, sizeof res);
  poison_outputs();
  xpar_status st;
  /* scal == NULL means: pass NULL for alpha / value / init */
  switch (op) {
    case OP_SINIT_I: st = xpar_scan_init(ctx, dt, XPAR_SUM, XPAR_INCLUSIVE, scal ? &sc : NULL, x, out, n); break;
    case OP_AXPY: st = xpar_axpy(ctx, dt, scal ? &sc : NULL, x, y, n); break;
    case OP_FILL: st = xpar_fill(ctx, dt, scal ? &sc : NULL, out, n); break;
    default: st = run_op(ctx, dt, op, x, y, out, n, &sc, null_result ? NULL : &res, 0); break;
  }
  g_checks++;
  if (st != want) {
    FAILF("backend=%s dtype=%s op=%s n=%zu %s: status %s, expected %s (%s)", bname, xpar_dtype_name(dt),
          op_id_name[op], n, what, xpar_status_name(st), xpar_status_name(want), xpar_last_error_detail());
  }
  if (st == XPAR_OK) return;
  CHECK(xpar_last_error_detail()[0] != 0, "backend=%s op=%s %s: empty error detail", bname, op_id_name[op], what);
  int untouched = 1;
  for (size_t i = 0; i < sizeof res; i++) untouched &= res.b[i] == POISON_BYTE;
  CHECK(untouched, "backend=%s dtype=%s op=%s %s: refused (%s) but the scalar result was written", bname,
        xpar_dtype_name(dt), op_id_name[op], what, xpar_status_name(st));
  CHECK(outputs_untouched(), "backend=%s dtype=%s op=%s %s: refused (%s) but device output memory was written",
        bname, xpar_dtype_name(dt), op_id_name[op], what, xpar_status_name(st));
  xpar_decision d = last_decision(ctx);
  CHECK(d.tier == XPAR_TIER_NONE, "backend=%s op=%s %s: refused, but the decision record says tier %s", bname,
        op_id_name[op], what, xpar_tier_name(d.tier));
}

int main(void) {
  probe_require_gpu();
  CK(cudaMalloc((void **)&d_in, AREA));
  CK(cudaMalloc((void **)&d_out, AREA));
  CK(cudaMallocManaged((void **)&m_in, AREA, cudaMemAttachGlobal));
  CK(cudaMallocHost((void **)&p_in, AREA));
  hbuf = (unsigned char *)malloc(AREA);
  rng_t r = rng_make(5);
  fill_random(XPAR_UINT64, hbuf, AREA / 8, &r);
  /* small finite doubles everywhere in the input (the bytes serve every dtype) */
  for (size_t i = 0; i < AREA / 8; i++) ((double *)hbuf)[i] = (double)(int)(i % 17) - 8;
  CK(cudaMemcpy(d_in, hbuf, AREA, cudaMemcpyHostToDevice));
  memcpy(m_in, hbuf, AREA);
  memcpy(p_in, hbuf, AREA);

  struct {
    const char *name;
    xpar_backend b;
    int gpu0;
  } cases[] = {{"cuda", XPAR_BACKEND_CUDA, 0},
               {"cuda-serial", XPAR_BACKEND_CUDA_SERIAL, 0},
               {"auto", XPAR_BACKEND_AUTO, 0},
               {"auto-gpu0", XPAR_BACKEND_AUTO, 1},
               {"cpu", XPAR_BACKEND_CPU, 0}};
  const xpar_dtype dts[] = {XPAR_INT32, XPAR_DOUBLE, XPAR_UINT64, XPAR_FLOAT};
  for (int bc = 0; bc < 5; bc++) {
    xpar_context *ctx = ctx_new(cases[bc].b);
    if (cases[bc].gpu0) ctx_gpu_thresholds(ctx, 0);
    const char *bn = cases[bc].name;
    for (int di = 0; di < 4; di++) {
      const xpar_dtype dt = dts[di];
      const size_t es = dsize(dt);
      const size_t mis = es / 2; /* a misaligning byte offset */
      scal_t one;
      memset(&one, 0, sizeof one);
      for (int op = 0; op < OP_ID_COUNT; op++) {
        const char w = op_writes(op);
        const int uy = op_uses_y(op);
        /* misaligned input x (device, managed, pinned), aligned device output */
        unsigned char *ins[3] = {d_in, m_in, p_in};
        const char *inn[3] = {"device", "managed", "pinned"};
        for (int k = 0; k < 3; k++) {
          if (w == 'x' && k != 0) continue;
          if (!op_reads_x(op)) continue; /* fill has no input */
          char what[96];
          snprintf(what, sizeof what, "x misaligned by %zu bytes (%s)", mis, inn[k]);
          if (w == 'x' || w == 'y') {
            /* the written array is x or y: make it misaligned device memory */
            unsigned char *xx = w == 'x' ? d_out + mis : ins[k] + mis;
            unsigned char *yy = w == 'y' ? d_out + mis : uy ? d_in + 512 : NULL;
            if (w == 'y') snprintf(what, sizeof what, "x (%s) and y misaligned by %zu bytes", inn[k], mis);
            else snprintf(what, sizeof what, "in-place array misaligned by %zu bytes (device)", mis);
            expect_refused(ctx, bn, dt, op, xx, yy, NULL, N, &one, 0, XPAR_ERR_INVALID_ARGUMENT, what);
          } else {
            expect_refused(ctx, bn, dt, op, ins[k] + mis, uy ? d_in + 512 : NULL, w == 'o' ? d_out : NULL, N, &one, 0,
                           XPAR_ERR_INVALID_ARGUMENT, what);
          }
        }
        /* misaligned device output */
        if (w == 'o')
          expect_refused(ctx, bn, dt, op, d_in, uy ? d_in + 512 : NULL, d_out + 256 + mis, N, &one, 0,
                         XPAR_ERR_INVALID_ARGUMENT, "device output misaligned");
        /* misaligned y */
        if (uy && w != 'y')
          expect_refused(ctx, bn, dt, op, d_in, d_in + 512 + mis, w == 'o' ? d_out : NULL, N, &one, 0,
                         XPAR_ERR_INVALID_ARGUMENT, "y misaligned (device)");
        /* NULLs with n > 0 */
        if (op_reads_x(op))
          expect_refused(ctx, bn, dt, op, NULL, uy ? (w == 'y' ? (void *)d_out : (void *)d_in) : NULL,
                         w == 'o' ? d_out : NULL, N, &one, 0, XPAR_ERR_NULL_POINTER, "x NULL");
        if (w == 'o')
          expect_refused(ctx, bn, dt, op, d_in, uy ? d_in + 8192 : NULL, NULL, N, &one, 0, XPAR_ERR_NULL_POINTER,
                         "out NULL");
        if (uy && w != 'y')
          expect_refused(ctx, bn, dt, op, d_in, NULL, w == 'o' ? d_out : NULL, N, &one, 0, XPAR_ERR_NULL_POINTER, "y NULL");
        if (op_scalar(op))
          expect_refused(ctx, bn, dt, op, d_in, uy ? d_in : NULL, NULL, N, &one, 1, XPAR_ERR_NULL_POINTER, "result NULL");
        if (op == OP_SINIT_I)
          expect_refused(ctx, bn, dt, op, d_in, NULL, d_out, N, NULL, 0, XPAR_ERR_NULL_POINTER, "init NULL");
        if (op == OP_AXPY)
          expect_refused(ctx, bn, dt, op, d_in, d_out, NULL, N, NULL, 0, XPAR_ERR_NULL_POINTER, "alpha NULL");
        if (op == OP_FILL)
          expect_refused(ctx, bn, dt, op, NULL, NULL, d_out, N, NULL, 0, XPAR_ERR_NULL_POINTER, "value NULL");
        /* n * size overflowing size_t, device pointers */
        expect_refused(ctx, bn, dt, op, d_in, uy ? (w == 'y' ? (void *)d_out : (void *)(d_in + 512)) : NULL,
                       w == 'o' ? d_out : NULL, SIZE_MAX / es + 1, &one, 0, XPAR_ERR_SIZE_OVERFLOW, "n * size overflows");
      }
      /* partial overlaps, device memory (in place is fine, checked elsewhere) */
      expect_refused(ctx, bn, dt, OP_SCAN_IS, d_out, NULL, d_out + es, N, &one, 0, XPAR_ERR_OVERLAP, "scan out = in + 1");
      expect_refused(ctx, bn, dt, OP_SCAN_ES, d_out + es, NULL, d_out, N, &one, 0, XPAR_ERR_OVERLAP, "scan out = in - 1");
      expect_refused(ctx, bn, dt, OP_AXPY, d_out + 3 * es, d_out, NULL, N, &one, 0, XPAR_ERR_OVERLAP, "axpy x = y + 3");
      expect_refused(ctx, bn, dt, OP_ADD, d_in, d_out, d_out + es, N, &one, 0, XPAR_ERR_OVERLAP, "add z = y + 1");
      expect_refused(ctx, bn, dt, OP_ADD, d_out + es, d_in, d_out, N, &one, 0, XPAR_ERR_OVERLAP, "add z = x - 1");
      expect_refused(ctx, bn, dt, OP_SINIT_E, d_out, NULL, d_out + 100 * es, N, &one, 0, XPAR_ERR_OVERLAP, "scan_init out = in + 100");

      /* n = 0: device pointers and NULL; identities written */
      for (int nul = 0; nul < 2; nul++) {
        for (int op = 0; op < OP_ID_COUNT; op++) {
          const char w = op_writes(op);
          scal_t res;
          memset(&res, POISON_BYTE, sizeof res);
          poison_outputs();
          void *x = nul ? NULL : (w == 'x' ? (void *)d_out : (void *)d_in);
          void *y = nul ? NULL : (w == 'y' ? (void *)d_out : (void *)(d_in + 512));
          void *o = nul ? NULL : (void *)d_out;
          fprintf(stderr, "# trying n=0 backend=%s dtype=%s op=%s %s\n", bn, xpar_dtype_name(dt), op_id_name[op], nul ? "NULL" : "device");
          xpar_status st = run_op(ctx, dt, op, x, y, o, 0, &one, &res, 0);
          if (nul && (op == OP_AXPY || op == OP_FILL || op == OP_SINIT_I || op == OP_SINIT_E || op == OP_AXPY_SAME)) {
            /* and NULL alpha / value / init too */
            if (op == OP_AXPY) st = xpar_axpy(ctx, dt, NULL, NULL, NULL, 0);
            else if (op == OP_AXPY_SAME) st = xpar_axpy(ctx, dt, NULL, NULL, NULL, 0);
            else if (op == OP_FILL) st = xpar_fill(ctx, dt, NULL, NULL, 0);
            else st = xpar_scan_init(ctx, dt, XPAR_SUM, op == OP_SINIT_I ? XPAR_INCLUSIVE : XPAR_EXCLUSIVE, NULL, NULL, NULL, 0);
          }
          CHECK(st == XPAR_OK, "backend=%s dtype=%s op=%s n=0 (%s pointers): status %s (%s)", bn, xpar_dtype_name(dt),
                op_id_name[op], nul ? "NULL" : "device", xpar_status_name(st), xpar_last_error_detail());
          if (st != XPAR_OK) continue;
          CHECK(outputs_untouched(), "backend=%s dtype=%s op=%s n=0: device memory was written", bn,
                xpar_dtype_name(dt), op_id_name[op]);
          if (op_scalar(op)) {
            char buf[64];
            check_op(dt, op, 0, hbuf, hbuf, &one, &res, (snprintf(buf, sizeof buf, "backend=%s n=0 %s pointers op=%s", bn, nul ? "NULL" : "device", op_id_name[op]), buf));
          }
        }
      }
    }
    /* invalid enums */
    {
      double res = -1;
      XSTATUS(XPAR_ERR_INVALID_ENUM, xpar_reduce(ctx, (xpar_dtype)99, XPAR_SUM, d_in, N, &res), "backend=%s dtype 99", bn);
      XSTATUS(XPAR_ERR_INVALID_ENUM, xpar_reduce(ctx, XPAR_DOUBLE, XPAR_REDUCTION_COUNT_, d_in, N, &res), "backend=%s reduction", bn);
      XSTATUS(XPAR_ERR_INVALID_ENUM, xpar_scan(ctx, XPAR_DOUBLE, XPAR_SUM, XPAR_SCAN_KIND_COUNT_, d_in, d_out, N), "backend=%s scan kind", bn);
      CHECK(res == -1, "backend=%s: refused reduce wrote its result", bn);
    }
    XOK(xpar_context_destroy(ctx));
  }

  /* huge n, pageable memory, the GPU forced: staging cannot be had */
  {
    xpar_context *ctx = ctx_new(XPAR_BACKEND_CUDA);
    XOK(xpar_context_set_offload(ctx, XPAR_OFFLOAD_MANDATORY));
    float *h = (float *)malloc(1 << 20);
    for (int i = 0; i < (1 << 18); i++) h[i] = 1.0f;
    const size_t huge = (size_t)1 << 40; /* 4 TiB of floats */
    printf("# errors: now a forced-GPU reduce of 2^40 pageable floats (expect a status, not a crash)\n");
    fflush(stdout);
    float res = -1;
    xpar_status st = xpar_reduce(ctx, XPAR_FLOAT, XPAR_SUM, h, huge, &res);
    CHECK(st != XPAR_OK, "forced-GPU reduce over 2^40 pageable floats returned OK (%g)", res);
    CHECK(res == -1, "forced-GPU reduce over 2^40 floats failed (%s) but wrote its result", xpar_status_name(st));
    printf("# errors: huge n -> %s (%s)\n", xpar_status_name(st), xpar_last_error_detail());
    st = xpar_scan(ctx, XPAR_FLOAT, XPAR_SUM, XPAR_INCLUSIVE, h, h, huge);
    CHECK(st != XPAR_OK, "forced-GPU in-place scan over 2^40 pageable floats returned OK");
    CHECK(h[0] == 1.0f && h[1] == 1.0f && h[(1 << 18) - 1] == 1.0f, "failed huge scan (%s) wrote the array",
          xpar_status_name(st));
    XOK(xpar_reduce(ctx, XPAR_FLOAT, XPAR_SUM, h, 1 << 18, &res));
    CHECK(res == (float)(1 << 18), "after the huge-n failures: sum %g, expected %d", res, 1 << 18);
    free(h);
    XOK(xpar_context_destroy(ctx));
  }
  return probe_summary();
}
