#include "nn/layers/linear.h"

#include <sstream>

#include "nn/init.h"

namespace wick::nn {

namespace functional {

Tensor flatten(const Tensor& input, int64_t start_dim, int64_t end_dim) {
  return wick::flatten(input, start_dim, end_dim);
}

}  // namespace functional

// A layer with a zero size (Linear(0, 4)) is valid, as in PyTorch.
Linear::Linear(int64_t in_features, int64_t out_features, bool with_bias)
    : Module("Linear"), in_features_(in_features), out_features_(out_features) {
  check_value(in_features >= 0 && out_features >= 0, "Linear",
              "in_features and out_features must be non-negative; got ", in_features, " and ",
              out_features);
  weight = register_parameter("weight", empty({out_features, in_features}));
  if (with_bias) bias = register_parameter("bias", empty({out_features}));
  init::fan_in_uniform_(weight, bias);
}

Tensor Linear::forward(const Tensor& input) { return functional::linear(input, weight, bias); }

std::string Linear::extra_repr() const {
  std::ostringstream os;
  os << "in_features=" << in_features_ << ", out_features=" << out_features_
     << ", bias=" << (bias.defined() ? "True" : "False");
  return os.str();
}

Flatten::Flatten(int64_t start_dim, int64_t end_dim)
    : Module("Flatten"), start_dim_(start_dim), end_dim_(end_dim) {}

Tensor Flatten::forward(const Tensor& input) {
  return functional::flatten(input, start_dim_, end_dim_);
}

std::string Flatten::extra_repr() const {
  std::ostringstream os;
  os << "start_dim=" << start_dim_ << ", end_dim=" << end_dim_;
  return os.str();
}

}  // namespace wick::nn
