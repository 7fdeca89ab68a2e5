// The layers: each holds its parameters and calls one function of nn::functional in forward().
// Constructors take PyTorch's arguments and initialise like PyTorch does.
#pragma once

#include <optional>
#include <string>

#include "core/ops/nn.h"
#include "nn/module.h"

namespace wick::nn {

// y = x W^T + b, W [out_features, in_features]. Initialised like PyTorch: W and b uniform in
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

class Conv2d : public Module {
 public:
  Conv2d(int64_t in_channels, int64_t out_channels, Pair2 kernel_size, Pair2 stride = 1,
         Pair2 padding = 0, Pair2 dilation = 1, int64_t groups = 1, bool bias = true);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  Tensor weight, bias;

 private:
  int64_t in_channels_, out_channels_, groups_;
  Pair2 kernel_size_, stride_, padding_, dilation_;
};

class MaxPool2d : public Module {
 public:
  // stride kStrideOfKernel means "equal to kernel_size", PyTorch's default.
  explicit MaxPool2d(Pair2 kernel_size, Pair2 stride = kStrideOfKernel, Pair2 padding = 0,
                     Pair2 dilation = 1, bool ceil_mode = false);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;

 private:
  Pair2 kernel_size_, stride_, padding_, dilation_;
  bool ceil_mode_;
};

class AvgPool2d : public Module {
 public:
  explicit AvgPool2d(Pair2 kernel_size, Pair2 stride = kStrideOfKernel, Pair2 padding = 0,
                     bool ceil_mode = false, bool count_include_pad = true);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;

 private:
  Pair2 kernel_size_, stride_, padding_;
  bool ceil_mode_, count_include_pad_;
};

class AdaptiveAvgPool2d : public Module {
 public:
  explicit AdaptiveAvgPool2d(Pair2 output_size);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;

 private:
  Pair2 output_size_;
};

class Dropout : public Module {
 public:
  explicit Dropout(double p = 0.5);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;

 private:
  double p_;
};

// A lookup table of num_embeddings vectors; weight initialised from N(0, 1) like PyTorch, with
// the padding row (if any) zeroed. padding_idx may be negative (counted from the end, as in
// PyTorch); no padding_idx means no padding row.
class Embedding : public Module {
 public:
  Embedding(int64_t num_embeddings, int64_t embedding_dim,
            std::optional<int64_t> padding_idx = std::nullopt);
  Tensor forward(const Tensor& indices) override;
  std::string extra_repr() const override;
  Tensor weight;

 private:
  int64_t num_embeddings_, embedding_dim_;
  int64_t padding_idx_;  // -1: none
};

class Flatten : public Module {
 public:
  explicit Flatten(int64_t start_dim = 1, int64_t end_dim = -1);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;

 private:
  int64_t start_dim_, end_dim_;
};

class Identity : public Module {
 public:
  Identity() : Module("Identity") {}
  Tensor forward(const Tensor& input) override { return input; }
};

// ---- activations ----

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
