// The layers of conv_more.h, norm_more.h and resample.h as modules: each holds its parameters
// and calls one function in forward(). Constructors take PyTorch's arguments and initialise like
// PyTorch, so state_dicts load either way.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/ops/nn.h"
#include "nn/module.h"

namespace wick::nn {

class Conv1d : public Module {
 public:
  Conv1d(int64_t in_channels, int64_t out_channels, int64_t kernel_size, int64_t stride = 1,
         int64_t padding = 0, int64_t dilation = 1, int64_t groups = 1, bool bias = true);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  Tensor weight, bias;  // weight [out, in / groups, k]

 private:
  int64_t in_channels_, out_channels_, kernel_size_, stride_, padding_, dilation_, groups_;
};

class ConvTranspose2d : public Module {
 public:
  ConvTranspose2d(int64_t in_channels, int64_t out_channels, Pair2 kernel_size, Pair2 stride = 1,
                  Pair2 padding = 0, Pair2 output_padding = 0, int64_t groups = 1, bool bias = true,
                  Pair2 dilation = 1);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  Tensor weight, bias;  // weight [in, out / groups, kh, kw]

 private:
  int64_t in_channels_, out_channels_, groups_;
  Pair2 kernel_size_, stride_, padding_, output_padding_, dilation_;
};

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

class AdaptiveAvgPool1d : public Module {
 public:
  explicit AdaptiveAvgPool1d(int64_t output_size);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;

 private:
  int64_t output_size_;
};

class AdaptiveMaxPool2d : public Module {
 public:
  explicit AdaptiveMaxPool2d(Pair2 output_size);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;

 private:
  Pair2 output_size_;
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

// PyTorch's defaults: no affine parameters and no running statistics. With
// track_running_stats, eval() normalizes with the running ones.
class InstanceNorm2d : public Module {
 public:
  explicit InstanceNorm2d(int64_t num_features, double eps = 1e-5, double momentum = 0.1,
                          bool affine = false, bool track_running_stats = false);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  Tensor weight, bias;
  Tensor running_mean, running_var, num_batches_tracked;

 private:
  int64_t num_features_;
  double eps_, momentum_;
};

class Dropout2d : public Module {
 public:
  explicit Dropout2d(double p = 0.5);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;

 private:
  double p_;
};

// Give size or scale_factor (one entry, or one per spatial dim).
class Upsample : public Module {
 public:
  Upsample(std::vector<int64_t> size, std::vector<double> scale_factor,
           std::string mode = "nearest", std::optional<bool> align_corners = std::nullopt);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;

 private:
  std::vector<int64_t> size_;
  std::vector<double> scale_factor_;
  std::string mode_;
  std::optional<bool> align_corners_;
};

class PixelShuffle : public Module {
 public:
  explicit PixelShuffle(int64_t upscale_factor);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;

 private:
  int64_t upscale_factor_;
};

// ConstantPad2d, ReflectionPad2d, ReplicationPad2d and ZeroPad2d: padding (left, right, top,
// bottom), or one number for all four.
class Pad2d : public Module {
 public:
  Pad2d(const char* type_name, std::vector<int64_t> padding, std::string mode, double value);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;

 private:
  std::vector<int64_t> padding_;
  std::string mode_;
  double value_;
};
struct ZeroPad2d : Pad2d {
  explicit ZeroPad2d(std::vector<int64_t> padding) : Pad2d("ZeroPad2d", padding, "constant", 0) {}
};
struct ConstantPad2d : Pad2d {
  ConstantPad2d(std::vector<int64_t> padding, double value)
      : Pad2d("ConstantPad2d", padding, "constant", value) {}
};
struct ReflectionPad2d : Pad2d {
  explicit ReflectionPad2d(std::vector<int64_t> padding)
      : Pad2d("ReflectionPad2d", padding, "reflect", 0) {}
};
struct ReplicationPad2d : Pad2d {
  explicit ReplicationPad2d(std::vector<int64_t> padding)
      : Pad2d("ReplicationPad2d", padding, "replicate", 0) {}
};

class Unfold : public Module {
 public:
  explicit Unfold(Pair2 kernel_size, Pair2 dilation = 1, Pair2 padding = 0, Pair2 stride = 1);
  Tensor forward(const Tensor& input) override;

 private:
  Pair2 kernel_size_, dilation_, padding_, stride_;
};

class Fold : public Module {
 public:
  Fold(Pair2 output_size, Pair2 kernel_size, Pair2 dilation = 1, Pair2 padding = 0,
       Pair2 stride = 1);
  Tensor forward(const Tensor& input) override;

 private:
  Pair2 output_size_, kernel_size_, dilation_, padding_, stride_;
};

class CosineSimilarity : public Module {
 public:
  explicit CosineSimilarity(int64_t dim = 1, double eps = 1e-8);
  Tensor forward(const Tensor& x1, const Tensor& x2);
  using Module::forward;  // the one-input form raises: these take two

 private:
  int64_t dim_;
  double eps_;
};

class PairwiseDistance : public Module {
 public:
  explicit PairwiseDistance(double p = 2.0, double eps = 1e-6, bool keepdim = false);
  Tensor forward(const Tensor& x1, const Tensor& x2);
  using Module::forward;  // the one-input form raises: these take two

 private:
  double p_, eps_;
  bool keepdim_;
};

// weight [num_embeddings, embedding_dim] from N(0, 1), the padding row (if any) zeroed.
class EmbeddingBag : public Module {
 public:
  EmbeddingBag(int64_t num_embeddings, int64_t embedding_dim, std::string mode = "mean",
               bool include_last_offset = false, int64_t padding_idx = -1);
  Tensor forward(const Tensor& input, const Tensor& offsets,
                 const Tensor& per_sample_weights = Tensor());
  Tensor forward(const Tensor& input) override;  // 2-D input: fixed-length bags
  std::string extra_repr() const override;
  Tensor weight;

 private:
  int64_t num_embeddings_, embedding_dim_, padding_idx_;
  std::string mode_;
  bool include_last_offset_;
};

}  // namespace wick::nn
