#include "nn/functional.h"

#include <stdexcept>
#include <string>

#include "autograd/grad_mode.h"
#include "core/autocast.h"

namespace wick::nn::functional {

Tensor dropout(const Tensor& input, double p, bool training) {
  check_value(p >= 0.0 && p <= 1.0, "dropout", "probability must be in [0, 1]; got ", p);
  check_value(input.defined(), "dropout", "got an undefined tensor");
  if (!training || p == 0.0) return input;
  if (p == 1.0) return input * 0.0;
  Tensor keep = (rand(input.shape(), TensorOptions(input.dtype()).with_device(input.device())) >= p)
                    .to(input.dtype());
  return input * keep * (1.0 / (1.0 - p));
}

Tensor layer_norm(const Tensor& input, const Shape& normalized_shape, const Tensor& weight,
                  const Tensor& bias, double eps) {
  check_value(input.defined(), "layer_norm", "got an undefined tensor");
  int64_t k = normalized_shape.size();
  bool matches = k >= 1 && input.dim() >= k;
  for (int64_t i = 0; matches && i < k; ++i) {
    matches = input.size(input.dim() - k + i) == normalized_shape[i];
  }
  check_value(matches, "layer_norm", "normalized_shape ", normalized_shape,
              " does not match the trailing dims of input of shape ", input.shape());
  for (const Tensor* t : {&weight, &bias}) {
    check_value(!t->defined() || t->shape() == normalized_shape, "layer_norm",
                "weight and bias must have shape ", normalized_shape, "; got ",
                t->defined() ? to_string(t->shape()) : std::string());
  }
  DimList dims;
  for (int64_t i = input.dim() - k; i < input.dim(); ++i) dims.push_back(i);
  // Under autocast layer_norm runs in float32 (Note [autocast]); without it, 16-bit inputs still
  // get float32 statistics and keep their dtype.
  Tensor in = autocast::cast(AutocastPolicy::Float32, input);
  Tensor x = is_reduced_float(in.dtype()) ? in.to(kFloat32) : in;
  Tensor mean = x.mean(dims, /*keepdim=*/true);
  Tensor var = x.var(dims, /*correction=*/0, /*keepdim=*/true);
  Tensor y = (x - mean) * rsqrt(var + eps);
  if (weight.defined()) y = y * weight;
  if (bias.defined()) y = y + bias;
  return y.to(in.dtype());
}

Tensor embedding(const Tensor& indices, const Tensor& weight, int64_t padding_idx) {
  check_value(indices.defined() && weight.defined(), "embedding", "got an undefined tensor");
  check_value(weight.dim() == 2, "embedding",
              "weight must be 2-D [num_embeddings, embedding_dim]; got ", weight.shape());
  check_type(!indices.is_floating_point() && indices.dtype() != kBool, "embedding",
             "indices must be an integer tensor; got ", indices.dtype());
  // A negative padding_idx means none here; Python's negative values are wrapped by the caller.
  check_value(padding_idx < weight.size(0), "embedding", "padding_idx ", padding_idx,
              " must be within num_embeddings (", weight.size(0), ")");
  Tensor rows;
  try {
    rows = weight.index_select(0, indices.reshape(Shape{-1}));
  } catch (const std::out_of_range& e) {
    // Report it as embedding's mistake (Note [index bounds]): the user never called index_select.
    throw std::out_of_range(std::string("[embedding] index out of range in self: ") + e.what());
  }
  if (padding_idx >= 0) {
    // Same values, but the padding row's gradient is cut: where() sends the gradient to the
    // detached copy for those rows.
    Tensor keep = (indices.reshape(Shape{-1, 1}) != padding_idx);
    rows = where(keep, rows, rows.detach());
  }
  Shape shape = indices.shape();
  shape.push_back(weight.size(1));
  return rows.reshape(shape);
}

Tensor flatten(const Tensor& input, int64_t start_dim, int64_t end_dim) {
  return wick::flatten(input, start_dim, end_dim);
}

Reduction reduction_from_string(const std::string& name) {
  if (name == "none") return Reduction::None;
  if (name == "mean") return Reduction::Mean;
  if (name == "sum") return Reduction::Sum;
  throw_value_error("loss", "reduction must be 'none', 'mean' or 'sum'; got '", name, "'");
}

}  // namespace wick::nn::functional
