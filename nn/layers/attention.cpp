#include "nn/layers/attention.h"

#include <cmath>
#include <limits>
#include <sstream>

#include "core/ops.h"
#include "nn/init.h"
#include "nn/layers/dropout.h"

namespace wick::nn::functional {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// One more key position at the end of a mask's last dim, visible (false / 0): what add_bias_kv and
// add_zero_attn append to the keys.
Tensor pad_last(const Tensor& mask) {
  if (!mask.defined()) return mask;
  Shape shape = mask.shape();
  shape[shape.size() - 1] = 1;
  return cat({mask, zeros(shape, TensorOptions(mask.dtype()).with_device(mask.device()))}, -1);
}

// [T, N, E] -> [N * heads, T, E / heads]: the heads become batch entries.
Tensor split_heads(const Tensor& x, int64_t batch, int64_t heads) {
  int64_t t = x.size(0), head_dim = x.size(2) / heads;
  return x.contiguous().view(Shape{t, batch * heads, head_dim}).transpose(0, 1);
}

}  // namespace

Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const Tensor& attn_mask, double dropout_p, bool is_causal,
                                    std::optional<double> scale) {
  check_value(dropout_p >= 0.0 && dropout_p <= 1.0, "scaled_dot_product_attention",
              "dropout_p must be in [0, 1]; got ", dropout_p);
  if (dropout_p == 0.0) {
    return wick::scaled_dot_product_attention(query, key, value, attn_mask, is_causal, scale);
  }
  AttentionResult r =
      scaled_dot_product_attention_math(query, key, value, attn_mask, is_causal, scale);
  return matmul(dropout(r.weights, dropout_p, /*training=*/true), value);
}

std::pair<Tensor, Tensor> multi_head_attention_forward(
    const Tensor& query_in, const Tensor& key_in, const Tensor& value_in, int64_t num_heads,
    const MultiheadAttentionWeights& w, double dropout_p, bool training,
    const Tensor& key_padding_mask_in, bool need_weights, const Tensor& attn_mask_in,
    bool average_attn_weights) {
  const char* op = "multi_head_attention_forward";
  for (const Tensor* t : {&query_in, &key_in, &value_in}) {
    check_value(t->defined(), op, "query, key and value must be defined");
  }
  const bool batched = query_in.dim() == 3;
  check_value((query_in.dim() == 3 || query_in.dim() == 2) && key_in.dim() == query_in.dim() &&
                  value_in.dim() == query_in.dim(),
              op,
              "expected query, key and value all 3-D [L, N, E] (or all 2-D, unbatched); got "
              "shapes ",
              query_in.shape(), ", ", key_in.shape(), " and ", value_in.shape());
  Tensor query = batched ? query_in : query_in.unsqueeze(1);
  Tensor key = batched ? key_in : key_in.unsqueeze(1);
  Tensor value = batched ? value_in : value_in.unsqueeze(1);
  Tensor kpm = key_padding_mask_in;
  if (kpm.defined() && !batched) kpm = kpm.unsqueeze(0);
  const int64_t L = query.size(0), N = query.size(1), E = query.size(2);
  const int64_t E_expected = w.out_proj_weight.size(0);
  check_value(E == E_expected, op, "was expecting embedding dimension of ", E_expected,
              ", but got ", E, " (query of shape ", query_in.shape(), ")");
  check_value(num_heads > 0 && E % num_heads == 0, op, "embed_dim ", E,
              " not divisible by num_heads ", num_heads);
  const int64_t H = num_heads;
  const bool separate = !w.in_proj_weight.defined();
  check_value(key.size(0) == value.size(0) && key.size(1) == value.size(1) &&
                  (separate || key.shape() == value.shape()),
              op, "key of shape ", key_in.shape(), " does not match value of shape ",
              value_in.shape());
  check_value(key.size(1) == N, op, "key's batch size ", key.size(1), " differs from query's ", N);

  Tensor q, k, v;
  auto bias_part = [&](int64_t i) {
    return w.in_proj_bias.defined() ? w.in_proj_bias.narrow(0, i * E, E) : Tensor();
  };
  if (separate) {
    check_value(key.size(2) == w.k_proj_weight.size(1) && value.size(2) == w.v_proj_weight.size(1),
                op, "key's and value's feature sizes (", key.size(2), ", ", value.size(2),
                ") differ from kdim and vdim (", w.k_proj_weight.size(1), ", ",
                w.v_proj_weight.size(1), ")");
    q = linear(query, w.q_proj_weight, bias_part(0));
    k = linear(key, w.k_proj_weight, bias_part(1));
    v = linear(value, w.v_proj_weight, bias_part(2));
  } else {
    check_value(key.size(2) == E, op, "key's and value's feature size ", key.size(2),
                " differs from embed_dim ", E, " (pass kdim / vdim to the module for other sizes)");
    q = linear(query, w.in_proj_weight.narrow(0, 0, E), bias_part(0));
    k = linear(key, w.in_proj_weight.narrow(0, E, E), bias_part(1));
    v = linear(value, w.in_proj_weight.narrow(0, 2 * E, E), bias_part(2));
  }

  Tensor mask = attn_mask_in;
  int64_t S = key.size(0);
  if (mask.defined()) {
    check_type(mask.dtype() == kBool || mask.is_floating_point(), op,
               "only float and bool attn_mask are supported; got ", mask.dtype());
    if (mask.dim() == 2) {
      check_state(mask.size(0) == L && mask.size(1) == S, op, "the shape of the 2D attn_mask is ",
                  mask.shape(), ", but should be (", L, ", ", S, ")");
      mask = mask.unsqueeze(0);
    } else {
      check_state(mask.dim() == 3, op, "attn_mask's dimension ", mask.dim(), " is not supported");
      check_state(mask.size(0) == N * H && mask.size(1) == L && mask.size(2) == S, op,
                  "the shape of the 3D attn_mask is ", mask.shape(), ", but should be (", N * H,
                  ", ", L, ", ", S, ")");
    }
  }
  if (kpm.defined()) {
    check_type(kpm.dtype() == kBool || kpm.is_floating_point(), op,
               "only bool and floating types of key_padding_mask are supported; got ", kpm.dtype());
    check_value(kpm.dim() == 2 && kpm.size(0) == N && kpm.size(1) == S, op,
                "expecting key_padding_mask shape of (", N, ", ", S, "), but got ", kpm.shape());
  }
  if (w.bias_k.defined()) {
    k = cat({k, w.bias_k.expand(Shape{1, N, E})}, 0);
    v = cat({v, w.bias_v.expand(Shape{1, N, E})}, 0);
    mask = pad_last(mask);
    kpm = pad_last(kpm);
  }
  q = split_heads(q, N, H);
  k = split_heads(k, N, H);
  v = split_heads(v, N, H);
  if (w.add_zero_attn) {
    Tensor zero = zeros(Shape{N * H, 1, E / H}, options_of(k));
    k = cat({k, zero}, 1);
    v = cat({v, zero}, 1);
    mask = pad_last(mask);
    kpm = pad_last(kpm);
  }
  S = k.size(1);
  // One additive mask [N * H, 1 or L, S]: true entries of a bool mask hide their key.
  auto additive = [&](const Tensor& m) {
    if (!m.defined() || m.dtype() != kBool) return m.defined() ? m.to(q.dtype()) : m;
    return zeros(m.shape(), options_of(q)).masked_fill(m, Scalar(-kInf));
  };
  mask = additive(mask);
  if (kpm.defined()) {
    Tensor per_head =
        additive(kpm).view(Shape{N, 1, 1, S}).expand(Shape{N, H, 1, S}).reshape(Shape{N * H, 1, S});
    mask = mask.defined() ? mask + per_head : per_head;
  }
  if (!training) dropout_p = 0.0;

  Tensor out, weights;
  if (need_weights || dropout_p > 0.0) {
    // The probabilities are wanted (or dropped out), so they are materialised.
    AttentionResult r = scaled_dot_product_attention_math(q, k, v, mask);
    weights = dropout_p > 0.0 ? dropout(r.weights, dropout_p, true) : r.weights;
    out = dropout_p > 0.0 ? matmul(weights, v) : r.output;
  } else {
    out = wick::scaled_dot_product_attention(q, k, v, mask);
  }
  out = out.transpose(0, 1).contiguous().view(Shape{L * N, E});
  out = linear(out, w.out_proj_weight, w.out_proj_bias).view(Shape{L, N, E});
  if (!need_weights) return {batched ? out : out.squeeze(1), Tensor()};
  weights = weights.view(Shape{N, H, L, S});
  if (average_attn_weights) weights = weights.sum({1}) / static_cast<double>(H);
  if (!batched) out = out.squeeze(1), weights = weights.squeeze(0);
  return {out, weights};
}

}  // namespace wick::nn::functional

namespace wick::nn {

MultiheadAttention::MultiheadAttention(int64_t embed_dim, int64_t num_heads, double dropout,
                                       bool bias, bool add_bias_kv, bool add_zero_attn,
                                       int64_t kdim, int64_t vdim, bool batch_first)
    : Module("MultiheadAttention"),
      embed_dim_(embed_dim),
      num_heads_(num_heads),
      kdim_(kdim > 0 ? kdim : embed_dim),
      vdim_(vdim > 0 ? vdim : embed_dim),
      dropout_(dropout),
      add_zero_attn_(add_zero_attn),
      batch_first_(batch_first) {
  const char* op = "MultiheadAttention";
  check_value(embed_dim > 0 && num_heads > 0, op, "embed_dim and num_heads must be positive; got ",
              embed_dim, " and ", num_heads);
  check_value(embed_dim % num_heads == 0, op, "embed_dim must be divisible by num_heads; got ",
              embed_dim, " and ", num_heads);
  check_value(dropout >= 0.0 && dropout <= 1.0, op, "dropout must be in [0, 1]; got ", dropout);
  // PyTorch builds out_proj before it initialises the input projections, so with one seed its
  // random draws come in this order; following it gives the same weights as torch and wick.nn.
  auto projection = std::make_shared<Linear>(embed_dim, embed_dim, bias);
  if (kdim_ == embed_dim && vdim_ == embed_dim) {
    in_proj_weight = register_parameter("in_proj_weight", empty({3 * embed_dim, embed_dim}));
    init::xavier_uniform_(in_proj_weight);
  } else {
    q_proj_weight = register_parameter("q_proj_weight", empty({embed_dim, embed_dim}));
    k_proj_weight = register_parameter("k_proj_weight", empty({embed_dim, kdim_}));
    v_proj_weight = register_parameter("v_proj_weight", empty({embed_dim, vdim_}));
    init::xavier_uniform_(q_proj_weight);
    init::xavier_uniform_(k_proj_weight);
    init::xavier_uniform_(v_proj_weight);
  }
  if (bias) in_proj_bias = register_parameter("in_proj_bias", zeros({3 * embed_dim}));
  out_proj = register_module("out_proj", projection);
  if (bias) init::zeros_(out_proj->bias);
  if (add_bias_kv) {
    bias_k = register_parameter("bias_k", empty({1, 1, embed_dim}));
    bias_v = register_parameter("bias_v", empty({1, 1, embed_dim}));
    init::xavier_normal_(bias_k);
    init::xavier_normal_(bias_v);
  }
}

std::pair<Tensor, Tensor> MultiheadAttention::forward(const Tensor& query, const Tensor& key,
                                                      const Tensor& value,
                                                      const Tensor& key_padding_mask,
                                                      bool need_weights, const Tensor& attn_mask,
                                                      bool average_attn_weights) {
  functional::MultiheadAttentionWeights w;
  w.in_proj_weight = in_proj_weight, w.in_proj_bias = in_proj_bias;
  w.q_proj_weight = q_proj_weight, w.k_proj_weight = k_proj_weight;
  w.v_proj_weight = v_proj_weight;
  w.bias_k = bias_k, w.bias_v = bias_v;
  w.out_proj_weight = out_proj->weight, w.out_proj_bias = out_proj->bias;
  w.add_zero_attn = add_zero_attn_;
  const bool swap = batch_first_ && query.dim() == 3;
  auto seq_first = [&](const Tensor& t) { return swap ? t.transpose(0, 1) : t; };
  auto result = functional::multi_head_attention_forward(
      seq_first(query), seq_first(key), seq_first(value), num_heads_, w, dropout_, is_training(),
      key_padding_mask, need_weights, attn_mask, average_attn_weights);
  if (swap) result.first = result.first.transpose(0, 1);
  return result;
}

Tensor MultiheadAttention::forward(const Tensor& input) {
  return forward(input, input, input, Tensor(), /*need_weights=*/false).first;
}

std::string MultiheadAttention::extra_repr() const {
  std::ostringstream os;
  os << "embed_dim=" << embed_dim_ << ", num_heads=" << num_heads_;
  if (dropout_ != 0.0) os << ", dropout=" << dropout_;
  if (batch_first_) os << ", batch_first=True";
  return os.str();
}

}  // namespace wick::nn
