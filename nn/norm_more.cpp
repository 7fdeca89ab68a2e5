#include "nn/norm_more.h"

#include <stdexcept>
#include <vector>

#include "autograd/grad_mode.h"
#include "core/ops/op_utils.h"

namespace wick::nn::functional {

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

// PyTorch reports shapes that do not broadcast as a RuntimeError.
Shape broadcast_or_throw(const char* op, const Tensor& a, const Tensor& b) {
  try {
    return broadcast_shapes(op, a.shape(), b.shape());
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(e.what());
  }
}

std::vector<int64_t> to_vector(const Tensor& t) {
  Tensor c = t.to(kInt64).cpu().contiguous();
  const int64_t* p = static_cast<const int64_t*>(c.data_ptr());
  return std::vector<int64_t>(p, p + c.numel());
}

}  // namespace

Tensor group_norm(const Tensor& input, int64_t num_groups, const Tensor& weight, const Tensor& bias,
                  double eps) {
  detail::check_defined("group_norm", input);
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
  Tensor mean = g.mean({2}, /*keepdim=*/true);
  Tensor var = g.var({2}, /*correction=*/0, /*keepdim=*/true);
  Tensor y = ((g - mean) * rsqrt(var + eps)).reshape(input.shape());
  return affine(y, weight, bias).to(input.dtype());
}

Tensor instance_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                     const Tensor& weight, const Tensor& bias, bool use_input_stats,
                     double momentum, double eps) {
  detail::check_defined("instance_norm", input);
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
    Tensor mean = x.mean(spatial, /*keepdim=*/true);
    Tensor var = x.var(spatial, /*correction=*/0, /*keepdim=*/true);
    y = (x - mean) * rsqrt(var + eps);
    if (running_mean.defined() || running_var.defined()) {
      // PyTorch runs batch norm over [1, N * C, *] with the running statistics repeated N times
      // and then averages them back: the batch mean of each instance's statistics, the variance
      // unbiased.
      NoGradGuard no_grad;
      const Shape nc{input.size(0), input.size(1)};
      if (running_mean.defined()) {
        Tensor m = mean.detach().reshape(nc).mean({0}).to(running_mean.dtype());
        Tensor target = running_mean;  // shares the storage: the caller's buffer updates
        target.mul_(1.0 - momentum).add_(m * momentum);
      }
      if (running_var.defined()) {
        Tensor v = (var.detach() * (double(count) / double(count - 1))).reshape(nc).mean({0});
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

Tensor dropout2d(const Tensor& input, double p, bool training) {
  check_value(p >= 0.0 && p <= 1.0, "dropout2d",
              "dropout probability has to be between 0 and 1, but got ", p);
  detail::check_defined("dropout2d", input);
  if (!training || p == 0.0) return input;
  check_state(input.dim() >= 2, "dropout2d",
              "Feature dropout requires at least 2 dimensions in the input; got input of shape ",
              input.shape());
  if (p == 1.0) return input * 0.0;
  // One draw per (sample, channel), broadcast over the rest: whole feature maps drop together.
  Shape mask = Shape::filled(input.dim(), 1);
  mask[0] = input.size(0);
  mask[1] = input.size(1);
  Tensor keep =
      (rand(mask, TensorOptions(input.dtype()).with_device(input.device())) >= p).to(input.dtype());
  return input * keep * (1.0 / (1.0 - p));
}

Tensor normalize(const Tensor& input, double p, int64_t dim, double eps) {
  detail::check_defined("normalize", input);
  check_type(input.is_floating_point(), "normalize", "expected a floating-point input; got ",
             input.dtype());
  Tensor denom = clamp_min(norm(input, p, {dim}, /*keepdim=*/true), eps);
  return input / denom;
}

Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, int64_t dim, double eps) {
  detail::check_defined("cosine_similarity", x1);
  detail::check_defined("cosine_similarity", x2);
  Shape shape = broadcast_or_throw("cosine_similarity", x1, x2);
  Tensor a = x1.expand(shape), b = x2.expand(shape);
  // Each vector divided by its own norm first, as PyTorch 1.13 does: the result stays within
  // [-1, 1] where the product of the norms would overflow or lose precision.
  Tensor na = clamp_min(norm(a, 2.0, {dim}, /*keepdim=*/true), eps);
  Tensor nb = clamp_min(norm(b, 2.0, {dim}, /*keepdim=*/true), eps);
  return ((a / na) * (b / nb)).sum({dim});
}

Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p, double eps, bool keepdim) {
  detail::check_defined("pairwise_distance", x1);
  detail::check_defined("pairwise_distance", x2);
  Shape shape = broadcast_or_throw("pairwise_distance", x1, x2);
  check_state(!shape.empty(), "pairwise_distance",
              "expected inputs with at least one dim; got shapes ", x1.shape(), " and ",
              x2.shape());
  return norm(x1 - x2 + eps, p, {-1}, keepdim);
}

Tensor embedding_bag(const Tensor& input, const Tensor& weight, const Tensor& offsets,
                     const std::string& mode, const Tensor& per_sample_weights,
                     bool include_last_offset, int64_t padding_idx) {
  const char* op = "embedding_bag";
  detail::check_defined(op, input);
  detail::check_defined(op, weight);
  check_value(weight.dim() == 2, op, "weight has to be a 2D Tensor, but got Tensor of dimension ",
              weight.dim());
  check_type(!input.is_floating_point() && input.dtype() != kBool, op,
             "input must be an integer tensor; got ", input.dtype());
  check_value(mode == "sum" || mode == "mean" || mode == "max", op,
              "mode has to be one of sum, mean or max; got '", mode, "'");
  check_value(input.dim() == 1 || input.dim() == 2, op,
              "input has to be 1D or 2D Tensor, but got Tensor of dimension ", input.dim());
  if (per_sample_weights.defined()) {
    check_state(mode == "sum", op,
                "per_sample_weights was not None. per_sample_weights is only supported for "
                "mode='sum' (got mode='",
                mode, "'). Please open a feature request on GitHub.");
    check_value(per_sample_weights.shape() == input.shape(), op,
                "embedding_bag: If per_sample_weights (", per_sample_weights.shape(),
                ") is not None, then it must have the same shape as the input (", input.shape(),
                ")");
  }
  std::vector<int64_t> idx = to_vector(input);
  const int64_t total = int64_t(idx.size());
  std::vector<int64_t> starts;
  int64_t bags = 0;
  if (input.dim() == 2) {
    check_value(!offsets.defined(), op,
                "if input is 2D, then offsets has to be None, as input is treated is a "
                "mini-batch of fixed length sequences");
    bags = input.size(0);
    for (int64_t b = 0; b <= bags; ++b) starts.push_back(b * input.size(1));
  } else {
    check_value(offsets.defined() && offsets.dim() == 1, op,
                "offsets has to be a 1D Tensor when input is 1D; got ",
                offsets.defined() ? to_string(offsets.shape()) : std::string("None"));
    starts = to_vector(offsets);
    check_state(!starts.empty() && starts[0] == 0, op,
                "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start "
                "from position 0. However, got ",
                starts.empty() ? int64_t(-1) : starts[0]);
    if (!include_last_offset) starts.push_back(total);
    bags = int64_t(starts.size()) - 1;
    for (size_t b = 1; b < starts.size(); ++b) {
      check_state(starts[b] >= starts[b - 1] && starts[b] <= total, op,
                  "offsets must be non-decreasing and at most the input's length ", total,
                  "; got offsets[", b, "] = ", starts[b]);
    }
  }
  // The kept positions (all but padding_idx's), with the bag each one belongs to.
  std::vector<int64_t> rows, bag_of, positions, count(bags, 0);
  for (int64_t b = 0; b < bags; ++b) {
    for (int64_t i = starts[b]; i < starts[b + 1]; ++i) {
      check_index(idx[i] >= 0 && idx[i] < weight.size(0), op,
                  "index out of range in self: ", idx[i], " for ", weight.size(0), " embeddings");
      if (idx[i] == padding_idx) continue;
      rows.push_back(idx[i]), bag_of.push_back(b), positions.push_back(i), ++count[b];
    }
  }
  const int64_t dim = weight.size(1), kept = int64_t(rows.size());
  auto long_tensor = [&](const std::vector<int64_t>& v) {
    return tensor(v, Shape{int64_t(v.size())}, TensorOptions(kInt64).with_device(weight.device()));
  };
  Tensor picked = weight.index_select(0, long_tensor(rows));  // [kept, dim]
  if (per_sample_weights.defined()) {
    Tensor psw = per_sample_weights.reshape(Shape{-1}).index_select(0, long_tensor(positions));
    picked = picked * psw.unsqueeze(1);
  }
  if (mode == "max") {
    // Bag by bag: the bags are consecutive runs of the kept rows.
    std::vector<Tensor> out;
    int64_t at = 0;
    for (int64_t b = 0; b < bags; ++b) {
      out.push_back(count[b] == 0 ? zeros(Shape{dim}, options_of(weight))
                                  : amax(picked.narrow(0, at, count[b]), {0}));
      at += count[b];
    }
    return bags == 0 ? zeros(Shape{0, dim}, options_of(weight)) : stack(out, 0);
  }
  Tensor index = long_tensor(bag_of).unsqueeze(1).expand(Shape{kept, dim}).contiguous();
  Tensor sums = scatter_add(zeros(Shape{bags, dim}, options_of(weight)), 0, index, picked);
  if (mode == "sum") return sums;
  std::vector<double> divisor(count.begin(), count.end());
  for (double& d : divisor) d = d > 0 ? d : 1.0;  // empty bags stay zero
  return sums /
         tensor(divisor, Shape{bags, 1}, TensorOptions(kFloat64).with_device(weight.device()))
             .to(weight.dtype());
}

}  // namespace wick::nn::functional
