// The executor: replays a Graph with every kernel resolved ahead of time (Note [replay] in
// executor.cpp). No front function runs, nothing is recorded for autograd, no Python is involved
// between kernels, and with a memory plan no allocator is called for intermediate values.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/backend.h"
#include "core/cpu/conv_prepacked.h"
#include "jit/graph.h"
#include "jit/passes/memory_plan.h"
#include "jit/trace.h"

namespace wick::jit {

class FusedCudaKernel;  // jit/fused_cuda.h

struct ExecutorOptions {
  bool plan_memory = true;  // intermediates in one arena (jit/passes/memory_plan.h)
  // float32 CPU convolutions whose weight is a constant get it packed for the GEMM once, here,
  // instead of on every run (Note [weights packed ahead of time]). Only for frozen graphs: a
  // constant of any other graph is a tensor it captured by reference, which the caller may
  // still change between runs.
  bool prepack_weights = false;
  bool winograd = true;  // where it fits (Note [Winograd F(2x2, 3x3)] in core/cpu/winograd.h)
  // A graph that runs wholly on one GPU is captured as a CUDA Graph on its second run and then
  // launched with one call (Note [a replay as one CUDA Graph] in executor.cpp).
  bool cuda_graph = true;
};

// One executor runs one call at a time: its environment and its arena are reused by every run
// (a second thread needs its own executor).
// Whether strides `a` and `b` address the same elements of a tensor of `shape`: they may differ
// in dims of size 1 and anywhere when it is empty (torch.compile's guards ignore those too).
bool same_layout(const Shape& shape, const Strides& a, const Strides& b);

class Executor {
 public:
  // `params` binds the graph's parameter leaves by name (a module's named_parameters() and
  // named_buffers()). They are held by handle, so in-place updates (an optimizer's step) are seen;
  // a parameter replaced by another tensor is not (compile again).
  Executor(std::shared_ptr<const Graph> graph, const NamedTensors& params,
           ExecutorOptions options = {});
  ~Executor();

  // Runs the graph. Throws std::invalid_argument when the inputs do not match the traced ones
  // (count, shape, strides) and wick::TypeError when a dtype or device differs.
  std::vector<Tensor> run(const std::vector<Tensor>& inputs);

  // The name of the first bound parameter whose layout (shape, strides, dtype, device) is no
  // longer the traced one - its data was replaced in place (set_data, Module.to()) - or "" when
  // all still fit. Replaying over it would read the new bytes with the old layout.
  std::string stale_parameter() const;

  const Graph& graph() const { return *graph_; }
  const MemoryPlan& memory_plan() const { return plan_; }
  bool planned() const { return options_.plan_memory; }
  int64_t kernels_per_run() const { return kernels_per_run_; }
  // Convolutions whose weight was packed ahead of time, and how many of them run Winograd or
  // the direct convolution (the others: im2col + GEMM).
  int64_t prepacked_weights() const { return prepacked_; }
  int64_t winograd_convolutions() const { return winograd_; }
  int64_t direct_convolutions() const { return direct_; }
  int64_t runs() const { return runs_; }
  // Runs that were one CUDA Graph launch, and what became of the capture: "captured (...)", why
  // the graph is not captured, or "capture failed (...)", after which it replays op by op.
  int64_t graph_launches() const { return graph_launches_; }
  bool cuda_graph_captured() const { return graph_state_ == GraphState::Captured; }
  const std::string& cuda_graph_status() const { return cuda_graph_status_; }

 private:
  struct Step {
    const Node* node;
    KernelThunk::RawFn fn = nullptr;  // null: through dispatch() (no kernel on the device)
    std::vector<int> slots;           // env slot per param (-1: the undefined tensor)
    std::vector<int> allocate;        // fresh outputs to allocate before the kernel runs
    std::vector<std::pair<int, int>> versions;  // (new version, the value it updates)
    std::shared_ptr<const cpu::PackedConvWeight> packed_weight;  // conv2d with a constant weight
    std::shared_ptr<const FusedCudaKernel> fused_cuda;  // a fused node on a GPU, compiled here
  };
  // `updated`: by value id, whether the graph writes its storage in place.
  void prepack(Step& step, const std::vector<bool>& updated);
  // Calls the step's kernel, looked up ahead of time or through dispatch(), with `call_args`.
  void call_kernel(const Step& step, const void* call_args, Tensor* const* args);
  // A convolution with its weight packed ahead of time and/or a kernel with a fused epilogue
  // (Note [conv epilogue fusion]): a prepacked convolution runs the epilogue block by block,
  // any other kernel over its whole output afterwards.
  void run_with_epilogue(const Step& step, Tensor* const* args);
  Tensor allocate(const Value& v);
  void bind_leaf(const Value& v, const Tensor& t, const char* what);
  void replay_steps();
  std::vector<Tensor> collect_outputs() const;
  void release_intermediates();
  // Why this graph cannot be a CUDA Graph, or "" when it can.
  std::string cuda_graph_obstacle() const;
  // Captures the replay with `inputs` (bound already); false, with the reason in the status, if
  // the capture failed.
  bool capture(const std::vector<Tensor>& inputs);
  std::vector<Tensor> launch_graph(const std::vector<Tensor>& inputs);

  enum class GraphState { Off, WarmingUp, Ready, Captured };

  std::shared_ptr<const Graph> graph_;
  ExecutorOptions options_;
  MemoryPlan plan_;
  std::vector<Step> steps_;
  std::vector<Tensor> env_;
  std::vector<Tensor> planned_;  // by value id: the arena-backed tensor of a planned buffer
  std::shared_ptr<Storage> arena_;
  Tensor none_;
  int64_t kernels_per_run_ = 0;
  int64_t prepacked_ = 0;
  int64_t winograd_ = 0;
  int64_t direct_ = 0;
  int64_t runs_ = 0;
  GraphState graph_state_ = GraphState::Off;
  std::string cuda_graph_status_;
  std::unique_ptr<CapturedGraph> cuda_graph_;
  std::vector<Tensor> static_inputs_;   // what the captured graph reads its inputs from
  std::vector<Tensor> static_outputs_;  // and writes its outputs to
  std::vector<bool> output_is_fresh_;   // by output: a new value each run (copied out), not a leaf
  int64_t graph_launches_ = 0;
};

}  // namespace wick::jit
