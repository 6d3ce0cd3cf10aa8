// xpar._xpar: the nanobind layer between Python and the public C API
// (include/xpar/xpar.h).  Arrays come in through nb::ndarray (DLPack or the
// buffer protocol) without a copy; every C call that can take time runs with
// the GIL released.  Errors are raised as the xpar.Error subclass that
// xpar/__init__.py registers for the status (_register_errors).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <xpar/xpar.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

namespace nb = nanobind;

namespace {

// An array argument: nb::ndarray (DLPack or the buffer protocol), torch tensors
// taken through torch's C export (type_caster below).
template <class... Args> struct array_arg : nb::ndarray<Args...> {
  using base = nb::ndarray<Args...>;
  using base::base;
  array_arg() = default;
  array_arg(const base &b) : base(b) {}
};
using in_array = array_arg<nb::ro>;
using out_array = array_arg<>;

// torch.Tensor.__dlpack__ is Python code (argument checks around the C export):
// about 1.9 us of a 2.7 us sum of 1,024 CPU floats on the H100 host, against 0.6
// with a NumPy array.  An exact torch.Tensor is exported by torch._C._to_dlpack,
// which __dlpack__ calls in the end (without a consumer stream neither
// synchronises one: xpar orders device work itself), and nanobind imports the
// capsule.  Returns an invalid object for anything else, or when the export
// refuses (a tensor that requires grad, a conjugate view): the caller then takes
// the object the usual way, whose error is the one the user sees.
nb::object torch_capsule(nb::handle src) noexcept {
  static PyTypeObject *tensor_type = nullptr;
  static PyObject *to_dlpack = nullptr;
  static bool looked = false;
  PyTypeObject *tp = Py_TYPE(src.ptr());
  if (!looked) {
    if (std::strcmp(tp->tp_name, "Tensor") != 0) return {}; /* look once a tensor comes */
    looked = true;
    PyObject *torch = PyDict_GetItemString(PyImport_GetModuleDict(), "torch"); /* borrowed */
    PyObject *type = torch ? PyObject_GetAttrString(torch, "Tensor") : nullptr;
    PyObject *c = torch ? PyObject_GetAttrString(torch, "_C") : nullptr;
    PyObject *fn = c ? PyObject_GetAttrString(c, "_to_dlpack") : nullptr;
    Py_XDECREF(c);
    PyErr_Clear();
    if (type && PyType_Check(type) && fn && PyCallable_Check(fn)) {
      tensor_type = (PyTypeObject *)type; /* kept for the life of the process */
      to_dlpack = fn;
    } else {
      Py_XDECREF(type);
      Py_XDECREF(fn);
    }
  }
  if (!to_dlpack || tp != tensor_type) return {};
  PyObject *cap = PyObject_CallOneArg(to_dlpack, src.ptr());
  if (!cap) {
    PyErr_Clear();
    return {};
  }
  return nb::steal(cap);
}

}  // namespace

namespace nanobind::detail {
// array_arg: a torch tensor's capsule first (torch_capsule), else the object itself,
// through nb::ndarray's own caster.
template <class... Args> struct type_caster<array_arg<Args...>> {
  using Inner = make_caster<ndarray<Args...>>;
  NB_TYPE_CASTER(array_arg<Args...>, Inner::Name)
  bool from_python(handle src, uint8_t flags, cleanup_list *cleanup) noexcept {
    Inner inner;
    object cap = torch_capsule(src);
    if (!(cap.is_valid() && inner.from_python(cap, flags, cleanup)) &&
        !inner.from_python(src, flags, cleanup))
      return false;
    value = array_arg<Args...>(inner.value);
    return true;
  }
  static handle from_cpp(const array_arg<Args...> &v, rv_policy policy,
                         cleanup_list *cleanup) noexcept {
    return Inner::from_cpp(v, policy, cleanup);
  }
};
}  // namespace nanobind::detail

namespace {

// status code -> exception class (set from Python).  A plain reference, kept
// for the life of the process: no destructor to run after the interpreter ends.
PyObject *error_classes = nullptr;

[[noreturn]] void raise_status(int code, const std::string &detail) {
  nb::handle cls = PyExc_RuntimeError;
  nb::int_ key(code);
  if (error_classes) {
    PyObject *c = PyDict_GetItem(error_classes, key.ptr());  // borrowed
    if (c) cls = c;
  }
  nb::object exc = cls(nb::str(xpar_status_name((xpar_status)code)), nb::str(detail.c_str()),
                       nb::int_(code));
  PyErr_SetObject(cls.ptr(), exc.ptr());
  throw nb::python_error();
}

inline void check(xpar_status st) {
  if (st != XPAR_OK) raise_status((int)st, xpar_last_error_detail());
}

// A C call that can take time: run without the GIL, then raise on failure
// (with the GIL back, as raising needs it).
template <class Call> void check_released(Call &&call) {
  xpar_status st;
  {
    nb::gil_scoped_release g;
    st = call();
  }
  check(st);
}

[[noreturn]] void invalid(const std::string &detail) {
  raise_status((int)XPAR_ERR_INVALID_ARGUMENT, detail);
}

std::string dl_dtype_name(nb::dlpack::dtype d) {
  const char *kind = "?";
  switch ((nb::dlpack::dtype_code)d.code) {
    case nb::dlpack::dtype_code::Int: kind = "int"; break;
    case nb::dlpack::dtype_code::UInt: kind = "uint"; break;
    case nb::dlpack::dtype_code::Float: kind = "float"; break;
    case nb::dlpack::dtype_code::Bfloat: kind = "bfloat"; break;
    case nb::dlpack::dtype_code::Complex: kind = "complex"; break;
    case nb::dlpack::dtype_code::Bool: kind = "bool"; break;
    default: break;
  }
  return std::string(kind) + std::to_string((int)d.bits);
}

// The xpar dtype of a DLPack dtype, or an InvalidArgument naming `what`.
xpar_dtype to_xpar_dtype(nb::dlpack::dtype d, const char *what) {
  if (d.lanes == 1) {
    switch ((nb::dlpack::dtype_code)d.code) {
      case nb::dlpack::dtype_code::Int:
        if (d.bits == 32) return XPAR_INT32;
        if (d.bits == 64) return XPAR_INT64;
        break;
      case nb::dlpack::dtype_code::UInt:
        if (d.bits == 32) return XPAR_UINT32;
        if (d.bits == 64) return XPAR_UINT64;
        break;
      case nb::dlpack::dtype_code::Float:
        if (d.bits == 32) return XPAR_FLOAT;
        if (d.bits == 64) return XPAR_DOUBLE;
        break;
      default: break;
    }
  }
  invalid(std::string(what) + ": dtype " + dl_dtype_name(d) +
          " is not one of int32, int64, uint32, uint64, float32, float64");
}

// A 1-D contiguous array: its dtype and length.
template <typename A> xpar_dtype vector_of(const A &a, const char *what, size_t *n) {
  if (a.ndim() != 1)
    invalid(std::string(what) + ": expected a 1-D array, got " + std::to_string(a.ndim()) +
            " dimensions");
  xpar_dtype dt = to_xpar_dtype(a.dtype(), what);
  size_t len = a.shape(0);
  if (len > 1 && a.stride(0) != 1)
    invalid(std::string(what) + ": the array is not contiguous (stride " +
            std::to_string((long long)a.stride(0)) + " elements)");
  *n = len;
  return dt;
}

void same_kind(xpar_dtype da, size_t na, const char *wa, xpar_dtype db, size_t nb_,
               const char *wb) {
  if (da != db)
    invalid(std::string(wa) + " is " + xpar_dtype_name(da) + " but " + wb + " is " +
            xpar_dtype_name(db));
  if (na != nb_)
    invalid(std::string(wa) + " has " + std::to_string(na) + " elements but " + wb + " has " +
            std::to_string(nb_));
}

// One scalar of any xpar dtype.
union scalar {
  int32_t i32;
  int64_t i64;
  uint32_t u32;
  uint64_t u64;
  float f32;
  double f64;
};

nb::object scalar_to_python(xpar_dtype dt, const scalar &s) {
  switch (dt) {
    case XPAR_INT32: return nb::int_(s.i32);
    case XPAR_INT64: return nb::int_(s.i64);
    case XPAR_UINT32: return nb::int_(s.u32);
    case XPAR_UINT64: return nb::int_(s.u64);
    case XPAR_FLOAT: return nb::float_((double)s.f32);
    default: return nb::float_(s.f64);
  }
}

// A Python number as a scalar of dt: integers must fit the type exactly;
// floats accept any real number (rounded to float for float32).
scalar scalar_from_python(xpar_dtype dt, nb::handle h, const char *what) {
  scalar s;
  std::memset(&s, 0, sizeof s);
  if (dt == XPAR_FLOAT || dt == XPAR_DOUBLE) {
    double v = PyFloat_AsDouble(h.ptr());
    if (v == -1.0 && PyErr_Occurred()) {
      PyErr_Clear();
      invalid(std::string(what) + ": expected a real number");
    }
    if (dt == XPAR_FLOAT) s.f32 = (float)v; else s.f64 = v;
    return s;
  }
  PyObject *idx = PyNumber_Index(h.ptr());
  if (!idx) {
    PyErr_Clear();
    invalid(std::string(what) + ": expected an integer for dtype " + xpar_dtype_name(dt));
  }
  nb::object o = nb::steal(idx);
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(o.ptr(), &overflow);
  bool ok = true;
  if (dt == XPAR_UINT64) {
    unsigned long long u = PyLong_AsUnsignedLongLong(o.ptr());
    if (u == (unsigned long long)-1 && PyErr_Occurred()) { PyErr_Clear(); ok = false; }
    s.u64 = u;
  } else if (overflow) {
    ok = false;
  } else if (dt == XPAR_INT64) {
    s.i64 = v;
  } else if (dt == XPAR_INT32) {
    ok = v >= INT32_MIN && v <= INT32_MAX;
    s.i32 = (int32_t)v;
  } else {  // UINT32
    ok = v >= 0 && v <= (long long)UINT32_MAX;
    s.u32 = (uint32_t)v;
  }
  if (!ok)
    invalid(std::string(what) + ": " + nb::repr(h).c_str() + " does not fit dtype " +
            xpar_dtype_name(dt));
  return s;
}

// Context: owns one xpar_context; one thread at a time (the C rule).
struct Context {
  xpar_context *ctx = nullptr;
  Context() { check(xpar_context_create(&ctx)); }
  ~Context() { close(); }
  void close() {
    if (ctx) {
      xpar_context *c = ctx;
      ctx = nullptr;
      nb::gil_scoped_release r;
      xpar_context_destroy(c);
    }
  }
  xpar_context *get() const {
    if (!ctx) raise_status((int)XPAR_ERR_NULL_CONTEXT, "the context is closed");
    return ctx;
  }
};

void set_stream(Context &c, uintptr_t stream) {
  xpar_context *ctx = c.get();
  check_released([&] { return xpar_context_set_stream(ctx, (void *)stream); });
}

nb::object reduce(Context &c, int op, const in_array &x, bool wide) {
  xpar_context *ctx = c.get();
  size_t n;
  xpar_dtype dt = vector_of(x, "x", &n);
  scalar r;
  const void *p = x.data();
  check_released([&] {
    return wide ? xpar_reduce_sum_wide(ctx, dt, p, n, &r)
                : xpar_reduce(ctx, dt, (xpar_reduction)op, p, n, &r);
  });
  xpar_dtype rt = dt;
  if (wide) rt = dt == XPAR_INT32 ? XPAR_INT64 : dt == XPAR_UINT32 ? XPAR_UINT64
                 : dt == XPAR_FLOAT ? XPAR_DOUBLE : dt;
  return scalar_to_python(rt, r);
}

void scan(Context &c, int op, bool exclusive, const in_array &x, out_array &out,
          nb::handle initial) {
  xpar_context *ctx = c.get();
  size_t n, no;
  xpar_dtype dt = vector_of(x, "x", &n);
  xpar_dtype dto = vector_of(out, "out", &no);
  same_kind(dt, n, "x", dto, no, "out");
  bool has_init = !initial.is_none();
  scalar init;
  if (has_init) init = scalar_from_python(dt, initial, "initial");
  xpar_scan_kind kind = exclusive ? XPAR_EXCLUSIVE : XPAR_INCLUSIVE;
  const void *in = x.data();
  void *o = out.data();
  check_released([&] {
    return has_init ? xpar_scan_init(ctx, dt, (xpar_reduction)op, kind, &init, in, o, n)
                    : xpar_scan(ctx, dt, (xpar_reduction)op, kind, in, o, n);
  });
}

nb::object dot(Context &c, const in_array &x, const in_array &y) {
  xpar_context *ctx = c.get();
  size_t n, ny;
  xpar_dtype dt = vector_of(x, "x", &n);
  xpar_dtype dty = vector_of(y, "y", &ny);
  same_kind(dt, n, "x", dty, ny, "y");
  scalar r;
  const void *px = x.data(), *py = y.data();
  check_released([&] { return xpar_dot(ctx, dt, px, py, n, &r); });
  return scalar_to_python(dt, r);
}

void axpy(Context &c, nb::handle alpha, const in_array &x, out_array &y) {
  xpar_context *ctx = c.get();
  size_t n, ny;
  xpar_dtype dt = vector_of(x, "x", &n);
  xpar_dtype dty = vector_of(y, "y", &ny);
  same_kind(dt, n, "x", dty, ny, "y");
  scalar a = scalar_from_python(dt, alpha, "alpha");
  const void *px = x.data();
  void *py = y.data();
  check_released([&] { return xpar_axpy(ctx, dt, &a, px, py, n); });
}

void add(Context &c, const in_array &x, const in_array &y, out_array &z) {
  xpar_context *ctx = c.get();
  size_t n, ny, nz;
  xpar_dtype dt = vector_of(x, "x", &n);
  xpar_dtype dty = vector_of(y, "y", &ny);
  xpar_dtype dtz = vector_of(z, "out", &nz);
  same_kind(dt, n, "x", dty, ny, "y");
  same_kind(dt, n, "x", dtz, nz, "out");
  const void *px = x.data(), *py = y.data();
  void *pz = z.data();
  check_released([&] { return xpar_add(ctx, dt, px, py, pz, n); });
}

void fill(Context &c, out_array &out, nb::handle value) {
  xpar_context *ctx = c.get();
  size_t n;
  xpar_dtype dt = vector_of(out, "out", &n);
  scalar v = scalar_from_python(dt, value, "value");
  void *p = out.data();
  check_released([&] { return xpar_fill(ctx, dt, &v, p, n); });
}

void sort(Context &c, bool descending, const in_array &x, out_array &out) {
  xpar_context *ctx = c.get();
  size_t n, no;
  xpar_dtype dt = vector_of(x, "x", &n);
  xpar_dtype dto = vector_of(out, "out", &no);
  same_kind(dt, n, "x", dto, no, "out");
  const xpar_sort_order order = descending ? XPAR_DESCENDING : XPAR_ASCENDING;
  const void *in = x.data();
  void *o = out.data();
  check_released([&] { return xpar_sort(ctx, dt, order, in, o, n); });
}

void sort_pairs(Context &c, bool descending, const in_array &keys, const in_array &values,
                out_array &keys_out, out_array &values_out) {
  xpar_context *ctx = c.get();
  size_t n, nv, nko, nvo;
  xpar_dtype kt = vector_of(keys, "keys", &n);
  xpar_dtype vt = vector_of(values, "values", &nv);
  xpar_dtype kto = vector_of(keys_out, "keys_out", &nko);
  xpar_dtype vto = vector_of(values_out, "values_out", &nvo);
  same_kind(kt, n, "keys", kto, nko, "keys_out");
  same_kind(vt, nv, "values", vto, nvo, "values_out");
  if (nv != n)
    invalid("keys has " + std::to_string(n) + " elements but values has " + std::to_string(nv));
  const xpar_sort_order order = descending ? XPAR_DESCENDING : XPAR_ASCENDING;
  const void *pk = keys.data(), *pv = values.data();
  void *pko = keys_out.data(), *pvo = values_out.data();
  check_released([&] { return xpar_sort_pairs(ctx, kt, vt, order, pk, pv, pko, pvo, n); });
}

void argsort(Context &c, bool descending, const in_array &x, out_array &indices) {
  xpar_context *ctx = c.get();
  size_t n, ni;
  xpar_dtype dt = vector_of(x, "x", &n);
  xpar_dtype it = vector_of(indices, "out", &ni);
  if (ni != n)
    invalid("x has " + std::to_string(n) + " elements but out has " + std::to_string(ni));
  const xpar_sort_order order = descending ? XPAR_DESCENDING : XPAR_ASCENDING;
  const void *in = x.data();
  void *o = indices.data();
  check_released([&] { return xpar_argsort(ctx, dt, it, order, in, o, n); });
}

// The compaction family: kind 0 select, 1 select_flagged, 2 partition, 3 unique.
uint64_t compact(Context &c, int kind, int pred, nb::handle value, nb::handle hi,
                 const in_array &x, nb::handle flags_obj, out_array &out) {
  xpar_context *ctx = c.get();
  size_t n, no;
  xpar_dtype dt = vector_of(x, "x", &n);
  xpar_dtype dto = vector_of(out, "out", &no);
  same_kind(dt, n, "x", dto, no, "out");
  scalar v{}, h{};
  const bool predicated = kind == 0 || kind == 2;
  if (predicated) {
    v = scalar_from_python(dt, value, "value");
    if (pred == (int)XPAR_IN_RANGE) h = scalar_from_python(dt, hi, "hi");
  }
  const unsigned char *flags = nullptr;
  if (kind == 1) {
    auto f = nb::cast<nb::ndarray<nb::ro, uint8_t>>(flags_obj);
    if (f.ndim() != 1 || f.shape(0) != n || (n > 1 && f.stride(0) != 1))
      invalid("flags: expected a contiguous 1-D uint8 or bool array of " + std::to_string(n) +
              " elements");
    flags = f.data();
  }
  const void *in = x.data();
  void *o = out.data();
  size_t count = 0;
  check_released([&] {
    switch (kind) {
      case 0: return xpar_select(ctx, dt, (xpar_predicate)pred, &v, &h, in, o, n, &count);
      case 1: return xpar_select_flagged(ctx, dt, in, flags, o, n, &count);
      case 2: return xpar_partition(ctx, dt, (xpar_predicate)pred, &v, &h, in, o, n, &count);
      default: return xpar_unique(ctx, dt, in, o, n, &count);
    }
  });
  return count;
}

// The runs: lengths (xpar_run_length_encode: values None, values_out the
// lengths, uint64 or int64) or xpar_reduce_by_key with op.  Every output has
// the keys' length n (the most runs there can be); the count is returned.
uint64_t runs(Context &c, bool lengths, int op, const in_array &keys, nb::handle values_obj,
              out_array &keys_out, out_array &values_out) {
  xpar_context *ctx = c.get();
  size_t n, nko, nvo;
  xpar_dtype kt = vector_of(keys, lengths ? "x" : "keys", &n);
  xpar_dtype kto = vector_of(keys_out, lengths ? "values_out" : "keys_out", &nko);
  same_kind(kt, n, lengths ? "x" : "keys", kto, nko, lengths ? "values_out" : "keys_out");
  xpar_dtype vto = vector_of(values_out, lengths ? "lengths_out" : "values_out", &nvo);
  const void *pv = nullptr;
  xpar_dtype vt = XPAR_UINT64;
  in_array values;  // held to the call's end
  if (lengths) {
    if (vto != XPAR_UINT64 && vto != XPAR_INT64)
      invalid(std::string("lengths_out: dtype ") + xpar_dtype_name(vto) +
              " is not uint64 or int64");
    if (nvo != n)
      invalid("x has " + std::to_string(n) + " elements but lengths_out has " +
              std::to_string(nvo));
  } else {
    values = nb::cast<in_array>(values_obj);
    size_t nv;
    vt = vector_of(values, "values", &nv);
    if (nv != n)
      invalid("keys has " + std::to_string(n) + " elements but values has " +
              std::to_string(nv));
    same_kind(vt, nv, "values", vto, nvo, "values_out");
    pv = values.data();
  }
  const void *pk = keys.data();
  void *pko = keys_out.data(), *pvo = values_out.data();
  size_t count = 0;
  check_released([&] {
    return lengths ? xpar_run_length_encode(ctx, kt, pk, n, pko, (uint64_t *)pvo, &count)
                   : xpar_reduce_by_key(ctx, kt, vt, (xpar_reduction)op, pk, pv, n, pko, pvo,
                                        &count);
  });
  return count;
}

// argmin / argmax of a whole array: (index, value).
nb::tuple argreduce(Context &c, bool is_max, const in_array &x) {
  xpar_context *ctx = c.get();
  size_t n;
  xpar_dtype dt = vector_of(x, "x", &n);
  scalar v;
  int64_t index = -1;
  const void *p = x.data();
  check_released([&] {
    return is_max ? xpar_argmax(ctx, dt, p, n, &v, &index) : xpar_argmin(ctx, dt, p, n, &v, &index);
  });
  return nb::make_tuple(nb::int_(index), scalar_to_python(dt, v));
}

// The segmented ops: kind 0 reduce, 1 scan, 2 argmin / argmax (op 1 / 2); offsets a
// 1-D int32 / int64 array of n_segments + 1, or None for n_segments segments of
// segment_size.  out holds n_segments values (reduce, arg) or x's n (scan); indices
// (arg) n_segments int64.
void segmented(Context &c, int kind, int op, bool exclusive, const in_array &x,
               nb::handle offsets_obj, size_t segment_size, size_t n_segments, out_array &out,
               nb::handle indices_obj) {
  xpar_context *ctx = c.get();
  size_t n, no;
  xpar_dtype dt = vector_of(x, "x", &n);
  xpar_dtype dto = vector_of(out, "out", &no);
  if (dto != dt)
    invalid(std::string("x is ") + xpar_dtype_name(dt) + " but out is " + xpar_dtype_name(dto));
  const void *offs = nullptr;
  xpar_dtype odt = XPAR_INT64;
  size_t m = n_segments;
  in_array offsets;
  if (!offsets_obj.is_none()) {
    offsets = nb::cast<in_array>(offsets_obj);
    size_t no2;
    odt = vector_of(offsets, "offsets", &no2);
    if (odt != XPAR_INT32 && odt != XPAR_INT64)
      invalid(std::string("offsets: dtype ") + xpar_dtype_name(odt) + " is not int32 or int64");
    if (no2 == 0) invalid("offsets: at least one offset (n_segments + 1) is needed");
    m = no2 - 1;
    offs = offsets.data();
  }
  const size_t want_out = kind == 1 ? n : m;
  if (no != want_out)
    invalid("out has " + std::to_string(no) + " elements, expected " + std::to_string(want_out));
  int64_t *idx = nullptr;
  out_array indices;
  if (kind == 2) {
    indices = nb::cast<out_array>(indices_obj);
    size_t ni;
    if (vector_of(indices, "indices", &ni) != XPAR_INT64 || ni != m)
      invalid("indices: expected an int64 array of " + std::to_string(m) + " elements");
    idx = static_cast<int64_t *>(indices.data());
  }
  const void *in = x.data();
  void *o = out.data();
  const xpar_reduction red = (xpar_reduction)op;
  const xpar_scan_kind sk = exclusive ? XPAR_EXCLUSIVE : XPAR_INCLUSIVE;
  const bool fixed = offs == nullptr;
  check_released([&] {
    switch (kind) {
      case 0:
        return fixed ? xpar_segmented_reduce_fixed(ctx, dt, red, in, segment_size, m, o)
                     : xpar_segmented_reduce(ctx, dt, red, in, n, offs, odt, m, o);
      case 1:
        return fixed ? xpar_segmented_scan_fixed(ctx, dt, red, sk, in, o, segment_size, m)
                     : xpar_segmented_scan(ctx, dt, red, sk, in, o, n, offs, odt, m);
      default:
        return red == XPAR_MAX ? xpar_segmented_argmax(ctx, dt, in, n, offs, odt, m, o, idx)
                               : xpar_segmented_argmin(ctx, dt, in, n, offs, odt, m, o, idx);
    }
  });
}

// The histogram: counts (uint64, num_bins of them) of x in equal-width bins over
// [lo, hi) (bounds None), or between the boundaries `bounds` (host memory, x's dtype,
// num_bins + 1 of them).
void histogram(Context &c, const in_array &x, nb::handle lo, nb::handle hi,
               nb::handle bounds_obj, out_array &counts) {
  xpar_context *ctx = c.get();
  size_t n, nb_;
  xpar_dtype dt = vector_of(x, "x", &n);
  xpar_dtype ct = vector_of(counts, "out", &nb_);
  if (ct != XPAR_UINT64)
    invalid(std::string("out is ") + xpar_dtype_name(ct) + ": the counts are uint64");
  const void *in = x.data();
  uint64_t *o = static_cast<uint64_t *>(counts.data());
  if (!bounds_obj.is_none()) {
    auto b = nb::cast<in_array>(bounds_obj);
    size_t nbound;
    xpar_dtype bt = vector_of(b, "bins", &nbound);
    if (bt != dt)
      invalid(std::string("bins is ") + xpar_dtype_name(bt) + " but x is " + xpar_dtype_name(dt));
    if (nbound != nb_ + 1)
      invalid("bins has " + std::to_string(nbound) + " boundaries: out's " +
              std::to_string(nb_) + " bins need " + std::to_string(nb_ + 1));
    const void *pb = b.data();
    check_released([&] { return xpar_histogram_range(ctx, dt, in, n, pb, nb_, o); });
    return;
  }
  scalar l = scalar_from_python(dt, lo, "lo"), h = scalar_from_python(dt, hi, "hi");
  check_released([&] { return xpar_histogram_even(ctx, dt, in, n, &l, &h, nb_, o); });
}

size_t byte_size(const out_array &a, const char *what) {
  size_t n;
  xpar_dtype dt = vector_of(a, what, &n);
  return n * xpar_dtype_size(dt);
}

void map_array(Context &c, out_array &a, int kind) {
  xpar_context *ctx = c.get();
  size_t bytes = byte_size(a, "array");
  void *p = a.data();
  check_released([&] { return xpar_map(ctx, p, bytes, (xpar_map_kind)kind); });
}

void update_array(Context &c, out_array &a, int dir) {
  xpar_context *ctx = c.get();
  byte_size(a, "array");
  void *p = a.data();
  check_released([&] { return xpar_update(ctx, p, (xpar_update_dir)dir); });
}

void unmap_array(Context &c, out_array &a, int kind) {
  xpar_context *ctx = c.get();
  byte_size(a, "array");
  void *p = a.data();
  check_released([&] { return xpar_unmap(ctx, p, (xpar_unmap_kind)kind); });
}

const char *threshold_key(int k) {
  static const char *keys[] = {
#define XPAR_PY_TH_(e, key, env, data) key,
      XPAR_THRESHOLD_MAP(XPAR_PY_TH_)
#undef XPAR_PY_TH_
  };
  return k >= 0 && k < (int)XPAR_THRESHOLD_COUNT_ ? keys[k] : "?";
}

nb::dict last_decision(Context &c) {
  xpar_decision d;
  check(xpar_last_decision(c.get(), &d));
  nb::dict r;
  r["op"] = d.op == XPAR_OP_KERNEL ? "kernel" : xpar_op_name(d.op);
  r["dtype"] = xpar_dtype_name(d.dtype);
  r["n"] = d.n;
  r["tier"] = xpar_tier_name(d.tier);
  r["bytes_to_device"] = d.bytes_to_device;
  r["bytes_to_host"] = d.bytes_to_host;
  r["reason"] = d.reason;
  r["reproducible"] = (bool)d.reproducible;
  r["shadow_tier"] = d.shadow_tier == XPAR_TIER_NONE ? nb::object(nb::none()) : nb::object(nb::str(xpar_tier_name(d.shadow_tier)));
  r["shadow_mismatch"] = (bool)d.shadow_mismatch;
  r["kernel"] = d.kernel ? nb::object(nb::str(d.kernel)) : nb::object(nb::none());
  r["split_gpu_share"] = d.split_gpu_share;
  return r;
}

nb::dict device_query() {
  xpar_device_info info;
  check_released([&] { return xpar_device_query(&info); });
  nb::dict r;
  r["usable"] = (bool)info.usable;
  r["built_with_cuda"] = (bool)info.built_with_cuda;
  r["device_count"] = info.device_count;
  r["device"] = info.device;
  r["name"] = info.name;
  r["compute_capability"] = nb::make_tuple(info.compute_major, info.compute_minor);
  r["multiprocessors"] = info.multiprocessors;
  r["total_memory"] = info.total_memory;
  r["reason"] = info.reason;
  return r;
}

// The C call's own cost, for python/bench/overhead.py: `reps` xpar_reduce
// SUM calls on x from C, seconds per call.
double c_loop_reduce(Context &c, const in_array &x, size_t reps) {
  xpar_context *ctx = c.get();
  size_t n;
  xpar_dtype dt = vector_of(x, "x", &n);
  scalar r;
  const void *p = x.data();
  xpar_status st = XPAR_OK;
  double secs;
  {
    nb::gil_scoped_release g;
    auto t0 = std::chrono::steady_clock::now();
    for (size_t i = 0; i < reps && st == XPAR_OK; i++)
      st = xpar_reduce(ctx, dt, XPAR_SUM, p, n, &r);
    secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  check(st);
  return secs / (double)(reps ? reps : 1);
}

}  // namespace

NB_MODULE(_xpar, m) {
  m.doc() = "The C layer of the xpar package: use the xpar module instead.";
  m.attr("VERSION") = nb::make_tuple(XPAR_VERSION_MAJOR, XPAR_VERSION_MINOR, XPAR_VERSION_PATCH);
  m.attr("NEVER") = nb::int_((uint64_t)XPAR_NEVER);

  nb::dict statuses;
#define XPAR_PY_ST_(name, value, text) statuses[nb::int_(value)] = nb::make_tuple(#name, text);
  XPAR_STATUS_MAP(XPAR_PY_ST_)
#undef XPAR_PY_ST_
  m.attr("STATUSES") = statuses;

  m.def("_register_errors", [](nb::dict d) {
    Py_XDECREF(error_classes);
    error_classes = d.inc_ref().ptr();
  });
  m.def("_raise_status", [](int code, const std::string &detail) { raise_status(code, detail); });
  m.def("device_query", &device_query);
  m.def("profile_default_path", []() {
    char buf[4096];
    check(xpar_profile_default_path(buf, sizeof buf));
    return std::string(buf);
  });

  nb::class_<Context>(m, "Context")
      .def(nb::init<>())
      .def("close", &Context::close)
      .def_prop_ro("closed", [](const Context &c) { return c.ctx == nullptr; })
      .def("_set_backend", [](Context &c, int b) { check(xpar_context_set_backend(c.get(), (xpar_backend)b)); })
      .def("_get_backend", [](Context &c) { xpar_backend b; check(xpar_context_get_backend(c.get(), &b)); return xpar_backend_name(b); })
      .def("_set_offload", [](Context &c, int o) { check(xpar_context_set_offload(c.get(), (xpar_offload)o)); })
      .def("_get_offload", [](Context &c) { xpar_offload o; check(xpar_context_get_offload(c.get(), &o)); return (int)o; })
      .def("_set_threshold", [](Context &c, int op, int dt, int kind, uint64_t v) {
        check(xpar_context_set_threshold(c.get(), (xpar_op)op, (xpar_dtype)dt, (xpar_threshold)kind, (size_t)v));
      })
      .def("_get_threshold", [](Context &c, int op, int dt, int kind) {
        size_t v; check(xpar_context_get_threshold(c.get(), (xpar_op)op, (xpar_dtype)dt, (xpar_threshold)kind, &v));
        return (uint64_t)v;
      })
      .def("_set_split", [](Context &c, int op, int dt, int m, uint64_t from, double share) {
        check(xpar_context_set_split(c.get(), (xpar_op)op, (xpar_dtype)dt, (xpar_split_memory)m,
                                     (size_t)from, share));
      })
      .def("_get_split", [](Context &c, int op, int dt, int m) {
        size_t from; double share;
        check(xpar_context_get_split(c.get(), (xpar_op)op, (xpar_dtype)dt, (xpar_split_memory)m,
                                     &from, &share));
        return nb::make_tuple((uint64_t)from, share);
      })
      .def("_set_num_threads", [](Context &c, int t) { check(xpar_context_set_num_threads(c.get(), t)); })
      .def("_set_verbose", [](Context &c, bool v) { check(xpar_context_set_verbose(c.get(), v ? 1 : 0)); })
      .def("_set_reproducible", [](Context &c, bool v) { check(xpar_context_set_reproducible(c.get(), v ? 1 : 0)); })
      .def("_get_reproducible", [](Context &c) { int v; check(xpar_context_get_reproducible(c.get(), &v)); return (bool)v; })
      .def("_set_shadow", [](Context &c, int tier, bool fail) { check(xpar_context_set_shadow(c.get(), (xpar_tier)tier, fail ? 1 : 0)); })
      .def("_get_shadow", [](Context &c) {
        xpar_tier t; int f; check(xpar_context_get_shadow(c.get(), &t, &f));
        return nb::make_tuple(t == XPAR_TIER_NONE ? nb::object(nb::none()) : nb::object(nb::str(xpar_tier_name(t))), (bool)f);
      })
      .def("_set_device", [](Context &c, int d) {
        xpar_context *x = c.get();
        check_released([&] { return xpar_context_set_device(x, d); });
      })
      .def("_set_stream", &set_stream)
      .def("release_memory", [](Context &c) {
        xpar_context *x = c.get();
        check_released([&] { return xpar_context_release_memory(x); });
      })
      .def("_profile_save", [](Context &c, const std::string &path) {
        xpar_context *x = c.get();
        check_released([&] { return xpar_profile_save(x, path.c_str()); });
      })
      .def("_profile_load", [](Context &c, const std::string &path) {
        xpar_context *x = c.get();
        int applied = 0;
        check_released([&] { return xpar_profile_load(x, path.c_str(), &applied); });
        return (bool)applied;
      })
      .def("_last_decision", &last_decision)
      .def("_reduce", &reduce)
      .def("_scan", &scan, nb::arg("op"), nb::arg("exclusive"), nb::arg("x"), nb::arg("out"), nb::arg("initial").none())
      .def("_dot", &dot)
      .def("_axpy", &axpy)
      .def("_add", &add)
      .def("_fill", &fill)
      .def("_sort", &sort)
      .def("_sort_pairs", &sort_pairs)
      .def("_argsort", &argsort)
      .def("_compact", &compact, nb::arg("kind"), nb::arg("pred"), nb::arg("value").none(),
           nb::arg("hi").none(), nb::arg("x"), nb::arg("flags").none(), nb::arg("out"))
      .def("_runs", &runs, nb::arg("lengths"), nb::arg("op"), nb::arg("keys"),
           nb::arg("values").none(), nb::arg("keys_out"), nb::arg("values_out"))
      .def("_argreduce", &argreduce)
      .def("_segmented", &segmented, nb::arg("kind"), nb::arg("op"), nb::arg("exclusive"),
           nb::arg("x"), nb::arg("offsets").none(), nb::arg("segment_size"),
           nb::arg("n_segments"), nb::arg("out"), nb::arg("indices").none())
      .def("_histogram", &histogram, nb::arg("x"), nb::arg("lo").none(), nb::arg("hi").none(),
           nb::arg("bins").none(), nb::arg("out"))
      .def("_map", &map_array)
      .def("_update", &update_array)
      .def("_unmap", &unmap_array)
      .def("_c_loop_reduce", &c_loop_reduce);
}
