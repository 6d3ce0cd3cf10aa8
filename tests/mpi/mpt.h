/*
 * mpt — helpers of the MPI component's tests, on top of xt (tests/common).
 *
 * Every rank runs the same cmocka tests and makes the same collective calls
 * in the same order.  A check that fails on one rank must not make that rank
 * leave the test early (the others would wait in the next collective), so
 * checks are recorded in an mpt_case and the ranks agree at its end
 * (mpt_case_end): if any rank failed, the failed ranks print why (to stderr,
 * "[rank r] ..."), and every rank fails the cmocka test at the same point.
 *
 * Only rank 0 of MPI_COMM_WORLD writes to stdout (cmocka's progress lines);
 * the seed is rank 0's, broadcast to every rank before xt_init reads it.
 */
#ifndef XPAR_TESTS_MPT_H
#define XPAR_TESTS_MPT_H

#include <mpi.h>

#include "xt.h"
#include "xpar/xpar_mpi.h"

/* ---- start-up ---------------------------------------------------------------- */

/** After MPI_Init: broadcast rank 0's seed (XPAR_TEST_SEED or the time) into
 *  every rank's XPAR_TEST_SEED, silence stdout on ranks but 0, xt_init. */
void mpt_init(const char *program, int argc, char **argv);
extern int mpt_rank, mpt_size; /* in MPI_COMM_WORLD */

/** 1 on every rank if `ok` is true on every rank of MPI_COMM_WORLD. */
int mpt_all(int ok);

/* ---- cases: checks recorded, failures agreed ------------------------------------- */

typedef struct mpt_case {
  char label[256];
  int failures;
  char first[1024]; /* this rank's first failure */
} mpt_case;

void mpt_case_begin(mpt_case *c, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/** Record a failure on this rank (the first one is kept for the report). */
void mpt_fail(mpt_case *c, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/** Collective over MPI_COMM_WORLD: fail the cmocka test on every rank if any
 *  rank recorded a failure in c. */
void mpt_case_end(mpt_case *c);

void mpt_expect_status(mpt_case *c, const char *what, xpar_status got, xpar_status want);
/** The component's detail contains `needle` (case-sensitive). */
void mpt_expect_detail(mpt_case *c, const char *what, const char *needle);
void mpt_expect_array(mpt_case *c, const char *what, xpar_dtype t, const void *got,
                      const xt_expect *exp, size_t n);
void mpt_expect_scalar(mpt_case *c, const char *what, xpar_dtype t, const void *got, xt_expect e);
void mpt_expect_bytes(mpt_case *c, const char *what, const void *got, const void *want,
                      size_t bytes);
void mpt_expect_guards(mpt_case *c, const char *what, const xt_buf *b);
/** Nothing was written: the whole allocation still holds the poison. */
void mpt_expect_untouched(mpt_case *c, const char *what, const xt_buf *b);
/** Collective over comm: the `bytes` at p are the same on every rank of comm. */
void mpt_expect_same_on_all(mpt_case *c, MPI_Comm comm, const char *what, const void *p,
                            size_t bytes);

/* ---- slice layouts ----------------------------------------------------------------- */

/** How the concatenated array is cut into per-rank slices. */
typedef enum mpt_layout_kind {
  MPT_LAYOUT_EMPTY = 0,      /* every slice empty                                   */
  MPT_LAYOUT_SINGLE = 1,     /* one rank (random) holds everything                  */
  MPT_LAYOUT_UNEVEN = 2,     /* random lengths in [0, 3000]                         */
  MPT_LAYOUT_ENDS_EMPTY = 3, /* first and last rank empty, the others [1, 2000]     */
  MPT_LAYOUT_LARGE = 4,      /* [2^16, 2^16 + 4096] each: past the OpenMP threshold */
  MPT_NLAYOUTS
} mpt_layout_kind;

typedef struct mpt_layout {
  int ranks;
  size_t *n;     /* slice length of each rank        */
  size_t *start; /* where each slice starts globally */
  size_t total;
} mpt_layout;

const char *mpt_layout_name(mpt_layout_kind k);
/** A layout for `ranks` ranks drawn from r (the same on every rank that
 *  draws from the same generator). */
void mpt_layout_make(mpt_layout *l, mpt_layout_kind k, int ranks, xt_rng *r);
void mpt_layout_free(mpt_layout *l);

/* ---- where a slice lives ----------------------------------------------------------------- */

typedef enum mpt_mem {
  MPT_MEM_HOST = 0,    /* pageable host memory                         */
  MPT_MEM_PINNED = 1,  /* cudaMallocHost                               */
  MPT_MEM_MAPPED = 2,  /* host memory mapped with xpar_map on the context */
  MPT_MEM_DEVICE = 3,  /* cudaMalloc                                   */
  MPT_MEM_MANAGED = 4, /* cudaMallocManaged                            */
  MPT_NMEMS
} mpt_mem;

const char *mpt_mem_name(mpt_mem m);
/** 1 if this build can place data in m at all (GPU kinds need the CUDA runtime). */
int mpt_mem_built(mpt_mem m);

/**
 * A guarded array (xt_buf: the host image, poison, guard zones) placed in a
 * memory kind: `p` is what the xpar call gets.  The whole allocation (array
 * and guards) is copied to the kind's memory by mpt_slice_push and back by
 * mpt_slice_pull, so the guard checks cover device memory too.
 */
typedef struct mpt_slice {
  xt_buf host;
  mpt_mem mem;
  xpar_context *ctx;    /* MAPPED: the context of the mapping */
  unsigned char *alloc; /* PINNED, DEVICE, MANAGED: the kind's allocation */
  void *p;
  int mapped;
} mpt_slice;

/** Allocate (poisoned host image); failures are recorded in c. */
void mpt_slice_alloc(mpt_case *c, mpt_slice *s, xpar_context *ctx, mpt_mem m, xpar_dtype t,
                     size_t n, size_t off);
/** Host image -> the kind's memory (MAPPED: xpar_map TO). */
void mpt_slice_push(mpt_case *c, mpt_slice *s);
/** The kind's memory -> host image (MAPPED: xpar_update FROM_DEVICE, unmap). */
void mpt_slice_pull(mpt_case *c, mpt_slice *s);
void mpt_slice_free(mpt_slice *s);

/** cudaSetDevice(device) when the CUDA runtime is linked (allocations of the
 *  GPU kinds then land on the context's device); no-op otherwise. */
void mpt_set_cuda_device(int device);

/* ---- exact references of the serial tier ----------------------------------------- */

/** acc = acc + x in float or double (t), as the rank-order fold does. */
void mpt_float_add(xpar_dtype t, void *acc, const void *x);
/** The serial dot of one slice: acc = 0; acc = acc + x[i]*y[i] in type t. */
void mpt_serial_dot(xpar_dtype t, const void *x, const void *y, size_t n, void *result);

#endif /* XPAR_TESTS_MPT_H */
