/*
 * Per-context GPU state: creation, streams, cached scratch and staging,
 * copies, and the mapping of CUDA errors to xpar statuses (including the
 * process-wide latch for context-corrupting errors).
 */
#include <atomic>
#include <chrono>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h> /* driver types only: nothing links libcuda (driver_symbol) */
#include <cudaTypedefs.h>

#include "cuda_ops.h"
#include "cuda_state.cuh"
#include "launch_shape.cuh"

/* ---- errors ---------------------------------------------------------------- */

namespace {

/* The first context-corrupting error of the process and where it happened.
 * Once set it is never cleared: the CUDA context cannot recover, so every
 * later call on any state reports it again. */
std::atomic<int> g_sticky_error{0};
char g_sticky_where[160];

} // namespace

int xpar__cuda_error_is_sticky(cudaError_t err) {
  switch (err) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorMisalignedAddress:
    case cudaErrorIllegalInstruction:
    case cudaErrorHardwareStackError:
    case cudaErrorInvalidPc:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorAssert:
    case cudaErrorECCUncorrectable:
    case cudaErrorNvlinkUncorrectable:
    case cudaErrorLaunchTimeout:
    case cudaErrorContextIsDestroyed:
    case cudaErrorExternalDevice:
    case cudaErrorContained:
    case cudaErrorTensorMemoryLeak:
    case cudaErrorPriorLaunchFailure:
      return 1;
    default:
      return 0;
  }
}

static xpar_status status_of(cudaError_t err) {
  switch (err) {
    case cudaErrorMemoryAllocation:
      return XPAR_ERR_DEVICE_OUT_OF_MEMORY;
    case cudaErrorInsufficientDriver:
    case cudaErrorNoDevice:
    case cudaErrorStubLibrary:
      return XPAR_ERR_NO_DEVICE;
    case cudaErrorStreamCaptureUnsupported:
    case cudaErrorStreamCaptureInvalidated:
    case cudaErrorStreamCaptureImplicit:
    case cudaErrorStreamCaptureWrongThread:
    case cudaErrorCapturedEvent:
      return XPAR_ERR_NOT_SUPPORTED; /* a wait or an allocation inside a graph capture */
    default:
      return xpar__cuda_error_is_sticky(err) ? XPAR_ERR_DEVICE_STICKY : XPAR_ERR_DEVICE;
  }
}

xpar_status xpar__cuda_error(cudaError_t err, const char *where_fmt, ...) {
  char where[160];
  va_list ap;
  va_start(ap, where_fmt);
  vsnprintf(where, sizeof where, where_fmt, ap);
  va_end(ap);
  const xpar_status status = status_of(err);
  if (status == XPAR_ERR_DEVICE_STICKY) {
    int expected = 0;
    if (g_sticky_error.compare_exchange_strong(expected, -1)) {
      snprintf(g_sticky_where, sizeof g_sticky_where, "%s in %s", cudaGetErrorName(err), where);
      g_sticky_error.store((int)err);
    }
  } else {
    /* Clear the runtime's last-error slot so the error cannot resurface in a
     * later, unrelated call. */
    (void)cudaGetLastError();
  }
  if (status == XPAR_ERR_NOT_SUPPORTED)
    return xpar__fail(status,
                      "%s in %s: the context's CUDA stream (or, in global capture mode, another "
                      "stream) is capturing a CUDA graph, inside which xpar cannot wait or "
                      "allocate; the runtime has ended the capture with an error (xpar.h, "
                      "xpar_context_set_stream)",
                      cudaGetErrorName(err), where);
  return xpar__fail(status, "%s in %s", cudaGetErrorName(err), where);
}

xpar_status xpar__cuda_check_sticky(void) {
  const int err = g_sticky_error.load();
  if (err == 0) return XPAR_OK;
  if (err < 0) /* another thread is recording it right now */
    return xpar__fail(XPAR_ERR_DEVICE_STICKY, "the GPU context was corrupted by an earlier error");
  return xpar__fail(XPAR_ERR_DEVICE_STICKY,
                    "the GPU context was corrupted by an earlier error (%s); restart the process",
                    g_sticky_where);
}

/* ---- per-call helpers ------------------------------------------------------- */

static cudaError_t select_device(int device, void *primary);

xpar_status xpar__cuda_begin(xpar__cuda_state *st, const char *op_name) {
  XPAR__FORWARD(xpar__cuda_check_sticky());
  if (!st) return xpar__fail(XPAR_ERR_INTERNAL, "%s: no CUDA state", op_name);
  XPAR_CUDA_TRY(select_device(st->device, st->primary_context), "%s (selecting device %d)",
                op_name, st->device);
  return XPAR_OK;
}

xpar_status xpar__cuda_refuse_capture(const char *op_name, const char *why) {
  return xpar__fail(XPAR_ERR_NOT_SUPPORTED,
                    "%s: the context's CUDA stream is capturing a CUDA graph, and this call "
                    "cannot be captured: %s (xpar.h, xpar_context_set_stream)",
                    op_name, why);
}

xpar_status GraphScratch::take(size_t bytes, size_t zero_bytes, const char *what) {
  /* Every caller takes its scratch before the call queues anything, so the refusal
   * writes nothing and leaves the capture valid. */
  if (!st_->memory_pools)
    return xpar__cuda_refuse_capture(
        what, "the device has no stream-ordered allocator for scratch the graph owns");
  void *p = nullptr;
  XPAR_CUDA_TRY(cudaMallocAsync(&p, bytes ? bytes : 1, st_->stream),
                "%s: scratch inside a graph capture (%zu bytes)", what, bytes);
  ptr_ = p; /* the destructor frees it from here on */
  if (zero_bytes)
    XPAR_CUDA_TRY(cudaMemsetAsync(ptr_, 0, zero_bytes, st_->stream),
                  "%s: zeroing %zu bytes of scratch inside a graph capture", what, zero_bytes);
  return XPAR_OK;
}

xpar_status GraphScratch::free(const char *what) {
  void *p = ptr_;
  ptr_ = nullptr;
  if (p)
    XPAR_CUDA_TRY(cudaFreeAsync(p, st_->stream), "%s: freeing scratch inside a graph capture",
                  what);
  return XPAR_OK;
}

GraphScratch::~GraphScratch() {
  if (ptr_ && cudaFreeAsync(ptr_, st_->stream) != cudaSuccess) (void)cudaGetLastError();
}

xpar_status xpar__cuda_refuse_if_capturing(xpar__cuda_state *st, const char *what) {
  if (!xpar__cuda_capturing(st)) return XPAR_OK;
  return xpar__cuda_refuse_capture(
      what, "its first use of the context's scratch would be set up by queued work, which "
            "the capture records instead of running; make one such call before the capture");
}

xpar_status xpar__cuda_sync(xpar__cuda_state *st, const char *what) {
  XPAR_CUDA_TRY(cudaStreamSynchronize(st->stream), "%s", what);
  return XPAR_OK;
}

/* Spin until ready() holds, for at most tuning::spin_limit_ns (the clock read every
 * 64 polls): the one bounded wait of the flag and of the stamped result. */
template <class Ready> static bool spin_until(Ready ready) {
  const auto start = std::chrono::steady_clock::now();
  for (unsigned polls = 1;; polls++) {
    if (ready()) return true;
    if ((polls & 63u) == 0 && std::chrono::steady_clock::now() - start >
                                  std::chrono::nanoseconds(xpar_cuda::tuning::spin_limit_ns))
      return false;
  }
}

/* The next sequence number of the result slot (0 is never raised or stamped). */
static unsigned int next_result_seq(xpar__cuda_state *st) {
  if (++st->result_seq == 0) st->result_seq = 1;
  return st->result_seq;
}

static bool spin_for_flag(xpar__cuda_state *st, unsigned int seq) {
  const volatile unsigned int *flag = reinterpret_cast<const volatile unsigned int *>(
      static_cast<const char *>(st->result_host) + kResultFlagOffset);
  if (!spin_until([&] { return *flag == seq; })) return false;
  /* Every output was stored before the flag (done_signal.cuh); keep our later reads
   * after this one. */
  std::atomic_thread_fence(std::memory_order_acquire);
  return true;
}

extern "C" void xpar__clear_held_error(void); /* base/error.c (base.h's inline is C only) */

xpar_status xpar__cuda_done_signal(xpar__cuda_state *st, bool wait, DoneSignal *out) {
  *out = DoneSignal{nullptr, nullptr, 0};
  if (!wait || !st->flag_waits) return XPAR_OK;
  /* Without the pinned slot (a memlock limit, no host mapping) the call waits for the
   * stream, as it always could: no signal is no failure. */
  if (xpar__cuda_ensure_control(st) != XPAR_OK) {
    xpar__clear_held_error();
    return XPAR_OK;
  }
  out->seq = next_result_seq(st);
  out->ticket = st->done_ticket;
  out->flag = reinterpret_cast<volatile unsigned int *>(static_cast<char *>(st->result_device) +
                                                        kResultFlagOffset);
  return XPAR_OK;
}

xpar_status xpar__cuda_finish(xpar__cuda_state *st, const DoneSignal &done, const char *what) {
  if (done.flag && spin_for_flag(st, done.seq)) return XPAR_OK;
  return xpar__cuda_sync(st, what);
}

unsigned long long *xpar__cuda_next_stamped_result(xpar__cuda_state *st, unsigned int *seq) {
  *seq = next_result_seq(st);
  return reinterpret_cast<unsigned long long *>(static_cast<char *>(st->result_device) +
                                                kResultStampedOffset);
}

static inline unsigned long long load_stamped_word(const xpar__cuda_state *st, int i) {
  const unsigned long long *w = reinterpret_cast<const unsigned long long *>(
      static_cast<const char *>(st->result_host) + kResultStampedOffset);
  return __atomic_load_n(w + i, __ATOMIC_ACQUIRE);
}

void xpar__cuda_read_stamped(xpar__cuda_state *st, void *out, size_t bytes) {
  const unsigned long long bits =
      (load_stamped_word(st, 0) & 0xffffffffull) | (load_stamped_word(st, 1) << 32);
  memcpy(out, &bits, bytes); /* little-endian: the low bytes first */
}

bool xpar__cuda_spin_for_stamped(xpar__cuda_state *st, unsigned int seq, void *out,
                                 size_t bytes) {
  if (!spin_until([&] {
        return (unsigned)(load_stamped_word(st, 0) >> 32) == seq &&
               (unsigned)(load_stamped_word(st, 1) >> 32) == seq;
      }))
    return false;
  xpar__cuda_read_stamped(st, out, bytes);
  return true;
}

namespace {

/* A driver function (its CUDA 12.0 form) through the runtime's driver entry point, so
 * that nothing links libcuda; NULL where the runtime or the driver lacks it, and the
 * caller keeps its runtime path.  Only asked once a GPU was probed usable. */
void *driver_symbol(const char *name) {
  void *fn = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 12050
  cudaError_t err = cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &found);
#else
  cudaError_t err = cudaGetDriverEntryPoint(name, &fn, cudaEnableDefault, &found);
#endif
  if (err != cudaSuccess || found != cudaDriverEntryPointSuccess) fn = nullptr;
  (void)cudaGetLastError();
  return fn;
}

/* The driver's cuLaunchKernel, or NULL (the runtime launch stays). */
PFN_cuLaunchKernel_v4000 driver_launch() {
  static const PFN_cuLaunchKernel_v4000 fn =
      (PFN_cuLaunchKernel_v4000)driver_symbol("cuLaunchKernel");
  return fn;
}

} // namespace

/* Whether st's stream is capturing a CUDA graph (active, or invalidated and not yet ended),
 * or is the legacy default stream while another stream's capture forbids using it
 * (CUDA_ERROR_STREAM_CAPTURE_IMPLICIT).  Through the driver, which leaves the runtime's
 * last error alone: 14-25 ns on the H100 host (2026-11-26), asked once
 * per nowait call (dispatch: xpar__exec.captured). */
extern "C" int xpar__cuda_capturing(struct xpar__cuda_state *st) {
  static const PFN_cuStreamIsCapturing_v10000 driver_is_capturing =
      (PFN_cuStreamIsCapturing_v10000)driver_symbol("cuStreamIsCapturing");
  if (driver_is_capturing) {
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    const CUresult r = driver_is_capturing((CUstream)st->stream, &status);
    if (r == CUDA_ERROR_STREAM_CAPTURE_IMPLICIT) return true;
    return r == CUDA_SUCCESS && status != CU_STREAM_CAPTURE_STATUS_NONE;
  }
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  const cudaError_t e = cudaStreamIsCapturing(st->stream, &status);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return e == cudaErrorStreamCaptureImplicit;
  }
  return status != cudaStreamCaptureStatusNone;
}

/* ---- the caller's driver context --------------------------------------------------
 * xpar runs on its device's primary context, which it makes current on the calling
 * thread where another is (the application's thread may be on another device, or in a
 * driver context of its own, or in none: a fresh thread).  An application expects its
 * thread's current device and context to be what it left them after a library call --
 * its next cudaMalloc goes there, as after a cuBLAS or CUB call, and NCCL and RMM put the
 * device back likewise -- so the first switch in a public call remembers the context the
 * thread had, and the door puts it back when the call leaves (api/api.h; base's
 * xpar__callers_switched lets the door skip that while no thread switched).
 *
 * The switch goes through the driver alone: each device's primary context is retained
 * once per process (cuDevicePrimaryCtxRetain, below) and made current with
 * cuCtxSetCurrent, never with cudaSetDevice.  cudaSetDevice would also set the runtime's
 * own per-thread device, which putting the caller's context back does not undo: a thread
 * that had no context would be left with xpar's device as its runtime device, and its
 * next cudaMalloc would bind that device's primary context instead of the one it chose
 * (or device 0).  The runtime calls xpar makes after the switch (launches, copies,
 * allocations) work in the current driver context, which is a primary one.  A call on a
 * thread that already has the primary context current switches nothing and costs one
 * ~8 ns driver query; one that switches pays cuCtxSetCurrent there and back.  Only where
 * the driver's entry points are missing (an old driver) does cudaSetDevice serve, as
 * before. */
namespace {
thread_local CUcontext tl_caller_context; /* what to put back */
thread_local bool tl_caller_saved;        /* this thread switched in the current call */

PFN_cuCtxGetCurrent_v4000 driver_get_current() {
  static const PFN_cuCtxGetCurrent_v4000 fn =
      (PFN_cuCtxGetCurrent_v4000)driver_symbol("cuCtxGetCurrent");
  return fn;
}

PFN_cuCtxSetCurrent_v4000 driver_set_current() {
  static const PFN_cuCtxSetCurrent_v4000 fn =
      (PFN_cuCtxSetCurrent_v4000)driver_symbol("cuCtxSetCurrent");
  return fn;
}

/* The primary contexts xpar retained, by device ordinal: each retained once for the
 * life of the process (never released: the runtime holds its own reference too, and a
 * context in use by another thread's call must not go), under g_primary_lock. */
constexpr int kPrimaryDevices = 64;
std::atomic<CUcontext> g_primary[kPrimaryDevices];
pthread_mutex_t g_primary_lock = PTHREAD_MUTEX_INITIALIZER;

/* device's primary context, retained on first use; NULL (and the driver's error in
 * *err) where the driver cannot give it or the ordinal is past the table. */
CUcontext primary_context_of(int device, CUresult *err) {
  *err = CUDA_SUCCESS;
  if (device < 0 || device >= kPrimaryDevices) return NULL;
  CUcontext ctx = g_primary[device].load(std::memory_order_acquire);
  if (ctx) return ctx;
  static const PFN_cuDeviceGet_v2000 device_get =
      (PFN_cuDeviceGet_v2000)driver_symbol("cuDeviceGet");
  static const PFN_cuDevicePrimaryCtxRetain_v7000 retain =
      (PFN_cuDevicePrimaryCtxRetain_v7000)driver_symbol("cuDevicePrimaryCtxRetain");
  if (!device_get || !retain) return NULL;
  pthread_mutex_lock(&g_primary_lock);
  ctx = g_primary[device].load(std::memory_order_relaxed);
  if (!ctx) {
    CUdevice handle = 0;
    *err = device_get(&handle, device);
    if (*err == CUDA_SUCCESS) *err = retain(&ctx, handle);
    if (*err != CUDA_SUCCESS) ctx = NULL;
    else g_primary[device].store(ctx, std::memory_order_release);
  }
  pthread_mutex_unlock(&g_primary_lock);
  return ctx;
}


/* The runtime's error of the same number as a driver error (the runtime's codes follow
 * the driver's for the errors these calls return: invalid device, out of memory,
 * context destroyed, not initialised, no device ...). */
cudaError_t runtime_error_of(CUresult r) { return (cudaError_t)(int)r; }
} // namespace

/* The calling thread's current driver context; NULL when none or unknown. */
static CUcontext current_driver_context(void) {
  const PFN_cuCtxGetCurrent_v4000 get = driver_get_current();
  CUcontext ctx = NULL;
  if (!get || get(&ctx) != CUDA_SUCCESS) return NULL;
  return ctx;
}

/* Make `device`'s primary context current on this thread (nothing to do where
 * `primary`, when known, already is), first remembering the caller's context for the
 * door.  Through the driver (cuCtxSetCurrent), leaving the runtime's per-thread device
 * alone; cudaSetDevice only where the driver's entry points are missing. */
static cudaError_t select_device(int device, void *primary) {
  const PFN_cuCtxGetCurrent_v4000 get = driver_get_current();
  const PFN_cuCtxSetCurrent_v4000 set = driver_set_current();
  CUcontext current = NULL;
  const bool known = get && get(&current) == CUDA_SUCCESS;
  if (known && primary && current == (CUcontext)primary) return cudaSuccess;
  if (!known || !set) return cudaSetDevice(device);
  CUcontext target = (CUcontext)primary;
  if (!target) {
    CUresult r = CUDA_SUCCESS;
    target = primary_context_of(device, &r);
    if (!target) return r != CUDA_SUCCESS ? runtime_error_of(r) : cudaSetDevice(device);
    if (current == target) return cudaSuccess;
  }
  if (!tl_caller_saved) {
    tl_caller_context = current;
    tl_caller_saved = true;
    xpar__callers_switched_add(1);
  }
  const CUresult r = set(target);
  return r == CUDA_SUCCESS ? cudaSuccess : runtime_error_of(r);
}

cudaError_t xpar__cuda_select_device(int device) { return select_device(device, NULL); }

/* The device of an application's stream (cuStreamGetDevice, CUDA 12.8 drivers and up;
 * through the driver, which binds no context to the calling thread as a runtime call
 * would), -1 for the handles that follow the current device or where it cannot say. */
extern "C" int xpar__cuda_stream_device(void *stream) {
  if (!stream || stream == (void *)cudaStreamLegacy || stream == (void *)cudaStreamPerThread)
    return -1;
#if CUDA_VERSION >= 12080
  static const PFN_cuStreamGetDevice_v12080 get = [] {
    void *fn = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion("cuStreamGetDevice", &fn, 12080, cudaEnableDefault,
                                         &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess)
      fn = nullptr;
    (void)cudaGetLastError();
    return (PFN_cuStreamGetDevice_v12080)fn;
  }();
  CUdevice device = -1;
  if (get && get((CUstream)stream, &device) == CUDA_SUCCESS) return (int)device;
#endif
  return -1;
}

extern "C" void xpar__cuda_restore_caller(void) {
  if (!tl_caller_saved) return;
  tl_caller_saved = false;
  xpar__callers_switched_add(-1);
  /* Best effort: a context the application destroyed meanwhile (it cannot, inside our
   * call) or a driver refusal leaves ours current, as before this existed. */
  const PFN_cuCtxSetCurrent_v4000 set = driver_set_current();
  if (set) (void)set(tl_caller_context);
}

/* The device ordinal of device memory p (one driver look-up, ~36 ns on the H100 host,
 * 2026-11-26), -1 where the driver cannot say. */
extern "C" int xpar__cuda_device_of(const void *p) {
  static const PFN_cuPointerGetAttribute_v4000 get =
      (PFN_cuPointerGetAttribute_v4000)driver_symbol("cuPointerGetAttribute");
  int ordinal = -1;
  if (!get || get(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, (CUdeviceptr)(uintptr_t)p) !=
                  CUDA_SUCCESS)
    return -1;
  return ordinal;
}

/* Whether st's device may read and write device memory p of another device: asked, with
 * st's context current, for the address at which this context reaches p, which the
 * driver answers only where the memory is mapped for it (peer access the application
 * enabled; libcu++'s is_pointer_accessible asks the same way).  Otherwise a kernel's
 * first load would fault and end the CUDA context for the whole process.  (The
 * pointer's ACCESS_FLAGS attribute is no test of this: on a 2 x H100 host (2026-11-26) it
 * let such memory through without peer access, and the kernel faulted.) */
extern "C" int xpar__cuda_device_can_access(struct xpar__cuda_state *st, const void *p) {
  static const PFN_cuPointerGetAttribute_v4000 get =
      (PFN_cuPointerGetAttribute_v4000)driver_symbol("cuPointerGetAttribute");
  if (!get || select_device(st->device, st->primary_context) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  CUdeviceptr reached = 0;
  return get(&reached, CU_POINTER_ATTRIBUTE_DEVICE_POINTER, (CUdeviceptr)(uintptr_t)p) ==
             CUDA_SUCCESS &&
         reached == (CUdeviceptr)(uintptr_t)p;
}

/* The driver's launch of xpar__cuda_launch: false where it is unavailable or refused. */
static bool launch_through_driver(xpar__cuda_state *st, const void *handle, unsigned grid,
                                  unsigned block, size_t shared_bytes, void **args) {
  const PFN_cuLaunchKernel_v4000 launch = driver_launch();
  if (!launch || !handle) return false;
  /* A CUkernel launches in the current context: the primary one of st->device, made
   * current by xpar__cuda_begin.  No cudaGetLastError follows: the driver's return
   * value is the launch's status. */
  return launch((CUfunction)handle, grid, 1, 1, block, 1, 1, (unsigned)shared_bytes,
                (CUstream)st->stream, args, NULL) == CUDA_SUCCESS;
}

bool xpar__cuda_driver_launch(xpar__cuda_state *st, const void *handle, unsigned grid,
                              unsigned block, void **args) {
  return launch_through_driver(st, handle, grid, block, 0, args);
}

xpar_status xpar__cuda_launch(xpar__cuda_state *st, const void *kernel, const void *handle,
                              unsigned grid, unsigned block, size_t shared_bytes, void **args,
                              const char *what) {
  if (launch_through_driver(st, handle, grid, block, shared_bytes, args)) {
    st->counters.launches++;
    return XPAR_OK;
  }
  /* The runtime's own error slot is cleared either way (cudaGetLastError). */
  const cudaError_t launched =
      cudaLaunchKernel(kernel, dim3(grid), dim3(block), args, shared_bytes, st->stream);
  const cudaError_t last = cudaGetLastError();
  st->counters.launches++;
  XPAR_CUDA_TRY(launched != cudaSuccess ? launched : last, "%s kernel launch", what);
  return XPAR_OK;
}

xpar_status xpar__cuda_check_launch(xpar__cuda_state *st, const char *what) {
  st->counters.launches++;
  XPAR_CUDA_TRY(cudaGetLastError(), "%s kernel launch", what);
  return XPAR_OK;
}

static void free_buffer(xpar__cuda_buffer *buf) {
  if (buf->ptr) cudaFree(buf->ptr);
  buf->ptr = NULL;
  buf->bytes = 0;
}

/* Free every cached buffer except `keep` and the staging slots handed out to
 * the call in progress (stamped since the last kernel launch).  Only called
 * once the stream is idle, so no queued work uses what is freed; kernel
 * scratch is handed out right before its launch and so is never in use by
 * the call in progress when another buffer grows. */
static void release_idle_buffers(xpar__cuda_state *st, const xpar__cuda_buffer *keep) {
  for (int i = 0; i < XPAR__OPERAND_SLOTS; i++)
    if (&st->staging[i] != keep && st->staging_stamp[i] != st->counters.launches + 1)
      free_buffer(&st->staging[i]);
  if (&st->reduce_partials != keep) free_buffer(&st->reduce_partials);
  if (&st->seg_scratch != keep) free_buffer(&st->seg_scratch);
  if (&st->scan_status != keep) {
    free_buffer(&st->scan_status);
    st->scan_status_tiles = 0; /* regrown (and cleared) by the next scan */
  }
  /* The sort grows its two buffers one after the other: growing one keeps the other. */
  if (&st->sort_scratch != keep && &st->sort_status != keep) {
    free_buffer(&st->sort_scratch);
    free_buffer(&st->sort_status);
    st->sort_status_cleared = false; /* regrown (and cleared) by the next sort */
  }
}

xpar_status xpar__cuda_grow_device(xpar__cuda_state *st, xpar__cuda_buffer *buf, size_t bytes,
                                   const char *what, int *grown) {
  if (grown) *grown = 0;
  if (buf->ptr && buf->bytes >= bytes) return XPAR_OK;
  /* Queued kernels may still read the old buffer. */
  XPAR__FORWARD(xpar__cuda_sync(st, what));
  free_buffer(buf);
  /* Grow geometrically so a slowly rising n does not reallocate every call. */
  size_t want = bytes < 4096 ? 4096 : bytes;
  if (want < SIZE_MAX / 4 * 3) want += want / 2;
  want = (want + 255) & ~(size_t)255;
  void *p = NULL;
  cudaError_t err = cudaMalloc(&p, want);
  if (err != cudaSuccess) {
    /* Retry at exactly the size needed, then once more after releasing what
     * the call in progress does not use, before giving up. */
    (void)cudaGetLastError();
    want = bytes;
    err = cudaMalloc(&p, want);
    if (err == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      release_idle_buffers(st, buf);
      err = cudaMalloc(&p, want);
    }
  }
  if (err != cudaSuccess) return xpar__cuda_error(err, "%s (requested %zu bytes)", what, want);
  buf->ptr = p;
  buf->bytes = want;
  if (grown) *grown = 1;
  return XPAR_OK;
}

xpar_status xpar__cuda_ensure_control(xpar__cuda_state *st) {
  if (!st->control_block) {
    XPAR__FORWARD(xpar__cuda_refuse_if_capturing(st, "setting up the GPU scratch"));
    void *p = NULL;
    XPAR_CUDA_TRY(cudaMalloc(&p, 64), "reduce/scan control block (requested 64 bytes)");
    /* Zeroed once: the reduce and done tickets are reset by each launch's last
     * block and the scan tile counter only ever increases. */
    cudaError_t err = cudaMemsetAsync(p, 0, 64, st->stream);
    if (err != cudaSuccess) {
      cudaFree(p);
      return xpar__cuda_error(err, "zeroing the control block");
    }
    st->control_block = p;
    st->reduce_ticket = (unsigned int *)p;
    st->scan_tile_counter = (unsigned long long *)((char *)p + 8);
    st->done_ticket = (unsigned int *)((char *)p + 16);
    st->scan_tile_base = 0;
    }
  if (!st->result_host) {
    void *h = NULL, *d = NULL;
    XPAR_CUDA_TRY(cudaHostAlloc(&h, kResultSlotBytes, cudaHostAllocMapped),
                  "pinned result slot (requested %zu bytes)", kResultSlotBytes);
    cudaError_t err = cudaHostGetDevicePointer(&d, h, 0);
    if (err != cudaSuccess) {
      cudaFreeHost(h);
      return xpar__cuda_error(err, "mapping the pinned result slot");
    }
    memset(h, 0, kResultSlotBytes); /* no stale done flag (sequence numbers start at 1) */
    st->result_seq = 0;
    st->result_host = h;
    st->result_device = d;
  }
  return XPAR_OK;
}

/* ---- state life cycle --------------------------------------------------------- */

extern "C" xpar_status xpar__cuda_state_create(int device, void *stream,
                                              struct xpar__cuda_state **out) {
  *out = NULL;
  XPAR__FORWARD(xpar__cuda_check_sticky());
  int count = 0;
  XPAR_CUDA_TRY(cudaGetDeviceCount(&count), "counting CUDA devices");
  if (device < 0) device = 0;
  if (device >= count)
    return xpar__fail(XPAR_ERR_NO_DEVICE, "CUDA device %d requested but %d visible", device, count);
  XPAR_CUDA_TRY(select_device(device, NULL), "selecting device %d", device);
  int sms = 0;
  XPAR_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device),
                "reading the multiprocessor count of device %d", device);
  xpar__cuda_state *st = (xpar__cuda_state *)calloc(1, sizeof *st);
  if (!st) return xpar__fail(XPAR_ERR_OUT_OF_MEMORY, "allocating the CUDA state");
  st->device = device;
  /* select_device made the device's primary context current (retained for the process,
   * created if it was not yet): xpar__cuda_begin compares against it. */
  st->primary_context = current_driver_context();
  st->multiprocessors = sms;
  int l2 = 0;
  if (cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device) == cudaSuccess && l2 > 0)
    st->l2_bytes = (size_t)l2;
  (void)cudaGetLastError(); /* an unknown L2 size only keeps the streaming read path */
  int concurrent_managed = 0;
  st->flag_waits = cudaDeviceGetAttribute(&concurrent_managed, cudaDevAttrConcurrentManagedAccess,
                                          device) == cudaSuccess &&
                   concurrent_managed == 1;
  (void)cudaGetLastError(); /* unknown: the stream's synchronisation, as before */
  int pools = 0;
  st->memory_pools =
      cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, device) == cudaSuccess &&
      pools == 1;
  (void)cudaGetLastError(); /* unknown: no stateful call is captured into graphs */
  /* A blocking stream, not cudaStreamNonBlocking: work on it is ordered after
   * what the application queued on the legacy default stream before the call,
   * and work the application queues there afterwards waits for it -- as for
   * CUB, Thrust or cudaMemcpy on stream 0.  Two contexts' streams still run
   * side by side (blocking streams only synchronise with the legacy stream). */
  cudaError_t err = cudaStreamCreateWithFlags(&st->own_stream, cudaStreamDefault);
  if (err != cudaSuccess) {
    free(st);
    return xpar__cuda_error(err, "creating the context's stream on device %d", device);
  }
  st->stream = stream ? (cudaStream_t)stream : st->own_stream;
  *out = st;
  return XPAR_OK;
}

extern "C" void xpar__cuda_state_destroy(struct xpar__cuda_state *st) {
  if (!st) return;
  /* Best effort: after a sticky error these calls fail, and there is nothing
   * left to report them to; the memory goes with the process. */
  if (select_device(st->device, st->primary_context) == cudaSuccess) {
    cudaStreamSynchronize(st->stream);
    release_idle_buffers(st, NULL);
    for (int i = 0; i < XPAR__OPERAND_SLOTS; i++) free_buffer(&st->staging[i]);
    if (st->control_block) cudaFree(st->control_block);
    if (st->result_host) cudaFreeHost(st->result_host);
    if (st->own_stream) cudaStreamDestroy(st->own_stream);
  }
  (void)cudaGetLastError();
  free(st);
}

extern "C" xpar_status xpar__cuda_set_stream(struct xpar__cuda_state *st, void *stream) {
  XPAR__FORWARD(xpar__cuda_begin(st, "set_stream"));
  cudaStream_t next = stream ? (cudaStream_t)stream : st->own_stream;
  if (next == st->stream) return XPAR_OK;
  /* Scratch is shared by everything this state queues: finish the work on the
   * old stream before work on the new one can touch the same buffers. */
  XPAR__FORWARD(xpar__cuda_sync(st, "set_stream (finishing work on the previous stream)"));
  st->stream = next;
  return XPAR_OK;
}

extern "C" xpar_status xpar__cuda_release_cache(struct xpar__cuda_state *st) {
  XPAR__FORWARD(xpar__cuda_begin(st, "release_cache"));
  XPAR__FORWARD(xpar__cuda_sync(st, "release_cache (finishing queued work)"));
  for (int i = 0; i < XPAR__OPERAND_SLOTS; i++) free_buffer(&st->staging[i]);
  release_idle_buffers(st, NULL);
  return XPAR_OK;
}

extern "C" unsigned long long xpar__cuda_launch_count(const struct xpar__cuda_state *st) {
  return st ? st->counters.launches : 0;
}

/* ---- memory ------------------------------------------------------------------- */

/*
 * Classifying a pointer.  cudaPointerGetAttributes fills a whole struct
 * (type, device, device and host pointers) and cost 156-220 ns per operand on
 * the H100 host, the driver's cuPointerGetAttributes asked for the two
 * attributes xpar needs, memory type and managed, 101-174 ns
 * (bench/cub/pointer_query_cost.cu, 2026-11-25): several times a
 * small CPU call that needs it, and a pinned operand is asked about on every
 * call (page_cache.h).  The driver function is
 * reached through the runtime's driver entry point, so nothing links
 * libcuda: where the entry point is missing (an old runtime or driver) the
 * runtime call is used, and a missing driver stays what it was, a GPU that
 * is not usable (this is only asked once a GPU was probed usable).
 */
namespace {
typedef CUresult(CUDAAPI *get_attributes_fn)(unsigned int, CUpointer_attribute *, void **,
                                             CUdeviceptr);
get_attributes_fn driver_get_attributes() {
  static const get_attributes_fn fn =
      reinterpret_cast<get_attributes_fn>(driver_symbol("cuPointerGetAttributes"));
  return fn;
}

/* The kind through the driver: 1 when answered, 0 when the caller must ask
 * the runtime.  Each attribute's value goes to a zeroed 8-byte slot, so its
 * width (an enum, a bool) does not matter; memory that CUDA does not know
 * (pageable) gets the default values, 0, and CUDA_SUCCESS. */
int driver_pointer_kind(const void *p, xpar__ptr_kind *out) {
  get_attributes_fn fn = driver_get_attributes();
  if (!fn) return 0;
  CUpointer_attribute which[2] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                  CU_POINTER_ATTRIBUTE_IS_MANAGED};
  unsigned long long value[2] = {0, 0};
  void *data[2] = {&value[0], &value[1]};
  if (fn(2, which, data, (CUdeviceptr)(uintptr_t)p) != CUDA_SUCCESS) return 0;
  if (value[1])
    *out = XPAR__PTR_MANAGED;
  else if (value[0] == CU_MEMORYTYPE_HOST)
    *out = XPAR__PTR_HOST_PINNED;
  else if (value[0] == CU_MEMORYTYPE_DEVICE || value[0] == CU_MEMORYTYPE_ARRAY)
    *out = XPAR__PTR_DEVICE;
  else if (value[0] == 0)
    *out = XPAR__PTR_HOST_PAGEABLE;
  else
    return 0; /* unified or unknown: let the runtime say */
  return 1;
}

/* The kind of p: the driver's answer, else the runtime's (cudaPointerGetAttributes);
 * the runtime's error, if any, with *out untouched. */
cudaError_t pointer_kind(const void *p, xpar__ptr_kind *out) {
  if (driver_pointer_kind(p, out)) return cudaSuccess;
  cudaPointerAttributes attr;
  memset(&attr, 0, sizeof attr);
  cudaError_t err = cudaPointerGetAttributes(&attr, p);
  if (err == cudaSuccess) {
    switch (attr.type) {
      case cudaMemoryTypeHost: *out = XPAR__PTR_HOST_PINNED; break;
      case cudaMemoryTypeDevice: *out = XPAR__PTR_DEVICE; break;
      case cudaMemoryTypeManaged: *out = XPAR__PTR_MANAGED; break;
      case cudaMemoryTypeUnregistered:
      default: *out = XPAR__PTR_HOST_PAGEABLE; break;
    }
  }
  /* Some runtimes leave an error in the last-error slot for plain host
   * pointers; it must not leak into the next call. */
  (void)cudaGetLastError();
  return err;
}
} // namespace

/* The driver allocation holding p: its range attributes, asked only for memory the
 * driver already called its own (page_cache.h keeps the answer). */
extern "C" int xpar__cuda_pointer_range(const void *p, uintptr_t *start, size_t *size) {
  get_attributes_fn fn = driver_get_attributes();
  if (!fn) return 0;
  CUpointer_attribute which[2] = {CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                  CU_POINTER_ATTRIBUTE_RANGE_SIZE};
  unsigned long long value[2] = {0, 0};
  void *data[2] = {&value[0], &value[1]};
  if (fn(2, which, data, (CUdeviceptr)(uintptr_t)p) != CUDA_SUCCESS || !value[1]) return 0;
  *start = (uintptr_t)value[0];
  *size = (size_t)value[1];
  return 1;
}

/* Device memory of a driver context the application created (cuCtxCreate) on the
 * context's device is used as any device memory: on the H100 host (driver 580.159,
 * 2026-12-07) the primary context reaches it at the same address
 * (CU_POINTER_ATTRIBUTE_DEVICE_POINTER asked from the primary context) and every tier
 * computes on it (tests/test_devices_gpu.cu, test_application_context_memory).  Nothing
 * is asked beyond the pointer's kind: a check per device operand per call would cost a
 * driver look-up for a case that works. */
extern "C" xpar_status xpar__cuda_pointer_kind(const void *p, xpar__ptr_kind *out) {
  XPAR__FORWARD(xpar__cuda_check_sticky());
  cudaError_t err = pointer_kind(p, out);
  if (err != cudaSuccess) return xpar__cuda_error(err, "classifying pointer %p", p);
  return XPAR_OK;
}

/* Pinned host memory for dispatch's host copies of device operands (see
 * backend.h): cudaMallocHost, no stream, no state. */
extern "C" xpar_status xpar__cuda_host_alloc(struct xpar__cuda_state *st, size_t bytes,
                                             void **out) {
  XPAR__FORWARD(xpar__cuda_check_sticky());
  /* In our device's context, not one the application made current (its own driver
   * context may be destroyed, and the memory with it, while the context keeps it). */
  if (st) XPAR__FORWARD(xpar__cuda_begin(st, "pinned host staging"));
  void *p = NULL;
  cudaError_t err = cudaMallocHost(&p, bytes ? bytes : 1);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    return xpar__fail(err == cudaErrorMemoryAllocation ? XPAR_ERR_OUT_OF_MEMORY
                                                       : status_of(err),
                      "pinned host staging (%zu bytes): %s", bytes, cudaGetErrorName(err));
  }
  *out = p;
  return XPAR_OK;
}

/* In st's device's context, as it was allocated: not whatever the calling thread has
 * current (an application's own driver context, or none -- where cudaFreeHost would bind
 * the runtime's device's primary context to the thread).  The switch is remembered like
 * any other, and the door of the public call puts the caller's context back.  Without a
 * state (never made: the memory came from whichever context was current) as before. */
extern "C" void xpar__cuda_host_free(struct xpar__cuda_state *st, void *p) {
  if (!p) return;
  if (st && select_device(st->device, st->primary_context) != cudaSuccess) {
    (void)cudaGetLastError();
    return; /* best effort: a lost context takes its pinned memory with it */
  }
  cudaFreeHost(p);
  (void)cudaGetLastError();
}

extern "C" xpar_status xpar__cuda_alloc(struct xpar__cuda_state *st, size_t bytes, void **out) {
  XPAR__FORWARD(xpar__cuda_begin(st, "alloc"));
  void *p = NULL;
  cudaError_t err = cudaMalloc(&p, bytes ? bytes : 1);
  if (err == cudaErrorMemoryAllocation) {
    /* No call is in progress (mapping drains the stream first): the whole
     * cache may go before the mapping is refused. */
    (void)cudaGetLastError();
    XPAR__FORWARD(xpar__cuda_sync(st, "alloc (finishing queued work)"));
    for (int i = 0; i < XPAR__OPERAND_SLOTS; i++) free_buffer(&st->staging[i]);
    release_idle_buffers(st, NULL);
    err = cudaMalloc(&p, bytes ? bytes : 1);
  }
  if (err != cudaSuccess)
    return xpar__cuda_error(err, "device allocation for a mapping (requested %zu bytes)", bytes);
  *out = p;
  return XPAR_OK;
}

extern "C" void xpar__cuda_free(struct xpar__cuda_state *st, void *p) {
  if (!st || !p) return;
  if (select_device(st->device, st->primary_context) == cudaSuccess) cudaFree(p);
  (void)cudaGetLastError();
}

extern "C" xpar_status xpar__cuda_staging(struct xpar__cuda_state *st, int slot, size_t bytes,
                                          void **out) {
  if (slot < 0 || slot >= XPAR__OPERAND_SLOTS)
    return xpar__fail(XPAR_ERR_INTERNAL, "staging slot %d out of range 0..%d", slot,
                      XPAR__OPERAND_SLOTS - 1);
  XPAR__FORWARD(xpar__cuda_begin(st, "staging"));
  char what[48];
  snprintf(what, sizeof what, "staging slot %d", slot);
  XPAR__FORWARD(xpar__cuda_grow_device(st, &st->staging[slot], bytes, what, NULL));
  st->staging_stamp[slot] = st->counters.launches + 1; /* in use until the next launch */
  *out = st->staging[slot].ptr;
  return XPAR_OK;
}

/*
 * Small copies from pinned host memory go through a kernel, not the copy
 * engine.  The driver reads a small pinned source when cudaMemcpyAsync is
 * called, not when the stream reaches the copy, unless the stream itself has
 * work or an explicit dependency queued: on a blocking stream whose only
 * dependency is the implicit one on the legacy default stream, an
 * application's cudaMemcpyAsync into that pinned buffer on stream 0, still
 * queued behind a kernel, was not seen -- 10 of 10 trials stale at 4, 8 and
 * 16 KiB, none at 32 KiB and above (H100, driver 580.159.04, raw CUDA,
 * 2026-11-26; the same copy on stream 0 itself, or
 * after cudaStreamWaitEvent, or read by a kernel, was never stale).  An
 * event recorded on the legacy stream would order it too, but that event
 * waits for every blocking stream's work, other threads' contexts included.
 * A kernel reads its source (UVA: pinned memory is device-accessible) when
 * it runs, in stream order.  Up to kPinnedKernelCopyMax bytes, four times the
 * largest size seen captured: the DMA path's fixed cost dominates there
 * anyway.
 */
constexpr size_t kPinnedKernelCopyMax = (size_t)64 << 10;

template <class W>
__global__ void copy_in_stream_order(W *dst, const W *src, size_t words) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < words;
       i += (size_t)gridDim.x * blockDim.x)
    dst[i] = src[i];
}

template <class W>
static xpar_status launch_copy(xpar__cuda_state *st, void *dst, const void *src, size_t bytes) {
  auto kernel = copy_in_stream_order<W>;
  W *d = static_cast<W *>(dst);
  const W *s = static_cast<const W *>(src);
  size_t words = bytes / sizeof(W);
  const unsigned block = 256;
  unsigned grid = (unsigned)((words + block - 1) / block);
  if (grid > 64) grid = 64;
  void *args[] = {&d, &s, &words};
  /* Not xpar__cuda_launch: a copy is not the call's launch.  The staging
   * slots the call has filled stay stamped in use until its kernel's launch
   * (release_idle_buffers), so that a later slot growing under memory
   * pressure cannot free the one this copy just filled. */
  const cudaError_t launched =
      cudaLaunchKernel((const void *)kernel, dim3(grid), dim3(block), args, 0, st->stream);
  const cudaError_t last = cudaGetLastError();
  XPAR_CUDA_TRY(launched != cudaSuccess ? launched : last, "copy from pinned host memory (%zu "
                "bytes) kernel launch", bytes);
  return XPAR_OK;
}

/* The address through which kernels reach pinned host memory p: p itself
 * under unified addressing on most platforms, but CUDA does not promise it
 * for registered memory (cudaDevAttrCanUseHostPointerForRegisteredMem), so
 * the driver is asked; NULL when it gives none. */
static const void *pinned_device_address(const void *p) {
  if (get_attributes_fn fn = driver_get_attributes()) {
    CUpointer_attribute which = CU_POINTER_ATTRIBUTE_DEVICE_POINTER;
    unsigned long long value = 0;
    void *data = &value;
    if (fn(1, &which, &data, (CUdeviceptr)(uintptr_t)p) == CUDA_SUCCESS && value)
      return (const void *)(uintptr_t)value;
  }
  void *dp = NULL;
  if (cudaHostGetDevicePointer(&dp, const_cast<void *>(p), 0) == cudaSuccess) return dp;
  (void)cudaGetLastError();
  return NULL;
}

/* The widest word that divides both addresses and the size. */
static xpar_status copy_pinned_by_kernel(xpar__cuda_state *st, void *dst, const void *src,
                                         size_t bytes) {
  const uintptr_t a = (uintptr_t)dst | (uintptr_t)src | (uintptr_t)bytes;
  if (a % 16 == 0) return launch_copy<uint4>(st, dst, src, bytes);
  if (a % 8 == 0) return launch_copy<unsigned long long>(st, dst, src, bytes);
  if (a % 4 == 0) return launch_copy<unsigned>(st, dst, src, bytes);
  return launch_copy<unsigned char>(st, dst, src, bytes);
}

extern "C" xpar_status xpar__cuda_copy(struct xpar__cuda_state *st, void *dst, const void *src,
                                       size_t bytes, xpar__copy_dir dir) {
  static const char *const names[] = {"host to device", "device to host", "device to device",
                                       "host to device", "device to host"};
  const char *name = (unsigned)dir < 5 ? names[dir] : "?";
  if (!st) {
    /* No state yet (a context that never ran on the GPU, e.g. forced to the
     * CPU, moving device data): a plain synchronous copy, no stream. */
    XPAR__FORWARD(xpar__cuda_check_sticky());
    if (bytes == 0) return XPAR_OK;
    XPAR_CUDA_TRY(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault), "copy %s (%zu bytes)", name,
                  bytes);
    return XPAR_OK;
  }
  XPAR__FORWARD(xpar__cuda_begin(st, "copy"));
  if (bytes == 0) return XPAR_OK;
  /* Only a copy from the caller's host memory asks what it is: xpar's own
   * (WRITTEN) is waited for by the caller right after. */
  xpar__ptr_kind kind = XPAR__PTR_HOST_PAGEABLE; /* unknown: as pageable */
  if (dir == XPAR__HOST_TO_DEVICE) (void)pointer_kind(src, &kind);
  if (dir == XPAR__HOST_TO_DEVICE && kind == XPAR__PTR_HOST_PINNED &&
      bytes <= kPinnedKernelCopyMax) {
    /* stream order, no wait needed; without a device address (no mapped
     * pinned memory on this platform) the copy engine, as before */
    if (const void *device_src = pinned_device_address(src))
      return copy_pinned_by_kernel(st, dst, device_src, bytes);
  }
  XPAR_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, st->stream),
                "copy %s (%zu bytes)", name, bytes);
  /* From the caller's pageable memory the copy must be complete before we
   * return (the caller may reuse its buffer); from pinned memory stream order is
   * enough; xpar's own host memory is waited for by the caller (backend.h); a copy
   * to the host is waited for. */
  int wait = dir == XPAR__DEVICE_TO_HOST ||
             (dir == XPAR__HOST_TO_DEVICE && kind != XPAR__PTR_HOST_PINNED);
  if (wait) XPAR_CUDA_TRY(cudaStreamSynchronize(st->stream), "copy %s (%zu bytes)", name, bytes);
  return XPAR_OK;
}

extern "C" xpar_status xpar__cuda_wait(struct xpar__cuda_state *st) {
  if (!st) return xpar__cuda_check_sticky(); /* nothing was ever queued */
  XPAR__FORWARD(xpar__cuda_begin(st, "wait"));
  return xpar__cuda_sync(st, "waiting for queued GPU work");
}
