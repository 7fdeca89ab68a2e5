#include <algorithm>

#include "core/op_table.h"
#include "jit/passes/passes.h"

namespace wick::jit {

// Note [conv epilogue fusion]
// After conv + batch-norm folding and elementwise fusion a ResNet block is conv -> relu ->
// conv -> fused[add, relu]. Each elementwise node reads the convolution's whole output back
// from memory and writes it again: at batch 64 the first stage's activations are 4 MiB, more than
// the caches hold, so those passes run at memory speed. This pass gives the elementwise work to
// the convolution as an epilogue: the direct convolution hands each block of 8 output channels
// of an image (32 KiB at 32x32) to the fused loop right after writing it, while it is still in
// cache, and the loop rewrites it in place. oneDNN's post-ops (conv + eltwise, conv + sum),
// cuDNN's fused conv-bias-activation and TensorRT's layer fusion do the same.
//
// A convolution takes an epilogue when its output is used exactly once, by an elementwise node
// (fused or single) of the output's shape that reads it in full. The fused node takes the place
// of that use, not of the convolution: the epilogue's other inputs (a residual branch's
// shortcut) may be computed after the convolution, and the convolution's own inputs are still
// there then because no node updates their storage in place. The epilogue runs the same
// functors in the same order as the separate kernels, so the result is bit-for-bit the same;
// algorithms that finish the output only as a whole (Winograd, im2col + GEMM) run it afterwards.
namespace {

constexpr size_t kConvOutput = 3;  // conv2d's tensor params: input, weight, bias, out

bool convolution_with_free_output(const Graph& g, const Node& n) {
  if (n.kind != NodeKind::Kernel || n.op != OpKey::conv2d || n.device.type != kCPU ||
      !n.steps.empty() || n.params.size() != kConvOutput + 1 ||
      n.roles[kConvOutput] != Role::Write) {
    return false;
  }
  const Value& out = g.value(n.params[kConvOutput]);
  return out.dtype == kFloat32 && out.offset == 0 && is_contiguous(out.shape, out.strides) &&
         out.storage_numel == numel(out.shape);
}

bool binary(OpKey op) { return std::string(op_info(op).family) == "binary"; }

// Whether a node in (from, to) updates the storage `value` lives on in place.
bool updated_between(const Graph& g, size_t from, size_t to, int value) {
  if (value < 0) return false;
  const int base = g.value(value).base;
  for (size_t k = from + 1; k < to; ++k) {
    const Node& n = g.nodes[k];
    for (size_t p = 0; n.kind == NodeKind::Kernel && p < n.params.size(); ++p) {
      if (n.roles[p] == Role::Update && n.params[p] >= 0 && g.value(n.params[p]).base == base)
        return true;
    }
  }
  return false;
}

}  // namespace

int fuse_conv_epilogue(Graph& g) {
  const std::vector<int> uses = g.use_counts();
  std::vector<int> user(g.values.size(), -1);  // by value id: the last node reading it
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    for (size_t k = 0; k < n.params.size(); ++k) {
      if (n.params[k] >= 0 && (n.kind == NodeKind::View || n.roles[k] != Role::Write))
        user[static_cast<size_t>(n.params[k])] = static_cast<int>(i);
    }
  }
  // The consumers run where they stand, so what they read may be updated before them.
  const std::vector<bool> no_updates(g.values.size(), false);
  std::vector<bool> dead(g.nodes.size(), false);
  int fused = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (dead[i] || !convolution_with_free_output(g, g.nodes[i])) continue;
    Node conv = g.nodes[i];
    const int out = conv.params[kConvOutput];
    const Shape& shape = g.value(out).shape;
    conv.epilogue_at = kConvOutput + 1;
    int current = out;    // the value the epilogue computes so far
    int current_ref = 0;  // its operand: the convolution's output, later the last step's result
    size_t at = i;        // where the convolution and its epilogue will run
    std::vector<size_t> absorbed;
    auto operand = [&](int value) {
      if (value == current) return current_ref;
      auto found = std::find(conv.params.begin() + kConvOutput + 1, conv.params.end(), value);
      if (found == conv.params.end()) {
        conv.params.push_back(value);
        conv.roles.push_back(Role::Read);
        found = conv.params.end() - 1;
      }
      return static_cast<int>(found - conv.params.begin() - kConvOutput);
    };
    // Each consumer in turn joins while it is the only use of what the epilogue computes so far.
    while (uses[static_cast<size_t>(current)] == 1) {
      const size_t j = static_cast<size_t>(user[static_cast<size_t>(current)]);
      const Node& next = g.nodes[j];
      const bool chain = next.kind == NodeKind::Fused && next.device.type == kCPU;
      if (dead[j] ||
          (!chain && !(next.kind == NodeKind::Kernel && fusible_node(g, next, no_updates)))) {
        break;
      }
      if (g.value(next.params.back()).shape != shape) break;  // the output is broadcast
      // Everything read so far moves from where it was read to j: nothing may change it between.
      bool moved_safely = true;
      for (size_t k = 0; k < conv.params.size(); ++k) {
        if (k == kConvOutput) continue;
        size_t read_at = k < kConvOutput ? i : at;
        moved_safely = moved_safely && !updated_between(g, read_at, j, conv.params[k]);
      }
      if (!moved_safely) break;
      const int shift = static_cast<int>(conv.steps.size());
      if (chain) {
        for (FusedStep s : next.steps) {
          s.a = s.a >= 0 ? operand(next.params[static_cast<size_t>(s.a)]) : s.a - shift;
          if (binary(s.op))
            s.b = s.b >= 0 ? operand(next.params[static_cast<size_t>(s.b)]) : s.b - shift;
          conv.steps.push_back(s);
        }
      } else {
        FusedStep s;
        s.op = next.op;
        s.attrs = fused_step_attrs(next);
        s.a = operand(next.params[0]);
        if (binary(next.op)) s.b = operand(next.params[1]);
        conv.steps.push_back(s);
      }
      current = next.params.back();
      current_ref = -static_cast<int>(conv.steps.size());  // -1 - (the last step)
      absorbed.push_back(j);
      at = j;
    }
    if (absorbed.empty()) continue;
    conv.params[kConvOutput] = current;
    conv.outputs = {current};
    dead[i] = true;
    for (size_t j : absorbed) dead[j] = true;
    dead[at] = false;
    g.nodes[at] = std::move(conv);
    ++fused;
  }
  g.remove_nodes(dead);
  return fused;
}

}  // namespace wick::jit
