#include <unordered_map>

#include "core/allocator.h"
#include "core/grad_mode.h"
#include "core/tensor_impl.h"
#include "jit/passes/passes.h"

namespace wick::jit {

// Note [constant folding]
// A node whose every input is a constant computes the same result on every run, so it runs once
// here and its results become constants: the fill of a scalar operand, a transposed weight, and
// after freezing everything computed from parameters alone (batch norm's folded scale). Storages
// that some node updates in place are never folded: their contents change during a run.

namespace {
Tensor on_storage(const std::shared_ptr<Storage>& storage, const Value& v, int64_t offset) {
  return Tensor(std::make_shared<TensorImpl>(storage, offset, v.shape, v.strides, v.dtype));
}
void make_constant(Value& v, const Tensor& t) {
  v.kind = ValueKind::Constant;
  v.constant = t;
  v.base = v.id;
  v.producer = -1;
}
}  // namespace

int freeze_parameters(Graph& g, const NamedTensors& params) {
  std::unordered_map<std::string, Tensor> by_name(params.begin(), params.end());
  std::vector<bool> updated = g.updated_storages();
  std::vector<int> kept;
  int frozen = 0;
  for (int p : g.params) {
    Value& v = g.value(p);
    auto it = by_name.find(v.name);
    if (updated[static_cast<size_t>(p)] || it == by_name.end()) {
      kept.push_back(p);
      continue;
    }
    make_constant(v, it->second);
    ++frozen;
  }
  g.params = kept;
  return frozen;
}

int fold_constants(Graph& g) {
  std::vector<bool> updated = g.updated_storages();
  auto is_const = [&](int id) {
    return id < 0 || (g.value(id).kind == ValueKind::Constant &&
                      !updated[static_cast<size_t>(g.value(id).base)]);
  };
  NoGradGuard no_grad;
  std::vector<bool> dead(g.nodes.size(), false);
  int folded = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node& n = g.nodes[i];
    if (n.kind == NodeKind::View) {
      if (!is_const(n.params[0])) continue;
      const Tensor& src = g.value(n.params[0]).constant;
      Value& out = g.value(n.outputs[0]);
      make_constant(out, on_storage(src.storage(), out, src.offset() + n.view_offset));
      dead[i] = true, ++folded;
      continue;
    }
    // Fused nodes come from a later pass; random draws must advance the generator on each run.
    bool foldable = n.kind == NodeKind::Kernel && !is_random_op(n.op);
    for (size_t k = 0; k < n.params.size(); ++k) {
      if (n.roles[k] == Role::Update) foldable = false;
      if (n.roles[k] == Role::Read && !is_const(n.params[k])) foldable = false;
      if (n.roles[k] == Role::Write && n.params[k] >= 0 &&
          updated[static_cast<size_t>(n.params[k])]) {
        foldable = false;
      }
    }
    if (!foldable) continue;
    std::vector<Tensor> tensors(n.params.size());
    std::vector<Tensor*> args;
    for (size_t k = 0; k < n.params.size(); ++k) {
      int p = n.params[k];
      if (p >= 0 && n.roles[k] == Role::Write) {
        const Value& v = g.value(p);
        auto storage = std::make_shared<Storage>(static_cast<size_t>(v.nbytes()),
                                                 get_allocator(v.device.type));
        tensors[k] = on_storage(storage, v, v.offset);
      } else if (p >= 0) {
        tensors[k] = g.value(p).constant;
      }
      args.push_back(&tensors[k]);
    }
    n.thunk->dispatch(n.op, n.device, n.args.get(), args.data());
    for (size_t k = 0; k < n.params.size(); ++k) {
      if (n.roles[k] == Role::Write && n.params[k] >= 0)
        make_constant(g.value(n.params[k]), tensors[k]);
    }
    dead[i] = true, ++folded;
  }
  g.remove_nodes(dead);
  return folded;
}

}  // namespace wick::jit
