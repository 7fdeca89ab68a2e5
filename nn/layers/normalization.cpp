#include "nn/layers/normalization.h"

#include <sstream>

#include "core/autocast.h"
#include "core/grad_mode.h"
#include "core/ops/op_utils.h"

namespace wick::nn {

namespace functional {

namespace {

// [C] parameters broadcast over [N, C, *].
Tensor per_channel(const Tensor& t, int64_t ndim) {
  Shape shape = Shape::filled(ndim, 1);
  shape[1] = t.size(0);
  return t.reshape(shape);
}

void check_channel_params(const char* op, const Tensor& input,
                          std::initializer_list<const Tensor*> params) {
  const int64_t channels = input.size(1);
  for (const Tensor* t : params) {
    check_state(!t->defined() || (t->dim() == 1 && t->size(0) == channels), op,
                "expected a tensor of shape [", channels,
                "] (the input's channels) for input of "
                "shape ",
                input.shape(), "; got ", t->defined() ? to_string(t->shape()) : std::string());
  }
}

Tensor affine(Tensor y, const Tensor& weight, const Tensor& bias) {
  if (weight.defined()) y = y * per_channel(weight, y.dim());
  if (bias.defined()) y = y + per_channel(bias, y.dim());
  return y;
}

// (x - mean) / sqrt(var + eps) over dims, the variance biased: the one formula of layer, group
// and instance norm. mean and var (keepdim) come back for the running statistics.
struct Standardized {
  Tensor y, mean, var;
};
Standardized standardize(const Tensor& x, const DimList& dims, double eps) {
  Tensor mean = x.mean(dims, /*keepdim=*/true);
  Tensor var = x.var(dims, /*correction=*/0, /*keepdim=*/true);
  return {(x - mean) * rsqrt(var + eps), mean, var};
}

}  // namespace

Tensor layer_norm(const Tensor& input, const Shape& normalized_shape, const Tensor& weight,
                  const Tensor& bias, double eps) {
  check_value(input.defined(), "layer_norm", "got an undefined tensor");
  int64_t k = normalized_shape.size();
  bool matches = k >= 1 && input.dim() >= k;
  for (int64_t i = 0; matches && i < k; ++i) {
    matches = input.size(input.dim() - k + i) == normalized_shape[i];
  }
  check_value(matches, "layer_norm", "normalized_shape ", normalized_shape,
              " does not match the trailing dims of input of shape ", input.shape());
  for (const Tensor* t : {&weight, &bias}) {
    check_value(!t->defined() || t->shape() == normalized_shape, "layer_norm",
                "weight and bias must have shape ", normalized_shape, "; got ",
                t->defined() ? to_string(t->shape()) : std::string());
  }
  DimList dims;
  for (int64_t i = input.dim() - k; i < input.dim(); ++i) dims.push_back(i);
  // Under autocast layer_norm runs in float32 (Note [autocast]); without it, 16-bit inputs still
  // get float32 statistics and keep their dtype.
  Tensor in = autocast::cast(AutocastPolicy::Float32, input);
  Tensor x = is_reduced_float(in.dtype()) ? in.to(kFloat32) : in;
  Tensor y = standardize(x, dims, eps).y;
  if (weight.defined()) y = y * weight;
  if (bias.defined()) y = y + bias;
  return y.to(in.dtype());
}

Tensor group_norm(const Tensor& input, int64_t num_groups, const Tensor& weight, const Tensor& bias,
                  double eps) {
  wick::detail::check_defined("group_norm", input);
  check_state(input.dim() >= 2, "group_norm", "expected input of shape [N, C, *]; got ",
              input.shape());
  check_state(num_groups > 0 && input.size(1) % num_groups == 0, "group_norm",
              "Expected number of channels in input to be divisible by num_groups, but got input "
              "of shape ",
              input.shape(), " and num_groups=", num_groups);
  check_type(input.is_floating_point(), "group_norm", "expected a floating-point input; got ",
             input.dtype());
  check_channel_params("group_norm", input, {&weight, &bias});
  // 16-bit inputs get float32 statistics, as layer_norm's.
  Tensor x = is_reduced_float(input.dtype()) ? input.to(kFloat32) : input;
  Tensor g = x.reshape(Shape{input.size(0), num_groups, -1});
  Tensor y = standardize(g, {2}, eps).y.reshape(input.shape());
  return affine(y, weight, bias).to(input.dtype());
}

Tensor instance_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                     const Tensor& weight, const Tensor& bias, bool use_input_stats,
                     double momentum, double eps) {
  wick::detail::check_defined("instance_norm", input);
  check_state(input.dim() >= 3, "instance_norm",
              "expected input of shape [N, C, *] with at least one spatial dim; got ",
              input.shape());
  check_type(input.is_floating_point(), "instance_norm", "expected a floating-point input; got ",
             input.dtype());
  check_channel_params("instance_norm", input, {&running_mean, &running_var, &weight, &bias});
  DimList spatial;
  int64_t count = 1;
  for (int64_t d = 2; d < input.dim(); ++d) spatial.push_back(d), count *= input.size(d);
  Tensor x = is_reduced_float(input.dtype()) ? input.to(kFloat32) : input;
  Tensor y;
  if (use_input_stats) {
    check_value(count > 1, "instance_norm",
                "Expected more than 1 spatial element when training, got input size ",
                input.shape());
    Standardized s = standardize(x, spatial, eps);
    y = s.y;
    if (running_mean.defined() || running_var.defined()) {
      // PyTorch runs batch norm over [1, N * C, *] with the running statistics repeated N times
      // and then averages them back: the batch mean of each instance's statistics, the variance
      // unbiased.
      NoGradGuard no_grad;
      const Shape nc{input.size(0), input.size(1)};
      if (running_mean.defined()) {
        Tensor m = s.mean.detach().reshape(nc).mean({0}).to(running_mean.dtype());
        Tensor target = running_mean;  // shares the storage: the caller's buffer updates
        target.mul_(1.0 - momentum).add_(m * momentum);
      }
      if (running_var.defined()) {
        Tensor v = (s.var.detach() * (double(count) / double(count - 1))).reshape(nc).mean({0});
        Tensor target = running_var;
        target.mul_(1.0 - momentum).add_(v.to(running_var.dtype()) * momentum);
      }
    }
  } else {
    check_value(running_mean.defined() && running_var.defined(), "instance_norm",
                "Expected running_mean and running_var to be defined when use_input_stats is "
                "false");
    y = (x - per_channel(running_mean.to(x.dtype()), x.dim())) *
        rsqrt(per_channel(running_var.to(x.dtype()), x.dim()) + eps);
  }
  return affine(y, weight, bias).to(input.dtype());
}

Tensor normalize(const Tensor& input, double p, int64_t dim, double eps) {
  wick::detail::check_defined("normalize", input);
  check_type(input.is_floating_point(), "normalize", "expected a floating-point input; got ",
             input.dtype());
  Tensor denom = clamp_min(norm(input, p, {dim}, /*keepdim=*/true), eps);
  return input / denom;
}

}  // namespace functional

namespace {

// weight (ones) and bias (zeros) of `shape`: the affine part of every normalization layer.
void affine_parameters(Module& module, const Shape& shape, Tensor& weight, Tensor& bias) {
  weight = module.register_parameter("weight", ones(shape));
  bias = module.register_parameter("bias", zeros(shape));
}

}  // namespace

NormBase::NormBase(const char* type_name, int64_t num_features, double eps, double momentum,
                   bool affine, bool track_running_stats)
    : Module(type_name), num_features_(num_features), eps_(eps), momentum_(momentum) {
  check_value(num_features > 0, type_name, "num_features must be positive; got ", num_features);
  if (affine) affine_parameters(*this, {num_features}, weight, bias);
  if (track_running_stats) {
    running_mean = register_buffer("running_mean", zeros({num_features}));
    running_var = register_buffer("running_var", ones({num_features}));
    num_batches_tracked = register_buffer("num_batches_tracked", zeros({}, kInt64));
  }
}

std::string NormBase::extra_repr() const {
  std::ostringstream os;
  os << num_features_ << ", eps=" << eps_ << ", momentum=" << momentum_
     << ", affine=" << (weight.defined() ? "True" : "False")
     << ", track_running_stats=" << (running_mean.defined() ? "True" : "False");
  return os.str();
}

BatchNorm::BatchNorm(const char* type_name, int64_t num_features, double eps, double momentum,
                     bool affine, bool track_running_stats)
    : NormBase(type_name, num_features, eps, momentum, affine, track_running_stats) {
  check_value(eps > 0, type_name, "eps must be positive; got ", eps);
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

Tensor InstanceNorm2d::forward(const Tensor& input) {
  check_value(input.defined() && (input.dim() == 3 || input.dim() == 4), "InstanceNorm2d",
              "expected 3-D or 4-D input; got ",
              input.defined() ? to_string(input.shape()) : std::string("an undefined tensor"));
  Tensor x = input.dim() == 4 ? input : input.unsqueeze(0);
  check_value(x.size(1) == num_features_ || !weight.defined(), "InstanceNorm2d",
              "expected input's size at dim=1 to match num_features (", num_features_,
              "), but got input of shape ", input.shape());
  bool use_input_stats = training_ || !running_mean.defined();
  // Unlike batch norm, PyTorch's instance norm never counts batches (num_batches_tracked stays
  // 0; it exists so state_dicts match).
  // Batch statistics (updating the running ones if tracked) in training, and always when none
  // are tracked; the running ones in eval().
  Tensor y = functional::instance_norm(x, running_mean, running_var, weight, bias, use_input_stats,
                                       momentum_, eps_);
  return input.dim() == 4 ? y : y.squeeze(0);
}

GroupNorm::GroupNorm(int64_t num_groups, int64_t num_channels, double eps, bool affine)
    : Module("GroupNorm"), num_groups_(num_groups), num_channels_(num_channels), eps_(eps) {
  check_value(num_groups > 0 && num_channels > 0 && num_channels % num_groups == 0, "GroupNorm",
              "num_channels must be divisible by num_groups; got num_groups=", num_groups,
              ", num_channels=", num_channels);
  if (affine) affine_parameters(*this, {num_channels}, weight, bias);
}

Tensor GroupNorm::forward(const Tensor& input) {
  return functional::group_norm(input, num_groups_, weight, bias, eps_);
}

std::string GroupNorm::extra_repr() const {
  std::ostringstream os;
  os << num_groups_ << ", " << num_channels_ << ", eps=" << eps_
     << ", affine=" << (weight.defined() ? "True" : "False");
  return os.str();
}

LayerNorm::LayerNorm(const Shape& normalized_shape, double eps, bool elementwise_affine)
    : Module("LayerNorm"), normalized_shape_(normalized_shape), eps_(eps) {
  check_value(!normalized_shape.empty() && numel(normalized_shape) > 0, "LayerNorm",
              "normalized_shape must be non-empty; got ", normalized_shape);
  if (elementwise_affine) affine_parameters(*this, normalized_shape, weight, bias);
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
