// Pooling: max and average pooling over windows, and the adaptive forms that choose their
// windows from an output size, in one and two dims. The 2-D pools have kernels of their own
// (core/ops/nn.h); the 1-D ones run them on a height-1 image, and adaptive max pooling gathers
// its windows, so their backward comes from autograd and they run on every device.
#pragma once

#include <string>

#include "core/ops.h"
#include "nn/module.h"

namespace wick::nn::functional {

using wick::adaptive_avg_pool2d;
using wick::avg_pool2d;
using wick::max_pool2d;
using wick::max_pool2d_with_indices;

// Pools over the last dim of [N, C, L] (or [C, L]); stride kStrideOfKernel means kernel_size.
ValuesIndices max_pool1d_with_indices(const Tensor& input, int64_t kernel_size,
                                      int64_t stride = kStrideOfKernel, int64_t padding = 0,
                                      int64_t dilation = 1, bool ceil_mode = false);
Tensor max_pool1d(const Tensor& input, int64_t kernel_size, int64_t stride = kStrideOfKernel,
                  int64_t padding = 0, int64_t dilation = 1, bool ceil_mode = false);
Tensor avg_pool1d(const Tensor& input, int64_t kernel_size, int64_t stride = kStrideOfKernel,
                  int64_t padding = 0, bool ceil_mode = false, bool count_include_pad = true);
Tensor adaptive_avg_pool1d(const Tensor& input, int64_t output_size);

// The maximum of each adaptive window (PyTorch's: rows floor(i * H / oh) to
// ceil((i + 1) * H / oh)); indices are flat positions in H * W, as max_pool2d's.
ValuesIndices adaptive_max_pool2d_with_indices(const Tensor& input, Pair2 output_size);
Tensor adaptive_max_pool2d(const Tensor& input, Pair2 output_size);

}  // namespace wick::nn::functional

namespace wick::nn {

// A stride of kStrideOfKernel means "equal to kernel_size", PyTorch's default.
class MaxPool1d : public Module {
 public:
  explicit MaxPool1d(int64_t kernel_size, int64_t stride = kStrideOfKernel, int64_t padding = 0,
                     int64_t dilation = 1, bool ceil_mode = false);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;

 private:
  int64_t kernel_size_, stride_, padding_, dilation_;
  bool ceil_mode_;
};

class MaxPool2d : public Module {
 public:
  explicit MaxPool2d(Pair2 kernel_size, Pair2 stride = kStrideOfKernel, Pair2 padding = 0,
                     Pair2 dilation = 1, bool ceil_mode = false);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;

 private:
  Pair2 kernel_size_, stride_, padding_, dilation_;
  bool ceil_mode_;
};

class AvgPool1d : public Module {
 public:
  explicit AvgPool1d(int64_t kernel_size, int64_t stride = kStrideOfKernel, int64_t padding = 0,
                     bool ceil_mode = false, bool count_include_pad = true);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;

 private:
  int64_t kernel_size_, stride_, padding_;
  bool ceil_mode_, count_include_pad_;
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

class AdaptiveAvgPool1d : public Module {
 public:
  explicit AdaptiveAvgPool1d(int64_t output_size);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;

 private:
  int64_t output_size_;
};

class AdaptiveAvgPool2d : public Module {
 public:
  explicit AdaptiveAvgPool2d(Pair2 output_size);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;

 private:
  Pair2 output_size_;
};

class AdaptiveMaxPool2d : public Module {
 public:
  explicit AdaptiveMaxPool2d(Pair2 output_size);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;

 private:
  Pair2 output_size_;
};

}  // namespace wick::nn
