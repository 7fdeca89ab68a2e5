// The per-op half of the ONNX exporter: each kernel node of a graph as ONNX nodes (Note [ONNX
// export] in onnx_export.cpp). The op table's export column names the ONNX operator; ops whose
// ONNX form is not one operator with the same inputs get a case of their own here.
#include <onnx/onnx_pb.h>

#include "core/op_table.h"
#include "core/ops/factory.h"
#include "jit/onnx_emit.h"

namespace wick::jit::onnx_detail {

namespace {

class Translation {
 public:
  Translation(Emitter& e, const Node& n) : e_(e), n_(n), info_(op_info(n.op)) {}

  std::vector<int64_t> ints(const char* name) const { return attr(name).ints; }
  const DispatchAttr& attr(const char* name) const { return node_attr(e_, n_, name); }
  std::string in(size_t k) const { return e_.get(n_.params[k]); }
  // The value of parameter k when the node writes it (its output).
  int out(size_t k) const { return n_.params[k]; }
  std::string result(size_t k, const char* op, const std::vector<std::string>& inputs,
                     onnx::NodeProto** made = nullptr) {
    std::string name = e_.fresh(op);
    onnx::NodeProto* node = e_.node(op, inputs, {name});
    if (made != nullptr) *made = node;
    e_.set(out(k), name);
    return name;
  }

  void run() {
    if (n_.op == OpKey::fill) {  // out = value: a ConstantOfShape that may follow the batch
      fill();
      return;
    }
    if (n_.op == OpKey::rsqrt) {  // no ONNX operator of its own
      std::string root = e_.fresh("sqrt");
      e_.node("Sqrt", {in(0)}, {root});
      std::string y = e_.fresh("rsqrt");
      e_.node("Reciprocal", {root}, {y});
      e_.set(out(1), y);
      return;
    }
    if (info_.export_name[0] == '\0')
      e_.fail(std::string("op '") + info_.name + "'", " has no ONNX export");
    const std::string family = info_.family;
    onnx::NodeProto* made = nullptr;
    if (family == "unary") {
      unary();
    } else if (family == "binary") {
      // ONNX's Mod is Python's % (remainder) only for integers; fmod=1 is C's fmod.
      if (n_.op == OpKey::remainder && is_floating(e_.g.value(n_.params[0]).dtype))
        e_.fail("op 'remainder' of floating point",
                " has no ONNX export (ONNX's Mod takes the divisor's sign for integers only)");
      result(2, info_.export_name, {in(0), in(1)}, &made);
      if (n_.op == OpKey::fmod) set_int(made, "fmod", 1);
    } else if (n_.op == OpKey::copy) {
      copy();
    } else if (n_.op == OpKey::bmm) {
      result(2, "MatMul", {in(0), in(1)});
    } else if (n_.op == OpKey::conv2d) {
      std::vector<std::string> inputs{in(0), in(1)};
      if (n_.params[2] >= 0) inputs.push_back(in(2));
      result(3, "Conv", inputs, &made);
      set_conv_attrs(e_, n_, made);
    } else if (n_.op == OpKey::max_pool2d || n_.op == OpKey::avg_pool2d) {
      result(1, info_.export_name, {in(0)}, &made);
      std::vector<int64_t> pad = ints("padding");
      set_ints(made, "kernel_shape", ints("kernel"));
      set_ints(made, "strides", ints("stride"));
      set_ints(made, "pads", {pad[0], pad[1], pad[0], pad[1]});
      set_int(made, "ceil_mode", attr("ceil_mode").i);
      if (n_.op == OpKey::max_pool2d) {
        set_ints(made, "dilations", ints("dilation"));
        // The indices output (for the backward) must be unused: export is inference.
      } else {
        set_int(made, "count_include_pad", attr("count_include_pad").i);
      }
    } else if (n_.op == OpKey::adaptive_avg_pool2d) {
      // The kernel reads its size off the output (no attribute is recorded).
      const Shape& o = e_.g.value(out(1)).shape;
      if (o.size() < 2 || o[o.size() - 1] != 1 || o[o.size() - 2] != 1)
        e_.fail("adaptive_avg_pool2d to " + std::to_string(o[o.size() - 2]) + "x" +
                std::to_string(o[o.size() - 1]) +
                " has no ONNX translation (only 1x1: GlobalAveragePool)");
      result(1, "GlobalAveragePool", {in(0)});
    } else if (n_.op == OpKey::batch_norm) {
      if (attr("training").i != 0) e_.fail("batch_norm in training mode (export runs in eval)");
      for (size_t k = 1; k < 5; ++k) {
        if (n_.params[k] < 0) e_.fail("batch_norm without weight, bias or running statistics");
      }
      // Note [batch norm's fused epilogue]: only training fuses, and training does not export.
      if (attr("relu").i != 0 || n_.params[5] >= 0) {
        e_.fail("batch_norm with a fused residual or relu (export the model in eval mode)");
      }
      result(6, "BatchNormalization", {in(0), in(1), in(2), in(3), in(4)}, &made);
      set_float(made, "epsilon", attr("eps").f);
    } else if (n_.op == OpKey::softmax || n_.op == OpKey::log_softmax) {
      result(1, info_.export_name, {in(0)}, &made);
      set_int(made, "axis", attr("dim").i);
    } else if (n_.op == OpKey::sum || n_.op == OpKey::amax || n_.op == OpKey::amin) {
      reduce();
    } else if (n_.op == OpKey::where) {
      result(3, "Where", {in(0), in(1), in(2)});
    } else {
      e_.fail(std::string("op '") + info_.name + "' (ONNX " + info_.export_name +
              ") has no translation in the exporter yet");
    }
  }

 private:
  // The unary ops with attributes take them as ONNX attributes or as constant inputs.
  void unary() {
    onnx::NodeProto* made = nullptr;
    if (n_.op == OpKey::leaky_relu) {
      result(1, "LeakyRelu", {in(0)}, &made);
      set_float(made, "alpha", attr("negative_slope").f);
    } else if (n_.op == OpKey::elu) {
      result(1, "Elu", {in(0)}, &made);
      set_float(made, "alpha", attr("alpha").f);
    } else if (n_.op == OpKey::clamp || n_.op == OpKey::pow_scalar) {
      if (e_.g.value(n_.params[0]).dtype != kFloat32)
        e_.fail(std::string("op '") + info_.name + "' on a tensor other than float32");
      if (n_.op == OpKey::clamp)
        result(1, "Clip", {in(0), e_.float_scalar(attr("min").f), e_.float_scalar(attr("max").f)});
      else
        result(1, "Pow", {in(0), e_.float_scalar(attr("exponent").f)});
    } else if (info_.generated_api) {
      result(1, info_.export_name, {in(0)});
    } else {
      e_.fail(std::string("op '") + info_.name + "' (with attributes) has no ONNX translation");
    }
  }

  // sum, amax, amin over `dims` (all when empty); the kernel reads keepdim off its output's rank.
  void reduce() {
    const Value& x = e_.g.value(n_.params[0]);
    const Value& y = e_.g.value(out(1));
    int64_t keep = (y.shape.size() == x.shape.size() && !x.shape.empty()) ? 1 : 0;
    std::vector<int64_t> dims = ints("dims");
    onnx::NodeProto* made = nullptr;
    if (n_.op == OpKey::sum) {  // opset 13+: axes as an input
      std::vector<std::string> inputs{in(0)};
      if (!dims.empty()) inputs.push_back(e_.ints(dims));
      result(1, "ReduceSum", inputs, &made);
    } else {  // opset 17: axes as an attribute
      result(1, n_.op == OpKey::amax ? "ReduceMax" : "ReduceMin", {in(0)}, &made);
      if (!dims.empty()) set_ints(made, "axes", dims);
    }
    set_int(made, "keepdims", keep);
  }

  void fill() {
    const Value& v = e_.g.value(out(0));
    Tensor one = full({1}, attr("value").scalar, v.dtype);
    e_.set(out(0), e_.filled(v.shape.vec(), v.dtype,
                             std::string(static_cast<const char*>(one.data_ptr()),
                                         static_cast<size_t>(one.nbytes()))));
  }

  // copy(src, dst): a cast (or nothing) into a fresh value or into a slice of a buffer.
  void copy() {
    const Value& src = e_.g.value(n_.params[0]);
    const Value& dst = e_.g.value(n_.roles[1] == Role::Write ? n_.params[1] : n_.outputs.back());
    std::string x = in(0);
    if (src.dtype != dst.dtype) {
      std::string y = e_.fresh("cast");
      onnx::NodeProto* c = e_.node("Cast", {x}, {y});
      set_int(c, "to", onnx_type(dst.dtype));
      x = y;
    }
    if (src.shape != dst.shape) {
      std::string y = e_.fresh("expanded");
      e_.node("Expand", {x, e_.ints(dst.shape.vec(), ShapeConst::Runtime)}, {y});
      x = y;
    }
    if (x == in(0)) {  // a value of its own, so that a write into a slice does not alias
      std::string y = e_.fresh("copied");
      e_.node("Identity", {x}, {y});
      x = y;
    }
    e_.set(n_.roles[1] == Role::Write ? n_.params[1] : n_.outputs.back(), x);
  }

  Emitter& e_;
  const Node& n_;
  const OpInfo& info_;
};

}  // namespace

void translate_kernel(Emitter& e, const Node& n) {
  for (size_t k = 0; k < n.roles.size(); ++k) {
    if (n.roles[k] == Role::Update && n.op != OpKey::copy)
      e.fail(std::string("op '") + op_info(n.op).name +
             "' writes into its input in place; ONNX has no in-place ops");
  }
  if (translate_quantized(e, n)) return;  // Note [QDQ export] in onnx_quantized.cpp
  Translation(e, n).run();
}

}  // namespace wick::jit::onnx_detail
