// Process-wide defaults and the tensor methods that read them: the default floating dtype
// (wick.get_default_dtype / set_default_dtype), print options (wick.set_printoptions), the
// Tensor.new_* factories that inherit a tensor's dtype and device, and Tensor.type().
//
// Note [type strings]
// PyTorch names tensor types 'torch.FloatTensor', 'torch.cuda.LongTensor', ... wick answers
// Tensor.type() with the same names under its own prefix ('wick.FloatTensor',
// 'wick.cuda.LongTensor'), and Tensor.type(str) accepts both prefixes, so code written for
// PyTorch that passes 'torch.DoubleTensor' keeps working.
#include <cmath>
#include <limits>

#include "core/print.h"
#include "python/bind_common.h"

namespace wick::python {

namespace {

struct TypeName {
  DType dtype;
  const char* name;
};
constexpr TypeName kTypeNames[] = {
    {kFloat32, "FloatTensor"},     {kFloat64, "DoubleTensor"}, {kFloat16, "HalfTensor"},
    {kBFloat16, "BFloat16Tensor"}, {kInt64, "LongTensor"},     {kInt32, "IntTensor"},
    {kUInt8, "ByteTensor"},        {kInt8, "CharTensor"},      {kBool, "BoolTensor"},
};

std::string type_string(const Tensor& t) {
  for (const TypeName& n : kTypeNames) {
    if (n.dtype == t.dtype()) {
      return std::string(t.device().is_cpu() ? "wick." : "wick.cuda.") + n.name;
    }
  }
  throw std::logic_error("[Tensor.type] no type name for dtype " +
                         std::string(dtype_name(t.dtype())));
}

// 'wick.FloatTensor', 'torch.cuda.LongTensor', ... -> (dtype, on CUDA?).
std::pair<DType, bool> parse_type_string(const std::string& s) {
  for (const char* prefix : {"wick.", "torch."}) {
    std::string p = prefix;
    if (s.compare(0, p.size(), p) != 0) continue;
    std::string rest = s.substr(p.size());
    bool cuda = rest.compare(0, 5, "cuda.") == 0;
    if (cuda) rest = rest.substr(5);
    for (const TypeName& n : kTypeNames) {
      if (rest == n.name) return {n.dtype, cuda};
    }
  }
  throw py::value_error(
      "[Tensor.type] invalid type: '" + s +
      "' (expected a name such as 'wick.FloatTensor' or 'torch.cuda.LongTensor')");
}

// dtype and device from the keywords, each defaulting to `self`'s (PyTorch's new_* rule).
TensorOptions options_like(const Tensor& self, py::handle dtype, py::handle device,
                           bool requires_grad) {
  TensorOptions o(dtype.is_none() ? self.dtype() : to_dtype(dtype));
  o = o.with_device(device.is_none() ? self.device() : to_device(device));
  o.requires_grad = requires_grad;
  return o;
}

Tensor finish(Tensor t, const TensorOptions& o) {
  if (o.requires_grad) t.requires_grad_(true);
  return t;
}

template <Tensor (*Fn)(const Shape&, const TensorOptions&)>
void bind_new_sized(py::class_<Tensor>& cls, const char* name) {
  cls.def(
      name,
      [name](const Tensor& self, py::args size, py::handle dtype, py::handle device,
             bool requires_grad) {
        TensorOptions o = options_like(self, dtype, device, requires_grad);
        TensorOptions make = o;
        make.requires_grad = false;  // set on the result, so it is a leaf
        return finish(Fn(shape_from_args(size, name), make), o);
      },
      py::kw_only(), py::arg("dtype") = py::none(), py::arg("device") = py::none(),
      py::arg("requires_grad") = false);
}

Tensor new_empty_fn(const Shape& shape, const TensorOptions& o) { return empty(shape, o); }
Tensor new_zeros_fn(const Shape& shape, const TensorOptions& o) { return zeros(shape, o); }
Tensor new_ones_fn(const Shape& shape, const TensorOptions& o) { return ones(shape, o); }

int64_t to_count(py::handle h, const char* field) {
  // threshold=float('inf') (PyTorch's "full" profile) means never summarize.
  if (py::isinstance<py::float_>(h)) {
    double v = h.cast<double>();
    if (std::isinf(v) && v > 0) return std::numeric_limits<int64_t>::max();
    if (v != std::floor(v)) {
      throw py::type_error(std::string("[set_printoptions] ") + field +
                           " must be an int (or inf); got " + std::to_string(v));
    }
    return static_cast<int64_t>(v);
  }
  if (!py::isinstance<py::int_>(h) || py::isinstance<py::bool_>(h)) {
    throw py::type_error(std::string("[set_printoptions] ") + field + " must be an int; got " +
                         std::string(py::str(py::type::of(h).attr("__name__"))));
  }
  return h.cast<int64_t>();
}

void set_printoptions(py::handle precision, py::handle threshold, py::handle edgeitems,
                      py::handle linewidth, py::handle profile, py::handle sci_mode) {
  PrintOptions o = get_print_options();
  if (!profile.is_none()) {
    std::string p = py::str(profile);
    PrintOptions fresh;
    if (p == "short") {
      fresh.precision = 2;
      fresh.edgeitems = 2;
    } else if (p == "full") {
      fresh.threshold = std::numeric_limits<int64_t>::max();
    } else if (p != "default") {
      throw py::value_error(
          "[set_printoptions] profile must be 'default', 'short' or 'full'; got '" + p + "'");
    }
    fresh.sci_mode = o.sci_mode;
    o = fresh;
  }
  if (!precision.is_none()) o.precision = static_cast<int>(to_count(precision, "precision"));
  if (!threshold.is_none()) o.threshold = to_count(threshold, "threshold");
  if (!edgeitems.is_none()) o.edgeitems = to_count(edgeitems, "edgeitems");
  if (!linewidth.is_none()) o.linewidth = to_count(linewidth, "linewidth");
  // As in PyTorch, sci_mode is always replaced: leaving it out restores the automatic choice.
  if (sci_mode.is_none()) {
    o.sci_mode.reset();
  } else {
    o.sci_mode = PyObject_IsTrue(sci_mode.ptr()) == 1;
  }
  set_print_options(o);
}

}  // namespace

void init_defaults(py::module_& m) {
  m.def("get_default_dtype", []() { return dtype_object(get_default_dtype()); });
  m.def(
      "set_default_dtype", [](py::handle d) { set_default_dtype(to_dtype(d)); }, py::arg("d"));
  m.def("set_printoptions", &set_printoptions, py::arg("precision") = py::none(),
        py::arg("threshold") = py::none(), py::arg("edgeitems") = py::none(),
        py::arg("linewidth") = py::none(), py::arg("profile") = py::none(),
        py::arg("sci_mode") = py::none());

  auto cls = py::reinterpret_borrow<py::class_<Tensor>>(m.attr("Tensor"));
  bind_new_sized<new_empty_fn>(cls, "new_empty");
  bind_new_sized<new_zeros_fn>(cls, "new_zeros");
  bind_new_sized<new_ones_fn>(cls, "new_ones");
  cls.def(
      "new_full",
      [](const Tensor& self, py::handle size, py::handle fill_value, py::handle dtype,
         py::handle device, bool requires_grad) {
        Scalar value;
        if (!try_scalar(fill_value, value)) {
          throw py::type_error("[new_full] argument 'fill_value' must be a number; got " +
                               std::string(py::str(py::type::of(fill_value).attr("__name__"))));
        }
        TensorOptions o = options_like(self, dtype, device, requires_grad);
        TensorOptions make = o;
        make.requires_grad = false;
        return finish(full(to_shape(size, "new_full"), value, make), o);
      },
      py::arg("size"), py::arg("fill_value"), py::kw_only(), py::arg("dtype") = py::none(),
      py::arg("device") = py::none(), py::arg("requires_grad") = false);
  cls.def(
      "new_tensor",
      [](const Tensor& self, py::handle data, py::handle dtype, py::handle device,
         bool requires_grad) {
        // Always a copy, detached from any graph, as PyTorch's new_tensor; wick.tensor() does
        // the reading of nested lists, NumPy arrays and tensors.
        py::object d = dtype.is_none() ? dtype_object(self.dtype())
                                       : py::reinterpret_borrow<py::object>(dtype);
        py::object dev =
            device.is_none() ? py::cast(self.device()) : py::reinterpret_borrow<py::object>(device);
        return py::module_::import("wick._C").attr("tensor")(
            data, py::arg("dtype") = d, py::arg("device") = dev,
            py::arg("requires_grad") = requires_grad);
      },
      py::arg("data"), py::kw_only(), py::arg("dtype") = py::none(), py::arg("device") = py::none(),
      py::arg("requires_grad") = false);
  cls.def(
      "type",
      // `self` stays a Python object so that a cast to the tensor's own type returns the same
      // object, as PyTorch's does (Note [tensor identity]).
      [](py::object self_obj, py::handle dtype, bool, py::kwargs) -> py::object {
        const Tensor& self = self_obj.cast<const Tensor&>();
        if (dtype.is_none()) return py::str(type_string(self));
        DType d;
        Device target = self.device();
        if (py::isinstance<py::str>(dtype)) {
          auto [parsed, cuda] = parse_type_string(dtype.cast<std::string>());
          d = parsed;
          if (!cuda) {
            target = Device(kCPU);
          } else if (self.device().is_cpu()) {
            target = Device(kCUDA);
          }
        } else {
          d = to_dtype(dtype);
        }
        if (d == self.dtype() && target == self.device()) return self_obj;
        return py::cast(self.to(target, d));
      },
      py::arg("dtype") = py::none(), py::arg("non_blocking") = false);
}

}  // namespace wick::python
