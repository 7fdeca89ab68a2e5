#include "autograd/engine.h"

#include <queue>
#include <unordered_map>

#include "autograd/accumulate_grad.h"
#include "core/grad_mode.h"
#include "core/memory/history.h"
#include "core/ops.h"

namespace wick::autograd {

namespace {

// Note [engine order]
// A node may run only when every gradient flowing into it has arrived. The engine first counts,
// for each node reachable from the outputs, how many edges point at it (its dependencies), then
// runs nodes whose count reached zero, adding each result into the buffer of the node it flows
// to and decrementing that node's count. Among ready nodes it picks the one created last: this
// walks the forward pass backwards, and - because AccumulateGrad nodes have the highest
// priority - it finishes each parameter's gradient as early as possible, which is what lets DDP
// overlap communication with the rest of backward.
struct NodeState {
  int dependencies = 0;
  Tensor buffer;  // sum of the gradients that arrived so far
};

struct ReadyNode {
  uint64_t priority;
  Node* node;
  bool operator<(const ReadyNode& o) const { return priority < o.priority; }
};

using Graph = std::unordered_map<Node*, NodeState>;

Graph count_dependencies(const std::vector<Node*>& roots) {
  Graph graph;
  std::vector<Node*> stack;
  for (Node* root : roots) {
    if (graph.emplace(root, NodeState{}).second) stack.push_back(root);
  }
  while (!stack.empty()) {
    Node* node = stack.back();
    stack.pop_back();
    for (const auto& next : node->next) {
      if (!next) continue;
      auto [it, inserted] = graph.emplace(next.get(), NodeState{});
      it->second.dependencies++;
      if (inserted) stack.push_back(next.get());
    }
  }
  return graph;
}

void accumulate(Tensor& buffer, const Tensor& grad) {
  buffer = buffer.defined() ? wick::add(buffer, grad) : grad;
}

// A node's result for input i must match that input's shape and device, as recorded when the
// graph was built - and, for a leaf, its shape now: `leaf.data = other_shape` after the forward
// would otherwise get a gradient of the old shape (and an optimizer step would write out of
// bounds). The message is PyTorch's. The dtype is converted, as PyTorch does.
Tensor validate(const Node& node, size_t i, const Tensor& grad, Node* next) {
  const InputMeta& meta = node.input_meta[i];
  Shape expected = meta.shape;
  DType dtype = meta.dtype;
  if (auto* leaf = dynamic_cast<AccumulateGrad*>(next)) {
    expected = leaf->leaf().shape();
    dtype = leaf->leaf().dtype();
  }
  check_state(grad.shape() == expected && grad.shape() == meta.shape, "backward", "Function ",
              node.name(), " returned an invalid gradient at index ", i, " - got ", grad.shape(),
              " but expected shape compatible with ", expected);
  check_state(grad.device() == meta.device, "backward", "Function ", node.name(),
              " returned an invalid gradient at index ", i, " - expected device ", meta.device,
              " but got ", grad.device());
  return grad.dtype() == dtype ? grad : grad.to(dtype);
}

Tensor default_gradient(const Tensor& output, const Tensor& given, size_t index) {
  if (given.defined()) {
    check_value(given.shape() == output.shape(), "backward", "gradient ", index, " has shape ",
                given.shape(), " but the output has shape ", output.shape());
    return given.dtype() == output.dtype() ? given : given.to(output.dtype());
  }
  check_state(output.numel() == 1, "backward",
              "grad can be implicitly created only for outputs with one element; output ", index,
              " has shape ", output.shape(), ", so pass a gradient of that shape");
  return wick::ones_like(output);
}

// Runs the graph. With `capture` non-empty, gradients arriving at the captured nodes are
// returned instead of being propagated into .grad (autograd::grad).
std::vector<Tensor> run(const TensorList& outputs, const TensorList& grad_outputs,
                        bool retain_graph, bool create_graph, const std::vector<Node*>& capture) {
  // The gradient's graph reuses this graph's nodes and saved tensors, so they must stay.
  retain_graph = retain_graph || create_graph;
  check_value(grad_outputs.empty() || grad_outputs.size() == outputs.size(), "backward", "got ",
              outputs.size(), " outputs but ", grad_outputs.size(), " gradients");
  std::vector<Node*> roots;
  std::vector<std::shared_ptr<Node>> keep_alive;
  std::vector<Tensor> seeds;
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::shared_ptr<Node> root = gradient_edge(outputs[i]);
    check_state(root != nullptr, "backward", "element ", i,
                " of the outputs does not require grad and has no grad_fn");
    roots.push_back(root.get());
    keep_alive.push_back(std::move(root));
    NoGradGuard no_grad;
    seeds.push_back(
        default_gradient(outputs[i], grad_outputs.empty() ? Tensor() : grad_outputs[i], i));
  }

  Graph graph = count_dependencies(roots);
  for (size_t i = 0; i < roots.size(); ++i) accumulate(graph[roots[i]].buffer, seeds[i]);
  std::priority_queue<ReadyNode> ready;
  for (Node* root : roots) {
    NodeState& state = graph[root];
    if (state.dependencies == 0) {
      state.dependencies = -1;  // queued once even if it appears twice among the outputs
      ready.push({root->sequence_nr, root});
    }
  }

  std::vector<Tensor> captured(capture.size());
  // Note [higher-order gradients]
  // Backward formulas are written with wick's differentiable ops, so running them with grad mode
  // on records the graph of the gradient itself: that is all create_graph does. Three things make
  // the recorded graph complete. A node's saved output gets its producer back as grad_fn when
  // unpacked (SavedTensor::unpack). Formulas that call a fused backward kernel (tanh_backward,
  // conv2d_backward, ...) switch to an equivalent made of differentiable ops, or to a node of
  // their own, while grad mode is on. AccumulateGrad adds out of place, keeping .grad's graph.
  GradModeGuard grad_mode(create_graph);
  while (!ready.empty()) {
    Node* node = ready.top().node;
    ready.pop();
    Tensor grad = std::move(graph[node].buffer);
    TensorList input_grads;
    if (grad.defined()) {
      for (const TensorHook& hook : node->pre_hooks) {
        Tensor replaced = hook(grad);
        if (replaced.defined()) grad = replaced;
      }
      for (size_t c = 0; c < capture.size(); ++c) {
        if (capture[c] == node) captured[c] = grad;
      }
      // autograd::grad never writes .grad.
      bool skip = !capture.empty() && dynamic_cast<AccumulateGrad*>(node) != nullptr;
      if (!skip) {
        memory::OwnerScope owner(node->name(), /*replace=*/true);  // its memory is the node's
        input_grads = node->apply(grad);
        if (!retain_graph) node->release_saved();
      }
    }
    for (size_t i = 0; i < node->next.size(); ++i) {
      Node* next = node->next[i].get();
      if (next == nullptr) continue;
      NodeState& state = graph[next];
      if (i < input_grads.size() && input_grads[i].defined()) {
        accumulate(state.buffer, validate(*node, i, input_grads[i], next));
      }
      if (--state.dependencies == 0) ready.push({next->sequence_nr, next});
    }
  }
  return captured;
}

}  // namespace

void backward(const TensorList& outputs, const TensorList& grad_outputs, bool retain_graph,
              bool create_graph) {
  run(outputs, grad_outputs, retain_graph, create_graph, {});
}

TensorList grad(const TensorList& outputs, const TensorList& inputs, const TensorList& grad_outputs,
                bool retain_graph, bool allow_unused, bool create_graph) {
  std::vector<Node*> capture;
  std::vector<std::shared_ptr<Node>> keep_alive;
  for (size_t i = 0; i < inputs.size(); ++i) {
    check_value(inputs[i].requires_grad(), "grad", "input ", i, " does not require grad");
    keep_alive.push_back(gradient_edge(inputs[i]));
    capture.push_back(keep_alive.back().get());
  }
  TensorList result = run(outputs, grad_outputs, retain_graph, create_graph, capture);
  for (size_t i = 0; i < result.size(); ++i) {
    check_value(allow_unused || result[i].defined(), "grad", "input ", i,
                " was not used to compute the outputs; pass allow_unused=true if that is "
                "expected");
  }
  return result;
}

}  // namespace wick::autograd
