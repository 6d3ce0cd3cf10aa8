/* How many threads are inside a public call whose driver context xpar switched. */
#include <stdatomic.h>

#include "base.h"

/*
 * The CUDA backend makes its device's primary context current before GPU
 * work (backend_cuda/cuda_state.cu: select_device) and remembers, in a
 * thread-local, the context the calling thread had; the door puts that
 * context back when the public call leaves (api/api.h: xpar__ctx_leave).
 * Most calls switch nothing (the application's thread already has the
 * device's primary context current), so the door reads this count, a plain
 * global, and reaches the thread-local only while some thread has switched:
 * the same economy as xpar__details_held (error.c).  A thread's own
 * increment is visible to its own later load, which is all the door needs.
 */
atomic_uint xpar__callers_switched;

void xpar__callers_switched_add(int delta) {
  if (delta > 0)
    atomic_fetch_add_explicit(&xpar__callers_switched, 1, memory_order_relaxed);
  else
    atomic_fetch_sub_explicit(&xpar__callers_switched, 1, memory_order_relaxed);
}
