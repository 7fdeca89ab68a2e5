#include "nn/layers/conv.h"

#include <sstream>
#include <vector>

#include "autograd/functions/nn.h"
#include "core/ops/op_utils.h"
#include "nn/init.h"
#include "nn/layers/resample.h"

namespace wick::nn {

namespace functional {

namespace {

// Checks throw RuntimeError (check_state) where PyTorch raises RuntimeError for the same
// mistake, so code that catches torch's exceptions catches ours.

Tensor index_tensor(const std::vector<int64_t>& values, const Shape& shape, Device device) {
  return tensor(values, shape, TensorOptions(kInt64).with_device(device));
}

// The flat H * W positions of every tap of every window of an unfold, ordered [kh, kw, L], in
// a zero-padded image of width wp. Returns the number of windows per column through out_h/w.
std::vector<int64_t> window_taps(int64_t hp, int64_t wp, Pair2 k, Pair2 d, Pair2 s, int64_t* out_h,
                                 int64_t* out_w) {
  int64_t oh = (hp - d.h * (k.h - 1) - 1) / s.h + 1, ow = (wp - d.w * (k.w - 1) - 1) / s.w + 1;
  std::vector<int64_t> taps;
  taps.reserve(k.h * k.w * oh * ow);
  for (int64_t a = 0; a < k.h; ++a) {
    for (int64_t b = 0; b < k.w; ++b) {
      for (int64_t i = 0; i < oh; ++i) {
        for (int64_t j = 0; j < ow; ++j)
          taps.push_back((i * s.h + a * d.h) * wp + j * s.w + b * d.w);
      }
    }
  }
  *out_h = oh;
  *out_w = ow;
  return taps;
}

void check_fold_params(const char* op, Pair2 k, Pair2 d, Pair2 p, Pair2 s) {
  check_state(
      k.h > 0 && k.w > 0 && d.h > 0 && d.w > 0 && s.h > 0 && s.w > 0 && p.h >= 0 && p.w >= 0, op,
      "kernel_size, dilation and stride must be positive and padding non-negative; got "
      "kernel_size (",
      k.h, ", ", k.w, "), dilation (", d.h, ", ", d.w, "), padding (", p.h, ", ", p.w,
      "), stride (", s.h, ", ", s.w, ")");
}

}  // namespace

Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias, int64_t stride,
              int64_t padding, int64_t dilation, int64_t groups) {
  wick::detail::check_defined("conv1d", input);
  wick::detail::check_defined("conv1d", weight);
  check_state(input.dim() == 2 || input.dim() == 3, "conv1d",
              "expected 2-D (unbatched) or 3-D (batched) input; got input of shape ",
              input.shape());
  check_state(weight.dim() == 3, "conv1d",
              "weight must be 3-D [out_channels, in_channels / groups, kernel_size]; got ",
              weight.shape());
  check_state(groups > 0 && weight.size(0) % groups == 0, "conv1d", "given groups=", groups,
              ", expected weight to be divisible by ", groups,
              " at dimension 0, but got weight of shape ", weight.shape());
  check_state(weight.size(1) * groups == input.size(-2), "conv1d", "given groups=", groups,
              ", weight of shape ", weight.shape(), ", expected input of shape ", input.shape(),
              " to have ", weight.size(1) * groups, " channels, but got ", input.size(-2),
              " channels instead");
  // A height-1 image: conv2d's kernels, backward and double backward, unchanged.
  Tensor y = conv2d(input.unsqueeze(-2), weight.unsqueeze(2), bias, Pair2(1, stride),
                    Pair2(0, padding), Pair2(1, dilation), groups);
  return y.squeeze(-2);
}

PaddingMode padding_mode_from_string(const char* op, const std::string& name) {
  if (name == "valid") return PaddingMode::Valid;
  if (name == "same") return PaddingMode::Same;
  throw_value_error(op, "Invalid padding string '", name, "', should be one of 'valid' or 'same'");
}

// Note [same padding]
// padding='same' is resolved in this one place, for the C++ functions and for wick._C._nn's
// conv1d and conv2d, which accept the strings. With an odd total (an even kernel extent)
// PyTorch pads the extra zero after the input and convolves with the symmetric part; so do
// conv1d and conv2d below, so a length-8 input and a kernel of 4 still give 8 outputs.
SamePadding same_padding(const char* op, int64_t kernel_size, int64_t dilation, int64_t stride) {
  check_value(stride == 1, op, "padding='same' is not supported for strided convolutions");
  const int64_t total = dilation * (kernel_size - 1);
  return {total / 2, total - total / 2};
}

Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias, int64_t stride,
              PaddingMode padding, int64_t dilation, int64_t groups) {
  if (padding == PaddingMode::Valid) {
    return conv1d(input, weight, bias, stride, 0, dilation, groups);
  }
  wick::detail::check_defined("conv1d", weight);
  SamePadding p = same_padding("conv1d", weight.size(-1), dilation, stride);
  Tensor x = p.after > p.before ? pad(input, {0, p.after - p.before}) : input;
  return conv1d(x, weight, bias, stride, p.before, dilation, groups);
}

Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, Pair2 stride,
              PaddingMode padding, Pair2 dilation, int64_t groups) {
  if (padding == PaddingMode::Valid) {
    return wick::conv2d(input, weight, bias, stride, 0, dilation, groups);
  }
  wick::detail::check_defined("conv2d", weight);
  check_state(weight.dim() == 4, "conv2d", "weight must be 4-D; got ", weight.shape());
  SamePadding h = same_padding("conv2d", weight.size(2), dilation.h, stride.h);
  SamePadding w = same_padding("conv2d", weight.size(3), dilation.w, stride.w);
  Tensor x = input;
  if (h.after > h.before || w.after > w.before) {
    x = pad(input, {0, w.after - w.before, 0, h.after - h.before});
  }
  return wick::conv2d(x, weight, bias, stride, Pair2(h.before, w.before), dilation, groups);
}

Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias, Pair2 stride,
                        Pair2 padding, Pair2 output_padding, int64_t groups, Pair2 dilation) {
  const char* op = "conv_transpose2d";
  wick::detail::check_defined(op, input);
  wick::detail::check_defined(op, weight);
  check_state(input.dim() == 3 || input.dim() == 4, op,
              "expected 3-D (unbatched) or 4-D (batched) input; got input of shape ",
              input.shape());
  check_state(weight.dim() == 4, op,
              "weight must be 4-D [in_channels, out_channels / groups, kh, kw]; got ",
              weight.shape());
  check_type(input.is_floating_point(), op, "expected a floating-point input; got ", input.dtype());
  check_type(weight.dtype() == input.dtype(), op, "input and weight dtypes differ: ", input.dtype(),
             " and ", weight.dtype());
  wick::detail::check_same_device(op, input, weight);
  Tensor x = input.dim() == 4 ? input : input.unsqueeze(0);
  const int64_t cin = x.size(1);
  check_state(groups > 0 && cin % groups == 0, op, "given groups=", groups, ", in_channels ", cin,
              " must be divisible by groups");
  check_state(weight.size(0) == cin, op, "given transposed=1, weight of shape ", weight.shape(),
              ", expected input of shape ", input.shape(), " to have ", weight.size(0),
              " channels, but got ", cin, " channels instead");
  check_state(stride.h > 0 && stride.w > 0 && dilation.h > 0 && dilation.w > 0 && padding.h >= 0 &&
                  padding.w >= 0 && output_padding.h >= 0 && output_padding.w >= 0,
              op, "stride and dilation must be positive, padding and output_padding non-negative");
  check_state((output_padding.h < stride.h || output_padding.h < dilation.h) &&
                  (output_padding.w < stride.w || output_padding.w < dilation.w),
              op,
              "output padding must be smaller than either stride or dilation, but got "
              "output_padding (",
              output_padding.h, ", ", output_padding.w, "), stride (", stride.h, ", ", stride.w,
              "), dilation (", dilation.h, ", ", dilation.w, ")");
  const int64_t cout = weight.size(1) * groups;
  const int64_t oh = (x.size(2) - 1) * stride.h - 2 * padding.h +
                     dilation.h * (weight.size(2) - 1) + output_padding.h + 1;
  const int64_t ow = (x.size(3) - 1) * stride.w - 2 * padding.w +
                     dilation.w * (weight.size(3) - 1) + output_padding.w + 1;
  check_state(oh > 0 && ow > 0, op, "the output size (", oh, ", ", ow,
              ") computed from input of shape ", input.shape(), ", kernel (", weight.size(2), ", ",
              weight.size(3), "), stride (", stride.h, ", ", stride.w, ") and padding (", padding.h,
              ", ", padding.w, ") is too small");
  if (bias.defined()) {
    check_state(bias.dim() == 1 && bias.size(0) == cout, op, "bias of shape ", bias.shape(),
                " does not match out_channels ", cout);
  }
  // A transposed convolution is the input gradient of the convolution it transposes: the
  // kernel, its backward and its double backward already exist (Note [convolution's double
  // backward]). The output_padding rows simply receive no window of that convolution.
  Conv2dParams params;
  params.stride[0] = stride.h, params.stride[1] = stride.w;
  params.padding[0] = padding.h, params.padding[1] = padding.w;
  params.dilation[0] = dilation.h, params.dilation[1] = dilation.w;
  params.groups = groups;
  Tensor y = conv2d_input_grad(x, weight, Shape{x.size(0), cout, oh, ow}, params);
  if (bias.defined()) y = y + bias.reshape(Shape{1, cout, 1, 1});
  return input.dim() == 4 ? y : y.squeeze(0);
}

Tensor unfold(const Tensor& input, Pair2 kernel_size, Pair2 dilation, Pair2 padding, Pair2 stride) {
  const char* op = "unfold";
  wick::detail::check_defined(op, input);
  check_state(input.dim() == 3 || input.dim() == 4, op,
              "expected 3-D (unbatched) or 4-D (batched) input; got input of shape ",
              input.shape());
  check_fold_params(op, kernel_size, dilation, padding, stride);
  Tensor x = input.dim() == 4 ? input : input.unsqueeze(0);
  const int64_t n = x.size(0), c = x.size(1);
  const int64_t hp = x.size(2) + 2 * padding.h, wp = x.size(3) + 2 * padding.w;
  check_state(hp - dilation.h * (kernel_size.h - 1) - 1 >= 0 &&
                  wp - dilation.w * (kernel_size.w - 1) - 1 >= 0,
              op, "the padded input of spatial size (", hp, ", ", wp,
              ") is smaller than the dilated kernel (", dilation.h * (kernel_size.h - 1) + 1, ", ",
              dilation.w * (kernel_size.w - 1) + 1, "); input of shape ", input.shape());
  int64_t oh = 0, ow = 0;
  std::vector<int64_t> taps = window_taps(hp, wp, kernel_size, dilation, stride, &oh, &ow);
  Tensor padded = x;
  if (padding.h > 0 || padding.w > 0) {
    // Zero padding as concatenated blocks of zeros, so the gradient flows to x's part only.
    Tensor zh = zeros(Shape{n, c, padding.h, x.size(3)}, options_of(x));
    padded = cat({zh, x, zh}, 2);
    Tensor zw = zeros(Shape{n, c, hp, padding.w}, options_of(x));
    padded = cat({zw, padded, zw}, 3);
  }
  Tensor cols = padded.reshape(Shape{n, c, hp * wp})
                    .index_select(2, index_tensor(taps, Shape{int64_t(taps.size())}, x.device()));
  cols = cols.reshape(Shape{n, c * kernel_size.h * kernel_size.w, oh * ow});
  return input.dim() == 4 ? cols : cols.squeeze(0);
}

Tensor fold(const Tensor& input, Pair2 output_size, Pair2 kernel_size, Pair2 dilation,
            Pair2 padding, Pair2 stride) {
  const char* op = "fold";
  wick::detail::check_defined(op, input);
  check_state(input.dim() == 2 || input.dim() == 3, op,
              "expected 2-D (unbatched) or 3-D (batched) input; got input of shape ",
              input.shape());
  check_fold_params(op, kernel_size, dilation, padding, stride);
  check_state(output_size.h > 0 && output_size.w > 0, op, "output_size must be positive; got (",
              output_size.h, ", ", output_size.w, ")");
  Tensor x = input.dim() == 3 ? input : input.unsqueeze(0);
  const int64_t taps_per_window = kernel_size.h * kernel_size.w;
  check_state(x.size(1) % taps_per_window == 0, op,
              "expected size of input's dimension 1 to be divisible by the product of "
              "kernel_size (",
              taps_per_window, "), but got input.size(1)=", x.size(1));
  const int64_t n = x.size(0), c = x.size(1) / taps_per_window;
  const int64_t hp = output_size.h + 2 * padding.h, wp = output_size.w + 2 * padding.w;
  int64_t oh = 0, ow = 0;
  bool fits = hp - dilation.h * (kernel_size.h - 1) - 1 >= 0 &&
              wp - dilation.w * (kernel_size.w - 1) - 1 >= 0;
  std::vector<int64_t> taps;
  if (fits) taps = window_taps(hp, wp, kernel_size, dilation, stride, &oh, &ow);
  check_state(fits && oh * ow == x.size(2), op, "given output_size=(", output_size.h, ", ",
              output_size.w, "), kernel_size=(", kernel_size.h, ", ", kernel_size.w,
              "), dilation=(", dilation.h, ", ", dilation.w, "), padding=(", padding.h, ", ",
              padding.w, "), stride=(", stride.h, ", ", stride.w,
              "), expected size of input's dimension 2 to match the calculated number of sliding "
              "blocks ",
              fits ? oh * ow : 0, ", but got input.size(2)=", x.size(2));
  // unfold's adjoint: every column entry is added back at the position it was read from.
  Tensor index = index_tensor(taps, Shape{1, 1, int64_t(taps.size())}, x.device())
                     .expand(Shape{n, c, int64_t(taps.size())})
                     .contiguous();
  Tensor image = scatter_add(zeros(Shape{n, c, hp * wp}, options_of(x)), 2, index,
                             x.reshape(Shape{n, c, int64_t(taps.size())}));
  image = image.reshape(Shape{n, c, hp, wp})
              .narrow(2, padding.h, output_size.h)
              .narrow(3, padding.w, output_size.w);
  return input.dim() == 3 ? image : image.squeeze(0);
}

}  // namespace functional

namespace F = functional;

namespace {

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

// The set-up every convolution shares: the channel checks, weight [out, in / groups, k...]
// ([in, out / groups, k...] when transposed) and bias [out], initialised like PyTorch's.
void conv_parameters(Module& conv, int64_t in, int64_t out, int64_t groups, bool transposed,
                     const std::vector<int64_t>& kernel_size, bool with_bias, Tensor& weight,
                     Tensor& bias) {
  const char* type = conv.type_name().c_str();
  check_channels(type, in, out, groups);
  Shape shape = transposed ? Shape{in, out / groups} : Shape{out, in / groups};
  for (int64_t k : kernel_size) {
    check_value(k > 0, type, "kernel_size must be positive; got ", tuple_repr(kernel_size));
    shape.push_back(k);
  }
  weight = conv.register_parameter("weight", empty(shape));
  if (with_bias) bias = conv.register_parameter("bias", empty({out}));
  init::fan_in_uniform_(weight, bias);
}

// PyTorch's _ConvNd.extra_repr: padding, dilation and output_padding only where they differ
// from their defaults.
std::string conv_repr(int64_t in, int64_t out, const std::vector<int64_t>& kernel_size,
                      const std::vector<int64_t>& stride, const std::vector<int64_t>& padding,
                      const std::vector<int64_t>& dilation,
                      const std::vector<int64_t>& output_padding, int64_t groups, bool bias) {
  auto all = [](const std::vector<int64_t>& v, int64_t value) {
    for (int64_t x : v) {
      if (x != value) return false;
    }
    return true;
  };
  std::ostringstream os;
  os << in << ", " << out << ", kernel_size=" << tuple_repr(kernel_size)
     << ", stride=" << tuple_repr(stride);
  if (!all(padding, 0)) os << ", padding=" << tuple_repr(padding);
  if (!all(dilation, 1)) os << ", dilation=" << tuple_repr(dilation);
  if (!all(output_padding, 0)) os << ", output_padding=" << tuple_repr(output_padding);
  if (groups != 1) os << ", groups=" << groups;
  if (!bias) os << ", bias=False";
  return os.str();
}

std::vector<int64_t> pair(Pair2 p) { return {p.h, p.w}; }

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
  conv_parameters(*this, in_channels, out_channels, groups, false, {kernel_size}, with_bias, weight,
                  bias);
}

Tensor Conv1d::forward(const Tensor& input) {
  return F::conv1d(input, weight, bias, stride_, padding_, dilation_, groups_);
}

std::string Conv1d::extra_repr() const {
  return conv_repr(in_channels_, out_channels_, {kernel_size_}, {stride_}, {padding_}, {dilation_},
                   {0}, groups_, bias.defined());
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
  conv_parameters(*this, in_channels, out_channels, groups, false, pair(kernel_size), with_bias,
                  weight, bias);
}

Tensor Conv2d::forward(const Tensor& input) {
  return F::conv2d(input, weight, bias, stride_, padding_, dilation_, groups_);
}

std::string Conv2d::extra_repr() const {
  return conv_repr(in_channels_, out_channels_, pair(kernel_size_), pair(stride_), pair(padding_),
                   pair(dilation_), {0, 0}, groups_, bias.defined());
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
  conv_parameters(*this, in_channels, out_channels, groups, true, pair(kernel_size), with_bias,
                  weight, bias);
}

Tensor ConvTranspose2d::forward(const Tensor& input) {
  return F::conv_transpose2d(input, weight, bias, stride_, padding_, output_padding_, groups_,
                             dilation_);
}

std::string ConvTranspose2d::extra_repr() const {
  return conv_repr(in_channels_, out_channels_, pair(kernel_size_), pair(stride_), pair(padding_),
                   pair(dilation_), pair(output_padding_), groups_, bias.defined());
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

}  // namespace wick::nn
