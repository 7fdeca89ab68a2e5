// wick._C._nn: parameter initialisation (nn/init.h), gradient clipping and safetensors files.
// The layers' functions (bind_layers.cpp), the losses (bind_losses.cpp) and the recurrent layers
// (bind_rnn.cpp) join this submodule after it is made.
#include <pybind11/stl.h>

#include <cmath>

#include "nn/clip_grad.h"
#include "nn/init.h"
#include "nn/serialization.h"
#include "python/bind_common.h"

namespace wick::python {

namespace {

nn::init::FanMode fan_mode(const std::string& mode) {
  if (mode == "fan_in") return nn::init::FanMode::FanIn;
  if (mode == "fan_out") return nn::init::FanMode::FanOut;
  throw py::value_error("[kaiming_init] mode must be 'fan_in' or 'fan_out'; got '" + mode + "'");
}

}  // namespace

void init_nn(py::module_& root) {
  py::module_ m = root.def_submodule("_nn", "C++ layers, init and serialization for wick.nn");

  // ---- init: each fills its tensor in place and returns the same Python object ----
  auto inplace = [](py::object t) -> Tensor& { return t.cast<Tensor&>(); };
  m.def(
      "uniform_",
      [inplace](py::object t, double a, double b) {
        nn::init::uniform_(inplace(t), a, b);
        return t;
      },
      py::arg("tensor"), py::arg("a") = 0.0, py::arg("b") = 1.0);
  m.def(
      "normal_",
      [inplace](py::object t, double mean, double std) {
        nn::init::normal_(inplace(t), mean, std);
        return t;
      },
      py::arg("tensor"), py::arg("mean") = 0.0, py::arg("std") = 1.0);
  m.def(
      "constant_",
      [inplace](py::object t, double value) {
        nn::init::constant_(inplace(t), value);
        return t;
      },
      py::arg("tensor"), py::arg("val"));
  m.def(
      "zeros_",
      [inplace](py::object t) {
        nn::init::zeros_(inplace(t));
        return t;
      },
      py::arg("tensor"));
  m.def(
      "ones_",
      [inplace](py::object t) {
        nn::init::ones_(inplace(t));
        return t;
      },
      py::arg("tensor"));
  m.def(
      "xavier_uniform_",
      [inplace](py::object t, double gain) {
        nn::init::xavier_uniform_(inplace(t), gain);
        return t;
      },
      py::arg("tensor"), py::arg("gain") = 1.0);
  m.def(
      "xavier_normal_",
      [inplace](py::object t, double gain) {
        nn::init::xavier_normal_(inplace(t), gain);
        return t;
      },
      py::arg("tensor"), py::arg("gain") = 1.0);
  m.def(
      "kaiming_uniform_",
      [inplace](py::object t, double a, const std::string& mode, const std::string& nl) {
        nn::init::kaiming_uniform_(inplace(t), a, fan_mode(mode), nl);
        return t;
      },
      py::arg("tensor"), py::arg("a") = 0.0, py::arg("mode") = "fan_in",
      py::arg("nonlinearity") = "leaky_relu");
  m.def(
      "kaiming_normal_",
      [inplace](py::object t, double a, const std::string& mode, const std::string& nl) {
        nn::init::kaiming_normal_(inplace(t), a, fan_mode(mode), nl);
        return t;
      },
      py::arg("tensor"), py::arg("a") = 0.0, py::arg("mode") = "fan_in",
      py::arg("nonlinearity") = "leaky_relu");
  m.def(
      "calculate_gain",
      [](const std::string& nonlinearity, py::handle param) {
        return nn::init::calculate_gain(nonlinearity,
                                        param.is_none() ? 0.01 : param.cast<double>());
      },
      py::arg("nonlinearity"), py::arg("param") = py::none());
  m.def("calculate_fan_in_and_fan_out", &nn::init::fan_in_and_fan_out, py::arg("tensor"));

  // ---- gradient clipping ----
  m.def(
      "clip_grad_norm_",
      [](py::handle parameters, double max_norm, double norm_type, bool error_if_nonfinite) {
        std::vector<Tensor> params;
        if (const Tensor* t = try_tensor(parameters)) {
          params.push_back(*t);
        } else {
          for (py::handle p : parameters) params.push_back(to_tensor(p, "parameters"));
        }
        return nn::utils::clip_grad_norm_(params, max_norm, norm_type, error_if_nonfinite);
      },
      py::arg("parameters"), py::arg("max_norm"), py::arg("norm_type") = 2.0,
      py::arg("error_if_nonfinite") = false);

  // ---- safetensors files ----
  // A file-system error becomes the OSError Python raises for the same errno - OSError's
  // constructor picks FileNotFoundError, IsADirectoryError, PermissionError, ... - with the
  // path as its filename, as open() and torch.load do.
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const FileError& e) {
      // The path as Python's os functions decode it (surrogateescape keeps odd bytes).
      py::object path = py::reinterpret_steal<py::object>(PyUnicode_DecodeFSDefaultAndSize(
          e.path().data(), static_cast<Py_ssize_t>(e.path().size())));
      if (!path) path = py::none();
      PyErr_Clear();
      py::object error = py::reinterpret_steal<py::object>(
          PyObject_CallFunction(PyExc_OSError, "isO", e.error_number(), e.what(), path.ptr()));
      if (error) PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(error.ptr())), error.ptr());
    }
  });
  m.def(
      "save_safetensors",
      [](const std::string& path, const StateDict& tensors,
         const std::map<std::string, std::string>& metadata) {
        save_safetensors(path, tensors, metadata);
      },
      py::arg("path"), py::arg("tensors"),
      py::arg("metadata") = std::map<std::string, std::string>());
  m.def(
      "load_safetensors",
      [](const std::string& path) {
        SafetensorsFile f = load_safetensors(path);
        return py::make_tuple(f.tensors, f.metadata);
      },
      py::arg("path"));
}

}  // namespace wick::python
