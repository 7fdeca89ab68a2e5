// Embeddings: lookup tables of vectors picked by integer indices (embedding), summed, averaged
// or maximized over bags of indices (embedding_bag), and one_hot, as functions and as modules.
// Compositions of indexing and reductions, so autograd differentiates them and they run on
// every device.
#pragma once

#include <optional>
#include <string>

#include "core/ops.h"
#include "nn/module.h"

namespace wick::nn::functional {

using wick::one_hot;

// Rows of weight [num_embeddings, dim] picked by integer indices: output indices.shape + [dim].
// The row padding_idx (if >= 0) receives no gradient.
Tensor embedding(const Tensor& indices, const Tensor& weight, int64_t padding_idx = -1);

// Sums, means or maxima of bags of rows of weight [num_embeddings, dim]. input is 2-D [B, n]
// (B bags of n indices, offsets undefined) or 1-D with offsets [B] (bag b starts at offsets[b];
// with include_last_offset offsets has B + 1 entries, the last the end). per_sample_weights
// (input's shape, mode "sum" only) scales each row. Rows of padding_idx (if >= 0) are left out
// of the bags, and empty bags are zeros. Returns [B, dim].
Tensor embedding_bag(const Tensor& input, const Tensor& weight, const Tensor& offsets = Tensor(),
                     const std::string& mode = "mean", const Tensor& per_sample_weights = Tensor(),
                     bool include_last_offset = false, int64_t padding_idx = -1);

}  // namespace wick::nn::functional

namespace wick::nn {

// A lookup table of num_embeddings vectors; weight initialised from N(0, 1) like PyTorch, with
// the padding row (if any) zeroed. padding_idx may be negative (counted from the end, as in
// PyTorch); no padding_idx means no padding row.
class Embedding : public Module {
 public:
  Embedding(int64_t num_embeddings, int64_t embedding_dim,
            std::optional<int64_t> padding_idx = std::nullopt);
  Tensor forward(const Tensor& indices) override;
  std::string extra_repr() const override;
  Tensor weight;

 private:
  int64_t num_embeddings_, embedding_dim_;
  int64_t padding_idx_;  // -1: none
};

// weight as Embedding's; padding_idx as Embedding's: none by default, a negative one counts from
// the end (so -1 is the last row, as in PyTorch, not "none").
class EmbeddingBag : public Module {
 public:
  EmbeddingBag(int64_t num_embeddings, int64_t embedding_dim, std::string mode = "mean",
               bool include_last_offset = false, std::optional<int64_t> padding_idx = std::nullopt);
  Tensor forward(const Tensor& input, const Tensor& offsets,
                 const Tensor& per_sample_weights = Tensor());
  Tensor forward(const Tensor& input) override;  // 2-D input: fixed-length bags
  std::string extra_repr() const override;
  Tensor weight;

 private:
  int64_t num_embeddings_, embedding_dim_, padding_idx_;  // -1: none
  std::string mode_;
  bool include_last_offset_;
};

}  // namespace wick::nn
