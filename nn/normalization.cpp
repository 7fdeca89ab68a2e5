#include "nn/normalization.h"

#include <sstream>

#include "autograd/grad_mode.h"
#include "nn/functional.h"

namespace wick::nn {

BatchNorm::BatchNorm(const char* type_name, int64_t num_features, double eps, double momentum,
                     bool affine, bool track_running_stats)
    : Module(type_name), num_features_(num_features), eps_(eps), momentum_(momentum) {
  check_value(num_features > 0, type_name, "num_features must be positive; got ", num_features);
  check_value(eps > 0, type_name, "eps must be positive; got ", eps);
  if (affine) {
    weight = register_parameter("weight", ones({num_features}));
    bias = register_parameter("bias", zeros({num_features}));
  }
  if (track_running_stats) {
    running_mean = register_buffer("running_mean", zeros({num_features}));
    running_var = register_buffer("running_var", ones({num_features}));
    num_batches_tracked = register_buffer("num_batches_tracked", zeros({}, kInt64));
  }
}

Tensor BatchNorm::forward(const Tensor& input) { return normalize(input, Tensor(), false); }

Tensor BatchNorm::forward_relu(const Tensor& input, const Tensor& residual) {
  return normalize(input, residual, true);
}

Tensor BatchNorm::normalize(const Tensor& input, const Tensor& residual, bool relu) {
  check_input(input);
  check_value(input.size(1) == num_features_, type_name().c_str(), "expected ", num_features_,
              " channels (dim 1); got input of shape ", input.shape());
  // Without running statistics, batch statistics are used in eval mode too (as in PyTorch).
  bool use_batch_stats = training_ || !running_mean.defined();
  if (training_ && num_batches_tracked.defined()) {
    NoGradGuard no_grad;
    num_batches_tracked.add_(1);
  }
  if (relu) {
    return batch_norm_relu(input, running_mean, running_var, weight, bias, use_batch_stats,
                           momentum_, eps_, residual);
  }
  return functional::batch_norm(input, running_mean, running_var, weight, bias, use_batch_stats,
                                momentum_, eps_);
}

std::string BatchNorm::extra_repr() const {
  std::ostringstream os;
  os << num_features_ << ", eps=" << eps_ << ", momentum=" << momentum_
     << ", affine=" << (weight.defined() ? "True" : "False")
     << ", track_running_stats=" << (running_mean.defined() ? "True" : "False");
  return os.str();
}

void BatchNorm1d::check_input(const Tensor& input) const {
  check_value(input.defined() && (input.dim() == 2 || input.dim() == 3), "BatchNorm1d",
              "expected 2-D or 3-D input; got shape ",
              input.defined() ? to_string(input.shape()) : std::string("undefined"));
}

void BatchNorm2d::check_input(const Tensor& input) const {
  check_value(input.defined() && input.dim() == 4, "BatchNorm2d",
              "expected 4-D input [N, C, H, W]; got shape ",
              input.defined() ? to_string(input.shape()) : std::string("undefined"));
}

LayerNorm::LayerNorm(const Shape& normalized_shape, double eps, bool elementwise_affine)
    : Module("LayerNorm"), normalized_shape_(normalized_shape), eps_(eps) {
  check_value(!normalized_shape.empty() && numel(normalized_shape) > 0, "LayerNorm",
              "normalized_shape must be non-empty; got ", normalized_shape);
  if (elementwise_affine) {
    weight = register_parameter("weight", ones(normalized_shape));
    bias = register_parameter("bias", zeros(normalized_shape));
  }
}

Tensor LayerNorm::forward(const Tensor& input) {
  return functional::layer_norm(input, normalized_shape_, weight, bias, eps_);
}

std::string LayerNorm::extra_repr() const {
  std::ostringstream os;
  os << normalized_shape_ << ", eps=" << eps_
     << ", elementwise_affine=" << (weight.defined() ? "True" : "False");
  return os.str();
}

}  // namespace wick::nn
