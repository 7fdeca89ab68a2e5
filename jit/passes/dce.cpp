#include "jit/passes/passes.h"

namespace wick::jit {

// Note [dead code]
// Liveness runs backwards from the graph's outputs. A node is live when one of its results is, or
// when it writes a leaf's storage (that write is visible after the graph returns), or when it
// draws random numbers (it advances the generator, which later draws see). A live node
// makes everything it reads live, including the earlier version of a storage it updates, so a
// chain of in-place writes stays whole as long as its last version is used.
int eliminate_dead_code(Graph& g) {
  std::vector<bool> live(g.values.size(), false);
  for (int o : g.outputs) live[static_cast<size_t>(o)] = true;
  std::vector<bool> dead(g.nodes.size(), false);
  int removed = 0;
  for (size_t i = g.nodes.size(); i-- > 0;) {
    const Node& n = g.nodes[i];
    bool needed = n.kind == NodeKind::Kernel && is_random_op(n.op);  // advances the generator
    for (int o : n.outputs) needed = needed || live[static_cast<size_t>(o)];
    for (size_t k = 0; n.kind == NodeKind::Kernel && k < n.params.size(); ++k) {
      if (n.roles[k] == Role::Update && n.params[k] >= 0) {
        needed = needed || g.value(g.value(n.params[k]).base).is_leaf();
      }
    }
    if (!needed) {
      dead[i] = true;
      ++removed;
      continue;
    }
    for (size_t k = 0; k < n.params.size(); ++k) {
      bool write = n.kind != NodeKind::View && n.roles[k] == Role::Write;
      if (n.params[k] >= 0 && !write) live[static_cast<size_t>(n.params[k])] = true;
    }
  }
  g.remove_nodes(dead);
  return removed;
}

}  // namespace wick::jit
