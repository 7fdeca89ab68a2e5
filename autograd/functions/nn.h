// Backward nodes of convolution, pooling and batch normalization; each runs its op's backward
// kernel (core/kernels.h) on the device of the tensors.
#pragma once

#include "autograd/node.h"
#include "core/kernels.h"
#include "core/op_table.h"

namespace wick {

struct Conv2dBackward : Node {  // inputs: input, weight, bias
  SavedTensor input, weight;
  Conv2dParams params;
  const char* name() const override { return op_info(OpKey::conv2d).backward; }
  TensorList apply(const Tensor& grad) override;
  void release_saved() override { input.reset(), weight.reset(); }
};

// The create_graph backward of conv2d's two gradients (Note [convolution's double backward]).
struct Conv2dInputGradBackward : Node {  // inputs: grad, weight
  SavedTensor grad, weight;
  Conv2dParams params;
  const char* name() const override { return "Conv2dInputGradBackward"; }
  TensorList apply(const Tensor& u) override;
  void release_saved() override { grad.reset(), weight.reset(); }
};

struct Conv2dWeightGradBackward : Node {  // inputs: grad, input
  SavedTensor grad, input;
  Conv2dParams params;
  const char* name() const override { return "Conv2dWeightGradBackward"; }
  TensorList apply(const Tensor& u) override;
  void release_saved() override { grad.reset(), input.reset(); }
};

// conv2d's input and weight gradients as differentiable ops: the backward kernel, recorded.
Tensor conv2d_input_grad(const Tensor& grad, const Tensor& weight, const Shape& input_shape,
                         const Conv2dParams& params);
Tensor conv2d_weight_grad(const Tensor& grad, const Tensor& input, const Shape& weight_shape,
                          const Conv2dParams& params);

struct MaxPool2dBackward : Node {
  SavedTensor indices;
  Pool2dParams params;
  const char* name() const override { return op_info(OpKey::max_pool2d).backward; }
  TensorList apply(const Tensor& grad) override;
  void release_saved() override { indices.reset(); }
};

struct AvgPool2dBackward : Node {
  Pool2dParams params;
  bool adaptive = false;
  const char* name() const override {
    return op_info(adaptive ? OpKey::adaptive_avg_pool2d : OpKey::avg_pool2d).backward;
  }
  TensorList apply(const Tensor& grad) override;
};

// The backward of average pooling's backward: the pooling itself (it is linear).
struct AvgPool2dGradBackward : Node {  // input: grad
  Pool2dParams params;
  bool adaptive = false;
  const char* name() const override { return "AvgPool2dGradBackward"; }
  TensorList apply(const Tensor& u) override;
};
Tensor avg_pool2d_grad(const Tensor& grad, const Shape& input_shape, const Pool2dParams& params,
                       bool adaptive);

struct BatchNormBackward : Node {  // inputs: input, weight, bias, residual (training mode)
  SavedTensor input, weight, save_mean, save_invstd;
  SavedTensor bias, residual;  // for the relu's mask (Note [batch norm's fused epilogue])
  BatchNormParams params;
  const char* name() const override { return op_info(OpKey::batch_norm).backward; }
  TensorList apply(const Tensor& grad) override;
  void release_saved() override {
    input.reset(), weight.reset(), save_mean.reset(), save_invstd.reset();
    bias.reset(), residual.reset();
  }
};

}  // namespace wick
