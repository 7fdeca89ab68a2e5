#include "jit/executor.h"

#include <optional>
#include <unordered_map>

#include "autograd/grad_mode.h"
#include "core/allocator.h"
#include "core/dispatch.h"
#include "core/error.h"
#include "core/generator.h"
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
  check_value(t.shape() == v.shape && t.strides() == v.strides, "jit.Executor", what, " ", v.name,
              " was traced with shape ", v.shape, " and strides ", v.strides, "; got shape ",
              t.shape(), " and strides ", t.strides());
  env_[static_cast<size_t>(v.id)] = t;
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
  std::vector<Tensor> out;
  for (int o : g.outputs) out.push_back(env_[static_cast<size_t>(o)]);
  // Intermediates are dropped now, not at the next run, so unplanned buffers go back to the
  // allocator (planned ones stay in the arena).
  for (const Value& v : g.values) {
    if (v.kind == ValueKind::Internal || v.kind == ValueKind::Input) {
      env_[static_cast<size_t>(v.id)] = Tensor();
    }
  }
  ++runs_;
  return out;
}

}  // namespace wick::jit
