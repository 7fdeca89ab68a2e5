// Direct float32 3x3 convolution (stride 1 or 2) over padded rows, for the CPU.
//
// Note [direct convolution over padded rows]
// im2col + GEMM (conv_kernels.cpp) writes every input value nine times into a column matrix
// and reads it back; with the 16-64 channels of ResNet-20's layers the GEMM has only 16-64
// rows, so that copy costs as much as the multiply-adds it feeds. A direct convolution reads
// the input where it lies. The trick that makes it a simple vector loop: copy each image once
// into a zero-padded buffer whose rows are Wp = W + 2 * pad wide, and number the outputs in the
// same padded row space, j = y * Wp + x. Then the input that output j sees through tap (i, k)
// is at j + i * Wp + k for every j - so sixteen consecutive outputs read sixteen consecutive
// inputs, one unaligned vector load per tap, whatever the row boundaries. The columns
// x in [OW, Wp) are computed and thrown away. With stride 1 a row needs zeros on its right only,
// Wp = W + pad: the previous row's right padding is its left padding. That leaves 1/33 of the work
// thrown away at 32x32 with padding 1 and 1/17 at 16x16 (2/34 and 2/18 with both sides padded:
// the 32->32 @16 layer ran 1.73 -> 1.55 ms when the change was made); at 8x8 the 72 outputs
// still fill 5 vectors, as the 80 did.
// Stride 2 splits the padded image into four phase planes, P[a][b][u][v] = padded[2u+a][2v+b]:
// input (2y + i, 2x + k) is P[i%2][k%2][y + i/2][x + k/2], so in each plane's row space it is
// again output j plus a constant per tap.
//
// The micro-kernel keeps RO = 8 output channels x RJ = 3 vectors of outputs in registers (24
// of the 32 AVX-512 registers) and, for every input channel and tap, loads RJ input vectors
// and broadcasts RO weights, read in the order [channel][tap][RO] from a blocked copy of the
// weight (made per call in eager code; once, ahead of time, in a frozen graph). The outputs land
// in a padded scratch row space and are copied out with the bias added. The input gradient of
// a stride-1 convolution is itself one (Note [input gradient as a convolution]) and runs here.
//
// Measured with benchmarks/resnet_layers.py (batch 64, 2 threads), forward: 16->16 channels at
// 32x32 3.4-3.6 ms by im2col, 1.7-2.0 ms direct; 32->32 at 16x16 2.7-3.0 against 1.8. Rows
// narrower than 8 (ResNet-18's 7x7 stage at batch 1) stay with im2col, which was faster there.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "core/kernels.h"
#include "core/memory/host_cache.h"

namespace wick::cpu {

// The weight [O, C, 3, 3] reordered into blocks of output channels, zero-padded to whole blocks.
class DirectConvWeight {
 public:
  DirectConvWeight(const float* weight, int64_t out_channels, int64_t in_channels);
  int64_t out_channels() const { return out_channels_; }
  int64_t in_channels() const { return in_channels_; }
  const float* block(int64_t b) const { return blocked_.data() + b * in_channels_ * 9 * kBlock; }
  static constexpr int kBlock = 8;  // output channels per register block

 private:
  int64_t out_channels_, in_channels_;
  memory::HostBuffer<float> blocked_;  // [O / kBlock][C][9][kBlock]
};

// Whether conv2d's CPU kernels use the direct convolution where it fits (on by default); off,
// every float32 convolution runs im2col + GEMM, the reference (wick.backends.cpu).
bool direct_conv_enabled();
void set_direct_conv_enabled(bool enabled);

// 3x3, stride 1 or 2, dilation 1, one group, padding at most 2 - and an output row wide enough
// that the thrown-away columns stay a small part of the work.
bool direct_conv_fits(const Shape& weight, const Conv2dParams& params, int64_t out_width);

// Work on a part of a convolution's output as soon as that part is final, while it is still in
// cache: called with a range [begin, end) of the output's flat elements, from several threads at
// once on disjoint ranges, and it must not throw. A frozen graph's ReLU or residual add after a
// convolution runs this way (Note [conv epilogue fusion] in jit/passes/fuse_conv_epilogue.cpp).
using OutputEpilogue = std::function<void(int64_t begin, int64_t end)>;

// out[n] = conv(input[n], weight) + bias (bias may be null), for
// contiguous NCHW float32 `input` [N, C, H, W] and `out` [N, O, OH, OW]. Threads take whole
// images when there are enough, else blocks of output channels. `epilogue`, when given, runs on
// each block of output channels of each image right after it is written.
void conv2d_direct(const DirectConvWeight& weight, const float* input, int64_t n, int64_t h,
                   int64_t w, const float* bias, float* out, const Conv2dParams& params,
                   const OutputEpilogue& epilogue = {});

// Note [weight gradient over padded rows]
// In the padded row space the weight gradient of tap t is a product of two matrices that are
// already in memory: dW[o][c][t] = sum_n sum_j dY[n][o][j] * X[n][c][j + offset(t)], with dY
// copied into the row space (zeros at the thrown-away columns) - or, where output rows are two or
// more whole vectors (32x32), read in place one output row at a time. im2col + GEMM instead writes
// the nine shifted copies of X out and has the GEMM pack them again, and its GEMM has only O
// (16-64) rows. Here a register block of 4 output x 6 input channels keeps 24 vector
// accumulators over j; a thread sums several images before it adds each accumulator's lanes,
// so that the lane sums stay a small part of the work. Each input vector is loaded once for
// its 4 multiply-adds (an empty asm keeps GCC from folding the load into each of them, which
// made 28 loads for 24 multiply-adds and halved the speed). Forward + weight gradient, batch
// 64, 2 threads, against im2col + GEMM: 16->16 @32 3.9 against 7.5-7.7 ms, 32->32 @16 3.5
// against 5.5, 16->32 stride 2 @32 2.8 against 3.5-3.6; below 16x16 outputs it is no faster,
// and conv_kernels.cpp keeps im2col there.
//
// grad_weight [O, C, 3, 3] = the weight gradient of conv2d_direct's convolution, for contiguous
// float32 `input` [N, C, H, W] and `grad_out` [N, O, OH, OW]; the images are split over the
// threads (N >= the thread count), whose sums are added in a fixed order.
void conv2d_direct_weight_grad(const float* input, const float* grad_out, int64_t n, int64_t c,
                               int64_t h, int64_t w, int64_t o, const Conv2dParams& params,
                               float* grad_weight);

// Note [strided input gradient by output phases]
// A stride-2 convolution's input gradient, as GEMM + col2im, multiplies W^T by dY into a
// C*9 x OH*OW column matrix and scatters it back, much as im2col copies its input nine times.
// Split dX into its four phases instead, dX[c][2Y + a][2X + b]: each is reached by the taps
// (i, k) with i = a + 1 and k = b + 1 (mod 2) - 1, 2, 2 and 4 of the nine for padding 1 -
// reading dY at (Y, X) or one row or column on, so each phase is a stride-1 convolution of
// dY with its taps' weights, and conv2d_direct's kernel (Note [direct convolution over padded
// rows]) runs it over dY's padded rows. The four phases together make the nine taps' products
// once, as the forward does, and every dX value is written once, by its phase.
//
// grad_input [N, C, H, W] of a 3x3, stride-2, padding-1 convolution with `weight` [O, C, 3, 3],
// from contiguous float32 `grad_out` [N, O, OH, OW]; where direct_strided_input_grad_fits().
bool direct_strided_input_grad_fits(const Shape& weight, const Conv2dParams& params,
                                    int64_t out_width);
void conv2d_direct_strided_input_grad(const float* weight, const float* grad_out, int64_t n,
                                      int64_t o, int64_t c, int64_t h, int64_t w,
                                      float* grad_input);

}  // namespace wick::cpu
