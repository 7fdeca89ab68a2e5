#include "core/ops/quantized.h"

#include <cmath>

#include "core/dispatch.h"
#include "core/ops/op_utils.h"

namespace wick {

namespace {

void check_scale(const char* op, const char* what, double scale) {
  check_value(std::isfinite(scale) && scale > 0.0, op, what,
              " must be a positive finite number; got ", scale);
}

// The range of the quantized dtype; a zero point outside it cannot represent 0.0.
void check_zero_point(const char* op, const char* what, int64_t zero_point, DType dtype) {
  int64_t lo = dtype == kUInt8 ? 0 : -128, hi = dtype == kUInt8 ? 255 : 127;
  check_value(zero_point >= lo && zero_point <= hi, op, what, " must be in [", lo, ", ", hi,
              "] for ", dtype, "; got ", zero_point);
}

// The requantization attributes and the per-channel tensors shared by linear and conv2d.
void check_requantization(const char* op, const Tensor& input, const Tensor& weight,
                          const Tensor& weight_scale, const Tensor& bias, int64_t out_channels,
                          const QuantizedParams& p) {
  check_type(input.dtype() == kUInt8, op, "expected a uint8 input (quantized activations); got ",
             input.dtype());
  check_type(weight.dtype() == kInt8, op, "expected an int8 weight; got ", weight.dtype());
  detail::check_defined(op, weight_scale);
  check_type(weight_scale.dtype() == kFloat32, op, "expected a float32 weight_scale; got ",
             weight_scale.dtype());
  check_value(weight_scale.dim() == 1 && weight_scale.size(0) == out_channels, op,
              "weight_scale must have one scale per output channel ([", out_channels,
              "]); got shape ", weight_scale.shape());
  detail::check_same_device(op, input, weight);
  detail::check_same_device(op, input, weight_scale);
  if (bias.defined()) {
    check_type(bias.dtype() == kFloat32, op, "expected a float32 bias; got ", bias.dtype());
    check_value(bias.dim() == 1 && bias.size(0) == out_channels, op, "bias of shape ", bias.shape(),
                " does not match ", out_channels, " output channels");
    detail::check_same_device(op, input, bias);
  }
  check_scale(op, "input_scale", p.input_scale);
  check_scale(op, "output_scale", p.output_scale);
  check_zero_point(op, "input_zero_point", p.input_zero_point, kUInt8);
  check_zero_point(op, "output_zero_point", p.output_zero_point, kUInt8);
  // Every weight scale must be a positive finite float32 too: m[o] = input_scale * scale[o].
  std::vector<float> scales = weight_scale.contiguous().to_vector<float>();
  for (size_t o = 0; o < scales.size(); ++o) {
    check_value(std::isfinite(scales[o]) && scales[o] > 0.0f, op,
                "weight_scale must be positive and finite; weight_scale[", o, "] = ", scales[o]);
  }
}

// The int32 accumulators hold sums of `depth` products of at most 255 * 128 in magnitude, and
// the zero-point correction as much again: 2 * 255 * 128 * 32768 < 2^31.
constexpr int64_t kMaxDepth = 32768;

void check_depth(const char* op, int64_t depth) {
  check_value(depth <= kMaxDepth, op, "the dot products are ", depth,
              " long; int32 accumulation allows at most ", kMaxDepth);
}

// floor((size + 2 pad - dilation (kernel - 1) - 1) / stride) + 1, or 0 when the kernel does not
// fit.
int64_t conv_out_size(int64_t size, int64_t kernel, int64_t pad, int64_t stride, int64_t dilation) {
  int64_t span = size + 2 * pad - dilation * (kernel - 1) - 1;
  return span < 0 ? 0 : span / stride + 1;
}

}  // namespace

Tensor quantize_per_tensor(const Tensor& input, double scale, int64_t zero_point, DType dtype) {
  constexpr const char* op = "quantize_per_tensor";
  detail::check_defined(op, input);
  check_type(input.dtype() == kFloat32, op, "expected a float32 input; got ", input.dtype());
  check_type(dtype == kUInt8 || dtype == kInt8, op, "dtype must be uint8 or int8; got ", dtype);
  check_scale(op, "scale", scale);
  check_zero_point(op, "zero_point", zero_point, dtype);
  Tensor out =
      detail::empty_for(op, input.shape(), TensorOptions(dtype).with_device(input.device()));
  dispatch<QuantizeKernel>(OpKey::quantize_per_tensor, input.device(), input.contiguous(), out,
                           QuantizeParams{scale, zero_point});
  return out;
}

Tensor dequantize(const Tensor& input, double scale, int64_t zero_point) {
  constexpr const char* op = "dequantize";
  detail::check_defined(op, input);
  check_type(input.dtype() == kUInt8 || input.dtype() == kInt8, op,
             "expected a uint8 or int8 input; got ", input.dtype());
  check_scale(op, "scale", scale);
  check_zero_point(op, "zero_point", zero_point, input.dtype());
  Tensor out =
      detail::empty_for(op, input.shape(), TensorOptions(kFloat32).with_device(input.device()));
  dispatch<QuantizeKernel>(OpKey::dequantize, input.device(), input.contiguous(), out,
                           QuantizeParams{scale, zero_point});
  return out;
}

Tensor quantized_linear(const Tensor& input, const Tensor& weight, const Tensor& weight_scale,
                        const Tensor& bias, const QuantizedParams& params) {
  constexpr const char* op = "quantized_linear";
  detail::check_defined(op, input);
  detail::check_defined(op, weight);
  check_value(input.dim() >= 1, op, "expected an input with at least one dimension; got a scalar");
  check_value(weight.dim() == 2, op, "weight must be 2-D [out_features, in_features]; got shape ",
              weight.shape());
  const int64_t in_features = input.size(-1), out_features = weight.size(0);
  check_value(weight.size(1) == in_features, op, "input of shape ", input.shape(), " has ",
              in_features, " features but weight of shape ", weight.shape(), " expects ",
              weight.size(1));
  check_requantization(op, input, weight, weight_scale, bias, out_features, params);
  check_depth(op, in_features);
  int64_t rows = 1;
  for (int64_t d = 0; d + 1 < input.dim(); ++d) rows *= input.size(d);
  Shape out_shape = input.shape();
  out_shape[out_shape.size() - 1] = out_features;
  Tensor x = input.contiguous().reshape({rows, in_features});
  Tensor out = detail::empty_for(op, Shape{rows, out_features},
                                 TensorOptions(kUInt8).with_device(input.device()));
  dispatch<QuantizedLinearKernel>(OpKey::quantized_linear, input.device(), x, weight.contiguous(),
                                  weight_scale.contiguous(),
                                  bias.defined() ? bias.contiguous() : Tensor(), out, params);
  return out.reshape(out_shape);
}

Tensor quantized_conv2d(const Tensor& input, const Tensor& weight, const Tensor& weight_scale,
                        const Tensor& bias, Pair2 stride, Pair2 padding, Pair2 dilation,
                        int64_t groups, const QuantizedParams& params) {
  constexpr const char* op = "quantized_conv2d";
  detail::check_defined(op, input);
  detail::check_defined(op, weight);
  check_value(input.dim() == 3 || input.dim() == 4, op,
              "expected a 3-D [C, H, W] or 4-D [N, C, H, W] input; got shape ", input.shape());
  Tensor x = input.dim() == 3 ? input.unsqueeze(0) : input;
  check_value(weight.dim() == 4, op,
              "weight must be 4-D [out_channels, in_channels / groups, kh, kw]; got shape ",
              weight.shape());
  check_value(groups > 0 && x.size(1) % groups == 0 && weight.size(0) % groups == 0, op,
              "groups=", groups, " must divide both the input channels (", x.size(1),
              ") and the output channels (", weight.size(0), ")");
  check_value(weight.size(1) * groups == x.size(1), op, "input of shape ", x.shape(), " has ",
              x.size(1), " channels but weight of shape ", weight.shape(), " expects ",
              weight.size(1) * groups, " (groups=", groups, ")");
  check_value(stride.h > 0 && stride.w > 0 && dilation.h > 0 && dilation.w > 0 && padding.h >= 0 &&
                  padding.w >= 0,
              op, "stride and dilation must be positive and padding non-negative; got stride (",
              stride.h, ", ", stride.w, "), padding (", padding.h, ", ", padding.w, "), dilation (",
              dilation.h, ", ", dilation.w, ")");
  check_requantization(op, x, weight, weight_scale, bias, weight.size(0), params);
  check_depth(op, weight.size(1) * weight.size(2) * weight.size(3));
  const int64_t oh = conv_out_size(x.size(2), weight.size(2), padding.h, stride.h, dilation.h);
  const int64_t ow = conv_out_size(x.size(3), weight.size(3), padding.w, stride.w, dilation.w);
  check_value(oh > 0 && ow > 0, op, "the input of spatial size (", x.size(2), ", ", x.size(3),
              ") with padding (", padding.h, ", ", padding.w, ") is smaller than the kernel (",
              weight.size(2), ", ", weight.size(3), ")");
  Conv2dParams conv;
  conv.stride[0] = stride.h, conv.stride[1] = stride.w;
  conv.padding[0] = padding.h, conv.padding[1] = padding.w;
  conv.dilation[0] = dilation.h, conv.dilation[1] = dilation.w;
  conv.groups = groups;
  Tensor out = detail::empty_for(op, Shape{x.size(0), weight.size(0), oh, ow},
                                 TensorOptions(kUInt8).with_device(x.device()));
  dispatch<QuantizedConv2dKernel>(OpKey::quantized_conv2d, x.device(), x.contiguous(),
                                  weight.contiguous(), weight_scale.contiguous(),
                                  bias.defined() ? bias.contiguous() : Tensor(), out, conv, params);
  return input.dim() == 3 ? out.squeeze(0) : out;
}

}  // namespace wick
