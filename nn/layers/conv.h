// Convolutions: conv1d, conv2d and the transposed conv_transpose2d, and unfold/fold (im2col and
// col2im), as functions and as modules. conv2d has kernels of its own (core/ops/nn.h); the rest
// are compositions of it, of its input gradient and of indexing ops, so their backward comes
// from autograd and they run on every device.
#pragma once

#include <string>

#include "core/ops.h"
#include "nn/module.h"

namespace wick::nn::functional {

using wick::conv2d;

// input [N, C, L] (or [C, L]), weight [O, C / groups, k]: conv2d over a height-1 image.
Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(),
              int64_t stride = 1, int64_t padding = 0, int64_t dilation = 1, int64_t groups = 1);

// PyTorch's padding strings: "valid" (no padding) and "same" (the output keeps the input's
// size; stride 1 only).
enum class PaddingMode { Valid, Same };
PaddingMode padding_mode_from_string(const char* op, const std::string& name);

// padding='same' of one spatial dim: the total dilation * (kernel_size - 1) split in two, the
// odd one extra after (Note [same padding]).
struct SamePadding {
  int64_t before, after;
};
SamePadding same_padding(const char* op, int64_t kernel_size, int64_t dilation, int64_t stride);

// The convolutions with a padding string.
Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias, int64_t stride,
              PaddingMode padding, int64_t dilation = 1, int64_t groups = 1);
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, Pair2 stride,
              PaddingMode padding, Pair2 dilation = 1, int64_t groups = 1);

// input [N, Cin, H, W] (or [Cin, H, W]), weight [Cin, Cout / groups, kh, kw], PyTorch's order
// of arguments (output_padding before groups, dilation last). Output size per dim:
// (in - 1) * stride - 2 * padding + dilation * (k - 1) + output_padding + 1.
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(),
                        Pair2 stride = 1, Pair2 padding = 0, Pair2 output_padding = 0,
                        int64_t groups = 1, Pair2 dilation = 1);

// im2col: [N, C, H, W] (or [C, H, W]) to [N, C * kh * kw, L] with one column per window.
Tensor unfold(const Tensor& input, Pair2 kernel_size, Pair2 dilation = 1, Pair2 padding = 0,
              Pair2 stride = 1);
// col2im, unfold's adjoint: [N, C * kh * kw, L] (or unbatched) to [N, C, output_size],
// overlapping windows add up.
Tensor fold(const Tensor& input, Pair2 output_size, Pair2 kernel_size, Pair2 dilation = 1,
            Pair2 padding = 0, Pair2 stride = 1);

}  // namespace wick::nn::functional

namespace wick::nn {

// The convolutions' weights and biases are initialised like PyTorch's (init::fan_in_uniform_),
// so state_dicts load either way.
class Conv1d : public Module {
 public:
  Conv1d(int64_t in_channels, int64_t out_channels, int64_t kernel_size, int64_t stride = 1,
         int64_t padding = 0, int64_t dilation = 1, int64_t groups = 1, bool bias = true);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  Tensor weight, bias;  // weight [out, in / groups, k]

 private:
  int64_t in_channels_, out_channels_, kernel_size_, stride_, padding_, dilation_, groups_;
};

class Conv2d : public Module {
 public:
  Conv2d(int64_t in_channels, int64_t out_channels, Pair2 kernel_size, Pair2 stride = 1,
         Pair2 padding = 0, Pair2 dilation = 1, int64_t groups = 1, bool bias = true);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  Tensor weight, bias;  // weight [out, in / groups, kh, kw]

 private:
  int64_t in_channels_, out_channels_, groups_;
  Pair2 kernel_size_, stride_, padding_, dilation_;
};

class ConvTranspose2d : public Module {
 public:
  ConvTranspose2d(int64_t in_channels, int64_t out_channels, Pair2 kernel_size, Pair2 stride = 1,
                  Pair2 padding = 0, Pair2 output_padding = 0, int64_t groups = 1, bool bias = true,
                  Pair2 dilation = 1);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  Tensor weight, bias;  // weight [in, out / groups, kh, kw]

 private:
  int64_t in_channels_, out_channels_, groups_;
  Pair2 kernel_size_, stride_, padding_, output_padding_, dilation_;
};

class Unfold : public Module {
 public:
  explicit Unfold(Pair2 kernel_size, Pair2 dilation = 1, Pair2 padding = 0, Pair2 stride = 1);
  Tensor forward(const Tensor& input) override;

 private:
  Pair2 kernel_size_, dilation_, padding_, stride_;
};

class Fold : public Module {
 public:
  Fold(Pair2 output_size, Pair2 kernel_size, Pair2 dilation = 1, Pair2 padding = 0,
       Pair2 stride = 1);
  Tensor forward(const Tensor& input) override;

 private:
  Pair2 output_size_, kernel_size_, dilation_, padding_, stride_;
};

}  // namespace wick::nn
