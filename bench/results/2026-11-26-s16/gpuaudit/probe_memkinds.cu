/*
 * probe_memkinds: every op x every dtype x memory kinds mixed in one call
 * (x, y, out each device / pinned / pageable / managed / mapped, rotated so
 * that each kind sits in each slot), at element offsets 0 and 1, on the
 * backends AUTO (default thresholds), AUTO with every GPU threshold 0, CUDA,
 * CUDA_SERIAL and CPU (forced CPU with device operands: xpar stages them).
 * Per call: status OK; result right (probe_ops.h); guard bytes around every
 * operand untouched; inputs unchanged; the decision record names the op,
 * dtype, n and the forced tier, and its byte counts match where the operands
 * live; with CUDA_SERIAL, the result equals cpu-serial's bit for bit.
 */
#define PROBE_NAME "memkinds"
#include "probe_ops.h"

static const enum mem_kind KINDS[5] = {MK_DEVICE, MK_PINNED, MK_PAGEABLE, MK_MANAGED, MK_MAPPED};
#define NMAX 100003

struct bcase {
  const char *name;
  xpar_backend b;
  int gpu0;
  size_t sizes[2];
};

static int is_host_kind(enum mem_kind k) { return k == MK_PINNED || k == MK_PAGEABLE; }

int main(void) {
  probe_require_gpu();
  static buf_t bufs[3][MK_COUNT];
  for (int s = 0; s < 3; s++)
    for (int k = 0; k < MK_COUNT; k++) buf_alloc(&bufs[s][k], (enum mem_kind)k, NMAX * 8 + 16);
  unsigned char *img[3];
  for (int s = 0; s < 3; s++) img[s] = (unsigned char *)malloc(bufs[s][0].total);
  void *hx = malloc(NMAX * 8), *hy = malloc(NMAX * 8);
  void *rx = malloc(NMAX * 8), *ry = malloc(NMAX * 8), *ro = malloc(NMAX * 8);
  xpar_context *ref = ctx_new(XPAR_BACKEND_CPU_SERIAL);

  const bcase cases[] = {{"auto", XPAR_BACKEND_AUTO, 0, {37, NMAX}},
                         {"auto-gpu-thresholds-0", XPAR_BACKEND_AUTO, 1, {1, NMAX}},
                         {"cuda", XPAR_BACKEND_CUDA, 0, {37, NMAX}},
                         {"cuda-serial", XPAR_BACKEND_CUDA_SERIAL, 0, {37, 20011}},
                         {"cpu", XPAR_BACKEND_CPU, 0, {37, NMAX}}};
  for (size_t bc = 0; bc < sizeof cases / sizeof cases[0]; bc++) {
    const bcase &B = cases[bc];
    xpar_context *ctx = ctx_new(B.b);
    if (B.gpu0) ctx_gpu_thresholds(ctx, 0);
    for (int s = 0; s < 3; s++) buf_map(&bufs[s][MK_MAPPED], ctx);
    for (int di = 0; di < N_DTYPES; di++) {
      const xpar_dtype dt = ALL_DTYPES[di];
      const size_t es = dsize(dt);
      for (int si = 0; si < 2; si++) {
        const size_t n = B.sizes[si], bytes = n * es;
        for (int c = 0; c < 5; c++) {
          const enum mem_kind kx = KINDS[c], ky = KINDS[(c + 1) % 5], ko = KINDS[(c + 2) % 5];
          const size_t offx = (c & 1) ? es : 0, offy = (c & 2) ? es : 0, offo = ((c + 1) & 1) ? es : 0;
          buf_t *bx = &bufs[0][kx], *by = &bufs[1][ky], *bo = &bufs[2][ko];
          for (int op = 0; op < OP_ID_COUNT; op++) {
            char label[256];
            snprintf(label, sizeof label, "backend=%s dtype=%s n=%zu op=%s x=%s%s y=%s%s out=%s%s",
                     B.name, xpar_dtype_name(dt), n, op_id_name[op], mk_name[kx], offx ? "+1" : "",
                     op_uses_y(op) ? mk_name[ky] : "-", offy && op_uses_y(op) ? "+1" : "",
                     op_writes(op) == 'o' ? mk_name[ko] : "-", offo && op_writes(op) == 'o' ? "+1" : "");
            rng_t r = rng_make(((uint64_t)bc << 40) ^ ((uint64_t)di << 32) ^ ((uint64_t)si << 24) ^
                               ((uint64_t)c << 16) ^ (uint64_t)op);
            fill_random(dt, hx, n, &r);
            fill_random(dt, hy, n, &r);
            scal_t sc;
            rand_scalar(dt, &sc, &r);
            const char w = op_writes(op);
            const int uy = op_uses_y(op);
            buf_write(bx, offx, hx, bytes);
            if (uy) buf_write(by, offy, hy, bytes);
            if (w == 'o') buf_write(bo, offo, NULL, bytes);
            void *x = buf_ptr(bx, offx), *y = buf_ptr(by, offy), *out = buf_ptr(bo, offo);
            scal_t res;
            memset(&res, POISON_BYTE, sizeof res);
            xpar_status st = run_op(ctx, dt, op, x, uy ? y : NULL, w == 'o' ? out : NULL, n, &sc, &res, 0);
            g_checks++;
            if (st != XPAR_OK) {
              FAILF("%s: status %s (%s)", label, xpar_status_name(st), xpar_last_error_detail());
              continue;
            }
            xpar_decision d = last_decision(ctx);
            buf_read(bx, img[0]);
            if (uy) buf_read(by, img[1]);
            if (w == 'o') buf_read(bo, img[2]);
            g_checks++;
            guards_ok(bx, img[0], offx, bytes, label);
            if (uy) { g_checks++; guards_ok(by, img[1], offy, bytes, label); }
            if (w == 'o') { g_checks++; guards_ok(bo, img[2], offo, bytes, label); }
            if (w != 'x') CHECK(!memcmp(img[0] + GUARD + offx, hx, bytes), "%s: input x was modified", label);
            if (uy && w != 'y') CHECK(!memcmp(img[1] + GUARD + offy, hy, bytes), "%s: input y was modified", label);
            const void *got = op_scalar(op) ? (const void *)&res
                              : w == 'x' ? (const void *)(img[0] + GUARD + offx)
                              : w == 'y' ? (const void *)(img[1] + GUARD + offy)
                                         : (const void *)(img[2] + GUARD + offo);
            if (op_scalar(op)) {
              /* the result type's bytes past it stay as they were */
              size_t rb = op_result_bytes(dt, op);
              int untouched = 1;
              for (size_t i = rb; i < sizeof res; i++) untouched &= res.b[i] == POISON_BYTE;
              CHECK(untouched, "%s: bytes past the %zu-byte scalar result were written", label, rb);
            }
            check_op(dt, op, n, hx, hy, &sc, got, label);

            /* decision record */
            CHECK(d.op == op_xop(op) && d.dtype == dt && d.n == n,
                  "%s: decision record says op %s dtype %s n %zu", label, xpar_op_name(d.op),
                  xpar_dtype_name(d.dtype), d.n);
            xpar_tier want_tier = B.b == XPAR_BACKEND_CUDA ? XPAR_TIER_CUDA
                                  : B.b == XPAR_BACKEND_CUDA_SERIAL ? XPAR_TIER_CUDA_SERIAL
                                  : B.gpu0 ? XPAR_TIER_CUDA : XPAR_TIER_NONE;
            if (want_tier != XPAR_TIER_NONE)
              CHECK(d.tier == want_tier, "%s: ran on tier %s, expected %s (reason \"%s\")", label,
                    xpar_tier_name(d.tier), xpar_tier_name(want_tier), d.reason);
            if (B.b == XPAR_BACKEND_CPU)
              CHECK(d.tier == XPAR_TIER_CPU_SERIAL || d.tier == XPAR_TIER_CPU_OPENMP,
                    "%s: forced CPU ran on tier %s", label, xpar_tier_name(d.tier));
            const int aliased = op == OP_SCAN_INPLACE || op == OP_ADD_ALIAS || op == OP_AXPY_SAME;
            if (!aliased && d.tier != XPAR_TIER_NONE) {
              const int gpu = d.tier == XPAR_TIER_CUDA || d.tier == XPAR_TIER_CUDA_SERIAL;
              size_t to_dev = 0, to_host = 0;
              const int rx_ = op_reads_x(op), ry_ = uy;
              const int wy = w == 'y', wo = w == 'o';
              if (gpu) {
                if (rx_ && is_host_kind(kx)) to_dev += bytes;
                if (ry_ && is_host_kind(ky)) to_dev += bytes;
                if (wy && is_host_kind(ky)) to_host += bytes;
                if (wo && is_host_kind(ko)) to_host += bytes;
              } else {
                if (rx_ && kx == MK_DEVICE) to_host += bytes;
                if (ry_ && ky == MK_DEVICE) to_host += bytes;
                if (wy && ky == MK_DEVICE) to_dev += bytes;
                if (wo && ko == MK_DEVICE) to_dev += bytes;
              }
              const size_t slack = op_scalar(op) ? 16 : 0;
              CHECK(d.bytes_to_device >= to_dev && d.bytes_to_device <= to_dev + slack &&
                        d.bytes_to_host >= to_host && d.bytes_to_host <= to_host + slack,
                    "%s: tier %s: decision record says %zu bytes to device, %zu to host; expected %zu "
                    "and %zu (mapped arrays were in sync)",
                    label, xpar_tier_name(d.tier), d.bytes_to_device, d.bytes_to_host, to_dev, to_host);
            }
            /* cuda-serial == cpu-serial, bit for bit (xpar.h:28-30) */
            if (B.b == XPAR_BACKEND_CUDA_SERIAL) {
              memcpy(rx, hx, bytes);
              memcpy(ry, hy, bytes);
              memset(ro, POISON_BYTE, bytes);
              scal_t rres;
              memset(&rres, POISON_BYTE, sizeof rres);
              xpar_status rs = run_op(ref, dt, op, rx, uy ? ry : NULL, w == 'o' ? ro : NULL, n, &sc, &rres, 0);
              if (rs == XPAR_OK) {
                const void *want = op_scalar(op) ? (const void *)&rres : w == 'x' ? rx : w == 'y' ? ry : ro;
                size_t nb = op_scalar(op) ? op_result_bytes(dt, op) : bytes;
                size_t first = 0;
                while (first < nb && ((const unsigned char *)want)[first] == ((const unsigned char *)got)[first]) first++;
                char a[64], bb[64];
                CHECK(first == nb, "%s: cuda-serial differs from cpu-serial at element %zu: %s vs %s", label,
                      first / es, fmt_elem(dt, got, first / es, a, 64), fmt_elem(dt, want, first / es, bb, 64));
              } else {
                FAILF("%s: cpu-serial reference run failed: %s", label, xpar_status_name(rs));
              }
            }
          }
        }
      }
    }
    for (int s = 0; s < 3; s++) buf_unmap(&bufs[s][MK_MAPPED]);
    XOK(xpar_context_destroy(ctx));
  }
  xpar_context_destroy(ref);
  for (int s = 0; s < 3; s++)
    for (int k = 0; k < MK_COUNT; k++) buf_free(&bufs[s][k]);
  return probe_summary();
}
