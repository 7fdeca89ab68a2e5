#include "nn/layers/resample.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/ops/op_utils.h"

namespace wick::nn {

namespace functional {

namespace {

Tensor index_tensor(const std::vector<int64_t>& values, Device device) {
  return tensor(values, Shape{int64_t(values.size())}, TensorOptions(kInt64).with_device(device));
}

// Broadcasts per-position weights along `dim` of a tensor of `ndim` dims.
Tensor along(const std::vector<double>& values, int64_t dim, int64_t ndim, const Tensor& like) {
  Shape shape = Shape::filled(ndim, 1);
  shape[dim] = int64_t(values.size());
  return tensor(values, shape, TensorOptions(kFloat64).with_device(like.device())).to(like.dtype());
}

Tensor pad_constant(const Tensor& x, int64_t dim, int64_t lo, int64_t hi, double value) {
  Tensor y = x;
  const int64_t size = x.size(dim);
  check_state(size + lo + hi >= 0, "pad", "the input size ", size, ", plus negative padding ", lo,
              " and ", hi,
              " resulted in a negative output size, which is invalid. Check dimension ", dim,
              " of your input of shape ", x.shape());
  // Negative amounts crop first; what remains grows by blocks of `value`, joined with cat so
  // the gradient reaches the input's part only.
  if (lo < 0) y = y.narrow(dim, -lo, y.size(dim) + lo);
  if (hi < 0) y = y.narrow(dim, 0, y.size(dim) + hi);
  std::vector<Tensor> parts;
  Shape block = y.shape();
  if (lo > 0) {
    block[dim] = lo;
    parts.push_back(full(block, value, options_of(y)));
  }
  parts.push_back(y);
  if (hi > 0) {
    block[dim] = hi;
    parts.push_back(full(block, value, options_of(y)));
  }
  return parts.size() == 1 ? y : cat(parts, dim);
}

// reflect, replicate and circular: each output position reads one input position along dim.
// min_size: the smallest output size PyTorch accepts for this dim.
Tensor pad_indexed(const Tensor& x, int64_t dim, int64_t lo, int64_t hi, const std::string& mode,
                   int64_t min_size) {
  if (mode == "circular" && (lo < 0 || hi < 0)) {
    // PyTorch crops first and wraps what is left: the wrapped values come from the kept part.
    check_state(lo <= x.size(dim) && hi <= x.size(dim), "pad",
                "Padding value causes wrapping around more than once: padding (", lo, ", ", hi,
                ") at dimension ", dim, " of input ", x.shape());
    check_state(x.size(dim) + lo + hi >= 0, "pad", "the input size ", x.size(dim),
                ", plus negative padding ", lo, " and ", hi,
                " resulted in a negative output size, which is invalid");
    const int64_t start = std::max<int64_t>(-lo, 0);
    Tensor kept = x.narrow(dim, start, x.size(dim) - start - std::max<int64_t>(-hi, 0));
    return pad_indexed(kept, dim, std::max<int64_t>(lo, 0), std::max<int64_t>(hi, 0), mode,
                       min_size);
  }
  const int64_t size = x.size(dim);
  if (mode == "reflect") {
    check_state(lo < size && hi < size, "pad",
                "Argument #4: Padding size should be less than the corresponding input "
                "dimension, but got: padding (",
                lo, ", ", hi, ") at dimension ", dim, " of input ", x.shape());
  } else if (mode == "circular") {
    check_state(lo <= size && hi <= size, "pad",
                "Padding value causes wrapping around more than once: padding (", lo, ", ", hi,
                ") at dimension ", dim, " of input ", x.shape());
  } else {
    check_state(size > 0, "pad", "replicate padding needs a non-empty dimension ", dim,
                " of input ", x.shape());
  }
  check_state(size + lo + hi >= min_size, "pad", "the input size ", size,
              ", plus negative padding ", lo, " and ", hi, " resulted in an output size of ",
              size + lo + hi, ", which is invalid for ", mode, " padding. Check dimension ", dim,
              " of your input of shape ", x.shape());
  // An empty tensor has no values to pick; index_select would also divide by its zero-size
  // dims (a SIGFPE in the CPU kernel), so its blocks of zeros come from the constant path.
  if (x.numel() == 0) return pad_constant(x, dim, lo, hi, 0.0);
  std::vector<int64_t> index;
  index.reserve(size + lo + hi);
  for (int64_t o = -lo; o < size + hi; ++o) {
    int64_t i = o;
    if (mode == "reflect") {
      if (i < 0) i = -i;
      if (i >= size) i = 2 * (size - 1) - i;
    } else if (mode == "replicate") {
      i = std::clamp<int64_t>(i, 0, size - 1);
    } else {
      i = ((i % size) + size) % size;
    }
    index.push_back(i);
  }
  return x.index_select(dim, index_tensor(index, x.device()));
}

// PyTorch's mapping from output to input coordinates (area_pixel_compute_scale and
// nearest_idx in ATen's UpSample.h), in the input's arithmetic type so the same rounding picks
// the same pixels: float32 for float32 inputs.
template <class T>
T coordinate_scale(int64_t in, int64_t out, bool align_corners, double scale_factor) {
  if (align_corners) return out > 1 ? T(in - 1) / T(out - 1) : T(0);
  return scale_factor > 0 ? T(1.0 / scale_factor) : T(in) / T(out);
}

// PyTorch 1.13's kernels take shortcuts that a scale_factor can make visible. Its linear modes
// copy a dim whose size is unchanged, whatever the scale (1.08 keeps 4 pixels as they are). Its
// nearest modes map through the scale (1.08 on 4 pixels reads 0, 0, 1, 2), except in the
// channels-last kernel it picks for 4-D and 5-D inputs with one channel, which copies a dim of
// unchanged size and halves the index of a doubled one. `shortcuts` says which kernel to match.
template <class T>
Tensor resize_dim(const Tensor& x, int64_t dim, int64_t out, const std::string& mode,
                  bool align_corners, double scale_factor, bool shortcuts) {
  const int64_t in = x.size(dim);
  std::vector<int64_t> lower, upper;
  std::vector<double> frac;
  const bool nearest = mode == "nearest" || mode == "nearest-exact";
  if (out == in && (shortcuts || !nearest)) return x;
  if (nearest) {
    const T scale = coordinate_scale<T>(in, out, false, scale_factor);
    const bool exact = mode == "nearest-exact";
    for (int64_t o = 0; o < out; ++o) {
      int64_t i = shortcuts && out == 2 * in ? o >> 1
                  : exact                    ? int64_t(std::floor((T(o) + T(0.5)) * scale))
                                             : int64_t(std::floor(T(o) * scale));
      lower.push_back(std::min(i, in - 1));
    }
    // The common integer upscale (every pixel repeated k times) as a broadcast: its backward
    // is a sum, where index_select's is a much slower scatter.
    const int64_t k = out / in;
    bool repeats = out == k * in && x.dim() < kMaxDims;
    for (int64_t o = 0; repeats && o < out; ++o) repeats = lower[o] == o / k;
    if (repeats) {
      Shape wide = x.shape();
      wide.insert(dim + 1, k);
      Shape result = x.shape();
      result[dim] = out;
      return x.unsqueeze(dim + 1).expand(wide).reshape(result);
    }
    return x.index_select(dim, index_tensor(lower, x.device()));
  }
  const T scale = coordinate_scale<T>(in, out, align_corners, scale_factor);
  for (int64_t o = 0; o < out; ++o) {
    T src = align_corners ? scale * T(o) : std::max(scale * (T(o) + T(0.5)) - T(0.5), T(0));
    int64_t i0 = std::min(int64_t(src), in - 1);
    lower.push_back(i0);
    upper.push_back(i0 < in - 1 ? i0 + 1 : i0);
    frac.push_back(double(src - T(i0)));
  }
  // Linear interpolation between the two neighbours, one dim at a time: bilinear and
  // trilinear are products of these, so applying them in turn gives the same weights.
  Tensor a = x.index_select(dim, index_tensor(lower, x.device()));
  Tensor b = x.index_select(dim, index_tensor(upper, x.device()));
  std::vector<double> keep(frac.size());
  for (size_t i = 0; i < frac.size(); ++i) keep[i] = 1.0 - frac[i];
  return a * along(keep, dim, x.dim(), x) + b * along(frac, dim, x.dim(), x);
}

}  // namespace

Tensor pad(const Tensor& input, const std::vector<int64_t>& pad, const std::string& mode,
           double value) {
  wick::detail::check_defined("pad", input);
  check_state(pad.size() % 2 == 0, "pad", "Padding length must be divisible by 2; got ", pad.size(),
              " values");
  const int64_t k = int64_t(pad.size()) / 2, n = input.dim();
  check_state(k <= n, "pad", "Padding length too large: ", pad.size(), " values pad ", k,
              " dims of an input of shape ", input.shape());
  const bool constant = mode == "constant";
  check_state(constant || mode == "reflect" || mode == "replicate" || mode == "circular", "pad",
              "Unrecognised padding mode ", mode,
              "; expected 'constant', 'reflect', 'replicate' or 'circular'");
  if (!constant) {
    check_state(k >= 1 && k <= 3 && (n == k + 1 || n == k + 2), "pad",
                "Only 2D, 3D, 4D, 5D padding with non-constant padding are supported for now: ",
                mode, " padding of ", k, " dims of an input of shape ", input.shape(),
                " (it pads the last 1, 2 or 3 dims of an input with one or two dims more)");
  }
  // Circular padding wraps the spatial dims of a [N, C, ...] input only.
  check_state(mode != "circular" || n == k + 2, "pad", "Invalid padding size, expected ",
              2 * (n - 2), " but got ", pad.size(), " for circular padding of an input of shape ",
              input.shape());
  // PyTorch lets circular padding, and reflect and replicate padding of 2 or 3 dims, crop a dim
  // away entirely; its 1-D reflect and replicate kernels refuse an empty output.
  const int64_t min_size = mode == "circular" || k > 1 ? 0 : 1;
  Tensor y = input;
  for (int64_t i = 0; i < k; ++i) {
    const int64_t dim = n - 1 - i;
    if (pad[2 * i] == 0 && pad[2 * i + 1] == 0) continue;
    // PyTorch's constant_pad_nd wants every padded dim to keep at least one element.
    check_state(!constant || y.size(dim) + pad[2 * i] + pad[2 * i + 1] > 0, "pad",
                "the input size ", y.size(dim), ", plus negative padding ", pad[2 * i], " and ",
                pad[2 * i + 1],
                " resulted in a negative output size, which is invalid. Check "
                "dimension ",
                dim, " of your input of shape ", input.shape());
    y = constant ? pad_constant(y, dim, pad[2 * i], pad[2 * i + 1], value)
                 : pad_indexed(y, dim, pad[2 * i], pad[2 * i + 1], mode, min_size);
  }
  return y;
}

Tensor interpolate(const Tensor& input, const std::vector<int64_t>& size,
                   const std::vector<double>& scale_factor, const std::string& mode,
                   std::optional<bool> align_corners, bool recompute_scale_factor) {
  const char* op = "interpolate";
  wick::detail::check_defined(op, input);
  const int64_t spatial = input.dim() - 2;
  const bool linear = mode == "linear" || mode == "bilinear" || mode == "trilinear";
  check_state(mode == "nearest" || mode == "nearest-exact" || mode == "area" || linear, op,
              "mode must be 'nearest', 'nearest-exact', 'linear', 'bilinear', 'trilinear' or "
              "'area'; got '",
              mode, "'");
  check_state(spatial >= 1 && spatial <= 3, op,
              "expected 3-D, 4-D or 5-D input [N, C, d1, ...]; got input of shape ", input.shape());
  check_state(mode != "linear" || spatial == 1, op, "Got ", input.dim(),
              "D input, but linear mode needs 3D input");
  check_state(mode != "bilinear" || spatial == 2, op, "Got ", input.dim(),
              "D input, but bilinear mode needs 4D input");
  check_state(mode != "trilinear" || spatial == 3, op, "Got ", input.dim(),
              "D input, but trilinear mode needs 5D input");
  check_value(!align_corners.has_value() || linear, op,
              "align_corners option can only be set with the interpolating modes: linear | "
              "bilinear | bicubic | trilinear");
  check_value(size.empty() != scale_factor.empty(), op,
              size.empty() ? "either size or scale_factor should be defined"
                           : "only one of size or scale_factor should be defined");
  const std::vector<int64_t>& given_size = size;
  check_value(given_size.empty() || int64_t(given_size.size()) == spatial, op,
              "Input and output must have the same number of spatial dimensions, but got input "
              "of shape ",
              input.shape(), " and output size of ", given_size.size(), " dims");
  check_value(scale_factor.empty() || int64_t(scale_factor.size()) == spatial, op,
              "Input and scale_factor must have the same number of spatial dimensions, but got "
              "input of shape ",
              input.shape(), " and ", scale_factor.size(), " scale factors");
  std::vector<int64_t> out(spatial);
  std::vector<double> scales(spatial, 0.0);  // 0: map coordinates from the sizes
  for (int64_t d = 0; d < spatial; ++d) {
    const int64_t in = input.size(2 + d);
    if (!size.empty()) {
      out[d] = size[d];
    } else {
      out[d] = int64_t(std::floor(double(in) * scale_factor[d]));
      if (!recompute_scale_factor) scales[d] = scale_factor[d];
    }
    check_state(in > 0 && out[d] > 0, op,
                "Input and output sizes should be greater than 0, but got input of shape ",
                input.shape(), " and output size ", out[d], " for spatial dim ", d);
  }
  if (mode == "area") {
    // PyTorch's area mode is adaptive average pooling to the output size.
    if (spatial == 1) {
      return adaptive_avg_pool2d(input.unsqueeze(2), Pair2(1, out[0])).squeeze(2);
    }
    check_state(spatial == 2, op, "area mode is supported for 3-D and 4-D inputs; got ",
                input.shape());
    return adaptive_avg_pool2d(input, Pair2(out[0], out[1]));
  }
  check_type(input.is_floating_point(), op, "expected a floating-point input; got ", input.dtype());
  Tensor y = input;
  const bool corners = align_corners.value_or(false);
  const bool shortcuts = spatial > 1 && input.size(1) == 1;
  for (int64_t d = 0; d < spatial; ++d) {
    y = input.dtype() == kFloat64
            ? resize_dim<double>(y, 2 + d, out[d], mode, corners, scales[d], shortcuts)
            : resize_dim<float>(y, 2 + d, out[d], mode, corners, scales[d], shortcuts);
  }
  return y;
}

Tensor pixel_shuffle(const Tensor& input, int64_t upscale_factor) {
  wick::detail::check_defined("pixel_shuffle", input);
  const int64_t r = upscale_factor;
  check_state(input.dim() >= 3, "pixel_shuffle",
              "expects input to have at least 3 dimensions, but got input of shape ",
              input.shape());
  check_state(r > 0, "pixel_shuffle", "upscale_factor must be greater than 0, but got ", r);
  const int64_t c = input.size(-3), h = input.size(-2), w = input.size(-1);
  check_state(c % (r * r) == 0, "pixel_shuffle",
              "pixel_shuffle expects its input's 'channel' dimension to be divisible by the "
              "square of upscale_factor, but input.size(-3)=",
              c, " is not divisible by ", r * r);
  Shape lead(input.shape().data(), input.dim() - 3);
  int64_t batch = 1;
  for (int64_t s : lead) batch *= s;
  Tensor y = input.reshape(Shape{batch, c / (r * r), r, r, h, w}).permute({0, 1, 4, 2, 5, 3});
  Shape out = lead;
  for (int64_t s : {c / (r * r), h * r, w * r}) out.push_back(s);
  return y.reshape(out);
}

Tensor pixel_unshuffle(const Tensor& input, int64_t downscale_factor) {
  wick::detail::check_defined("pixel_unshuffle", input);
  const int64_t r = downscale_factor;
  check_state(input.dim() >= 3, "pixel_unshuffle",
              "expects input to have at least 3 dimensions, but got input of shape ",
              input.shape());
  check_state(r > 0, "pixel_unshuffle", "downscale_factor must be greater than 0, but got ", r);
  const int64_t c = input.size(-3), h = input.size(-2), w = input.size(-1);
  check_state(h % r == 0, "pixel_unshuffle",
              "pixel_unshuffle expects height to be divisible by downscale_factor, but "
              "input.size(-2)=",
              h, " is not divisible by ", r);
  check_state(w % r == 0, "pixel_unshuffle",
              "pixel_unshuffle expects width to be divisible by downscale_factor, but "
              "input.size(-1)=",
              w, " is not divisible by ", r);
  Shape lead(input.shape().data(), input.dim() - 3);
  int64_t batch = 1;
  for (int64_t s : lead) batch *= s;
  Tensor y = input.reshape(Shape{batch, c, h / r, r, w / r, r}).permute({0, 1, 3, 5, 2, 4});
  Shape out = lead;
  for (int64_t s : {c * r * r, h / r, w / r}) out.push_back(s);
  return y.reshape(out);
}
}  // namespace functional

namespace F = functional;

namespace {

// A number, or a tuple of them, as PyTorch's resampling layers print their arguments.
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

}  // namespace wick::nn
