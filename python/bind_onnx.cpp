// wick._C._onnx: the ONNX exporter of jit/onnx_export.h, which wick.onnx.export
// (python/wick/onnx/_export.py) calls with the model's forward and a module locator
// (Note [one ONNX exporter] in jit/onnx_export.cpp).
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include "core/op_table.h"
#include "jit/onnx_export.h"
#include "python/bind_common.h"

namespace wick::python {

void init_onnx(py::module_& root) {
  py::module_ m = root.def_submodule("_onnx", "ONNX export (jit/onnx_export.h)");
  m.def("available", &jit::onnx_export_available,
        "whether this build has ONNX export (libonnx-dev and libprotobuf-dev)");
  m.def(
      "export",
      [](const py::function& fn, const std::vector<Tensor>& inputs, const jit::NamedTensors& params,
         const std::string& path, int opset_version, bool dynamic_batch, bool constant_folding,
         const std::vector<std::string>& input_names, const std::vector<std::string>& output_names,
         const std::string& graph_name, const py::object& locate) {
        jit::TracedFunction call = [&fn](const std::vector<Tensor>& xs) {
          return fn(xs).cast<std::vector<Tensor>>();
        };
        jit::OnnxExportOptions options;
        options.opset_version = opset_version;
        options.dynamic_batch = dynamic_batch;
        options.constant_folding = constant_folding;
        options.input_names = input_names;
        options.output_names = output_names;
        options.graph_name = graph_name;
        jit::OpLocator where;
        if (!locate.is_none()) {
          where = [&locate](OpKey op) {
            return locate(std::string(op_info(op).name)).cast<std::string>();
          };
        }
        jit::export_onnx(call, inputs, params, path, options, where);
      },
      py::arg("fn"), py::arg("example_inputs"), py::arg("params"), py::arg("path"),
      py::arg("opset_version"), py::arg("dynamic_batch"), py::arg("constant_folding"),
      py::arg("input_names"), py::arg("output_names"), py::arg("graph_name") = "wick",
      py::arg("locate") = py::none(),
      "the exporter behind wick.onnx.export; `locate(op_name)` names the module of an op that "
      "has no ONNX form");
}

}  // namespace wick::python
