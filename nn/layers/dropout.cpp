#include "nn/layers/dropout.h"

#include <sstream>

#include "core/ops/op_utils.h"

namespace wick::nn {

namespace functional {

namespace {

// Inverted dropout with one draw per element of `mask` (broadcast over the input): 0 < p < 1.
Tensor drop(const Tensor& input, double p, const Shape& mask) {
  Tensor keep =
      (rand(mask, TensorOptions(input.dtype()).with_device(input.device())) >= p).to(input.dtype());
  return input * keep * (1.0 / (1.0 - p));
}

}  // namespace

Tensor dropout(const Tensor& input, double p, bool training) {
  check_value(p >= 0.0 && p <= 1.0, "dropout", "probability must be in [0, 1]; got ", p);
  check_value(input.defined(), "dropout", "got an undefined tensor");
  if (!training || p == 0.0) return input;
  if (p == 1.0) return input * 0.0;
  return drop(input, p, input.shape());
}

Tensor dropout2d(const Tensor& input, double p, bool training) {
  check_value(p >= 0.0 && p <= 1.0, "dropout2d",
              "dropout probability has to be between 0 and 1, but got ", p);
  wick::detail::check_defined("dropout2d", input);
  if (!training || p == 0.0) return input;
  check_state(input.dim() >= 2, "dropout2d",
              "Feature dropout requires at least 2 dimensions in the input; got input of shape ",
              input.shape());
  if (p == 1.0) return input * 0.0;
  // One draw per (sample, channel), broadcast over the rest: whole feature maps drop together.
  Shape mask = Shape::filled(input.dim(), 1);
  mask[0] = input.size(0);
  mask[1] = input.size(1);
  return drop(input, p, mask);
}

}  // namespace functional

namespace {

std::string dropout_repr(double p) {
  std::ostringstream os;
  os << "p=" << p << ", inplace=False";
  return os.str();
}

}  // namespace

Dropout::Dropout(double p) : Module("Dropout"), p_(p) {
  check_value(p >= 0.0 && p <= 1.0, "Dropout", "probability must be in [0, 1]; got ", p);
}

Tensor Dropout::forward(const Tensor& input) { return functional::dropout(input, p_, training_); }
std::string Dropout::extra_repr() const { return dropout_repr(p_); }

Dropout2d::Dropout2d(double p) : Module("Dropout2d"), p_(p) {
  check_value(p >= 0.0 && p <= 1.0, "Dropout2d",
              "dropout probability has to be between 0 and 1, but got ", p);
}

Tensor Dropout2d::forward(const Tensor& input) {
  return functional::dropout2d(input, p_, training_);
}
std::string Dropout2d::extra_repr() const { return dropout_repr(p_); }

}  // namespace wick::nn
