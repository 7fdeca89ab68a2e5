#include "autograd/node.h"

#include <mutex>

#include "autograd/accumulate_grad.h"
#include "autograd/meta.h"
#include "core/grad_mode.h"
#include "core/ops.h"

namespace wick {

namespace {
std::atomic<uint64_t> g_next_sequence_nr{0};

// The worklist of the release loop running on this thread, or null when none runs.
thread_local std::vector<std::shared_ptr<Node>>* t_release_list = nullptr;

// Guards the lazy creation of AutogradMeta: two threads recording ops on one leaf (each running
// its own forward and backward into a shared parameter) must not both create it.
std::mutex g_meta_mutex;
}  // namespace

Node::Node() : sequence_nr(g_next_sequence_nr.fetch_add(1, std::memory_order_relaxed)) {}

Node::~Node() {
  for (std::shared_ptr<Node>& edge : next) {
    if (edge) release_node(std::move(edge));
  }
}

void release_node(std::shared_ptr<Node> node) {
  if (!node) return;
  if (t_release_list != nullptr) {  // a loop below is running: let it free this one
    t_release_list->push_back(std::move(node));
    return;
  }
  std::vector<std::shared_ptr<Node>> list;
  list.push_back(std::move(node));
  t_release_list = &list;
  while (!list.empty()) {
    std::shared_ptr<Node> current = std::move(list.back());
    list.pop_back();
    current.reset();  // if this was the last owner, ~Node appends its edges to `list`
  }
  t_release_list = nullptr;
}

AutogradMeta::~AutogradMeta() { release_node(std::move(grad_fn)); }

AutogradMeta& autograd_meta(const Tensor& t) {
  std::lock_guard<std::mutex> lock(g_meta_mutex);
  if (!t.impl()->autograd) t.impl()->autograd = std::make_unique<AutogradMeta>();
  return *t.impl()->autograd;
}

AutogradMeta* autograd_meta_if_exists(const Tensor& t) { return t.impl()->autograd.get(); }

SavedTensor::SavedTensor(const Tensor& t, bool is_output) : is_output_(is_output), defined_(true) {
  if (!t.defined()) return;  // an optional input that was not given; unpacks as undefined
  data_ = is_output ? t.detach() : t;
  version_ = t.version();
}

Tensor SavedTensor::unpack(const Node& owner) const {
  check_state(!released_, "backward",
              "trying to backward through the graph a second time (the tensors saved by ",
              owner.name(),
              " have already been freed); call backward with retain_graph=true the first time if "
              "you need to backward twice");
  if (!data_.defined()) return data_;
  check_state(data_.version() == version_, "backward", "a tensor saved by ", owner.name(),
              " was modified by an in-place operation after it was saved (its version is ",
              data_.version(), "; it was ", version_,
              " when saved), so its gradient would be wrong; avoid the in-place op or clone() "
              "the tensor first");
  if (is_output_ && GradMode::is_enabled()) {
    // The reference to the owner lives only as long as the gradient's graph: no cycle.
    Tensor with_history = data_.detach();
    set_history(with_history, std::const_pointer_cast<Node>(owner.shared_from_this()));
    return with_history;
  }
  return data_;
}

void SavedTensor::reset() {
  data_ = Tensor();
  released_ = true;
}

bool any_requires_grad(std::initializer_list<const Tensor*> inputs) {
  if (!GradMode::is_enabled()) return false;
  for (const Tensor* t : inputs) {
    if (t->defined() && t->requires_grad()) return true;
  }
  return false;
}

std::shared_ptr<Node> gradient_edge(const Tensor& t) {
  if (!t.requires_grad()) return nullptr;
  AutogradMeta& meta = autograd_meta(t);
  if (meta.grad_fn) return meta.grad_fn;
  // Threads recording ops on one shared leaf must all find the same accumulator.
  std::lock_guard<std::mutex> lock(meta.accumulator_mutex);
  std::shared_ptr<Node> accumulator = meta.grad_accumulator.lock();
  if (!accumulator) {
    // The node holds the leaf through a handle that shares its TensorImpl, so hooks and .grad
    // registered on the user's tensor are the ones backward uses.
    accumulator = std::make_shared<AccumulateGrad>(t);
    meta.grad_accumulator = accumulator;
  }
  return accumulator;
}

void set_history(const Tensor& output, std::shared_ptr<Node> node) {
  output.impl()->requires_grad = true;
  autograd_meta(output).grad_fn = std::move(node);
}

Tensor sum_to(const Tensor& grad, const Shape& shape) {
  if (grad.shape() == shape) return grad;
  // Dimensions that broadcasting prepended are summed away; dimensions that were 1 and got
  // expanded are summed with keepdim.
  int64_t leading = grad.dim() - shape.size();
  DimList dims;
  for (int64_t i = 0; i < grad.dim(); ++i) {
    if (i < leading || (shape[i - leading] == 1 && grad.size(i) != 1)) dims.push_back(i);
  }
  Tensor summed = dims.empty() ? grad : wick::sum(grad, dims, /*keepdim=*/true);
  return summed.reshape(shape);
}

}  // namespace wick
