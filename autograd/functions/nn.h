// Backward nodes of convolution, pooling and batch normalization; each runs its op's backward
// kernel (core/kernels.h) on the device of the tensors.
#pragma once

#include "autograd/node.h"
#include "core/kernels.h"

namespace wick {

struct Conv2dBackward : Node {  // inputs: input, weight, bias
  SavedTensor input, weight;
  Conv2dParams params;
  const char* name() const override { return "Conv2dBackward"; }
  TensorList apply(const Tensor& grad) override;
  void release_saved() override { input.reset(), weight.reset(); }
};

struct MaxPool2dBackward : Node {
  SavedTensor indices;
  Pool2dParams params;
  const char* name() const override { return "MaxPool2dBackward"; }
  TensorList apply(const Tensor& grad) override;
  void release_saved() override { indices.reset(); }
};

struct AvgPool2dBackward : Node {
  Pool2dParams params;
  bool adaptive = false;
  const char* name() const override {
    return adaptive ? "AdaptiveAvgPool2dBackward" : "AvgPool2dBackward";
  }
  TensorList apply(const Tensor& grad) override;
};

struct BatchNormBackward : Node {  // inputs: input, weight, bias (training mode)
  SavedTensor input, weight, save_mean, save_invstd;
  const char* name() const override { return "BatchNormBackward"; }
  TensorList apply(const Tensor& grad) override;
  void release_saved() override {
    input.reset(), weight.reset(), save_mean.reset(), save_invstd.reset();
  }
};

}  // namespace wick
