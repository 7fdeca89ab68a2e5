#include "jit/executor.h"

#include <optional>
#include <unordered_map>

#include "core/allocator.h"
#include "core/backend.h"
#include "core/dispatch.h"
#include "core/error.h"
#include "core/generator.h"
#include "core/grad_mode.h"
#include "core/tensor_impl.h"
#include "jit/fused_cpu.h"
#include "jit/fused_cuda.h"

namespace wick::jit {

// Note [replay]
// Eager execution pays, per op: the binding's argument parsing (in Python), the front function's
// checks, promotion and shape arithmetic, an allocation, the kernel-table lookup, and an autograd
// node when grad mode is on. A traced graph has all of that resolved: the constructor looks each
// kernel up once (thunk->find) and turns every node into a Step of environment slots, so run()
// is a loop of direct kernel calls over a vector of tensors. Views are rebuilt on each run (their
// source may be a new input), which costs a TensorImpl and no bytes.

// Note [a replay as one CUDA Graph]
// On a GPU the replay loop still costs a launch per kernel from the host: a few microseconds
// each, which for a small model is most of a step. So a graph that runs wholly on one GPU is
// recorded once as a CUDA Graph (the backend's capture_graph hook, Note [backend hooks for static
// graphs] in core/backend.h; Note [capturing a graph] in cuda/graph.cpp) and from then on each run
// is one cudaGraphLaunch, as torch.compile(mode="reduce-overhead") does:
//   - run 1 replays op by op: a warm-up that creates cuBLAS handles, picks cuDNN algorithms and
//     fills the caching allocator, none of which can happen inside a capture;
//   - run 2 copies its inputs into static input buffers, replays under capture on a side stream
//     (intermediates come from the memory plan's arena or the graph pool), then launches;
//   - later runs copy the inputs in, launch, and copy each fresh output out, so that a result
//     the caller keeps is not overwritten by the next run (PyTorch hands out the static output
//     itself and documents that; the copy is one small kernel per output).
// Parameters and optimizer state are bound by handle and updated in place, so a captured
// training step trains. Not captured: graphs with random ops (the Philox offsets would be
// frozen into the capture, and every dropout mask would repeat), graphs with any work on the
// CPU, and graphs whose capture fails, which keep replaying op by op with the reason in
// cuda_graph_status().

bool same_layout(const Shape& shape, const Strides& a, const Strides& b) {
  if (a.size() != b.size()) return false;
  int64_t numel = 1;
  for (int64_t n : shape) numel *= n;
  if (numel == 0) return true;  // no element to address
  for (size_t d = 0; d < a.size(); ++d) {
    if (shape[d] != 1 && a[d] != b[d]) return false;  // a size-1 dim's stride is never used
  }
  return true;
}

namespace {
Tensor tensor_on(std::shared_ptr<Storage> storage, const Value& v, int64_t offset) {
  return Tensor(
      std::make_shared<TensorImpl>(std::move(storage), offset, v.shape, v.strides, v.dtype));
}
}  // namespace

Executor::Executor(std::shared_ptr<const Graph> graph, const NamedTensors& params,
                   ExecutorOptions options)
    : graph_(std::move(graph)), options_(options) {
  const Graph& g = *graph_;
  env_.assign(g.values.size(), Tensor());
  std::unordered_map<std::string, Tensor> by_name(params.begin(), params.end());
  for (int p : g.params) {
    const Value& v = g.value(p);
    auto it = by_name.find(v.name);
    check_value(it != by_name.end(), "jit.Executor", "the graph reads parameter '", v.name,
                "', which the module does not have");
    bind_leaf(v, it->second, "parameter");
  }
  for (const Value& v : g.values) {
    if (v.kind == ValueKind::Constant) env_[static_cast<size_t>(v.id)] = v.constant;
  }
  if (options_.plan_memory) {
    plan_ = plan_memory(g);
    planned_.assign(g.values.size(), Tensor());
    if (plan_.arena_bytes > 0) {
      Device device = g.value(plan_.arena_value).device;
      arena_ = std::make_shared<Storage>(static_cast<size_t>(plan_.arena_bytes),
                                         get_allocator(device.type));
    }
    for (const Value& v : g.values) {
      int64_t at = plan_.offset[static_cast<size_t>(v.id)];
      if (at < 0) continue;
      // A storage of its own over the arena's bytes, so the tensor's offset and strides are the
      // traced ones; it keeps the arena alive.
      auto arena = arena_;
      auto slice = std::make_shared<Storage>(static_cast<char*>(arena_->data()) + at,
                                             static_cast<size_t>(v.nbytes()), v.device, [arena] {});
      planned_[static_cast<size_t>(v.id)] = tensor_on(slice, v, v.offset);
    }
  }
  const std::vector<bool> updated =
      options_.prepack_weights ? g.updated_storages() : std::vector<bool>();
  for (const Node& node : g.nodes) {
    Step step;
    step.node = &node;
    for (size_t k = 0; k < node.params.size(); ++k) {
      step.slots.push_back(node.params[k]);
      bool write = node.kind != NodeKind::View && node.roles[k] == Role::Write;
      if (write && node.params[k] >= 0) step.allocate.push_back(node.params[k]);
    }
    if (node.kind == NodeKind::Kernel) {
      step.fn = node.thunk->find(node.op, node.device.type);
      size_t next_version = 0;
      for (size_t k = 0; k < node.params.size(); ++k) {
        if (node.roles[k] != Role::Update || node.params[k] < 0) continue;
        // The versions follow the fresh outputs in node.outputs, in parameter order.
        size_t fresh = step.allocate.size();
        step.versions.push_back({node.outputs[fresh + next_version++], node.params[k]});
      }
    }
    if (node.kind == NodeKind::Fused && node.device.type == kCUDA) {
      step.fused_cuda = std::make_shared<const FusedCudaKernel>(node, g);  // NVRTC, once
    }
    if (node.kind != NodeKind::View) ++kernels_per_run_;
    if (options_.prepack_weights) prepack(step, updated);
    steps_.push_back(std::move(step));
  }
  std::string obstacle = cuda_graph_obstacle();
  if (obstacle.empty()) {
    graph_state_ = GraphState::WarmingUp;
    cuda_graph_status_ = "waiting for the warm-up run";
  } else {
    cuda_graph_status_ = "not captured: " + obstacle;
  }
}

Executor::~Executor() = default;

std::string Executor::cuda_graph_obstacle() const {
  if (!options_.cuda_graph) return "ExecutorOptions.cuda_graph is off";
  const Graph& g = *graph_;
  if (g.nodes.empty()) return "the graph has no nodes";
  std::optional<Device> device;
  for (const Node& node : g.nodes) {
    if (node.kind == NodeKind::View) continue;
    if (node.device.type != kCUDA) return node.name() + " runs on " + node.device.str();
    if (device && *device != node.device) return "the graph spans two GPUs";
    device = node.device;
    if (node.kind == NodeKind::Kernel && is_random_op(node.op)) {
      return node.name() + " draws random numbers, which a capture would repeat on every run";
    }
  }
  if (!device) return "the graph has no kernels";
  const Backend* backend = find_backend(device->type);
  if (backend == nullptr || backend->capture_graph == nullptr) {
    return "this build cannot capture graphs on " + device->str();
  }
  for (int id : g.inputs) {
    if (g.value(id).device != *device) return "an input is on " + g.value(id).device.str();
  }
  return "";
}

using Conv2dArgs = detail::ObservedCall<Conv2dKernel>::Args;

void Executor::prepack(Step& step, const std::vector<bool>& updated) {
  const Node& node = *step.node;
  if (node.kind != NodeKind::Kernel || node.op != OpKey::conv2d || node.device.type != kCPU ||
      step.fn == nullptr || node.thunk != &detail::ObservedCall<Conv2dKernel>::kThunk) {
    return;
  }
  const Value& input = graph_->value(node.params[0]);
  const Value& weight = graph_->value(node.params[1]);
  if (weight.kind != ValueKind::Constant || updated[static_cast<size_t>(weight.base)] ||
      weight.dtype != kFloat32 || input.dtype != kFloat32 ||
      !is_contiguous(input.shape, input.strides)) {
    return;
  }
  const Conv2dParams& params = std::get<4>(*static_cast<const Conv2dArgs*>(node.args.get()));
  step.packed_weight = std::make_shared<cpu::PackedConvWeight>(weight.constant, params, input.shape,
                                                               options_.winograd);
  ++prepacked_;
  winograd_ += step.packed_weight->algorithm() == cpu::PackedConvWeight::Algorithm::kWinograd;
  direct_ += step.packed_weight->algorithm() == cpu::PackedConvWeight::Algorithm::kDirect;
}

void Executor::call_kernel(const Step& step, const void* call_args, Tensor* const* args) {
  const Node& node = *step.node;
  if (step.fn != nullptr) {
    node.thunk->call(step.fn, call_args, args);
  } else {
    node.thunk->dispatch(node.op, node.device, call_args, args);
  }
}

void Executor::run_with_epilogue(const Step& step, Tensor* const* args) {
  const Node& node = *step.node;
  std::optional<FusedLoop> epilogue;
  if (!node.steps.empty()) {
    Tensor& out = *args[node.epilogue_at - 1];
    std::vector<const Tensor*> operands{&out};
    for (size_t k = node.epilogue_at; k < node.params.size(); ++k) operands.push_back(args[k]);
    epilogue.emplace(node.steps, operands, out);
  }
  if (step.packed_weight) {
    const Conv2dParams& params = std::get<4>(*static_cast<const Conv2dArgs*>(node.args.get()));
    cpu::OutputEpilogue each_block;
    if (epilogue) each_block = [&](int64_t begin, int64_t end) { epilogue->run(begin, end); };
    cpu::conv2d_prepacked(*step.packed_weight, *args[0], *args[2], *args[3], params, each_block);
    return;
  }
  call_kernel(step, node.args.get(), args);
  epilogue->run_parallel();  // only kernels with an epilogue come here without a packed weight
}

void Executor::bind_leaf(const Value& v, const Tensor& t, const char* what) {
  check_value(t.defined(), "jit.Executor", what, " ", v.name, " is undefined");
  check_type(t.dtype() == v.dtype && t.device() == v.device, "jit.Executor", what, " ", v.name,
             " was traced as ", dtype_name(v.dtype), " on ", v.device.str(), "; got ",
             dtype_name(t.dtype()), " on ", t.device().str());
  check_value(t.shape() == v.shape && same_layout(t.shape(), t.strides(), v.strides),
              "jit.Executor", what, " ", v.name, " was traced with shape ", v.shape,
              " and strides ", v.strides, "; got shape ", t.shape(), " and strides ", t.strides());
  env_[static_cast<size_t>(v.id)] = t;
}

std::string Executor::stale_parameter() const {
  for (int p : graph_->params) {
    const Value& v = graph_->value(p);
    const Tensor& t = env_[static_cast<size_t>(p)];
    if (t.dtype() != v.dtype || t.device() != v.device || t.shape() != v.shape ||
        !same_layout(t.shape(), t.strides(), v.strides)) {
      return v.name;
    }
  }
  return "";
}

Tensor Executor::allocate(const Value& v) {
  if (options_.plan_memory && planned_[static_cast<size_t>(v.id)].defined()) {
    return planned_[static_cast<size_t>(v.id)];
  }
  auto storage =
      std::make_shared<Storage>(static_cast<size_t>(v.nbytes()), get_allocator(v.device.type));
  return tensor_on(std::move(storage), v, v.offset);
}

std::vector<Tensor> Executor::run(const std::vector<Tensor>& inputs) {
  const Graph& g = *graph_;
  check_value(inputs.size() == g.inputs.size(), "jit.Executor", "the graph takes ", g.inputs.size(),
              " inputs; got ", inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value& v = g.value(g.inputs[i]);
    bind_leaf(v, inputs[i], ("input " + std::to_string(i)).c_str());
  }
  NoGradGuard no_grad;
  if (graph_state_ == GraphState::Captured) return launch_graph(inputs);
  if (graph_state_ == GraphState::Ready) {
    if (capture(inputs)) return launch_graph({});  // the inputs are in place already
    for (size_t i = 0; i < inputs.size(); ++i) env_[static_cast<size_t>(g.inputs[i])] = inputs[i];
  }
  replay_steps();
  std::vector<Tensor> out = collect_outputs();
  release_intermediates();
  if (graph_state_ == GraphState::WarmingUp) graph_state_ = GraphState::Ready;
  ++runs_;
  return out;
}

void Executor::replay_steps() {
  const Graph& g = *graph_;
  std::vector<Tensor*> args;
  for (const Step& step : steps_) {
    const Node& node = *step.node;
    if (node.kind == NodeKind::View) {
      const Tensor& src = env_[static_cast<size_t>(step.slots[0])];
      const Value& out = g.value(node.outputs[0]);
      env_[static_cast<size_t>(out.id)] =
          tensor_on(src.storage(), out, src.offset() + node.view_offset);
      continue;
    }
    for (int id : step.allocate) env_[static_cast<size_t>(id)] = allocate(g.value(id));
    args.clear();
    for (int slot : step.slots)
      args.push_back(slot < 0 ? &none_ : &env_[static_cast<size_t>(slot)]);
    if (step.fused_cuda) {
      step.fused_cuda->run(args.data());
    } else if (node.kind == NodeKind::Fused) {
      run_fused(node, args.data());
    } else if (is_random_op(node.op)) {
      // Fresh counters for this draw (Note [random ops in a graph] in graph.h).
      using Args = std::tuple<Tensor, double, double, PhiloxState>;
      check_state(node.thunk == &detail::ObservedCall<RandomKernel>::kThunk, "jit.Executor",
                  "internal error: ", node.name(), " was recorded with another signature");
      Args fresh = *static_cast<const Args*>(node.args.get());
      std::get<3>(fresh) = default_generator().reserve(args[0]->numel());
      call_kernel(step, &fresh, args.data());
    } else if (step.packed_weight || !node.steps.empty()) {
      run_with_epilogue(step, args.data());
    } else {
      call_kernel(step, node.args.get(), args.data());
    }
    for (auto [version, of] : step.versions) {
      env_[static_cast<size_t>(version)] = env_[static_cast<size_t>(of)];
    }
  }
}

std::vector<Tensor> Executor::collect_outputs() const {
  std::vector<Tensor> out;
  for (int o : graph_->outputs) out.push_back(env_[static_cast<size_t>(o)]);
  return out;
}

// Intermediates are dropped now, not at the next run, so unplanned buffers go back to the
// allocator (planned ones stay in the arena).
void Executor::release_intermediates() {
  for (const Value& v : graph_->values) {
    if (v.kind == ValueKind::Internal || v.kind == ValueKind::Input) {
      env_[static_cast<size_t>(v.id)] = Tensor();
    }
  }
}

bool Executor::capture(const std::vector<Tensor>& inputs) {
  const Graph& g = *graph_;
  static_inputs_.clear();
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value& v = g.value(g.inputs[i]);
    Tensor fixed = allocate(v);  // inputs are never planned: a buffer of its own
    fixed.copy_(inputs[i]);
    env_[static_cast<size_t>(v.id)] = fixed;
    static_inputs_.push_back(fixed);
  }
  const int device = g.value(g.inputs.empty() ? g.outputs.at(0) : g.inputs[0]).device.index;
  try {
    cuda_graph_ = find_backend(kCUDA)->capture_graph(device, [this] { replay_steps(); });
  } catch (const std::exception& e) {
    release_intermediates();
    static_inputs_.clear();
    graph_state_ = GraphState::Off;
    cuda_graph_status_ = std::string("capture failed (") + e.what() + "); replaying op by op";
    return false;
  }
  static_outputs_ = collect_outputs();
  output_is_fresh_.clear();
  for (int o : g.outputs) {
    ValueKind kind = g.value(g.value(o).base).kind;
    output_is_fresh_.push_back(kind == ValueKind::Internal || kind == ValueKind::Input);
  }
  release_intermediates();
  graph_state_ = GraphState::Captured;
  cuda_graph_status_ = "captured (" + std::to_string(cuda_graph_->num_nodes()) + " nodes, " +
                       std::to_string(cuda_graph_->pool_bytes()) + " bytes in its pool)";
  return true;
}

std::vector<Tensor> Executor::launch_graph(const std::vector<Tensor>& inputs) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& fixed = static_inputs_[i];
    if (inputs[i].storage() != fixed.storage() || inputs[i].offset() != fixed.offset()) {
      static_inputs_[i].copy_(inputs[i]);
    }
  }
  // run() bound the caller's inputs to check them; the graph reads the static ones.
  for (int id : graph_->inputs) env_[static_cast<size_t>(id)] = Tensor();
  cuda_graph_->launch();
  std::vector<Tensor> out;
  for (size_t k = 0; k < static_outputs_.size(); ++k) {
    out.push_back(output_is_fresh_[k] ? static_outputs_[k].clone() : static_outputs_[k]);
  }
  ++graph_launches_;
  ++runs_;
  return out;
}

}  // namespace wick::jit
