// How the pooling kernels (core/cpu/pool_kernels.cpp, cuda/nn.cu) see an [N, C, H, W] input and
// its pooled output: N * C independent planes of h x w in and oh x ow out.
#pragma once

#include <cstdint>

#include "core/tensor.h"

namespace wick {

struct Planes {
  int64_t count, h, w, oh, ow;
};

inline Planes planes(const Tensor& input, const Tensor& out) {
  return {input.size(0) * input.size(1), input.size(2), input.size(3), out.size(2), out.size(3)};
}

}  // namespace wick
