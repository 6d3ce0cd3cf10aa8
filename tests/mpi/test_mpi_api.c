/*
 * The MPI component's error agreement, argument checks and GPU placement.
 * Run by CTest with 1, 2, 3 and 4 ranks.
 *
 *  - one rank (the first, a middle one, the last; and two at once) passes a
 *    bad argument to each function: every rank returns an error, the others
 *    the failing rank's status with a detail naming it, the failing rank its
 *    own detail; nothing is written on any rank;
 *  - ranks that disagree on the dtype, op, kind or function: every rank gets
 *    XPAR_ERR_INVALID_ARGUMENT naming the odd rank;
 *  - a local failure that is not an argument (offload mandatory without a
 *    GPU), before the exchange and, for the last rank's scan, after it;
 *  - with a GPU, a result one rank places where it can only be refused
 *    (device memory not aligned to its type, a range across a mapping's
 *    edge): every rank errs, the device block and the mapping unwritten;
 *  - with two GPUs or more (a context per rank on its node-local GPU,
 *    xpar_mpi_context_create), one rank places an input, a scan's output or a
 *    result in another device's memory: every rank gets
 *    XPAR_ERR_INVALID_ARGUMENT before anything is exchanged, the bad rank's
 *    detail names the device, and nothing is written on any rank (that block
 *    read back too) -- the scan's out and the last rank's in included, which
 *    only the local scan after the exchange used to find;
 *  - communicators that cannot be used (MPI_COMM_NULL, a zero handle, an
 *    intercommunicator) are refused at once;
 *  - empty slices through unaligned pointers on every other rank: accepted;
 *  - placement: xpar_mpi_local_device and xpar_mpi_context_create (node-local
 *    rank modulo the device count; XPAR_DEVICE wins; xpar_context_set_device
 *    afterwards overrides), checked through a mapping's device pointer when
 *    a GPU is usable.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mpt.h"

#ifdef XT_HAVE_CUDART
#include <cuda_runtime_api.h>
#endif

enum { N_LOCAL = 5 };

typedef enum fn { FN_REDUCE, FN_SUM_WIDE, FN_DOT, FN_SCAN, NFNS } fn;
static const char *const fn_names[NFNS] = {"xpar_mpi_reduce", "xpar_mpi_reduce_sum_wide",
                                           "xpar_mpi_dot", "xpar_mpi_scan"};

/* What the bad rank changes in its own call. */
typedef enum mutation {
  M_NULL_IN,
  M_NULL_RESULT, /* not for the scan */
  M_NULL_OUT,    /* scan only */
  M_NULL_CTX,
  M_BAD_DTYPE,
  M_BAD_OP,   /* reduce, scan */
  M_BAD_KIND, /* scan */
  M_MISALIGNED,
  M_OVERLAP, /* scan */
  NMUTATIONS
} mutation;

static const struct {
  const char *name;
  xpar_status status;
  const char *needle; /* in the bad rank's own detail */
} mutations[NMUTATIONS] = {
    {"null-in", XPAR_ERR_NULL_POINTER, "is NULL"},
    {"null-result", XPAR_ERR_NULL_POINTER, "result is NULL"},
    {"null-out", XPAR_ERR_NULL_POINTER, "out is NULL"},
    {"null-ctx", XPAR_ERR_NULL_CONTEXT, "context is NULL"},
    {"bad-dtype", XPAR_ERR_INVALID_ENUM, "unknown dtype"},
    {"bad-op", XPAR_ERR_INVALID_ENUM, "unknown reduction"},
    {"bad-kind", XPAR_ERR_INVALID_ENUM, "unknown scan kind"},
    {"misaligned", XPAR_ERR_INVALID_ARGUMENT, "not aligned"},
    {"overlap", XPAR_ERR_OVERLAP, "overlaps"},
};

static int applies(mutation m, fn f) {
  switch (m) {
    case M_NULL_RESULT: return f != FN_SCAN;
    case M_NULL_OUT: case M_BAD_KIND: case M_OVERLAP: return f == FN_SCAN;
    case M_BAD_OP: return f == FN_REDUCE || f == FN_SCAN;
    default: return 1;
  }
}

/* The arguments of one rank's call, valid unless mutated. */
typedef struct args {
  fn f;
  xpar_context *ctx;
  xpar_dtype dtype;
  xpar_reduction op;
  xpar_scan_kind kind;
  const void *in, *y;
  void *out, *result;
  size_t n;
} args;

static xpar_status call(const args *a, MPI_Comm comm) {
  switch (a->f) {
    case FN_REDUCE: return xpar_mpi_reduce(a->ctx, comm, a->dtype, a->op, a->in, a->n, a->result);
    case FN_SUM_WIDE: return xpar_mpi_reduce_sum_wide(a->ctx, comm, a->dtype, a->in, a->n, a->result);
    case FN_DOT: return xpar_mpi_dot(a->ctx, comm, a->dtype, a->in, a->y, a->n, a->result);
    default: return xpar_mpi_scan(a->ctx, comm, a->dtype, a->op, a->kind, a->in, a->out, a->n);
  }
}

/* Buffers of one case on this rank: int32 slices of N_LOCAL, poisoned
 * outputs (the scan's out has room for the overlap mutation). */
typedef struct bufs {
  xt_buf in, y, out, result;
  unsigned char *in_orig;
} bufs;

static void bufs_make(bufs *b, const char *label) {
  xt_rng rng;
  xt_rng_for(&rng, label);
  xt_buf_alloc(&b->in, XPAR_INT32, N_LOCAL + 2, 0);
  xt_buf_alloc(&b->y, XPAR_INT32, N_LOCAL, 1);
  xt_buf_alloc(&b->out, XPAR_INT32, N_LOCAL, 2);
  xt_buf_alloc(&b->result, XPAR_INT64, 1, 0);
  xt_fill_random(&rng, XPAR_INT32, b->in.p, N_LOCAL + 2, XT_DATA_RANDOM, 0);
  xt_fill_random(&rng, XPAR_INT32, b->y.p, N_LOCAL, XT_DATA_RANDOM, 0);
  b->in_orig = xt_buf_copy(&b->in);
}

static void bufs_free(bufs *b) {
  free(b->in_orig);
  xt_buf_free(&b->in);
  xt_buf_free(&b->y);
  xt_buf_free(&b->out);
  xt_buf_free(&b->result);
}

static args valid_args(fn f, xpar_context *ctx, bufs *b) {
  return (args){.f = f, .ctx = ctx, .dtype = XPAR_INT32, .op = XPAR_SUM,
                .kind = XPAR_INCLUSIVE, .in = b->in.p, .y = b->y.p, .out = b->out.p,
                .result = b->result.p, .n = N_LOCAL};
}

static void mutate(args *a, mutation m) {
  switch (m) {
    case M_NULL_IN: a->in = NULL; break;
    case M_NULL_RESULT: a->result = NULL; break;
    case M_NULL_OUT: a->out = NULL; break;
    case M_NULL_CTX: a->ctx = NULL; break;
    case M_BAD_DTYPE: a->dtype = (xpar_dtype)77; break;
    case M_BAD_OP: a->op = (xpar_reduction)9; break;
    case M_BAD_KIND: a->kind = (xpar_scan_kind)5; break;
    case M_MISALIGNED: a->in = (const char *)a->in + 1; break;
    case M_OVERLAP: a->out = (int32_t *)a->in + 1; break;
    default: break;
  }
}

/* Nothing written on this rank: result, output, input. */
static void expect_nothing_written(mpt_case *c, const bufs *b) {
  mpt_expect_untouched(c, "result", &b->result);
  mpt_expect_untouched(c, "scan output", &b->out);
  mpt_expect_bytes(c, "input", b->in.base, b->in_orig, b->in.total);
}

/* The ranks that play the bad one: the first, a middle one, the last. */
static int bad_ranks(int *out) {
  int k = 0;
  out[k++] = 0;
  if (mpt_size > 2) out[k++] = 1;
  if (mpt_size > 1) out[k++] = mpt_size - 1;
  return k;
}

static void test_one_bad_rank(void **state) {
  xpar_context *ctx = (xpar_context *)*state;
  int bad[3];
  const int nbad = bad_ranks(bad);
  for (int f = 0; f < NFNS; f++)
    for (int m = 0; m < NMUTATIONS; m++) {
      if (!applies((mutation)m, (fn)f)) continue;
      for (int bi = 0; bi < nbad; bi++) {
        mpt_case c;
        mpt_case_begin(&c, "%s/%s/bad-rank=%d/p=%d", fn_names[f], mutations[m].name, bad[bi],
                       mpt_size);
        bufs b;
        bufs_make(&b, c.label);
        args a = valid_args((fn)f, ctx, &b);
        const int me_bad = mpt_rank == bad[bi];
        if (me_bad) mutate(&a, (mutation)m);
        xpar_status st = call(&a, MPI_COMM_WORLD);
        mpt_expect_status(&c, "status", st, mutations[m].status);
        char needle[96];
        if (me_bad) {
          snprintf(needle, sizeof needle, "rank %d of %d failed: %s: ", bad[bi], mpt_size,
                   xpar_status_name(mutations[m].status));
          mpt_expect_detail(&c, "own detail names this rank and its status", needle);
          mpt_expect_detail(&c, "own detail says why", mutations[m].needle);
        } else {
          snprintf(needle, sizeof needle, "rank %d of %d failed: %s", bad[bi], mpt_size,
                   xpar_status_name(mutations[m].status));
          mpt_expect_detail(&c, "detail names the failing rank and its status", needle);
        }
        mpt_expect_detail(&c, "detail names the function", fn_names[f]);
        expect_nothing_written(&c, &b);
        mpt_case_end(&c);
        bufs_free(&b);
      }
    }
}

/* Two ranks fail at once: each returns its own status; the others the
 * first's; the detail counts them. */
static void test_two_bad_ranks(void **state) {
  xpar_context *ctx = (xpar_context *)*state;
  if (mpt_size < 2) skip();
  for (int f = 0; f < NFNS; f++) {
    mpt_case c;
    mpt_case_begin(&c, "%s/two-bad-ranks/p=%d", fn_names[f], mpt_size);
    bufs b;
    bufs_make(&b, c.label);
    args a = valid_args((fn)f, ctx, &b);
    const int last = mpt_size - 1;
    if (mpt_rank == 0) mutate(&a, M_NULL_CTX);
    if (mpt_rank == last) mutate(&a, M_BAD_DTYPE);
    xpar_status st = call(&a, MPI_COMM_WORLD);
    const xpar_status want = mpt_rank == last ? XPAR_ERR_INVALID_ENUM : XPAR_ERR_NULL_CONTEXT;
    mpt_expect_status(&c, "status", st, want);
    char needle[96];
    snprintf(needle, sizeof needle, "2 of %d ranks failed; the first is rank 0", mpt_size);
    mpt_expect_detail(&c, "detail counts the failed ranks", needle);
    expect_nothing_written(&c, &b);
    mpt_case_end(&c);
    bufs_free(&b);
  }
}

/* The last rank disagrees with the others on what it calls. */
static void test_mismatch(void **state) {
  xpar_context *ctx = (xpar_context *)*state;
  if (mpt_size < 2) skip();
  const int last = mpt_size - 1;
  const struct {
    const char *name;
    fn f, f_last;
    xpar_dtype d_last;
    xpar_reduction op_last;
    xpar_scan_kind kind_last;
    const char *needle;
  } cases[] = {
      {"dtype", FN_REDUCE, FN_REDUCE, XPAR_FLOAT, XPAR_SUM, XPAR_INCLUSIVE,
       "passed dtype float where rank 0 passed int32"},
      {"dtype-scan", FN_SCAN, FN_SCAN, XPAR_UINT32, XPAR_SUM, XPAR_INCLUSIVE,
       "passed dtype uint32 where rank 0 passed int32"},
      {"dtype-dot", FN_DOT, FN_DOT, XPAR_FLOAT, XPAR_SUM, XPAR_INCLUSIVE,
       "passed dtype float where rank 0 passed int32"},
      {"op", FN_REDUCE, FN_REDUCE, XPAR_INT32, XPAR_MAX, XPAR_INCLUSIVE,
       "passed op max where rank 0 passed sum"},
      {"op-scan", FN_SCAN, FN_SCAN, XPAR_INT32, XPAR_MIN, XPAR_INCLUSIVE,
       "passed op min where rank 0 passed sum"},
      {"kind", FN_SCAN, FN_SCAN, XPAR_INT32, XPAR_SUM, XPAR_EXCLUSIVE,
       "passed kind exclusive where rank 0 passed inclusive"},
      {"function", FN_REDUCE, FN_DOT, XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE,
       "called xpar_mpi_dot where rank 0 called xpar_mpi_reduce"},
      {"function-scan", FN_SCAN, FN_REDUCE, XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE,
       "called xpar_mpi_reduce where rank 0 called xpar_mpi_scan"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    mpt_case c;
    mpt_case_begin(&c, "mismatch-%s/p=%d", cases[i].name, mpt_size);
    bufs b;
    bufs_make(&b, c.label);
    args a = valid_args(cases[i].f, ctx, &b);
    if (mpt_rank == last) {
      a.f = cases[i].f_last;
      a.dtype = cases[i].d_last;
      a.op = cases[i].op_last;
      a.kind = cases[i].kind_last;
    }
    xpar_status st = call(&a, MPI_COMM_WORLD);
    mpt_expect_status(&c, "status", st, XPAR_ERR_INVALID_ARGUMENT);
    char needle[160];
    snprintf(needle, sizeof needle, "rank %d of %d %s", last, mpt_size, cases[i].needle);
    mpt_expect_detail(&c, "detail names the odd rank and both values", needle);
    expect_nothing_written(&c, &b);
    mpt_case_end(&c);
    bufs_free(&b);
  }
}

/* A local failure that is not an argument: offload mandatory without a GPU
 * (XPAR_ERR_NO_DEVICE).  Before the exchange it stops every rank; in the
 * last rank's scan (its first local call, after the exchange) the others
 * have written their outputs and all learn of it from the agreement. */
static void test_runtime_failure(void **state) {
  xpar_context *ctx = (xpar_context *)*state;
  if (!mpt_all(!xt_gpu_usable())) skip(); /* mandatory offload would succeed */
  xpar_context *mandatory = NULL;
  assert_int_equal(xpar_context_create(&mandatory), XPAR_OK);
  assert_int_equal(xpar_context_set_offload(mandatory, XPAR_OFFLOAD_MANDATORY), XPAR_OK);
  int bad[3];
  const int nbad = bad_ranks(bad);
  for (int f = 0; f < NFNS; f++)
    for (int bi = 0; bi < nbad; bi++) {
      const int b_rank = bad[bi];
      const int after_exchange = f == FN_SCAN && b_rank == mpt_size - 1;
      mpt_case c;
      mpt_case_begin(&c, "%s/mandatory-offload-without-gpu/bad-rank=%d/p=%d", fn_names[f],
                     b_rank, mpt_size);
      bufs b;
      bufs_make(&b, c.label);
      args a = valid_args((fn)f, mpt_rank == b_rank ? mandatory : ctx, &b);
      xpar_status st = call(&a, MPI_COMM_WORLD);
      mpt_expect_status(&c, "status", st, XPAR_ERR_NO_DEVICE);
      char needle[96];
      if (mpt_rank == b_rank)
        snprintf(needle, sizeof needle, "rank %d of %d failed: ERR_NO_DEVICE: local", b_rank,
                 mpt_size);
      else
        snprintf(needle, sizeof needle, "rank %d of %d failed", b_rank, mpt_size);
      mpt_expect_detail(&c, "detail names the failing rank", needle);
      if (!after_exchange) {
        expect_nothing_written(&c, &b);
      } else {
        mpt_expect_detail(&c, "detail says after the exchange", "after the exchange");
        mpt_expect_untouched(&c, "result", &b.result);
        /* Every rank's first N_LOCAL inputs, in rank order: the scan the
         * ranks that succeeded must have written. */
        int32_t *all = (int32_t *)malloc((size_t)mpt_size * N_LOCAL * sizeof(int32_t));
        xt_expect *exp = (xt_expect *)malloc((size_t)mpt_size * N_LOCAL * sizeof *exp);
        assert_true(all && exp);
        MPI_Allgather(b.in.p, N_LOCAL, MPI_INT32_T, all, N_LOCAL, MPI_INT32_T, MPI_COMM_WORLD);
        xt_ref_scan(XPAR_INT32, XPAR_SUM, XPAR_INCLUSIVE, NULL, all, (size_t)mpt_size * N_LOCAL, 0, exp);
        if (mpt_rank == b_rank)
          mpt_expect_untouched(&c, "the failing rank's scan output", &b.out);
        else
          mpt_expect_array(&c, "scan output of a rank that succeeded", XPAR_INT32, b.out.p,
                           exp + (size_t)mpt_rank * N_LOCAL, N_LOCAL);
        free(exp);
        free(all);
      }
      mpt_case_end(&c);
      bufs_free(&b);
    }
  xpar_context_destroy(mandatory);
}

/* A result the call can only refuse, on one rank, where a GPU is usable: device
 * memory not aligned to its type, and a host range straddling a mapping's edge.
 * Every rank errs, and nothing is written (the device block read back too). */
static void test_bad_result_memory(void **state) {
  xpar_context *ctx = (xpar_context *)*state;
#ifdef XT_HAVE_CUDART
  if (!mpt_all(xt_gpu_usable())) skip();
  enum { BLOCK = 32 };
  static const struct {
    const char *name, *needle;
  } kinds[2] = {{"misaligned-device-result", "not aligned"},
                {"result-straddles-a-mapping", "straddles"}};
  int bad[3];
  const int nbad = bad_ranks(bad);
  for (int f = 0; f < FN_SCAN; f++)
    for (int k = 0; k < 2; k++)
      for (int bi = 0; bi < nbad; bi++) {
        mpt_case c;
        mpt_case_begin(&c, "%s/%s/bad-rank=%d/p=%d", fn_names[f], kinds[k].name, bad[bi],
                       mpt_size);
        bufs b;
        bufs_make(&b, c.label);
        args a = valid_args((fn)f, ctx, &b);
        const int me_bad = mpt_rank == bad[bi];
        unsigned char *dev = NULL, poison[BLOCK], back[BLOCK];
        memset(poison, 0xA5, sizeof poison);
        unsigned char mapped[BLOCK];
        memcpy(mapped, poison, sizeof mapped);
        int is_mapped = 0;
        if (me_bad && k == 0) {
          if (cudaMalloc((void **)&dev, BLOCK) != cudaSuccess ||
              cudaMemcpy(dev, poison, BLOCK, cudaMemcpyHostToDevice) != cudaSuccess)
            mpt_fail(&c, "cudaMalloc / cudaMemcpy failed");
          a.result = dev + 2;
        } else if (me_bad) {
          /* the result's last bytes lie past the mapping's end */
          is_mapped = xpar_map(ctx, mapped, 16, XPAR_MAP_TO) == XPAR_OK;
          if (!is_mapped) mpt_fail(&c, "xpar_map failed: %s", xpar_last_error_detail());
          a.result = mapped + 14;
        }
        xpar_status st = call(&a, MPI_COMM_WORLD);
        mpt_expect_status(&c, "status", st, XPAR_ERR_INVALID_ARGUMENT);
        char needle[96];
        snprintf(needle, sizeof needle, "rank %d of %d failed", bad[bi], mpt_size);
        mpt_expect_detail(&c, "detail names the failing rank", needle);
        if (me_bad) mpt_expect_detail(&c, "own detail says why", kinds[k].needle);
        if (dev) {
          if (cudaMemcpy(back, dev, BLOCK, cudaMemcpyDeviceToHost) != cudaSuccess)
            mpt_fail(&c, "cudaMemcpy back failed");
          mpt_expect_bytes(&c, "the device block", back, poison, BLOCK);
          cudaFree(dev);
        }
        if (is_mapped) {
          /* the host copy, before the unmap (which must not copy over it) */
          mpt_expect_bytes(&c, "the mapped block", mapped, poison, BLOCK);
          xpar_unmap(ctx, mapped, XPAR_UNMAP_RELEASE);
        }
        if (!me_bad) expect_nothing_written(&c, &b);
        mpt_case_end(&c);
        bufs_free(&b);
      }
#else
  (void)ctx;
  skip();
#endif
}

/* Another device's memory on one rank (the first, a middle one, the last): an input
 * (every function), a scan's output, a result (reduce, wide sum, dot).  Needs a GPU on
 * every rank and two visible; each rank's context is on its node-local GPU and the bad
 * rank's block on the next device, without peer access. */
static void test_other_device_memory(void **state) {
  (void)state;
#ifdef XT_HAVE_CUDART
  xpar_device_info info;
  const int two = xt_gpu_usable() && xpar_device_query(&info) == XPAR_OK && info.usable &&
                  info.device_count >= 2;
  if (!mpt_all(two)) skip();
  int mine = -1;
  assert_int_equal(xpar_mpi_local_device(MPI_COMM_WORLD, &mine), XPAR_OK);
  xpar_context *ctx = NULL;
  assert_int_equal(xpar_mpi_context_create(MPI_COMM_WORLD, &ctx), XPAR_OK);
  const int other = (mine + 1) % info.device_count;
  mpt_set_cuda_device(mine);
  enum { WHERE_IN, WHERE_OUT, WHERE_RESULT, NWHERE };
  static const char *const where_names[NWHERE] = {"in", "out", "result"};
  enum { BLOCK = 64 };
  int bad[3];
  const int nbad = bad_ranks(bad);
  for (int f = 0; f < NFNS; f++)
    for (int w = 0; w < NWHERE; w++) {
      if (w == WHERE_OUT && f != FN_SCAN) continue;
      if (w == WHERE_RESULT && f == FN_SCAN) continue;
      for (int bi = 0; bi < nbad; bi++) {
        mpt_case c;
        mpt_case_begin(&c, "%s/%s-on-another-device/bad-rank=%d/p=%d", fn_names[f],
                       where_names[w], bad[bi], mpt_size);
        bufs b;
        bufs_make(&b, c.label);
        args a = valid_args((fn)f, ctx, &b);
        const int me_bad = mpt_rank == bad[bi];
        unsigned char image[BLOCK], back[BLOCK], *dev = NULL;
        memset(image, 0xA5, sizeof image);
        if (w == WHERE_IN) memcpy(image, b.in.p, N_LOCAL * sizeof(int32_t));
        if (me_bad) {
          mpt_set_cuda_device(other);
          if (cudaMalloc((void **)&dev, BLOCK) != cudaSuccess ||
              cudaMemcpy(dev, image, BLOCK, cudaMemcpyHostToDevice) != cudaSuccess) {
            mpt_fail(&c, "cudaMalloc / cudaMemcpy on device %d failed", other);
            dev = NULL;
          }
          mpt_set_cuda_device(mine);
          if (dev) {
            if (w == WHERE_IN) a.in = dev;
            else if (w == WHERE_OUT) a.out = dev;
            else a.result = dev;
          }
        }
        const xpar_status st = call(&a, MPI_COMM_WORLD);
        mpt_expect_status(&c, "status", st, XPAR_ERR_INVALID_ARGUMENT);
        char needle[96];
        snprintf(needle, sizeof needle, "rank %d of %d failed: %s", bad[bi], mpt_size,
                 xpar_status_name(XPAR_ERR_INVALID_ARGUMENT));
        mpt_expect_detail(&c, "detail names the failing rank and its status", needle);
        mpt_expect_detail(&c, "detail says nothing was written", "nothing was written");
        if (me_bad) {
          snprintf(needle, sizeof needle, "device memory of device %d", other);
          mpt_expect_detail(&c, "own detail names the other device", needle);
        }
        if (dev) {
          mpt_set_cuda_device(other);
          if (cudaMemcpy(back, dev, BLOCK, cudaMemcpyDeviceToHost) != cudaSuccess)
            mpt_fail(&c, "cudaMemcpy back from device %d failed", other);
          else
            mpt_expect_bytes(&c, "the block on the other device", back, image, BLOCK);
          cudaFree(dev);
          mpt_set_cuda_device(mine);
        }
        expect_nothing_written(&c, &b);
        mpt_case_end(&c);
        bufs_free(&b);
      }
    }
  xpar_context_destroy(ctx);
#else
  skip();
#endif
}

/* Communicators that cannot take part are refused at once, on the rank that
 * passes them (here: every rank), before any communication. */
static void test_unusable_comm(void **state) {
  xpar_context *ctx = (xpar_context *)*state;
  MPI_Comm zero;
  memset(&zero, 0, sizeof zero);
  MPI_Comm inter = MPI_COMM_NULL, half = MPI_COMM_NULL;
  if (mpt_size >= 2) {
    /* Two groups (lower and upper half), joined by an intercommunicator. */
    const int upper = mpt_rank >= mpt_size / 2;
    MPI_Comm_split(MPI_COMM_WORLD, upper, mpt_rank, &half);
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, upper ? 0 : mpt_size / 2, 7, &inter);
  }
  const struct {
    const char *name;
    MPI_Comm comm;
    xpar_status status;
    const char *needle;
  } comms[] = {
      {"MPI_COMM_NULL", MPI_COMM_NULL, XPAR_ERR_INVALID_ARGUMENT, "comm is MPI_COMM_NULL"},
      {"zero-handle", zero, XPAR_ERR_NULL_POINTER, "comm is a NULL (zero) handle"},
      {"intercommunicator", inter, XPAR_ERR_INVALID_ARGUMENT, "intercommunicator"},
  };
  for (size_t i = 0; i < sizeof comms / sizeof comms[0]; i++) {
    if (comms[i].comm == MPI_COMM_NULL && i > 0) continue; /* no intercomm with 1 rank */
    for (int f = 0; f < NFNS; f++) {
      mpt_case c;
      mpt_case_begin(&c, "%s/%s/p=%d", fn_names[f], comms[i].name, mpt_size);
      bufs b;
      bufs_make(&b, c.label);
      args a = valid_args((fn)f, ctx, &b);
      mpt_expect_status(&c, "status", call(&a, comms[i].comm), comms[i].status);
      mpt_expect_detail(&c, "detail", comms[i].needle);
      mpt_expect_detail(&c, "detail names the function", fn_names[f]);
      expect_nothing_written(&c, &b);
      mpt_case_end(&c);
      bufs_free(&b);
    }
    mpt_case c;
    mpt_case_begin(&c, "placement/%s/p=%d", comms[i].name, mpt_size);
    int device = -7;
    mpt_expect_status(&c, "xpar_mpi_local_device", xpar_mpi_local_device(comms[i].comm, &device),
                      comms[i].status);
    if (device != -7) mpt_fail(&c, "xpar_mpi_local_device wrote %d on failure", device);
    xpar_context *made = (xpar_context *)&device;
    mpt_expect_status(&c, "xpar_mpi_context_create",
                      xpar_mpi_context_create(comms[i].comm, &made), comms[i].status);
    if (made) mpt_fail(&c, "xpar_mpi_context_create left *out non-NULL on failure");
    mpt_case_end(&c);
  }
  if (inter != MPI_COMM_NULL) MPI_Comm_free(&inter);
  if (half != MPI_COMM_NULL) MPI_Comm_free(&half);
}

/* This rank's rank among the world's ranks on its node (what placement uses). */
static int node_rank(void) {
  MPI_Comm node;
  int r = 0;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, mpt_rank, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &r);
  MPI_Comm_free(&node);
  return r;
}

/* The device a context runs on, seen through a mapping's device pointer;
 * -1 when that cannot be told. */
static int context_device(mpt_case *c, xpar_context *ctx) {
#ifdef XT_HAVE_CUDART
  static double probe[16];
  int device = -1;
  if (xpar_map(ctx, probe, sizeof probe, XPAR_MAP_TO) != XPAR_OK) {
    mpt_fail(c, "xpar_map: %s", xpar_last_error_detail());
    return -1;
  }
  void *dev = NULL;
  struct cudaPointerAttributes attr;
  if (xpar_mapped_device_ptr(ctx, probe, &dev) != XPAR_OK)
    mpt_fail(c, "xpar_mapped_device_ptr: %s", xpar_last_error_detail());
  else if (cudaPointerGetAttributes(&attr, dev) != cudaSuccess)
    mpt_fail(c, "cudaPointerGetAttributes failed");
  else
    device = attr.device;
  xpar_unmap(ctx, probe, XPAR_UNMAP_RELEASE);
  return device;
#else
  (void)c;
  (void)ctx;
  return -1;
#endif
}

static void test_placement(void **state) {
  (void)state;
  const int local = node_rank();
  xpar_device_info info;
  assert_int_equal(xpar_device_query(&info), XPAR_OK);
  const int gpu = info.usable && info.device_count > 0;
  const int want = gpu ? local % info.device_count : -1;

  mpt_case c;
  mpt_case_begin(&c, "placement/node-rank-modulo-devices/p=%d", mpt_size);
  int device = -7;
  mpt_expect_status(&c, "xpar_mpi_local_device", xpar_mpi_local_device(MPI_COMM_WORLD, &device),
                    XPAR_OK);
  if (device != want)
    mpt_fail(&c, "device %d, expected %d (node rank %d, %d devices, usable %d: %s)", device, want,
             local, info.device_count, info.usable, info.reason);
  xpar_context *ctx = NULL;
  mpt_expect_status(&c, "xpar_mpi_context_create", xpar_mpi_context_create(MPI_COMM_WORLD, &ctx),
                    XPAR_OK);
  if (!ctx) mpt_fail(&c, "no context");
  if (ctx && gpu && mpt_mem_built(MPT_MEM_DEVICE)) {
    const int on = context_device(&c, ctx);
    if (on != want) mpt_fail(&c, "the context runs on device %d, expected %d", on, want);
    /* The API overrides the placement. */
    const int other = (want + 1) % info.device_count;
    mpt_expect_status(&c, "xpar_context_set_device", xpar_context_set_device(ctx, other), XPAR_OK);
    const int now = context_device(&c, ctx);
    if (now != other) mpt_fail(&c, "after xpar_context_set_device(%d) the context runs on %d",
                               other, now);
  }
  xpar_context_destroy(ctx);
  mpt_case_end(&c);

  /* XPAR_DEVICE wins over the node-local placement. */
  mpt_case_begin(&c, "placement/XPAR_DEVICE-wins/p=%d", mpt_size);
  setenv("XPAR_DEVICE", "0", 1);
  device = -7;
  mpt_expect_status(&c, "xpar_mpi_local_device", xpar_mpi_local_device(MPI_COMM_WORLD, &device),
                    XPAR_OK);
  if (device != (gpu ? 0 : -1)) mpt_fail(&c, "device %d with XPAR_DEVICE=0", device);
  ctx = NULL;
  mpt_expect_status(&c, "xpar_mpi_context_create", xpar_mpi_context_create(MPI_COMM_WORLD, &ctx),
                    XPAR_OK);
  if (ctx && gpu && mpt_mem_built(MPT_MEM_DEVICE)) {
    const int on = context_device(&c, ctx);
    if (on != 0) mpt_fail(&c, "the context runs on device %d with XPAR_DEVICE=0", on);
  }
  xpar_context_destroy(ctx);
  /* An invalid environment is xpar_context_create's error, reported as such. */
  setenv("XPAR_BACKEND", "warp-drive", 1);
  ctx = (xpar_context *)&device;
  mpt_expect_status(&c, "xpar_mpi_context_create, XPAR_BACKEND invalid",
                    xpar_mpi_context_create(MPI_COMM_WORLD, &ctx), XPAR_ERR_INVALID_ENV);
  mpt_expect_detail(&c, "detail", "XPAR_BACKEND");
  if (ctx) mpt_fail(&c, "*out not NULL after a failed create");
  unsetenv("XPAR_BACKEND");
  unsetenv("XPAR_DEVICE");
  /* NULL out-parameters: refused after the node split (which every rank makes). */
  mpt_expect_status(&c, "xpar_mpi_local_device(NULL)", xpar_mpi_local_device(MPI_COMM_WORLD, NULL),
                    XPAR_ERR_NULL_POINTER);
  mpt_expect_status(&c, "xpar_mpi_context_create(NULL)",
                    xpar_mpi_context_create(MPI_COMM_WORLD, NULL), XPAR_ERR_NULL_POINTER);
  mpt_case_end(&c);
}

/* xpar.h: n = 0 reads and writes no element, so its pointers are not checked.
 * Every other rank (the first, the third, ...) passes an empty slice through
 * unaligned pointers to each function; the others pass 5 elements: every rank
 * succeeds, with the sum of the non-empty slices. */
static void test_empty_slices_unaligned(void **state) {
  xpar_context *ctx = (xpar_context *)*state;
  const int empty = mpt_rank % 2 == 0;
  for (int f = 0; f < NFNS; f++) {
    mpt_case c;
    mpt_case_begin(&c, "%s/empty-slices-unaligned/p=%d", fn_names[f], mpt_size);
    bufs b;
    bufs_make(&b, c.label);
    args a = valid_args((fn)f, ctx, &b);
    if (empty) {
      a.n = 0;
      a.in = (const char *)a.in + 1;
      a.y = (const char *)a.y + 2;
      a.out = (char *)a.out + 3;
    }
    mpt_expect_status(&c, "status", call(&a, MPI_COMM_WORLD), XPAR_OK);
    /* the total the non-empty slices give, from plain MPI */
    const int32_t *in = (const int32_t *)b.in.p, *y = (const int32_t *)b.y.p;
    long long mine = 0, total = 0;
    for (int i = 0; i < N_LOCAL && !empty; i++)
      mine += f == FN_DOT ? (long long)in[i] * y[i] : in[i];
    MPI_Allreduce(&mine, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (f == FN_REDUCE || f == FN_DOT) {
      const int32_t want = (int32_t)(uint32_t)(unsigned long long)total;
      mpt_expect_bytes(&c, "result", b.result.p, &want, sizeof want);
    } else if (f == FN_SUM_WIDE) {
      const int64_t want = (int64_t)total;
      mpt_expect_bytes(&c, "wide result", b.result.p, &want, sizeof want);
    }
    if (f == FN_SCAN && empty) mpt_expect_untouched(&c, "scan output", &b.out);
    mpt_case_end(&c);
    bufs_free(&b);
  }
}

static int setup_ctx(void **state) {
  xpar_context *ctx = NULL;
  if (xpar_context_create(&ctx) != XPAR_OK) return -1;
  *state = ctx;
  return 0;
}

static int teardown_ctx(void **state) {
  xpar_context_destroy((xpar_context *)*state);
  return 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  mpt_init("test_mpi_api", argc, argv);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_one_bad_rank, setup_ctx, teardown_ctx),
      cmocka_unit_test_setup_teardown(test_two_bad_ranks, setup_ctx, teardown_ctx),
      cmocka_unit_test_setup_teardown(test_mismatch, setup_ctx, teardown_ctx),
      cmocka_unit_test_setup_teardown(test_runtime_failure, setup_ctx, teardown_ctx),
      cmocka_unit_test_setup_teardown(test_bad_result_memory, setup_ctx, teardown_ctx),
      cmocka_unit_test(test_other_device_memory),
      cmocka_unit_test_setup_teardown(test_unusable_comm, setup_ctx, teardown_ctx),
      cmocka_unit_test_setup_teardown(test_empty_slices_unaligned, setup_ctx, teardown_ctx),
      cmocka_unit_test(test_placement),
  };
  const int failed = cmocka_run_group_tests_name("mpi_api", tests, NULL, NULL);
  MPI_Finalize();
  return failed;
}
