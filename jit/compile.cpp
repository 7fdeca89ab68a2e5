#include "jit/compile.h"

#include <optional>
#include <sstream>

#include "core/error.h"
#include "core/grad_mode.h"
#include "nn/module.h"

namespace wick::jit {

namespace {
std::string signature(const std::vector<Tensor>& inputs) {
  std::ostringstream os;
  for (const Tensor& t : inputs) {
    check_value(t.defined(), "jit.compile", "an input is undefined");
    os << static_cast<int>(t.dtype()) << t.device().str() << t.shape() << t.strides() << ";";
  }
  return os.str();
}
}  // namespace

void optimize(Graph& g, const NamedTensors& params, const CompileOptions& options,
              std::string* log) {
  std::ostringstream os;
  auto step = [&](const char* name, int changed) {
    os << "  " << name << ": " << changed << " (" << g.num_kernels() << " kernels)\n";
  };
  os << "  traced: " << g.num_kernels() << " kernels, " << g.nodes.size() << " nodes\n";
  step("functionalization", functionalize(g));
  if (options.freeze) step("freeze parameters", freeze_parameters(g, params));
  if (options.constant_folding) step("constant folding", fold_constants(g));
  if (options.freeze && options.fold_conv_bn) step("conv+bn folding", fold_conv_batchnorm(g));
  if (options.common_subexpressions)
    step("common subexpressions", eliminate_common_subexpressions(g));
  if (options.dead_code) step("dead code", eliminate_dead_code(g));
  if (options.fuse) step("elementwise fusion", fuse_elementwise(g));
  if (options.fuse && options.conv_epilogue) step("conv epilogue fusion", fuse_conv_epilogue(g));
  g.check();
  if (log != nullptr) *log += os.str();
}

CompiledFunction::CompiledFunction(TracedFunction fn, std::function<NamedTensors()> params,
                                   CompileOptions options)
    : fn_(std::move(fn)), params_(std::move(params)), options_(options) {}

std::vector<Tensor> CompiledFunction::operator()(const std::vector<Tensor>& inputs) {
  std::string key = signature(inputs);
  auto it = cache_.find(key);
  if (it != cache_.end()) {
    last_ = it->second.get();
    return last_->run(inputs);
  }
  int& eager = eager_calls_[key];
  if (eager < options_.warmup) {
    ++eager;
    return fn_(inputs);
  }
  NamedTensors params = params_ ? params_() : NamedTensors{};
  std::vector<Tensor> outputs;
  std::shared_ptr<Graph> g;
  {
    // A frozen graph is an inference graph, run without autograd: it is traced without autograd
    // too, so that ops take their inference forms. Evaluation-mode batch norm is then one
    // batch_norm kernel, which conv+bn folding recognises, instead of the differentiable affine
    // ops it becomes when its parameters need gradients.
    std::optional<NoGradGuard> inference;
    if (options_.freeze) inference.emplace();
    g = trace(fn_, inputs, params, &outputs);
  }
  log_ += "trace " + std::to_string(traces_ + 1) + " (" + key + "):\n";
  optimize(*g, params, options_, &log_);
  ExecutorOptions exec;
  exec.plan_memory = options_.plan_memory;
  exec.prepack_weights = options_.freeze && options_.prepack_weights;
  exec.winograd = options_.winograd;
  exec.cuda_graph = options_.cuda_graph;
  last_ = cache_.emplace(key, std::make_unique<Executor>(g, params, exec)).first->second.get();
  ++traces_;
  // The traced run was a real call (a training step took its step): its results are this call's.
  return outputs;
}

Executor& CompiledFunction::executor() {
  check_state(last_ != nullptr, "jit.CompiledFunction", "nothing was compiled yet: call it first");
  return *last_;
}

CompiledFunction compile(std::shared_ptr<nn::Module> module, CompileOptions options) {
  check_value(module != nullptr, "jit.compile", "the module is null");
  auto params = [module] {
    NamedTensors p = module->named_parameters();
    for (auto& b : module->named_buffers()) p.push_back(b);
    return p;
  };
  return CompiledFunction(
      [module](const std::vector<Tensor>& xs) {
        check_value(xs.size() == 1, "jit.compile", "a C++ module takes one input; got ", xs.size());
        return std::vector<Tensor>{(*module)(xs[0])};
      },
      params, options);
}

}  // namespace wick::jit
