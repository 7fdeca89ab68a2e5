#include "nn/layers/pooling.h"

#include <algorithm>
#include <vector>

#include "core/ops/op_utils.h"

namespace wick::nn {

namespace {

// kStrideOfKernel, PyTorch's stride=None: the windows tile the input.
int64_t stride_or(int64_t stride, int64_t kernel) {
  return stride == kStrideOfKernel ? kernel : stride;
}

Pair2 stride_or(Pair2 stride, Pair2 kernel) {
  return Pair2(stride_or(stride.h, kernel.h), stride_or(stride.w, kernel.w));
}

}  // namespace

namespace functional {

namespace {

// Checks throw RuntimeError (check_state) where PyTorch raises RuntimeError for the same
// mistake, so code that catches torch's exceptions catches ours.

Tensor index_tensor(const std::vector<int64_t>& values, const Shape& shape, Device device) {
  return tensor(values, shape, TensorOptions(kInt64).with_device(device));
}

// The output length of a 1-D window sweep, PyTorch's pooling_output_shape (ceil_mode drops a
// last window that would start inside the right padding).
int64_t pooled_length(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode) {
  int64_t numerator = in + 2 * p - d * (k - 1) - 1 + (ceil_mode ? s - 1 : 0);
  // Rounded toward negative infinity (ATen's div_rtn), so a too-small input gives 0.
  int64_t out = (numerator >= 0 ? numerator / s : -((-numerator + s - 1) / s)) + 1;
  if (ceil_mode && (out - 1) * s >= in + p) --out;
  // PyTorch's ceil_mode gives a window to an input shorter than the dilated kernel; the 2-D
  // pools this calls refuse that input, so it is refused here, naming the 1-D function.
  if (in + 2 * p - d * (k - 1) - 1 < 0) return 0;
  return out;
}

void check_pool1d(const char* op, const Tensor& input, int64_t k, int64_t s, int64_t p, int64_t d,
                  bool ceil_mode) {
  wick::detail::check_defined(op, input);
  check_state(input.dim() == 2 || input.dim() == 3, op,
              "expected 2-D (unbatched) or 3-D (batched) input; got input of shape ",
              input.shape());
  check_state(k > 0 && s > 0 && d > 0 && p >= 0, op,
              "kernel_size, stride and dilation must be positive and padding non-negative; got "
              "kernel_size ",
              k, ", stride ", s, ", padding ", p, ", dilation ", d);
  check_state(p <= k / 2, op,
              "pad should be at most half of effective kernel size, but got pad=", p,
              ", kernel_size=", k);
  check_state(
      pooled_length(input.size(-1), k, s, p, d, ceil_mode) > 0, op, "the input of length ",
      input.size(-1), " is too small for kernel_size ", k, ", stride ", s, ", padding ", p,
      ", dilation ", d,
      ": the output would be empty (with ceil_mode, PyTorch still gives a window to an input "
      "shorter than the dilated kernel; wick's pools do not)");
}

}  // namespace

ValuesIndices max_pool1d_with_indices(const Tensor& input, int64_t kernel_size, int64_t stride,
                                      int64_t padding, int64_t dilation, bool ceil_mode) {
  stride = stride_or(stride, kernel_size);
  check_pool1d("max_pool1d", input, kernel_size, stride, padding, dilation, ceil_mode);
  ValuesIndices r =
      max_pool2d_with_indices(input.unsqueeze(-2), Pair2(1, kernel_size), Pair2(1, stride),
                              Pair2(0, padding), Pair2(1, dilation), ceil_mode);
  // On a height-1 image the flat H * W index is the position along L.
  return {r.values.squeeze(-2), r.indices.squeeze(-2)};
}

Tensor max_pool1d(const Tensor& input, int64_t kernel_size, int64_t stride, int64_t padding,
                  int64_t dilation, bool ceil_mode) {
  return max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode).values;
}

Tensor avg_pool1d(const Tensor& input, int64_t kernel_size, int64_t stride, int64_t padding,
                  bool ceil_mode, bool count_include_pad) {
  stride = stride_or(stride, kernel_size);
  check_pool1d("avg_pool1d", input, kernel_size, stride, padding, 1, ceil_mode);
  return avg_pool2d(input.unsqueeze(-2), Pair2(1, kernel_size), Pair2(1, stride), Pair2(0, padding),
                    ceil_mode, count_include_pad)
      .squeeze(-2);
}

Tensor adaptive_avg_pool1d(const Tensor& input, int64_t output_size) {
  wick::detail::check_defined("adaptive_avg_pool1d", input);
  check_state(input.dim() == 2 || input.dim() == 3, "adaptive_avg_pool1d",
              "expected 2-D (unbatched) or 3-D (batched) input; got input of shape ",
              input.shape());
  check_state(output_size > 0 && input.size(-1) > 0, "adaptive_avg_pool1d",
              "output_size must be positive and the input non-empty; got output_size ", output_size,
              " for input of shape ", input.shape());
  return adaptive_avg_pool2d(input.unsqueeze(-2), Pair2(1, output_size)).squeeze(-2);
}

ValuesIndices adaptive_max_pool2d_with_indices(const Tensor& input, Pair2 output_size) {
  const char* op = "adaptive_max_pool2d";
  wick::detail::check_defined(op, input);
  check_state(input.dim() == 3 || input.dim() == 4, op,
              "expected 3-D (unbatched) or 4-D (batched) input; got input of shape ",
              input.shape());
  check_state(output_size.h > 0 && output_size.w > 0, op, "output_size must be positive; got (",
              output_size.h, ", ", output_size.w, ")");
  check_state(input.size(-1) > 0 && input.size(-2) > 0, op,
              "expected non-empty spatial dims; got input of shape ", input.shape());
  Tensor x = input.dim() == 4 ? input : input.unsqueeze(0);
  const int64_t n = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3);
  const int64_t oh = output_size.h, ow = output_size.w;
  auto start = [](int64_t i, int64_t in, int64_t out) { return i * in / out; };
  auto end = [](int64_t i, int64_t in, int64_t out) { return ((i + 1) * in + out - 1) / out; };
  int64_t kh = 0, kw = 0;
  for (int64_t i = 0; i < oh; ++i) kh = std::max(kh, end(i, h, oh) - start(i, h, oh));
  for (int64_t j = 0; j < ow; ++j) kw = std::max(kw, end(j, w, ow) - start(j, w, ow));
  // Windows differ in size; shorter ones repeat their last position, which leaves the maximum
  // (and the first position holding it) unchanged, so every window has kh * kw taps.
  std::vector<int64_t> taps;
  taps.reserve(oh * ow * kh * kw);
  for (int64_t i = 0; i < oh; ++i) {
    for (int64_t j = 0; j < ow; ++j) {
      for (int64_t a = 0; a < kh; ++a) {
        int64_t r = std::min(start(i, h, oh) + a, end(i, h, oh) - 1);
        for (int64_t b = 0; b < kw; ++b) {
          taps.push_back(r * w + std::min(start(j, w, ow) + b, end(j, w, ow) - 1));
        }
      }
    }
  }
  Shape taps_shape{n, c, oh, ow, kh * kw};
  Tensor index = index_tensor(taps, Shape{1, 1, oh * ow * kh * kw}, x.device())
                     .expand(Shape{n, c, oh * ow * kh * kw})
                     .contiguous();
  Tensor windows = gather(x.reshape(Shape{n, c, h * w}), 2, index).reshape(taps_shape);
  ValuesIndices m = windows.max(-1);
  Tensor flat = gather(index.reshape(taps_shape), 4, m.indices.unsqueeze(-1)).squeeze(-1);
  if (input.dim() == 3) return {m.values.squeeze(0), flat.squeeze(0)};
  return {m.values, flat};
}

Tensor adaptive_max_pool2d(const Tensor& input, Pair2 output_size) {
  return adaptive_max_pool2d_with_indices(input, output_size).values;
}

}  // namespace functional

namespace F = functional;

namespace {

std::string pair_text(Pair2 p) { return tuple_repr({p.h, p.w}); }

}  // namespace

MaxPool1d::MaxPool1d(int64_t kernel_size, int64_t stride, int64_t padding, int64_t dilation,
                     bool ceil_mode)
    : Module("MaxPool1d"),
      kernel_size_(kernel_size),
      stride_(stride_or(stride, kernel_size)),
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
      stride_(stride_or(stride, kernel_size)),
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

MaxPool2d::MaxPool2d(Pair2 kernel_size, Pair2 stride, Pair2 padding, Pair2 dilation, bool ceil_mode)
    : Module("MaxPool2d"),
      kernel_size_(kernel_size),
      stride_(stride_or(stride, kernel_size)),
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
      stride_(stride_or(stride, kernel_size)),
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

}  // namespace wick::nn
