#include <algorithm>

#include "jit/fused_cpu.h"
#include "jit/fused_cuda.h"
#include "jit/passes/passes.h"

namespace wick::jit {

// Note [elementwise fusion]
// A node joins the chain of the node producing one of its inputs when that input is used only
// there, is not a graph output, and has the node's shape; the chain then runs as one fused loop
// (Note [fused elementwise loop] in jit/fused_cpu.h) at the place of its last member, and the
// values between its members never reach memory. Only float32 ops that write one fresh,
// contiguous output join, and no input may live on a storage that some node updates in place
// (the chain runs later than its first members did). On a GPU a chain becomes a kernel that
// NVRTC compiles (Note [fused chains compiled at run time] in jit/fused_cuda.h); a build
// without CUDA has no GPU nodes to fuse.
bool fusible_node(const Graph& g, const Node& n, const std::vector<bool>& updated) {
  const bool device = n.device.type == kCPU || (n.device.type == kCUDA && cuda_fusion_available());
  if (n.kind != NodeKind::Kernel || !fusible_op(n.op) || !device) return false;
  for (size_t k = 0; k < n.params.size(); ++k) {
    if (n.params[k] < 0 || n.roles[k] == Role::Update) return false;
    const Value& v = g.value(n.params[k]);
    if (v.dtype != kFloat32 || updated[static_cast<size_t>(v.base)]) return false;
  }
  const Value& out = g.value(n.params.back());
  if (n.roles.back() != Role::Write || out.offset != 0) return false;
  int64_t numel = 1, expected = 1;
  for (int64_t d = out.shape.size() - 1; d >= 0; --d) {
    if (out.shape[d] != 1 && out.strides[d] != expected) return false;
    expected *= out.shape[d];
    numel *= out.shape[d];
  }
  return numel == out.storage_numel;
}

UnaryAttrs fused_step_attrs(const Node& n) {
  UnaryAttrs a;
  for (const DispatchAttr& at : n.attrs) {
    double v = at.f;
    if (at.name == "negative_slope") a.negative_slope = v;
    if (at.name == "min") a.min = v;
    if (at.name == "max") a.max = v;
    if (at.name == "exponent") a.exponent = v;
    if (at.name == "alpha") a.alpha = v;
    if (at.name == "beta") a.beta = v;
    if (at.name == "threshold") a.threshold = v;
  }
  return a;
}

int fuse_elementwise(Graph& g) {
  const std::vector<int> uses = g.use_counts();
  std::vector<bool> updated = g.updated_storages();
  // Chains as lists of node indices; group_of: the chain a value's producer belongs to.
  std::vector<std::vector<size_t>> chains;
  std::vector<int> group_of(g.values.size(), -1);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (!fusible_node(g, n, updated)) continue;
    int out = n.params.back();
    int join = -1;
    for (size_t k = 0; k + 1 < n.params.size(); ++k) {
      int p = n.params[k];
      if (group_of[static_cast<size_t>(p)] >= 0 && uses[static_cast<size_t>(p)] == 1 &&
          g.value(p).shape == g.value(out).shape) {
        join = group_of[static_cast<size_t>(p)];
        break;
      }
    }
    if (join < 0) {
      join = static_cast<int>(chains.size());
      chains.emplace_back();
    }
    chains[static_cast<size_t>(join)].push_back(i);
    group_of[static_cast<size_t>(out)] = join;
  }
  std::vector<Node> rebuilt;
  std::vector<int> chain_end(g.nodes.size(), -1), in_chain(g.nodes.size(), -1);
  for (size_t c = 0; c < chains.size(); ++c) {
    if (chains[c].size() < 2) continue;
    for (size_t i : chains[c]) in_chain[i] = static_cast<int>(c);
    chain_end[chains[c].back()] = static_cast<int>(c);
  }
  int fused = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (in_chain[i] < 0) {
      rebuilt.push_back(std::move(g.nodes[i]));
      continue;
    }
    if (chain_end[i] < 0) continue;
    const std::vector<size_t>& chain = chains[static_cast<size_t>(chain_end[i])];
    Node f;
    f.kind = NodeKind::Fused;
    f.device = g.nodes[i].device;
    std::vector<int> produced;  // by step: the value it computes
    for (size_t s = 0; s < chain.size(); ++s) {
      const Node& m = g.nodes[chain[s]];
      FusedStep step;
      step.op = m.op;
      step.attrs = fused_step_attrs(m);
      int refs[2] = {0, 0};
      for (size_t k = 0; k + 1 < m.params.size() && k < 2; ++k) {
        int p = m.params[k];
        auto inner = std::find(produced.begin(), produced.end(), p);
        if (inner != produced.end()) {
          refs[k] = -1 - static_cast<int>(inner - produced.begin());
          continue;
        }
        auto outer = std::find(f.params.begin(), f.params.end(), p);
        if (outer == f.params.end()) {
          f.params.push_back(p);
          f.roles.push_back(Role::Read);
          outer = f.params.end() - 1;
        }
        refs[k] = static_cast<int>(outer - f.params.begin());
      }
      step.a = refs[0], step.b = refs[1];
      f.steps.push_back(step);
      produced.push_back(m.params.back());
    }
    f.params.push_back(produced.back());
    f.roles.push_back(Role::Write);
    f.outputs = {produced.back()};
    rebuilt.push_back(std::move(f));
    ++fused;
  }
  g.nodes = std::move(rebuilt);
  g.update_producers();
  return fused;
}

}  // namespace wick::jit
