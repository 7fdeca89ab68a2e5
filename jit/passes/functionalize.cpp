#include "jit/fused_cpu.h"
#include "jit/passes/passes.h"

namespace wick::jit {

// Note [functionalization]
// In-place writes keep buffers out of the other passes (a storage updated in place is never
// folded, merged or fused), and models write in place a lot: ReLU(inplace=True) in Python is
// relu() and a copy_ back into its input, `out += identity` is an in-place add. When such a write
// replaces the whole of an intermediate buffer, its old contents are never read again (every read
// after an update names the new version), so it can become an ordinary value, as torch.compile's
// functionalization does:
//   - a copy of a value s over a whole buffer, where s has no other use: the new version is s
//     itself and the copy goes;
//   - an in-place elementwise op over a whole buffer: an out-of-place write of a fresh value.
namespace {

bool whole_contiguous(const Value& v) {
  int64_t numel = 1, expected = 1;
  for (int64_t d = v.shape.size() - 1; d >= 0; --d) {
    if (v.shape[d] != 1 && v.strides[d] != expected) return false;
    expected *= v.shape[d];
    numel *= v.shape[d];
  }
  return v.offset == 0 && numel == v.storage_numel;
}

}  // namespace

int functionalize(Graph& g) {
  const std::vector<int> uses = g.use_counts();
  std::vector<bool> updated = g.updated_storages();
  std::vector<bool> dead(g.nodes.size(), false);
  int changed = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node& n = g.nodes[i];
    if (n.kind != NodeKind::Kernel || n.roles.empty() || n.roles.back() != Role::Update) continue;
    int old = n.params.back();
    if (old < 0) continue;  // an optional buffer not given (SGD without momentum)
    const Value& ov = g.value(old);
    if (g.value(ov.base).is_leaf() || !whole_contiguous(ov)) continue;
    int version = n.outputs.back();
    if (n.op == OpKey::copy) {
      int src = n.params[0];
      const Value& sv = g.value(src);
      bool same = sv.shape == ov.shape && sv.strides == ov.strides && sv.dtype == ov.dtype &&
                  sv.device == ov.device && whole_contiguous(sv);
      if (!same || sv.is_leaf() || sv.base != src || uses[static_cast<size_t>(src)] != 1 ||
          updated[static_cast<size_t>(src)]) {
        continue;
      }
      g.replace_uses(version, src);
      dead[i] = true;
      ++changed;
    } else if (fusible_op(n.op)) {
      Value& nv = g.value(version);
      nv.version_of = -1;
      nv.base = version;
      n.roles.back() = Role::Write;
      n.params.back() = version;
      ++changed;
    }
  }
  g.remove_nodes(dead);
  return changed;
}

}  // namespace wick::jit
