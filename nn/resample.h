// nn::functional, part two for padding and resampling: pad, interpolate, pixel_shuffle and
// pixel_unshuffle. Compositions of index_select, cat, reshape and permute with arithmetic, so
// autograd differentiates them and they run on every device.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/ops.h"

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
