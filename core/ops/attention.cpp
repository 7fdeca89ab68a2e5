#include "core/ops/attention.h"

#include <cmath>
#include <limits>

#include "autograd/functions/attention.h"
#include "core/autocast.h"
#include "core/dispatch.h"
#include "core/ops.h"
#include "core/ops/op_utils.h"

namespace wick {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

double default_scale(const Tensor& query, std::optional<double> scale) {
  return scale ? *scale : 1.0 / std::sqrt(static_cast<double>(query.size(-1)));
}

Shape leading(const Tensor& t) { return Shape(t.shape().data(), t.dim() - 2); }

// The additive mask as a [B, L, S] view for the kernel. Leading dims that broadcast (stride 0) or
// that flatten into one stride cost nothing; otherwise (a [N, 1, L, S] mask for N x H heads, say)
// the broadcast mask is copied, which is the size of the mask the caller asked for per head.
Tensor mask_for_kernel(const Tensor& mask, const Shape& batch, int64_t B, int64_t L, int64_t S) {
  Shape full = batch;
  full.push_back(L);
  full.push_back(S);
  Tensor m = mask.expand(full);
  int64_t n = static_cast<int64_t>(batch.size()), stride = 0;
  bool flat = true;
  int64_t expect = -1;  // the stride the next outer non-trivial dim must have
  for (int64_t d = n - 1; d >= 0; --d) {
    if (m.size(d) == 1) continue;
    if (expect < 0) {
      stride = m.stride(d);
    } else if (m.stride(d) != expect) {
      flat = false;
      break;
    }
    expect = m.stride(d) * m.size(d);
  }
  if (!flat) return m.contiguous().view(Shape{B, L, S});
  return m.as_strided(Shape{B, L, S}, Strides{stride, m.stride(n), m.stride(n + 1)}, m.offset());
}

Tensor causal_hidden(int64_t L, int64_t S, Device device) {
  TensorOptions opts = TensorOptions(kInt64).with_device(device);
  return gt(arange(S, opts).unsqueeze(0), arange(L, opts).unsqueeze(1));  // key j > query i
}

}  // namespace

void check_attention_inputs(const char* op, const Tensor& query, const Tensor& key,
                            const Tensor& value, const Tensor& attn_mask, bool is_causal) {
  detail::check_defined(op, query);
  detail::check_defined(op, key);
  detail::check_defined(op, value);
  check_state(query.dim() >= 2 && key.dim() == query.dim() && value.dim() == query.dim(), op,
              "expected query, key and value of the same rank, at least 2 ([..., L, E]); got "
              "shapes ",
              query.shape(), ", ", key.shape(), " and ", value.shape());
  check_state(leading(key) == leading(query) && leading(value) == leading(query), op,
              "query, key and value must have the same batch dims; got shapes ", query.shape(),
              ", ", key.shape(), " and ", value.shape());
  check_state(key.size(-1) == query.size(-1), op, "query's embedding size ", query.size(-1),
              " differs from key's ", key.size(-1), " (shapes ", query.shape(), " and ",
              key.shape(), ")");
  check_state(value.size(-2) == key.size(-2), op, "key has ", key.size(-2), " positions but value ",
              value.size(-2), " (shapes ", key.shape(), " and ", value.shape(), ")");
  check_state(query.is_floating_point(), op, "expected floating-point inputs; got ", query.dtype());
  check_state(key.dtype() == query.dtype() && value.dtype() == query.dtype(), op,
              "expected query, key and value to have the same dtype; got ", query.dtype(), ", ",
              key.dtype(), " and ", value.dtype());
  detail::check_same_device(op, query, key);
  detail::check_same_device(op, query, value);
  if (!attn_mask.defined()) return;
  check_state(!is_causal, op, "an explicit attn_mask should not be set when is_causal=True");
  check_state(attn_mask.dtype() == kBool || attn_mask.is_floating_point(), op,
              "attn_mask must be bool or floating-point; got ", attn_mask.dtype());
  Shape scores = leading(query);
  scores.push_back(query.size(-2));
  scores.push_back(key.size(-2));
  bool ok = attn_mask.dim() <= static_cast<int64_t>(scores.size());
  for (int64_t d = 1; ok && d <= attn_mask.dim(); ++d) {
    int64_t m = attn_mask.size(-d), s = scores[scores.size() - d];
    ok = m == s || m == 1;
  }
  check_state(ok, op, "attn_mask of shape ", attn_mask.shape(),
              " does not broadcast to the attention scores' shape ", scores);
  detail::check_same_device(op, query, attn_mask);
}

Tensor additive_attention_mask(const Tensor& attn_mask, DType dtype) {
  if (!attn_mask.defined()) return Tensor();
  if (attn_mask.dtype() == kBool) {
    TensorOptions opts = TensorOptions(dtype).with_device(attn_mask.device());
    return full(attn_mask.shape(), Scalar(-kInf), opts).masked_fill(attn_mask, Scalar(0.0));
  }
  return attn_mask.to(dtype);
}

AttentionResult scaled_dot_product_attention_math(const Tensor& query, const Tensor& key,
                                                  const Tensor& value, const Tensor& attn_mask,
                                                  bool is_causal, std::optional<double> scale) {
  const char* op = "scaled_dot_product_attention";
  check_attention_inputs(op, query, key, value, attn_mask, is_causal);
  Tensor scores = matmul(query, key.transpose(-2, -1)) * default_scale(query, scale);
  if (is_causal) {
    scores = scores.masked_fill(causal_hidden(query.size(-2), key.size(-2), query.device()),
                                Scalar(-kInf));
  }
  if (attn_mask.defined()) scores = scores + additive_attention_mask(attn_mask, scores.dtype());
  Tensor weights = softmax(scores, -1);
  return {matmul(weights, value), weights};
}

Tensor scaled_dot_product_attention(const Tensor& query_in, const Tensor& key_in,
                                    const Tensor& value_in, const Tensor& attn_mask, bool is_causal,
                                    std::optional<double> scale) {
  const char* op = "scaled_dot_product_attention";
  Tensor query = autocast::cast(AutocastPolicy::LowerPrecision, query_in);
  Tensor key = autocast::cast(AutocastPolicy::LowerPrecision, key_in);
  Tensor value = autocast::cast(AutocastPolicy::LowerPrecision, value_in);
  check_attention_inputs(op, query, key, value, attn_mask, is_causal);
  // A float mask that requires grad gets its gradient from the explicit formula: the kernel
  // treats the mask as a constant.
  if (attn_mask.defined() && attn_mask.is_floating_point() && needs_grad(attn_mask)) {
    return scaled_dot_product_attention_math(query, key, value, attn_mask, is_causal, scale).output;
  }
  const Shape batch = leading(query);
  const int64_t L = query.size(-2), S = key.size(-2), E = query.size(-1), Ev = value.size(-1);
  const int64_t B = numel(batch);
  Tensor q = query.reshape(Shape{B, L, E}).contiguous();
  Tensor k = key.reshape(Shape{B, S, E}).contiguous();
  Tensor v = value.reshape(Shape{B, S, Ev}).contiguous();
  Tensor mask;
  if (attn_mask.defined()) {
    mask = mask_for_kernel(additive_attention_mask(attn_mask.detach(), q.dtype()), batch, B, L, S);
  }
  AttentionParams params;
  params.scale = default_scale(query, scale);
  params.is_causal = is_causal;
  // The log-sum-exp is kept in the compute precision: float for the 16-bit types.
  DType lse_dtype = q.dtype() == kFloat64 ? kFloat64 : kFloat32;
  Tensor out = empty(Shape{B, L, Ev}, options_of(q));
  Tensor lse = empty(Shape{B, L}, options_of(q).with_dtype(lse_dtype));
  if (out.numel() > 0) {
    if (S == 0) {
      out.fill_(Scalar(std::numeric_limits<double>::quiet_NaN()));  // softmax over no keys
    } else {
      dispatch<AttentionKernel>(OpKey::scaled_dot_product_attention, q.device(), q.detach(),
                                k.detach(), v.detach(), mask, out, lse, params);
    }
  }
  if (needs_grad(q, k, v)) {
    auto node = make_node<ScaledDotProductAttentionBackward>({&q, &k, &v});
    node->query = SavedTensor(q);
    node->key = SavedTensor(k);
    node->value = SavedTensor(v);
    node->output = SavedTensor(out, /*is_output=*/true);
    node->logsumexp = SavedTensor(lse);
    node->mask = mask;
    node->params = params;
    set_history(out, node);
  }
  Shape out_shape = batch;
  out_shape.push_back(L);
  out_shape.push_back(Ev);
  return out_shape == out.shape() ? out : out.view(out_shape);
}

}  // namespace wick
