"""xpar: data-parallel primitives (reduce, scan, axpy, add, fill, dot, sort) that run
each call on an NVIDIA GPU or on the CPU, choosing per call.

Python binding of the C library (include/xpar/xpar.h); docs/python.md is the
guide.  Arrays are taken without copying through DLPack or the buffer
protocol: NumPy host arrays, CuPy / PyTorch device or host arrays; 1-D,
contiguous, of dtype int32, int64, uint32, uint64, float32 or float64.

Module-level functions run on a default context of the calling thread
(``default_context()``); a ``Context`` is for one thread at a time, as in C.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Optional

from . import _xpar

__all__ = [
    "Context", "Decision", "DeviceInfo", "Error", "default_context", "device_query",
    "profile_default_path", "NEVER",
    "sum", "sum_wide", "min", "max", "cumsum", "cummin", "cummax", "scan", "dot",
    "axpy", "add", "fill", "sort", "sort_pairs", "argsort", "select", "select_flagged",
    "partition", "unique_consecutive", "run_length_encode", "reduce_by_key",
    "argmin", "argmax", "segment_reduce", "segment_scan", "segment_argmin", "segment_argmax",
    "histogram",
]

__version__ = "%d.%d.%d" % _xpar.VERSION

#: A threshold value meaning "never switch" (XPAR_NEVER).
NEVER = _xpar.NEVER

# ---------------------------------------------------------------- errors --


class Error(Exception):
    """An xpar call failed.  ``status`` is the C status name
    ("ERR_INVALID_ARGUMENT"), ``code`` its number, ``detail`` the C detail
    message (xpar_last_error_detail).  Nothing was written to any output,
    except for ShadowMismatch (the call completed; outputs hold the primary
    tier's result)."""

    def __init__(self, status: str, detail: str = "", code: int = 0):
        super().__init__(f"{status}: {detail}" if detail else status)
        self.status = status
        self.detail = detail
        self.code = code


# status code -> (class name, extra base); one class per C status.
_ERRORS = {
    100: ("NullContext", None),
    101: ("NullPointer", ValueError),
    102: ("InvalidEnum", ValueError),
    103: ("SizeOverflow", OverflowError),
    104: ("Overlap", ValueError),
    105: ("InvalidArgument", ValueError),
    106: ("NotMapped", ValueError),
    107: ("AlreadyMapped", ValueError),
    108: ("ContextBusy", RuntimeError),
    200: ("InvalidEnv", None),
    201: ("ProfileError", None),
    202: ("IOError", OSError),
    300: ("NoDevice", RuntimeError),
    301: ("DeviceError", RuntimeError),
    302: ("DeviceOutOfMemory", MemoryError),
    303: ("DeviceSticky", RuntimeError),
    400: ("NotSupported", NotImplementedError),
    500: ("OutOfMemory", MemoryError),
    600: ("ShadowMismatch", None),
    900: ("InternalError", RuntimeError),
}
_error_classes = {}
for _code, (_name, _extra) in _ERRORS.items():
    _bases = (Error,) if _extra is None else (Error, _extra)
    _cls = type(_name, _bases, {
        "__doc__": "Status ERR_%s: %s." % (_xpar.STATUSES[_code][0][4:], _xpar.STATUSES[_code][1]),
        "__module__": __name__,
    })
    globals()[_name] = _cls
    __all__.append(_name)
    _error_classes[_code] = _cls
del _code, _name, _extra, _bases, _cls
_xpar._register_errors(_error_classes)
# The ones this module raises itself, named for readers and linters.
InvalidEnum = _error_classes[102]
InvalidArgument = _error_classes[105]
NotSupported = _error_classes[400]


def _invalid(detail: str):
    return InvalidArgument("ERR_INVALID_ARGUMENT", detail, 105)


# ----------------------------------------------------------------- names --

_BACKENDS = {"auto": 0, "cpu": 1, "openmp": 1, "cpu-openmp": 1, "serial": 2,
             "cpu-serial": 2, "cuda": 3, "cuda-serial": 4, "cpu+cuda": 5}
_BACKEND_NAMES = ["auto", "cpu", "serial", "cuda", "cuda-serial", "cpu+cuda"]
_OFFLOADS = {"default": 0, "disabled": 1, "mandatory": 2}
_OFFLOAD_NAMES = ["default", "disabled", "mandatory"]
_TIERS = {None: 0, "off": 0, "none": 0, "cpu-serial": 1, "cpu-openmp": 2, "cuda": 3,
          "cuda-serial": 4, "cpu+cuda": 5}
_SPLIT_MEMORY = {"pinned": 0, "pageable": 1}
_OPS = {"reduce": 0, "scan": 1, "axpy": 2, "add": 3, "fill": 4, "dot": 5, "sort": 6,
        "select": 7, "runs": 8, "argreduce": 9, "segmented": 10, "histogram": 11}
_PREDICATES = {"<": 0, "<=": 1, "==": 2, "!=": 3, ">=": 4, ">": 5, "in_range": 6}
_DTYPES = {"int32": 0, "int64": 1, "uint32": 2, "uint64": 3, "float": 4, "float32": 4,
           "double": 5, "float64": 5}
_KINDS = {"openmp": 0, "gpu": 1, "gpu_device_data": 1, "gpu_pinned": 2,
          "gpu_pinned_data": 2, "gpu_pageable": 3, "gpu_pageable_data": 3,
          "gpu_device_only": 4, "gpu_device_only_data": 4}
_SUM, _MIN, _MAX = 0, 1, 2


def _name_of(table: dict, value, what: str) -> int:
    key = value.lower() if isinstance(value, str) else value
    if key not in table:
        raise InvalidEnum("ERR_INVALID_ENUM",
                          f"{what} {value!r} is not one of "
                          + ", ".join(repr(k) for k in table if k is not None), 102)
    return table[key]


def _dtype_code(dtype) -> int:
    if isinstance(dtype, str):
        name = dtype
    else:
        name = getattr(dtype, "name", None)  # a NumPy dtype
        if not isinstance(name, str):
            try:  # a NumPy scalar type such as numpy.float32
                import numpy
                name = numpy.dtype(dtype).name
            except Exception:
                name = str(dtype)
    name = name.rsplit(".", 1)[-1]  # "torch.float32" -> "float32"
    return _name_of(_DTYPES, name, "dtype")


def _stream_handle(stream) -> int:
    """A CUDA stream as an integer handle: an int, or an object with
    ``.cuda_stream`` (PyTorch) or ``.ptr`` (CuPy)."""
    if isinstance(stream, int):
        return stream
    for attr in ("cuda_stream", "ptr"):
        h = getattr(stream, attr, None)
        if isinstance(h, int):
            return h
    raise _invalid(f"stream: expected an int handle or an object with .cuda_stream "
                   f"or .ptr, got {type(stream).__name__}")


def _current_stream(args) -> int:
    """stream="current": the current stream of the framework of the call's
    first CUDA array (PyTorch: torch.cuda.current_stream(device); CuPy:
    cupy.cuda.get_current_stream()); 0 when there is none."""
    for a in args:
        fw = _framework(a)
        if fw == "torch" and getattr(a, "is_cuda", False):
            import torch
            return torch.cuda.current_stream(a.device).cuda_stream
        if fw == "cupy":
            import cupy
            with a.device:
                return cupy.cuda.get_current_stream().ptr
    return 0


# ---------------------------------------------------------- array kinds --

def _framework(x) -> str:
    return type(x).__module__.split(".", 1)[0]


def _check_writable_kind(a, what: str):
    if _framework(a) in ("jax", "jaxlib"):
        raise NotSupported("ERR_NOT_SUPPORTED",
                           f"{what}: JAX arrays are immutable; pass a NumPy, CuPy or "
                           "PyTorch array to be written", 400)


def _empty_counts(x, num_bins: int):
    """num_bins uint64 counts in x's framework and device."""
    fw = _framework(x)
    if fw == "torch":
        import torch
        return torch.empty(num_bins, dtype=torch.uint64, device=x.device)
    if fw == "cupy":
        import cupy
        with x.device:
            return cupy.empty(num_bins, dtype="uint64")
    import numpy
    return numpy.empty(num_bins, dtype="uint64")


def _empty_like(x, dtype=None):
    """A new 1-D array of x's framework, dtype (or `dtype`, a name such as
    "int64") and device, for a result."""
    fw = _framework(x)
    if fw == "numpy":
        import numpy
        return numpy.empty_like(x, dtype=dtype)
    if fw == "torch":
        import torch
        if dtype is not None:
            return torch.empty(x.shape, dtype=getattr(torch, dtype), device=x.device)
        return torch.empty_like(x, memory_format=torch.contiguous_format)
    if fw == "cupy":
        import cupy
        with x.device:  # on x's device, not the current one
            return cupy.empty_like(x, dtype=dtype)
    if fw in ("jax", "jaxlib"):
        raise NotSupported("ERR_NOT_SUPPORTED",
                           "JAX arrays are immutable: pass out= (a NumPy, CuPy or "
                           "PyTorch array) for a result array", 400)
    ns = getattr(x, "__array_namespace__", None)
    if ns is not None:  # the array API standard
        xp = ns()
        return xp.empty(x.shape, dtype=getattr(xp, dtype) if dtype else x.dtype, device=x.device)
    import numpy  # anything else with the buffer protocol: a NumPy result
    return numpy.empty(memoryview(x).shape, dtype=dtype or numpy.asarray(x).dtype)


def _empty_of(x, length: int, dtype=None):
    """A new 1-D array of `length` elements of x's framework, dtype (or
    `dtype`) and device: a per-segment result."""
    fw = _framework(x)
    if fw == "torch":
        import torch
        return torch.empty(length, dtype=getattr(torch, dtype) if dtype else x.dtype,
                           device=x.device)
    if fw == "cupy":
        import cupy
        with x.device:
            return cupy.empty(length, dtype=dtype or x.dtype)
    if fw == "numpy":
        import numpy
        return numpy.empty(length, dtype=dtype or x.dtype)
    ns = getattr(x, "__array_namespace__", None)
    if ns is not None:
        xp = ns()
        return xp.empty(length, dtype=getattr(xp, dtype) if dtype else x.dtype, device=x.device)
    return _empty_like(x[:0], dtype) if length == 0 else _empty_like(x, dtype)[:length]


# ------------------------------------------------------------ records --

@dataclass(frozen=True)
class Decision:
    """The decision record of a context's last call (xpar_last_decision):
    the tier that ran it and why, with the transfers it made."""
    op: str                 #: "reduce", "scan", "axpy", "add", "fill", "dot", "sort" or "kernel"
    dtype: str              #: "int32", "int64", "uint32", "uint64", "float", "double"
    n: int                  #: the element count
    tier: str               #: "none", "cpu-serial", "cpu-openmp", "cuda", "cuda-serial", "cpu+cuda"
    bytes_to_device: int    #: bytes the call copied to the device
    bytes_to_host: int      #: bytes the call copied to the host
    reason: str             #: why, quoting each threshold and where it came from
    reproducible: bool      #: reproducible mode was on for the call
    shadow_tier: Optional[str]  #: shadow mode's tier, None when off
    shadow_mismatch: bool   #: the shadow tier's result differed
    kernel: Optional[str]   #: an application kernel's name (op "kernel"); else None
    split_gpu_share: float = 0.0  #: tier "cpu+cuda": the GPU's share of the elements

    @property
    def bytes_moved(self) -> int:
        """bytes_to_device + bytes_to_host."""
        return self.bytes_to_device + self.bytes_to_host


@dataclass(frozen=True)
class DeviceInfo:
    """What xpar_device_query finds: whether a GPU is usable and, if not, why."""
    usable: bool
    built_with_cuda: bool
    device_count: int
    device: int
    name: str
    compute_capability: tuple
    multiprocessors: int
    total_memory: int
    reason: str


def device_query() -> DeviceInfo:
    """Whether a GPU is usable and, if not, why (xpar_device_query).  Never
    fails for a missing GPU or driver: ``usable`` is then False and
    ``reason`` says why ("built without CUDA", "no CUDA driver ...")."""
    return DeviceInfo(**_xpar.device_query())


def profile_default_path() -> str:
    """The default calibration profile path for this user
    ($XDG_CACHE_HOME/xpar/profile.txt or ~/.cache/xpar/profile.txt)."""
    return _xpar.profile_default_path()


# ------------------------------------------------------------- context --

class Context(_xpar.Context):
    """An xpar context (xpar_context): a policy (backend, offload,
    thresholds, modes), a CUDA stream, scratch, staging and mappings.

    Created from the XPAR_* environment (read once, here), then each
    argument that is not None overrides it:

    backend       "auto" (choose per call), "cpu" (serial below its
                  threshold, else OpenMP), "serial" (alias "cpu-serial": one
                  thread, strict element order), "cuda", "cuda-serial"
    offload       "default", "disabled" (never touch the GPU), "mandatory"
                  (every call on the GPU or NoDevice)
    reproducible  float sums, dots and sum scans in one order: the same bits
                  on every tier (docs/reproducible.md)
    shadow        a tier name to run every call on as well and compare, or
                  "off"; a mismatch is recorded in last_decision (raised as
                  ShadowMismatch with shadow_fail=True)
    threads       OpenMP threads for the OpenMP tier (0: the runtime's default)
    device        the CUDA device ordinal

    One thread uses a context at a time (ContextBusy otherwise, where
    detected): make one per thread.  Usable as a context manager; close()
    releases it (also done when it is collected).
    """

    def __init__(self, backend: Optional[str] = None, offload: Optional[str] = None,
                 reproducible: Optional[bool] = None, shadow: Optional[str] = None,
                 threads: Optional[int] = None, device: Optional[int] = None,
                 shadow_fail: bool = False):
        super().__init__()
        if device is not None:
            self._set_device(int(device))
        if backend is not None:
            self.backend = backend
        if offload is not None:
            self.offload = offload
        if reproducible is not None:
            self.reproducible = reproducible
        if shadow is not None:
            self.set_shadow(shadow, fail=shadow_fail)
        if threads is not None:
            self.threads = threads

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __repr__(self):
        if self.closed:
            return "<xpar.Context closed>"
        return f"<xpar.Context backend={self.backend!r} offload={self.offload!r}>"

    # -- policy ----------------------------------------------------------
    @property
    def backend(self) -> str:
        """The backend policy: "auto", "cpu", "serial", "cuda", "cuda-serial", "cpu+cuda"."""
        return self._get_backend()

    @backend.setter
    def backend(self, value: str):
        self._set_backend(_name_of(_BACKENDS, value, "backend"))

    @property
    def offload(self) -> str:
        """The offload policy: "default", "disabled", "mandatory"."""
        return _OFFLOAD_NAMES[self._get_offload()]

    @offload.setter
    def offload(self, value: str):
        self._set_offload(_name_of(_OFFLOADS, value, "offload"))

    @property
    def reproducible(self) -> bool:
        """Reproducible mode (xpar_context_set_reproducible)."""
        return self._get_reproducible()

    @reproducible.setter
    def reproducible(self, on: bool):
        self._set_reproducible(bool(on))

    @property
    def shadow(self) -> Optional[str]:
        """The shadow tier, or None when shadow mode is off."""
        return self._get_shadow()[0]

    def set_shadow(self, tier: Optional[str], fail: bool = False) -> None:
        """Shadow mode: run every built-in op on `tier` too and compare
        (None turns it off); with `fail`, a mismatch raises ShadowMismatch
        (the outputs then hold the primary tier's result)."""
        self._set_shadow(_name_of(_TIERS, tier, "shadow tier"), bool(fail))

    @property
    def threads(self) -> Optional[int]:
        """OpenMP threads for this context's OpenMP tier, as last set here
        (0: the runtime's default, OMP_NUM_THREADS or the core count); None
        when never set through this object (the C API has no getter)."""
        return getattr(self, "_threads_set", None)

    @threads.setter
    def threads(self, n: int):
        self._set_num_threads(int(n))
        self._threads_set = int(n)

    def set_verbose(self, on: bool = True) -> None:
        """Log every decision of this context to stderr (XPAR_VERBOSE=1)."""
        self._set_verbose(bool(on))

    def set_device(self, device: int) -> None:
        """Choose the CUDA device (only while the context has no mappings)."""
        self._set_device(int(device))

    def set_stream(self, stream) -> None:
        """Run this context's GPU work on a CUDA stream from now on: an int
        handle (cudaStream_t), an object with ``.cuda_stream`` (PyTorch) or
        ``.ptr`` (CuPy); None returns to the context's own stream, which is
        ordered with the legacy default stream (stream 0)."""
        self._set_stream(0 if stream is None else _stream_handle(stream))

    def set_threshold(self, op: str, dtype, kind: str, value) -> None:
        """Set one crossover threshold (elements) for op ("reduce", "scan",
        "axpy", "add", "fill", "dot", "sort"), dtype (a name or a NumPy/PyTorch
        dtype) and kind ("openmp", "gpu", "gpu_pinned", "gpu_pageable",
        "gpu_device_only"); value None or "never" (or xpar.NEVER) disables
        the switch.  Overrides defaults, profile and environment."""
        if value is None or (isinstance(value, str) and value.lower() == "never"):
            value = NEVER
        if int(value) < 0:
            raise _invalid(f"threshold {value} is negative")
        self._set_threshold(_name_of(_OPS, op, "op"), _dtype_code(dtype),
                            _name_of(_KINDS, kind, "threshold kind"), int(value))

    def set_split(self, op: str, dtype, memory: str, from_n, gpu_share: float) -> None:
        """The split tier's settings (xpar_context_set_split) for op ("reduce",
        "scan", "axpy", "add", "fill", "dot", "histogram", "segmented"), dtype and memory ("pinned",
        "pageable"): AUTO splits a call on that host memory from n >= from_n
        (None or "never": never), the GPU taking gpu_share (0 < share < 1) of
        the elements."""
        if from_n is None or (isinstance(from_n, str) and from_n.lower() == "never"):
            from_n = NEVER
        if int(from_n) < 0:
            raise _invalid(f"from_n {from_n} is negative")
        self._set_split(_name_of(_OPS, op, "op"), _dtype_code(dtype),
                        _name_of(_SPLIT_MEMORY, memory, "split memory"), int(from_n),
                        float(gpu_share))

    def get_split(self, op: str, dtype, memory: str):
        """The split tier's settings: (from_n, gpu_share)."""
        return self._get_split(_name_of(_OPS, op, "op"), _dtype_code(dtype),
                               _name_of(_SPLIT_MEMORY, memory, "split memory"))

    def get_threshold(self, op: str, dtype, kind: str) -> int:
        """One crossover threshold, whatever set it (xpar.NEVER: never)."""
        return self._get_threshold(_name_of(_OPS, op, "op"), _dtype_code(dtype),
                                   _name_of(_KINDS, kind, "threshold kind"))

    def profile_save(self, path: str) -> None:
        """Write this machine's profile at `path` with the thresholds set
        through the API or loaded from a profile (xpar_profile_save)."""
        self._profile_save(str(path))

    def profile_load(self, path: str) -> bool:
        """Apply the profile at `path`; False when it belongs to another machine."""
        return self._profile_load(str(path))

    @property
    def last_decision(self) -> Decision:
        """The decision record of this context's last call: tier, reason,
        op, dtype, n, bytes moved."""
        return Decision(**self._last_decision())

    # -- the call wrapper: a stream for one call -------------------------
    def _call(self, stream, fn, *args):
        if stream is None:
            return fn(*args)
        handle = (_current_stream(args) if isinstance(stream, str) and stream == "current"
                  else _stream_handle(stream))
        if not handle:  # the legacy default stream, or no device array
            return fn(*args)
        self._set_stream(handle)
        try:
            return fn(*args)
        finally:
            self._set_stream(0)

    # -- reductions ------------------------------------------------------
    def sum(self, x, *, wide: bool = False, stream=None):
        """Sum of x (xpar_reduce SUM), a Python scalar.  Integers wrap modulo
        2^bits; floats add in their own type, in an order that depends on
        the tier (reproducible mode: one order everywhere).  With wide=True,
        xpar_reduce_sum_wide: int32 -> int64, uint32 -> uint64, float32 ->
        float64 accumulator.  The sum of nothing is 0."""
        if stream is None:
            return self._reduce(_SUM, x, wide)
        return self._call(stream, self._reduce, _SUM, x, wide)

    def sum_wide(self, x, *, stream=None):
        """sum(x, wide=True)."""
        return self._call(stream, self._reduce, _SUM, x, True)

    def min(self, x, *, stream=None):
        """Minimum of x; of nothing, the type's largest value (+inf for
        floats).  A NaN input gives an unspecified choice."""
        if stream is None:
            return self._reduce(_MIN, x, False)
        return self._call(stream, self._reduce, _MIN, x, False)

    def max(self, x, *, stream=None):
        """Maximum of x; of nothing, the type's smallest value (-inf for floats)."""
        if stream is None:
            return self._reduce(_MAX, x, False)
        return self._call(stream, self._reduce, _MAX, x, False)

    def dot(self, x, y, *, stream=None):
        """Sum of x[i] * y[i] (xpar_dot), a Python scalar; x and y have the
        same dtype and length."""
        if stream is None:
            return self._dot(x, y)
        return self._call(stream, self._dot, x, y)

    # -- scans -----------------------------------------------------------
    def scan(self, x, op: str = "sum", *, out=None, exclusive: bool = False, initial=None,
             stream=None):
        """Scan x with op ("sum", "min", "max") into `out` (a new array of
        x's framework, dtype and device when None; out may be x: in place;
        other overlap raises Overlap).  Inclusive: out[i] = x[0] op ... op
        x[i]; exclusive: out[0] = identity (or `initial`), out[i] = x[0] op
        ... op x[i-1].  `initial` is a carry-in (xpar_scan_init)."""
        code = _name_of({"sum": _SUM, "min": _MIN, "max": _MAX}, op, "scan op")
        if out is None:
            out = _empty_like(x)
        else:
            _check_writable_kind(out, "out")
        self._call(stream, self._scan, code, exclusive, x, out, initial)
        return out

    def cumsum(self, x, *, out=None, exclusive=False, initial=None, stream=None):
        """Prefix sums of x (scan with "sum"); see scan()."""
        return self.scan(x, "sum", out=out, exclusive=exclusive, initial=initial, stream=stream)

    def cummin(self, x, *, out=None, exclusive=False, initial=None, stream=None):
        """Running minimum of x (scan with "min"); see scan()."""
        return self.scan(x, "min", out=out, exclusive=exclusive, initial=initial, stream=stream)

    def cummax(self, x, *, out=None, exclusive=False, initial=None, stream=None):
        """Running maximum of x (scan with "max"); see scan()."""
        return self.scan(x, "max", out=out, exclusive=exclusive, initial=initial, stream=stream)

    # -- elementwise -----------------------------------------------------
    def axpy(self, alpha, x, y, *, stream=None):
        """y[i] = alpha * x[i] + y[i], in place on y (returned).  alpha is a
        number that the dtype holds exactly (integers) or a real number
        (floats).  x may be y; other overlap raises Overlap."""
        _check_writable_kind(y, "y")
        self._call(stream, self._axpy, alpha, x, y)
        return y

    def add(self, x, y, out=None, *, stream=None):
        """out[i] = x[i] + y[i]; out is a new array of x's framework when
        None; it may be x or y."""
        if out is None:
            out = _empty_like(x)
        else:
            _check_writable_kind(out, "out")
        self._call(stream, self._add, x, y, out)
        return out

    def fill(self, out, value, *, stream=None):
        """out[i] = value, in place (out returned)."""
        _check_writable_kind(out, "out")
        self._call(stream, self._fill, out, value)
        return out

    # -- sort ----------------------------------------------------------------
    def sort(self, x, *, out=None, descending: bool = False, stream=None):
        """Sort x stably into `out` (a new array of x's framework, dtype and
        device when None; out may be x: in place).  Floats: -0.0 and +0.0
        are equal (input order kept), NaNs (any sign or payload) last
        ascending and first descending, as numpy.sort(kind="stable") for
        ascending; the keys' bits are moved, never rewritten."""
        if out is None:
            out = _empty_like(x)
        else:
            _check_writable_kind(out, "out")
        self._call(stream, self._sort, bool(descending), x, out)
        return out

    def sort_pairs(self, keys, values, *, keys_out=None, values_out=None,
                   descending: bool = False, stream=None):
        """Sort keys stably and carry values with them; returns (keys_out,
        values_out), new arrays of the inputs' frameworks when None (each
        may be its input: in place).  Keys and values may differ in dtype;
        the order is sort()'s."""
        keys_out = _empty_like(keys) if keys_out is None else keys_out
        values_out = _empty_like(values) if values_out is None else values_out
        _check_writable_kind(keys_out, "keys_out")
        _check_writable_kind(values_out, "values_out")
        self._call(stream, self._sort_pairs, bool(descending), keys, values, keys_out,
                   values_out)
        return keys_out, values_out

    def argsort(self, x, *, out=None, descending: bool = False, dtype: str = "int64",
                stream=None):
        """The stable sorting permutation of x: out[i] is the position in x
        of the i-th key in sort()'s order, as numpy.argsort(kind="stable")
        for ascending.  Indices are int64 (or dtype="int32", for at most
        2^31 - 1 keys), in a new array of x's framework when out is None."""
        if out is None:
            if dtype not in ("int32", "int64"):
                raise _invalid(f"argsort's indices are int32 or int64, not {dtype!r}")
            out = _empty_like(x, dtype)
        else:
            _check_writable_kind(out, "out")
        self._call(stream, self._argsort, bool(descending), x, out)
        return out

    # -- compaction ------------------------------------------------------
    def _compaction(self, stream, kind, x, out, pred="==", value=None, hi=None, flags=None):
        if out is None:
            out = _empty_like(x)
        else:
            _check_writable_kind(out, "out")
        code = _name_of(_PREDICATES, pred, "predicate")
        count = self._call(stream, self._compact, kind, code, value, hi, x, flags, out)
        return out, int(count)

    def select(self, x, pred: str, value, hi=None, *, out=None, stream=None):
        """The elements of x for which `x pred value` holds ("<", "<=", "==",
        "!=", ">=", ">"; "in_range": value <= x < hi), in order: a view of the
        first count elements of `out` (a new array of x's framework when None;
        out may be x: in place), as x[x > value] in NumPy.  A NaN satisfies
        only "!="."""
        out, count = self._compaction(stream, 0, x, out, pred, value, hi)
        return out[:count]

    def select_flagged(self, x, flags, *, out=None, stream=None):
        """The elements of x where flags (uint8 or bool, same length) is not
        0, in order, as x[flags] in NumPy; see select()."""
        if "bool" in str(getattr(flags, "dtype", "")):  # one byte each: read as uint8
            if _framework(flags) == "torch":
                import torch
                flags = flags.view(torch.uint8)
            else:
                flags = flags.view("uint8")
        out, count = self._compaction(stream, 1, x, out, flags=flags)
        return out[:count]

    def partition(self, x, pred: str, value, hi=None, *, out=None, stream=None):
        """Stable partition: (out, count), out holding the elements of x that
        satisfy the predicate (see select()) first, then the others, each in
        input order.  out must not overlap x."""
        return self._compaction(stream, 2, x, out, pred, value, hi)

    def unique_consecutive(self, x, *, out=None, stream=None):
        """x without consecutive duplicates, as torch.unique_consecutive:
        a view of out's first count elements.  Floats: -0.0 equals +0.0 and
        NaN equals NaN, so unique_consecutive(sort(x)) is numpy.unique(x)."""
        out, count = self._compaction(stream, 3, x, out)
        return out[:count]

    # -- runs --------------------------------------------------------------
    def run_length_encode(self, x, *, values_out=None, lengths_out=None, stream=None):
        """The runs of equal consecutive elements of x: (values, lengths),
        each run's first element and its length, views of the first count
        elements of `values_out` (x's dtype) and `lengths_out` (int64 or
        uint64; new arrays of x's framework when None, int64 as NumPy's and
        PyTorch's counts), each of x's length.  Floats: -0.0 equals +0.0 and
        NaN equals NaN (a run of zeros of both signs, or of NaNs, is one run;
        its first element keeps its bits), as unique_consecutive().  No
        output may overlap x or the other."""
        values_out = _empty_like(x) if values_out is None else values_out
        lengths_out = _empty_like(x, "int64") if lengths_out is None else lengths_out
        _check_writable_kind(values_out, "values_out")
        _check_writable_kind(lengths_out, "lengths_out")
        count = int(self._call(stream, self._runs, True, _SUM, x, None, values_out,
                               lengths_out))
        return values_out[:count], lengths_out[:count]

    def reduce_by_key(self, keys, values, op: str = "sum", *, keys_out=None, values_out=None,
                      stream=None):
        """Reduce values over each run of equal consecutive keys: (keys,
        reduced), each run's first key and the "sum", "min" or "max" of its
        values, views of the first count elements of `keys_out` and
        `values_out` (new arrays of the inputs' frameworks when None, of
        their lengths).  Keys and values may differ in dtype; key equality is
        run_length_encode()'s.  Integer sums wrap; float sums add in the
        tier's order (reproducible mode: the bits of a reproducible sum() of
        the run's values, on every tier); a NaN value's min or max is an
        unspecified choice.  No two arrays may overlap."""
        code = _name_of({"sum": _SUM, "min": _MIN, "max": _MAX}, op, "reduce_by_key op")
        keys_out = _empty_like(keys) if keys_out is None else keys_out
        values_out = _empty_like(values) if values_out is None else values_out
        _check_writable_kind(keys_out, "keys_out")
        _check_writable_kind(values_out, "values_out")
        count = int(self._call(stream, self._runs, False, code, keys, values, keys_out,
                               values_out))
        return keys_out[:count], values_out[:count]

    # -- argmin / argmax and segments ---------------------------------------
    def argmin(self, x, *, return_value: bool = False, stream=None):
        """The index of the first smallest element of x, as numpy.argmin (a
        NaN counts as the smallest: the first NaN's index); with
        return_value, (index, value).  An empty x raises InvalidArgument."""
        i, v = self._call(stream, self._argreduce, False, x)
        return (int(i), v) if return_value else int(i)

    def argmax(self, x, *, return_value: bool = False, stream=None):
        """The index of the first largest element of x, as numpy.argmax (the
        first NaN wins); see argmin()."""
        i, v = self._call(stream, self._argreduce, True, x)
        return (int(i), v) if return_value else int(i)

    def _segments(self, x, offsets, segment_size):
        if offsets is None:
            if segment_size is None:
                raise _invalid("give offsets, or segment_size for segments of one size")
            size = int(segment_size)
            n = len(x)
            if size == 0 or n % size:
                raise _invalid(f"segment_size {size} does not divide len(x) = {n}")
            return None, size, n // size
        if segment_size is not None:
            raise _invalid("give offsets or segment_size, not both")
        return offsets, 0, len(offsets) - 1

    def segment_reduce(self, x, offsets=None, op: str = "sum", *, segment_size=None, out=None,
                       stream=None):
        """op ("sum", "min", "max") over each segment [offsets[s], offsets[s+1])
        of x (offsets int32 or int64, n_segments + 1, non-decreasing; or
        segments of segment_size): an array of n_segments values (out, or a
        new one of x's framework).  An empty segment gets the identity (0,
        the dtype's largest / lowest value, +-inf), unlike
        numpy.add.reduceat, which gives x[offsets[s]] there."""
        offs, size, m = self._segments(x, offsets, segment_size)
        if out is None:
            out = _empty_of(x, m)
        else:
            _check_writable_kind(out, "out")
        self._call(stream, self._segmented, 0, _name_of({"sum": _SUM, "min": _MIN, "max": _MAX}, op, "reduction"), False, x,
                   offs, size, m, out, None)
        return out

    def segment_scan(self, x, offsets=None, op: str = "sum", *, exclusive: bool = False,
                     segment_size=None, out=None, stream=None):
        """The scan of each segment of x from the identity (see
        segment_reduce()), into the same positions of out (x's length; a new
        array when None, whose elements outside the segments are then
        undefined; out may be x: in place)."""
        offs, size, m = self._segments(x, offsets, segment_size)
        if out is None:
            out = _empty_like(x)
        else:
            _check_writable_kind(out, "out")
        self._call(stream, self._segmented, 1, _name_of({"sum": _SUM, "min": _MIN, "max": _MAX}, op, "reduction"),
                   bool(exclusive), x, offs, size, m, out, None)
        return out

    def _segment_arg(self, stream, is_max, x, offsets):
        m = len(offsets) - 1
        values = _empty_of(x, m)
        indices = _empty_of(x, m, "int64")
        self._call(stream, self._segmented, 2, 2 if is_max else 1, False, x, offsets, 0, m,
                   values, indices)
        return indices, values

    def segment_argmin(self, x, offsets, *, stream=None):
        """(indices, values) per segment: the first position (into x) of each
        segment's smallest element (the first NaN wins) and the element; an
        empty segment has index -1 and the identity of min."""
        return self._segment_arg(stream, False, x, offsets)

    def segment_argmax(self, x, offsets, *, stream=None):
        """As segment_argmin(), for the largest element."""
        return self._segment_arg(stream, True, x, offsets)

    # -- histogram --------------------------------------------------------
    def histogram(self, x, bins, range=None, *, out=None, stream=None):  # noqa: A002
        """Counts (uint64) of the elements of x in bins, as numpy.histogram's
        first result.  bins an int: that many equal-width bins over
        range = (lo, hi), required (lo < hi, finite); bins an array: its
        num_bins + 1 non-decreasing boundaries (host memory, converted to x's
        dtype), bin i being [bins[i], bins[i + 1]).  Unlike NumPy the last
        bin is open too: an element equal to hi (or bins[-1]) is not counted;
        elements outside the bins and NaN are not either.  A float within
        rounding of an equal-width edge may fall in NumPy's neighbouring bin
        (xpar.h states the arithmetic).  out: num_bins uint64 counts (a new
        array of x's framework when None), all written."""
        import numpy
        if isinstance(bins, (int, numpy.integer)) and not isinstance(bins, bool):
            if range is None:
                raise _invalid("histogram with a bin count needs range=(lo, hi)")
            lo, hi = range
            num_bins, bounds = int(bins), None
            if num_bins < 1:
                raise _invalid(f"histogram: {num_bins} bins; at least 1")
        else:
            if _framework(bins) == "torch":
                bins = bins.detach().cpu().numpy()
            elif _framework(bins) == "cupy":
                bins = bins.get()
            xdt = str(x.dtype).replace("torch.", "")
            bounds = numpy.ascontiguousarray(numpy.asarray(bins), dtype=xdt)
            if bounds.ndim != 1 or bounds.shape[0] < 2:
                raise _invalid("histogram: bins must hold at least 2 boundaries")
            lo = hi = None
            num_bins = bounds.shape[0] - 1
        if out is None:
            out = _empty_counts(x, num_bins)
        else:
            _check_writable_kind(out, "out")
        self._call(stream, self._histogram, x, lo, hi, bounds, out)
        return out

    # -- where data lives ------------------------------------------------
    def map(self, x, kind: str = "to") -> None:
        """Map host array x to the context's device (xpar_map): "to" copies
        the data in, "alloc" only allocates.  Needs a usable GPU (NoDevice
        otherwise).  Keep x alive and unmoved until unmap()."""
        _check_writable_kind(x, "x")
        self._map(x, _name_of({"to": 0, "alloc": 1}, kind, "map kind"))

    def update(self, x, direction: str = "to_device") -> None:
        """Copy a whole mapping one way: "to_device" (after writing x on the
        host) or "from_device" (xpar_update)."""
        self._update(x, _name_of({"to_device": 0, "to": 0, "from_device": 1, "from": 1},
                                 direction, "update direction"))

    def unmap(self, x, kind: str = "from") -> None:
        """Unmap x: "from" copies the device copy back first, "release" does not."""
        self._unmap(x, _name_of({"from": 0, "release": 1}, kind, "unmap kind"))


# ---------------------------------------------- the per-thread default --

_local = threading.local()


def default_context() -> Context:
    """The calling thread's default context, made on first use from the
    XPAR_* environment; the module-level functions run on it."""
    try:
        return _local.ctx
    except AttributeError:
        ctx = _local.ctx = Context()
        return ctx


def _doc(name):
    return getattr(Context, name).__doc__ + "\n\nRuns on the calling thread's default context."


def sum(x, *, wide=False, stream=None):  # noqa: A001
    return default_context().sum(x, wide=wide, stream=stream)


def sum_wide(x, *, stream=None):
    return default_context().sum(x, wide=True, stream=stream)


def min(x, *, stream=None):  # noqa: A001
    return default_context().min(x, stream=stream)


def max(x, *, stream=None):  # noqa: A001
    return default_context().max(x, stream=stream)


def dot(x, y, *, stream=None):
    return default_context().dot(x, y, stream=stream)


def scan(x, op="sum", *, out=None, exclusive=False, initial=None, stream=None):
    return default_context().scan(x, op, out=out, exclusive=exclusive, initial=initial,
                                  stream=stream)


def cumsum(x, *, out=None, exclusive=False, initial=None, stream=None):
    return default_context().scan(x, "sum", out=out, exclusive=exclusive, initial=initial,
                                  stream=stream)


def cummin(x, *, out=None, exclusive=False, initial=None, stream=None):
    return default_context().scan(x, "min", out=out, exclusive=exclusive, initial=initial,
                                  stream=stream)


def cummax(x, *, out=None, exclusive=False, initial=None, stream=None):
    return default_context().scan(x, "max", out=out, exclusive=exclusive, initial=initial,
                                  stream=stream)


def axpy(alpha, x, y, *, stream=None):
    return default_context().axpy(alpha, x, y, stream=stream)


def add(x, y, out=None, *, stream=None):
    return default_context().add(x, y, out, stream=stream)


def fill(out, value, *, stream=None):
    return default_context().fill(out, value, stream=stream)


def sort(x, *, out=None, descending=False, stream=None):
    return default_context().sort(x, out=out, descending=descending, stream=stream)


def sort_pairs(keys, values, *, keys_out=None, values_out=None, descending=False, stream=None):
    return default_context().sort_pairs(keys, values, keys_out=keys_out, values_out=values_out,
                                        descending=descending, stream=stream)


def argsort(x, *, out=None, descending=False, dtype="int64", stream=None):
    return default_context().argsort(x, out=out, descending=descending, dtype=dtype,
                                     stream=stream)


def select(x, pred, value, hi=None, *, out=None, stream=None):
    return default_context().select(x, pred, value, hi, out=out, stream=stream)


def select_flagged(x, flags, *, out=None, stream=None):
    return default_context().select_flagged(x, flags, out=out, stream=stream)


def partition(x, pred, value, hi=None, *, out=None, stream=None):
    return default_context().partition(x, pred, value, hi, out=out, stream=stream)


def unique_consecutive(x, *, out=None, stream=None):
    return default_context().unique_consecutive(x, out=out, stream=stream)


def run_length_encode(x, *, values_out=None, lengths_out=None, stream=None):
    return default_context().run_length_encode(x, values_out=values_out,
                                               lengths_out=lengths_out, stream=stream)


def reduce_by_key(keys, values, op="sum", *, keys_out=None, values_out=None, stream=None):
    return default_context().reduce_by_key(keys, values, op, keys_out=keys_out,
                                           values_out=values_out, stream=stream)


def argmin(x, *, return_value=False, stream=None):
    return default_context().argmin(x, return_value=return_value, stream=stream)


def argmax(x, *, return_value=False, stream=None):
    return default_context().argmax(x, return_value=return_value, stream=stream)


def segment_reduce(x, offsets=None, op="sum", *, segment_size=None, out=None, stream=None):
    return default_context().segment_reduce(x, offsets, op, segment_size=segment_size, out=out,
                                            stream=stream)


def segment_scan(x, offsets=None, op="sum", *, exclusive=False, segment_size=None, out=None,
                 stream=None):
    return default_context().segment_scan(x, offsets, op, exclusive=exclusive,
                                          segment_size=segment_size, out=out, stream=stream)


def segment_argmin(x, offsets, *, stream=None):
    return default_context().segment_argmin(x, offsets, stream=stream)


def segment_argmax(x, offsets, *, stream=None):
    return default_context().segment_argmax(x, offsets, stream=stream)


def histogram(x, bins, range=None, *, out=None, stream=None):  # noqa: A002
    return default_context().histogram(x, bins, range, out=out, stream=stream)


for _f in (sum, sum_wide, min, max, dot, scan, cumsum, cummin, cummax, axpy, add, fill, sort,
           sort_pairs, argsort, select, select_flagged, partition, unique_consecutive,
           run_length_encode, reduce_by_key, argmin, argmax, segment_reduce, segment_scan,
           segment_argmin, segment_argmax, histogram):
    _f.__doc__ = _doc(_f.__name__)
del _f


def last_decision() -> Decision:
    """The decision record of the calling thread's default context's last call."""
    return default_context().last_decision


__all__.append("last_decision")
