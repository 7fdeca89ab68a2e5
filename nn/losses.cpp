// The losses of nn::functional, written with core ops so autograd differentiates them. Each is
// arranged to be numerically stable: cross-entropy goes through log_softmax (never log of a
// softmax), and the logistic loss through max(x, 0) + log(1 + exp(-|x|)), which never
// exponentiates a large positive number.
#include "nn/losses.h"

#include "core/autocast.h"
#include "core/grad_mode.h"

namespace wick::nn::functional {

namespace {

Tensor reduce(const Tensor& losses, Reduction reduction) {
  switch (reduction) {
    case Reduction::None:
      return losses;
    case Reduction::Sum:
      return losses.sum();
    case Reduction::Mean:
      return losses.mean();
  }
  return losses;
}

// Puts the class dim last and flattens the rest: logits [N, C, d...] -> [M, C], targets -> [M].
void flatten_classes(const char* op, const Tensor& input, const Tensor& target, Tensor& rows,
                     Tensor& labels) {
  check_value(input.defined() && target.defined(), op, "got an undefined tensor");
  check_type(!target.is_floating_point() && target.dtype() != kBool, op,
             "target must hold class indices (an integer tensor); got ", target.dtype(),
             " (for probabilities, use a soft-label loss)");
  check_value(input.dim() >= 1, op, "input must have a class dimension; got shape ", input.shape());
  if (input.dim() == 1) {  // one unbatched sample: [C] and a 0-d target
    check_value(target.dim() == 0, op, "for input of shape ", input.shape(),
                " the target must be 0-d; got shape ", target.shape());
    rows = input.unsqueeze(0);
    labels = target.reshape(Shape{1});
    return;
  }
  Shape expected = input.shape();
  expected.erase(1);
  check_value(target.shape() == expected, op, "input of shape ", input.shape(),
              " needs a target of shape ", expected, "; got ", target.shape());
  int64_t classes = input.size(1);
  if (input.dim() == 2) {
    rows = input;
  } else {  // move the class dim last, keeping the order of the others: [N, d1, ..., C]
    DimList order = {0};
    for (int64_t d = 2; d < input.dim(); ++d) order.push_back(d);
    order.push_back(1);
    rows = input.permute(order).reshape(Shape{-1, classes});
  }
  labels = target.reshape(Shape{-1}).to(kInt64);
}

// Mean over the targets that are not ignored (0/0 = nan when all are, as in PyTorch).
Tensor reduce_valid(const Tensor& losses, const Tensor& valid, Reduction reduction,
                    const Shape& target_shape) {
  if (reduction == Reduction::None) return losses.reshape(target_shape);
  if (reduction == Reduction::Sum) return losses.sum();
  return losses.sum() / valid.to(losses.dtype()).sum();
}

Tensor checked_labels(const char* op, const Tensor& labels, int64_t classes, int64_t ignore_index,
                      Tensor& valid) {
  valid = labels != ignore_index;
  Tensor safe = where(valid, labels, zeros_like(labels));
  if (safe.numel() > 0) {
    NoGradGuard no_grad;
    int64_t low = safe.min().item<int64_t>(), high = safe.max().item<int64_t>();
    check_index(low >= 0 && high < classes, op, "target ", low < 0 ? low : high,
                " is out of bounds for ", classes, " classes (ignore_index is ", ignore_index, ")");
  }
  return safe;
}

}  // namespace

Reduction reduction_from_string(const std::string& name) {
  if (name == "none") return Reduction::None;
  if (name == "mean") return Reduction::Mean;
  if (name == "sum") return Reduction::Sum;
  throw_value_error("loss", "reduction must be 'none', 'mean' or 'sum'; got '", name, "'");
}

Tensor nll_loss(const Tensor& input, const Tensor& target, int64_t ignore_index,
                Reduction reduction) {
  Tensor rows, labels, valid;
  flatten_classes("nll_loss", autocast::cast(AutocastPolicy::Float32, input), target, rows, labels);
  Tensor safe = checked_labels("nll_loss", labels, rows.size(1), ignore_index, valid);
  Tensor picked = rows.gather(1, safe.unsqueeze(1)).squeeze(1);
  Tensor losses = -picked * valid.to(rows.dtype());
  return reduce_valid(losses, valid, reduction, target.shape());
}

Tensor cross_entropy(const Tensor& input, const Tensor& target,
                     const CrossEntropyOptions& options) {
  check_value(options.label_smoothing >= 0.0 && options.label_smoothing <= 1.0, "cross_entropy",
              "label_smoothing must be in [0, 1]; got ", options.label_smoothing);
  Tensor rows, labels, valid;
  flatten_classes("cross_entropy", input, target, rows, labels);
  // Autocast keeps losses in float32: 16-bit logits are upcast before the log_softmax.
  if (is_reduced_float(rows.dtype())) rows = rows.to(kFloat32);
  Tensor log_probs = log_softmax(rows, 1);
  Tensor safe = checked_labels("cross_entropy", labels, rows.size(1), options.ignore_index, valid);
  Tensor mask = valid.to(log_probs.dtype());
  Tensor losses = -log_probs.gather(1, safe.unsqueeze(1)).squeeze(1);
  if (options.label_smoothing > 0.0) {
    double s = options.label_smoothing;
    Tensor smooth = -log_probs.mean({1});
    losses = losses * (1.0 - s) + smooth * s;
  }
  return reduce_valid(losses * mask, valid, options.reduction, target.shape());
}

Tensor mse_loss(const Tensor& input_in, const Tensor& target_in, Reduction reduction) {
  check_value(input_in.defined() && target_in.defined(), "mse_loss", "got an undefined tensor");
  Tensor input = autocast::cast(AutocastPolicy::Float32, input_in);
  Tensor target = autocast::cast(AutocastPolicy::Float32, target_in);
  check_value(input.shape() == target.shape(), "mse_loss", "input shape ", input.shape(),
              " and target shape ", target.shape(),
              " differ; broadcasting them is almost always a bug, so reshape one explicitly");
  Tensor diff = input - target;
  return reduce(diff * diff, reduction);
}

Tensor l1_loss(const Tensor& input_in, const Tensor& target_in, Reduction reduction) {
  check_value(input_in.defined() && target_in.defined(), "l1_loss", "got an undefined tensor");
  Tensor input = autocast::cast(AutocastPolicy::Float32, input_in);
  Tensor target = autocast::cast(AutocastPolicy::Float32, target_in);
  check_value(input.shape() == target.shape(), "l1_loss", "input shape ", input.shape(),
              " and target shape ", target.shape(),
              " differ; broadcasting them is almost always a bug, so reshape one explicitly");
  return reduce(abs(input - target), reduction);
}

Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        Reduction reduction, const Tensor& pos_weight) {
  check_value(input.defined() && target.defined(), "binary_cross_entropy_with_logits",
              "got an undefined tensor");
  check_value(input.shape() == target.shape(), "binary_cross_entropy_with_logits", "input shape ",
              input.shape(), " and target shape ", target.shape(), " differ");
  // Always float32 for 16-bit logits (autocast's rule for losses).
  Tensor x = is_reduced_float(input.dtype()) ? input.to(kFloat32) : input;
  Tensor y = target.to(x.dtype());
  // -log(sigmoid(x)) = softplus(-x) = log(e^0 + e^-x), as a logsumexp: stable (it shifts by
  // the max) and smooth at x = 0, where the form max(-x, 0) + log(1 + exp(-|x|)) has two kinks
  // whose one-sided derivatives autograd cannot pair up (it gave -1 instead of -1/2 for the
  // gradient at 0, and 0 instead of 1/4 for the second derivative).
  Tensor softplus_neg = logsumexp(stack({zeros_like(x), -x}, 0), {0});
  Tensor losses;
  if (pos_weight.defined()) {
    // (1 - y) x + (1 + (pw - 1) y) softplus(-x)
    Tensor weight = (pos_weight.to(x.dtype()) - 1.0) * y + 1.0;
    losses = (1.0 - y) * x + weight * softplus_neg;
  } else {
    losses = (1.0 - y) * x + softplus_neg;
  }
  return reduce(losses, reduction);
}

namespace {

// Both tensors defined, of one shape, and float32 under autocast (the losses' rule).
void pointwise_inputs(const char* op, const Tensor& input_in, const Tensor& target_in,
                      Tensor& input, Tensor& target) {
  check_value(input_in.defined() && target_in.defined(), op, "got an undefined tensor");
  check_value(input_in.shape() == target_in.shape(), op, "input shape ", input_in.shape(),
              " and target shape ", target_in.shape(),
              " differ; broadcasting them is almost always a bug, so reshape one explicitly");
  input = autocast::cast(AutocastPolicy::Float32, input_in);
  target = autocast::cast(AutocastPolicy::Float32, target_in).to(input.dtype());
}

}  // namespace

Tensor binary_cross_entropy(const Tensor& input_in, const Tensor& target_in, const Tensor& weight,
                            Reduction reduction) {
  Tensor x, y;
  pointwise_inputs("binary_cross_entropy", input_in, target_in, x, y);
  if (x.numel() > 0) {
    NoGradGuard no_grad;
    double low = x.min().item<double>(), high = x.max().item<double>();
    check_state(low >= 0.0 && high <= 1.0, "binary_cross_entropy",
                "all elements of input should be between 0 and 1; got values in [", low, ", ", high,
                "]");
  }
  Tensor log_x = clamp_min(log(x), -100.0), log_1mx = clamp_min(log(1.0 - x), -100.0);
  Tensor losses = -(y * log_x + (1.0 - y) * log_1mx);
  if (weight.defined()) losses = losses * weight.to(losses.dtype());
  return reduce(losses, reduction);
}

Tensor huber_loss(const Tensor& input_in, const Tensor& target_in, Reduction reduction,
                  double delta) {
  check_value(delta > 0.0, "huber_loss", "delta must be positive; got ", delta);
  Tensor x, y;
  pointwise_inputs("huber_loss", input_in, target_in, x, y);
  Tensor d = abs(x - y);
  Tensor losses = where(d <= delta, d * d * 0.5, (d - 0.5 * delta) * delta);
  return reduce(losses, reduction);
}

Tensor smooth_l1_loss(const Tensor& input_in, const Tensor& target_in, Reduction reduction,
                      double beta) {
  check_value(beta >= 0.0, "smooth_l1_loss", "beta must be non-negative; got ", beta);
  Tensor x, y;
  pointwise_inputs("smooth_l1_loss", input_in, target_in, x, y);
  Tensor d = abs(x - y);
  if (beta == 0.0) return reduce(d, reduction);  // the limit is the L1 loss
  Tensor losses = where(d < beta, d * d * (0.5 / beta), d - 0.5 * beta);
  return reduce(losses, reduction);
}

Tensor kl_div(const Tensor& input_in, const Tensor& target_in, Reduction reduction, bool log_target,
              bool batch_mean) {
  Tensor x, y;
  pointwise_inputs("kl_div", input_in, target_in, x, y);
  Tensor losses;
  if (log_target) {
    losses = exp(y) * (y - x);
  } else {
    // target * (log target - input), with 0 log 0 = 0 (a zero target contributes nothing).
    Tensor safe = where(y > 0, y, ones_like(y));
    losses = where(y > 0, y * (log(safe) - x), zeros_like(y));
  }
  if (batch_mean) return x.dim() == 0 ? losses.sum() : losses.sum() / double(x.size(0));
  return reduce(losses, reduction);
}

}  // namespace wick::nn::functional
