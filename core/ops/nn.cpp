#include "core/ops/nn.h"

#include "autograd/functions/nn.h"
#include "core/autocast.h"
#include "core/dispatch.h"
#include "core/grad_mode.h"
#include "core/ops.h"
#include "core/ops/op_utils.h"

namespace wick {

namespace {

// Accepts [N, C, H, W] or an unbatched [C, H, W] (returned with a batch dim of 1). max_pool2d
// also takes uint8, the quantized activations of int8 inference (core/ops/quantized.h).
Tensor as_batched(const char* op, const Tensor& input, bool allow_uint8 = false) {
  detail::check_defined(op, input);
  check_value(input.dim() == 3 || input.dim() == 4, op,
              "expected a 3-D [C, H, W] or 4-D [N, C, H, W] input; got shape ", input.shape());
  check_type(input.is_floating_point() || (allow_uint8 && input.dtype() == kUInt8), op,
             "expected a floating-point", allow_uint8 ? " or uint8" : "", " input; got ",
             input.dtype());
  return input.dim() == 3 ? input.unsqueeze(0) : input;
}

Tensor unbatch(const Tensor& out, const Tensor& original) {
  return original.dim() == 3 ? out.squeeze(0) : out;
}

// floor((size + 2 pad - dilation (kernel - 1) - 1) / stride) + 1, or the ceil_mode variant,
// where the last window must still start inside the input or its left padding.
int64_t pooled_size(const char* op, int64_t size, int64_t kernel, int64_t pad, int64_t stride,
                    int64_t dilation, bool ceil_mode) {
  // Checked (Note [checked sizes]): a kernel, padding or dilation near 2**63 must not wrap.
  int64_t reach = checked_mul(op, dilation, checked_add(op, kernel, -1));
  int64_t span = checked_add(op, checked_add(op, size, checked_mul(op, 2, pad)), -reach - 1);
  if (span < 0) return 0;  // the kernel does not fit even once
  int64_t out = (ceil_mode ? checked_add(op, span, stride - 1) : span) / stride + 1;
  if (ceil_mode && (out - 1) * stride >= size + pad) --out;
  return out;
}

void check_window(const char* op, const Tensor& x, const Pool2dParams& p) {
  for (int i = 0; i < 2; ++i) {
    check_value(p.kernel[i] > 0 && p.stride[i] >= 0 && p.dilation[i] > 0 && p.padding[i] >= 0, op,
                "kernel size, stride and dilation must be positive and padding non-negative; got "
                "kernel (",
                p.kernel[0], ", ", p.kernel[1], "), stride (", p.stride[0], ", ", p.stride[1],
                "), padding (", p.padding[0], ", ", p.padding[1], ")");
    // Checked after the kernel: a zero kernel is the first mistake when the stride defaults to it.
    check_value(p.stride[i] != 0, op, "stride should not be zero; got stride (", p.stride[0], ", ",
                p.stride[1], ")");
    check_value(p.padding[i] <= p.kernel[i] / 2, op, "padding ", p.padding[i],
                " must be at most half the kernel size ", p.kernel[i]);
  }
  (void)x;
}

Shape pooled_shape(const char* op, const Tensor& x, const Pool2dParams& p) {
  int64_t oh = pooled_size(op, x.size(2), p.kernel[0], p.padding[0], p.stride[0], p.dilation[0],
                           p.ceil_mode);
  int64_t ow = pooled_size(op, x.size(3), p.kernel[1], p.padding[1], p.stride[1], p.dilation[1],
                           p.ceil_mode);
  check_value(oh > 0 && ow > 0, op, "the input of spatial size (", x.size(2), ", ", x.size(3),
              ") is too small for kernel (", p.kernel[0], ", ", p.kernel[1], "); output would be (",
              oh, ", ", ow, ")");
  return Shape{x.size(0), x.size(1), oh, ow};
}

Pool2dParams pool_params(Pair2 kernel, Pair2 stride, Pair2 padding, Pair2 dilation,
                         bool ceil_mode) {
  Pool2dParams p;
  p.kernel[0] = kernel.h, p.kernel[1] = kernel.w;
  p.stride[0] = stride.h == kStrideOfKernel ? kernel.h : stride.h;
  p.stride[1] = stride.w == kStrideOfKernel ? kernel.w : stride.w;
  p.padding[0] = padding.h, p.padding[1] = padding.w;
  p.dilation[0] = dilation.h, p.dilation[1] = dilation.w;
  p.ceil_mode = ceil_mode;
  return p;
}

}  // namespace

Tensor conv2d(const Tensor& input_in, const Tensor& weight_in, const Tensor& bias_in, Pair2 stride,
              Pair2 padding, Pair2 dilation, int64_t groups) {
  Tensor input = autocast::cast(AutocastPolicy::LowerPrecision, input_in);
  Tensor weight = autocast::cast(AutocastPolicy::LowerPrecision, weight_in);
  Tensor bias = autocast::cast(AutocastPolicy::LowerPrecision, bias_in);
  Tensor x = as_batched("conv2d", input);
  detail::check_defined("conv2d", weight);
  check_value(weight.dim() == 4, "conv2d",
              "weight must be 4-D [out_channels, in_channels / groups, kh, kw]; got shape ",
              weight.shape());
  check_value(groups > 0 && x.size(1) % groups == 0 && weight.size(0) % groups == 0, "conv2d",
              "groups=", groups, " must divide both the input channels (", x.size(1),
              ") and the output channels (", weight.size(0), ")");
  check_value(weight.size(1) * groups == x.size(1), "conv2d", "input of shape ", x.shape(), " has ",
              x.size(1), " channels but weight of shape ", weight.shape(), " expects ",
              weight.size(1) * groups, " (groups=", groups, ")");
  check_type(weight.dtype() == x.dtype(), "conv2d", "input and weight dtypes differ: ", x.dtype(),
             " and ", weight.dtype());
  detail::check_same_device("conv2d", x, weight);
  if (bias.defined()) {
    check_value(bias.dim() == 1 && bias.size(0) == weight.size(0), "conv2d", "bias of shape ",
                bias.shape(), " does not match ", weight.size(0), " output channels");
    check_type(bias.dtype() == x.dtype(), "conv2d", "bias dtype ", bias.dtype(),
               " differs from the input's ", x.dtype());
    detail::check_same_device("conv2d", x, bias);
  }
  Conv2dParams p;
  p.stride[0] = stride.h, p.stride[1] = stride.w;
  p.padding[0] = padding.h, p.padding[1] = padding.w;
  p.dilation[0] = dilation.h, p.dilation[1] = dilation.w;
  p.groups = groups;
  check_value(stride.h > 0 && stride.w > 0 && dilation.h > 0 && dilation.w > 0 && padding.h >= 0 &&
                  padding.w >= 0,
              "conv2d",
              "stride and dilation must be positive and padding non-negative; got stride (",
              stride.h, ", ", stride.w, "), padding (", padding.h, ", ", padding.w, "), dilation (",
              dilation.h, ", ", dilation.w, ")");
  int64_t oh =
      pooled_size("conv2d", x.size(2), weight.size(2), padding.h, stride.h, dilation.h, false);
  int64_t ow =
      pooled_size("conv2d", x.size(3), weight.size(3), padding.w, stride.w, dilation.w, false);
  check_value(oh > 0 && ow > 0, "conv2d", "the input of spatial size (", x.size(2), ", ", x.size(3),
              ") with padding (", padding.h, ", ", padding.w, ") is smaller than the kernel (",
              weight.size(2), ", ", weight.size(3), ")");

  // Saved with their history: a create_graph backward differentiates through them.
  Tensor x_c = x.contiguous(), w_c = weight.contiguous();
  Tensor b_c = bias.defined() ? bias.contiguous().detach() : Tensor();
  Tensor out = empty(Shape{x.size(0), weight.size(0), oh, ow}, options_of(x));
  dispatch<Conv2dKernel>(OpKey::conv2d, x.device(), x_c, w_c, b_c, out, p);
  if (needs_grad(x, weight, bias)) {
    auto node = make_node<Conv2dBackward>({&x, &weight, &bias});
    node->input = SavedTensor(x_c);
    node->weight = SavedTensor(w_c);
    node->params = p;
    set_history(out, node);
  }
  return unbatch(out, input);
}

namespace {
// Note [max pooling without indices]
// The indices are what the backward needs: where each maximum came from. Inference does not
// need them, and finding them costs a compare and two selects per tap, in a loop that cannot be
// vectorised across outputs (ties go to the first tap in row-major order, as in PyTorch). So
// when nothing will differentiate through the result and the caller did not ask for them, the
// kernel gets an undefined `indices` and takes a values-only path - max over the window's rows,
// vectorised along the row, then over its columns.
ValuesIndices max_pool2d_impl(const Tensor& input, Pair2 kernel_size, Pair2 stride, Pair2 padding,
                              Pair2 dilation, bool ceil_mode, bool want_indices) {
  Tensor x = as_batched("max_pool2d", input, /*allow_uint8=*/true);
  Pool2dParams p = pool_params(kernel_size, stride, padding, dilation, ceil_mode);
  check_window("max_pool2d", x, p);
  Shape shape = pooled_shape("max_pool2d", x, p);
  Tensor out = detail::empty_for("max_pool2d", shape, options_of(x));
  const bool grad = needs_grad(x);
  Tensor indices;
  if (want_indices || grad) indices = empty(shape, options_of(x).with_dtype(kInt64));
  dispatch<MaxPool2dKernel>(OpKey::max_pool2d, x.device(), x.contiguous().detach(), out, indices,
                            p);
  if (grad) {
    auto node = make_node<MaxPool2dBackward>({&x});
    node->indices = SavedTensor(indices);
    node->params = p;
    set_history(out, node);
  }
  return {unbatch(out, input), indices.defined() ? unbatch(indices, input) : indices};
}
}  // namespace

ValuesIndices max_pool2d_with_indices(const Tensor& input, Pair2 kernel_size, Pair2 stride,
                                      Pair2 padding, Pair2 dilation, bool ceil_mode) {
  return max_pool2d_impl(input, kernel_size, stride, padding, dilation, ceil_mode, true);
}

Tensor max_pool2d(const Tensor& input, Pair2 kernel_size, Pair2 stride, Pair2 padding,
                  Pair2 dilation, bool ceil_mode) {
  return max_pool2d_impl(input, kernel_size, stride, padding, dilation, ceil_mode, false).values;
}

Tensor avg_pool2d(const Tensor& input, Pair2 kernel_size, Pair2 stride, Pair2 padding,
                  bool ceil_mode, bool count_include_pad) {
  Tensor x = as_batched("avg_pool2d", input);
  Pool2dParams p = pool_params(kernel_size, stride, padding, 1, ceil_mode);
  p.count_include_pad = count_include_pad;
  check_window("avg_pool2d", x, p);
  Tensor out = detail::empty_for("avg_pool2d", pooled_shape("avg_pool2d", x, p), options_of(x));
  dispatch<AvgPool2dKernel>(OpKey::avg_pool2d, x.device(), x.contiguous().detach(), out, p);
  if (needs_grad(x)) {
    auto node = make_node<AvgPool2dBackward>({&x});
    node->params = p;
    set_history(out, node);
  }
  return unbatch(out, input);
}

Tensor adaptive_avg_pool2d(const Tensor& input, Pair2 output_size) {
  Tensor x = as_batched("adaptive_avg_pool2d", input);
  check_value(output_size.h > 0 && output_size.w > 0, "adaptive_avg_pool2d",
              "output size must be positive; got (", output_size.h, ", ", output_size.w, ")");
  check_value(x.size(2) > 0 && x.size(3) > 0, "adaptive_avg_pool2d",
              "input spatial size must be positive; got shape ", x.shape());
  Tensor out =
      detail::empty_for("adaptive_avg_pool2d",
                        Shape{x.size(0), x.size(1), output_size.h, output_size.w}, options_of(x));
  Pool2dParams p;
  dispatch<AvgPool2dKernel>(OpKey::adaptive_avg_pool2d, x.device(), x.contiguous().detach(), out,
                            p);
  if (needs_grad(x)) {
    auto node = make_node<AvgPool2dBackward>({&x});
    node->params = p;
    node->adaptive = true;
    set_history(out, node);
  }
  return unbatch(out, input);
}

namespace {

Tensor batch_norm_with_epilogue(const Tensor& input, const Tensor& running_mean,
                                const Tensor& running_var, const Tensor& weight, const Tensor& bias,
                                bool training, double momentum, double eps, const Tensor& residual,
                                bool relu) {
  const char* op = relu ? "batch_norm_relu" : "batch_norm";  // a residual comes with relu
  detail::check_defined(op, input);
  check_value(input.dim() >= 2, op, "expected input of shape [N, C, ...]; got ", input.shape());
  check_type(input.is_floating_point(), op, "expected a floating-point input; got ", input.dtype());
  int64_t channels = input.size(1);
  for (const Tensor* t : {&running_mean, &running_var, &weight, &bias}) {
    check_value(!t->defined() || (t->dim() == 1 && t->size(0) == channels), op,
                "per-channel tensors must have shape (", channels, ",); got ",
                t->defined() ? to_string(t->shape()) : std::string("undefined"));
  }
  if (residual.defined()) {
    check_value(residual.shape() == input.shape(), op, "the residual must have the input's shape ",
                input.shape(), "; got ", residual.shape());
    check_type(residual.is_floating_point(), op, "expected a floating-point residual; got ",
               residual.dtype());
    check_value(residual.device() == input.device(), op, "the residual is on ",
                residual.device().str(), ", the input on ", input.device().str());
  }
  check_value(training || (running_mean.defined() && running_var.defined()), op,
              "evaluation mode needs running_mean and running_var");
  check_value(!training || input.numel() / channels > 1, op,
              "expected more than 1 value per channel when training; got input of shape ",
              input.shape());
  // Statistics are computed in float32 (float64 stays float64), as autocast prescribes.
  DType compute = input.dtype() == kFloat64 ? kFloat64 : kFloat32;
  // Input, weight and residual keep their history: they are saved, and a create_graph backward
  // differentiates through them.
  auto prepare = [&](const Tensor& t) {
    return t.defined() ? detail::cast(t, compute).contiguous() : Tensor();
  };
  Tensor x = prepare(input), w = prepare(weight), r = prepare(residual);
  Tensor b = bias.defined() ? prepare(bias).detach() : Tensor();

  if (!training && needs_grad(input, weight, bias, residual)) {
    // Evaluation with autograd: a fixed affine map, expressed with differentiable ops.
    Shape per_channel = Shape::filled(input.dim(), 1);
    per_channel[1] = channels;
    Tensor scale = rsqrt(running_var.detach().to(compute) + eps).reshape(per_channel);
    Tensor out =
        (input.to(compute) - running_mean.detach().to(compute).reshape(per_channel)) * scale;
    if (weight.defined()) out = out * weight.to(compute).reshape(per_channel);
    if (bias.defined()) out = out + bias.to(compute).reshape(per_channel);
    if (residual.defined()) out = out + r;
    if (relu) out = wick::relu(out);
    return out.to(input.dtype());
  }

  Tensor out = empty(input.shape(), options_of(x));
  Tensor save_mean = empty(Shape{channels}, options_of(x));
  Tensor save_invstd = empty(Shape{channels}, options_of(x));
  // Running statistics are updated in place by the kernel; keep a handle to each.
  Tensor rm = running_mean, rv = running_var;
  if (rm.defined() && rm.dtype() != compute) rm = rm.to(compute);
  if (rv.defined() && rv.dtype() != compute) rv = rv.to(compute);
  BatchNormParams params{training, momentum, eps, relu};
  dispatch<BatchNormKernel>(OpKey::batch_norm, x.device(), x, w, b, rm, rv, r, out, save_mean,
                            save_invstd, params);
  if (training) {
    NoGradGuard no_grad;
    if (rm.defined() && !rm.is_same(running_mean)) running_mean.detach().copy_(rm);
    if (rv.defined() && !rv.is_same(running_var)) running_var.detach().copy_(rv);
    if (rm.defined()) running_mean.bump_version();
  }
  if (training && needs_grad(input, weight, bias, residual)) {
    auto node = make_node<BatchNormBackward>({&input, &weight, &bias, &residual});
    node->input = SavedTensor(x);
    node->weight = SavedTensor(w);
    node->save_mean = SavedTensor(save_mean);
    node->save_invstd = SavedTensor(save_invstd);
    if (relu) {  // the mask is recomputed from x, the affine map and the residual
      node->bias = SavedTensor(b);
      node->residual = SavedTensor(r.defined() ? r.detach() : r);
    }
    node->params = params;
    set_history(out, node);
  }
  return out.dtype() == input.dtype() ? out : out.to(input.dtype());
}

}  // namespace

Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                  const Tensor& weight, const Tensor& bias, bool training, double momentum,
                  double eps) {
  return batch_norm_with_epilogue(input, running_mean, running_var, weight, bias, training,
                                  momentum, eps, Tensor(), false);
}

Tensor batch_norm_relu(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                       const Tensor& weight, const Tensor& bias, bool training, double momentum,
                       double eps, const Tensor& residual) {
  return batch_norm_with_epilogue(input, running_mean, running_var, weight, bias, training,
                                  momentum, eps, residual, true);
}

}  // namespace wick
