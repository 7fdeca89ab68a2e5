// Normalization layers: batch norm (per channel, over the batch) and layer norm (per sample,
// over the last dims).
#pragma once

#include "nn/module.h"

namespace wick::nn {

// Shared by BatchNorm1d ([N, C] or [N, C, L]) and BatchNorm2d ([N, C, H, W]). In training it
// normalizes with the batch's statistics and updates running_mean / running_var (buffers, so
// they are saved in checkpoints); in eval() it uses the running ones.
class BatchNorm : public Module {
 public:
  BatchNorm(const char* type_name, int64_t num_features, double eps, double momentum, bool affine,
            bool track_running_stats);
  Tensor forward(const Tensor& input) override;
  // relu(forward(input) + residual) in one kernel each way (wick::batch_norm_relu); the residual
  // may be undefined. ResNet's blocks call it in training.
  Tensor forward_relu(const Tensor& input, const Tensor& residual = Tensor());
  std::string extra_repr() const override;
  Tensor weight, bias;                                    // [C], when affine
  Tensor running_mean, running_var, num_batches_tracked;  // when tracking running stats

 protected:
  virtual void check_input(const Tensor& input) const = 0;

 private:
  Tensor normalize(const Tensor& input, const Tensor& residual, bool relu);
  int64_t num_features_;
  double eps_, momentum_;
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
