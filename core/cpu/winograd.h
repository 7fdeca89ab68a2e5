// Winograd's minimal filtering F(2x2, 3x3) for float32 3x3 convolutions with stride 1.
//
// Note [Winograd F(2x2, 3x3)]
// A 3x3 convolution computes each 2x2 block of outputs from a 4x4 block of inputs with 36
// multiplications per channel pair. Winograd's algorithm (Lavin & Gray, "Fast Algorithms for
// Convolutional Neural Networks", 2016) needs 16: with
//     B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1],  G = [1 0 0; .5 .5 .5; .5 -.5 .5; 0 0 1],
//     A^T = [1 1 1 0; 0 1 -1 -1]
// the block is Y = A^T [ sum_c (G g_oc G^T) .* (B^T d_c B) ] A. The sum over channels of the
// element-wise products is, for each of the 16 positions xi of the 4x4 block, a matrix product
//     M[xi] (O x tiles) = U[xi] (O x C) @ V[xi] (C x tiles),
// so the convolution becomes: transform the weight once (U, packed for the GEMM), transform the
// input (V), run 16 GEMMs with 16/36 of the im2col GEMM's multiply-adds, and transform
// the products back (Y). The transforms are additions only. The price: 16/9 of the weight's
// memory and rounding a few ulps larger than im2col's (the transforms add and subtract values of
// similar size). wick uses it where the GEMMs stay efficient - enough tiles to fill the
// micro-kernel's 32-column panels - and measures it against im2col in benchmarks/conv_inference.py.
#pragma once

#include <vector>

#include "core/cpu/gemm.h"
#include "core/kernels.h"
#include "core/tensor.h"

namespace wick::cpu {

class WinogradWeight {
 public:
  // `weight`: float32 [O, C, 3, 3], contiguous, on the CPU.
  explicit WinogradWeight(const Tensor& weight);
  int64_t out_channels() const { return out_channels_; }
  int64_t in_channels() const { return in_channels_; }

 private:
  friend void conv2d_winograd(const WinogradWeight&, const Tensor&, const Tensor&, Tensor&,
                              const Conv2dParams&);
  int64_t out_channels_, in_channels_;
  std::vector<PackedA> u_;  // U[xi], O x C, one per position of the 4x4 block
};

// u[4 r + k] = (G g G^T)[r][k] for one 3x3 filter g, computed in float64 so that U is rounded
// once. Shared with Winograd over blocks of 16 tiles (core/cpu/winograd_tiles.h).
void winograd_filter(const float* g, float (&u)[16]);

// Stride 1, dilation 1, one group, any padding: what the im2col kernel computes, to float32
// rounding.
bool winograd_fits(const Shape& weight, const Conv2dParams& params);
void conv2d_winograd(const WinogradWeight& weight, const Tensor& input, const Tensor& bias,
                     Tensor& out, const Conv2dParams& params);

}  // namespace wick::cpu
