// wick::jit::compile: trace, optimise and replay, with guards (torch.compile's shape).
//
// Note [guards and retracing]
// A trace is valid for the shapes, strides, dtypes and devices it saw. A CompiledFunction keeps
// one executor per signature of its inputs: a call with a new signature traces again, which is
// counted (retraces(), torch.compile's recompiles), and later calls with a seen signature reuse
// its graph.
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
};

// Runs the passes `options` selects on `g`, in order; appends one line per pass to `log`.
void optimize(Graph& g, const NamedTensors& params, const CompileOptions& options,
              std::string* log = nullptr);

class CompiledFunction {
 public:
  // `params` returns the current named parameters and buffers (called on each trace).
  CompiledFunction(TracedFunction fn, std::function<NamedTensors()> params,
                   CompileOptions options = {});
  std::vector<Tensor> operator()(const std::vector<Tensor>& inputs);

  int64_t traces() const { return traces_; }
  int64_t retraces() const { return traces_ > 0 ? traces_ - 1 : 0; }
  // The executor of the latest call (throws std::runtime_error before the first call).
  Executor& executor();
  const std::string& log() const { return log_; }  // what each trace's passes did

 private:
  TracedFunction fn_;
  std::function<NamedTensors()> params_;
  CompileOptions options_;
  std::map<std::string, std::unique_ptr<Executor>> cache_;
  std::map<std::string, int> eager_calls_;
  Executor* last_ = nullptr;
  int64_t traces_ = 0;
  std::string log_;
};

// wick::jit::compile(module): a CompiledFunction over the module's forward.
CompiledFunction compile(std::shared_ptr<nn::Module> module, CompileOptions options = {});

}  // namespace wick::jit
