// Activations: elementwise nonlinearities and softmax, as modules. Their functions are core ops
// with kernels of their own (core/ops/), which nn::functional names as PyTorch does.
#pragma once

#include <string>

#include "core/ops.h"
#include "nn/module.h"

namespace wick::nn::functional {

using wick::gelu;
using wick::leaky_relu;
using wick::log_softmax;
using wick::relu;
using wick::sigmoid;
using wick::silu;
using wick::softmax;
using wick::tanh;

}  // namespace wick::nn::functional

namespace wick::nn {

class ReLU : public Module {
 public:
  ReLU() : Module("ReLU") {}
  Tensor forward(const Tensor& input) override;
};

class GELU : public Module {
 public:
  explicit GELU(std::string approximate = "none");
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;

 private:
  std::string approximate_;
};

class SiLU : public Module {
 public:
  SiLU() : Module("SiLU") {}
  Tensor forward(const Tensor& input) override;
};

class Tanh : public Module {
 public:
  Tanh() : Module("Tanh") {}
  Tensor forward(const Tensor& input) override;
};

class Sigmoid : public Module {
 public:
  Sigmoid() : Module("Sigmoid") {}
  Tensor forward(const Tensor& input) override;
};

class Softmax : public Module {
 public:
  explicit Softmax(int64_t dim);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;

 private:
  int64_t dim_;
};

class LogSoftmax : public Module {
 public:
  explicit LogSoftmax(int64_t dim);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;

 private:
  int64_t dim_;
};

}  // namespace wick::nn
