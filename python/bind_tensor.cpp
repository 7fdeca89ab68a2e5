// The wick.Tensor class: metadata (shape, dtype, device, strides), autograd attributes (grad,
// requires_grad, grad_fn, is_leaf, hooks), conversions (.to(), .cpu(), .float(), item(),
// tolist()), and the Python protocols (repr, bool, len, iter, format, hash). The math lives in
// bind_tensor_ops.cpp, indexing in bind_indexing.cpp.
//
// Note [tensor identity]
// A wick.Tensor Python object holds a wick::Tensor handle (a shared pointer to the TensorImpl).
// Two Python objects may hold handles to the same TensorImpl: `x.grad` returns a new Python
// object each time, but both are the same tensor, exactly as two C++ handles are. Python-side
// identity matters only where Python code keeps the object (a Module's Parameters, an
// optimizer's param list), and there the same Python object is kept.
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <memory>

#include "autograd/meta.h"
#include "cuda/api.h"
#include "python/bind_common.h"
#include "python/host_read.h"

namespace wick::python {

namespace {

// The handle register_hook returns; remove() turns the hook into a no-op (the C++ engine has no
// removal, so the hook stays registered but stops acting).
struct HookHandle {
  std::shared_ptr<bool> active = std::make_shared<bool>(true);
  void remove() { *active = false; }
};

// PyTorch's repr: "tensor([1., 2.], dtype=wick.float64, requires_grad=True)".
std::string tensor_repr(const Tensor& t) {
  std::string s = t.str();
  const std::string key = ", dtype=";
  size_t pos = s.find(key);
  if (pos != std::string::npos) s.insert(pos + key.size(), "wick.");
  return s;
}

py::list to_list(const Tensor& host, int64_t dim, int64_t offset) {
  int64_t n = host.size(dim);
  int64_t stride = host.strides()[dim];
  py::list out(n);
  bool last = dim == host.dim() - 1;
  for (int64_t i = 0; i < n; ++i) {
    int64_t at = offset + i * stride;
    if (!last) {
      out[i] = to_list(host, dim + 1, at);
      continue;
    }
    const char* base = static_cast<const char*>(host.storage()->data());
    visit_dtype(host.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      T v = reinterpret_cast<const T*>(base)[at];
      if constexpr (std::is_same_v<T, bool>) {
        out[i] = py::bool_(v);
      } else if constexpr (std::is_integral_v<T>) {
        out[i] = py::int_(static_cast<int64_t>(v));
      } else {
        out[i] = py::float_(static_cast<double>(static_cast<compute_t<T>>(v)));
      }
    });
  }
  return out;
}

py::object tolist(const Tensor& t) {
  Tensor host = t.detach().cpu().contiguous();
  if (host.dim() == 0) return scalar_to_python(host);
  return to_list(host, 0, host.offset());
}

// .to(dtype), .to(device), .to(device, dtype), .to(other), with keyword forms; copy=True
// always copies. non_blocking=True lets a copy from pinned memory to a GPU return before it has
// run (cuda::NonBlockingCopies); otherwise copies are synchronous.
Tensor tensor_to(const Tensor& self, py::args args, py::kwargs kwargs) {
  Device device = self.device();
  DType dtype = self.dtype();
  bool copy = false, non_blocking = false;
  for (py::handle a : args) {
    if (const Tensor* other = try_tensor(a)) {
      device = other->device();
      dtype = other->dtype();
    } else if (py::isinstance<py::str>(a) || py::isinstance<Device>(a)) {
      device = to_device(a);
    } else {
      dtype = to_dtype(a);
    }
  }
  for (auto item : kwargs) {
    std::string key = py::str(item.first);
    if (key == "dtype") {
      if (!item.second.is_none()) dtype = to_dtype(item.second);
    } else if (key == "device") {
      if (!item.second.is_none()) device = to_device(item.second);
    } else if (key == "copy") {
      copy = item.second.cast<bool>();
    } else if (key == "non_blocking") {
      non_blocking = item.second.cast<bool>();
    } else if (key != "memory_format") {
      throw py::type_error("[to] got an unexpected keyword argument '" + key + "'");
    }
  }
  cuda::NonBlockingCopies copies(non_blocking);
  Tensor out = self.to(device, dtype);
  if (copy && out.is_same(self)) out = self.clone();
  return out;
}

}  // namespace

void init_tensor(py::module_& m) {
  py::class_<HookHandle>(m, "RemovableHandle").def("remove", &HookHandle::remove);

  py::class_<Tensor> cls(m, "Tensor", "A multi-dimensional array with autograd (torch.Tensor).");
  // Tensor(other) shares other's data (a new handle to the same TensorImpl); this is what
  // Parameter.__init__ builds on. Tensor() is an empty float32 tensor, like torch.Tensor().
  cls.def(py::init([]() { return empty(Shape{0}); }))
      .def(py::init([](const Tensor& other) { return other; }), py::arg("other"));

  // ---- metadata ----
  cls.def_property_readonly("shape", [](const Tensor& t) { return size_object(t.shape()); })
      .def(
          "size",
          [](const Tensor& t, py::object dim) -> py::object {
            if (dim.is_none()) return size_object(t.shape());
            return py::int_(t.size(dim.cast<int64_t>()));
          },
          py::arg("dim") = py::none())
      .def(
          "stride",
          [](const Tensor& t, py::object dim) -> py::object {
            if (!dim.is_none()) return py::int_(t.stride(dim.cast<int64_t>()));
            return py::tuple(py::cast(t.strides().vec()));
          },
          py::arg("dim") = py::none())
      .def("dim", &Tensor::dim)
      .def("ndimension", &Tensor::dim)
      .def_property_readonly("ndim", &Tensor::dim)
      .def("numel", &Tensor::numel)
      .def("nelement", &Tensor::numel)
      .def("element_size", &Tensor::element_size)
      .def_property_readonly("itemsize", &Tensor::element_size)
      .def_property_readonly("nbytes", &Tensor::nbytes)
      .def("storage_offset", &Tensor::offset)
      .def("data_ptr", [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.data_ptr()); })
      .def("is_contiguous", [](const Tensor& t, py::kwargs) { return t.is_contiguous(); })
      .def("is_floating_point", &Tensor::is_floating_point)
      .def_property_readonly("dtype", [](const Tensor& t) { return dtype_object(t.dtype()); })
      .def_property_readonly("device", &Tensor::device)
      .def_property_readonly("is_cuda", [](const Tensor& t) { return t.device().is_cuda(); })
      .def_property_readonly("is_cpu", [](const Tensor& t) { return t.device().is_cpu(); })
      .def("get_device",
           [](const Tensor& t) { return t.device().is_cpu() ? -1 : t.device().index; })
      .def("_version", &Tensor::version)
      .def("_is_view", [](const Tensor& t) { return t.impl()->is_view; });

  // ---- autograd attributes ----
  cls.def_property("requires_grad", &Tensor::requires_grad,
                   [](Tensor& t, bool value) { t.requires_grad_(value); })
      .def(
          "requires_grad_",
          [](py::object self, bool value) {
            self.cast<Tensor&>().requires_grad_(value);
            return self;
          },
          py::arg("requires_grad") = true)
      .def_property(
          "grad", [](const Tensor& t) { return wrap(t.grad()); },
          [](const Tensor& t, py::handle g) { t.set_grad(optional_tensor(g, "grad")); })
      .def_property_readonly("grad_fn", &Tensor::grad_fn)
      .def_property_readonly("is_leaf", &Tensor::is_leaf)
      .def_property_readonly("retains_grad", &Tensor::retains_grad)
      .def("retain_grad", &Tensor::retain_grad)
      .def("detach", &Tensor::detach)
      .def("detach_",
           [](py::object self) {
             Tensor& t = self.cast<Tensor&>();
             AutogradMeta* meta = autograd_meta_if_exists(t);
             if (meta != nullptr) meta->grad_fn = nullptr;
             t.impl()->requires_grad = false;
             return self;
           })
      // .data: the same storage without history; assigning swaps the data under the same
      // tensor (Tensor::set_data), as `param.data = ...` does in PyTorch.
      .def_property(
          "data", [](const Tensor& t) { return t.detach(); },
          [](const Tensor& t, const Tensor& source) { t.set_data(source); })
      .def(
          "backward",
          [](const Tensor& t, py::handle gradient, py::handle retain, py::handle create_graph,
             py::handle inputs) {
            bool create = !create_graph.is_none() && create_graph.cast<bool>();
            bool retain_graph = retain.is_none() ? create : retain.cast<bool>();
            if (create) warn_create_graph_cycle();
            if (!inputs.is_none()) throw py::value_error("[backward] inputs= is not supported");
            Tensor g = optional_tensor(gradient, "gradient");
            check_state(t.requires_grad(), "backward",
                        "element 0 of tensors does not require grad and does not have a "
                        "grad_fn");
            py::gil_scoped_release release;  // Note [GIL rules]
            t.backward(g, retain_graph, create);
          },
          py::arg("gradient") = py::none(), py::arg("retain_graph") = py::none(),
          py::arg("create_graph") = py::none(), py::arg("inputs") = py::none())
      .def(
          "register_hook",
          [](const Tensor& t, py::function fn) {
            HookHandle handle;
            auto callback = std::make_shared<PyCallback>(std::move(fn));
            std::shared_ptr<bool> active = handle.active;
            t.register_hook([callback, active](const Tensor& grad) -> Tensor {
              if (!*active) return Tensor();
              py::gil_scoped_acquire gil;
              py::object result = callback->call(py::cast(grad));
              if (result.is_none()) return Tensor();
              const Tensor& replaced = to_tensor(result, "the value a hook returns");
              check_value(replaced.shape() == grad.shape(), "register_hook",
                          "the hook returned a gradient of shape ", replaced.shape(),
                          " for a gradient of shape ", grad.shape());
              return replaced;
            });
            return handle;
          },
          py::arg("hook"))
      .def(
          "register_post_accumulate_grad_hook",
          [](const Tensor& t, py::function fn) {
            HookHandle handle;
            auto callback = std::make_shared<PyCallback>(std::move(fn));
            std::shared_ptr<bool> active = handle.active;
            t.register_post_accumulate_grad_hook([callback, active](const Tensor& leaf) {
              if (!*active) return;
              py::gil_scoped_acquire gil;
              callback->call(py::cast(leaf));
            });
            return handle;
          },
          py::arg("hook"))
      // Note [freed storage] (core/storage.h): PyTorch's untyped_storage().resize_(0) / (n).
      .def("_free_storage", [](const Tensor& t) { t.storage()->free_memory(); })
      .def("_alloc_storage", [](const Tensor& t) { t.storage()->allocate_memory(); })
      .def("_is_storage_freed", [](const Tensor& t) { return t.storage()->memory_freed(); });

  // ---- conversions ----
  cls.def("to", &tensor_to)
      .def("cpu", &Tensor::cpu)
      .def(
          "cuda",
          [](const Tensor& t, py::handle device, bool) {
            Device d = device.is_none() ? Device(kCUDA) : to_device(device);
            return t.to(d);
          },
          py::arg("device") = py::none(), py::arg("non_blocking") = false)
      .def("pin_memory", [](const Tensor& t) { return cuda::pin_memory(t); })
      .def("is_pinned", [](const Tensor& t) { return cuda::is_pinned(t); })
      .def(
          "record_stream",
          [](const Tensor& t, const cuda::Stream& s) { cuda::record_stream(t, s); },
          py::arg("stream"))
      .def("type_as", [](const Tensor& t, const Tensor& o) { return t.to(o.dtype()); })
      .def("float", [](const Tensor& t) { return t.to(kFloat32); })
      .def("double", [](const Tensor& t) { return t.to(kFloat64); })
      .def("half", [](const Tensor& t) { return t.to(kFloat16); })
      .def("bfloat16", [](const Tensor& t) { return t.to(kBFloat16); })
      .def("long", [](const Tensor& t) { return t.to(kInt64); })
      .def("int", [](const Tensor& t) { return t.to(kInt32); })
      .def("byte", [](const Tensor& t) { return t.to(kUInt8); })
      .def("char", [](const Tensor& t) { return t.to(kInt8); })
      .def("bool", [](const Tensor& t) { return t.to(kBool); })
      .def("contiguous", [](const Tensor& t, py::kwargs) { return t.contiguous(); })
      .def("clone", [](const Tensor& t, py::kwargs) { return t.clone(); })
      .def("item",
           [](const Tensor& t) {
             note_host_read_from_python("item()");
             return scalar_to_python(t);
           })
      .def("tolist", [](const Tensor& t) {
        note_host_read_from_python("tolist()");
        return tolist(t);
      });

  // ---- Python protocols ----
  cls.def("__repr__", &tensor_repr)
      .def("__str__", &tensor_repr)
      .def("__bool__",
           [](const Tensor& t) {
             check_state(t.numel() == 1, "bool",
                         "the boolean value of a tensor with more than one value is ambiguous");
             note_host_read_from_python("bool(t)");
             return t.item().to<bool>();
           })
      .def("__float__",
           [](const Tensor& t) {
             note_host_read_from_python("float(t)");
             return t.item().to_double();
           })
      .def("__int__",
           [](const Tensor& t) {
             note_host_read_from_python("int(t)");
             return t.item().to<int64_t>();
           })
      .def("__index__",
           [](const Tensor& t) {
             check_type(!t.is_floating_point() && t.dtype() != kBool && t.numel() == 1, "index",
                        "only integer tensors of a single element can be converted to an index");
             note_host_read_from_python("an index");
             return t.item().to_int();
           })
      .def("__len__",
           [](const Tensor& t) {
             if (t.dim() == 0) throw py::type_error("[len] len() of a 0-d tensor");
             return t.size(0);
           })
      .def("__iter__",
           [](const Tensor& t) {
             if (t.dim() == 0) throw py::type_error("[iter] iteration over a 0-d tensor");
             py::list rows(t.size(0));
             for (int64_t i = 0; i < t.size(0); ++i) rows[i] = py::cast(t.select(0, i));
             return py::iter(rows);
           })
      .def("__format__",
           [](const Tensor& t, const std::string& spec) -> py::object {
             if (t.numel() == 1 && t.dim() == 0 && !spec.empty()) {
               py::object value = scalar_to_python(t);
               PyObject* out = PyObject_Format(value.ptr(), py::str(spec).ptr());
               if (out == nullptr) throw py::error_already_set();
               return py::reinterpret_steal<py::str>(out);
             }
             return py::str(tensor_repr(t));
           })
      .def("__hash__", [](py::handle self) { return reinterpret_cast<intptr_t>(self.ptr()); })
      .def("__copy__", [](const Tensor& t) { return t; })
      .def("__deepcopy__", [](const Tensor& t, py::handle) {
        Tensor c = t.detach().clone();
        if (t.requires_grad() && t.is_leaf()) c.requires_grad_(true);
        return c;
      });

  // ---- autograd graph nodes (grad_fn) ----
  py::class_<Node, std::shared_ptr<Node>>(m, "Node", "A backward function in the autograd graph.")
      .def("name", [](const Node& n) { return std::string(n.name()); })
      .def_property_readonly("next_functions",
                             [](const Node& n) {
                               py::tuple out(n.next.size());
                               for (size_t i = 0; i < n.next.size(); ++i) {
                                 out[i] = py::make_tuple(
                                     n.next[i] ? py::cast(n.next[i]) : py::none(), 0);
                               }
                               return out;
                             })
      .def("__repr__", [](const Node& n) { return "<" + std::string(n.name()) + " object>"; });
}

}  // namespace wick::python
