// A float32 convolution weight packed for the GEMM ahead of time, for graphs whose weights are
// constants (jit::compile with freeze=True).
//
// Note [weights packed ahead of time]
// The im2col convolution multiplies its weight [O, C*kh*kw] by each image's column matrix, and
// the GEMM first copies the weight into the panel order its micro-kernel reads (gemm.cpp). Eager
// code does that on every call: it cannot know that the weight did not change since the last
// one. For a batch-1 image the copy is as large as the arithmetic is small - ResNet-18's last
// layers read a 9 MB weight for 49 output positions - and it took half of their time. A frozen
// graph knows its weights are constants, so the executor packs each one when it is built and
// every run skips the copy. ONNX Runtime (prepacked MLAS weights), TensorRT and oneDNN (weights
// reordered to their blocked layouts at model load) do the same; the price is a second copy of
// the weights in memory. docs/deployment.md gives the measured effect.
#pragma once

#include <memory>
#include <vector>

#include "core/cpu/conv_direct.h"
#include "core/cpu/gemm.h"
#include "core/cpu/winograd.h"
#include "core/kernels.h"
#include "core/tensor.h"

namespace wick::cpu {

class PackedConvWeight {
 public:
  enum class Algorithm { kIm2col, kWinograd, kDirect };
  // `weight`: float32 [O, C / groups, kh, kw] on the CPU, for inputs of `input_shape` [N, C, H, W]
  // convolved with `params`. A 3x3 stride-1 convolution with enough output tiles is packed for
  // Winograd (Note [Winograd F(2x2, 3x3)]), another 3x3 stride-1 one blocked for the direct
  // convolution when that is enabled (Note [direct convolution over padded rows]), any other
  // for im2col + GEMM; `allow_winograd` false keeps Winograd out (the benchmark's reference).
  PackedConvWeight(const Tensor& weight, const Conv2dParams& params, const Shape& input_shape,
                   bool allow_winograd = true);
  const Shape& shape() const { return shape_; }
  Algorithm algorithm() const {
    return winograd_ ? Algorithm::kWinograd : direct_ ? Algorithm::kDirect : Algorithm::kIm2col;
  }
  const std::vector<PackedA>& groups() const { return groups_; }
  const WinogradWeight* winograd() const { return winograd_.get(); }
  const DirectConvWeight* direct() const { return direct_.get(); }

 private:
  Shape shape_;
  std::vector<PackedA> groups_;
  std::unique_ptr<WinogradWeight> winograd_;
  std::unique_ptr<DirectConvWeight> direct_;
};

// conv2d's CPU kernel (Conv2dKernel) with the weight packed ahead of time: the same result as
// the kernel given the weight it was packed from. Throws wick::ValueError when `input` or
// `params.groups` do not match the packed weight. `epilogue` then runs over all of `out`: the
// direct convolution hands it each block as it is written, the other algorithms the whole
// output afterwards.
void conv2d_prepacked(const PackedConvWeight& weight, const Tensor& input, const Tensor& bias,
                      Tensor& out, const Conv2dParams& params, const OutputEpilogue& epilogue = {});

}  // namespace wick::cpu
