// The losses of nn::functional (torch.nn.functional's names), written with core ops so autograd
// differentiates them.
#pragma once

#include <string>

#include "core/ops.h"

namespace wick::nn::functional {

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
