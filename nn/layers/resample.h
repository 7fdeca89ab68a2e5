// Padding and resampling: pad, interpolate, pixel_shuffle and pixel_unshuffle, as functions and
// as modules. Compositions of index_select, cat, reshape and permute with arithmetic, so
// autograd differentiates them and they run on every device.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/ops.h"
#include "nn/module.h"

namespace wick::nn::functional {

// pad holds (left, right) pairs starting from the last dim, as PyTorch's: {1, 2} pads the last
// dim, {1, 2, 3, 4} the last two. Negative amounts crop. mode: "constant" (with value),
// "reflect" (mirrors without repeating the edge; each amount must be below the dim's size),
// "replicate" (repeats the edge), "circular" (wraps; each amount at most the dim's size). The
// non-constant modes pad 1 to 3 trailing dims of an input with one or two dims more.
Tensor pad(const Tensor& input, const std::vector<int64_t>& pad,
           const std::string& mode = "constant", double value = 0.0);

// Resizes the spatial dims (all after [N, C]) to `size`, or by `scale_factor` (one entry per
// spatial dim; give exactly one of the two). mode: "nearest", "nearest-exact", "linear" (3-D),
// "bilinear" (4-D), "trilinear" (5-D) or "area". align_corners (linear modes only) maps the
// corner pixels' centres onto each other; unset means false. recompute_scale_factor true
// computes the coordinate mapping from the output size instead of scale_factor.
Tensor interpolate(const Tensor& input, const std::vector<int64_t>& size,
                   const std::vector<double>& scale_factor, const std::string& mode = "nearest",
                   std::optional<bool> align_corners = std::nullopt,
                   bool recompute_scale_factor = false);

// [*, C * r * r, H, W] to [*, C, H * r, W * r], and back.
Tensor pixel_shuffle(const Tensor& input, int64_t upscale_factor);
Tensor pixel_unshuffle(const Tensor& input, int64_t downscale_factor);

}  // namespace wick::nn::functional

namespace wick::nn {

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

}  // namespace wick::nn
