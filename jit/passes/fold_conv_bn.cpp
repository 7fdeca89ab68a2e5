#include "core/error.h"
#include "core/grad_mode.h"
#include "core/ops.h"
#include "jit/passes/passes.h"

namespace wick::jit {

// Note [conv + batch norm folding]
// In evaluation batch norm is an affine map per channel, y = (x - mean) * s + beta with
// s = gamma / sqrt(var + eps), and a convolution is linear in its weight, so
//     bn(conv(x, W, b)) = conv(x, W * s[o], (b - mean) * s + beta)
// The batch-norm node and one full pass over the activations disappear; the new weight and bias
// are computed once, in float64 and rounded to the weight's dtype. The result is not bit-for-bit
// the unfolded one (the rounding happens at another place), but within a few float32 ulps of the
// output's scale. It needs the statistics as constants: frozen parameters, evaluation mode.
namespace {
int uses(const Graph& g, int id) {
  int n = 0;
  for (const Node& node : g.nodes) {
    for (size_t k = 0; k < node.params.size(); ++k) {
      bool write = node.kind != NodeKind::View && node.roles[k] == Role::Write;
      n += node.params[k] == id && !write;
    }
  }
  for (int o : g.outputs) n += o == id;
  return n;
}
bool constant_or_none(const Graph& g, int id) {
  return id < 0 || g.value(id).kind == ValueKind::Constant;
}
double attr(const Node& n, const char* name) {
  for (const DispatchAttr& a : n.attrs) {
    if (a.name == name) return a.kind == DispatchAttr::Kind::Float ? a.f : static_cast<double>(a.i);
  }
  check_state(false, "jit.fold_conv_batchnorm", n.name(), " has no attribute ", name);
  return 0;
}
int add_constant(Graph& g, const Tensor& t) {
  Value v;
  v.kind = ValueKind::Constant;
  v.constant = t;
  v.shape = t.shape();
  v.strides = t.strides();
  v.offset = t.offset();
  v.dtype = t.dtype();
  v.device = t.device();
  v.storage_numel = static_cast<int64_t>(t.storage()->nbytes() / element_size(t.dtype()));
  return g.add_value(std::move(v));
}
}  // namespace

int fold_conv_batchnorm(Graph& g) {
  NoGradGuard no_grad;
  std::vector<bool> dead(g.nodes.size(), false);
  int folded = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node& bn = g.nodes[i];
    if (bn.kind != NodeKind::Kernel || bn.op != OpKey::batch_norm || attr(bn, "training") != 0 ||
        attr(bn, "relu") != 0 || bn.params[5] >= 0) {
      continue;
    }
    // batch_norm's tensors: input, weight, bias, running_mean, running_var, residual, out,
    // save_mean, save_invstd (BatchNormKernel in core/kernels.h).
    int x = bn.params[0];
    const Value& xv = g.value(x);
    if (xv.producer < 0) continue;
    Node& conv = g.nodes[static_cast<size_t>(xv.producer)];
    if (conv.kind != NodeKind::Kernel || conv.op != OpKey::conv2d || conv.params[3] != x) continue;
    if (uses(g, x) != 1 || !constant_or_none(g, conv.params[1]) || conv.params[1] < 0 ||
        !constant_or_none(g, conv.params[2])) {
      continue;
    }
    bool stats_constant = true;
    for (int k = 1; k <= 4; ++k)
      stats_constant = stats_constant && constant_or_none(g, bn.params[static_cast<size_t>(k)]);
    if (!stats_constant || bn.params[3] < 0 || bn.params[4] < 0) continue;
    if (uses(g, bn.params[7]) > 0 || uses(g, bn.params[8]) > 0) continue;
    const Value& y = g.value(bn.params[6]);
    if (y.shape != xv.shape || y.strides != xv.strides || y.dtype != xv.dtype) continue;

    // Computed on the host in float64 (any device's tensors), then put where the weight lives.
    const Tensor& w = g.value(conv.params[1]).constant;
    Device host(kCPU);
    auto f64 = [&](int id, double fill) {
      int64_t channels = w.size(0);
      return id < 0 ? full({channels}, fill, kFloat64) : g.value(id).constant.to(host).to(kFloat64);
    };
    Tensor scale = f64(bn.params[1], 1.0) * (f64(bn.params[4], 0.0) + attr(bn, "eps")).rsqrt();
    Tensor new_w =
        (w.to(host).to(kFloat64) * scale.reshape({w.size(0), 1, 1, 1})).to(w.device(), w.dtype());
    Tensor new_b =
        ((f64(conv.params[2], 0.0) - f64(bn.params[3], 0.0)) * scale + f64(bn.params[2], 0.0))
            .to(w.device(), w.dtype());
    conv.params[1] = add_constant(g, new_w.contiguous());
    conv.params[2] = add_constant(g, new_b.contiguous());
    g.replace_uses(bn.params[6], x);
    dead[i] = true;
    ++folded;
  }
  g.remove_nodes(dead);
  return folded;
}

}  // namespace wick::jit
