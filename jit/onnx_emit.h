// The translation of one Graph into an ONNX GraphProto (jit/onnx_export.cpp runs it, once per
// trace): values, views and in-place writes here (onnx_emit.cpp), kernels op by op in
// onnx_ops.cpp. Internal to the exporter; built only with ONNX export.
#pragma once

#include <onnx/onnx_pb.h>

#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "jit/onnx_export.h"

namespace wick::jit::onnx_detail {

// An int64 vector the graph needs as an input (a Reshape's shape, a Slice's bounds). The two
// traces of Note [dynamic batch in ONNX] emit the same list; where they differ, the merge makes
// the entry depend on the batch.
struct ShapeConst {
  enum Kind {
    Fixed,    // must be equal in both traces (Slice bounds, axes)
    Reshape,  // a dim that differs becomes -1 (or is computed from the batch)
    Runtime,  // a dim that differs is computed from the batch at run time (ConstantOfShape)
  };
  Kind kind = Fixed;
  std::vector<int64_t> dims;
  std::string name;
  int node = -1;  // the graph node it came from, for errors
};

// A storage as the emitter knows it: whole (`name` holds its first `shape`-many elements from
// offset 0, contiguous) or in pieces written into slices of one frame (Note [views in ONNX]).
struct StorageState {
  std::string name;
  std::vector<int64_t> shape;
  struct Piece {
    std::vector<int64_t> frame, begin, end;
    std::string name;
  };
  std::vector<Piece> pieces;
};

class Emitter {
 public:
  Emitter(const Graph& g, const NamedTensors& params, const OnnxExportOptions& options,
          onnx::GraphProto& out);
  void run();

  // For the op translations (onnx_ops.cpp).
  std::string get(int value);  // the ONNX name holding the value's contents, in its shape
  void set(int value, const std::string& name);  // a kernel's output value is `name`
  std::string fresh(const std::string& hint);
  onnx::NodeProto* node(const std::string& op, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs);
  std::string ints(std::vector<int64_t> dims, ShapeConst::Kind kind = ShapeConst::Fixed);
  // A constant of `type` with `dims` from raw little-endian bytes (a scale, a zero point).
  std::string raw(onnx::TensorProto_DataType type, const std::vector<int64_t>& dims,
                  const std::string& bytes);
  // A scalar float32 constant (a scale, Clip's bounds, Pow's exponent).
  std::string float_scalar(double v);
  // ConstantOfShape of one element's `bytes`, its shape following the batch where it differs
  // between the traces (Note [dynamic batch in ONNX]).
  std::string filled(const std::vector<int64_t>& shape, DType dtype, const std::string& bytes);
  // The tensor behind a parameter or a folded constant (a quantized layer's scales and bias);
  // fails for a value computed inside the graph.
  Tensor fixed(int value) const;
  std::string reshape(const std::string& x, const std::vector<int64_t>& from,
                      const std::vector<int64_t>& to);
  // Throws std::runtime_error: "<what> (in module 'layer1.0.conv1')<rest>", the module path
  // `locate` gives for the node being translated, or the node's index without one.
  [[noreturn]] void fail(const std::string& what, const std::string& rest = "") const;
  std::function<std::string(const Node&)> locate;
  const Graph& g;
  const OnnxExportOptions& options;
  int current = -1;  // the node being translated

  std::vector<ShapeConst> shapes;
  std::vector<std::string> structure;  // op types and attributes, to compare the two traces
  std::vector<std::vector<int64_t>> input_shapes, output_shapes;

 private:
  std::string leaf(int value);
  const Tensor* param_named(const std::string& name) const;
  std::string constant(int value, const Tensor& t);  // a constant, or a parameter's tensor
  std::string read(int base, const Value& layout);
  std::string whole(int base);
  void write(int base, const Value& layout, const std::string& content);
  std::string initializer(const Tensor& t, const std::string& name);

  onnx::GraphProto& out_;
  std::unordered_map<int, std::string> names_;
  std::map<int, StorageState> storages_;
  std::unordered_map<const void*, std::pair<std::string, Tensor>> param_storages_;
  std::map<std::string, std::string> param_initializers_;
  int next_ = 0;
};

onnx::TensorProto_DataType onnx_type(DType dtype);
// Attributes of a node being written.
void set_int(onnx::NodeProto* n, const char* name, int64_t v);
void set_ints(onnx::NodeProto* n, const char* name, const std::vector<int64_t>& v);
void set_float(onnx::NodeProto* n, const char* name, double v);
// A recorded attribute of a graph node; fails through `e`, naming the op, when it is missing.
const DispatchAttr& node_attr(const Emitter& e, const Node& n, const char* name);
// Conv's attributes from a conv2d or quantized_conv2d node (params[1] is the weight).
void set_conv_attrs(const Emitter& e, const Node& n, onnx::NodeProto* conv);
// One kernel node (onnx_ops.cpp); throws naming the op and module for one without a translation.
void translate_kernel(Emitter& e, const Node& n);
// The int8 ops in QDQ form (onnx_quantized.cpp); false for any other op.
bool translate_quantized(Emitter& e, const Node& n);

}  // namespace wick::jit::onnx_detail
