#include "nn/layers/activation.h"

namespace wick::nn {

namespace F = functional;

Tensor ReLU::forward(const Tensor& input) { return F::relu(input); }

GELU::GELU(std::string approximate) : Module("GELU"), approximate_(std::move(approximate)) {
  check_value(approximate_ == "none" || approximate_ == "tanh", "GELU",
              "approximate must be 'none' or 'tanh'; got '", approximate_, "'");
}

Tensor GELU::forward(const Tensor& input) { return F::gelu(input, approximate_); }
std::string GELU::extra_repr() const { return "approximate='" + approximate_ + "'"; }

Tensor SiLU::forward(const Tensor& input) { return F::silu(input); }
Tensor Tanh::forward(const Tensor& input) { return F::tanh(input); }
Tensor Sigmoid::forward(const Tensor& input) { return F::sigmoid(input); }

Softmax::Softmax(int64_t dim) : Module("Softmax"), dim_(dim) {}
Tensor Softmax::forward(const Tensor& input) { return F::softmax(input, dim_); }
std::string Softmax::extra_repr() const { return "dim=" + std::to_string(dim_); }

LogSoftmax::LogSoftmax(int64_t dim) : Module("LogSoftmax"), dim_(dim) {}
Tensor LogSoftmax::forward(const Tensor& input) { return F::log_softmax(input, dim_); }
std::string LogSoftmax::extra_repr() const { return "dim=" + std::to_string(dim_); }

}  // namespace wick::nn
