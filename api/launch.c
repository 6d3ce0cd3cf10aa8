/*
 * Application kernels (xpar/xpar_kernel.h): xpar_launch and the kernel
 * thresholds, through the same door as the built-in operations.  Every
 * argument is checked here (nothing runs on bad input), then one xpar__call
 * carries the kernel and its copied arguments to dispatch, which classifies,
 * stages, decides and records exactly as for the built-in ops.
 */
#include <stdio.h>
#include <string.h>

#include "api.h"

static xpar_status check_kernel(const xpar_kernel *k) {
  XPAR__RETURN_IF(!k, XPAR_ERR_NULL_POINTER, "kernel is NULL");
  XPAR__RETURN_IF(k->abi != XPAR_KERNEL_ABI, XPAR_ERR_INVALID_ARGUMENT,
                  "kernel object at %p has layout version %u, this library expects %u "
                  "(rebuild the kernel against this xpar)",
                  (const void *)k, k->abi, XPAR_KERNEL_ABI);
  XPAR__RETURN_IF(!k->name, XPAR_ERR_INVALID_ARGUMENT, "kernel object at %p has no name",
                  (const void *)k);
  XPAR__RETURN_IF(!k->cpu && !k->gpu, XPAR_ERR_NOT_SUPPORTED,
                  "kernel %s has neither a CPU nor a GPU variant", k->name);
  return XPAR_OK;
}

/* One argument: its role and dtype, then an array's size, pointer and
 * alignment, or a scalar's pointer and size. */
static xpar_status check_arg(const xpar_kernel *k, int j, const xpar_arg *a, size_t *bytes) {
  char name[24];
  snprintf(name, sizeof name, "args[%d]", j);
  XPAR__RETURN_IF(a->role != XPAR_ARG_READ && a->role != XPAR_ARG_WRITE &&
                      a->role != XPAR_ARG_READ_WRITE && a->role != XPAR_ARG_SCALAR,
                  XPAR_ERR_INVALID_ENUM, "kernel %s: %s has unknown role %d", k->name, name,
                  (int)a->role);
  XPAR__RETURN_IF(!xpar__dtype_valid(a->dtype), XPAR_ERR_INVALID_ENUM,
                  "kernel %s: %s has unknown dtype %d", k->name, name, (int)a->dtype);
  const size_t size = xpar__dtype_size(a->dtype);
  if (a->role == XPAR_ARG_SCALAR) {
    XPAR__RETURN_IF(!a->ptr, XPAR_ERR_NULL_POINTER, "kernel %s: scalar %s is NULL", k->name,
                    name);
    XPAR__RETURN_IF(a->count == 0 || a->count > XPAR_KERNEL_SCALAR_BYTES / size,
                    XPAR_ERR_INVALID_ARGUMENT,
                    "kernel %s: scalar %s holds %zu %s elements; a scalar holds 1 to %zu "
                    "(XPAR_KERNEL_SCALAR_BYTES = %d)",
                    k->name, name, a->count, xpar_dtype_name(a->dtype),
                    XPAR_KERNEL_SCALAR_BYTES / size, XPAR_KERNEL_SCALAR_BYTES);
    *bytes = a->count * size;
    return XPAR_OK;
  }
  XPAR__RETURN_IF(a->count > SIZE_MAX / size, XPAR_ERR_SIZE_OVERFLOW,
                  "kernel %s: %s: count * sizeof(%s) overflows size_t (count = %zu)", k->name,
                  name, xpar_dtype_name(a->dtype), a->count);
  *bytes = a->count * size;
  char qualified[160];
  snprintf(qualified, sizeof qualified, "kernel %s: %s", k->name, name);
  return xpar__check_array(qualified, a->ptr, a->count, *bytes, a->dtype);
}

/* Two arrays are the same array (pointer and size) or disjoint: a parallel
 * body would otherwise read what another index already overwrote, and no
 * single staging copy could serve both. */
static xpar_status check_overlaps(const xpar_kernel *k, const xpar__kernel_call *kc) {
  for (int a = 0; a < kc->nargs; a++)
    for (int b = a + 1; b < kc->nargs; b++) {
      const xpar_arg *x = &kc->args[a], *y = &kc->args[b];
      if (x->role == XPAR_ARG_SCALAR || y->role == XPAR_ARG_SCALAR) continue;
      if (!kc->bytes[a] || !kc->bytes[b]) continue;
      if (x->ptr == y->ptr && kc->bytes[a] == kc->bytes[b]) continue;
      uintptr_t pa = (uintptr_t)x->ptr, pb = (uintptr_t)y->ptr;
      XPAR__RETURN_IF(pa < pb + kc->bytes[b] && pb < pa + kc->bytes[a], XPAR_ERR_OVERLAP,
                      "kernel %s: args[%d] [%p, +%zu bytes) overlaps args[%d] [%p, +%zu "
                      "bytes); arrays must be identical or disjoint",
                      k->name, a, x->ptr, kc->bytes[a], b, y->ptr, kc->bytes[b]);
    }
  return XPAR_OK;
}

/* Every check of a launch (nothing runs), filling kc; the context meets the
 * kernel (its thresholds and environment).  Independent of n: an array's
 * count is what the body may touch, whatever n. */
static xpar_status launch_check(xpar_context *ctx, const xpar_kernel *k, const xpar_arg *args,
                                int nargs, xpar__kernel_call *kc) {
  xpar_status st = check_kernel(k);
  if (st == XPAR_OK && (nargs < 0 || nargs > XPAR_KERNEL_MAX_ARGS))
    st = xpar__fail(XPAR_ERR_INVALID_ARGUMENT, "kernel %s: nargs = %d, expected 0 to %d",
                    k->name, nargs, XPAR_KERNEL_MAX_ARGS);
  if (st == XPAR_OK && nargs > 0 && !args)
    st = xpar__fail(XPAR_ERR_NULL_POINTER, "kernel %s: args is NULL (nargs = %d)", k->name,
                    nargs);
  if (st == XPAR_OK) {
    memset(kc, 0, sizeof *kc);
    kc->kind = XPAR__KERNEL_LAUNCH;
    kc->name = k->name;
    kc->has_cpu = k->cpu != NULL;
    kc->has_gpu = k->gpu != NULL;
    kc->kernel = k;
    kc->nargs = nargs;
    for (int j = 0; j < nargs && st == XPAR_OK; j++) {
      kc->args[j] = args[j];
      st = check_arg(k, j, &args[j], &kc->bytes[j]);
    }
  }
  if (st == XPAR_OK) st = check_overlaps(k, kc);
  /* The context meets the kernel: its thresholds (and environment). */
  xpar__kernel_entry *entry = NULL;
  if (st == XPAR_OK) st = xpar__kernel_entry_of(ctx, k, k->name, &entry);
  if (st != XPAR_OK) return st;
  kc->entry = entry;
  return XPAR_OK;
}

xpar_status xpar__launch_check(xpar_context *ctx, const xpar_kernel *k, const xpar_arg *args,
                               int nargs) {
  xpar__kernel_call kc;
  return launch_check(ctx, k, args, nargs, &kc);
}

/* A launch's dtype in its decision record: its first array argument's
 * (INT32 for a launch without arrays, or whose arguments cannot be read). */
static xpar_dtype record_dtype(const xpar_arg *args, int nargs) {
  if (args && nargs <= XPAR_KERNEL_MAX_ARGS)
    for (int j = 0; j < nargs; j++)
      if (args[j].role != XPAR_ARG_SCALAR && xpar__dtype_valid(args[j].dtype))
        return args[j].dtype;
  return XPAR_INT32;
}

xpar_status xpar__launch_refused(xpar_context *ctx, const xpar_kernel *k, const xpar_arg *args,
                                 int nargs, size_t n, xpar_status st) {
  xpar__context_record_refused(ctx, XPAR_OP_KERNEL, record_dtype(args, nargs), n,
                               k && k->abi == XPAR_KERNEL_ABI ? k->name : NULL);
  return st;
}

xpar_status xpar__launch_entered(xpar_context *ctx, const xpar_kernel *k, size_t n,
                                 const xpar_arg *args, int nargs, int nowait) {
  xpar__kernel_call kc;
  const xpar_status checked = launch_check(ctx, k, args, nargs, &kc);
  if (checked != XPAR_OK) return xpar__launch_refused(ctx, k, args, nargs, n, checked);
  const xpar_dtype dtype = record_dtype(kc.args, nargs);
  for (int j = 0; j < nargs; j++) {
    const xpar_arg *a = &kc.args[j];
    if (a->role == XPAR_ARG_SCALAR) {
      /* Copied now: nothing below holds the caller's scalar. */
      memcpy(kc.values.scalar[j].bytes, a->ptr, kc.bytes[j]);
      kc.args[j].ptr = NULL;
    }
  }
  xpar__call c;
  memset(&c, 0, sizeof c);
  c.op = XPAR_OP_KERNEL;
  c.dtype = dtype; /* the decision record's: the first array's dtype */
  c.result_dtype = dtype;
  c.n = n;
  c.nowait = nowait;
  c.kernel = &kc;
  /* Shadow mode compares the built-in ops' results only: kernels and
   * operators run once. */
  return xpar__dispatch_primary(ctx, &c);
}

XPAR_API xpar_status xpar_launch(xpar_context *ctx, const xpar_kernel *kernel, size_t n,
                                 const xpar_arg *args, int nargs) {
  XPAR__OP_THROUGH_CONTEXT(ctx, xpar__launch_entered(ctx, kernel, n, args, nargs, 0));
}

XPAR_API xpar_status xpar_launch_nowait(xpar_context *ctx, const xpar_kernel *kernel, size_t n,
                                        const xpar_arg *args, int nargs) {
  XPAR__OP_THROUGH_CONTEXT(ctx, xpar__launch_entered(ctx, kernel, n, args, nargs, 1));
}

/* Set (*set) or read (into *get) threshold `which` of the kernel or operator
 * `key`, its entry made on first use: the kernels' and the operators' setters
 * and getters, once the object is checked. */
static xpar_status entry_threshold(xpar_context *ctx, const void *key, const char *name,
                                   xpar_threshold which, const size_t *set, size_t *get) {
  XPAR__RETURN_IF((unsigned)which >= XPAR_THRESHOLD_COUNT_, XPAR_ERR_INVALID_ENUM,
                  "unknown threshold %d", (int)which);
  xpar__kernel_entry *e;
  XPAR__FORWARD(xpar__kernel_entry_of(ctx, key, name, &e));
  if (set) {
    e->thresholds[which] = *set;
    e->sources[which] = XPAR__SRC_API;
  } else {
    *get = e->thresholds[which];
  }
  return XPAR_OK;
}

static xpar_status kernel_threshold_entered(xpar_context *ctx, const xpar_kernel *k,
                                           xpar_threshold which, const size_t *set,
                                           size_t *get) {
  XPAR__FORWARD(check_kernel(k));
  return entry_threshold(ctx, k, k->name, which, set, get);
}

XPAR_API xpar_status xpar_context_set_kernel_threshold(xpar_context *ctx,
                                                       const xpar_kernel *kernel,
                                                       xpar_threshold which, size_t n) {
  XPAR__THROUGH_CONTEXT(ctx, kernel_threshold_entered(ctx, kernel, which, &n, NULL));
}

XPAR_API xpar_status xpar_context_get_kernel_threshold(xpar_context *ctx,
                                                       const xpar_kernel *kernel,
                                                       xpar_threshold which, size_t *out) {
  XPAR__THROUGH_CONTEXT(ctx, out ? kernel_threshold_entered(ctx, kernel, which, NULL, out)
                                 : xpar__fail(XPAR_ERR_NULL_POINTER, "out is NULL"));
}

/* ---- operators (XPAR_OPERATOR): reduce and scan ------------------------------- */


static xpar_status check_operator(const xpar_operator *op, int scan) {
  XPAR__RETURN_IF(!op, XPAR_ERR_NULL_POINTER, "operator is NULL");
  XPAR__RETURN_IF(op->abi != XPAR_KERNEL_ABI, XPAR_ERR_INVALID_ARGUMENT,
                  "operator object at %p has layout version %u, this library expects %u "
                  "(rebuild it against this xpar)",
                  (const void *)op, op->abi, XPAR_KERNEL_ABI);
  XPAR__RETURN_IF(!op->name, XPAR_ERR_INVALID_ARGUMENT, "operator object at %p has no name",
                  (const void *)op);
  /* Each rule its own refusal, naming the rule and the value that broke it. */
  XPAR__RETURN_IF(op->acc_size == 0 || op->acc_size > XPAR_OPERATOR_MAX_ACC,
                  XPAR_ERR_INVALID_ARGUMENT,
                  "operator %s: accumulator of %zu bytes; an accumulator has 1 to %d bytes",
                  op->name, op->acc_size, XPAR_OPERATOR_MAX_ACC);
  XPAR__RETURN_IF(op->in_size == 0, XPAR_ERR_INVALID_ARGUMENT,
                  "operator %s: input element of 0 bytes; an input element has at least 1 byte",
                  op->name);
  XPAR__RETURN_IF(!xpar__power_of_two(op->acc_align), XPAR_ERR_INVALID_ARGUMENT,
                  "operator %s: accumulator alignment %zu; an alignment is a power of two",
                  op->name, op->acc_align);
  XPAR__RETURN_IF(!xpar__power_of_two(op->in_align), XPAR_ERR_INVALID_ARGUMENT,
                  "operator %s: input alignment %zu; an alignment is a power of two", op->name,
                  op->in_align);
  const int has_cpu = scan ? op->cpu_scan != NULL : op->cpu_reduce != NULL;
  const int has_gpu = scan ? op->gpu_scan != NULL : op->gpu_reduce != NULL;
  XPAR__RETURN_IF(!has_cpu && !has_gpu, XPAR_ERR_NOT_SUPPORTED,
                  "operator %s has neither a CPU nor a GPU %s", op->name,
                  scan ? "scan" : "reduce");
  return XPAR_OK;
}

/* An application object's array (an operator's, a predicate's): n elements of `size`
 * bytes aligned to `align` (n = 0: any pointer); the refusal names the object as
 * "<kind> <name>". */
xpar_status xpar__check_app_array(const char *kind, const char *name, const char *what,
                                  const void *p, size_t n, size_t size, size_t align,
                                  size_t *bytes) {
  XPAR__RETURN_IF(n > SIZE_MAX / size, XPAR_ERR_SIZE_OVERFLOW,
                  "%s %s: n * %zu bytes of %s overflows size_t (n = %zu)", kind, name, size,
                  what, n);
  *bytes = n * size;
  XPAR__RETURN_IF(n > 0 && !p, XPAR_ERR_NULL_POINTER, "%s %s: %s is NULL (n = %zu)", kind,
                  name, what, n);
  if (n == 0) return XPAR_OK; /* no element is read or written (xpar.h) */
  XPAR__RETURN_IF((uintptr_t)p & (align - 1), XPAR_ERR_INVALID_ARGUMENT,
                  "%s %s: %s (%p) is not aligned to %zu bytes", kind, name, what, p, align);
  XPAR__RETURN_IF(p && (uintptr_t)p > UINTPTR_MAX - *bytes, XPAR_ERR_SIZE_OVERFLOW,
                  "%s %s: %s + %zu bytes overflows the address space", kind, name, what,
                  *bytes);
  return XPAR_OK;
}

static xpar_status operator_entered(xpar_context *ctx, const xpar_operator *op, int scan,
                                    xpar_scan_kind kind, const void *in, void *out, size_t n,
                                    void *result, int nowait) {
  xpar__kernel_call kc;
  memset(&kc, 0, sizeof kc);
  xpar_status st = check_operator(op, scan);
  if (st == XPAR_OK && scan && (unsigned)kind >= XPAR_SCAN_KIND_COUNT_)
    st = xpar__fail(XPAR_ERR_INVALID_ENUM, "operator %s: unknown scan kind %d", op->name,
                    (int)kind);
  if (st == XPAR_OK)
    st = xpar__check_app_array("operator", op->name, "in", in, n, op->in_size, op->in_align,
                               &kc.bytes[0]);
  if (st == XPAR_OK && scan)
    st = xpar__check_app_array("operator", op->name, "out", out, n, op->acc_size,
                               op->acc_align, &kc.bytes[1]);
  if (st == XPAR_OK && !scan && !result)
    st = xpar__fail(XPAR_ERR_NULL_POINTER, "operator %s: result is NULL", op->name);
  if (st == XPAR_OK && !scan && ((uintptr_t)result & (op->acc_align - 1)))
    st = xpar__fail(XPAR_ERR_INVALID_ARGUMENT,
                    "operator %s: result (%p) is not aligned to %zu bytes", op->name, result,
                    op->acc_align);
  if (st == XPAR_OK && scan && n > 0) {
    uintptr_t a = (uintptr_t)in, b = (uintptr_t)out;
    if (a < b + kc.bytes[1] && b < a + kc.bytes[0])
      st = xpar__fail(XPAR_ERR_OVERLAP,
                      "operator %s: in [%p, +%zu bytes) overlaps out [%p, +%zu bytes); an "
                      "operator scan needs disjoint arrays",
                      op->name, in, kc.bytes[0], out, kc.bytes[1]);
  }
  xpar__kernel_entry *entry = NULL;
  if (st == XPAR_OK) st = xpar__kernel_entry_of(ctx, op, op->name, &entry);
  if (st != XPAR_OK) {
    /* An operator's types are the application's: INT32, as a run records. */
    xpar__context_record_refused(ctx, XPAR_OP_KERNEL, XPAR_INT32, n,
                                 op && op->abi == XPAR_KERNEL_ABI ? op->name : NULL);
    return st;
  }
  kc.kind = scan ? XPAR__KERNEL_SCAN : XPAR__KERNEL_REDUCE;
  kc.name = op->name;
  kc.has_cpu = scan ? op->cpu_scan != NULL : op->cpu_reduce != NULL;
  kc.has_gpu = scan ? op->gpu_scan != NULL : op->gpu_reduce != NULL;
  kc.op = op;
  kc.scan_kind = kind;
  kc.result = result;
  kc.entry = entry;
  kc.nargs = scan ? 2 : 1;
  kc.args[0] = (xpar_arg){XPAR_ARG_READ, XPAR_INT32, n, in};
  if (scan) kc.args[1] = (xpar_arg){XPAR_ARG_WRITE, XPAR_INT32, n, out};
  xpar__call c;
  memset(&c, 0, sizeof c);
  c.op = XPAR_OP_KERNEL;
  c.dtype = XPAR_INT32; /* an operator's types are the application's */
  c.result_dtype = XPAR_INT32;
  c.n = n;
  c.nowait = nowait;
  c.kernel = &kc;
  /* Shadow mode compares the built-in ops' results only: kernels and
   * operators run once. */
  return xpar__dispatch_primary(ctx, &c);
}

XPAR_API xpar_status xpar_reduce_op(xpar_context *ctx, const xpar_operator *op, const void *in,
                                    size_t n, void *result) {
  XPAR__OP_THROUGH_CONTEXT(ctx,
                           operator_entered(ctx, op, 0, XPAR_INCLUSIVE, in, NULL, n, result, 0));
}

XPAR_API xpar_status xpar_scan_op(xpar_context *ctx, const xpar_operator *op,
                                  xpar_scan_kind kind, const void *in, void *out, size_t n) {
  XPAR__OP_THROUGH_CONTEXT(ctx, operator_entered(ctx, op, 1, kind, in, out, n, NULL, 0));
}

XPAR_API xpar_status xpar_reduce_op_nowait(xpar_context *ctx, const xpar_operator *op,
                                           const void *in, size_t n, void *result) {
  XPAR__OP_THROUGH_CONTEXT(ctx,
                           operator_entered(ctx, op, 0, XPAR_INCLUSIVE, in, NULL, n, result, 1));
}

XPAR_API xpar_status xpar_scan_op_nowait(xpar_context *ctx, const xpar_operator *op,
                                         xpar_scan_kind kind, const void *in, void *out,
                                         size_t n) {
  XPAR__OP_THROUGH_CONTEXT(ctx, operator_entered(ctx, op, 1, kind, in, out, n, NULL, 1));
}

static xpar_status operator_threshold_entered(xpar_context *ctx, const xpar_operator *op,
                                             xpar_threshold which, const size_t *set,
                                             size_t *get) {
  XPAR__RETURN_IF(!op, XPAR_ERR_NULL_POINTER, "operator is NULL");
  XPAR__RETURN_IF(op->abi != XPAR_KERNEL_ABI || !op->name, XPAR_ERR_INVALID_ARGUMENT,
                  "operator object at %p is not one of this xpar (layout version %u)",
                  (const void *)op, op->abi);
  return entry_threshold(ctx, op, op->name, which, set, get);
}

XPAR_API xpar_status xpar_context_set_operator_threshold(xpar_context *ctx,
                                                         const xpar_operator *op,
                                                         xpar_threshold which, size_t n) {
  XPAR__THROUGH_CONTEXT(ctx, operator_threshold_entered(ctx, op, which, &n, NULL));
}

XPAR_API xpar_status xpar_context_get_operator_threshold(xpar_context *ctx,
                                                         const xpar_operator *op,
                                                         xpar_threshold which, size_t *out) {
  XPAR__THROUGH_CONTEXT(ctx, out ? operator_threshold_entered(ctx, op, which, NULL, out)
                                 : xpar__fail(XPAR_ERR_NULL_POINTER, "out is NULL"));
}
