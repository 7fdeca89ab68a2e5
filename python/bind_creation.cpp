// Creating tensors from Python: wick.tensor() from nested lists, numbers, NumPy arrays and
// tensors; zeros, ones, full, empty, arange, linspace, eye, rand, randn, randint and the *_like
// forms with PyTorch's keyword arguments (dtype, device, requires_grad); manual_seed.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "python/bind_common.h"

namespace wick::python {

// bind_interop.cpp: a tensor viewing a NumPy array's memory.
Tensor tensor_from_numpy(py::array array);

namespace {

TensorOptions options_from(py::handle dtype, py::handle device, bool requires_grad) {
  TensorOptions o;
  o.dtype = to_optional_dtype(dtype);
  if (!device.is_none()) o.device = to_device(device);
  o.requires_grad = requires_grad;
  return o;
}

Tensor finish(Tensor t, const TensorOptions& o) {
  if (o.requires_grad) t.requires_grad_(true);
  return t;
}

// Nested Python sequences of numbers (or one-element tensors): shape, leaves and their kind.
struct Nested {
  Shape shape;
  std::vector<double> floats;
  std::vector<int64_t> ints;  // exact values when every leaf is an integer or bool
  ScalarKind kind = ScalarKind::Bool;
  bool any_leaf = false;
  int64_t leaf_depth = 0;
};

// A number, or the value of a one-element tensor (keeping its kind).
bool leaf_value(py::handle obj, Scalar& s) {
  if (try_scalar(obj, s)) return true;
  const Tensor* t = try_tensor(obj);
  if (t == nullptr) return false;
  check_value(t->numel() == 1, "tensor",
              "only one-element tensors can be elements of a list given to tensor()");
  Scalar v = t->item();
  s = t->is_floating_point() ? Scalar(v.to_double())
      : t->dtype() == kBool  ? Scalar(v.to<bool>())
                             : Scalar(v.to_int());
  return true;
}

void walk(py::handle obj, int64_t depth, Nested& n) {
  Scalar s;
  if (leaf_value(obj, s)) {
    if (!n.any_leaf) {
      n.any_leaf = true;
      n.leaf_depth = depth;
    }
    check_value(depth == n.leaf_depth && depth == n.shape.size(), "tensor",
                "found a number at depth ", depth, " where a sequence was expected");
    if (s.kind() == ScalarKind::Floating) n.kind = ScalarKind::Floating;
    if (s.kind() == ScalarKind::Integer && n.kind == ScalarKind::Bool) n.kind = ScalarKind::Integer;
    n.floats.push_back(s.to_double());
    n.ints.push_back(s.to_int());
    return;
  }
  if (!py::isinstance<py::sequence>(obj) || py::isinstance<py::str>(obj)) {
    throw py::type_error("[tensor] could not infer a dtype for an element of type " +
                         std::string(py::str(py::type::of(obj).attr("__name__"))));
  }
  py::sequence seq = py::reinterpret_borrow<py::sequence>(obj);
  int64_t len = static_cast<int64_t>(seq.size());
  if (depth == n.shape.size()) {
    check_value(!n.any_leaf, "tensor", "found a sequence at depth ", depth,
                " where a number was expected");
    check_value(n.shape.size() < kMaxDims, "tensor", "too many dimensions");
    n.shape.push_back(len);
  } else {
    check_value(n.shape[depth] == len, "tensor", "expected a sequence of length ", n.shape[depth],
                " at dim ", depth, " (got ", len, ")");
  }
  for (py::handle item : seq) walk(item, depth + 1, n);
}

Tensor from_nested(py::handle data, const TensorOptions& o) {
  Nested n;
  walk(data, 0, n);
  DType inferred = n.kind == ScalarKind::Floating  ? get_default_dtype()
                   : n.kind == ScalarKind::Integer ? kInt64
                   : n.any_leaf                    ? kBool
                                                   : get_default_dtype();  // tensor([]) too
  DType dtype = o.dtype.value_or(inferred);
  Tensor t = n.kind == ScalarKind::Floating ? tensor(n.floats, n.shape, TensorOptions(kFloat64))
                                            : tensor(n.ints, n.shape, TensorOptions(kInt64));
  return t.to(o.device, dtype);
}

bool is_numpy_array(py::handle h) { return py::isinstance<py::array>(h); }

Tensor make_tensor(py::handle data, py::handle dtype, py::handle device, bool requires_grad,
                   bool copy) {
  TensorOptions o = options_from(dtype, device, requires_grad);
  Tensor t;
  if (const Tensor* src = try_tensor(data)) {
    t = src->detach().to(o.device, o.dtype.value_or(src->dtype()));
    if (copy && t.storage() == src->storage()) t = t.clone();
  } else if (is_numpy_array(data)) {
    py::array array = py::reinterpret_borrow<py::array>(data);
    Tensor shared = tensor_from_numpy(py::array::ensure(array, py::array::c_style));
    t = shared.to(o.device, o.dtype.value_or(shared.dtype()));
    if (copy && t.storage() == shared.storage()) t = t.clone();
  } else {
    t = from_nested(data, o);
  }
  return finish(t, o);
}

template <Tensor (*Fn)(const Shape&, const TensorOptions&)>
void bind_sized(py::module_& m, const char* name) {
  m.def(
      name,
      [name](py::args size, py::handle dtype, py::handle device, bool requires_grad, py::handle) {
        TensorOptions o = options_from(dtype, device, requires_grad);
        return finish(Fn(shape_from_args(size, name), o), o);
      },
      py::kw_only(), py::arg("dtype") = py::none(), py::arg("device") = py::none(),
      py::arg("requires_grad") = false, py::arg("out") = py::none());
}

Tensor empty_fn(const Shape& s, const TensorOptions& o) { return empty(s, o); }
Tensor zeros_fn(const Shape& s, const TensorOptions& o) { return zeros(s, o); }
Tensor ones_fn(const Shape& s, const TensorOptions& o) { return ones(s, o); }
Tensor rand_fn(const Shape& s, const TensorOptions& o) { return rand(s, o); }
Tensor randn_fn(const Shape& s, const TensorOptions& o) { return randn(s, o); }

// The *_like functions: the input's dtype and device unless given.
TensorOptions like_options(const Tensor& t, py::handle dtype, py::handle device,
                           bool requires_grad) {
  TensorOptions o = options_of(t);
  if (!dtype.is_none()) o.dtype = to_dtype(dtype);
  if (!device.is_none()) o.device = to_device(device);
  o.requires_grad = requires_grad;
  return o;
}

template <Tensor (*Fn)(const Shape&, const TensorOptions&)>
void bind_like(py::module_& m, const char* name) {
  m.def(
      name,
      [](const Tensor& t, py::handle dtype, py::handle device, bool requires_grad, py::handle) {
        TensorOptions o = like_options(t, dtype, device, requires_grad);
        return finish(Fn(t.shape(), o), o);
      },
      py::arg("input"), py::kw_only(), py::arg("dtype") = py::none(),
      py::arg("device") = py::none(), py::arg("requires_grad") = false,
      py::arg("memory_format") = py::none());
}

}  // namespace

// A seed as torch.Generator.manual_seed reads one: a Python int (or an object with __index__,
// such as a NumPy integer) in [-2**63, 2**64), negatives wrapping to 2**64 + seed. A float, a
// bool or a string is refused with PyTorch's RuntimeError instead of being truncated, so that
// manual_seed(1.5) and manual_seed(1.7) cannot silently give the same random stream.
static uint64_t seed_from(py::handle seed, const char* op) {
  if (PyBool_Check(seed.ptr()) || !PyIndex_Check(seed.ptr())) {
    std::string shown = py::repr(seed).cast<std::string>();
    if (shown.size() > 40) shown = shown.substr(0, 40) + "...";
    throw std::runtime_error(error_message(op, "expected an integer seed, but got ",
                                           Py_TYPE(seed.ptr())->tp_name, " ", shown));
  }
  py::int_ value = py::reinterpret_steal<py::int_>(PyNumber_Index(seed.ptr()));
  if (!value) throw py::error_already_set();
  int overflow = 0;
  long long as_signed = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
  if (overflow == 0) return static_cast<uint64_t>(as_signed);  // negatives wrap, as in PyTorch
  if (overflow > 0) {
    unsigned long long as_unsigned = PyLong_AsUnsignedLongLong(value.ptr());
    if (!PyErr_Occurred()) return as_unsigned;
    PyErr_Clear();
  }
  throw std::runtime_error(error_message(op, "seed ", py::str(value).cast<std::string>(),
                                         " is out of range: a seed is in [-2**63, 2**64)"));
}

void init_creation(py::module_& m) {
  // Note [numpy API at import]: pybind11 looks NumPy's C API up in a function-local static on
  // first use, importing numpy under that static's guard. If the first use happens on a
  // data-loader worker thread, the import can release the GIL while the guard is held, and
  // another thread that holds the GIL and reaches the same static waits on the guard forever.
  // Touching it here, at module import on one thread, removes the race.
  (void)is_numpy_array(py::none());
  m.def(
      "tensor",
      [](py::handle data, py::handle dtype, py::handle device, bool requires_grad, bool) {
        return make_tensor(data, dtype, device, requires_grad, /*copy=*/true);
      },
      py::arg("data"), py::kw_only(), py::arg("dtype") = py::none(), py::arg("device") = py::none(),
      py::arg("requires_grad") = false, py::arg("pin_memory") = false);
  m.def(
      "as_tensor",
      [](py::handle data, py::handle dtype, py::handle device) {
        return make_tensor(data, dtype, device, false, /*copy=*/false);
      },
      py::arg("data"), py::arg("dtype") = py::none(), py::arg("device") = py::none());

  bind_sized<empty_fn>(m, "empty");
  bind_sized<zeros_fn>(m, "zeros");
  bind_sized<ones_fn>(m, "ones");
  bind_sized<rand_fn>(m, "rand");
  bind_sized<randn_fn>(m, "randn");
  bind_like<empty_fn>(m, "empty_like");
  bind_like<zeros_fn>(m, "zeros_like");
  bind_like<ones_fn>(m, "ones_like");
  bind_like<rand_fn>(m, "rand_like");
  bind_like<randn_fn>(m, "randn_like");
  m.def(
      "full",
      [](py::handle size, py::handle value, py::handle dtype, py::handle device,
         bool requires_grad) {
        TensorOptions o = options_from(dtype, device, requires_grad);
        return finish(full(to_shape(size, "full"), to_scalar(value, "fill_value"), o), o);
      },
      py::arg("size"), py::arg("fill_value"), py::kw_only(), py::arg("dtype") = py::none(),
      py::arg("device") = py::none(), py::arg("requires_grad") = false);
  m.def(
      "full_like",
      [](const Tensor& t, py::handle value, py::handle dtype, py::handle device,
         bool requires_grad) {
        TensorOptions o = like_options(t, dtype, device, requires_grad);
        return finish(full(t.shape(), to_scalar(value, "fill_value"), o), o);
      },
      py::arg("input"), py::arg("fill_value"), py::kw_only(), py::arg("dtype") = py::none(),
      py::arg("device") = py::none(), py::arg("requires_grad") = false);
  m.def(
      "arange",
      [](py::handle a, py::handle b, py::handle step, py::handle dtype, py::handle device,
         bool requires_grad) {
        TensorOptions o = options_from(dtype, device, requires_grad);
        Scalar st = step.is_none() ? Scalar(1) : to_scalar(step, "step");
        Tensor t = b.is_none() ? arange(Scalar(0), to_scalar(a, "end"), st, o)
                               : arange(to_scalar(a, "start"), to_scalar(b, "end"), st, o);
        return finish(t, o);
      },
      py::arg("start"), py::arg("end") = py::none(), py::arg("step") = py::none(), py::kw_only(),
      py::arg("dtype") = py::none(), py::arg("device") = py::none(),
      py::arg("requires_grad") = false);
  m.def(
      "linspace",
      [](double start, double end, int64_t steps, py::handle dtype, py::handle device,
         bool requires_grad) {
        TensorOptions o = options_from(dtype, device, requires_grad);
        return finish(linspace(start, end, steps, o), o);
      },
      py::arg("start"), py::arg("end"), py::arg("steps"), py::kw_only(),
      py::arg("dtype") = py::none(), py::arg("device") = py::none(),
      py::arg("requires_grad") = false);
  m.def(
      "eye",
      [](int64_t n, py::handle mcols, py::handle dtype, py::handle device, bool requires_grad) {
        TensorOptions o = options_from(dtype, device, requires_grad);
        return finish(eye(n, mcols.is_none() ? -1 : mcols.cast<int64_t>(), o), o);
      },
      py::arg("n"), py::arg("m") = py::none(), py::kw_only(), py::arg("dtype") = py::none(),
      py::arg("device") = py::none(), py::arg("requires_grad") = false);
  m.def(
      "randint",
      [](py::args args, py::handle size, py::handle dtype, py::handle device, bool requires_grad) {
        // randint(high, size) or randint(low, high, size), as in PyTorch.
        std::vector<py::handle> pos(args.begin(), args.end());
        if (size.is_none() && !pos.empty()) {
          size = pos.back();
          pos.pop_back();
        }
        if (size.is_none() || pos.empty() || pos.size() > 2) {
          throw py::type_error(
              "[randint] expected randint(low=0, high, size, *, dtype=None, device=None)");
        }
        int64_t low = pos.size() == 2 ? pos[0].cast<int64_t>() : 0;
        int64_t high = pos.back().cast<int64_t>();
        TensorOptions o = options_from(dtype, device, requires_grad);
        return finish(randint(low, high, to_shape(size, "randint"), o), o);
      },
      py::kw_only(), py::arg("size") = py::none(), py::arg("dtype") = py::none(),
      py::arg("device") = py::none(), py::arg("requires_grad") = false);
  m.def(
      "randint_like",
      [](const Tensor& t, int64_t a, py::handle b) {
        return b.is_none() ? randint_like(t, 0, a) : randint_like(t, a, b.cast<int64_t>());
      },
      py::arg("input"), py::arg("low"), py::arg("high") = py::none());
  m.def(
      "scalar_tensor",
      [](py::handle value, py::handle dtype, py::handle device) {
        TensorOptions o = options_from(dtype, device, false);
        if (!o.dtype) o.dtype = get_default_dtype();
        return scalar_tensor(to_scalar(value, "value"), o);
      },
      py::arg("s"), py::kw_only(), py::arg("dtype") = py::none(), py::arg("device") = py::none());

  // ---- random state ----
  m.def(
      "manual_seed", [](py::object seed) { manual_seed(seed_from(seed, "manual_seed")); },
      py::arg("seed"));
  m.def("initial_seed", []() { return default_generator().seed(); });
  m.def("get_rng_state", []() {
    PhiloxState s = default_generator().state();
    return py::make_tuple(s.seed, s.offset);
  });
  m.def(
      "set_rng_state",
      [](py::tuple state) {
        check_value(state.size() == 2, "set_rng_state",
                    "expected the (seed, offset) pair get_rng_state returns; got ", state.size(),
                    " values");
        default_generator().set_state(
            {seed_from(state[0], "set_rng_state"), seed_from(state[1], "set_rng_state")});
      },
      py::arg("new_state"));
}

}  // namespace wick::python
