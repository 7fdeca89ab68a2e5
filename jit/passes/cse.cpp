#include <sstream>
#include <unordered_map>

#include "jit/passes/passes.h"

namespace wick::jit {

// Note [common subexpressions]
// Two nodes compute the same thing when they run the same op with the same attributes on the same
// SSA values and produce the same layouts; the second is dropped. Versions make this safe with
// in-place writes: a read after an update names the new version, a different value. Nodes that
// update a storage, and nodes whose results are later updated in place, are never merged: two
// uses that were separate buffers in eager would share one.
namespace {
void layout_key(std::ostringstream& os, const Value& v) {
  os << static_cast<int>(v.dtype) << v.shape << v.strides << v.offset << "/" << v.storage_numel;
}
}  // namespace

int eliminate_common_subexpressions(Graph& g) {
  std::vector<bool> updated = g.updated_storages();
  std::unordered_map<std::string, size_t> seen;
  std::vector<bool> dead(g.nodes.size(), false);
  int merged = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node& n = g.nodes[i];
    // Random draws each advance the generator; fused nodes' steps carry attributes the key omits.
    bool eligible = n.kind == NodeKind::View || (n.kind == NodeKind::Kernel && !is_random_op(n.op));
    std::ostringstream key;
    key << static_cast<int>(n.kind) << " " << n.name() << " (";
    for (size_t k = 0; k < n.params.size(); ++k) {
      Role role = n.kind == NodeKind::View ? Role::Read : n.roles[k];
      if (role == Role::Update) eligible = false;
      if (role == Role::Write) {
        if (n.params[k] >= 0 && updated[static_cast<size_t>(g.value(n.params[k]).base)]) {
          eligible = false;
        }
        key << "w:";
        if (n.params[k] >= 0) layout_key(key, g.value(n.params[k]));
      } else {
        key << "r:" << n.params[k];
      }
      key << ",";
    }
    if (n.kind == NodeKind::View) {
      key << ") " << n.view_shape << n.view_strides << n.view_offset;
    } else {
      key << ")";
      for (const DispatchAttr& a : n.attrs) key << " " << a.name << "=" << a.value_str();
    }
    if (!eligible) continue;
    auto [it, inserted] = seen.emplace(key.str(), i);
    if (inserted) continue;
    const Node& first = g.nodes[it->second];
    for (size_t o = 0; o < n.outputs.size(); ++o) g.replace_uses(n.outputs[o], first.outputs[o]);
    dead[i] = true;
    ++merged;
  }
  g.remove_nodes(dead);
  return merged;
}

}  // namespace wick::jit
