#include "nn/layers_more.h"

#include <cmath>
#include <sstream>

#include "nn/conv_more.h"
#include "nn/init.h"
#include "nn/norm_more.h"
#include "nn/resample.h"

namespace wick::nn {

namespace F = functional;

namespace {

std::string pair_text(Pair2 p) {
  std::ostringstream os;
  os << '(' << p.h << ", " << p.w << ')';
  return os.str();
}

// PyTorch's _ConvNd.reset_parameters: kaiming_uniform_(a=sqrt(5)) on the weight, the bias
// uniform in +-1/sqrt(fan_in). For a transposed convolution fan_in is computed from the weight
// [in, out / groups, k...] just the same, as PyTorch does.
void reset_conv(Tensor& weight, Tensor& bias) {
  if (weight.numel() > 0) init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    int64_t fan_in = init::fan_in_and_fan_out(weight).first;
    double bound = fan_in > 0 ? 1.0 / std::sqrt(static_cast<double>(fan_in)) : 0.0;
    init::uniform_(bias, -bound, bound);
  }
}

void check_channels(const char* type, int64_t in, int64_t out, int64_t groups) {
  check_value(in > 0 && out > 0 && groups > 0, type,
              "in_channels, out_channels and groups must be positive; got ", in, ", ", out, ", ",
              groups);
  check_value(in % groups == 0, type,
              "in_channels must be divisible by groups; got in_channels=", in, ", groups=", groups);
  check_value(out % groups == 0, type,
              "out_channels must be divisible by groups; got out_channels=", out,
              ", groups=", groups);
}

template <class T>
std::string list_text(const std::vector<T>& v) {
  std::ostringstream os;
  if (v.size() == 1) {
    os << v[0];
    return os.str();
  }
  os << '(';
  for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
  os << ')';
  return os.str();
}

}  // namespace

Conv1d::Conv1d(int64_t in_channels, int64_t out_channels, int64_t kernel_size, int64_t stride,
               int64_t padding, int64_t dilation, int64_t groups, bool with_bias)
    : Module("Conv1d"),
      in_channels_(in_channels),
      out_channels_(out_channels),
      kernel_size_(kernel_size),
      stride_(stride),
      padding_(padding),
      dilation_(dilation),
      groups_(groups) {
  check_channels("Conv1d", in_channels, out_channels, groups);
  check_value(kernel_size > 0, "Conv1d", "kernel_size must be positive; got ", kernel_size);
  weight = register_parameter("weight", empty({out_channels, in_channels / groups, kernel_size}));
  if (with_bias) bias = register_parameter("bias", empty({out_channels}));
  reset_conv(weight, bias);
}

Tensor Conv1d::forward(const Tensor& input) {
  return F::conv1d(input, weight, bias, stride_, padding_, dilation_, groups_);
}

std::string Conv1d::extra_repr() const {
  std::ostringstream os;
  os << in_channels_ << ", " << out_channels_ << ", kernel_size=(" << kernel_size_ << ",), stride=("
     << stride_ << ",)";
  if (padding_ != 0) os << ", padding=(" << padding_ << ",)";
  if (dilation_ != 1) os << ", dilation=(" << dilation_ << ",)";
  if (groups_ != 1) os << ", groups=" << groups_;
  if (!bias.defined()) os << ", bias=False";
  return os.str();
}

ConvTranspose2d::ConvTranspose2d(int64_t in_channels, int64_t out_channels, Pair2 kernel_size,
                                 Pair2 stride, Pair2 padding, Pair2 output_padding, int64_t groups,
                                 bool with_bias, Pair2 dilation)
    : Module("ConvTranspose2d"),
      in_channels_(in_channels),
      out_channels_(out_channels),
      groups_(groups),
      kernel_size_(kernel_size),
      stride_(stride),
      padding_(padding),
      output_padding_(output_padding),
      dilation_(dilation) {
  check_channels("ConvTranspose2d", in_channels, out_channels, groups);
  check_value(kernel_size.h > 0 && kernel_size.w > 0, "ConvTranspose2d",
              "kernel_size must be positive; got ", pair_text(kernel_size));
  weight = register_parameter(
      "weight", empty({in_channels, out_channels / groups, kernel_size.h, kernel_size.w}));
  if (with_bias) bias = register_parameter("bias", empty({out_channels}));
  reset_conv(weight, bias);
}

Tensor ConvTranspose2d::forward(const Tensor& input) {
  return F::conv_transpose2d(input, weight, bias, stride_, padding_, output_padding_, groups_,
                             dilation_);
}

std::string ConvTranspose2d::extra_repr() const {
  std::ostringstream os;
  os << in_channels_ << ", " << out_channels_ << ", kernel_size=" << pair_text(kernel_size_)
     << ", stride=" << pair_text(stride_);
  if (padding_.h != 0 || padding_.w != 0) os << ", padding=" << pair_text(padding_);
  if (dilation_.h != 1 || dilation_.w != 1) os << ", dilation=" << pair_text(dilation_);
  if (output_padding_.h != 0 || output_padding_.w != 0) {
    os << ", output_padding=" << pair_text(output_padding_);
  }
  if (groups_ != 1) os << ", groups=" << groups_;
  if (!bias.defined()) os << ", bias=False";
  return os.str();
}

MaxPool1d::MaxPool1d(int64_t kernel_size, int64_t stride, int64_t padding, int64_t dilation,
                     bool ceil_mode)
    : Module("MaxPool1d"),
      kernel_size_(kernel_size),
      stride_(stride == kStrideOfKernel ? kernel_size : stride),
      padding_(padding),
      dilation_(dilation),
      ceil_mode_(ceil_mode) {}

Tensor MaxPool1d::forward(const Tensor& input) {
  return F::max_pool1d(input, kernel_size_, stride_, padding_, dilation_, ceil_mode_);
}

std::string MaxPool1d::extra_repr() const {
  std::ostringstream os;
  os << "kernel_size=" << kernel_size_ << ", stride=" << stride_ << ", padding=" << padding_
     << ", dilation=" << dilation_ << ", ceil_mode=" << (ceil_mode_ ? "True" : "False");
  return os.str();
}

AvgPool1d::AvgPool1d(int64_t kernel_size, int64_t stride, int64_t padding, bool ceil_mode,
                     bool count_include_pad)
    : Module("AvgPool1d"),
      kernel_size_(kernel_size),
      stride_(stride == kStrideOfKernel ? kernel_size : stride),
      padding_(padding),
      ceil_mode_(ceil_mode),
      count_include_pad_(count_include_pad) {}

Tensor AvgPool1d::forward(const Tensor& input) {
  return F::avg_pool1d(input, kernel_size_, stride_, padding_, ceil_mode_, count_include_pad_);
}

std::string AvgPool1d::extra_repr() const {
  std::ostringstream os;
  os << "kernel_size=(" << kernel_size_ << ",), stride=(" << stride_ << ",), padding=(" << padding_
     << ",)";
  return os.str();
}

AdaptiveAvgPool1d::AdaptiveAvgPool1d(int64_t output_size)
    : Module("AdaptiveAvgPool1d"), output_size_(output_size) {}

Tensor AdaptiveAvgPool1d::forward(const Tensor& input) {
  return F::adaptive_avg_pool1d(input, output_size_);
}

std::string AdaptiveAvgPool1d::extra_repr() const {
  return "output_size=" + std::to_string(output_size_);
}

AdaptiveMaxPool2d::AdaptiveMaxPool2d(Pair2 output_size)
    : Module("AdaptiveMaxPool2d"), output_size_(output_size) {}

Tensor AdaptiveMaxPool2d::forward(const Tensor& input) {
  return F::adaptive_max_pool2d(input, output_size_);
}

std::string AdaptiveMaxPool2d::extra_repr() const {
  return "output_size=" + pair_text(output_size_);
}

GroupNorm::GroupNorm(int64_t num_groups, int64_t num_channels, double eps, bool affine)
    : Module("GroupNorm"), num_groups_(num_groups), num_channels_(num_channels), eps_(eps) {
  check_value(num_groups > 0 && num_channels > 0 && num_channels % num_groups == 0, "GroupNorm",
              "num_channels must be divisible by num_groups; got num_groups=", num_groups,
              ", num_channels=", num_channels);
  if (affine) {
    weight = register_parameter("weight", ones({num_channels}));
    bias = register_parameter("bias", zeros({num_channels}));
  }
}

Tensor GroupNorm::forward(const Tensor& input) {
  return F::group_norm(input, num_groups_, weight, bias, eps_);
}

std::string GroupNorm::extra_repr() const {
  std::ostringstream os;
  os << num_groups_ << ", " << num_channels_ << ", eps=" << eps_
     << ", affine=" << (weight.defined() ? "True" : "False");
  return os.str();
}

InstanceNorm2d::InstanceNorm2d(int64_t num_features, double eps, double momentum, bool affine,
                               bool track_running_stats)
    : Module("InstanceNorm2d"), num_features_(num_features), eps_(eps), momentum_(momentum) {
  check_value(num_features > 0, "InstanceNorm2d", "num_features must be positive; got ",
              num_features);
  if (affine) {
    weight = register_parameter("weight", ones({num_features}));
    bias = register_parameter("bias", zeros({num_features}));
  }
  if (track_running_stats) {
    running_mean = register_buffer("running_mean", zeros({num_features}));
    running_var = register_buffer("running_var", ones({num_features}));
    num_batches_tracked = register_buffer("num_batches_tracked", zeros({}, kInt64));
  }
}

Tensor InstanceNorm2d::forward(const Tensor& input) {
  check_value(input.defined() && (input.dim() == 3 || input.dim() == 4), "InstanceNorm2d",
              "expected 3-D or 4-D input; got ",
              input.defined() ? to_string(input.shape()) : std::string("an undefined tensor"));
  Tensor x = input.dim() == 4 ? input : input.unsqueeze(0);
  check_value(x.size(1) == num_features_ || !weight.defined(), "InstanceNorm2d",
              "expected input's size at dim=1 to match num_features (", num_features_,
              "), but got input of shape ", input.shape());
  bool use_input_stats = training_ || !running_mean.defined();
  // Unlike batch norm, PyTorch's instance norm never counts batches (num_batches_tracked stays
  // 0; it exists so state_dicts match).
  // Batch statistics (updating the running ones if tracked) in training, and always when none
  // are tracked; the running ones in eval().
  Tensor y = F::instance_norm(x, running_mean, running_var, weight, bias, use_input_stats,
                              momentum_, eps_);
  return input.dim() == 4 ? y : y.squeeze(0);
}

std::string InstanceNorm2d::extra_repr() const {
  std::ostringstream os;
  os << num_features_ << ", eps=" << eps_ << ", momentum=" << momentum_
     << ", affine=" << (weight.defined() ? "True" : "False")
     << ", track_running_stats=" << (running_mean.defined() ? "True" : "False");
  return os.str();
}

Dropout2d::Dropout2d(double p) : Module("Dropout2d"), p_(p) {
  check_value(p >= 0.0 && p <= 1.0, "Dropout2d",
              "dropout probability has to be between 0 and 1, but got ", p);
}

Tensor Dropout2d::forward(const Tensor& input) { return F::dropout2d(input, p_, training_); }

std::string Dropout2d::extra_repr() const {
  std::ostringstream os;
  os << "p=" << p_ << ", inplace=False";
  return os.str();
}

Upsample::Upsample(std::vector<int64_t> size, std::vector<double> scale_factor, std::string mode,
                   std::optional<bool> align_corners)
    : Module("Upsample"),
      size_(std::move(size)),
      scale_factor_(std::move(scale_factor)),
      mode_(std::move(mode)),
      align_corners_(align_corners) {}

Tensor Upsample::forward(const Tensor& input) {
  // One number stands for every spatial dim, as in PyTorch.
  const size_t spatial = input.dim() > 2 ? size_t(input.dim() - 2) : 1;
  std::vector<int64_t> size = size_;
  std::vector<double> scale = scale_factor_;
  if (size.size() == 1) size.assign(spatial, size[0]);
  if (scale.size() == 1) scale.assign(spatial, scale[0]);
  return F::interpolate(input, size, scale, mode_, align_corners_);
}

std::string Upsample::extra_repr() const {
  std::ostringstream os;
  if (!scale_factor_.empty()) {
    os << "scale_factor=" << list_text(scale_factor_);
  } else {
    os << "size=" << list_text(size_);
  }
  os << ", mode=" << mode_;
  return os.str();
}

PixelShuffle::PixelShuffle(int64_t upscale_factor)
    : Module("PixelShuffle"), upscale_factor_(upscale_factor) {}

Tensor PixelShuffle::forward(const Tensor& input) {
  return F::pixel_shuffle(input, upscale_factor_);
}

std::string PixelShuffle::extra_repr() const {
  return "upscale_factor=" + std::to_string(upscale_factor_);
}

Pad2d::Pad2d(const char* type_name, std::vector<int64_t> padding, std::string mode, double value)
    : Module(type_name), padding_(std::move(padding)), mode_(std::move(mode)), value_(value) {
  if (padding_.size() == 1) padding_.assign(4, padding_[0]);
  check_value(padding_.size() == 4, type_name,
              "padding must be one number or 4 (left, right, top, bottom); got ", padding_.size(),
              " values");
}

Tensor Pad2d::forward(const Tensor& input) { return F::pad(input, padding_, mode_, value_); }

std::string Pad2d::extra_repr() const {
  std::string s = list_text(padding_);
  if (type_name() == "ConstantPad2d") {
    std::ostringstream os;
    os << s << ", value=" << value_;
    s = os.str();
  }
  return s;
}

Unfold::Unfold(Pair2 kernel_size, Pair2 dilation, Pair2 padding, Pair2 stride)
    : Module("Unfold"),
      kernel_size_(kernel_size),
      dilation_(dilation),
      padding_(padding),
      stride_(stride) {}

Tensor Unfold::forward(const Tensor& input) {
  return F::unfold(input, kernel_size_, dilation_, padding_, stride_);
}

Fold::Fold(Pair2 output_size, Pair2 kernel_size, Pair2 dilation, Pair2 padding, Pair2 stride)
    : Module("Fold"),
      output_size_(output_size),
      kernel_size_(kernel_size),
      dilation_(dilation),
      padding_(padding),
      stride_(stride) {}

Tensor Fold::forward(const Tensor& input) {
  return F::fold(input, output_size_, kernel_size_, dilation_, padding_, stride_);
}

CosineSimilarity::CosineSimilarity(int64_t dim, double eps)
    : Module("CosineSimilarity"), dim_(dim), eps_(eps) {}

Tensor CosineSimilarity::forward(const Tensor& x1, const Tensor& x2) {
  return F::cosine_similarity(x1, x2, dim_, eps_);
}

PairwiseDistance::PairwiseDistance(double p, double eps, bool keepdim)
    : Module("PairwiseDistance"), p_(p), eps_(eps), keepdim_(keepdim) {}

Tensor PairwiseDistance::forward(const Tensor& x1, const Tensor& x2) {
  return F::pairwise_distance(x1, x2, p_, eps_, keepdim_);
}

EmbeddingBag::EmbeddingBag(int64_t num_embeddings, int64_t embedding_dim, std::string mode,
                           bool include_last_offset, int64_t padding_idx)
    : Module("EmbeddingBag"),
      num_embeddings_(num_embeddings),
      embedding_dim_(embedding_dim),
      padding_idx_(padding_idx < 0 && padding_idx >= -num_embeddings ? padding_idx + num_embeddings
                                                                     : padding_idx),
      mode_(std::move(mode)),
      include_last_offset_(include_last_offset) {
  check_value(num_embeddings > 0 && embedding_dim > 0, "EmbeddingBag",
              "sizes must be positive; got num_embeddings=", num_embeddings,
              ", embedding_dim=", embedding_dim);
  check_value(padding_idx_ < num_embeddings, "EmbeddingBag", "padding_idx ", padding_idx,
              " must be within num_embeddings (", num_embeddings, ")");
  check_value(mode_ == "sum" || mode_ == "mean" || mode_ == "max", "EmbeddingBag",
              "mode has to be one of sum, mean or max; got '", mode_, "'");
  weight = register_parameter("weight", empty({num_embeddings, embedding_dim}));
  init::normal_(weight);
  if (padding_idx_ >= 0) {
    Tensor row = weight.select(0, padding_idx_);
    init::zeros_(row);
  }
}

Tensor EmbeddingBag::forward(const Tensor& input, const Tensor& offsets,
                             const Tensor& per_sample_weights) {
  return F::embedding_bag(input, weight, offsets, mode_, per_sample_weights, include_last_offset_,
                          padding_idx_);
}

Tensor EmbeddingBag::forward(const Tensor& input) { return forward(input, Tensor()); }

std::string EmbeddingBag::extra_repr() const {
  std::ostringstream os;
  os << num_embeddings_ << ", " << embedding_dim_ << ", mode=" << mode_;
  if (padding_idx_ >= 0) os << ", padding_idx=" << padding_idx_;
  return os.str();
}

}  // namespace wick::nn
