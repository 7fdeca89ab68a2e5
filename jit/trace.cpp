#include "jit/trace.h"

#include <unordered_map>

#include "core/error.h"
#include "core/generator.h"
#include "core/grad_mode.h"
#include "core/host_read.h"
#include "core/op_table.h"
#include "core/tensor_impl.h"
#include "nn/module.h"

namespace wick::jit {

namespace {

// Note [tracing through the dispatcher]
// Every op with a kernel reaches the device through dispatch(), so a DispatchObserver sees the
// whole computation as kernel calls on tensors; what the front functions do around them (checks,
// promotion, broadcasting, views) is already resolved into the layouts of those tensors. A tensor
// argument is identified by its TensorImpl, else by its Storage: a new layout on a known storage
// is a view node; an unknown storage is a fresh output when the kernel writes it and a captured
// constant when it only reads it.
class Tracer : public DispatchObserver, public HostReadObserver {
 public:
  explicit Tracer(Graph& g) : g_(g) {}

  void on_host_read(const std::string& what, const std::string& where) override {
    g_.host_reads.push_back(where.empty() ? what : what + " at " + where);
  }

  int add_leaf(const Tensor& t, ValueKind kind, const std::string& name) {
    Value v = layout_of(t);
    v.kind = kind;
    v.name = name;
    if (kind == ValueKind::Constant) v.constant = t;
    int id = g_.add_value(std::move(v));
    remember(t, id);
    return id;
  }

  // The value holding `t` now, adding a view node (or capturing a constant) as needed.
  int lookup(const Tensor& t) {
    if (!t.defined()) return -1;
    int by_impl = find(impl_, t.impl());
    if (by_impl >= 0 && latest(by_impl) == by_impl) return by_impl;
    int source = find(storage_, t.storage().get());
    if (source < 0) return add_leaf(t, ValueKind::Constant, "");
    const Value& sv = g_.value(source);
    if (sv.shape == t.shape() && sv.strides == t.strides() && sv.offset == t.offset() &&
        sv.dtype == t.dtype()) {
      impl_[t.impl()] = {source, t.impl_ptr()};  // another handle on one layout: no view
      return source;
    }
    Node view;
    view.kind = NodeKind::View;
    view.device = t.device();
    view.params = {source};
    view.view_shape = t.shape();
    view.view_strides = t.strides();
    view.view_offset = t.offset() - g_.value(source).offset;
    Value v = layout_of(t);
    v.base = g_.value(source).base;
    v.storage_numel = g_.value(source).storage_numel;
    v.producer = static_cast<int>(g_.nodes.size());
    int id = g_.add_value(std::move(v));
    view.outputs = {id};
    g_.nodes.push_back(std::move(view));
    impl_[t.impl()] = {id, t.impl_ptr()};
    return id;
  }

  void on_dispatch(const DispatchCall& call) override {
    const OpInfo& info = op_info(call.op);
    if (is_random_op(call.op)) {
      // Note [random ops in a graph]: a replay reserves fresh counters from the default
      // generator, as eager does; a draw from another generator could not be followed.
      const DispatchAttr& philox = call.attrs.back();
      check_state(philox.name == "philox" &&
                      static_cast<uint64_t>(philox.ints[0]) == default_generator().seed(),
                  "jit.trace", info.name,
                  " draws from a generator other than the default one; a replay could not "
                  "advance it");
    }
    Node node;
    node.kind = NodeKind::Kernel;
    node.op = call.op;
    node.device = call.device;
    node.attrs = call.attrs;
    node.args = call.args;
    node.thunk = call.thunk;
    int node_index = static_cast<int>(g_.nodes.size());
    // Batch norm in evaluation reads its running statistics; in training it updates them.
    bool bn_eval = call.op == OpKey::batch_norm && !attr_true(call.attrs, "training");
    std::vector<int> update_sources;
    for (size_t k = 0; k < call.tensors.size(); ++k) {
      const Tensor& t = *call.tensors[k];
      bool is_input = k < info.inputs.size();
      Role role = !call.writable[k] || (bn_eval && is_input) ? Role::Read
                  : is_input || known(t)                     ? Role::Update
                                                             : Role::Write;
      node.roles.push_back(role);
      if (role == Role::Write && t.defined()) {
        Value v = layout_of(t);
        v.producer = node_index;
        int id = g_.add_value(std::move(v));
        node.params.push_back(id);
        node.outputs.push_back(id);
        fresh_.push_back({t, id});
      } else {
        node.params.push_back(lookup(t));
        if (role == Role::Update && t.defined()) update_sources.push_back(static_cast<int>(k));
      }
    }
    // The view nodes lookup() added come before this node.
    node_index = static_cast<int>(g_.nodes.size());
    for (int o : node.outputs) g_.value(o).producer = node_index;
    for (int k : update_sources) {
      const Tensor& t = *call.tensors[static_cast<size_t>(k)];
      Value v = g_.value(node.params[static_cast<size_t>(k)]);
      v.id = -1;
      v.kind = ValueKind::Internal;
      v.name.clear();
      v.constant = Tensor();
      v.version_of = node.params[static_cast<size_t>(k)];
      v.producer = node_index;
      v.input_index = -1;
      int id = g_.add_value(std::move(v));
      node.outputs.push_back(id);
      updates_.push_back({t, id});
    }
    g_.nodes.push_back(std::move(node));
    // The outputs are registered after the kernel's inputs were resolved: a kernel may read and
    // write one storage (an update), and its reads are of the version before.
    for (auto& [t, id] : fresh_) remember(t, id);
    for (auto& [t, id] : updates_) remember(t, id);
    fresh_.clear();
    updates_.clear();
  }

 private:
  static bool attr_true(const std::vector<DispatchAttr>& attrs, const char* name) {
    for (const DispatchAttr& a : attrs) {
      if (a.name == name) return a.i != 0;
    }
    return false;
  }
  bool known(const Tensor& t) const {
    return t.defined() && find(storage_, t.storage().get()) >= 0;
  }
  // The value an entry names, or -1 when there is none or its object has died since.
  template <class Map, class Key>
  static int find(const Map& map, const Key* key) {
    auto it = map.find(key);
    if (it == map.end() || it->second.second.expired()) return -1;
    return it->second.first;
  }
  // The newest value on `id`'s storage.
  int latest(int id) const {
    int newest = find(storage_, storage_key_[static_cast<size_t>(g_.value(id).base)]);
    return newest < 0 ? id : newest;
  }
  void remember(const Tensor& t, int id) {
    impl_[t.impl()] = {id, t.impl_ptr()};
    storage_[t.storage().get()] = {id, t.storage()};
    if (storage_key_.size() < g_.values.size()) storage_key_.resize(g_.values.size(), nullptr);
    storage_key_[static_cast<size_t>(g_.value(id).base)] = t.storage().get();
  }
  static Value layout_of(const Tensor& t) {
    Value v;
    v.shape = t.shape();
    v.strides = t.strides();
    v.offset = t.offset();
    v.dtype = t.dtype();
    v.device = t.device();
    v.storage_numel = static_cast<int64_t>(t.storage()->nbytes() / element_size(t.dtype()));
    return v;
  }

  Graph& g_;
  // Note [weak references while tracing]
  // The tracer must not keep the traced tensors alive: the program may look at reference counts
  // (AccumulateGrad takes a gradient without a copy when nothing else holds it), and a trace
  // should see what eager would run. Weak references do not count, and while one exists the
  // object's memory (allocated with its control block by make_shared) is not reused, so an
  // address names one object; an expired entry is ignored.
  std::unordered_map<const TensorImpl*, std::pair<int, std::weak_ptr<TensorImpl>>> impl_;
  // The newest value on each storage.
  std::unordered_map<const Storage*, std::pair<int, std::weak_ptr<Storage>>> storage_;
  std::vector<const Storage*> storage_key_;  // by base value id
  std::vector<std::pair<Tensor, int>> fresh_, updates_;
};

// Note [tracing a training step]
// Nothing in the tracer is specific to inference. With grad mode on, the forward's front
// functions record autograd nodes; loss.backward() then runs each node's formula, which is
// written with ops (autograd/functions/), so its kernels reach the dispatcher and are recorded
// in the order the engine ran them: the backward graph comes from the op table's formulas, fixed
// at trace time. optimizer.step() dispatches sgd_step or adam_step, which update each parameter
// (and its momentum buffers) in place: those are updates of leaves, which the passes keep.
// Adam's bias corrections depend on the step count, so the count is a tensor, not a number: the
// optimizer increments it with an op (add_) and the kernel reads it when it runs, and a replay
// corrects each step with its own count, as PyTorch's Adam(capturable=True) does for CUDA Graphs.
// What the trace cannot see is fixed at its values: the learning rate, SGD's first-step flag and
// the optimizer state's creation (trace a later step: CompileOptions::warmup), and `.grad`, which
// a replay does not assign.
}  // namespace

std::shared_ptr<Graph> trace(const TracedFunction& fn, const std::vector<Tensor>& example_inputs,
                             const NamedTensors& params, std::vector<Tensor>* traced_outputs) {
  auto g = std::make_shared<Graph>();
  Tracer tracer(*g);
  for (size_t i = 0; i < example_inputs.size(); ++i) {
    check_value(example_inputs[i].defined(), "jit.trace", "example input ", i, " is undefined");
    int id = tracer.add_leaf(example_inputs[i], ValueKind::Input, "x" + std::to_string(i));
    g->value(id).input_index = static_cast<int>(i);
    g->inputs.push_back(id);
  }
  for (const auto& [name, t] : params) {
    if (!t.defined()) continue;
    g->params.push_back(tracer.add_leaf(t, ValueKind::Param, name));
  }
  std::vector<Tensor> outputs;
  {
    DispatchObserverGuard observe(&tracer);
    HostReadObserverGuard reads(&tracer);  // Note [host reads]
    outputs = fn(example_inputs);
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    check_value(outputs[i].defined(), "jit.trace", "output ", i,
                " of the traced function is undefined");
    g->outputs.push_back(tracer.lookup(outputs[i]));
  }
  g->check();
  if (traced_outputs != nullptr) *traced_outputs = outputs;
  return g;
}

std::shared_ptr<Graph> trace(nn::Module& module, const std::vector<Tensor>& example_inputs) {
  check_value(example_inputs.size() == 1, "jit.trace",
              "a C++ module's forward takes one input; got ", example_inputs.size());
  NamedTensors params = module.named_parameters();
  for (auto& b : module.named_buffers()) params.push_back(b);
  NoGradGuard no_grad;
  return trace([&](const std::vector<Tensor>& xs) { return std::vector<Tensor>{module(xs[0])}; },
               example_inputs, params);
}

}  // namespace wick::jit
