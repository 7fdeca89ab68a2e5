// Joining and splitting: cat, stack, split, chunk.
#pragma once

#include <vector>

#include "core/tensor.h"

namespace wick {

Tensor cat(const std::vector<Tensor>& tensors, int64_t dim = 0);
Tensor stack(const std::vector<Tensor>& tensors, int64_t dim = 0);
// Views of `x` along dim: pieces of split_size (the last may be smaller), or `chunks` pieces.
std::vector<Tensor> split(const Tensor& x, int64_t split_size, int64_t dim = 0);
std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim = 0);

}  // namespace wick
