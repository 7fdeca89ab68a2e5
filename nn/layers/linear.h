// Linear layers: y = x W^T + b, and the two parameterless layers PyTorch keeps beside it
// (Identity, and Flatten, which turns feature maps into the rows a Linear reads).
#pragma once

#include <string>

#include "core/ops.h"
#include "nn/module.h"

namespace wick::nn::functional {

using wick::linear;

Tensor flatten(const Tensor& input, int64_t start_dim = 1, int64_t end_dim = -1);

}  // namespace wick::nn::functional

namespace wick::nn {

// W [out_features, in_features]. Initialised like PyTorch: W and b uniform in
// +-1/sqrt(in_features).
class Linear : public Module {
 public:
  Linear(int64_t in_features, int64_t out_features, bool bias = true);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  Tensor weight, bias;  // bias undefined when bias=false

 private:
  int64_t in_features_, out_features_;
};

class Identity : public Module {
 public:
  Identity() : Module("Identity") {}
  Tensor forward(const Tensor& input) override { return input; }
};

class Flatten : public Module {
 public:
  explicit Flatten(int64_t start_dim = 1, int64_t end_dim = -1);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;

 private:
  int64_t start_dim_, end_dim_;
};

}  // namespace wick::nn
