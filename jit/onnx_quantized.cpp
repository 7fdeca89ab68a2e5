// wick's int8 ops (core/ops/quantized.h) in ONNX's QDQ form: QuantizeLinear and DequantizeLinear
// around float operators, which ONNX Runtime fuses back into int8 kernels.
//
// Note [QDQ export]
// quantize_per_tensor and dequantize are QuantizeLinear and DequantizeLinear with a scalar scale
// and zero point. quantized_linear and quantized_conv2d become
//   DequantizeLinear(input, input_scale, input_zero_point)
//   DequantizeLinear(weight int8, weight_scale [O], zeros [O], axis 0)   (per output channel)
//   MatMul with the transposed weight + Add(bias), or Conv(x, w, bias)
//   Relu when fused
//   QuantizeLinear(y, output_scale, output_zero_point)
// The float computation between the Q/DQ pairs is what wick's requantization computes exactly in
// int32; both round to nearest, so the two can differ by one quantization step where the float
// rounding of a sum lands on the other side of a half.
#include <onnx/onnx_pb.h>

#include <cstring>

#include "core/op_table.h"
#include "jit/onnx_emit.h"

namespace wick::jit::onnx_detail {

namespace {

const DispatchAttr& attr(Emitter& e, const Node& n, const char* name) {
  for (const DispatchAttr& a : n.attrs) {
    if (a.name == name) return a;
  }
  e.fail(std::string("op '") + op_info(n.op).name + "' was recorded without " + name);
}

std::string float_scalar(Emitter& e, double v) {
  float f = static_cast<float>(v);
  return e.raw(onnx::TensorProto_DataType_FLOAT, {}, std::string(reinterpret_cast<char*>(&f), 4));
}

std::string zero_point(Emitter& e, DType dtype, int64_t zp) {
  char byte = static_cast<char>(static_cast<uint8_t>(zp & 0xff));
  return e.raw(onnx_type(dtype), {}, std::string(1, byte));
}

void set_ints(onnx::NodeProto* n, const char* name, const std::vector<int64_t>& v) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto_AttributeType_INTS);
  for (int64_t x : v) a->add_ints(x);
}
void set_int(onnx::NodeProto* n, const char* name, int64_t v) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto_AttributeType_INT);
  a->set_i(v);
}

std::string dequantized(Emitter& e, const std::string& x, const std::string& scale,
                        const std::string& zp) {
  std::string y = e.fresh("dequantized");
  e.node("DequantizeLinear", {x, scale, zp}, {y});
  return y;
}

// quantized_linear and quantized_conv2d (params: input, weight, weight_scale, bias, out).
void quantized_layer(Emitter& e, const Node& n, bool conv) {
  const Value& input = e.g.value(n.params[0]);
  const Value& weight = e.g.value(n.params[1]);
  const Value& out = e.g.value(n.params[4]);
  std::string x = dequantized(e, e.get(n.params[0]), float_scalar(e, attr(e, n, "input_scale").f),
                              zero_point(e, input.dtype, attr(e, n, "input_zero_point").i));
  int64_t channels = weight.shape[0];
  std::string w = e.fresh("dequantized");
  onnx::NodeProto* dq = e.node(
      "DequantizeLinear",
      {e.get(n.params[1]), e.get(n.params[2]),
       e.raw(onnx_type(weight.dtype), {channels}, std::string(static_cast<size_t>(channels), 0))},
      {w});
  set_int(dq, "axis", 0);
  std::string y = e.fresh(conv ? "conv" : "linear");
  if (conv) {
    std::vector<std::string> inputs{x, w};
    if (n.params[3] >= 0) inputs.push_back(e.get(n.params[3]));
    onnx::NodeProto* c = e.node("Conv", inputs, {y});
    std::vector<int64_t> pad = attr(e, n, "padding").ints;
    set_ints(c, "strides", attr(e, n, "stride").ints);
    set_ints(c, "pads", {pad[0], pad[1], pad[0], pad[1]});
    set_ints(c, "dilations", attr(e, n, "dilation").ints);
    set_int(c, "group", attr(e, n, "groups").i);
    set_ints(c, "kernel_shape", {weight.shape[2], weight.shape[3]});
  } else {
    std::string wt = e.fresh("transposed");
    onnx::NodeProto* t = e.node("Transpose", {w}, {wt});
    set_ints(t, "perm", {1, 0});
    std::string product = e.fresh("matmul");
    e.node("MatMul", {x, wt}, {n.params[3] >= 0 ? product : y});
    if (n.params[3] >= 0) e.node("Add", {product, e.get(n.params[3])}, {y});
  }
  if (attr(e, n, "relu").i != 0) {
    std::string r = e.fresh("relu");
    e.node("Relu", {y}, {r});
    y = r;
  }
  std::string q = e.fresh("quantized");
  e.node("QuantizeLinear",
         {y, float_scalar(e, attr(e, n, "output_scale").f),
          zero_point(e, out.dtype, attr(e, n, "output_zero_point").i)},
         {q});
  e.set(n.params[4], q);
}

}  // namespace

bool translate_quantized(Emitter& e, const Node& n) {
  const std::string name = op_info(n.op).name;
  if (name == "quantize_per_tensor" || name == "dequantize") {
    bool quantize = name == "quantize_per_tensor";
    const Value& q = e.g.value(n.params[quantize ? 1 : 0]);
    std::string y = e.fresh(quantize ? "quantized" : "dequantized");
    e.node(quantize ? "QuantizeLinear" : "DequantizeLinear",
           {e.get(n.params[0]), float_scalar(e, attr(e, n, "scale").f),
            zero_point(e, q.dtype, attr(e, n, "zero_point").i)},
           {y});
    e.set(n.params[1], y);
    return true;
  }
  if (name == "quantized_linear" || name == "quantized_conv2d") {
    quantized_layer(e, n, name == "quantized_conv2d");
    return true;
  }
  return false;
}

}  // namespace wick::jit::onnx_detail
