#include "nn/conv_more.h"

#include <algorithm>
#include <vector>

#include "autograd/functions/nn.h"
#include "core/ops/op_utils.h"

namespace wick::nn::functional {

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
  detail::check_defined(op, input);
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

int64_t stride_or(int64_t stride, int64_t kernel) {
  return stride == kStrideOfKernel ? kernel : stride;
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
  detail::check_defined("conv1d", input);
  detail::check_defined("conv1d", weight);
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

Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias, Pair2 stride,
                        Pair2 padding, Pair2 output_padding, int64_t groups, Pair2 dilation) {
  const char* op = "conv_transpose2d";
  detail::check_defined(op, input);
  detail::check_defined(op, weight);
  check_state(input.dim() == 3 || input.dim() == 4, op,
              "expected 3-D (unbatched) or 4-D (batched) input; got input of shape ",
              input.shape());
  check_state(weight.dim() == 4, op,
              "weight must be 4-D [in_channels, out_channels / groups, kh, kw]; got ",
              weight.shape());
  check_type(input.is_floating_point(), op, "expected a floating-point input; got ", input.dtype());
  check_type(weight.dtype() == input.dtype(), op, "input and weight dtypes differ: ", input.dtype(),
             " and ", weight.dtype());
  detail::check_same_device(op, input, weight);
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
  detail::check_defined("adaptive_avg_pool1d", input);
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
  detail::check_defined(op, input);
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

Tensor unfold(const Tensor& input, Pair2 kernel_size, Pair2 dilation, Pair2 padding, Pair2 stride) {
  const char* op = "unfold";
  detail::check_defined(op, input);
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
  detail::check_defined(op, input);
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

}  // namespace wick::nn::functional
