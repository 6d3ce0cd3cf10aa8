/*
 * probe_kernels: application kernels and operators (xpar_kernel.h) on the GPU.
 *  - xpar_launch of ga_mix_u32 (read, read, write) and ga_acc_i64 (read,
 *    read-write) with arrays of every memory kind mixed in one launch, at
 *    element offsets, on backends AUTO, AUTO with kernel GPU thresholds 0,
 *    CUDA, CUDA_SERIAL, CPU, CPU_SERIAL: exact results, guards untouched,
 *    inputs unchanged; decision record op KERNEL, kernel name, dtype of the
 *    first array argument, n, forced tier (xpar_kernel.h:29-36, xpar.h:547-551);
 *  - xpar_launch_nowait with device / managed / mapped outputs, then xpar_wait;
 *  - partial overlap of two array arguments -> XPAR_ERR_OVERLAP, nothing
 *    written; the same array twice (same pointer and size) is fine
 *    (xpar_kernel.h:86-88);
 *  - a non-commutative operator (2x2 matrix product mod 2^32, a 16-byte
 *    accumulator): reduce_op / scan_op (inclusive, exclusive: out[0] =
 *    identity) equal the index-order product on every backend and memory
 *    kind (xpar_kernel.h:292-296, 318-325); n = 0 gives the identity;
 *    reduce_op_nowait / scan_op_nowait with device outputs complete at
 *    xpar_wait, and with a host result complete before returning
 *    (xpar_kernel.h:326-337); in/out overlap -> XPAR_ERR_OVERLAP.
 */
#define PROBE_NAME "kernels"
#include <xpar/xpar_kernel.h>
#include "probe_ops.h"

XPAR_KERNEL_DECLARE(ga_mix_u32);
XPAR_KERNEL_DECLARE(ga_acc_i64);
XPAR_OPERATOR_DECLARE(ga_matprod);

typedef struct {
  uint32_t m00, m01, m10, m11;
} ga_mat;
static ga_mat mat_mul(ga_mat a, ga_mat b) {
  ga_mat r;
  r.m00 = a.m00 * b.m00 + a.m01 * b.m10;
  r.m01 = a.m00 * b.m01 + a.m01 * b.m11;
  r.m10 = a.m10 * b.m00 + a.m11 * b.m10;
  r.m11 = a.m10 * b.m01 + a.m11 * b.m11;
  return r;
}
static int mat_eq(ga_mat a, ga_mat b) { return a.m00 == b.m00 && a.m01 == b.m01 && a.m10 == b.m10 && a.m11 == b.m11; }

#define NMAX ((size_t)300007)
static const enum mem_kind KINDS[5] = {MK_DEVICE, MK_PINNED, MK_PAGEABLE, MK_MANAGED, MK_MAPPED};

struct bcase {
  const char *name;
  xpar_backend b;
  int gpu0;
  size_t n;
};
static const bcase CASES[] = {{"auto", XPAR_BACKEND_AUTO, 0, NMAX},   {"auto-gpu0", XPAR_BACKEND_AUTO, 1, 4099},
                              {"cuda", XPAR_BACKEND_CUDA, 0, NMAX},   {"cuda-serial", XPAR_BACKEND_CUDA_SERIAL, 0, 5003},
                              {"cpu", XPAR_BACKEND_CPU, 0, NMAX},     {"cpu-serial", XPAR_BACKEND_CPU_SERIAL, 0, 5003}};
#define NCASES 6

static xpar_tier forced_tier(const bcase &B) {
  switch (B.b) {
    case XPAR_BACKEND_CUDA: return XPAR_TIER_CUDA;
    case XPAR_BACKEND_CUDA_SERIAL: return XPAR_TIER_CUDA_SERIAL;
    case XPAR_BACKEND_CPU_SERIAL: return XPAR_TIER_CPU_SERIAL;
    default: return B.gpu0 ? XPAR_TIER_CUDA : XPAR_TIER_NONE;
  }
}

int main(void) {
  probe_require_gpu();
  static buf_t bx[MK_COUNT], by[MK_COUNT], bo[MK_COUNT];
  for (int k = 0; k < MK_COUNT; k++) {
    buf_alloc(&bx[k], (enum mem_kind)k, NMAX * 16 + 64);
    buf_alloc(&by[k], (enum mem_kind)k, NMAX * 16 + 64);
    buf_alloc(&bo[k], (enum mem_kind)k, NMAX * 16 + 64);
  }
  unsigned char *img = (unsigned char *)malloc(bx[0].total);
  uint64_t *hx = (uint64_t *)malloc(NMAX * 8), *hy = (uint64_t *)malloc(NMAX * 8);
  ga_mat *want = (ga_mat *)malloc(NMAX * sizeof(ga_mat));

  for (int bc = 0; bc < NCASES; bc++) {
    const bcase &B = CASES[bc];
    xpar_context *ctx = ctx_new(B.b);
    if (B.gpu0) {
      for (int w = XPAR_THRESHOLD_GPU_DEVICE_DATA; w < XPAR_THRESHOLD_COUNT_; w++) {
        XOK(xpar_context_set_kernel_threshold(ctx, &ga_mix_u32, (xpar_threshold)w, 0));
        XOK(xpar_context_set_kernel_threshold(ctx, &ga_acc_i64, (xpar_threshold)w, 0));
        XOK(xpar_context_set_operator_threshold(ctx, &ga_matprod, (xpar_threshold)w, 0));
      }
    }
    for (int k = 0; k < MK_COUNT; k++) {
      buf_map(&bx[k], ctx);
      buf_map(&by[k], ctx);
      buf_map(&bo[k], ctx);
    }
    const size_t n = B.n;
    const xpar_tier ft = forced_tier(B);
    /* ---- ga_mix_u32 ---- */
    for (int c = 0; c < 5; c++) {
      const enum mem_kind kx = KINDS[c], ky = KINDS[(c + 1) % 5], ko = KINDS[(c + 3) % 5];
      const size_t off = (c & 1) * 4;
      rng_t r = rng_make(bc * 10 + c);
      uint32_t *x32 = (uint32_t *)hx, *y32 = (uint32_t *)hy;
      fill_random(XPAR_UINT32, x32, n, &r);
      fill_random(XPAR_UINT32, y32, n, &r);
      const uint32_t a = (uint32_t)rng_next(&r);
      buf_write(&bx[kx], off, x32, n * 4);
      buf_write(&by[ky], 0, y32, n * 4);
      buf_write(&bo[ko], off, NULL, n * 4);
      xpar_arg args[4] = {XPAR_ARG_SCALAR_OF(XPAR_UINT32, &a), XPAR_ARG_IN(XPAR_UINT32, buf_ptr(&bx[kx], off), n),
                          XPAR_ARG_IN(XPAR_UINT32, buf_ptr(&by[ky], 0), n), XPAR_ARG_OUT(XPAR_UINT32, buf_ptr(&bo[ko], off), n)};
      char label[200];
      snprintf(label, sizeof label, "backend=%s launch ga_mix_u32 n=%zu x=%s y=%s out=%s", B.name, n, mk_name[kx], mk_name[ky], mk_name[ko]);
      xpar_status st = xpar_launch(ctx, &ga_mix_u32, n, args, 4);
      XSTATUS(XPAR_OK, st, "%s", label);
      if (st != XPAR_OK) continue;
      xpar_decision d = last_decision(ctx);
      CHECK(d.op == XPAR_OP_KERNEL && d.kernel && !strcmp(d.kernel, "ga_mix_u32") && d.dtype == XPAR_UINT32 && d.n == n,
            "%s: decision op %s kernel %s dtype %s n %zu", label, xpar_op_name(d.op), d.kernel ? d.kernel : "(null)",
            xpar_dtype_name(d.dtype), d.n);
      if (ft != XPAR_TIER_NONE)
        CHECK(d.tier == ft, "%s: tier %s, expected %s (reason \"%s\")", label, xpar_tier_name(d.tier), xpar_tier_name(ft), d.reason);
      if (B.b == XPAR_BACKEND_CPU)
        CHECK(d.tier == XPAR_TIER_CPU_SERIAL || d.tier == XPAR_TIER_CPU_OPENMP, "%s: tier %s", label, xpar_tier_name(d.tier));
      buf_read(&bo[ko], img);
      g_checks++;
      guards_ok(&bo[ko], img, off, n * 4, label);
      const uint32_t *got = (const uint32_t *)(img + GUARD + off);
      size_t bad = n;
      for (size_t i = 0; i < n && bad == n; i++)
        if (got[i] != a * x32[i] + (y32[i] ^ (uint32_t)i)) bad = i;
      CHECK(bad == n, "%s: out[%zu] = %u, expected %u", label, bad, bad < n ? got[bad] : 0,
            bad < n ? a * x32[bad] + (y32[bad] ^ (uint32_t)bad) : 0);
      buf_read(&bx[kx], img);
      CHECK(!memcmp(img + GUARD + off, x32, n * 4), "%s: input x modified", label);
      buf_read(&by[ky], img);
      CHECK(!memcmp(img + GUARD, y32, n * 4), "%s: input y modified", label);
    }
    /* same array twice (x == y), fine */
    {
      uint32_t *x32 = (uint32_t *)hx;
      const uint32_t a = 5;
      buf_write(&bx[MK_DEVICE], 0, x32, n * 4);
      buf_write(&bo[MK_MANAGED], 0, NULL, n * 4);
      xpar_arg args[4] = {XPAR_ARG_SCALAR_OF(XPAR_UINT32, &a), XPAR_ARG_IN(XPAR_UINT32, buf_ptr(&bx[MK_DEVICE], 0), n),
                          XPAR_ARG_IN(XPAR_UINT32, buf_ptr(&bx[MK_DEVICE], 0), n), XPAR_ARG_OUT(XPAR_UINT32, buf_ptr(&bo[MK_MANAGED], 0), n)};
      XSTATUS(XPAR_OK, xpar_launch(ctx, &ga_mix_u32, n, args, 4), "backend=%s launch with the same array as x and y", B.name);
      buf_read(&bo[MK_MANAGED], img);
      const uint32_t *got = (const uint32_t *)(img + GUARD);
      size_t bad = n;
      for (size_t i = 0; i < n && bad == n; i++)
        if (got[i] != a * x32[i] + (x32[i] ^ (uint32_t)i)) bad = i;
      CHECK(bad == n, "backend=%s launch x == y: out[%zu] wrong", B.name, bad);
      /* partial overlap: out = x + 1 element -> OVERLAP, nothing written */
      buf_write(&bx[MK_DEVICE], 0, x32, n * 4);
      xpar_arg bad_args[4] = {XPAR_ARG_SCALAR_OF(XPAR_UINT32, &a), XPAR_ARG_IN(XPAR_UINT32, buf_ptr(&bx[MK_DEVICE], 0), n),
                              XPAR_ARG_IN(XPAR_UINT32, buf_ptr(&by[MK_DEVICE], 0), n),
                              XPAR_ARG_OUT(XPAR_UINT32, buf_ptr(&bx[MK_DEVICE], 4), n)};
      XSTATUS(XPAR_ERR_OVERLAP, xpar_launch(ctx, &ga_mix_u32, n, bad_args, 4), "backend=%s launch with out = x + 1", B.name);
      buf_read(&bx[MK_DEVICE], img);
      CHECK(!memcmp(img + GUARD, x32, n * 4), "backend=%s refused overlapping launch wrote x", B.name);
      /* n = 0 */
      XSTATUS(XPAR_OK, xpar_launch(ctx, &ga_mix_u32, 0, args, 4), "backend=%s launch n = 0", B.name);
    }
    /* ---- ga_acc_i64: read-write, sync and nowait ---- */
    for (int c = 0; c < 5; c++) {
      for (int nowait = 0; nowait < 2; nowait++) {
        const enum mem_kind kx = KINDS[(c + 2) % 5];
        enum mem_kind ky = KINDS[c];
        if (nowait && (ky == MK_PINNED || ky == MK_PAGEABLE)) ky = nowait && (c & 1) ? MK_MAPPED : MK_DEVICE;
        const size_t off = (c & 1) * 8;
        rng_t r = rng_make(bc * 100 + c * 2 + nowait);
        int64_t *x64 = (int64_t *)hx, *y64 = (int64_t *)hy;
        fill_random(XPAR_INT64, x64, n, &r);
        fill_random(XPAR_INT64, y64, n, &r);
        buf_write(&bx[kx], 0, x64, n * 8);
        buf_write(&by[ky], off, y64, n * 8);
        xpar_arg args[2] = {XPAR_ARG_IN(XPAR_INT64, buf_ptr(&bx[kx], 0), n), XPAR_ARG_INOUT(XPAR_INT64, buf_ptr(&by[ky], off), n)};
        char label[200];
        snprintf(label, sizeof label, "backend=%s launch%s ga_acc_i64 n=%zu x=%s y=%s", B.name, nowait ? "_nowait" : "", n,
                 mk_name[kx], mk_name[ky]);
        xpar_status st = nowait ? xpar_launch_nowait(ctx, &ga_acc_i64, n, args, 2) : xpar_launch(ctx, &ga_acc_i64, n, args, 2);
        XSTATUS(XPAR_OK, st, "%s", label);
        if (nowait) XOK(xpar_wait(ctx));
        if (st != XPAR_OK) continue;
        buf_read(&by[ky], img);
        g_checks++;
        guards_ok(&by[ky], img, off, n * 8, label);
        const int64_t *got = (const int64_t *)(img + GUARD + off);
        size_t bad = n;
        for (size_t i = 0; i < n && bad == n; i++)
          if (got[i] != (int64_t)((uint64_t)y64[i] * 3u + (uint64_t)x64[i])) bad = i;
        CHECK(bad == n, "%s: y[%zu] = %lld wrong", label, bad, bad < n ? (long long)got[bad] : 0LL);
      }
    }
    /* ---- operator: 2x2 matrix product ---- */
    {
      const size_t ns[4] = {0, 1, 1000, n};
      for (int si = 0; si < 4; si++) {
        const size_t m = ns[si];
        for (int c = 0; c < 5; c++) {
          const enum mem_kind ki = KINDS[c], ko = KINDS[(c + 2) % 5];
          rng_t r = rng_make(bc * 1000 + si * 10 + c);
          uint32_t *in = (uint32_t *)hx;
          fill_random(XPAR_UINT32, in, m, &r);
          ga_mat acc = {1, 0, 0, 1};
          for (size_t i = 0; i < m; i++) {
            ga_mat e = {in[i], 1, 1, 0};
            acc = mat_mul(acc, e);
            want[i] = acc;
          }
          const size_t off = (c & 1) * 4;
          buf_write(&bx[ki], off, in, m * 4);
          char label[200];
          snprintf(label, sizeof label, "backend=%s operator ga_matprod n=%zu in=%s", B.name, m, mk_name[ki]);
          ga_mat res;
          memset(&res, POISON_BYTE, sizeof res);
          xpar_status st = xpar_reduce_op(ctx, &ga_matprod, buf_ptr(&bx[ki], off), m, &res);
          XSTATUS(XPAR_OK, st, "%s reduce_op", label);
          ga_mat id = {1, 0, 0, 1};
          ga_mat wr = m ? want[m - 1] : id;
          if (st == XPAR_OK)
            CHECK(mat_eq(res, wr), "%s reduce_op: [%u %u; %u %u], expected [%u %u; %u %u]", label, res.m00, res.m01, res.m10,
                  res.m11, wr.m00, wr.m01, wr.m10, wr.m11);
          if (st == XPAR_OK && m) {
            xpar_decision d = last_decision(ctx);
            CHECK(d.op == XPAR_OP_KERNEL && d.kernel && !strcmp(d.kernel, "ga_matprod") && d.n == m, "%s: decision op %s kernel %s n %zu",
                  label, xpar_op_name(d.op), d.kernel ? d.kernel : "(null)", d.n);
            if (ft != XPAR_TIER_NONE)
              CHECK(d.tier == ft, "%s reduce_op: tier %s, expected %s", label, xpar_tier_name(d.tier), xpar_tier_name(ft));
          }
          if (!m) continue;
          for (int excl = 0; excl < 2; excl++) {
            buf_write(&bo[ko], 0, NULL, m * sizeof(ga_mat));
            st = xpar_scan_op(ctx, &ga_matprod, excl ? XPAR_EXCLUSIVE : XPAR_INCLUSIVE, buf_ptr(&bx[ki], off), buf_ptr(&bo[ko], 0), m);
            XSTATUS(XPAR_OK, st, "%s scan_op %s out=%s", label, excl ? "exclusive" : "inclusive", mk_name[ko]);
            if (st != XPAR_OK) continue;
            buf_read(&bo[ko], img);
            g_checks++;
            guards_ok(&bo[ko], img, 0, m * sizeof(ga_mat), label);
            const ga_mat *got = (const ga_mat *)(img + GUARD);
            size_t bad = m;
            for (size_t i = 0; i < m && bad == m; i++) {
              ga_mat w = excl ? (i ? want[i - 1] : id) : want[i];
              if (!mat_eq(got[i], w)) bad = i;
            }
            CHECK(bad == m, "%s scan_op %s out=%s: element %zu wrong", label, excl ? "exclusive" : "inclusive", mk_name[ko], bad);
          }
        }
        if (!m) continue;
        /* nowait: device result / device out complete at xpar_wait; host result at return */
        {
          uint32_t *in = (uint32_t *)hx;
          buf_write(&bx[MK_DEVICE], 0, in, m * 4);
          ga_mat *dres;
          CK(cudaMalloc((void **)&dres, sizeof(ga_mat)));
          CK(cudaMemset(dres, POISON_BYTE, sizeof(ga_mat)));
          XSTATUS(XPAR_OK, xpar_reduce_op_nowait(ctx, &ga_matprod, buf_ptr(&bx[MK_DEVICE], 0), m, dres), "backend=%s reduce_op_nowait device result", B.name);
          buf_write(&bo[MK_DEVICE], 0, NULL, m * sizeof(ga_mat));
          XSTATUS(XPAR_OK, xpar_scan_op_nowait(ctx, &ga_matprod, XPAR_INCLUSIVE, buf_ptr(&bx[MK_DEVICE], 0), buf_ptr(&bo[MK_DEVICE], 0), m),
                  "backend=%s scan_op_nowait device out", B.name);
          XOK(xpar_wait(ctx));
          ga_mat res;
          CK(cudaMemcpy(&res, dres, sizeof res, cudaMemcpyDeviceToHost));
          CHECK(mat_eq(res, want[m - 1]), "backend=%s n=%zu reduce_op_nowait (device result) wrong after xpar_wait", B.name, m);
          buf_read(&bo[MK_DEVICE], img);
          CHECK(!memcmp(img + GUARD, want, m * sizeof(ga_mat)), "backend=%s n=%zu scan_op_nowait (device out) wrong after xpar_wait", B.name, m);
          cudaFree(dres);
          ga_mat hres;
          memset(&hres, POISON_BYTE, sizeof hres);
          XSTATUS(XPAR_OK, xpar_reduce_op_nowait(ctx, &ga_matprod, buf_ptr(&bx[MK_DEVICE], 0), m, &hres), "backend=%s reduce_op_nowait host result", B.name);
          CHECK(mat_eq(hres, want[m - 1]), "backend=%s n=%zu reduce_op_nowait into a host result: not complete when it returned "
                "(xpar_kernel.h:334-335)", B.name, m);
          XOK(xpar_wait(ctx));
          /* in / out overlap */
          XSTATUS(XPAR_ERR_OVERLAP, xpar_scan_op(ctx, &ga_matprod, XPAR_INCLUSIVE, buf_ptr(&bx[MK_DEVICE], 0), buf_ptr(&bx[MK_DEVICE], 0), m),
                  "backend=%s scan_op with out == in", B.name);
        }
      }
    }
    for (int k = 0; k < MK_COUNT; k++) {
      buf_unmap(&bx[k]);
      buf_unmap(&by[k]);
      buf_unmap(&bo[k]);
    }
    XOK(xpar_context_destroy(ctx));
  }
  return probe_summary();
}
