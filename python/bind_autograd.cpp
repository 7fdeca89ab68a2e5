// Autograd from Python: grad mode, backward over several tensors, autograd.grad, gradcheck.
// wick/autograd/ builds the PyTorch-shaped API (no_grad as a context manager and decorator,
// enable_grad, set_grad_enabled) on these.
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include "python/bind_common.h"

namespace wick::python {

namespace {

// A tensor, or a sequence of tensors, as a list.
TensorList tensor_list(py::handle h, const char* what, bool allow_none = false) {
  TensorList out;
  if (h.is_none()) return out;
  if (const Tensor* t = try_tensor(h)) return {*t};
  for (py::handle item : h) {
    if (allow_none && item.is_none()) {
      out.push_back(Tensor());
    } else {
      out.push_back(to_tensor(item, what));
    }
  }
  return out;
}

// The Python function's result as one tensor: several outputs are flattened and concatenated,
// which gives the same Jacobian rows as checking them one by one.
Tensor single_output(py::handle result) {
  if (const Tensor* t = try_tensor(result)) return *t;
  TensorList parts;
  for (py::handle item : result)
    parts.push_back(to_tensor(item, "gradcheck output").reshape(Shape{-1}));
  check_value(!parts.empty(), "gradcheck", "the function returned no tensors");
  return cat(parts, 0);
}

// A Python function of tensors as the C++ function gradcheck differentiates.
std::function<Tensor(const TensorList&)> as_tensor_function(const py::function& fn) {
  return [fn](const TensorList& args) {
    py::tuple py_args(args.size());
    for (size_t i = 0; i < args.size(); ++i) py_args[i] = py::cast(args[i]);
    return single_output(fn(*py_args));
  };
}

}  // namespace

void warn_create_graph_cycle() {
  PyErr_WarnEx(PyExc_UserWarning,
               "backward() with create_graph=True makes a reference cycle between each parameter "
               "and its .grad (the gradient's graph holds the parameter); set .grad to None after "
               "use to free it, or use wick.autograd.grad, which writes no .grad",
               1);
}

void init_autograd(py::module_& m) {
  m.def("is_grad_enabled", &GradMode::is_enabled);
  m.def("_set_grad_enabled", &GradMode::set_enabled, py::arg("mode"));

  m.def(
      "_backward",
      [](py::handle tensors, py::handle grad_tensors, py::handle retain_graph, bool create_graph) {
        TensorList outputs = tensor_list(tensors, "tensors");
        TensorList grads = tensor_list(grad_tensors, "grad_tensors", true);
        bool retain = retain_graph.is_none() ? create_graph : retain_graph.cast<bool>();
        if (create_graph) warn_create_graph_cycle();
        for (size_t i = 0; i < outputs.size(); ++i) {
          check_state(outputs[i].requires_grad(), "backward", "element ", i,
                      " of tensors does not require grad and does not have a grad_fn");
        }
        py::gil_scoped_release release;  // Note [GIL rules]
        autograd::backward(outputs, grads, retain, create_graph);
      },
      py::arg("tensors"), py::arg("grad_tensors") = py::none(),
      py::arg("retain_graph") = py::none(), py::arg("create_graph") = false);

  m.def(
      "_grad",
      [](py::handle outputs, py::handle inputs, py::handle grad_outputs, py::handle retain_graph,
         bool allow_unused, bool create_graph) {
        TensorList outs = tensor_list(outputs, "outputs");
        TensorList ins = tensor_list(inputs, "inputs");
        TensorList grads = tensor_list(grad_outputs, "grad_outputs", true);
        bool retain = retain_graph.is_none() ? create_graph : retain_graph.cast<bool>();
        TensorList result;
        {
          py::gil_scoped_release release;
          result = autograd::grad(outs, ins, grads, retain, allow_unused, create_graph);
        }
        py::tuple out(result.size());
        for (size_t i = 0; i < result.size(); ++i) out[i] = wrap(result[i]);
        return out;
      },
      py::arg("outputs"), py::arg("inputs"), py::arg("grad_outputs") = py::none(),
      py::arg("retain_graph") = py::none(), py::arg("allow_unused") = false,
      py::arg("create_graph") = false);

  m.def(
      "_gradcheck",
      [](py::function fn, py::handle inputs, double eps, double atol, double rtol) {
        return gradcheck(as_tensor_function(fn), tensor_list(inputs, "inputs"),
                         GradcheckOptions{eps, atol, rtol});
      },
      py::arg("func"), py::arg("inputs"), py::arg("eps") = 1e-6, py::arg("atol") = 1e-5,
      py::arg("rtol") = 1e-3);

  m.def(
      "_gradgradcheck",
      [](py::function fn, py::handle inputs, py::handle grad_output, double eps, double atol,
         double rtol) {
        Tensor seed = grad_output.is_none() ? Tensor() : to_tensor(grad_output, "grad_outputs");
        return gradgradcheck(as_tensor_function(fn), tensor_list(inputs, "inputs"), seed,
                             GradcheckOptions{eps, atol, rtol});
      },
      py::arg("func"), py::arg("inputs"), py::arg("grad_output") = py::none(),
      py::arg("eps") = 1e-6, py::arg("atol") = 1e-5, py::arg("rtol") = 1e-3);
}

}  // namespace wick::python
