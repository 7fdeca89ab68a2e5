#include "nn/layers.h"

#include <cmath>
#include <sstream>

#include "nn/functional.h"
#include "nn/init.h"

namespace wick::nn {

namespace {

std::string pair_text(Pair2 p) {
  std::ostringstream os;
  os << '(' << p.h << ", " << p.w << ')';
  return os.str();
}

bool is_one(Pair2 p) { return p.h == 1 && p.w == 1; }
bool is_zero(Pair2 p) { return p.h == 0 && p.w == 0; }
Pair2 or_kernel(Pair2 stride, Pair2 kernel) {
  return Pair2(stride.h == kStrideOfKernel ? kernel.h : stride.h,
               stride.w == kStrideOfKernel ? kernel.w : stride.w);
}

// PyTorch's default for Linear and Conv2d: kaiming_uniform_(a=sqrt(5)) on the weight, which is
// uniform in +-1/sqrt(fan_in), and the same bound for the bias.
// A layer with a zero size (Linear(0, 4)) is valid, as in PyTorch: a zero-element weight is left
// as it is, and with no inputs the bias bound is 0.
void reset_like_pytorch(Tensor& weight, Tensor& bias) {
  if (weight.numel() > 0) init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    int64_t fan_in = init::fan_in_and_fan_out(weight).first;
    double bound = fan_in > 0 ? 1.0 / std::sqrt(static_cast<double>(fan_in)) : 0.0;
    init::uniform_(bias, -bound, bound);
  }
}

}  // namespace

Linear::Linear(int64_t in_features, int64_t out_features, bool with_bias)
    : Module("Linear"), in_features_(in_features), out_features_(out_features) {
  check_value(in_features >= 0 && out_features >= 0, "Linear",
              "in_features and out_features must be non-negative; got ", in_features, " and ",
              out_features);
  weight = register_parameter("weight", empty({out_features, in_features}));
  if (with_bias) bias = register_parameter("bias", empty({out_features}));
  reset_like_pytorch(weight, bias);
}

Tensor Linear::forward(const Tensor& input) { return functional::linear(input, weight, bias); }

std::string Linear::extra_repr() const {
  std::ostringstream os;
  os << "in_features=" << in_features_ << ", out_features=" << out_features_
     << ", bias=" << (bias.defined() ? "True" : "False");
  return os.str();
}

Conv2d::Conv2d(int64_t in_channels, int64_t out_channels, Pair2 kernel_size, Pair2 stride,
               Pair2 padding, Pair2 dilation, int64_t groups, bool with_bias)
    : Module("Conv2d"),
      in_channels_(in_channels),
      out_channels_(out_channels),
      groups_(groups),
      kernel_size_(kernel_size),
      stride_(stride),
      padding_(padding),
      dilation_(dilation) {
  check_value(in_channels > 0 && out_channels > 0 && groups > 0 && in_channels % groups == 0 &&
                  out_channels % groups == 0,
              "Conv2d",
              "channels must be positive and divisible by groups; got in_channels=", in_channels,
              ", out_channels=", out_channels, ", groups=", groups);
  check_value(kernel_size.h > 0 && kernel_size.w > 0, "Conv2d",
              "kernel_size must be positive; got ", pair_text(kernel_size));
  weight = register_parameter(
      "weight", empty({out_channels, in_channels / groups, kernel_size.h, kernel_size.w}));
  if (with_bias) bias = register_parameter("bias", empty({out_channels}));
  reset_like_pytorch(weight, bias);
}

Tensor Conv2d::forward(const Tensor& input) {
  return functional::conv2d(input, weight, bias, stride_, padding_, dilation_, groups_);
}

std::string Conv2d::extra_repr() const {
  std::ostringstream os;
  os << in_channels_ << ", " << out_channels_ << ", kernel_size=" << pair_text(kernel_size_)
     << ", stride=" << pair_text(stride_);
  if (!is_zero(padding_)) os << ", padding=" << pair_text(padding_);
  if (!is_one(dilation_)) os << ", dilation=" << pair_text(dilation_);
  if (groups_ != 1) os << ", groups=" << groups_;
  if (!bias.defined()) os << ", bias=False";
  return os.str();
}

MaxPool2d::MaxPool2d(Pair2 kernel_size, Pair2 stride, Pair2 padding, Pair2 dilation, bool ceil_mode)
    : Module("MaxPool2d"),
      kernel_size_(kernel_size),
      stride_(or_kernel(stride, kernel_size)),
      padding_(padding),
      dilation_(dilation),
      ceil_mode_(ceil_mode) {}

Tensor MaxPool2d::forward(const Tensor& input) {
  return functional::max_pool2d(input, kernel_size_, stride_, padding_, dilation_, ceil_mode_);
}

std::string MaxPool2d::extra_repr() const {
  std::ostringstream os;
  os << "kernel_size=" << pair_text(kernel_size_) << ", stride=" << pair_text(stride_)
     << ", padding=" << pair_text(padding_) << ", dilation=" << pair_text(dilation_)
     << ", ceil_mode=" << (ceil_mode_ ? "True" : "False");
  return os.str();
}

AvgPool2d::AvgPool2d(Pair2 kernel_size, Pair2 stride, Pair2 padding, bool ceil_mode,
                     bool count_include_pad)
    : Module("AvgPool2d"),
      kernel_size_(kernel_size),
      stride_(or_kernel(stride, kernel_size)),
      padding_(padding),
      ceil_mode_(ceil_mode),
      count_include_pad_(count_include_pad) {}

Tensor AvgPool2d::forward(const Tensor& input) {
  return functional::avg_pool2d(input, kernel_size_, stride_, padding_, ceil_mode_,
                                count_include_pad_);
}

std::string AvgPool2d::extra_repr() const {
  return "kernel_size=" + pair_text(kernel_size_) + ", stride=" + pair_text(stride_) +
         ", padding=" + pair_text(padding_);
}

AdaptiveAvgPool2d::AdaptiveAvgPool2d(Pair2 output_size)
    : Module("AdaptiveAvgPool2d"), output_size_(output_size) {}

Tensor AdaptiveAvgPool2d::forward(const Tensor& input) {
  return functional::adaptive_avg_pool2d(input, output_size_);
}

std::string AdaptiveAvgPool2d::extra_repr() const {
  return "output_size=" + pair_text(output_size_);
}

Dropout::Dropout(double p) : Module("Dropout"), p_(p) {
  check_value(p >= 0.0 && p <= 1.0, "Dropout", "probability must be in [0, 1]; got ", p);
}

Tensor Dropout::forward(const Tensor& input) { return functional::dropout(input, p_, training_); }

std::string Dropout::extra_repr() const {
  std::ostringstream os;
  os << "p=" << p_ << ", inplace=False";
  return os.str();
}

Embedding::Embedding(int64_t num_embeddings, int64_t embedding_dim,
                     std::optional<int64_t> padding_idx)
    : Module("Embedding"), num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {
  check_value(num_embeddings > 0 && embedding_dim > 0, "Embedding", "sizes must be positive; got ",
              num_embeddings, " and ", embedding_dim);
  int64_t pad = padding_idx.value_or(-1);
  check_index(!padding_idx || (pad >= -num_embeddings && pad < num_embeddings), "Embedding",
              "padding_idx ", pad, " is out of range for ", num_embeddings, " embeddings");
  padding_idx_ = !padding_idx ? -1 : pad < 0 ? pad + num_embeddings : pad;
  weight = register_parameter("weight", empty({num_embeddings, embedding_dim}));
  init::normal_(weight);
  if (padding_idx_ >= 0) {
    Tensor row = weight.select(0, padding_idx_);
    init::zeros_(row);
  }
}

Tensor Embedding::forward(const Tensor& indices) {
  return functional::embedding(indices, weight, padding_idx_);
}

std::string Embedding::extra_repr() const {
  std::ostringstream os;
  os << num_embeddings_ << ", " << embedding_dim_;
  if (padding_idx_ >= 0) os << ", padding_idx=" << padding_idx_;
  return os.str();
}

Flatten::Flatten(int64_t start_dim, int64_t end_dim)
    : Module("Flatten"), start_dim_(start_dim), end_dim_(end_dim) {}

Tensor Flatten::forward(const Tensor& input) {
  return functional::flatten(input, start_dim_, end_dim_);
}

std::string Flatten::extra_repr() const {
  std::ostringstream os;
  os << "start_dim=" << start_dim_ << ", end_dim=" << end_dim_;
  return os.str();
}

Tensor ReLU::forward(const Tensor& input) { return functional::relu(input); }

GELU::GELU(std::string approximate) : Module("GELU"), approximate_(std::move(approximate)) {
  check_value(approximate_ == "none" || approximate_ == "tanh", "GELU",
              "approximate must be 'none' or 'tanh'; got '", approximate_, "'");
}

Tensor GELU::forward(const Tensor& input) { return functional::gelu(input, approximate_); }
std::string GELU::extra_repr() const { return "approximate='" + approximate_ + "'"; }

Tensor SiLU::forward(const Tensor& input) { return functional::silu(input); }
Tensor Tanh::forward(const Tensor& input) { return functional::tanh(input); }
Tensor Sigmoid::forward(const Tensor& input) { return functional::sigmoid(input); }

Softmax::Softmax(int64_t dim) : Module("Softmax"), dim_(dim) {}
Tensor Softmax::forward(const Tensor& input) { return functional::softmax(input, dim_); }
std::string Softmax::extra_repr() const { return "dim=" + std::to_string(dim_); }

LogSoftmax::LogSoftmax(int64_t dim) : Module("LogSoftmax"), dim_(dim) {}
Tensor LogSoftmax::forward(const Tensor& input) { return functional::log_softmax(input, dim_); }
std::string LogSoftmax::extra_repr() const { return "dim=" + std::to_string(dim_); }

}  // namespace wick::nn
