// What every bind_<area>.cpp shares: the init functions module.cpp calls, and the conversions
// between Python values and wick's C++ types (dtypes, devices, shapes, scalars, dims, tensors
// that may be None).
//
// Note [GIL rules]
// The extension holds the GIL whenever it touches a Python object. It releases it only around
// long C++ work that never calls back into Python unguarded - backward(), autograd.grad() and
// waiting for a C++ DataLoader batch - so other Python threads (a Python DataLoader's workers)
// can run meanwhile. Anything C++ may call while the GIL is released - a tensor hook, a borrowed
// NumPy array's release function - acquires it first (py::gil_scoped_acquire), and every Python
// object stored inside a C++ std::function is released with the GIL held (PyCallback below).
// Small ops keep the GIL: releasing and re-taking it would cost more than the op.
#pragma once

#include <pybind11/pybind11.h>

#include <optional>
#include <string>
#include <vector>

#include "wick.h"

// Note [uninitialized tensors]
// `wick.Tensor.__new__(wick.Tensor)` makes a Python object whose C++ Tensor was never constructed
// (pybind11 constructs it in __init__), and a C++ function may hand back an undefined Tensor.
// Every binding receives its tensors through this caster, so it is the one place that refuses
// both: a clear RuntimeError instead of a method reading through a null or garbage pointer. Every
// bind_*.cpp includes this header, so they all see the same caster.
namespace pybind11::detail {
template <>
class type_caster<wick::Tensor> : public type_caster_base<wick::Tensor> {
 public:
  bool load(handle src, bool convert) {
    if (!type_caster_base<wick::Tensor>::load(src, convert)) return false;
    bool constructed = value != nullptr;
    if (constructed && isinstance<wick::Tensor>(src)) {
      // An instance's value pointer is not reliably null before __init__; its holder flag is.
      auto* inst = reinterpret_cast<instance*>(src.ptr());
      value_and_holder v_h = inst->get_value_and_holder(get_type_info(typeid(wick::Tensor)), false);
      constructed = v_h && v_h.holder_constructed();
    }
    if (!constructed || !static_cast<const wick::Tensor*>(value)->defined()) {
      throw std::runtime_error(
          "[Tensor] this wick.Tensor holds no tensor (it was made with Tensor.__new__ without "
          "__init__, or is undefined); create tensors with wick.tensor(), wick.empty() or "
          "wick.Tensor()");
    }
    return true;
  }
};
}  // namespace pybind11::detail

namespace wick::python {

namespace py = pybind11;

// ---- init functions, one per bind_<area>.cpp (module.cpp calls them in this order) ----
void init_types(py::module_& m);       // bind_types.cpp: dtype, device, errors, Size hook
void init_tensor(py::module_& m);      // bind_tensor.cpp: the Tensor class and its metadata
void init_tensor_ops(py::module_& m);  // bind_tensor_ops.cpp: elementwise math and operators
void init_shape_ops(py::module_& m);   // bind_shape_ops.cpp: shapes, reductions, matmul, index
void init_indexing(py::module_& m);    // bind_indexing.cpp: __getitem__ / __setitem__
void init_creation(py::module_& m);    // bind_creation.cpp: tensor(), zeros(), ..., tolist()
void init_interop(py::module_& m);     // bind_interop.cpp: NumPy and DLPack
void init_autograd(py::module_& m);    // bind_autograd.cpp
void init_nn(py::module_& m);          // bind_nn.cpp: the _nn submodule: init, clip_grad, save/load
void init_layers(py::module_& m);      // bind_layers.cpp: the layers' functions, by kind
void init_losses(py::module_& m);      // bind_losses.cpp
void init_optim(py::module_& m);       // bind_optim.cpp
void init_rnn(py::module_& m);         // bind_rnn.cpp: recurrent layers and cells
void init_data(py::module_& m);        // bind_data.cpp

// bind_distributed.cpp: process groups, collectives and DDP's Reducer.
void init_distributed(py::module_& m);
// bind_amp.cpp: autocast scopes and the GradScaler.
void init_amp(py::module_& m);
// bind_cuda.cpp: devices, streams, events, allocator statistics, math modes (wick.cuda).
void init_cuda(py::module_& m);
void init_op_table(py::module_& m);  // bind_op_table.cpp: _ops(), _backends(), _missing_kernels()
void init_env(py::module_& m);       // bind_env.cpp: _env_facts(), _env_checks() (envreport/)
// bind_composites.cpp: tril, flip, einsum, scatter, unique, multinomial, Generator...
void init_composites(py::module_& m);
// bind_defaults.cpp: default dtype, print options, Tensor.new_* and Tensor.type().
void init_defaults(py::module_& m);
// bind_attention.cpp: scaled dot-product and multi-head attention (wick._C._attention)
void init_attention(py::module_& m);

// Note [one-line TypeErrors]
// When no overload of a bound function accepts the arguments, pybind11 raises a TypeError that
// lists every overload's signature and the reprs of the arguments, over many lines. wick raises
// one line instead, naming the function, the types passed and the expected signature:
//
//   Tensor.add(): got (str); expected Tensor.add(other: object, alpha: object = 1) -> Tensor
//
// One mechanism for the whole module, installed last by module.cpp: every pybind11 function
// object of wick._C (module functions, methods, constructors, static methods, property
// accessors, in submodules too) is pointed at a dispatcher that calls pybind11's and, only when
// that fails with its overload dump, rewrites the message. A valid call pays one extra direct
// call and a null check; pybind11's overload resolution (a no-conversion pass, then a converting
// one) is unchanged, which a catch-all (py::args, py::kwargs) overload would break: it would win
// the no-conversion pass over an overload that needs an int -> float conversion.
void install_one_line_type_errors(py::module_& m);  // type_errors.cpp

// ---- conversions ----

// The Python object for a dtype: one object per dtype, so `x.dtype is wick.float32` holds.
py::object dtype_object(DType dtype);
// A wick.dtype, a NumPy dtype or type, or Python's bool/int/float (float means float64, as in
// PyTorch's dtype=float). TypeError for anything else.
DType to_dtype(py::handle h);
std::optional<DType> to_optional_dtype(py::handle h);  // None -> nullopt
// A wick.device, "cpu", "cuda", "cuda:1", or an int (a CUDA index).
Device to_device(py::handle h);

// A Python bool, int or float (or a NumPy scalar); false when `h` is none of these.
bool try_scalar(py::handle h, Scalar& out);
Scalar to_scalar(py::handle h, const char* what);

// The Tensor inside `h`, or nullptr when `h` is not a wick.Tensor. Valid while `h` lives.
const Tensor* try_tensor(py::handle h);
const Tensor& to_tensor(py::handle h, const char* what);

// A wick.Tensor for `t`, or None when t is undefined (no gradient, no grad_fn, no bias).
py::object wrap(Tensor t);
// An optional tensor argument: None -> undefined Tensor.
Tensor optional_tensor(py::handle h, const char* what);

// PyTorch's warning for backward(create_graph=True): .grad then holds a graph that holds the
// parameter, a reference cycle that lives until .grad is set to None.
void warn_create_graph_cycle();

// A shape from `zeros(2, 3)`, `zeros((2, 3))`, `zeros([2, 3])` or `zeros(wick.Size(...))`:
// `args` is the positional arguments. Negative sizes raise ValueError; element counts that
// overflow are refused by the op (RuntimeError, Note [checked sizes]). `allow_minus_one` lets one
// -1 through (reshape, view, expand).
Shape shape_from_args(const py::args& args, const char* op, bool allow_minus_one = false);
Shape to_shape(py::handle h, const char* op, bool allow_minus_one = false);
// A dim argument: None (all dims, empty list), an int, or a tuple/list of ints.
DimList to_dims(py::handle h);
// An int or a (h, w) pair for conv and pooling arguments.
Pair2 to_pair(py::handle h, const char* what);

// A tuple-like wick.Size for a shape (the class is set by wick/__init__.py; a plain tuple
// before that).
py::object size_object(const Shape& shape);
void set_size_class(py::object cls);

// A Python callable kept inside a C++ std::function: called and destroyed with the GIL held
// (Note [GIL rules]).
class PyCallback {
 public:
  explicit PyCallback(py::function fn);
  PyCallback(const PyCallback& other);
  PyCallback& operator=(const PyCallback&) = delete;
  ~PyCallback();
  py::object call(py::handle arg) const;  // acquires the GIL

 private:
  PyObject* fn_;
};

// Python float / int / bool for a one-element tensor's value, by its dtype.
py::object scalar_to_python(const Tensor& t);

// Binds f as the Tensor method `name` and as the function wick.name(input, ...), as PyTorch
// offers most ops both ways.
template <class F, class... Extra>
void bind_both(py::class_<Tensor>& cls, py::module_& m, const char* name, F f,
               const Extra&... extra) {
  cls.def(name, f, extra...);
  m.def(name, f, py::arg("input"), extra...);
}

}  // namespace wick::python
