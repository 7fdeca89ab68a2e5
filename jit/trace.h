// Capture: run a model once on example inputs and record every kernel it dispatches as a Graph
// (jit/graph.h). This is torch.jit.trace's approach: what the code computes with these shapes is
// recorded, not the code itself, so Python control flow and values read on the host (`.item()`,
// data-dependent branches) are frozen at the traced values, and a different shape or dtype needs
// a new trace (jit/compile.h retraces and counts it).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "jit/graph.h"

namespace wick::nn {
class Module;
}

namespace wick::jit {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;
using TracedFunction = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

// Runs `fn(example_inputs)` once, recording each dispatch, in the caller's grad mode: with grad
// mode on, a training step's loss.backward() runs the op table's backward formulas, whose
// kernels are recorded like the forward's, and an optimizer's fused update too (Note [tracing a
// training step] in trace.cpp). `params` (a module's parameters and buffers) become named graph
// leaves instead of captured constants; `outputs`, when given, receives what this run returned.
// Throws std::invalid_argument for an undefined example input, std::runtime_error for what cannot
// be replayed (a random op that draws from a generator other than the default one).
std::shared_ptr<Graph> trace(const TracedFunction& fn, const std::vector<Tensor>& example_inputs,
                             const NamedTensors& params = {},
                             std::vector<Tensor>* outputs = nullptr);

// wick::jit::trace(module, example_inputs): the module's forward on one input, with its
// parameters and buffers as named leaves, traced with grad mode off (inference).
std::shared_ptr<Graph> trace(nn::Module& module, const std::vector<Tensor>& example_inputs);

// Counts dispatcher calls on this thread while alive (the example's "dispatcher calls").
class DispatchCounter : public DispatchObserver {
 public:
  DispatchCounter() : guard_(this) {}
  void on_dispatch(const DispatchCall& call) override {
    ++count_;
    ++by_op_[static_cast<size_t>(call.op)];
  }
  int64_t count() const { return count_; }
  // Calls per op, by OpKey.
  const std::vector<int64_t>& by_op() const { return by_op_; }

 private:
  int64_t count_ = 0;
  std::vector<int64_t> by_op_ = std::vector<int64_t>(kNumOps, 0);
  DispatchObserverGuard guard_;
};

}  // namespace wick::jit
