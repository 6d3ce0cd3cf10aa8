/*
 * The split tier (cpu+cuda) without a GPU: a fake GPU backend registered in
 * place of the CUDA backend runs the GPU's part with the CPU backend's strict
 * serial loops (and its reproducible entries, which compute the
 * specification's bits), so the split's bookkeeping is checked exactly: where
 * it cuts, the copies each way, a scan's carry, the combined results, the
 * reproducible block tree, the fallbacks and the decision record.
 *
 * Inputs are seeded (the seed is printed); outputs are poisoned and guarded.
 * Float inputs are small integers where exactness is the point (every sum of
 * them is exact, so any error in the split's arithmetic shows bit for bit),
 * and random reals in reproducible mode (the bits must equal the CPU tier's).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dispatch/gpu.h"

/* ---- the fake GPU ------------------------------------------------------------- */

enum { FAKE_MAX_BLOCKS = 64 };
static struct {
  void *p;
  size_t bytes;
  int pinned;
} blocks[FAKE_MAX_BLOCKS];
static int fake_ops;                 /* operations the fake ran */
static size_t fake_bytes_in, fake_bytes_out; /* copied to / from the fake device */
static int fail_next_wait;           /* the next wait reports a device fault */
static int fail_next_staging;        /* the next staging request is out of memory */
static void *fake_staging_mem[XPAR__OPERAND_SLOTS];
static size_t fake_staging_bytes[XPAR__OPERAND_SLOTS];
static int fake_state;

static void adopt(void *p, size_t bytes, int pinned) {
  for (int i = 0; i < FAKE_MAX_BLOCKS; i++)
    if (!blocks[i].p) {
      blocks[i].p = p;
      blocks[i].bytes = bytes;
      blocks[i].pinned = pinned;
      return;
    }
  fail_msg("fake GPU: out of block slots");
}
static void disown(void *p) {
  for (int i = 0; i < FAKE_MAX_BLOCKS; i++)
    if (p && blocks[i].p == p) blocks[i].p = NULL;
}
static int find_block(const void *p) {
  const char *c = p;
  for (int i = 0; i < FAKE_MAX_BLOCKS; i++)
    if (blocks[i].p && c >= (char *)blocks[i].p && c < (char *)blocks[i].p + blocks[i].bytes)
      return i;
  return -1;
}
static xpar__exec serial_exec(void) {
  xpar__exec ex = {.serial = 1, .num_threads = 1};
  return ex;
}
static xpar_status f_reduce(const xpar__exec *ex, xpar_dtype t, xpar_reduction op,
                            const void *in, size_t n, void *result) {
  (void)ex;
  fake_ops++;
  xpar__exec s = serial_exec();
  return xpar__cpu_backend.reduce(&s, t, op, in, n, result);
}
static xpar_status f_wide(const xpar__exec *ex, xpar_dtype t, const void *in, size_t n,
                          void *result) {
  (void)ex;
  fake_ops++;
  xpar__exec s = serial_exec();
  return xpar__cpu_backend.reduce_sum_wide(&s, t, in, n, result);
}
static xpar_status f_scan(const xpar__exec *ex, xpar_dtype t, xpar_reduction op,
                          xpar_scan_kind kind, const xpar__scalar *init, const void *in,
                          void *out, size_t n) {
  (void)ex;
  fake_ops++;
  xpar__exec s = serial_exec();
  return xpar__cpu_backend.scan(&s, t, op, kind, init, in, out, n);
}
static xpar_status f_axpy(const xpar__exec *ex, xpar_dtype t, const void *alpha, const void *x,
                          void *y, size_t n) {
  (void)ex;
  fake_ops++;
  xpar__exec s = serial_exec();
  return xpar__cpu_backend.axpy(&s, t, alpha, x, y, n);
}
static xpar_status f_add(const xpar__exec *ex, xpar_dtype t, const void *x, const void *y,
                         void *z, size_t n) {
  (void)ex;
  fake_ops++;
  xpar__exec s = serial_exec();
  return xpar__cpu_backend.add(&s, t, x, y, z, n);
}
static xpar_status f_fill(const xpar__exec *ex, xpar_dtype t, const void *value, void *out,
                          size_t n) {
  (void)ex;
  fake_ops++;
  xpar__exec s = serial_exec();
  return xpar__cpu_backend.fill(&s, t, value, out, n);
}
static xpar_status f_dot(const xpar__exec *ex, xpar_dtype t, const void *x, const void *y,
                         size_t n, void *result) {
  (void)ex;
  fake_ops++;
  xpar__exec s = serial_exec();
  return xpar__cpu_backend.dot(&s, t, x, y, n, result);
}
static xpar_status f_sort(const xpar__exec *ex, const xpar__sort_spec *spec) {
  (void)ex;
  fake_ops++;
  static xpar__host_scratch scratch;
  xpar__exec s = {.serial = 1, .num_threads = 1, .host_scratch = &scratch};
  return xpar__cpu_backend.sort(&s, spec);
}
static xpar_status f_histogram(const xpar__exec *ex, const xpar__histogram_spec *spec) {
  (void)ex;
  fake_ops++;
  static xpar__host_scratch scratch;
  xpar__exec s = {.serial = 1, .num_threads = 1, .host_scratch = &scratch};
  return xpar__cpu_backend.histogram(&s, spec);
}
static xpar_status f_segmented(const xpar__exec *ex, const xpar__seg_spec *spec) {
  fake_ops++;
  static xpar__host_scratch scratch;
  xpar__exec s = {.serial = 1, .num_threads = 1, .host_scratch = &scratch,
                  .reproducible = ex->reproducible};
  return xpar__cpu_backend.segmented(&s, spec);
}
static xpar_status f_repro_reduce(const xpar__exec *ex, xpar__repro_kind k, xpar_dtype t,
                                  const void *x, const void *y, size_t n, void *result) {
  (void)ex;
  fake_ops++;
  xpar__exec s = serial_exec();
  s.reproducible = 1;
  return xpar__cpu_backend.repro_reduce(&s, k, t, x, y, n, result);
}
static xpar_status f_repro_scan(const xpar__exec *ex, xpar_dtype t, xpar_scan_kind kind,
                                const xpar__scalar *init, const void *in, void *out, size_t n) {
  (void)ex;
  fake_ops++;
  xpar__exec s = serial_exec();
  s.reproducible = 1;
  return xpar__cpu_backend.repro_scan(&s, t, kind, init, in, out, n);
}
static xpar_status f_query(int device, xpar_device_info *out) {
  memset(out, 0, sizeof *out);
  out->usable = 1;
  out->device_count = 1;
  out->device = device < 0 ? 0 : device;
  snprintf(out->name, sizeof out->name, "fake GPU");
  return XPAR_OK;
}
static xpar_status f_state_create(int device, void *stream, struct xpar__cuda_state **out) {
  (void)device, (void)stream;
  *out = (struct xpar__cuda_state *)&fake_state;
  return XPAR_OK;
}
static void f_state_destroy(struct xpar__cuda_state *st) { (void)st; }
static xpar_status f_set_stream(struct xpar__cuda_state *st, void *stream) {
  (void)st, (void)stream;
  return XPAR_OK;
}
static xpar_status f_pointer_kind(const void *p, xpar__ptr_kind *out) {
  const int i = find_block(p);
  *out = i < 0 ? XPAR__PTR_HOST_PAGEABLE : blocks[i].pinned ? XPAR__PTR_HOST_PINNED
                                                            : XPAR__PTR_DEVICE;
  return XPAR_OK;
}
static xpar_status f_alloc(struct xpar__cuda_state *st, size_t bytes, void **out) {
  (void)st;
  *out = malloc(bytes ? bytes : 1);
  adopt(*out, bytes, 0);
  return XPAR_OK;
}
static void f_free(struct xpar__cuda_state *st, void *p) {
  (void)st;
  disown(p);
  free(p);
}
static xpar_status f_host_alloc(struct xpar__cuda_state *st, size_t bytes, void **out) {
  (void)st;
  *out = malloc(bytes ? bytes : 1);
  adopt(*out, bytes, 1);
  return XPAR_OK;
}
static void f_host_free(struct xpar__cuda_state *st, void *p) {
  (void)st;
  disown(p);
  free(p);
}
static xpar_status f_staging(struct xpar__cuda_state *st, int slot, size_t bytes, void **out) {
  (void)st;
  if (fail_next_staging) {
    fail_next_staging = 0;
    return xpar__fail(XPAR_ERR_DEVICE_OUT_OF_MEMORY, "fake GPU: staging out of memory");
  }
  if (fake_staging_bytes[slot] < bytes) {
    disown(fake_staging_mem[slot]);
    free(fake_staging_mem[slot]);
    fake_staging_mem[slot] = malloc(bytes);
    adopt(fake_staging_mem[slot], bytes, 0);
    fake_staging_bytes[slot] = bytes;
  }
  *out = fake_staging_mem[slot];
  return XPAR_OK;
}
static xpar_status f_copy(struct xpar__cuda_state *st, void *dst, const void *src, size_t bytes,
                          xpar__copy_dir dir) {
  (void)st;
  /* The split's copies name their directions: each side must be what it says. */
  const int dst_dev = find_block(dst) >= 0 && !blocks[find_block(dst)].pinned;
  const int src_dev = find_block(src) >= 0 && !blocks[find_block(src)].pinned;
  if (dir == XPAR__HOST_TO_DEVICE || dir == XPAR__HOST_TO_DEVICE_WRITTEN) {
    assert_true(dst_dev && !src_dev);
    fake_bytes_in += bytes;
  } else if (dir == XPAR__DEVICE_TO_HOST || dir == XPAR__DEVICE_TO_HOST_QUEUED) {
    assert_true(src_dev && !dst_dev);
    if (dir == XPAR__DEVICE_TO_HOST_QUEUED) { /* queued copies land in pinned memory */
      const int b = find_block(dst);
      assert_true(b >= 0 && blocks[b].pinned);
    }
    fake_bytes_out += bytes;
  }
  memcpy(dst, src, bytes);
  return XPAR_OK;
}
static xpar_status f_wait(struct xpar__cuda_state *st) {
  (void)st;
  if (fail_next_wait) {
    fail_next_wait = 0;
    return xpar__fail(XPAR_ERR_DEVICE, "fake GPU: a kernel faulted");
  }
  return XPAR_OK;
}
static int f_capturing(struct xpar__cuda_state *st) {
  (void)st;
  return 0;
}
static xpar_status f_release_cache(struct xpar__cuda_state *st) {
  (void)st;
  for (int i = 0; i < XPAR__OPERAND_SLOTS; i++) {
    disown(fake_staging_mem[i]);
    free(fake_staging_mem[i]);
    fake_staging_mem[i] = NULL;
    fake_staging_bytes[i] = 0;
  }
  return XPAR_OK;
}

static const xpar__backend fake_gpu = {
    .name = "fake-gpu",
    .reduce = f_reduce,
    .reduce_sum_wide = f_wide,
    .scan = f_scan,
    .axpy = f_axpy,
    .add = f_add,
    .fill = f_fill,
    .dot = f_dot,
    .sort = f_sort,
    .histogram = f_histogram,
    .segmented = f_segmented,
    .repro_reduce = f_repro_reduce,
    .repro_scan = f_repro_scan,
    .query = f_query,
    .state_create = f_state_create,
    .state_destroy = f_state_destroy,
    .set_stream = f_set_stream,
    .pointer_kind = f_pointer_kind,
    .alloc = f_alloc,
    .free = f_free,
    .host_alloc = f_host_alloc,
    .host_free = f_host_free,
    .staging = f_staging,
    .copy = f_copy,
    .wait = f_wait,
    .capturing = f_capturing,
    .release_cache = f_release_cache,
};

/* ---- arrays: poisoned, guarded, pinned or pageable ------------------------------- */

enum { GUARD = 64 };
static const unsigned char POISON = 0xA5, FENCE = 0x5C;
static unsigned long long seed, seed0; /* the generator's state; the seed printed */

static uint64_t next_random(void) {
  seed ^= seed << 13;
  seed ^= seed >> 7;
  seed ^= seed << 17;
  return seed;
}

typedef struct arr {
  unsigned char *base; /* GUARD fence bytes, the data, GUARD fence bytes */
  void *p;
  size_t bytes;
  int pinned;
} arr;

static arr arr_new(size_t bytes, int pinned) {
  arr a;
  a.bytes = bytes;
  a.pinned = pinned;
  a.base = aligned_alloc(64, ((bytes + 2 * GUARD) + 63) / 64 * 64);
  memset(a.base, FENCE, GUARD);
  memset(a.base + GUARD + bytes, FENCE, GUARD);
  a.p = a.base + GUARD;
  memset(a.p, POISON, bytes);
  if (pinned) adopt(a.p, bytes, 1);
  return a;
}
static void arr_free(arr *a) {
  if (a->pinned) disown(a->p);
  free(a->base);
}
static void fences_intact(const arr *a) {
  for (size_t i = 0; i < GUARD; i++) {
    assert_int_equal(a->base[i], FENCE);
    assert_int_equal(a->base[GUARD + a->bytes + i], FENCE);
  }
}

/* Small integers as dtype t (exact in every sum the tests make), or random
 * reals in [-1, 1) for floats when `real`. */
static void fill_random(xpar_dtype t, void *p, size_t n, int real) {
  for (size_t i = 0; i < n; i++) {
    const int64_t v = (int64_t)(next_random() % 17) - 8;
    const double r = (double)(next_random() >> 11) / 9007199254740992.0 * 2.0 - 1.0;
    switch (t) {
      case XPAR_INT32: ((int32_t *)p)[i] = (int32_t)v; break;
      case XPAR_INT64: ((int64_t *)p)[i] = v * 1000003; break;
      case XPAR_UINT32: ((uint32_t *)p)[i] = (uint32_t)(v + 8); break;
      case XPAR_UINT64: ((uint64_t *)p)[i] = (uint64_t)(v + 8) << 20; break;
      case XPAR_FLOAT: ((float *)p)[i] = real ? (float)r : (float)v; break;
      default: ((double *)p)[i] = real ? r : (double)v; break;
    }
  }
}

static xpar_context *split_context(xpar_backend backend) {
  xpar_context *ctx;
  assert_int_equal(xpar_context_create(&ctx), XPAR_OK);
  assert_int_equal(xpar_context_set_backend(ctx, backend), XPAR_OK);
  assert_int_equal(xpar_context_set_adapt(ctx, 0), XPAR_OK);
  return ctx;
}

static const xpar_dtype DTYPES[] = {XPAR_INT32, XPAR_INT64, XPAR_UINT32,
                                    XPAR_UINT64, XPAR_FLOAT, XPAR_DOUBLE};
/* Sizes around the split's 8,192-element grain, at the built-in shares. */
static const size_t SIZES[] = {1, 8192, 8193, 3 * 8192 + 17, 100003};

/* The record of a split call: tier cpu+cuda, and the GPU's share as run. */
static void expect_split(xpar_context *ctx, xpar_op op, xpar_dtype t, int pinned, size_t n,
                         int fake_ops_before) {
  double share = 0;
  assert_int_equal(xpar_context_get_split(ctx, op, t,
                                          pinned ? XPAR_SPLIT_PINNED : XPAR_SPLIT_PAGEABLE, NULL,
                                          &share),
                   XPAR_OK);
  xpar_decision d;
  assert_int_equal(xpar_last_decision(ctx, &d), XPAR_OK);
  assert_int_equal(d.tier, XPAR_TIER_CPU_CUDA);
  /* The GPU gets n * share rounded to whole 8,192-element grains. */
  if (n > 8192 && (size_t)((double)n * share / 8192 + 0.5) > 0) {
    assert_true(d.split_gpu_share > 0.0 && d.split_gpu_share < 1.0);
    assert_true(fake_ops > fake_ops_before);
    assert_non_null(strstr(d.reason, "the GPU ran"));
  } else {
    assert_true(d.split_gpu_share == 0.0);
    assert_non_null(strstr(d.reason, "too small to split"));
  }
}

/* xpar_scan_init with an init, else xpar_scan. */
static xpar_status scan_with(xpar_context *ctx, xpar_dtype t, xpar_reduction red,
                             xpar_scan_kind kind, const void *init, const void *in, void *out,
                             size_t n) {
  return init ? xpar_scan_init(ctx, t, red, kind, init, in, out, n)
              : xpar_scan(ctx, t, red, kind, in, out, n);
}

/* ---- every op, dtype and memory kind, against the serial tier -------------------- */

static void one_op(xpar_context *split, xpar_context *ref, xpar_op op, xpar_dtype t,
                   xpar_reduction red, xpar_scan_kind kind, int with_init, int in_place,
                   size_t n, int pinned) {
  const size_t esz = xpar_dtype_size(t), bytes = n * esz;
  arr x = arr_new(bytes, pinned), y = arr_new(bytes, pinned);
  arr o1 = arr_new(bytes, pinned), o2 = arr_new(bytes, 0);
  fill_random(t, x.p, n, 0);
  fill_random(t, y.p, n, 0);
  xpar__scalar r1, r2, scalar;
  memset(&r1, POISON, sizeof r1);
  memset(&r2, POISON, sizeof r2);
  fill_random(t, &scalar, 1, 0);
  const int before = fake_ops;
  xpar_status s1 = XPAR_OK, s2 = XPAR_OK;
  size_t rbytes = 0, obytes = 0;
  switch (op) {
    case XPAR_OP_REDUCE:
      if (with_init) { /* the wide sum */
        s1 = xpar_reduce_sum_wide(split, t, x.p, n, &r1);
        s2 = xpar_reduce_sum_wide(ref, t, x.p, n, &r2);
        rbytes = t == XPAR_FLOAT || esz == 4 ? 8 : esz;
      } else {
        s1 = xpar_reduce(split, t, red, x.p, n, &r1);
        s2 = xpar_reduce(ref, t, red, x.p, n, &r2);
        rbytes = esz;
      }
      break;
    case XPAR_OP_DOT:
      s1 = xpar_dot(split, t, x.p, y.p, n, &r1);
      s2 = xpar_dot(ref, t, x.p, y.p, n, &r2);
      rbytes = esz;
      break;
    case XPAR_OP_SCAN: {
      const void *init = with_init ? &scalar : NULL;
      if (in_place) {
        memcpy(o1.p, x.p, bytes);
        memcpy(o2.p, x.p, bytes);
        s1 = scan_with(split, t, red, kind, init, o1.p, o1.p, n);
        s2 = scan_with(ref, t, red, kind, init, o2.p, o2.p, n);
      } else {
        s1 = scan_with(split, t, red, kind, init, x.p, o1.p, n);
        s2 = scan_with(ref, t, red, kind, init, x.p, o2.p, n);
      }
      obytes = bytes;
      break;
    }
    case XPAR_OP_AXPY:
      memcpy(o1.p, y.p, bytes);
      memcpy(o2.p, y.p, bytes);
      s1 = xpar_axpy(split, t, &scalar, in_place ? o1.p : x.p, o1.p, n);
      s2 = xpar_axpy(ref, t, &scalar, in_place ? o2.p : x.p, o2.p, n);
      obytes = bytes;
      break;
    case XPAR_OP_ADD:
      if (in_place) {
        memcpy(o1.p, x.p, bytes);
        memcpy(o2.p, x.p, bytes);
        s1 = xpar_add(split, t, o1.p, y.p, o1.p, n);
        s2 = xpar_add(ref, t, o2.p, y.p, o2.p, n);
      } else {
        s1 = xpar_add(split, t, x.p, y.p, o1.p, n);
        s2 = xpar_add(ref, t, x.p, y.p, o2.p, n);
      }
      obytes = bytes;
      break;
    case XPAR_OP_FILL:
      s1 = xpar_fill(split, t, &scalar, o1.p, n);
      s2 = xpar_fill(ref, t, &scalar, o2.p, n);
      obytes = bytes;
      break;
    default: fail_msg("op %d", (int)op);
  }
  if (s1 != XPAR_OK) fail_msg("%s %s n=%zu: %s", xpar_op_name(op), xpar_dtype_name(t), n,
                              xpar_last_error_detail());
  assert_int_equal(s2, XPAR_OK);
  expect_split(split, op, t, pinned, n, before);
  if (rbytes && memcmp(&r1, &r2, rbytes) != 0)
    fail_msg("%s %s red %d n=%zu %s: the split's result differs (seed %llu)", xpar_op_name(op),
             xpar_dtype_name(t), (int)red, n, pinned ? "pinned" : "pageable", seed0);
  if (obytes && memcmp(o1.p, o2.p, obytes) != 0) {
    size_t i = 0;
    while (memcmp((char *)o1.p + i * esz, (char *)o2.p + i * esz, esz) == 0) i++;
    fail_msg("%s %s n=%zu %s: element %zu differs (seed %llu)", xpar_op_name(op),
             xpar_dtype_name(t), n, pinned ? "pinned" : "pageable", i, seed0);
  }
  fences_intact(&x);
  fences_intact(&y);
  fences_intact(&o1);
  arr_free(&x);
  arr_free(&y);
  arr_free(&o1);
  arr_free(&o2);
}

static void t_every_op(void **state) {
  (void)state;
  xpar_context *split = split_context(XPAR_BACKEND_CPU_CUDA);
  xpar_context *ref = split_context(XPAR_BACKEND_CPU_SERIAL);
  for (size_t si = 0; si < sizeof SIZES / sizeof *SIZES; si++)
    for (int pinned = 0; pinned < 2; pinned++)
      for (size_t ti = 0; ti < 6; ti++) {
        const size_t n = SIZES[si];
        const xpar_dtype t = DTYPES[ti];
        for (int red = XPAR_SUM; red <= XPAR_MAX; red++) {
          one_op(split, ref, XPAR_OP_REDUCE, t, (xpar_reduction)red, 0, 0, 0, n, pinned);
          for (int k = 0; k < 2; k++)
            for (int init = 0; init < 2; init++)
              one_op(split, ref, XPAR_OP_SCAN, t, (xpar_reduction)red, (xpar_scan_kind)k, init,
                     k == 1 && init == 1, n, pinned);
        }
        one_op(split, ref, XPAR_OP_REDUCE, t, XPAR_SUM, 0, 1, 0, n, pinned); /* wide */
        one_op(split, ref, XPAR_OP_DOT, t, XPAR_SUM, 0, 0, 0, n, pinned);
        for (int in_place = 0; in_place < 2; in_place++) {
          one_op(split, ref, XPAR_OP_AXPY, t, XPAR_SUM, 0, 0, in_place, n, pinned);
          one_op(split, ref, XPAR_OP_ADD, t, XPAR_SUM, 0, 0, in_place, n, pinned);
        }
        one_op(split, ref, XPAR_OP_FILL, t, XPAR_SUM, 0, 0, 0, n, pinned);
      }
  xpar_context_destroy(split);
  xpar_context_destroy(ref);
}

/* ---- the histogram: split by samples, the counts added -------------------------- */

/* Samples of dtype t around [lo, hi) = [-8, 9): some below, some above, and
 * NaNs for floats (not counted). */
static void fill_samples(xpar_dtype t, void *p, size_t n) {
  fill_random(t, p, n, 0);
  for (size_t i = 0; i < n; i += 97)
    if (t == XPAR_FLOAT) ((float *)p)[i] = NAN;
    else if (t == XPAR_DOUBLE) ((double *)p)[i] = NAN;
    else if (t == XPAR_INT32) ((int32_t *)p)[i] = 100;
}

/* One histogram on the split and on the serial tier: equal counts, the split
 * recorded, nothing written around the counts.  `range`: bins by boundaries. */
static void one_histogram(xpar_context *split, xpar_context *ref, xpar_dtype t, size_t n,
                          int pinned, int range) {
  const size_t esz = xpar_dtype_size(t), bins = 7;
  arr x = arr_new(n * esz, pinned), c1 = arr_new(bins * 8, pinned), c2 = arr_new(bins * 8, 0);
  fill_samples(t, x.p, n);
  xpar__scalar lo, hi;
  unsigned char bounds[8 * 8];
  const int64_t lo_i = t == XPAR_UINT32 ? 0 : -8, hi_i = t == XPAR_UINT32 ? 17 : 9;
  const int64_t edges[8] = {lo_i, lo_i + 1, lo_i + 3, lo_i + 4, lo_i + 8, lo_i + 9, lo_i + 12,
                            hi_i};
  for (int i = 0; i < 8; i++) {
    const int64_t v = t == XPAR_UINT64 ? edges[i] + 8 : edges[i];
    switch (t) {
      case XPAR_INT32: ((int32_t *)bounds)[i] = (int32_t)v; break;
      case XPAR_UINT32: ((uint32_t *)bounds)[i] = (uint32_t)v; break;
      case XPAR_INT64: ((int64_t *)bounds)[i] = v * 1000003; break;
      case XPAR_UINT64: ((uint64_t *)bounds)[i] = (uint64_t)v << 20; break;
      case XPAR_FLOAT: ((float *)bounds)[i] = (float)v; break;
      default: ((double *)bounds)[i] = (double)v; break;
    }
  }
  memcpy(&lo, bounds, esz);
  memcpy(&hi, bounds + 7 * esz, esz);
  const int before = fake_ops;
  xpar_status s1, s2;
  if (range) {
    s1 = xpar_histogram_range(split, t, x.p, n, bounds, bins, c1.p);
    s2 = xpar_histogram_range(ref, t, x.p, n, bounds, bins, c2.p);
  } else {
    s1 = xpar_histogram_even(split, t, x.p, n, &lo, &hi, bins, c1.p);
    s2 = xpar_histogram_even(ref, t, x.p, n, &lo, &hi, bins, c2.p);
  }
  if (s1 != XPAR_OK) fail_msg("histogram %s n=%zu: %s", xpar_dtype_name(t), n,
                              xpar_last_error_detail());
  assert_int_equal(s2, XPAR_OK);
  expect_split(split, XPAR_OP_HISTOGRAM, t, pinned, n, before);
  if (memcmp(c1.p, c2.p, bins * 8) != 0)
    fail_msg("histogram %s %s n=%zu %s: the split's counts differ (seed %llu)",
             range ? "range" : "even", xpar_dtype_name(t), n, pinned ? "pinned" : "pageable",
             seed0);
  uint64_t total = 0;
  for (size_t b = 0; b < bins; b++) total += ((uint64_t *)c1.p)[b];
  assert_true(total > 0 || n < 2);
  fences_intact(&x);
  fences_intact(&c1);
  arr_free(&x);
  arr_free(&c1);
  arr_free(&c2);
}

static void t_histogram(void **state) {
  (void)state;
  xpar_context *split = split_context(XPAR_BACKEND_CPU_CUDA);
  xpar_context *ref = split_context(XPAR_BACKEND_CPU_SERIAL);
  for (size_t si = 0; si < sizeof SIZES / sizeof *SIZES; si++)
    for (int pinned = 0; pinned < 2; pinned++)
      for (size_t ti = 0; ti < 6; ti++)
        for (int range = 0; range < 2; range++)
          one_histogram(split, ref, DTYPES[ti], SIZES[si], pinned, range);
  /* The copies: the GPU's samples in, its counts out. */
  const size_t n = 10 * 8192, bins = 5;
  assert_int_equal(xpar_context_set_split(split, XPAR_OP_HISTOGRAM, XPAR_FLOAT,
                                          XPAR_SPLIT_PAGEABLE, XPAR_NEVER, 0.3),
                   XPAR_OK);
  arr x = arr_new(n * 4, 0), c = arr_new(bins * 8, 0);
  fill_samples(XPAR_FLOAT, x.p, n);
  const float lo = -8, hi = 9;
  fake_bytes_in = fake_bytes_out = 0;
  assert_int_equal(xpar_histogram_even(split, XPAR_FLOAT, x.p, n, &lo, &hi, bins, c.p), XPAR_OK);
  xpar_decision d;
  assert_int_equal(xpar_last_decision(split, &d), XPAR_OK);
  assert_true(fabs(d.split_gpu_share - 0.3) < 1e-12); /* 3 of 10 grains */
  assert_int_equal(fake_bytes_in, 3 * 8192 * 4);
  assert_int_equal(fake_bytes_out, bins * 8);
  /* Pinned samples, counts in ordinary memory: the samples' kind sets the
   * share (the counts never cross in bulk), here the pinned 0.3, not the
   * pageable 0.7. */
  {
    arr xp = arr_new(n * 4, 1);
    memcpy(xp.p, x.p, n * 4);
    assert_int_equal(xpar_context_set_split(split, XPAR_OP_HISTOGRAM, XPAR_FLOAT,
                                            XPAR_SPLIT_PINNED, XPAR_NEVER, 0.3),
                     XPAR_OK);
    assert_int_equal(xpar_context_set_split(split, XPAR_OP_HISTOGRAM, XPAR_FLOAT,
                                            XPAR_SPLIT_PAGEABLE, XPAR_NEVER, 0.7),
                     XPAR_OK);
    assert_int_equal(xpar_histogram_even(split, XPAR_FLOAT, xp.p, n, &lo, &hi, bins, c.p),
                     XPAR_OK);
    assert_int_equal(xpar_last_decision(split, &d), XPAR_OK);
    assert_int_equal(d.tier, XPAR_TIER_CPU_CUDA);
    if (fabs(d.split_gpu_share - 0.3) > 1e-12)
      fail_msg("pinned samples, pageable counts: the GPU's share %.3f, not the pinned 0.3",
               d.split_gpu_share);
    assert_int_equal(xpar_context_set_split(split, XPAR_OP_HISTOGRAM, XPAR_FLOAT,
                                            XPAR_SPLIT_PAGEABLE, XPAR_NEVER, 0.3),
                     XPAR_OK);
    fences_intact(&xp);
    arr_free(&xp);
  }
  /* A fault at the wait (forced: an error, the counts untouched) and out of
   * memory (nothing written either); AUTO computes the GPU's part on the CPU. */
  for (int forced = 0; forced < 2; forced++) {
    xpar_context *ctx = forced ? split : split_context(XPAR_BACKEND_AUTO);
    if (!forced)
      assert_int_equal(xpar_context_set_split(ctx, XPAR_OP_HISTOGRAM, XPAR_FLOAT,
                                              XPAR_SPLIT_PAGEABLE, 1, 0.5),
                       XPAR_OK);
    uint64_t want[5];
    assert_int_equal(xpar_histogram_even(ref, XPAR_FLOAT, x.p, n, &lo, &hi, bins, want), XPAR_OK);
    for (int fault = 0; fault < 2; fault++) {
      memset(c.p, POISON, bins * 8);
      if (fault) fail_next_wait = 1;
      else fail_next_staging = 1;
      const xpar_status s = xpar_histogram_even(ctx, XPAR_FLOAT, x.p, n, &lo, &hi, bins, c.p);
      if (forced) {
        assert_int_equal(s, fault ? XPAR_ERR_DEVICE : XPAR_ERR_DEVICE_OUT_OF_MEMORY);
        for (size_t i = 0; i < bins * 8; i++)
          assert_int_equal(((unsigned char *)c.p)[i], POISON);
      } else {
        assert_int_equal(s, XPAR_OK);
        assert_int_equal(xpar_last_decision(ctx, &d), XPAR_OK);
        assert_int_equal(d.tier, XPAR_TIER_CPU_OPENMP);
        assert_memory_equal(c.p, want, bins * 8);
      }
      fences_intact(&c);
    }
    if (!forced) xpar_context_destroy(ctx);
  }
  /* Shadow mode runs the histogram's split as its second tier. */
  xpar_context *sh = split_context(XPAR_BACKEND_CPU);
  assert_int_equal(xpar_context_set_shadow(sh, XPAR_TIER_CPU_CUDA, 1), XPAR_OK);
  assert_int_equal(xpar_context_set_split(sh, XPAR_OP_HISTOGRAM, XPAR_FLOAT, XPAR_SPLIT_PAGEABLE,
                                          XPAR_NEVER, 0.5),
                   XPAR_OK);
  const int before = fake_ops;
  assert_int_equal(xpar_histogram_even(sh, XPAR_FLOAT, x.p, n, &lo, &hi, bins, c.p), XPAR_OK);
  assert_int_equal(xpar_last_decision(sh, &d), XPAR_OK);
  assert_non_null(strstr(d.reason, "shadow cpu+cuda: match"));
  assert_true(fake_ops > before);
  xpar_context_destroy(sh);
  arr_free(&x);
  arr_free(&c);
  xpar_context_destroy(split);
  xpar_context_destroy(ref);
}

/* ---- the segmented ops: split at a segment boundary ------------------------------- */

enum { SEG_REDUCE, SEG_SCAN, SEG_ARGMIN, SEG_ARGMAX };
/* Segment layouts: random sizes 0..40 (empties included), one huge segment
 * among tiny ones (the cut falls at its end or start), and fixed rows. */
enum { LAYOUT_RANDOM, LAYOUT_HUGE, LAYOUT_FIXED };

/* One segmented call on ctx; out / idx receive its results. */
static xpar_status seg_call(xpar_context *ctx, int what, xpar_dtype t, xpar_reduction red,
                            xpar_scan_kind kind, int layout, const void *in, void *out,
                            int64_t *idx, size_t n, const void *off, xpar_dtype odt, size_t m,
                            size_t row) {
  const int fixed = layout == LAYOUT_FIXED;
  switch (what) {
    case SEG_REDUCE:
      return fixed ? xpar_segmented_reduce_fixed(ctx, t, red, in, row, m, out)
                   : xpar_segmented_reduce(ctx, t, red, in, n, off, odt, m, out);
    case SEG_SCAN:
      return fixed ? xpar_segmented_scan_fixed(ctx, t, red, kind, in, out, row, m)
                   : xpar_segmented_scan(ctx, t, red, kind, in, out, n, off, odt, m);
    case SEG_ARGMIN: return xpar_segmented_argmin(ctx, t, in, n, off, odt, m, out, idx);
    default: return xpar_segmented_argmax(ctx, t, in, n, off, odt, m, out, idx);
  }
}

static void one_segmented(xpar_context *split, xpar_context *ref, int what, xpar_dtype t,
                          xpar_reduction red, xpar_scan_kind kind, int layout, xpar_dtype odt,
                          int pinned) {
  const size_t esz = xpar_dtype_size(t), row = 37;
  /* the segments' sizes, then their offsets (starting at 3: data before them) */
  size_t sizes[4096], m = 0, total = 0;
  if (layout == LAYOUT_HUGE) {
    sizes[m++] = 5;
    sizes[m++] = 60000;
    total = 60005;
    while (total < 70000) total += sizes[m++] = next_random() % 7;
  } else if (layout == LAYOUT_FIXED) {
    m = 2000;
    total = m * row;
  } else {
    while (total < 60000 && m < 4096) {
      const size_t v = next_random() % 5 == 0 ? 0 : next_random() % 41;
      sizes[m++] = v;
      total += v;
    }
  }
  const size_t base = layout == LAYOUT_FIXED ? 0 : 3;
  const size_t n = base + total + (layout == LAYOUT_FIXED ? 0 : 2);
  int64_t *off = malloc((m + 1) * 8);
  for (size_t g = 0, at = base; g <= m; g++) {
    if (odt == XPAR_INT32) ((int32_t *)off)[g] = (int32_t)at;
    else off[g] = (int64_t)at;
    if (g < m) at += layout == LAYOUT_FIXED ? row : sizes[g];
  }
  const size_t out_n = what == SEG_SCAN ? n : m;
  arr x = arr_new(n * esz, pinned), o1 = arr_new(out_n * esz, pinned), o2 = arr_new(out_n * esz, 0);
  arr i1 = arr_new(m * 8, 0), i2 = arr_new(m * 8, 0);
  fill_random(t, x.p, n, 0);
  const int before = fake_ops;
  const int arg = what >= SEG_ARGMIN;
  xpar_status s1 = seg_call(split, what, t, red, kind, layout, x.p, o1.p, arg ? i1.p : NULL, n,
                            off, odt, m, row);
  xpar_status s2 = seg_call(ref, what, t, red, kind, layout, x.p, o2.p, arg ? i2.p : NULL, n,
                            off, odt, m, row);
  if (s1 != XPAR_OK) fail_msg("segmented %d %s layout %d: %s", what, xpar_dtype_name(t), layout,
                              xpar_last_error_detail());
  assert_int_equal(s2, XPAR_OK);
  xpar_decision d;
  assert_int_equal(xpar_last_decision(split, &d), XPAR_OK);
  assert_int_equal(d.tier, XPAR_TIER_CPU_CUDA);
  assert_true(fake_ops > before); /* the GPU ran a part */
  assert_true(d.split_gpu_share > 0.0 && d.split_gpu_share < 1.0);
  if (memcmp(o1.p, o2.p, out_n * esz) != 0) {
    size_t i = 0;
    while (memcmp((char *)o1.p + i * esz, (char *)o2.p + i * esz, esz) == 0) i++;
    fail_msg("segmented %d %s red %d layout %d offsets %s %s: element %zu of %zu differs "
             "(seed %llu)",
             what, xpar_dtype_name(t), (int)red, layout, xpar_dtype_name(odt),
             pinned ? "pinned" : "pageable", i, out_n, seed0);
  }
  if (arg && memcmp(i1.p, i2.p, m * 8) != 0)
    fail_msg("segmented arg %d %s layout %d: indices differ (seed %llu)", what,
             xpar_dtype_name(t), layout, seed0);
  fences_intact(&o1);
  fences_intact(&i1);
  arr_free(&x);
  arr_free(&o1);
  arr_free(&o2);
  arr_free(&i1);
  arr_free(&i2);
  free(off);
}

static void t_segmented(void **state) {
  (void)state;
  xpar_context *split = split_context(XPAR_BACKEND_CPU_CUDA);
  xpar_context *ref = split_context(XPAR_BACKEND_CPU_SERIAL);
  /* a share that gives the GPU more than a grain of 60,000 elements */
  for (int t = 0; t < XPAR_DTYPE_COUNT_; t++)
    for (int mem = 0; mem < XPAR_SPLIT_MEMORY_COUNT_; mem++)
      assert_int_equal(xpar_context_set_split(split, XPAR_OP_SEGMENTED, (xpar_dtype)t,
                                              (xpar_split_memory)mem, XPAR_NEVER, 0.4),
                       XPAR_OK);
  const xpar_dtype ts[] = {XPAR_INT32, XPAR_UINT64, XPAR_FLOAT, XPAR_DOUBLE};
  for (int layout = 0; layout < 3; layout++)
    for (int pinned = 0; pinned < 2; pinned++)
      for (int ti = 0; ti < 4; ti++) {
        const xpar_dtype t = ts[ti], odt = (ti & 1) ? XPAR_INT64 : XPAR_INT32;
        for (int red = XPAR_SUM; red <= XPAR_MAX; red++) {
          one_segmented(split, ref, SEG_REDUCE, t, (xpar_reduction)red, XPAR_INCLUSIVE, layout,
                        odt, pinned);
          one_segmented(split, ref, SEG_SCAN, t, (xpar_reduction)red,
                        red == XPAR_MIN ? XPAR_EXCLUSIVE : XPAR_INCLUSIVE, layout, odt, pinned);
        }
        if (layout != LAYOUT_FIXED) {
          one_segmented(split, ref, SEG_ARGMIN, t, XPAR_MIN, XPAR_INCLUSIVE, layout, odt, pinned);
          one_segmented(split, ref, SEG_ARGMAX, t, XPAR_MAX, XPAR_INCLUSIVE, layout, odt, pinned);
        }
      }
  /* Bad offsets: refused with nothing written, as on every tier. */
  int32_t bad_off[4] = {0, 50000, 40000, 60000};
  const size_t n = 60000;
  arr x = arr_new(n * 4, 0), o = arr_new(3 * 4, 0);
  fill_random(XPAR_INT32, x.p, n, 0);
  assert_int_equal(xpar_segmented_reduce(split, XPAR_INT32, XPAR_SUM, x.p, n, bad_off,
                                         XPAR_INT32, 3, o.p),
                   XPAR_ERR_INVALID_ARGUMENT);
  for (size_t i = 0; i < 3 * 4; i++) assert_int_equal(((unsigned char *)o.p)[i], POISON);
  /* A fault at the wait: AUTO computes the call on the CPU; forced returns it. */
  xpar_context *au = split_context(XPAR_BACKEND_AUTO);
  assert_int_equal(xpar_context_set_split(au, XPAR_OP_SEGMENTED, XPAR_INT32, XPAR_SPLIT_PAGEABLE,
                                          1, 0.5),
                   XPAR_OK);
  int32_t good_off[4] = {0, 20000, 40000, 60000}, want[3];
  assert_int_equal(xpar_segmented_reduce(ref, XPAR_INT32, XPAR_SUM, x.p, n, good_off, XPAR_INT32,
                                         3, want),
                   XPAR_OK);
  fail_next_wait = 1;
  assert_int_equal(xpar_segmented_reduce(au, XPAR_INT32, XPAR_SUM, x.p, n, good_off, XPAR_INT32,
                                         3, o.p),
                   XPAR_OK);
  assert_memory_equal(o.p, want, sizeof want);
  xpar_decision d;
  assert_int_equal(xpar_last_decision(au, &d), XPAR_OK);
  assert_int_equal(d.tier, XPAR_TIER_CPU_OPENMP);
  /* ... and an in-place scan, whose CPU part is already scanned then: only the
   * GPU's segments are computed again (offsets, and fixed rows). */
  {
    int32_t *scan_ref = malloc(n * 4), *scan_in = malloc(n * 4);
    for (int fixed = 0; fixed < 2; fixed++) {
      memcpy(scan_ref, x.p, n * 4);
      memcpy(scan_in, x.p, n * 4);
      if (fixed) {
        assert_int_equal(xpar_segmented_scan_fixed(ref, XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE,
                                                   scan_ref, scan_ref, 1000, n / 1000),
                         XPAR_OK);
        fail_next_wait = 1;
        assert_int_equal(xpar_segmented_scan_fixed(au, XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE,
                                                   scan_in, scan_in, 1000, n / 1000),
                         XPAR_OK);
      } else {
        assert_int_equal(xpar_segmented_scan(ref, XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE, scan_ref,
                                             scan_ref, n, good_off, XPAR_INT32, 3),
                         XPAR_OK);
        fail_next_wait = 1;
        assert_int_equal(xpar_segmented_scan(au, XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE, scan_in,
                                             scan_in, n, good_off, XPAR_INT32, 3),
                         XPAR_OK);
      }
      assert_int_equal(xpar_last_decision(au, &d), XPAR_OK);
      assert_int_equal(d.tier, XPAR_TIER_CPU_OPENMP);
      assert_non_null(strstr(d.reason, "a kernel faulted"));
      assert_memory_equal(scan_in, scan_ref, n * 4);
    }
    free(scan_ref);
    free(scan_in);
  }
  fail_next_wait = 1;
  assert_int_equal(xpar_segmented_reduce(split, XPAR_INT32, XPAR_SUM, x.p, n, good_off,
                                         XPAR_INT32, 3, o.p),
                   XPAR_ERR_DEVICE);
  fences_intact(&o);
  xpar_context_destroy(au);
  /* Shadow mode runs the segmented split as its second tier. */
  xpar_context *sh = split_context(XPAR_BACKEND_CPU);
  assert_int_equal(xpar_context_set_shadow(sh, XPAR_TIER_CPU_CUDA, 1), XPAR_OK);
  assert_int_equal(xpar_context_set_split(sh, XPAR_OP_SEGMENTED, XPAR_INT32, XPAR_SPLIT_PAGEABLE,
                                          XPAR_NEVER, 0.5),
                   XPAR_OK);
  const int before = fake_ops;
  assert_int_equal(xpar_segmented_reduce(sh, XPAR_INT32, XPAR_SUM, x.p, n, good_off, XPAR_INT32,
                                         3, o.p),
                   XPAR_OK);
  assert_memory_equal(o.p, want, sizeof want);
  assert_int_equal(xpar_last_decision(sh, &d), XPAR_OK);
  assert_non_null(strstr(d.reason, "shadow cpu+cuda: match"));
  assert_true(fake_ops > before);
  xpar_context_destroy(sh);
  arr_free(&x);
  arr_free(&o);
  xpar_context_destroy(split);
  xpar_context_destroy(ref);
}

/* Where the split cuts: n * (1 - share) rounded to 8,192 elements; the copies
 * move the GPU's part only. */
static void t_share_and_copies(void **state) {
  (void)state;
  xpar_context *ctx = split_context(XPAR_BACKEND_CPU_CUDA);
  const size_t n = 10 * 8192;
  assert_int_equal(xpar_context_set_split(ctx, XPAR_OP_ADD, XPAR_DOUBLE, XPAR_SPLIT_PAGEABLE,
                                          XPAR_NEVER, 0.4),
                   XPAR_OK);
  arr x = arr_new(n * 8, 0), y = arr_new(n * 8, 0), z = arr_new(n * 8, 0);
  fill_random(XPAR_DOUBLE, x.p, n, 1);
  fill_random(XPAR_DOUBLE, y.p, n, 1);
  fake_bytes_in = fake_bytes_out = 0;
  assert_int_equal(xpar_add(ctx, XPAR_DOUBLE, x.p, y.p, z.p, n), XPAR_OK);
  xpar_decision d;
  assert_int_equal(xpar_last_decision(ctx, &d), XPAR_OK);
  assert_true(fabs(d.split_gpu_share - 0.4) < 1e-12); /* 4 of 10 grains */
  assert_int_equal(fake_bytes_in, 2 * 4 * 8192 * 8);
  assert_int_equal(fake_bytes_out, 4 * 8192 * 8);
  assert_int_equal(d.bytes_to_device, 2 * 4 * 8192 * 8);
  assert_non_null(strstr(d.reason, "share 0.4, api"));
  for (size_t i = 0; i < n; i++)
    assert_true(((double *)z.p)[i] == ((double *)x.p)[i] + ((double *)y.p)[i]);
  double share = 0;
  size_t from = 0;
  assert_int_equal(xpar_context_get_split(ctx, XPAR_OP_ADD, XPAR_DOUBLE, XPAR_SPLIT_PAGEABLE,
                                          &from, &share),
                   XPAR_OK);
  assert_true(from == XPAR_NEVER && fabs(share - 0.4) < 1e-6);
  arr_free(&x);
  arr_free(&y);
  arr_free(&z);
  xpar_context_destroy(ctx);
}

/* Reproducible mode: the split's float sums, dots and sum scans have the bits of
 * the CPU tier's, whatever the share (the cut is the block tree's). */
static void t_reproducible_bits(void **state) {
  (void)state;
  xpar_context *split = split_context(XPAR_BACKEND_CPU_CUDA);
  xpar_context *cpu = split_context(XPAR_BACKEND_CPU);
  assert_int_equal(xpar_context_set_reproducible(split, 1), XPAR_OK);
  assert_int_equal(xpar_context_set_reproducible(cpu, 1), XPAR_OK);
  const size_t sizes[] = {2 * 8192, 3 * 8192 + 5, 5 * 8192, 9 * 8192 + 100, 16 * 8192 + 1};
  for (size_t si = 0; si < 5; si++)
    for (int dt = 0; dt < 2; dt++) {
      const xpar_dtype t = dt ? XPAR_DOUBLE : XPAR_FLOAT;
      const size_t n = sizes[si], esz = xpar_dtype_size(t);
      arr x = arr_new(n * esz, si & 1), y = arr_new(n * esz, 0);
      arr o1 = arr_new(n * esz, 0), o2 = arr_new(n * esz, 0);
      fill_random(t, x.p, n, 1);
      fill_random(t, y.p, n, 1);
      xpar__scalar a, b, init;
      fill_random(t, &init, 1, 1);
      memset(&a, 0, sizeof a);
      memset(&b, 0, sizeof b);
      assert_int_equal(xpar_reduce(split, t, XPAR_SUM, x.p, n, &a), XPAR_OK);
      xpar_decision d;
      assert_int_equal(xpar_last_decision(split, &d), XPAR_OK);
      assert_int_equal(d.tier, XPAR_TIER_CPU_CUDA);
      assert_non_null(strstr(d.reason, "block tree"));
      assert_int_equal(xpar_reduce(cpu, t, XPAR_SUM, x.p, n, &b), XPAR_OK);
      assert_memory_equal(&a, &b, esz);
      assert_int_equal(xpar_reduce_sum_wide(split, t, x.p, n, &a), XPAR_OK);
      assert_int_equal(xpar_reduce_sum_wide(cpu, t, x.p, n, &b), XPAR_OK);
      assert_memory_equal(&a, &b, 8);
      assert_int_equal(xpar_dot(split, t, x.p, y.p, n, &a), XPAR_OK);
      assert_int_equal(xpar_dot(cpu, t, x.p, y.p, n, &b), XPAR_OK);
      assert_memory_equal(&a, &b, esz);
      for (int k = 0; k < 2; k++)
        for (int with_init = 0; with_init < 2; with_init++) {
          const void *ip = with_init ? &init : NULL;
          assert_int_equal(scan_with(split, t, XPAR_SUM, (xpar_scan_kind)k, ip, x.p, o1.p, n),
                           XPAR_OK);
          assert_int_equal(scan_with(cpu, t, XPAR_SUM, (xpar_scan_kind)k, ip, x.p, o2.p, n),
                           XPAR_OK);
          if (memcmp(o1.p, o2.p, n * esz) != 0)
            fail_msg("reproducible scan %s n=%zu kind %d init %d: bits differ (seed %llu)",
                     xpar_dtype_name(t), n, k, with_init, seed0);
        }
      fences_intact(&o1);
      arr_free(&x);
      arr_free(&y);
      arr_free(&o1);
      arr_free(&o2);
    }
  xpar_context_destroy(split);
  xpar_context_destroy(cpu);
}

/* AUTO splits host data from the split's `from` of its memory kind, says so, and
 * never below it or for another kind. */
static void t_auto(void **state) {
  (void)state;
  xpar_context *ctx = split_context(XPAR_BACKEND_AUTO);
  const size_t n = 1 << 16;
  assert_int_equal(xpar_context_set_split(ctx, XPAR_OP_REDUCE, XPAR_INT32, XPAR_SPLIT_PINNED,
                                          (size_t)1 << 15, 0.5),
                   XPAR_OK);
  arr pinned = arr_new(n * 4, 1), pageable = arr_new(n * 4, 0);
  fill_random(XPAR_INT32, pinned.p, n, 0);
  memcpy(pageable.p, pinned.p, n * 4);
  int32_t r1 = 0, r2 = 0;
  assert_int_equal(xpar_reduce(ctx, XPAR_INT32, XPAR_SUM, pinned.p, n, &r1), XPAR_OK);
  xpar_decision d;
  assert_int_equal(xpar_last_decision(ctx, &d), XPAR_OK);
  assert_int_equal(d.tier, XPAR_TIER_CPU_CUDA);
  assert_non_null(strstr(d.reason, "at or above split threshold 32768 (api) for pinned"));
  assert_true(fabs(d.split_gpu_share - 0.5) < 1e-12);
  assert_int_equal(xpar_reduce(ctx, XPAR_INT32, XPAR_SUM, pageable.p, n, &r2), XPAR_OK);
  assert_int_equal(r1, r2);
  assert_int_equal(xpar_last_decision(ctx, &d), XPAR_OK);
  assert_true(d.tier != XPAR_TIER_CPU_CUDA); /* pageable: never, the default */
  assert_int_equal(xpar_reduce(ctx, XPAR_INT32, XPAR_SUM, pinned.p, n / 4, &r2), XPAR_OK);
  assert_int_equal(xpar_last_decision(ctx, &d), XPAR_OK);
  assert_true(d.tier != XPAR_TIER_CPU_CUDA); /* below `from` */
  /* Another op keeps its own setting (never): not split. */
  assert_int_equal(xpar_reduce_sum_wide(ctx, XPAR_INT32, pinned.p, n, &r2), XPAR_OK);
  assert_int_equal(xpar_last_decision(ctx, &d), XPAR_OK);
  assert_int_equal(d.tier, XPAR_TIER_CPU_CUDA); /* the wide sum is op reduce: split */
  int64_t w = 0;
  assert_int_equal(xpar_reduce_sum_wide(ctx, XPAR_INT32, pinned.p, n, &w), XPAR_OK);
  int64_t want = 0;
  for (size_t i = 0; i < n; i++) want += ((int32_t *)pinned.p)[i];
  assert_true(w == want);
  int64_t dot = 0;
  assert_int_equal(xpar_dot(ctx, XPAR_INT32, pinned.p, pinned.p, n, &dot), XPAR_OK);
  assert_int_equal(xpar_last_decision(ctx, &d), XPAR_OK);
  assert_true(d.tier != XPAR_TIER_CPU_CUDA);
  arr_free(&pinned);
  arr_free(&pageable);
  xpar_context_destroy(ctx);
}

/* Out of GPU memory before anything is written: AUTO runs the CPU tier, forced
 * cpu+cuda fails and writes nothing.  A fault found at the wait: AUTO computes
 * the GPU's part on the CPU; forced returns the error. */
static void t_failures(void **state) {
  (void)state;
  const size_t n = 6 * 8192;
  arr x = arr_new(n * 4, 1), out = arr_new(n * 4, 1);
  fill_random(XPAR_FLOAT, x.p, n, 0);
  float *want = malloc(n * 4);
  float acc = 0;
  for (size_t i = 0; i < n; i++) want[i] = acc += ((float *)x.p)[i];
  for (int forced = 0; forced < 2; forced++) {
    xpar_context *ctx = split_context(forced ? XPAR_BACKEND_CPU_CUDA : XPAR_BACKEND_AUTO);
    if (!forced)
      assert_int_equal(xpar_context_set_split(ctx, XPAR_OP_SCAN, XPAR_FLOAT, XPAR_SPLIT_PINNED,
                                              1, 0.5),
                       XPAR_OK);
    memset(out.p, POISON, n * 4);
    fail_next_staging = 1;
    xpar_status s = xpar_scan(ctx, XPAR_FLOAT, XPAR_SUM, XPAR_INCLUSIVE, x.p, out.p, n);
    xpar_decision d;
    assert_int_equal(xpar_last_decision(ctx, &d), XPAR_OK);
    if (forced) {
      assert_int_equal(s, XPAR_ERR_DEVICE_OUT_OF_MEMORY);
      for (size_t i = 0; i < n * 4; i++) assert_int_equal(((unsigned char *)out.p)[i], POISON);
    } else {
      assert_int_equal(s, XPAR_OK);
      assert_int_equal(d.tier, XPAR_TIER_CPU_OPENMP);
      assert_non_null(strstr(d.reason, "the GPU failed"));
      assert_memory_equal(out.p, want, n * 4);
    }
    memset(out.p, POISON, n * 4);
    fail_next_wait = 1;
    s = xpar_scan(ctx, XPAR_FLOAT, XPAR_SUM, XPAR_INCLUSIVE, x.p, out.p, n);
    if (forced) {
      assert_int_equal(s, XPAR_ERR_DEVICE);
      assert_non_null(strstr(xpar_last_error_detail(), "a kernel faulted"));
    } else {
      assert_int_equal(xpar_last_decision(ctx, &d), XPAR_OK);
      assert_int_equal(s, XPAR_OK);
      assert_int_equal(d.tier, XPAR_TIER_CPU_OPENMP);
      assert_non_null(strstr(d.reason, "a kernel faulted"));
      assert_memory_equal(out.p, want, n * 4);
    }
    fences_intact(&out);
    xpar_context_destroy(ctx);
  }
  free(want);
  arr_free(&x);
  arr_free(&out);
}

/* Calls the split does not cover run as under the CUDA backend; shadow mode
 * runs cpu+cuda as a second tier. */
static void t_not_covered_and_shadow(void **state) {
  (void)state;
  xpar_context *ctx = split_context(XPAR_BACKEND_CPU_CUDA);
  int32_t keys[5] = {3, 1, 2, 5, 4}, sorted[5];
  assert_int_equal(xpar_sort(ctx, XPAR_INT32, XPAR_ASCENDING, keys, sorted, 5), XPAR_OK);
  xpar_decision d;
  assert_int_equal(xpar_last_decision(ctx, &d), XPAR_OK);
  assert_int_equal(d.tier, XPAR_TIER_CUDA);
  assert_non_null(strstr(d.reason, "does not cover"));
  for (int i = 0; i < 5; i++) assert_int_equal(sorted[i], i + 1);
  xpar_context_destroy(ctx);

  xpar_context *sh = split_context(XPAR_BACKEND_CPU);
  assert_int_equal(xpar_context_set_shadow(sh, XPAR_TIER_CPU_CUDA, 1), XPAR_OK);
  /* the shadow's copies are pageable memory: a share that gives the GPU a part */
  assert_int_equal(xpar_context_set_split(sh, XPAR_OP_REDUCE, XPAR_DOUBLE, XPAR_SPLIT_PAGEABLE,
                                          XPAR_NEVER, 0.5),
                   XPAR_OK);
  const size_t n = 5 * 8192 + 3;
  arr x = arr_new(n * 8, 0);
  fill_random(XPAR_DOUBLE, x.p, n, 1);
  double r;
  const int before = fake_ops;
  assert_int_equal(xpar_reduce(sh, XPAR_DOUBLE, XPAR_SUM, x.p, n, &r), XPAR_OK);
  assert_int_equal(xpar_last_decision(sh, &d), XPAR_OK);
  assert_non_null(strstr(d.reason, "shadow cpu+cuda: match"));
  assert_true(fake_ops > before);
  arr_free(&x);
  xpar_context_destroy(sh);
}

static void t_bad_settings(void **state) {
  (void)state;
  xpar_context *ctx = split_context(XPAR_BACKEND_AUTO);
  const double bad[] = {0.0, 1.0, -0.5, 2.0, NAN};
  for (int i = 0; i < 5; i++) {
    assert_int_equal(xpar_context_set_split(ctx, XPAR_OP_DOT, XPAR_FLOAT, XPAR_SPLIT_PINNED, 1,
                                            bad[i]),
                     XPAR_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(xpar_last_error_detail(), "gpu_share"));
  }
  assert_int_equal(
      xpar_context_set_split(ctx, XPAR_OP_SORT, XPAR_FLOAT, XPAR_SPLIT_PINNED, 1, 0.5),
      XPAR_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(xpar_last_error_detail(), "sort has no split"));
  assert_int_equal(xpar_context_set_split(ctx, XPAR_OP_DOT, XPAR_FLOAT,
                                          (xpar_split_memory)7, 1, 0.5),
                   XPAR_ERR_INVALID_ENUM);
  assert_int_equal(xpar_context_set_split(ctx, XPAR_OP_COUNT_, XPAR_FLOAT, XPAR_SPLIT_PINNED, 1,
                                          0.5),
                   XPAR_ERR_INVALID_ENUM);
  assert_int_equal(
      xpar_context_get_split(ctx, XPAR_OP_DOT, XPAR_FLOAT, XPAR_SPLIT_PINNED, NULL, NULL),
      XPAR_ERR_NULL_POINTER);
  double share = 0;
  assert_int_equal(
      xpar_context_get_split(ctx, XPAR_OP_DOT, XPAR_FLOAT, XPAR_SPLIT_PINNED, NULL, &share),
      XPAR_OK);
  assert_true(share > 0.0 && share < 1.0); /* the built-in estimate */
  xpar_context_destroy(ctx);
}

int main(void) {
  const char *env = getenv("XPAR_TEST_SEED");
  seed = env ? strtoull(env, NULL, 10) : 20261207ULL;
  if (!seed) seed = 1;
  seed0 = seed;
  printf("test_split: seed %llu (XPAR_TEST_SEED)\n", seed);
  xpar__gpu_backend_set_double(&fake_gpu);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(t_every_op),
      cmocka_unit_test(t_share_and_copies),
      cmocka_unit_test(t_histogram),
      cmocka_unit_test(t_segmented),
      cmocka_unit_test(t_reproducible_bits),
      cmocka_unit_test(t_auto),
      cmocka_unit_test(t_failures),
      cmocka_unit_test(t_not_covered_and_shadow),
      cmocka_unit_test(t_bad_settings),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
