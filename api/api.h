/*
 * What every public entry point shares: the door into a context.  One
 * protocol for every public function that uses a context: enter it (clear
 * the detail message, refuse a NULL context and concurrent use), check the
 * arguments, hand the work to dispatch, leave.  Functions that only read a
 * context (getters) take it const and pass xpar__read_door instead.
 */
#ifndef XPAR_API_API_H
#define XPAR_API_API_H

#include <stdatomic.h>

#include "dispatch/shadow.h"

xpar_status xpar__ctx_busy(void);

/** 1 when v is a power of two (an alignment). */
static inline int xpar__power_of_two(size_t v) { return v && !(v & (v - 1)); }

/** An application object's array (an operator's, a predicate's): n elements of
 *  `size` bytes aligned to `align`, their bytes in *bytes; the refusal names the
 *  object as "<kind> <name>" (api/launch.c). */
xpar_status xpar__check_app_array(const char *kind, const char *name, const char *what,
                                  const void *p, size_t n, size_t size, size_t align,
                                  size_t *bytes);

/** The refusal of an array argument that xpar__check_array found wrong:
 *  the same three checks, each with its own status and detail (api/api.c). */
xpar_status xpar__check_array_refused(const char *name, const void *p, size_t n, size_t bytes,
                                      xpar_dtype dtype);

/** An array argument: non-NULL, aligned to its dtype and inside the address
 *  space where n > 0; anything where n = 0, which reads and writes no element
 *  (xpar_launch checks kernel arrays with it too).  The passing
 *  case is inline -- a few instructions per array, where the out-of-line call
 *  was a fifth of a 128-element add's dispatch -- and only a refusal leaves
 *  the line to find which check failed and say so. */
static inline xpar_status xpar__check_array(const char *name, const void *p, size_t n,
                                            size_t bytes, xpar_dtype dtype) {
  const uintptr_t a = (uintptr_t)p;
  if (n == 0 || (p && !(a & (xpar__dtype_size(dtype) - 1)) && a <= UINTPTR_MAX - bytes))
    return XPAR_OK;
  return xpar__check_array_refused(name, p, n, bytes, dtype);
}

/** xpar_launch's checks of a kernel and its arguments (nothing runs; the
 *  context meets the kernel), and xpar_launch inside the door (api/launch.c;
 *  xpar_kernel_calibrate times launches with it). */
xpar_status xpar__launch_check(xpar_context *ctx, const xpar_kernel *k, const xpar_arg *args,
                               int nargs);
xpar_status xpar__launch_entered(xpar_context *ctx, const xpar_kernel *k, size_t n,
                                 const xpar_arg *args, int nargs, int nowait);
/** The decision record of a launch (or a kernel's calibration) refused before
 *  anything ran: op KERNEL, the first array argument's dtype where one is
 *  readable (INT32 otherwise, as for a launch with none), n, and the kernel's
 *  name only where the object passed its layout check (it may be no kernel
 *  at all otherwise).  Returns st. */
xpar_status xpar__launch_refused(xpar_context *ctx, const xpar_kernel *k, const xpar_arg *args,
                                 int nargs, size_t n, xpar_status st);

/** Clear the detail, refuse a NULL context, and refuse concurrent use of one
 *  context.  The busy check uses plain loads and stores: a locked
 *  read-modify-write would cost more than a whole 128-element call.  Sharing
 *  a context is not supported; this turns most such bugs into
 *  XPAR_ERR_CONTEXT_BUSY instead of silent corruption. */
static inline xpar_status xpar__ctx_enter(xpar_context *ctx) {
  xpar__clear_error();
  if (!ctx) return xpar__fail(XPAR_ERR_NULL_CONTEXT, "the context is NULL");
  if (atomic_load_explicit(&ctx->busy, memory_order_relaxed)) return xpar__ctx_busy();
  atomic_store_explicit(&ctx->busy, 1, memory_order_relaxed);
  return XPAR_OK;
}

/** Leave: the calling thread's driver context as the call found it (state.h:
 *  xpar__gpu_restore_caller; a global read while no thread switched), and
 *  the context free for the next call. */
static inline void xpar__ctx_leave(xpar_context *ctx) {
  if (atomic_load_explicit(&xpar__callers_switched, memory_order_relaxed))
    xpar__gpu_restore_caller();
  atomic_store_explicit(&ctx->busy, 0, memory_order_release);
}

/** The door: enter ctx, evaluate `call` (the arguments' checks, then the
 *  hand-over to dispatch: a function of the entered context), leave, and
 *  return its status.  Every public function that uses a context returns
 *  through it; only xpar_context_destroy enters without leaving (the context
 *  is gone).  Anything but an operation may change what the context's calls
 *  are decided from (settings, thresholds, mappings, the device), so it
 *  bumps the context's settings generation: the repeats dispatch remembers
 *  (state.h, xpar__repeat) stand only while it does not move.  A new public
 *  function gets that by default. */
#define XPAR__THROUGH_CONTEXT(ctx, call) XPAR__THROUGH_DOOR_(ctx, call, (ctx)->settings_generation++)

/** The door of the operations (the built-in ops, kernel launches, operator
 *  reductions and scans): they change no setting, so repeats stand. */
#define XPAR__OP_THROUGH_CONTEXT(ctx, call) XPAR__THROUGH_DOOR_(ctx, call, (void)0)

#define XPAR__THROUGH_DOOR_(ctx, call, on_entry) \
  do {                                           \
    XPAR__FORWARD(xpar__ctx_enter(ctx));         \
    on_entry;                                    \
    xpar_status xpar__through_ = (call);         \
    xpar__ctx_leave(ctx);                        \
    return xpar__through_;                       \
  } while (0)

/** The reader's door: clear the detail, refuse a NULL context or out. */
static inline xpar_status xpar__read_door(const xpar_context *ctx, const void *out,
                                          const char *out_name) {
  xpar__clear_error();
  XPAR__RETURN_IF(!ctx, XPAR_ERR_NULL_CONTEXT, "the context is NULL");
  XPAR__RETURN_IF(!out, XPAR_ERR_NULL_POINTER, "%s is NULL", out_name);
  return XPAR_OK;
}

#endif /* XPAR_API_API_H */
