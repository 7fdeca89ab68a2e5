// Attention layers: scaled dot-product attention with dropout, multi-head attention as
// PyTorch's F.multi_head_attention_forward computes it, and the nn.MultiheadAttention module.
#pragma once

#include <memory>
#include <optional>
#include <utility>

#include "core/ops/attention.h"
#include "nn/layers/linear.h"
#include "nn/module.h"

namespace wick::nn::functional {

// PyTorch 2.0's F.scaled_dot_product_attention (plus 2.1's `scale`). Without dropout it is the
// blocked kernel (wick::scaled_dot_product_attention). Dropout acts on the probabilities, which
// the blocked kernel never holds, so dropout_p > 0 takes the explicit formula; like PyTorch, the
// functional form applies dropout_p whatever the module's training mode.
Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const Tensor& attn_mask = Tensor(), double dropout_p = 0.0,
                                    bool is_causal = false,
                                    std::optional<double> scale = std::nullopt);

// The weights of a multi-head attention, in PyTorch's argument order and meaning. Masks follow
// nn.MultiheadAttention's convention, not sdpa's: a bool attn_mask or key_padding_mask is true
// where attention is NOT allowed; a float one is added.
struct MultiheadAttentionWeights {
  Tensor in_proj_weight, in_proj_bias;                 // [3E, E] and [3E], packed q, k, v
  Tensor q_proj_weight, k_proj_weight, v_proj_weight;  // instead, when kdim / vdim differ
  Tensor bias_k, bias_v;                               // [1, 1, E] (add_bias_kv)
  Tensor out_proj_weight, out_proj_bias;               // [E, E] and [E]
  bool add_zero_attn = false;
};

// query [L, N, E] (or [L, E] unbatched), key [S, N, kdim], value [S, N, vdim]. Returns the output
// [L, N, E] and, with need_weights, the probabilities [N, L, S] averaged over heads (or
// [N, H, L, S]); need_weights=false takes the blocked kernel and returns undefined weights.
std::pair<Tensor, Tensor> multi_head_attention_forward(
    const Tensor& query, const Tensor& key, const Tensor& value, int64_t num_heads,
    const MultiheadAttentionWeights& weights, double dropout_p, bool training,
    const Tensor& key_padding_mask = Tensor(), bool need_weights = true,
    const Tensor& attn_mask = Tensor(), bool average_attn_weights = true);

}  // namespace wick::nn::functional

namespace wick::nn {

// PyTorch's nn.MultiheadAttention: the same parameter names (in_proj_weight, in_proj_bias,
// out_proj.weight, out_proj.bias; q/k/v_proj_weight when kdim or vdim differ from embed_dim;
// bias_k, bias_v with add_bias_kv) and initialisation (xavier_uniform_ projections, zero biases).
// kdim / vdim of 0 mean embed_dim.
class MultiheadAttention : public Module {
 public:
  MultiheadAttention(int64_t embed_dim, int64_t num_heads, double dropout = 0.0, bool bias = true,
                     bool add_bias_kv = false, bool add_zero_attn = false, int64_t kdim = 0,
                     int64_t vdim = 0, bool batch_first = false);
  // Returns (output, attention weights or undefined).
  std::pair<Tensor, Tensor> forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const Tensor& key_padding_mask = Tensor(),
                                    bool need_weights = true, const Tensor& attn_mask = Tensor(),
                                    bool average_attn_weights = true);
  // Self-attention, output only.
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;

  Tensor in_proj_weight, in_proj_bias, q_proj_weight, k_proj_weight, v_proj_weight;
  Tensor bias_k, bias_v;
  std::shared_ptr<Linear> out_proj;

  int64_t embed_dim() const { return embed_dim_; }
  int64_t num_heads() const { return num_heads_; }
  bool batch_first() const { return batch_first_; }

 private:
  int64_t embed_dim_, num_heads_, kdim_, vdim_;
  double dropout_;
  bool add_zero_attn_, batch_first_;
};

}  // namespace wick::nn
