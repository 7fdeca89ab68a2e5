#include "autograd/functions/nn.h"

#include "core/dispatch.h"
#include "core/grad_mode.h"
#include "core/ops.h"

namespace wick {

namespace {
Tensor empty_if(bool needed, const Shape& shape, const Tensor& like) {
  return needed ? empty(shape, options_of(like)) : Tensor();
}

bool recording() { return GradMode::is_enabled(); }

Tensor conv_forward(const Tensor& x, const Tensor& w, const Conv2dParams& p) {
  return conv2d(x, w, Tensor(), {p.stride[0], p.stride[1]}, {p.padding[0], p.padding[1]},
                {p.dilation[0], p.dilation[1]}, p.groups);
}
}  // namespace

// Note [convolution's double backward]
// The input gradient of a convolution is bilinear in (grad, weight) and the weight gradient in
// (grad, input); each is the adjoint of the convolution in one argument. So the gradient of
// <u, input_grad(g, w)> is conv2d(u, w) for g and weight_grad(g, u) for w, and the gradient of
// <u, weight_grad(g, x)> is conv2d(x, u) for g and input_grad(g, u) for x: convolutions and
// their two backward kernels again, differentiable to any order. PyTorch's
// _convolution_double_backward computes the same terms.
Tensor conv2d_input_grad(const Tensor& grad, const Tensor& weight, const Shape& input_shape,
                         const Conv2dParams& params) {
  Tensor g = grad.contiguous(), w = weight.contiguous();
  Tensor grad_input = empty(input_shape, options_of(g));
  Tensor no_grad_weight, no_grad_bias;
  // The kernel reads only the input's shape when it computes the input gradient alone.
  dispatch<Conv2dBackwardKernel>(OpKey::conv2d_backward, g.device(), g.detach(),
                                 empty(input_shape, options_of(g)), w.detach(), grad_input,
                                 no_grad_weight, no_grad_bias, params);
  if (needs_grad(grad, weight)) {
    auto node = make_node<Conv2dInputGradBackward>({&grad, &weight});
    node->grad = SavedTensor(g);
    node->weight = SavedTensor(w);
    node->params = params;
    set_history(grad_input, node);
  }
  return grad_input;
}

Tensor conv2d_weight_grad(const Tensor& grad, const Tensor& input, const Shape& weight_shape,
                          const Conv2dParams& params) {
  Tensor g = grad.contiguous(), x = input.contiguous();
  Tensor grad_weight = empty(weight_shape, options_of(g));
  Tensor no_grad_input, no_grad_bias;
  dispatch<Conv2dBackwardKernel>(OpKey::conv2d_backward, g.device(), g.detach(), x.detach(),
                                 empty(weight_shape, options_of(g)), no_grad_input, grad_weight,
                                 no_grad_bias, params);
  if (needs_grad(grad, input)) {
    auto node = make_node<Conv2dWeightGradBackward>({&grad, &input});
    node->grad = SavedTensor(g);
    node->input = SavedTensor(x);
    node->params = params;
    set_history(grad_weight, node);
  }
  return grad_weight;
}

TensorList Conv2dBackward::apply(const Tensor& grad) {
  Tensor x = input.unpack(*this), w = weight.unpack(*this);
  bool want_bias = next.size() > 2 && next[2] != nullptr;
  if (recording()) {  // create_graph: Note [convolution's double backward]
    return {next[0] ? conv2d_input_grad(grad, w, x.shape(), params) : Tensor(),
            next[1] ? conv2d_weight_grad(grad, x, w.shape(), params) : Tensor(),
            want_bias ? grad.sum({0, 2, 3}) : Tensor()};
  }
  Tensor g = grad.contiguous();
  Tensor grad_input = empty_if(next[0] != nullptr, x.shape(), g);
  Tensor grad_weight = empty_if(next[1] != nullptr, w.shape(), g);
  Tensor grad_bias = empty_if(want_bias, Shape{w.size(0)}, g);
  dispatch<Conv2dBackwardKernel>(OpKey::conv2d_backward, g.device(), g, x.contiguous(),
                                 w.contiguous(), grad_input, grad_weight, grad_bias, params);
  return {grad_input, grad_weight, grad_bias};
}

TensorList Conv2dInputGradBackward::apply(const Tensor& u) {
  Tensor g = grad.unpack(*this), w = weight.unpack(*this);
  return {next[0] ? conv_forward(u, w, params) : Tensor(),
          next[1] ? conv2d_weight_grad(g, u, w.shape(), params) : Tensor()};
}

TensorList Conv2dWeightGradBackward::apply(const Tensor& u) {
  Tensor g = grad.unpack(*this), x = input.unpack(*this);
  return {next[0] ? conv_forward(x, u, params) : Tensor(),
          next[1] ? conv2d_input_grad(g, u, x.shape(), params) : Tensor()};
}

TensorList MaxPool2dBackward::apply(const Tensor& grad) {
  const Shape& shape = input_meta[0].shape;
  if (recording()) {  // the same scatter, as a differentiable op (linear in grad)
    Shape planes{shape[0], shape[1], -1};
    Tensor flat = zeros(Shape{shape[0], shape[1], shape[2] * shape[3]}, options_of(grad));
    flat = flat.scatter_add(2, indices.unpack(*this).reshape(planes), grad.reshape(planes));
    return {flat.reshape(shape)};
  }
  Tensor grad_input = empty(shape, options_of(grad));
  dispatch<MaxPool2dBackwardKernel>(OpKey::max_pool2d_backward, grad.device(), grad.contiguous(),
                                    indices.unpack(*this), grad_input, params);
  return {grad_input};
}

// Average pooling is linear, and its backward kernel is its adjoint; the adjoint of that is the
// pooling itself, which gives the create_graph backward.
Tensor avg_pool2d_grad(const Tensor& grad, const Shape& input_shape, const Pool2dParams& params,
                       bool adaptive) {
  Tensor grad_input = empty(input_shape, options_of(grad));
  OpKey op = adaptive ? OpKey::adaptive_avg_pool2d_backward : OpKey::avg_pool2d_backward;
  dispatch<AvgPool2dBackwardKernel>(op, grad.device(), grad.contiguous().detach(), grad_input,
                                    params);
  if (needs_grad(grad)) {
    auto node = make_node<AvgPool2dGradBackward>({&grad});
    node->params = params;
    node->adaptive = adaptive;
    set_history(grad_input, node);
  }
  return grad_input;
}

TensorList AvgPool2dBackward::apply(const Tensor& grad) {
  return {avg_pool2d_grad(grad, input_meta[0].shape, params, adaptive)};
}

TensorList AvgPool2dGradBackward::apply(const Tensor& u) {
  if (adaptive) return {adaptive_avg_pool2d(u, {input_meta[0].shape[2], input_meta[0].shape[3]})};
  const Pool2dParams& p = params;
  return {avg_pool2d(u, {p.kernel[0], p.kernel[1]}, {p.stride[0], p.stride[1]},
                     {p.padding[0], p.padding[1]}, p.ceil_mode, p.count_include_pad)};
}

TensorList BatchNormBackward::apply(const Tensor& grad) {
  Tensor x = input.unpack(*this), w = weight.unpack(*this);
  Tensor b = bias.unpack(*this), r = residual.unpack(*this);
  Tensor g = grad.to(x.dtype());
  if (recording()) {
    // create_graph: the same formula with differentiable ops, and the batch statistics
    // recomputed from x, since the second derivative goes through them too.
    DimList dims;
    for (int64_t d = 0; d < x.dim(); ++d) {
      if (d != 1) dims.push_back(d);
    }
    double count = static_cast<double>(x.numel() / x.size(1));
    Shape per_channel = Shape::filled(x.dim(), 1);
    per_channel[1] = x.size(1);
    Tensor centered = x - x.sum(dims, true) / count;
    Tensor invstd = rsqrt((centered * centered).sum(dims, true) / count + params.eps);
    Tensor normalized = centered * invstd;
    if (params.relu) {  // the relu's mask, a constant of the second derivative
      Tensor mask;
      {
        NoGradGuard no_grad;
        Tensor pre = w.defined() ? normalized * w.reshape(per_channel) : normalized;
        if (b.defined()) pre = pre + b.reshape(per_channel);
        if (r.defined()) pre = pre + r;
        mask = gt(pre, 0.0).to(g.dtype());
      }
      g = g * mask;
    }
    Tensor scale = w.defined() ? w.reshape(per_channel) * invstd : invstd;
    Tensor mean_g = g.sum(dims, true) / count;
    Tensor mean_g_normalized = (g * normalized).sum(dims, true) / count;
    return {next[0] ? scale * (g - mean_g - normalized * mean_g_normalized) : Tensor(),
            next[1] ? (g * normalized).sum(dims) : Tensor(), next[2] ? g.sum(dims) : Tensor(),
            next[3] ? g : Tensor()};
  }
  g = g.contiguous();
  Tensor grad_input = empty_if(next[0] != nullptr, x.shape(), x);
  Tensor grad_weight = empty_if(next[1] != nullptr, Shape{x.size(1)}, x);
  Tensor grad_bias = empty_if(next[2] != nullptr, Shape{x.size(1)}, x);
  Tensor grad_residual = empty_if(next[3] != nullptr, x.shape(), x);
  dispatch<BatchNormBackwardKernel>(OpKey::batch_norm_backward, g.device(), g, x, w,
                                    save_mean.unpack(*this), save_invstd.unpack(*this), b, r,
                                    grad_input, grad_weight, grad_bias, grad_residual, params);
  return {grad_input, grad_weight, grad_bias, grad_residual};
}

}  // namespace wick
