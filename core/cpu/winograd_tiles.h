// Winograd's F(2x2, 3x3) for eager and training-time convolutions, vectorised over 16 tiles.
//
// Note [Winograd over blocks of 16 tiles]
// core/cpu/winograd.h runs Winograd in frozen graphs: the weight transformed once, 16 GEMMs per
// image over all of its tiles. On ResNet-20's shapes in training (16-64 channels, batch 64) that
// was 2.4-2.8x slower than the direct convolution: with C = 16 each GEMM's inner product is 16
// long, and the transforms, written along the rows, went through memory a float at a time.
//
// Here a vector holds the same transform position of 16 tiles, so every stage is vector work:
//   1. each input row is transformed along its columns into four rows of tile values (the four
//      column positions of B^T), stored apart by the row's parity: padded rows 2ty + r for
//      r = 0..3 of 16 consecutive tiles are then 16 consecutive floats, whatever the image width
//      (8 tiles per row: two tile rows per vector; 4: four);
//   2. combining four such rows gives V[xi][c] for 16 tiles at once (B^T d B);
//   3. M[xi] = U[xi] @ V[xi] as a register-blocked product: 6 output channels x 4 vectors of
//      tiles, each weight value broadcast once for 64 tiles;
//   4. A^T M A for 16 tiles, and the two output columns of each tile interleaved into rows.
// Images are taken a few at a time (at least 64 tiles), so V and M of one step stay in L2 and
// small images still fill the 4-vector product. The weight is transformed on each call
// (O x C x 16 floats; the work is O x C x ~60 flops, against the product's N x T x O x C x 32).
// The input gradient is the same convolution with the weight flipped and transposed, so it runs
// here too. Measured in benchmarks/resnet_layers.py and tutorials/14-convolution; the rounding
// differs from im2col's by a few ulps (the transforms add values of similar size).
#pragma once

#include <cstdint>

#include "core/kernels.h"

namespace wick::cpu {

bool winograd_tiles_enabled();
void set_winograd_tiles_enabled(bool enabled);

// 3x3, stride 1, dilation 1, padding 1, one group, on H x W images with H even and 16 tiles
// laid out whole in rows: W in {8, 16} or a multiple of 32, and (H / 2) * (W / 2) a multiple
// of 16; and at least `threads` images, so every thread has whole images to work on.
bool winograd_tiles_fits(const Shape& weight, const Conv2dParams& params, int64_t n, int64_t h,
                         int64_t w);

// out[N, O, H, W] = conv(input[N, C, H, W], weight[O, C, 3, 3]) + bias (bias may be null).
void conv2d_winograd_tiles(const float* weight, int64_t o, int64_t c, const float* input, int64_t n,
                           int64_t h, int64_t w, const float* bias, float* out);

// Note [Winograd's weight gradient over tiles]
// Forward, Y = A^T (U . V) A per tile with U = G g G^T, so dL/dU = sum over tiles of
// V . (A dY A^T), and dW = G^T (dL/dU) G: the input transformed as in the forward, dY
// transformed 2x2 -> 4x4, then per position xi a product dU[xi] (C x O) = V[xi] (C x T) @
// N[xi] (T x O) whose inner dimension is the batch's tiles. With tiles in the vector lanes
// every (c, o) sum would end in a horizontal add; instead dY is transposed to channels-last
// first (16 x 16 blocks in registers, a quarter of the floats N has), so N holds 16 output
// channels to a vector, each value of V is broadcast, and the sums stay in registers for a step
// and are added to the thread's dU once per step. The threads take fixed blocks of images and
// their dU are added in thread order: the same sums on every run. The final G^T dU G per filter
// is done in float64 (O x C x ~60 flops).

// Needs O a multiple of 16 (output channels fill whole vectors), besides winograd_tiles_fits.
bool winograd_tiles_weight_grad_fits(const Shape& weight, const Conv2dParams& params, int64_t n,
                                     int64_t h, int64_t w);

// grad_weight[O, C, 3, 3] = the weight gradient of a 3x3, stride 1, padding 1 convolution, from
// input[N, C, H, W] and grad_out[N, O, H, W]; overwritten, not added to.
void conv2d_winograd_tiles_weight_grad(const float* input, int64_t n, int64_t c, int64_t h,
                                       int64_t w, const float* grad_out, int64_t o,
                                       float* grad_weight);

}  // namespace wick::cpu
