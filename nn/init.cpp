#include "nn/init.h"

#include <cmath>

#include "core/grad_mode.h"
#include "core/ops.h"

namespace wick::nn::init {

double calculate_gain(const std::string& nonlinearity, double param) {
  if (nonlinearity == "linear" || nonlinearity == "conv1d" || nonlinearity == "conv2d" ||
      nonlinearity == "sigmoid") {
    return 1.0;
  }
  if (nonlinearity == "tanh") return 5.0 / 3.0;
  if (nonlinearity == "relu") return std::sqrt(2.0);
  if (nonlinearity == "leaky_relu") return std::sqrt(2.0 / (1.0 + param * param));
  if (nonlinearity == "selu") return 3.0 / 4.0;
  throw_value_error("calculate_gain", "unsupported nonlinearity '", nonlinearity, "'");
}

std::pair<int64_t, int64_t> fan_in_and_fan_out(const Tensor& tensor) {
  check_value(tensor.defined() && tensor.dim() >= 2, "fan_in_and_fan_out",
              "fan in and fan out need a tensor with at least 2 dimensions; got ",
              tensor.defined() ? to_string(tensor.shape()) : std::string("undefined"));
  int64_t receptive = 1;
  for (int64_t d = 2; d < tensor.dim(); ++d) receptive *= tensor.size(d);
  return {tensor.size(1) * receptive, tensor.size(0) * receptive};
}

namespace {
// Writes `values` into `tensor` without recording history (parameters are leaves).
Tensor& assign(Tensor& tensor, const Tensor& values) {
  NoGradGuard no_grad;
  tensor.copy_(values);
  return tensor;
}

TensorOptions like(const Tensor& t) { return TensorOptions(t.dtype()).with_device(t.device()); }
}  // namespace

Tensor& uniform_(Tensor& tensor, double low, double high, Generator& generator) {
  check_value(low <= high, "uniform_", "low must not exceed high; got ", low, " and ", high);
  return assign(tensor, rand(tensor.shape(), like(tensor), generator) * (high - low) + low);
}

Tensor& normal_(Tensor& tensor, double mean, double std, Generator& generator) {
  check_value(std >= 0, "normal_", "std must be non-negative; got ", std);
  return assign(tensor, randn(tensor.shape(), like(tensor), generator) * std + mean);
}

Tensor& constant_(Tensor& tensor, double value) {
  NoGradGuard no_grad;
  tensor.fill_(value);
  return tensor;
}

Tensor& zeros_(Tensor& tensor) { return constant_(tensor, 0.0); }
Tensor& ones_(Tensor& tensor) { return constant_(tensor, 1.0); }

Tensor& xavier_uniform_(Tensor& tensor, double gain, Generator& generator) {
  auto [fan_in, fan_out] = fan_in_and_fan_out(tensor);
  double std = gain * std::sqrt(2.0 / static_cast<double>(fan_in + fan_out));
  double bound = std::sqrt(3.0) * std;
  return uniform_(tensor, -bound, bound, generator);
}

Tensor& xavier_normal_(Tensor& tensor, double gain, Generator& generator) {
  auto [fan_in, fan_out] = fan_in_and_fan_out(tensor);
  return normal_(tensor, 0.0, gain * std::sqrt(2.0 / static_cast<double>(fan_in + fan_out)),
                 generator);
}

namespace {
double kaiming_std(const Tensor& tensor, double a, FanMode mode, const std::string& nonlinearity) {
  auto [fan_in, fan_out] = fan_in_and_fan_out(tensor);
  int64_t fan = mode == FanMode::FanIn ? fan_in : fan_out;
  check_value(fan > 0, "kaiming", "cannot initialise a tensor with zero fan; shape ",
              tensor.shape());
  return calculate_gain(nonlinearity, a) / std::sqrt(static_cast<double>(fan));
}
}  // namespace

Tensor& kaiming_uniform_(Tensor& tensor, double a, FanMode mode, const std::string& nonlinearity,
                         Generator& generator) {
  double bound = std::sqrt(3.0) * kaiming_std(tensor, a, mode, nonlinearity);
  return uniform_(tensor, -bound, bound, generator);
}

Tensor& kaiming_normal_(Tensor& tensor, double a, FanMode mode, const std::string& nonlinearity,
                        Generator& generator) {
  return normal_(tensor, 0.0, kaiming_std(tensor, a, mode, nonlinearity), generator);
}

void fan_in_uniform_(Tensor& weight, Tensor& bias) {
  if (weight.numel() > 0) kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    int64_t fan_in = fan_in_and_fan_out(weight).first;
    double bound = fan_in > 0 ? 1.0 / std::sqrt(static_cast<double>(fan_in)) : 0.0;
    uniform_(bias, -bound, bound);
  }
}

}  // namespace wick::nn::init
