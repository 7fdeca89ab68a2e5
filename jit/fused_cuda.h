// The CUDA kernel of a fused elementwise node, generated and compiled at run time.
//
// Note [fused chains compiled at run time]
// On the CPU a fused chain is interpreted block by block (Note [fused elementwise loop] in
// jit/fused_cpu.h). On a GPU that would still launch a kernel per step, so each chain becomes its
// own kernel instead, as TorchInductor's Triton kernels, XLA's loop fusion and TensorRT's
// pointwise fusion do: fused_cuda_source() writes its CUDA C++ (one thread per output element
// in a grid-stride loop: load each input once, apply every step in registers, store the last
// result), and NVRTC compiles it when the executor is built - ahead of the first run, not on it.
//
// The steps call the functors of core/ops/scalar_math.h, whose text is compiled into the
// generated source (jit/CMakeLists.txt embeds it), so a fused step computes what the op's own
// CUDA kernel (cuda/elementwise.cu) computes. One difference is kept out on purpose: inside one
// expression the compiler may contract a * b + c into an FMA, as nvcc does in the unfused
// kernel, but an empty asm statement after each step stops it from contracting across two
// steps, which the unfused kernels, with a store between them, never do.
//
// Inputs are read in one of three ways, decided from the graph's shapes: contiguous in the
// output's layout (x[i]), one number for all (x[0]), or broadcast/strided (an offset from the
// output index through a layout passed as a kernel argument). The kernel for one chain and one
// set of access kinds is compiled once per process and device architecture and shared by every
// node that needs it (ResNet's many add -> relu chains compile once).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "jit/graph.h"

namespace wick::jit {

enum class OperandAccess : uint8_t { Contiguous, Scalar, Strided };

// The CUDA C++ source of the kernel `wick_fused(float* out, long long n, <per input: const float*
// data, FusedLayout layout>)` for `steps` over inputs read as `access` says. Throws
// std::runtime_error for a step that is not fusible (fusible_op) or names a missing operand.
std::string fused_cuda_source(const std::vector<FusedStep>& steps,
                              const std::vector<OperandAccess>& access);

// How input `input` of a fused node with output `out` is read (the rules above).
OperandAccess operand_access(const Shape& input, const Strides& input_strides, const Shape& out);

// The access of each input of the fused node `node` of `graph`, and the source of its kernel: on
// any device, so that a CPU-only machine can show what a GPU would compile (Graph.cuda_sources()
// in Python).
std::vector<OperandAccess> fused_operand_access(const Node& node, const Graph& graph);
std::string fused_cuda_source(const Node& node, const Graph& graph);

// Whether this build can compile and run fused CUDA kernels: the CUDA backend has the run-time
// compilation hooks (Note [backend hooks for static graphs] in core/backend.h; NVRTC in a CUDA
// build, none without CUDA).
bool cuda_fusion_available();

// NVRTC's translation of `source` for `arch` (the backend's compile_source hook): PTX for
// "compute_90", a cubin for "sm_90". Needs no GPU, so tests compile every generated kernel on any
// machine of a CUDA build. Throws std::runtime_error with the compiler's log when the source does
// not compile, and in a build without CUDA.
std::string nvrtc_compile(const std::string& source, const std::string& arch);

// One fused CUDA node, compiled for the device it runs on (jit/fused_cuda.cpp, through the
// backend's hooks). run() takes the node's arguments as the executor binds them (inputs, then the
// contiguous float32 output) and launches on the device's current stream.
class FusedCudaKernel {
 public:
  FusedCudaKernel(const Node& node, const Graph& graph);
  ~FusedCudaKernel();
  FusedCudaKernel(const FusedCudaKernel&) = delete;
  FusedCudaKernel& operator=(const FusedCudaKernel&) = delete;

  void run(Tensor* const* args) const;
  const std::string& source() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace wick::jit
