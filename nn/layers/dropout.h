// Dropout: each element (dropout), or each whole channel (dropout2d), zeroed with probability
// p in training and the rest scaled by 1 / (1 - p), so evaluation needs no rescaling.
#pragma once

#include <string>

#include "core/ops.h"
#include "nn/module.h"

namespace wick::nn::functional {

// The identity when not training.
Tensor dropout(const Tensor& input, double p = 0.5, bool training = true);

// Zeroes whole channels (all of * for each [n, c] of [N, C, *]); the identity when not
// training.
Tensor dropout2d(const Tensor& input, double p = 0.5, bool training = true);

}  // namespace wick::nn::functional

namespace wick::nn {

class Dropout : public Module {
 public:
  explicit Dropout(double p = 0.5);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;

 private:
  double p_;
};

class Dropout2d : public Module {
 public:
  explicit Dropout2d(double p = 0.5);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;

 private:
  double p_;
};

}  // namespace wick::nn
