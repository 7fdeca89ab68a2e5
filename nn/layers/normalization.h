// Normalization: batch norm (per channel, over the batch), instance norm (per sample and
// channel), group norm (per sample, over groups of channels) and layer norm (per sample, over the
// last dims), as functions and as modules, and normalize (vectors to unit p-norm). batch_norm has
// kernels of its own (core/ops/nn.h); the rest are compositions of reductions and arithmetic.
#pragma once

#include <string>

#include "core/ops.h"
#include "nn/module.h"

namespace wick::nn::functional {

using wick::batch_norm;

// Normalizes over the last normalized_shape.size() dims, then applies weight and bias (each may
// be undefined) of shape normalized_shape.
Tensor layer_norm(const Tensor& input, const Shape& normalized_shape,
                  const Tensor& weight = Tensor(), const Tensor& bias = Tensor(),
                  double eps = 1e-5);

// input [N, C, *]: the C channels split into num_groups groups, each normalized over its
// channels and all of *; weight and bias [C] (each may be undefined).
Tensor group_norm(const Tensor& input, int64_t num_groups, const Tensor& weight = Tensor(),
                  const Tensor& bias = Tensor(), double eps = 1e-5);

// input [N, C, *]: each (sample, channel) normalized over *. With use_input_stats the
// statistics are the input's and running_mean / running_var (if given, [C]) are updated in
// place with momentum, averaged over the batch (the variance unbiased); without, the running
// statistics normalize.
Tensor instance_norm(const Tensor& input, const Tensor& running_mean = Tensor(),
                     const Tensor& running_var = Tensor(), const Tensor& weight = Tensor(),
                     const Tensor& bias = Tensor(), bool use_input_stats = true,
                     double momentum = 0.1, double eps = 1e-5);

// input / max(||input||_p over dim, eps).
Tensor normalize(const Tensor& input, double p = 2.0, int64_t dim = 1, double eps = 1e-12);

}  // namespace wick::nn::functional

namespace wick::nn {

// The set-up that batch norm and instance norm share (PyTorch's _NormBase): weight (ones) and
// bias (zeros) [num_features] when affine; running_mean, running_var and num_batches_tracked
// (buffers, so they are saved in checkpoints) when tracking running statistics.
class NormBase : public Module {
 public:
  NormBase(const char* type_name, int64_t num_features, double eps, double momentum, bool affine,
           bool track_running_stats);
  std::string extra_repr() const override;
  Tensor weight, bias;
  Tensor running_mean, running_var, num_batches_tracked;

 protected:
  int64_t num_features_;
  double eps_, momentum_;
};

// Shared by BatchNorm1d ([N, C] or [N, C, L]) and BatchNorm2d ([N, C, H, W]). In training it
// normalizes with the batch's statistics and updates the running ones; in eval() it uses the
// running ones.
class BatchNorm : public NormBase {
 public:
  BatchNorm(const char* type_name, int64_t num_features, double eps, double momentum, bool affine,
            bool track_running_stats);
  Tensor forward(const Tensor& input) override;
  // relu(forward(input) + residual) in one kernel each way (wick::batch_norm_relu); the residual
  // may be undefined. ResNet's blocks call it in training.
  Tensor forward_relu(const Tensor& input, const Tensor& residual = Tensor());

 protected:
  virtual void check_input(const Tensor& input) const = 0;

 private:
  Tensor normalize(const Tensor& input, const Tensor& residual, bool relu);
};

class BatchNorm1d : public BatchNorm {
 public:
  explicit BatchNorm1d(int64_t num_features, double eps = 1e-5, double momentum = 0.1,
                       bool affine = true, bool track_running_stats = true)
      : BatchNorm("BatchNorm1d", num_features, eps, momentum, affine, track_running_stats) {}

 protected:
  void check_input(const Tensor& input) const override;
};

class BatchNorm2d : public BatchNorm {
 public:
  explicit BatchNorm2d(int64_t num_features, double eps = 1e-5, double momentum = 0.1,
                       bool affine = true, bool track_running_stats = true)
      : BatchNorm("BatchNorm2d", num_features, eps, momentum, affine, track_running_stats) {}

 protected:
  void check_input(const Tensor& input) const override;
};

// PyTorch's defaults: no affine parameters and no running statistics. With
// track_running_stats, eval() normalizes with the running ones.
class InstanceNorm2d : public NormBase {
 public:
  explicit InstanceNorm2d(int64_t num_features, double eps = 1e-5, double momentum = 0.1,
                          bool affine = false, bool track_running_stats = false)
      : NormBase("InstanceNorm2d", num_features, eps, momentum, affine, track_running_stats) {}
  Tensor forward(const Tensor& input) override;
};

// weight ones and bias zeros [num_channels], when affine.
class GroupNorm : public Module {
 public:
  GroupNorm(int64_t num_groups, int64_t num_channels, double eps = 1e-5, bool affine = true);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  Tensor weight, bias;

 private:
  int64_t num_groups_, num_channels_;
  double eps_;
};

// weight ones and bias zeros of normalized_shape, when elementwise_affine.
class LayerNorm : public Module {
 public:
  explicit LayerNorm(const Shape& normalized_shape, double eps = 1e-5,
                     bool elementwise_affine = true);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  Tensor weight, bias;

 private:
  Shape normalized_shape_;
  double eps_;
};

}  // namespace wick::nn
