#include "nn/layers/embedding.h"

#include <sstream>
#include <stdexcept>
#include <vector>

#include "core/ops/op_utils.h"
#include "nn/init.h"

namespace wick::nn {

namespace functional {

namespace {

std::vector<int64_t> to_vector(const Tensor& t) {
  Tensor c = t.to(kInt64).cpu().contiguous();
  const int64_t* p = static_cast<const int64_t*>(c.data_ptr());
  return std::vector<int64_t>(p, p + c.numel());
}

}  // namespace

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

Tensor embedding_bag(const Tensor& input, const Tensor& weight, const Tensor& offsets,
                     const std::string& mode, const Tensor& per_sample_weights,
                     bool include_last_offset, int64_t padding_idx) {
  const char* op = "embedding_bag";
  wick::detail::check_defined(op, input);
  wick::detail::check_defined(op, weight);
  check_value(weight.dim() == 2, op, "weight has to be a 2D Tensor, but got Tensor of dimension ",
              weight.dim());
  check_type(!input.is_floating_point() && input.dtype() != kBool, op,
             "input must be an integer tensor; got ", input.dtype());
  check_value(mode == "sum" || mode == "mean" || mode == "max", op,
              "mode has to be one of sum, mean or max; got '", mode, "'");
  check_value(input.dim() == 1 || input.dim() == 2, op,
              "input has to be 1D or 2D Tensor, but got Tensor of dimension ", input.dim());
  if (per_sample_weights.defined()) {
    check_state(mode == "sum", op,
                "per_sample_weights was not None. per_sample_weights is only supported for "
                "mode='sum' (got mode='",
                mode, "'). Please open a feature request on GitHub.");
    check_value(per_sample_weights.shape() == input.shape(), op,
                "embedding_bag: If per_sample_weights (", per_sample_weights.shape(),
                ") is not None, then it must have the same shape as the input (", input.shape(),
                ")");
  }
  std::vector<int64_t> idx = to_vector(input);
  const int64_t total = int64_t(idx.size());
  std::vector<int64_t> starts;
  int64_t bags = 0;
  if (input.dim() == 2) {
    check_value(!offsets.defined(), op,
                "if input is 2D, then offsets has to be None, as input is treated is a "
                "mini-batch of fixed length sequences");
    bags = input.size(0);
    for (int64_t b = 0; b <= bags; ++b) starts.push_back(b * input.size(1));
  } else {
    check_value(offsets.defined() && offsets.dim() == 1, op,
                "offsets has to be a 1D Tensor when input is 1D; got ",
                offsets.defined() ? to_string(offsets.shape()) : std::string("None"));
    starts = to_vector(offsets);
    check_state(!starts.empty() && starts[0] == 0, op,
                "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start "
                "from position 0. However, got ",
                starts.empty() ? int64_t(-1) : starts[0]);
    if (!include_last_offset) starts.push_back(total);
    bags = int64_t(starts.size()) - 1;
    for (size_t b = 1; b < starts.size(); ++b) {
      check_state(starts[b] >= starts[b - 1] && starts[b] <= total, op,
                  "offsets must be non-decreasing and at most the input's length ", total,
                  "; got offsets[", b, "] = ", starts[b]);
    }
  }
  // The kept positions (all but padding_idx's), with the bag each one belongs to.
  std::vector<int64_t> rows, bag_of, positions, count(bags, 0);
  for (int64_t b = 0; b < bags; ++b) {
    for (int64_t i = starts[b]; i < starts[b + 1]; ++i) {
      check_index(idx[i] >= 0 && idx[i] < weight.size(0), op,
                  "index out of range in self: ", idx[i], " for ", weight.size(0), " embeddings");
      if (idx[i] == padding_idx) continue;
      rows.push_back(idx[i]), bag_of.push_back(b), positions.push_back(i), ++count[b];
    }
  }
  const int64_t dim = weight.size(1), kept = int64_t(rows.size());
  auto long_tensor = [&](const std::vector<int64_t>& v) {
    return tensor(v, Shape{int64_t(v.size())}, TensorOptions(kInt64).with_device(weight.device()));
  };
  Tensor picked = weight.index_select(0, long_tensor(rows));  // [kept, dim]
  if (per_sample_weights.defined()) {
    Tensor psw = per_sample_weights.reshape(Shape{-1}).index_select(0, long_tensor(positions));
    picked = picked * psw.unsqueeze(1);
  }
  if (mode == "max") {
    // Bag by bag: the bags are consecutive runs of the kept rows.
    std::vector<Tensor> out;
    int64_t at = 0;
    for (int64_t b = 0; b < bags; ++b) {
      out.push_back(count[b] == 0 ? zeros(Shape{dim}, options_of(weight))
                                  : amax(picked.narrow(0, at, count[b]), {0}));
      at += count[b];
    }
    return bags == 0 ? zeros(Shape{0, dim}, options_of(weight)) : stack(out, 0);
  }
  Tensor index = long_tensor(bag_of).unsqueeze(1).expand(Shape{kept, dim}).contiguous();
  Tensor sums = scatter_add(zeros(Shape{bags, dim}, options_of(weight)), 0, index, picked);
  if (mode == "sum") return sums;
  std::vector<double> divisor(count.begin(), count.end());
  for (double& d : divisor) d = d > 0 ? d : 1.0;  // empty bags stay zero
  return sums /
         tensor(divisor, Shape{bags, 1}, TensorOptions(kFloat64).with_device(weight.device()))
             .to(weight.dtype());
}

}  // namespace functional

namespace {

// weight [num_embeddings, embedding_dim] from N(0, 1) with the padding row (if >= 0) zeroed,
// as PyTorch's Embedding and EmbeddingBag initialise it.
Tensor embedding_weight(Module& module, int64_t num_embeddings, int64_t embedding_dim,
                        int64_t padding_idx) {
  Tensor weight = module.register_parameter("weight", empty({num_embeddings, embedding_dim}));
  init::normal_(weight);
  if (padding_idx >= 0) {
    Tensor row = weight.select(0, padding_idx);
    init::zeros_(row);
  }
  return weight;
}

}  // namespace

Embedding::Embedding(int64_t num_embeddings, int64_t embedding_dim,
                     std::optional<int64_t> padding_idx)
    : Module("Embedding"), num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {
  check_value(num_embeddings > 0 && embedding_dim > 0, "Embedding", "sizes must be positive; got ",
              num_embeddings, " and ", embedding_dim);
  int64_t pad = padding_idx.value_or(-1);
  check_index(!padding_idx || (pad >= -num_embeddings && pad < num_embeddings), "Embedding",
              "padding_idx ", pad, " is out of range for ", num_embeddings, " embeddings");
  padding_idx_ = !padding_idx ? -1 : pad < 0 ? pad + num_embeddings : pad;
  weight = embedding_weight(*this, num_embeddings, embedding_dim, padding_idx_);
}

Tensor Embedding::forward(const Tensor& indices) {
  return functional::embedding(indices, weight, padding_idx_);
}

std::string Embedding::extra_repr() const {
  std::ostringstream os;
  os << num_embeddings_ << ", " << embedding_dim_;
  if (padding_idx_ >= 0) os << ", padding_idx=" << padding_idx_;
  return os.str();
}

EmbeddingBag::EmbeddingBag(int64_t num_embeddings, int64_t embedding_dim, std::string mode,
                           bool include_last_offset, std::optional<int64_t> padding_idx)
    : Module("EmbeddingBag"),
      num_embeddings_(num_embeddings),
      embedding_dim_(embedding_dim),
      mode_(std::move(mode)),
      include_last_offset_(include_last_offset) {
  check_value(num_embeddings > 0 && embedding_dim > 0, "EmbeddingBag",
              "sizes must be positive; got num_embeddings=", num_embeddings,
              ", embedding_dim=", embedding_dim);
  int64_t pad = padding_idx.value_or(-1);
  check_value(!padding_idx || (pad >= -num_embeddings && pad < num_embeddings), "EmbeddingBag",
              "padding_idx ", pad, " must be within num_embeddings (", num_embeddings, ")");
  padding_idx_ = !padding_idx ? -1 : pad < 0 ? pad + num_embeddings : pad;
  check_value(mode_ == "sum" || mode_ == "mean" || mode_ == "max", "EmbeddingBag",
              "mode has to be one of sum, mean or max; got '", mode_, "'");
  weight = embedding_weight(*this, num_embeddings, embedding_dim, padding_idx_);
}

Tensor EmbeddingBag::forward(const Tensor& input, const Tensor& offsets,
                             const Tensor& per_sample_weights) {
  return functional::embedding_bag(input, weight, offsets, mode_, per_sample_weights,
                                   include_last_offset_, padding_idx_);
}

Tensor EmbeddingBag::forward(const Tensor& input) { return forward(input, Tensor()); }

std::string EmbeddingBag::extra_repr() const {
  std::ostringstream os;
  os << num_embeddings_ << ", " << embedding_dim_ << ", mode=" << mode_;
  if (padding_idx_ >= 0) os << ", padding_idx=" << padding_idx_;
  return os.str();
}

}  // namespace wick::nn
