#include "jit/compile.h"

#include <optional>
#include <sstream>

#include "core/autocast.h"
#include "core/error.h"
#include "core/grad_mode.h"
#include "nn/module.h"

namespace wick::jit {

namespace {
// The guard key: one "name=value" entry per guard, each ended by ';' (Note [guards and
// retracing]).
std::string guard_key(const std::vector<Tensor>& inputs, const std::string& state) {
  std::ostringstream os;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    check_value(t.defined(), "jit.compile", "input ", i, " is undefined");
    // Strides that address nothing (a size-1 dim's, an empty tensor's) are not part of it.
    Strides strides = t.strides();
    for (size_t d = 0; d < strides.size(); ++d) {
      if (t.shape()[d] == 1 || t.numel() == 0) strides[d] = 0;
    }
    os << "input " << i << "=" << dtype_name(t.dtype()) << " on " << t.device().str() << ", shape "
       << t.shape() << ", strides " << strides << ";";
  }
  std::string key = os.str();
  key += GradMode::is_enabled() ? "grad mode=on;" : "grad mode=off;";
  for (auto [device, entry] : {std::pair{kCPU, "autocast on cpu="}, {kCUDA, "autocast on cuda="}}) {
    key += entry;
    key += autocast::is_enabled(device) ? dtype_name(autocast::lower_dtype(device)) : "off";
    key += ';';
  }
  key += state;
  return key;
}

// Why `key` traces again: the first of its guards that differs from `before`'s.
std::string failed_guard(const std::string& before, const std::string& key) {
  if (before.empty()) return "first call";
  size_t a = 0, b = 0;
  while (a < before.size() && b < key.size()) {
    size_t ea = before.find(';', a), eb = key.find(';', b);
    std::string old_entry = before.substr(a, ea - a), new_entry = key.substr(b, eb - b);
    if (old_entry != new_entry) return new_entry + " (was " + old_entry + ")";
    if (ea == std::string::npos || eb == std::string::npos) break;
    a = ea + 1;
    b = eb + 1;
  }
  return "the guards' entries changed";
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

// Note [graph breaks]
// A traced run that read a tensor's value to the host (Note [host reads] in core/host_read.h)
// made a choice the graph does not contain: `if x.sum() > 0` took one branch, `.item()` turned a
// result into a Python number. Replaying it would repeat that choice for every input, a silent
// wrong answer. torch.compile splits the function there and runs the Python between the pieces;
// wick breaks at the coarsest grain: that call signature runs eagerly from then on, which is
// always right, and the read is reported (graph_breaks(), a warning in Python, the log) so that
// the author can move it out of the compiled function. With fullgraph the read is an error.
// The traced run itself was an ordinary eager run, so its results are returned either way.

CompiledFunction::CompiledFunction(TracedFunction fn, std::function<NamedTensors()> params,
                                   CompileOptions options, std::function<std::string()> state)
    : fn_(std::move(fn)), params_(std::move(params)), options_(options), state_(std::move(state)) {
  check_value(options_.cache_size_limit >= 1, "jit.compile", "cache_size_limit must be >= 1; got ",
              options_.cache_size_limit);
}

std::vector<Tensor> CompiledFunction::operator()(const std::vector<Tensor>& inputs) {
  std::string key = guard_key(inputs, state_ ? state_() : std::string());
  auto it = cache_.find(key);
  std::string stale;
  if (it != cache_.end()) {
    stale = it->second->stale_parameter();
    if (stale.empty()) {
      last_ = it->second.get();
      last_key_ = key;
      return last_->run(inputs);
    }
    // A parameter's data was replaced in place (set_data, to()): same object, new layout.
    if (last_ == it->second.get()) last_ = nullptr;
    cache_.erase(it);
  }
  if (broken_.count(key) != 0) {
    ++eager_runs_;
    return fn_(inputs);
  }
  int& eager = eager_calls_[key];
  if (eager < options_.warmup) {
    ++eager;
    return fn_(inputs);
  }
  if (static_cast<int>(cache_.size() + broken_.size()) >= options_.cache_size_limit) {
    if (eager_runs_++ == 0) {
      log_ += "cache full (" + std::to_string(options_.cache_size_limit) +
              " traces): calls with new guards run eagerly; the last failed guard: " +
              failed_guard(last_key_, key) + "\n";
    }
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
  std::string why =
      stale.empty() ? failed_guard(last_key_, key) : "parameter " + stale + " has a new layout";
  log_ += "trace " + std::to_string(traces_ + 1) + " (" + why + "):\n";
  ++traces_;
  last_key_ = key;
  if (!g->host_reads.empty()) {
    std::string read = g->host_reads.front();
    if (g->host_reads.size() > 1) {
      read += " (and " + std::to_string(g->host_reads.size() - 1) + " more)";
    }
    check_state(!options_.fullgraph, "jit.compile", "fullgraph=True, but the traced call read a ",
                "tensor's value to the host: ", read,
                "; a graph cannot contain what the program did with it. Move the read out of "
                "the compiled function, or compile without fullgraph to run it eagerly");
    log_ += "  graph break: " + read + "; this signature runs eagerly\n";
    broken_[key] = read;
    graph_breaks_.push_back(read);
    return outputs;
  }
  optimize(*g, params, options_, &log_);
  ExecutorOptions exec;
  exec.plan_memory = options_.plan_memory;
  exec.prepack_weights = options_.freeze && options_.prepack_weights;
  exec.winograd = options_.winograd;
  exec.cuda_graph = options_.cuda_graph;
  last_ = cache_.emplace(key, std::make_unique<Executor>(g, params, exec)).first->second.get();
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
  auto state = [module, params] {
    std::ostringstream os;
    for (const auto& [name, m] : module->named_modules()) {
      os << "training of module '" << (name.empty() ? std::string("(root)") : name)
         << "'=" << (m->is_training() ? "on;" : "off;");
    }
    for (const auto& [name, t] : params()) {
      os << "parameter " << name << "=" << static_cast<const void*>(t.impl()) << ";";
    }
    return os.str();
  };
  return CompiledFunction(
      [module](const std::vector<Tensor>& xs) {
        check_value(xs.size() == 1, "jit.compile", "a C++ module takes one input; got ", xs.size());
        return std::vector<Tensor>{(*module)(xs[0])};
      },
      params, options, state);
}

}  // namespace wick::jit
