#include "autograd/functions/attention.h"

#include <limits>

#include "core/dispatch.h"
#include "core/grad_mode.h"
#include "core/ops.h"

namespace wick {

TensorList ScaledDotProductAttentionBackward::apply(const Tensor& grad) {
  Tensor q = query.unpack(*this), k = key.unpack(*this), v = value.unpack(*this);
  if (GradMode::is_enabled()) {
    // create_graph: the gradient as differentiable ops on the recomputed probabilities P,
    //   dV = P^T g,  dS = P * (g v^T - rowsum(P * g v^T)),  dQ = scale dS k,  dK = scale dS^T q.
    Tensor scores = matmul(q, k.transpose(1, 2)) * params.scale;
    if (params.is_causal) {
      TensorOptions opts = TensorOptions(kInt64).with_device(q.device());
      Tensor hidden =
          gt(arange(k.size(1), opts).unsqueeze(0), arange(q.size(1), opts).unsqueeze(1));
      scores = scores.masked_fill(hidden, Scalar(-std::numeric_limits<double>::infinity()));
    }
    if (mask.defined()) scores = scores + mask;
    Tensor p = softmax(scores, -1);
    Tensor dp = matmul(grad, v.transpose(1, 2));
    Tensor ds = p * (dp - (dp * p).sum({-1}, /*keepdim=*/true));
    return {next[0] ? matmul(ds, k) * params.scale : Tensor(),
            next[1] ? matmul(ds.transpose(1, 2), q) * params.scale : Tensor(),
            next[2] ? matmul(p.transpose(1, 2), grad) : Tensor()};
  }
  Tensor o = output.unpack(*this), lse = logsumexp.unpack(*this);
  Tensor g = grad.contiguous();
  Tensor grad_q = empty(q.shape(), options_of(q));
  Tensor grad_k = empty(k.shape(), options_of(k));
  Tensor grad_v = empty(v.shape(), options_of(v));
  if (k.size(1) == 0) {  // no keys: the output was NaN everywhere, and so is its gradient
    grad_q.fill_(Scalar(std::numeric_limits<double>::quiet_NaN()));
    return {grad_q, grad_k, grad_v};
  }
  if (grad_q.numel() + grad_k.numel() + grad_v.numel() > 0) {
    dispatch<AttentionBackwardKernel>(OpKey::scaled_dot_product_attention_backward, g.device(), g,
                                      q, k, v, mask, o, lse, grad_q, grad_k, grad_v, params);
  }
  return {next[0] ? grad_q : Tensor(), next[1] ? grad_k : Tensor(), next[2] ? grad_v : Tensor()};
}

}  // namespace wick
