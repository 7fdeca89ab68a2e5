// The autograd graph.
//
// Every differentiable op that runs while grad mode is on and one of its inputs requires grad
// records a Node: the backward of that op, holding only what the backward needs (saved tensors,
// shapes, scalars) and one edge per input pointing at the node that produced that input. Leaves
// that require grad end the graph in an AccumulateGrad node that adds into their .grad.
//
// Note [single-output nodes]
// Every wick op that autograd records has one differentiable output (max(dim) returns indices too,
// but they have no gradient; split() is a list of narrow() calls), so a node receives exactly one
// incoming gradient and an edge is just a pointer to a node. PyTorch's nodes carry an output
// number to support several outputs; wick does not need one.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/tensor.h"

namespace wick {

using TensorList = std::vector<Tensor>;

// What the engine checks a gradient against before passing it to the producer of an input.
struct InputMeta {
  Shape shape;
  DType dtype;
  Device device;
};

class Node : public std::enable_shared_from_this<Node> {
 public:
  Node();
  // Releases `next` without recursion (Note [iterative teardown]).
  virtual ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  virtual const char* name() const = 0;
  // Given d(loss)/d(output), returns d(loss)/d(input) for each input, in the order of `next`.
  // An undefined tensor means "no gradient flows to that input".
  virtual TensorList apply(const Tensor& grad_output) = 0;
  // Drops saved tensors once backward has used them (unless retain_graph).
  virtual void release_saved() {}

  // next[i] produced input i (null when input i does not require grad); input_meta[i] describes it.
  std::vector<std::shared_ptr<Node>> next;
  std::vector<InputMeta> input_meta;
  // Creation order. The engine runs ready nodes latest-first, which is reverse execution order;
  // see Note [engine order] in engine.cpp.
  uint64_t sequence_nr;
  // Hooks registered on the output tensor (see Tensor::register_hook); run on the incoming grad.
  std::vector<TensorHook> pre_hooks;
};

// Note [iterative teardown]
// A graph is a chain of shared pointers: each node owns the nodes that produced its inputs, and a
// tensor owns its grad_fn. Freeing a graph one million ops deep by plain destructors recurses
// once per node and overflows the stack. So ~Node and ~AutogradMeta never drop a node reference
// themselves: they hand it to release_node(), which on each thread keeps one worklist and frees
// the nodes one at a time from a loop (a node freed while the loop runs adds its own edges to the
// list instead of recursing). PyTorch's deleteNode does the same.
void release_node(std::shared_ptr<Node> node);

// A tensor saved for backward, with the version it had when saved (Note [version counter]).
class SavedTensor {
 public:
  SavedTensor() = default;
  // An op's own output is saved without its history: the output's grad_fn is the node that saves
  // it, and keeping the history would make a reference cycle that never frees the graph.
  explicit SavedTensor(const Tensor& t, bool is_output = false);
  // The saved tensor, or an error if backward already freed it or an in-place op changed it. A
  // saved output unpacked while grad mode is on (a create_graph backward) comes back with
  // `owner` as its grad_fn, so the gradient's graph reaches through it.
  Tensor unpack(const Node& owner) const;
  void reset();
  bool defined() const { return defined_; }

 private:
  Tensor data_;
  uint64_t version_ = 0;
  bool is_output_ = false;
  bool defined_ = false;
  bool released_ = false;
};

// True when an op on these tensors must record a node: grad mode is on and some input requires it.
bool any_requires_grad(std::initializer_list<const Tensor*> inputs);
template <class... Ts>
bool needs_grad(const Ts&... inputs) {
  return any_requires_grad({&inputs...});
}

// The node a gradient for `t` must be sent to: its grad_fn, its AccumulateGrad (made on demand) if
// it is a leaf that requires grad, else null.
std::shared_ptr<Node> gradient_edge(const Tensor& t);

// Creates a node of type N whose edges point at the producers of `inputs` (a list of
// `const Tensor*`; an undefined tensor gets a null edge).
template <class N, class Inputs>
std::shared_ptr<N> make_node_for(const Inputs& inputs) {
  auto node = std::make_shared<N>();
  node->next.reserve(inputs.size());
  node->input_meta.reserve(inputs.size());
  for (const Tensor* t : inputs) {
    node->next.push_back(t->defined() ? gradient_edge(*t) : nullptr);
    node->input_meta.push_back(t->defined() ? InputMeta{t->shape(), t->dtype(), t->device()}
                                            : InputMeta{Shape(), kFloat32, Device()});
  }
  return node;
}

template <class N>
std::shared_ptr<N> make_node(std::initializer_list<const Tensor*> inputs) {
  return make_node_for<N>(inputs);
}

// Makes `node` the grad_fn of `output`, which now requires grad.
void set_history(const Tensor& output, std::shared_ptr<Node> node);

// Returns `grad` summed over the dimensions that broadcasting added or expanded, so that it has
// `shape` again: the one helper that undoes broadcasting in every binary backward.
Tensor sum_to(const Tensor& grad, const Shape& shape);

}  // namespace wick
