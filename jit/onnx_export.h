// ONNX export: a traced graph (jit/graph.h) written as an ONNX model with ONNX's own protobuf
// classes, so that ONNX Runtime (or any ONNX consumer) runs a wick model. PyTorch's
// torch.onnx.export has the same shape: trace, clean the graph, translate op by op.
// docs/deployment.md describes the design; Note [ONNX export] in onnx_export.cpp the steps.
// wick's only exporter: wick.onnx.export (python/wick/onnx/_export.py) hands a Python model's
// forward to the first export_onnx below (Note [one ONNX exporter]).
//
// Built only when libonnx-dev and libprotobuf-dev are installed (scripts/setup.sh):
// onnx_export_available() says whether this build has it, and without it the entry points throw
// std::runtime_error.
#pragma once

#include <string>
#include <vector>

#include "jit/trace.h"

namespace wick::nn {
class Module;
}

namespace wick::jit {

struct OnnxExportOptions {
  int opset_version = 17;  // 17 or later (LayerNormalization's opset; Shape with start/end)
  // Dim 0 of every input and output becomes the symbolic "batch": the model is traced at the
  // example's batch N and at N + 1 (Note [dynamic batch in ONNX]).
  bool dynamic_batch = true;
  // Parameters become constants and everything computed from constants alone is folded,
  // batch norm into the preceding convolution included (the inference passes of jit/passes/).
  bool constant_folding = true;
  std::vector<std::string> input_names;   // default "input" (or "input0", "input1", ...)
  std::vector<std::string> output_names;  // default "output" (or "output0", ...)
  std::string graph_name = "wick";        // the module overload writes "wick_<type name>"
};

bool onnx_export_available();

// Traces `fn` on `example_inputs` (with grad mode off; `params` are the named parameters and
// buffers, which become initializers under their names), runs the inference passes and writes
// the ONNX model to `path` once ONNX's checker accepts it. Throws std::runtime_error naming the
// op and the module path for an op without an ONNX translation (nothing is written then),
// std::invalid_argument for bad options or an unwritable path.
// `locate`, when given, names the module whose forward dispatches an op the exporter refuses
// (wick.onnx's Python side finds it with forward hooks); without it the error names the node.
using OpLocator = std::function<std::string(OpKey)>;
void export_onnx(const TracedFunction& fn, const std::vector<Tensor>& example_inputs,
                 const NamedTensors& params, const std::string& path,
                 const OnnxExportOptions& options = {}, const OpLocator& locate = nullptr);

// wick.onnx.export(model, args, path) for a C++ module: its forward on one input, in
// evaluation mode for the duration of the export.
void export_onnx(nn::Module& module, const std::vector<Tensor>& example_inputs,
                 const std::string& path, const OnnxExportOptions& options = {});

}  // namespace wick::jit
