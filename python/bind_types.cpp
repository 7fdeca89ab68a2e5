// wick.dtype, wick.device, the exception mapping, and the conversions every binding shares
// (bind_common.h).
#include <pybind11/stl.h>

#include <climits>
#include <cstring>

#include "python/bind_common.h"

namespace wick::python {

namespace {

// A dtype as Python sees it. One instance per dtype (made once, in init_types), so identity
// comparisons (`x.dtype is wick.float32`) work as in PyTorch.
struct PyDType {
  DType dtype;
};

// Module-lifetime Python objects are held as raw, never-released references: a static py::object
// would be destroyed after the interpreter has shut down, and crash the process on exit.
PyObject* g_dtypes[kNumDTypes];
PyObject* g_size_class = nullptr;

constexpr DType kAllDTypes[] = {kBool,    kUInt8,    kInt8,    kInt32,  kInt64,
                                kFloat16, kBFloat16, kFloat32, kFloat64};

std::string device_repr(const Device& d) {
  if (d.is_cpu()) return "device(type='cpu')";
  return "device(type='cuda', index=" + std::to_string(d.index) + ")";
}

// NumPy's dtype names that match wick's.
std::optional<DType> dtype_from_numpy_name(const std::string& name) {
  if (name == "float32") return kFloat32;
  if (name == "float64") return kFloat64;
  if (name == "float16") return kFloat16;
  if (name == "int64") return kInt64;
  if (name == "int32") return kInt32;
  if (name == "uint8") return kUInt8;
  if (name == "int8") return kInt8;
  if (name == "bool") return kBool;
  return std::nullopt;
}

}  // namespace

py::object dtype_object(DType dtype) {
  return py::reinterpret_borrow<py::object>(g_dtypes[static_cast<int>(dtype)]);
}

DType to_dtype(py::handle h) {
  if (py::isinstance<PyDType>(h)) return h.cast<const PyDType&>().dtype;
  PyObject* o = h.ptr();
  if (o == reinterpret_cast<PyObject*>(&PyBool_Type)) return kBool;
  if (o == reinterpret_cast<PyObject*>(&PyLong_Type)) return kInt64;
  if (o == reinterpret_cast<PyObject*>(&PyFloat_Type)) return kFloat64;
  // A NumPy dtype (np.dtype('float32')) or scalar type (np.float32): both have a dtype name.
  if (py::hasattr(h, "dtype") || py::hasattr(h, "kind")) {
    py::object named =
        py::hasattr(h, "kind") ? py::reinterpret_borrow<py::object>(h) : h.attr("dtype");
    if (py::hasattr(named, "name")) {
      if (auto d = dtype_from_numpy_name(py::str(named.attr("name")))) return *d;
    }
  }
  throw py::type_error("[dtype] expected a wick dtype (wick.float32, ...); got " +
                       std::string(py::str(py::repr(h))));
}

std::optional<DType> to_optional_dtype(py::handle h) {
  if (h.is_none()) return std::nullopt;
  return to_dtype(h);
}

Device to_device(py::handle h) {
  if (py::isinstance<Device>(h)) return h.cast<Device>();
  if (py::isinstance<py::str>(h)) return Device(h.cast<std::string>());
  if (PyLong_Check(h.ptr()) && !PyBool_Check(h.ptr())) return Device(kCUDA, h.cast<int>());
  throw py::type_error("[device] expected a device (wick.device, 'cpu', 'cuda:0' or an int); got " +
                       std::string(py::str(py::repr(h))));
}

bool try_scalar(py::handle h, Scalar& out) {
  PyObject* o = h.ptr();
  if (PyBool_Check(o)) {
    out = Scalar(o == Py_True);
    return true;
  }
  if (PyFloat_Check(o)) {
    out = Scalar(PyFloat_AS_DOUBLE(o));
    return true;
  }
  if (PyLong_Check(o)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow != 0)
      throw py::value_error("[scalar] integer " + std::string(py::str(h)) +
                            " does not fit in 64 bits");
    out = Scalar(static_cast<int64_t>(v));
    return true;
  }
  // NumPy scalars: np.bool_ first (it has no __index__), then integers, then floats.
  const char* type_name = Py_TYPE(o)->tp_name;
  if (std::strcmp(type_name, "numpy.bool_") == 0) {
    out = Scalar(PyObject_IsTrue(o) == 1);
    return true;
  }
  if (std::strncmp(type_name, "numpy.", 6) != 0) return false;
  if (PyIndex_Check(o)) {
    py::object i = py::reinterpret_steal<py::object>(PyNumber_Index(o));
    if (!i) throw py::error_already_set();
    return try_scalar(i, out);
  }
  if (Py_TYPE(o)->tp_as_number != nullptr && Py_TYPE(o)->tp_as_number->nb_float != nullptr) {
    double v = PyFloat_AsDouble(o);
    if (v == -1.0 && PyErr_Occurred()) throw py::error_already_set();
    out = Scalar(v);
    return true;
  }
  return false;
}

Scalar to_scalar(py::handle h, const char* what) {
  Scalar s;
  if (try_scalar(h, s)) return s;
  if (const Tensor* t = try_tensor(h)) {
    if (t->numel() == 1) return t->item();
  }
  throw py::type_error("[scalar] " + std::string(what) + " must be a number; got " +
                       std::string(py::str(py::type::of(h).attr("__name__"))));
}

const Tensor* try_tensor(py::handle h) {
  py::detail::make_caster<Tensor> caster;
  if (!caster.load(h, false)) return nullptr;
  return &py::detail::cast_op<const Tensor&>(caster);
}

const Tensor& to_tensor(py::handle h, const char* what) {
  if (const Tensor* t = try_tensor(h)) return *t;
  throw py::type_error("[tensor] " + std::string(what) + " must be a wick.Tensor; got " +
                       std::string(py::str(py::type::of(h).attr("__name__"))));
}

py::object wrap(Tensor t) {
  if (!t.defined()) return py::none();
  return py::cast(std::move(t));
}

Tensor optional_tensor(py::handle h, const char* what) {
  if (h.is_none()) return Tensor();
  return to_tensor(h, what);
}

Shape to_shape(py::handle h, const char* op, bool allow_minus_one) {
  if (!py::isinstance<py::sequence>(h) || py::isinstance<py::str>(h)) {
    throw py::type_error("[" + std::string(op) + "] a size must be a tuple or list of ints; got " +
                         std::string(py::str(py::type::of(h).attr("__name__"))));
  }
  py::sequence seq = py::reinterpret_borrow<py::sequence>(h);
  if (static_cast<int64_t>(seq.size()) > kMaxDims) {
    throw py::value_error("[" + std::string(op) + "] at most " + std::to_string(kMaxDims) +
                          " dimensions are supported; got " + std::to_string(seq.size()));
  }
  Shape shape;
  for (py::handle item : seq) {
    Scalar s;
    if (!try_scalar(item, s) || s.kind() != ScalarKind::Integer) {
      if (const Tensor* t = try_tensor(item); t && t->numel() == 1 && !t->is_floating_point()) {
        s = t->item();
      } else {
        throw py::type_error("[" + std::string(op) + "] sizes must be ints; got " +
                             std::string(py::str(py::repr(item))));
      }
    }
    int64_t d = s.to_int();
    if (d < 0 && !(allow_minus_one && d == -1)) {
      throw py::value_error("[" + std::string(op) + "] negative dimension " + std::to_string(d));
    }
    // An element count that overflows is the core's to refuse (checked_numel, Note [checked
    // sizes]): a RuntimeError naming the op, as PyTorch raises, with one rule for C++ and Python.
    shape.push_back(d);
  }
  return shape;
}

Shape shape_from_args(const py::args& args, const char* op, bool allow_minus_one) {
  if (args.size() == 1 && !PyLong_Check(args[0].ptr()) && try_tensor(args[0]) == nullptr) {
    return to_shape(args[0], op, allow_minus_one);
  }
  return to_shape(args, op, allow_minus_one);
}

DimList to_dims(py::handle h) {
  if (h.is_none()) return {};
  if (PyLong_Check(h.ptr())) return {h.cast<int64_t>()};
  if (py::isinstance<py::sequence>(h)) return h.cast<std::vector<int64_t>>();
  throw py::type_error("[dim] dim must be an int or a tuple of ints; got " +
                       std::string(py::str(py::repr(h))));
}

Pair2 to_pair(py::handle h, const char* what) {
  if (PyLong_Check(h.ptr())) return Pair2(h.cast<int64_t>());
  if (py::isinstance<py::sequence>(h)) {
    auto v = h.cast<std::vector<int64_t>>();
    if (v.size() == 1) return Pair2(v[0]);
    if (v.size() == 2) return Pair2(v[0], v[1]);
  }
  throw py::type_error("[" + std::string(what) + "] must be an int or a pair of ints; got " +
                       std::string(py::str(py::repr(h))));
}

py::object size_object(const Shape& shape) {
  py::tuple t(shape.size());
  for (int64_t i = 0; i < shape.size(); ++i) {
    t[i] = py::reinterpret_steal<py::object>(PyLong_FromLongLong(shape[i]));
  }
  if (g_size_class == nullptr) return std::move(t);
  return py::reinterpret_borrow<py::object>(g_size_class)(t);
}

void set_size_class(py::object cls) { g_size_class = cls.release().ptr(); }

PyCallback::PyCallback(py::function fn) : fn_(fn.release().ptr()) {}

PyCallback::PyCallback(const PyCallback& other) : fn_(other.fn_) {
  py::gil_scoped_acquire gil;
  Py_INCREF(fn_);
}

PyCallback::~PyCallback() {
  if (!Py_IsInitialized()) return;  // the interpreter is gone; the object went with it
  py::gil_scoped_acquire gil;
  Py_DECREF(fn_);
}

py::object PyCallback::call(py::handle arg) const {
  py::gil_scoped_acquire gil;
  return py::reinterpret_borrow<py::function>(fn_)(arg);
}

py::object scalar_to_python(const Tensor& t) {
  Scalar s = t.item();
  if (t.dtype() == kBool) return py::bool_(s.to<bool>());
  if (is_floating(t.dtype())) return py::float_(s.to_double());
  return py::int_(s.to_int());
}

void init_types(py::module_& m) {
  // ---- exceptions (Note: pybind11 already maps invalid_argument, out_of_range and
  // runtime_error to ValueError, IndexError and RuntimeError) ----
  static auto* oom = new py::exception<OutOfMemoryError>(m, "OutOfMemoryError", PyExc_RuntimeError);
  static auto* gradcheck_error =
      new py::exception<GradcheckError>(m, "GradcheckError", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const GradcheckError& e) {
      PyErr_SetString(gradcheck_error->ptr(), e.what());
    } catch (const OutOfMemoryError& e) {
      PyErr_SetString(oom->ptr(), e.what());
    } catch (const TypeError& e) {
      PyErr_SetString(PyExc_TypeError, e.what());
    } catch (const std::bad_alloc&) {
      PyErr_SetString(oom->ptr(), "[allocator] out of host memory (std::bad_alloc)");
    }
  });

  // ---- dtypes ----
  py::class_<PyDType>(m, "dtype", "The element type of a tensor: wick.float32, wick.int64, ...")
      .def_property_readonly("is_floating_point",
                             [](const PyDType& d) { return is_floating(d.dtype); })
      .def_property_readonly("itemsize", [](const PyDType& d) { return element_size(d.dtype); })
      .def("__repr__", [](const PyDType& d) { return std::string("wick.") + dtype_name(d.dtype); })
      .def("__reduce__", [](const PyDType& d) { return std::string(dtype_name(d.dtype)); });
  for (DType d : kAllDTypes) {
    g_dtypes[static_cast<int>(d)] = py::cast(PyDType{d}).release().ptr();
    m.attr(dtype_name(d)) = dtype_object(d);
  }

  // ---- devices ----
  py::class_<Device>(m, "device", "Where a tensor lives: wick.device('cpu'), wick.device('cuda:0')")
      .def(py::init([](const std::string& spec) { return Device(spec); }), py::arg("type"))
      .def(py::init([](const std::string& type, int index) {
             Device d(type);
             d.index = index;
             return d;
           }),
           py::arg("type"), py::arg("index"))
      .def(py::init([](const Device& d) { return d; }))
      .def_property_readonly("type", [](const Device& d) { return device_type_name(d.type); })
      .def_property_readonly("index",
                             [](const Device& d) -> py::object {
                               if (d.is_cpu()) return py::none();
                               return py::int_(d.index);
                             })
      .def("__repr__", &device_repr)
      .def("__str__", [](const Device& d) { return d.is_cpu() ? std::string("cpu") : d.str(); })
      .def("__eq__",
           [](const Device& d, py::handle other) {
             if (py::isinstance<Device>(other)) return d == other.cast<Device>();
             if (py::isinstance<py::str>(other)) return d == Device(other.cast<std::string>());
             return false;
           })
      .def("__hash__", [](const Device& d) { return static_cast<int>(d.type) * 1000 + d.index; });

  m.def("_set_size_class", &set_size_class);
  m.def("_dtype_from_name",
        [](const std::string& name) { return dtype_object(dtype_from_name("dtype", name)); });
}

}  // namespace wick::python
