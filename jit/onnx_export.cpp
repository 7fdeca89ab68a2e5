#include "jit/onnx_export.h"

#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include <deque>
#include <filesystem>
#include <fstream>

#include "core/dispatch_observer.h"
#include "core/error.h"
#include "core/grad_mode.h"
#include "core/ops/join.h"
#include "jit/onnx_emit.h"
#include "jit/passes/passes.h"
#include "nn/module.h"

namespace wick::jit {

// Note [ONNX export]
// export_onnx traces the model (jit::trace, grad mode off), runs the inference passes that leave
// a clean graph - functionalization (no copies of ReLU(inplace=True)), dead code, and with
// constant folding: parameters frozen, everything computed from constants alone folded,
// batch norm folded into the convolution before it - but not elementwise fusion, whose fused
// nodes ONNX would not know. Then onnx_detail::Emitter walks the nodes in order: a kernel
// becomes the ONNX operator of its op-table row's export column (onnx_ops.cpp; an op with an
// empty column is refused, naming the op and the module path the tracer recorded), a view
// becomes Reshape/Slice/Transpose/Expand when something reads it (Note [views in ONNX] in
// onnx_emit.cpp). Parameters that reach the graph unchanged, or through views, are initializers
// under their state_dict names; constants the folding made are initializers of their own, and a
// constant of one repeated value is a ConstantOfShape. The model is written with the ONNX
// project's protobuf classes (onnx/onnx_pb.h), opset 17 or later, once ONNX's own checker
// accepts it: an exporter bug fails here, not in whoever loads the file.
//
// Note [one ONNX exporter]
// wick once had two exporters, this one and a Python one written with the onnx PyPI package,
// and they drifted (default names, which batch-1 inputs are grown, how views are said). Now
// wick.onnx.export is a thin face: it checks its arguments the Python way (TypeError,
// FileNotFoundError), puts the model in eval mode and hands its forward to export_onnx through
// wick._C._onnx, with a locator that finds module paths by forward hooks. Everything about the
// file is decided here, for C++ and Python callers alike, and exporting needs no onnx package.
// The cost: a build without libonnx-dev cannot export at all (onnx_export_off.cpp says so).
//
// Note [dynamic batch in ONNX]
// A trace hard-codes every shape. To give dim 0 of the inputs and outputs the symbolic size
// "batch", the model is traced twice: at the example's batch N and at N + 1 (the example with
// its first row repeated). Both graphs go through the same passes and the same emitter, which
// must produce the same ONNX nodes (else "the model's graph depends on the batch size"); only
// the int64 vectors the nodes take (Reshape's shape, ConstantOfShape's, Slice's bounds) may
// differ. The merge keeps the first trace's model and rewrites those vectors: in a Reshape,
// the one dim that differs becomes -1; any other dim that differs must be c * N in the first
// trace and c * (N + 1) in the second, and is computed at run time as c times dim 0 of the first
// input (Shape, Mul, Concat). Slice bounds must not differ.

namespace {

using onnx_detail::Emitter;
using onnx_detail::ShapeConst;

constexpr const char* kOp = "wick.onnx.export";

std::shared_ptr<Graph> prepared(const TracedFunction& fn, const std::vector<Tensor>& inputs,
                                const NamedTensors& params, const OnnxExportOptions& options) {
  std::shared_ptr<Graph> g = trace(fn, inputs, params);
  functionalize(*g);
  eliminate_dead_code(*g);
  if (options.constant_folding) {
    freeze_parameters(*g, params);
    fold_constants(*g);
    fold_conv_batchnorm(*g);
    fold_constants(*g);
  }
  eliminate_dead_code(*g);
  g->check();
  return g;
}

onnx::TensorProto* int64_initializer(onnx::GraphProto& graph, const std::string& name,
                                     const std::vector<int64_t>& dims) {
  onnx::TensorProto* t = graph.add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto_DataType_INT64);
  t->add_dims(static_cast<int64_t>(dims.size()));
  for (int64_t d : dims) t->add_int64_data(d);
  return t;
}

// Merges the second trace's vectors into the first's model (Note [dynamic batch in ONNX]).
class BatchMerge {
 public:
  BatchMerge(onnx::GraphProto& graph, const Graph& g, int64_t batch)
      : graph_(graph), g_(g), batch_(batch) {}

  void shape(const ShapeConst& a, const ShapeConst* b) {
    std::vector<int64_t> dims = a.dims;
    std::vector<int64_t> differ;
    if (b != nullptr) {
      for (size_t d = 0; d < dims.size(); ++d) {
        if (a.dims[d] != b->dims[d]) differ.push_back(static_cast<int64_t>(d));
      }
    }
    if (differ.empty()) {
      int64_initializer(graph_, a.name, dims);
      return;
    }
    std::string where = a.node >= 0 ? " at node " + std::to_string(a.node) + " (" +
                                          g_.nodes[static_cast<size_t>(a.node)].name() + ")"
                                    : "";
    check_value(a.kind != ShapeConst::Fixed, kOp, "a slice on the batch axis", where,
                " cannot follow the batch size");
    if (a.kind == ShapeConst::Reshape && differ.size() == 1) {
      dims[static_cast<size_t>(differ[0])] = -1;
      int64_initializer(graph_, a.name, dims);
      return;
    }
    // Concat of constant runs and c * batch.
    std::vector<std::string> parts;
    std::vector<int64_t> run;
    auto flush = [&] {
      if (run.empty()) return;
      std::string name = a.name + "_part" + std::to_string(parts.size());
      int64_initializer(graph_, name, run);
      parts.push_back(name);
      run.clear();
    };
    for (size_t d = 0; d < dims.size(); ++d) {
      if (a.dims[d] == b->dims[d]) {
        run.push_back(dims[d]);
        continue;
      }
      int64_t c = b->dims[d] - a.dims[d];
      check_value(c > 0 && a.dims[d] == c * batch_, kOp, "a dim", where, " is ", a.dims[d],
                  " at batch ", batch_, " and ", b->dims[d], " at batch ", batch_ + 1,
                  ": not proportional to the batch size");
      flush();
      std::string scaled = batch_dim();
      if (c != 1) {
        std::string factor = a.name + "_factor" + std::to_string(d);
        int64_initializer(graph_, factor, {c});
        std::string y = a.name + "_scaled" + std::to_string(d);
        add_node("Mul", {scaled, factor}, y);
        scaled = y;
      }
      parts.push_back(scaled);
    }
    flush();
    onnx_detail::set_int(add_node("Concat", parts, a.name), "axis", 0);
  }

  // Moves the nodes made here in front of the nodes that use them (a graph is sorted).
  void finish() {
    if (made_.empty()) return;
    google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
    for (auto& n : made_) *nodes.Add() = n;
    for (auto& n : graph_.node()) *nodes.Add() = n;
    graph_.mutable_node()->Swap(&nodes);
  }

 private:
  onnx::NodeProto* add_node(const std::string& op, const std::vector<std::string>& inputs,
                            const std::string& output) {
    made_.emplace_back();
    onnx::NodeProto* n = &made_.back();
    n->set_op_type(op);
    n->set_name("batch_" + op + "_" + output);
    for (const auto& i : inputs) n->add_input(i);
    n->add_output(output);
    return n;
  }
  std::string batch_dim() {
    if (batch_name_.empty()) {
      batch_name_ = "batch_size";
      onnx::NodeProto* n = add_node("Shape", {graph_.input(0).name()}, batch_name_);
      onnx_detail::set_int(n, "start", 0);
      onnx_detail::set_int(n, "end", 1);
    }
    return batch_name_;
  }

  onnx::GraphProto& graph_;
  const Graph& g_;
  int64_t batch_;
  std::string batch_name_;
  std::deque<onnx::NodeProto> made_;
};

void mark_batch(onnx::ValueInfoProto* info, const std::vector<int64_t>& a,
                const std::vector<int64_t>& b) {
  auto* shape = info->mutable_type()->mutable_tensor_type()->mutable_shape();
  for (size_t d = 0; d < a.size(); ++d) {
    if (a[d] != b[d])
      shape->mutable_dim(static_cast<int>(d))
          ->set_dim_param(d == 0 ? "batch" : "batch_" + std::to_string(d));
  }
}

// The module whose forward dispatches the op of a node the exporter refuses: the forward runs
// once more, eagerly, with the module call stack recorded (only on this error path).
class ModuleLocator : public DispatchObserver {
 public:
  ModuleLocator(nn::Module& module, const std::vector<Tensor>& inputs)
      : module_(module), inputs_(inputs) {}
  std::string operator()(OpKey op) {
    op_ = op;
    found_ = nullptr;
    {
      nn::ModuleCallRecorder recorder;
      recorder_ = &recorder;
      DispatchObserverGuard observe(this);
      module_(inputs_[0]);
    }
    if (found_ == nullptr) return "";
    for (auto& [path, m] : module_.named_modules()) {
      if (m == found_) return path.empty() ? module_.type_name() + ".forward" : path;
    }
    return "";
  }
  void on_dispatch(const DispatchCall& call) override {
    if (call.op == op_ && found_ == nullptr && !recorder_->stack().empty())
      found_ = recorder_->stack().back();
  }

 private:
  nn::Module& module_;
  const std::vector<Tensor>& inputs_;
  OpKey op_ = OpKey::copy;
  const nn::Module* found_ = nullptr;
  nn::ModuleCallRecorder* recorder_ = nullptr;
};

void export_traced(const TracedFunction& fn, const std::vector<Tensor>& example_inputs,
                   const NamedTensors& params, const std::string& path,
                   const OnnxExportOptions& options, const OpLocator& locate) {
  check_value(options.opset_version >= 17, kOp, "opset_version must be >= 17; got ",
              options.opset_version);
  check_value(!example_inputs.empty(), kOp, "the model needs at least one example input");
  for (size_t i = 0; i < example_inputs.size(); ++i) {
    check_value(example_inputs[i].defined(), kOp, "example input ", i, " is undefined");
    if (options.dynamic_batch)
      check_value(example_inputs[i].dim() >= 1 && example_inputs[i].shape()[0] >= 1, kOp,
                  "with dynamic_batch, every input needs a batch dim (dim 0); input ", i,
                  " has shape ", example_inputs[i].shape(), " (export with dynamic_batch off)");
  }
  std::filesystem::path folder = std::filesystem::path(path).parent_path();
  check_value(folder.empty() || std::filesystem::is_directory(folder), kOp, "cannot write '", path,
              "': the directory '", folder.string(), "' does not exist");
  NoGradGuard no_grad;

  onnx::ModelProto model;
  model.set_ir_version(8);
  model.set_producer_name("wick");
  model.set_producer_version("0.1.0");
  onnx::OperatorSetIdProto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(options.opset_version);
  onnx::GraphProto& graph = *model.mutable_graph();
  graph.set_name(options.graph_name);

  // A batch of one would trace size-1 dims, which views treat as special; trace at 2 and 3.
  std::vector<Tensor> inputs = example_inputs;
  bool batch_of_one = false;
  for (const Tensor& x : inputs) batch_of_one = batch_of_one || (x.dim() > 0 && x.shape()[0] == 1);
  auto grown = [](const std::vector<Tensor>& xs) {
    std::vector<Tensor> out;
    for (const Tensor& x : xs) out.push_back(cat({x, x.narrow(0, 0, 1)}, 0));
    return out;
  };
  if (options.dynamic_batch && batch_of_one) inputs = grown(inputs);
  std::shared_ptr<Graph> g = prepared(fn, inputs, params, options);
  Emitter first(*g, params, options, graph);
  if (locate) first.locate = [&](const Node& n) { return locate(n.op); };
  first.run();
  if (options.dynamic_batch) {
    std::vector<Tensor> bigger = grown(inputs);
    std::shared_ptr<Graph> g2 = prepared(fn, bigger, params, options);
    onnx::GraphProto scratch;
    Emitter second(*g2, params, options, scratch);
    second.locate = first.locate;
    second.run();
    check_state(first.structure == second.structure && first.shapes.size() == second.shapes.size(),
                kOp, "the model's graph depends on the batch size (traced at batch ",
                inputs[0].shape()[0], " and ", bigger[0].shape()[0],
                "); export with dynamic_batch=False");
    BatchMerge merge(graph, *g, inputs[0].shape()[0]);
    for (size_t k = 0; k < first.shapes.size(); ++k)
      merge.shape(first.shapes[k], &second.shapes[k]);
    merge.finish();
    for (int i = 0; i < graph.input_size(); ++i)
      mark_batch(graph.mutable_input(i), first.input_shapes[static_cast<size_t>(i)],
                 second.input_shapes[static_cast<size_t>(i)]);
    for (int i = 0; i < graph.output_size(); ++i)
      mark_batch(graph.mutable_output(i), first.output_shapes[static_cast<size_t>(i)],
                 second.output_shapes[static_cast<size_t>(i)]);
  } else {
    BatchMerge merge(graph, *g, 0);
    for (const ShapeConst& s : first.shapes) merge.shape(s, nullptr);
  }
  try {
    onnx::checker::check_model(model);
  } catch (const onnx::checker::ValidationError& e) {
    check_state(false, kOp, "ONNX's checker refuses the exported model: ", e.what());
  }
  std::string bytes;
  check_state(model.SerializeToString(&bytes), kOp, "the model could not be serialised");
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  check_value(file.good(), kOp, "cannot write '", path, "'");
}

}  // namespace

bool onnx_export_available() { return true; }

void export_onnx(const TracedFunction& fn, const std::vector<Tensor>& example_inputs,
                 const NamedTensors& params, const std::string& path,
                 const OnnxExportOptions& options, const OpLocator& locate) {
  export_traced(fn, example_inputs, params, path, options, locate);
}

void export_onnx(nn::Module& module, const std::vector<Tensor>& example_inputs,
                 const std::string& path, const OnnxExportOptions& options) {
  check_value(example_inputs.size() == 1, kOp, "a C++ module's forward takes one input; got ",
              example_inputs.size());
  NamedTensors params = module.named_parameters();
  for (auto& b : module.named_buffers()) params.push_back(b);
  OnnxExportOptions named = options;
  if (named.graph_name == OnnxExportOptions().graph_name)
    named.graph_name += "_" + module.type_name();
  bool training = module.is_training();
  module.eval();
  try {
    ModuleLocator locate(module, example_inputs);
    export_traced([&](const std::vector<Tensor>& xs) { return std::vector<Tensor>{module(xs[0])}; },
                  example_inputs, params, path, named, std::ref(locate));
  } catch (...) {
    module.train(training);
    throw;
  }
  module.train(training);
}

}  // namespace wick::jit
