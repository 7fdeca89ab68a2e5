// wick::jit::compile: trace, optimise and replay, with guards (torch.compile's shape).
//
// Note [guards and retracing]
// A trace is valid only for what it saw: the inputs' shapes, strides, dtypes and devices, grad
// mode and autocast's state (both change which kernels run), the training flag of every module
// (dropout and batch norm branch on it in Python, invisibly to the tracer), and the identity of
// every parameter and buffer (the executor binds them by handle, so a Parameter replaced on the
// module would go unseen). Together these are the call's guard key. A CompiledFunction keeps one
// executor per key: a call with a new key traces again, which is counted (retraces(),
// torch.compile's recompiles) and logged with the guard that failed; later calls with a seen key
// reuse its graph. Past cache_size_limit keys (torch.compile's default is 8 too) new keys run
// eagerly rather than trace without end, say when a Parameter is replaced on every step.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "jit/executor.h"
#include "jit/passes/passes.h"

namespace wick::jit {

struct CompileOptions {
  bool dead_code = true;
  bool common_subexpressions = true;
  bool constant_folding = true;
  // Inference: parameters become constants (torch.jit.freeze), which lets constant folding and
  // conv + batch-norm folding use their values; later changes to them are not seen.
  bool freeze = false;
  bool fold_conv_bn = true;  // only with freeze
  bool fuse = true;
  // With fuse: a convolution's only consumer, an elementwise op or chain, runs as its epilogue
  // (Note [conv epilogue fusion]).
  bool conv_epilogue = true;
  bool plan_memory = true;
  // With freeze: convolution weights packed for the GEMM when the executor is built, and
  // Winograd's algorithm where it fits (Note [weights packed ahead of time]).
  bool prepack_weights = true;
  bool winograd = true;
  // On a GPU: the replay captured as one CUDA Graph (Note [a replay as one CUDA Graph]).
  bool cuda_graph = true;
  // Calls per input signature that run eagerly before it is traced: a training step whose first
  // call differs from the rest (SGD's momentum buffer starts on step one, Adam's state is created)
  // is traced on a later one.
  int warmup = 0;
  // A trace that reads a tensor's value to the host raises instead of running eagerly
  // (torch.compile's fullgraph=True; Note [graph breaks] in compile.cpp).
  bool fullgraph = false;
  int cache_size_limit = 8;  // executors kept per function (Note [guards and retracing])
};

// Runs the passes `options` selects on `g`, in order; appends one line per pass to `log`.
void optimize(Graph& g, const NamedTensors& params, const CompileOptions& options,
              std::string* log = nullptr);

class CompiledFunction {
 public:
  // `params` returns the current named parameters and buffers (called on each trace); `state`
  // returns the caller's part of the guard key on each call: the modules' training flags and the
  // identities of their parameters and buffers, in "name=value;" entries ("" when there is none).
  CompiledFunction(TracedFunction fn, std::function<NamedTensors()> params,
                   CompileOptions options = {}, std::function<std::string()> state = {});
  std::vector<Tensor> operator()(const std::vector<Tensor>& inputs);

  int64_t traces() const { return traces_; }
  int64_t retraces() const { return traces_ > 0 ? traces_ - 1 : 0; }
  // Calls run eagerly because their trace read a value to the host (the reasons, one per key)
  // or because the cache was full.
  const std::vector<std::string>& graph_breaks() const { return graph_breaks_; }
  int64_t eager_calls() const { return eager_runs_; }
  // The executor of the latest call (throws std::runtime_error before the first call).
  Executor& executor();
  const std::string& log() const { return log_; }  // what each trace's passes did

 private:
  TracedFunction fn_;
  std::function<NamedTensors()> params_;
  CompileOptions options_;
  std::function<std::string()> state_;
  std::map<std::string, std::unique_ptr<Executor>> cache_;
  std::map<std::string, int> eager_calls_;
  std::map<std::string, std::string> broken_;  // keys whose trace read a value to the host
  std::vector<std::string> graph_breaks_;
  std::string last_key_;
  int64_t eager_runs_ = 0;
  Executor* last_ = nullptr;
  int64_t traces_ = 0;
  std::string log_;
};

// wick::jit::compile(module): a CompiledFunction over the module's forward.
CompiledFunction compile(std::shared_ptr<nn::Module> module, CompileOptions options = {});

}  // namespace wick::jit
