// wick's int8 ops (core/ops/quantized.h) in ONNX's QDQ form: QuantizeLinear and DequantizeLinear
// around float operators, which ONNX Runtime fuses back into int8 kernels.
//
// Note [QDQ export]
// ONNX says "this tensor is int8" with a pair of operators around ordinary float ones:
//     DequantizeLinear(x_q, x_scale, x_zp) -> Conv / Gemm (float) -> QuantizeLinear(y, ...)
// and a runtime that has int8 kernels (ONNX Runtime's QDQ transformer) fuses each such group into
// one integer operator (QLinearConv, QLinearMatMul). wick's quantized_conv2d and quantized_linear
// (core/ops/quantized.h) are exactly such groups, requantization included, so each becomes:
//   - DequantizeLinear of the uint8 input (per-tensor scale and zero point),
//   - DequantizeLinear of the int8 weight along axis 0 (one scale per output channel, zero point
//     0),
//   - the bias as int32 in units of input_scale * weight_scale[o], dequantized along axis 0: the
//     form ONNX Runtime requires before it fuses the group (PyTorch's and ONNX Runtime's own
//     quantizers write the same); rounding it moves the result by at most half a unit of that
//     product,
//   - Conv or Gemm, then Relu when the kernel clamps at the output zero point (the two agree: Q is
//     monotonic and Q(0) is the zero point), then QuantizeLinear to uint8.
// A runtime without the fusion computes the same group in float; either way the result is within
// one quantization step of wick's (tests/python/test_onnx_export_qdq.py).
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/op_table.h"
#include "core/ops/factory.h"
#include "jit/onnx_emit.h"

namespace wick::jit::onnx_detail {

namespace {

std::string zero_point(Emitter& e, DType dtype, int64_t zp) {
  onnx::TensorProto_DataType type = onnx_type(dtype);
  if (type != onnx::TensorProto_DataType_UINT8 && type != onnx::TensorProto_DataType_INT8)
    e.fail("a quantized tensor of dtype " + std::string(dtype_name(dtype)) +
           " (only uint8 and int8 have an ONNX QDQ form)");
  char byte = static_cast<char>(static_cast<uint8_t>(zp & 0xff));
  return e.raw(type, {}, std::string(1, byte));
}

std::string dequantized(Emitter& e, const std::string& x, const std::string& scale,
                        const std::string& zp) {
  std::string y = e.fresh("dequantized");
  e.node("DequantizeLinear", {x, scale, zp}, {y});
  return y;
}

std::string bytes_of(const Tensor& t) {
  Tensor c = t.contiguous();
  return std::string(static_cast<const char*>(c.data_ptr()), static_cast<size_t>(c.nbytes()));
}

// quantized_linear and quantized_conv2d (params: input, weight, weight_scale, bias, out).
void quantized_layer(Emitter& e, const Node& n, bool conv) {
  const Value& input = e.g.value(n.params[0]);
  const Value& weight = e.g.value(n.params[1]);
  const Value& out = e.g.value(n.params[4]);
  float input_scale = static_cast<float>(node_attr(e, n, "input_scale").f);
  std::string x = dequantized(e, e.get(n.params[0]), e.float_scalar(input_scale),
                              zero_point(e, input.dtype, node_attr(e, n, "input_zero_point").i));
  int64_t channels = weight.shape[0];
  auto along_channels = [&](const std::string& q, const std::string& scale,
                            const std::string& zeros) {
    std::string y = e.fresh("dequantized");
    set_int(e.node("DequantizeLinear", {q, scale, zeros}, {y}), "axis", 0);
    return y;
  };
  std::vector<std::string> inputs{
      x, along_channels(e.get(n.params[1]), e.get(n.params[2]),
                        e.raw(onnx_type(weight.dtype), {channels},
                              std::string(static_cast<size_t>(channels), '\0')))};
  if (n.params[3] >= 0) {
    // Note [QDQ export]: the bias as int32 in units of
    // input_scale * weight_scale[o], the form ONNX Runtime fuses into its integer kernels.
    Tensor w_scale = e.fixed(n.params[2]).to(kFloat32).contiguous();
    Tensor bias = e.fixed(n.params[3]).to(kFloat32).contiguous();
    Tensor bias_scale = empty({channels}, kFloat32);
    Tensor bias_q = empty({channels}, kInt32);
    const float* ws = w_scale.data<float>();
    const float* b = bias.data<float>();
    float* bs = bias_scale.data<float>();
    int32_t* bq = bias_q.data<int32_t>();
    for (int64_t o = 0; o < channels; ++o) {
      bs[o] = input_scale * ws[o];
      double q = std::nearbyint(static_cast<double>(b[o]) / static_cast<double>(bs[o]));
      bq[o] = static_cast<int32_t>(std::clamp(q, -2147483648.0, 2147483647.0));
    }
    inputs.push_back(
        along_channels(e.raw(onnx::TensorProto_DataType_INT32, {channels}, bytes_of(bias_q)),
                       e.raw(onnx::TensorProto_DataType_FLOAT, {channels}, bytes_of(bias_scale)),
                       e.raw(onnx::TensorProto_DataType_INT32, {channels},
                             std::string(static_cast<size_t>(channels) * 4, '\0'))));
  }
  std::string y = e.fresh(conv ? "conv" : "linear");
  if (conv) {
    set_conv_attrs(e, n, e.node("Conv", inputs, {y}));
  } else {
    set_int(e.node("Gemm", inputs, {y}), "transB", 1);
  }
  if (node_attr(e, n, "relu").i != 0) {
    std::string r = e.fresh("relu");
    e.node("Relu", {y}, {r});
    y = r;
  }
  std::string q = e.fresh("quantized");
  e.node("QuantizeLinear",
         {y, e.float_scalar(node_attr(e, n, "output_scale").f),
          zero_point(e, out.dtype, node_attr(e, n, "output_zero_point").i)},
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
           {e.get(n.params[0]), e.float_scalar(node_attr(e, n, "scale").f),
            zero_point(e, q.dtype, node_attr(e, n, "zero_point").i)},
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
