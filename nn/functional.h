// nn::functional: the layers and losses as functions, under PyTorch's names
// (torch.nn.functional). Layers with kernels of their own (conv2d, pooling, batch_norm) forward
// to core/ops/nn.h; the rest are compositions of core ops, so their backward comes from
// autograd and they run on every device.
#pragma once

#include <string>
#include <vector>

#include "core/ops.h"

namespace wick::nn::functional {

using wick::adaptive_avg_pool2d;
using wick::avg_pool2d;
using wick::batch_norm;
using wick::conv2d;
using wick::gelu;
using wick::leaky_relu;
using wick::linear;
using wick::log_softmax;
using wick::max_pool2d;
using wick::one_hot;
using wick::relu;
using wick::sigmoid;
using wick::silu;
using wick::softmax;
using wick::tanh;

// Zeroes each element with probability p and scales the rest by 1 / (1 - p) (inverted dropout,
// so evaluation needs no rescaling); the identity when not training.
Tensor dropout(const Tensor& input, double p = 0.5, bool training = true);

// Normalizes over the last normalized_shape.size() dims, then applies weight and bias (each may
// be undefined) of shape normalized_shape.
Tensor layer_norm(const Tensor& input, const Shape& normalized_shape,
                  const Tensor& weight = Tensor(), const Tensor& bias = Tensor(),
                  double eps = 1e-5);

// Rows of weight [num_embeddings, dim] picked by integer indices: output indices.shape + [dim].
// The row padding_idx (if >= 0) receives no gradient.
Tensor embedding(const Tensor& indices, const Tensor& weight, int64_t padding_idx = -1);

Tensor flatten(const Tensor& input, int64_t start_dim = 1, int64_t end_dim = -1);

// ---- losses ----

enum class Reduction { None, Mean, Sum };
Reduction reduction_from_string(const std::string& name);  // "none", "mean", "sum"

// input: logits [N, C] (or [N, C, d1, ...], or [C] for one sample); target: class indices
// [N] (or [N, d1, ...]) of an integer dtype. Targets equal to ignore_index contribute nothing
// and are left out of the mean. label_smoothing mixes the one-hot target with the uniform
// distribution: (1 - s) * nll + s * mean over classes of -log_softmax.
struct CrossEntropyOptions {
  int64_t ignore_index = -100;
  Reduction reduction = Reduction::Mean;
  double label_smoothing = 0.0;
};
Tensor cross_entropy(const Tensor& input, const Tensor& target,
                     const CrossEntropyOptions& options = {});
// input: log-probabilities, shaped as for cross_entropy.
Tensor nll_loss(const Tensor& input, const Tensor& target, int64_t ignore_index = -100,
                Reduction reduction = Reduction::Mean);
// Input and target must have one shape (broadcasting them hides bugs, so it is an error).
Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean);
Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean);
// Sigmoid + binary cross-entropy in one stable expression; pos_weight (optional) scales the
// positive term per class.
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        Reduction reduction = Reduction::Mean,
                                        const Tensor& pos_weight = Tensor());
// input: probabilities in [0, 1]; the logs are clamped at -100, as PyTorch does, so a certain
// wrong answer costs 100 rather than infinity. weight (optional) broadcasts to the input.
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target,
                            const Tensor& weight = Tensor(), Reduction reduction = Reduction::Mean);
// Quadratic within beta (delta) of the target and linear outside: smooth_l1 is huber / beta.
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target,
                      Reduction reduction = Reduction::Mean, double beta = 1.0);
Tensor huber_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean,
                  double delta = 1.0);
// input: log-probabilities; target: probabilities (or log-probabilities with log_target).
// batch_mean divides the sum by the batch size, the mathematically correct KL divergence
// (PyTorch's reduction='batchmean'); Reduction::Mean averages over every element.
Tensor kl_div(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean,
              bool log_target = false, bool batch_mean = false);

}  // namespace wick::nn::functional

namespace wick::nn {
namespace F = functional;
}
