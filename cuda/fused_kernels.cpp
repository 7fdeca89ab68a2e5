// Fused elementwise chains as CUDA kernels compiled by NVRTC (Note [fused chains compiled at run
// time] in jit/fused_cuda.h): compile, load, launch.
#include <nvrtc.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "cuda/runtime.h"
#include "jit/fused_cpu.h"
#include "jit/fused_cuda.h"

namespace wick::jit {

namespace {

// jit/fused_cuda_source.cpp's wick_fused_layout, field for field.
struct FusedLayout {
  int64_t dims;
  int64_t sizes[kMaxDims];
  int64_t strides[kMaxDims];
};

void check_nvrtc(nvrtcResult result, const char* call) {
  check_state(result == NVRTC_SUCCESS, "jit.nvrtc", call, " failed: ", nvrtcGetErrorString(result));
}

struct ProgramDeleter {
  void operator()(nvrtcProgram* p) const {
    nvrtcDestroyProgram(p);
    delete p;
  }
};

// A cubin for "sm_XY", PTX for "compute_XY".
std::string translate(const std::string& source, const std::string& arch) {
  std::unique_ptr<nvrtcProgram, ProgramDeleter> program(new nvrtcProgram());
  check_nvrtc(
      nvrtcCreateProgram(program.get(), source.c_str(), "wick_fused.cu", 0, nullptr, nullptr),
      "nvrtcCreateProgram");
  const std::string arch_option = "--gpu-architecture=" + arch;
  const char* options[] = {"--std=c++17", arch_option.c_str()};
  const nvrtcResult compiled = nvrtcCompileProgram(*program, 2, options);
  if (compiled != NVRTC_SUCCESS) {
    size_t log_size = 0;
    nvrtcGetProgramLogSize(*program, &log_size);
    std::string log(log_size, '\0');
    if (log_size > 0) nvrtcGetProgramLog(*program, log.data());
    check_state(false, "jit.nvrtc", "a fused kernel did not compile for ", arch, " (",
                nvrtcGetErrorString(compiled), "):\n", log.c_str());
  }
  const bool cubin = arch.rfind("sm_", 0) == 0;
  size_t size = 0;
  check_nvrtc(cubin ? nvrtcGetCUBINSize(*program, &size) : nvrtcGetPTXSize(*program, &size),
              "getting the compiled size");
  std::string code(size, '\0');
  check_nvrtc(cubin ? nvrtcGetCUBIN(*program, code.data()) : nvrtcGetPTX(*program, code.data()),
              "getting the compiled code");
  return code;
}

// One loaded kernel per (source, architecture), for the process's lifetime: graphs are rebuilt
// (retraced, recompiled) far more often than their chains change.
cudaKernel_t load_kernel(const std::string& source, const std::string& arch) {
  static std::mutex mutex;
  static std::map<std::pair<std::string, std::string>, cudaKernel_t> loaded;
  std::lock_guard<std::mutex> lock(mutex);
  auto key = std::make_pair(source, arch);
  auto found = loaded.find(key);
  if (found != loaded.end()) return found->second;
  const std::string cubin = translate(source, arch);
  cudaLibrary_t library;
  WICK_CUDA_CHECK(
      cudaLibraryLoadData(&library, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  cudaKernel_t kernel;
  WICK_CUDA_CHECK(cudaLibraryGetKernel(&kernel, library, "wick_fused"));
  loaded.emplace(std::move(key), kernel);
  return kernel;
}

}  // namespace

bool cuda_fusion_available() { return true; }

std::string nvrtc_compile(const std::string& source, const std::string& arch) {
  return translate(source, arch);
}

struct FusedCudaKernel::Impl {
  std::string source;
  std::vector<OperandAccess> access;
  cudaKernel_t kernel = nullptr;
};

FusedCudaKernel::FusedCudaKernel(const Node& node, const Graph& graph)
    : impl_(std::make_unique<Impl>()) {
  check_state(node.device.type == kCUDA, "jit.FusedCudaKernel",
              "needs a node on a CUDA device; got ", node.device.str());
  impl_->access = fused_operand_access(node, graph);
  impl_->source = fused_cuda_source(node.steps, impl_->access);
  const int device = node.device.index;
  int major = 0, minor = 0;
  WICK_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  WICK_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  impl_->kernel = load_kernel(impl_->source, "sm_" + std::to_string(major * 10 + minor));
}

FusedCudaKernel::~FusedCudaKernel() = default;

const std::string& FusedCudaKernel::source() const { return impl_->source; }

void FusedCudaKernel::run(Tensor* const* args) const {
  const size_t inputs = impl_->access.size();
  Tensor& out = *args[inputs];
  check_state(out.dtype() == kFloat32 && out.is_contiguous() && out.device().type == kCUDA,
              "jit.FusedCudaKernel", "the output must be contiguous float32 on a CUDA device");
  const int64_t n = out.numel();
  if (n == 0) return;
  float* out_data = out.data<float>();
  long long count = n;
  std::vector<const float*> data(inputs);
  std::vector<FusedLayout> layouts(inputs);
  std::vector<void*> params{&out_data, &count};
  for (size_t k = 0; k < inputs; ++k) {
    const Tensor& t = *args[k];
    check_state(t.dtype() == kFloat32 && t.device() == out.device(), "jit.FusedCudaKernel",
                "input ", k, " must be float32 on ", out.device().str(), "; got ",
                dtype_name(t.dtype()), " on ", t.device().str());
    check_state(operand_access(t.shape(), t.strides(), out.shape()) == impl_->access[k],
                "jit.FusedCudaKernel", "input ", k, " has another layout than it was compiled for");
    data[k] = t.data<float>();
    params.push_back(&data[k]);
    if (impl_->access[k] != OperandAccess::Strided) continue;
    FusedLayout& l = layouts[k];
    l.dims = out.dim();
    const Strides strides = broadcast_strides(t, out.shape());
    for (int64_t d = 0; d < out.dim(); ++d) {
      l.sizes[d] = out.size(d);
      l.strides[d] = strides[d];
    }
    params.push_back(&l);
  }
  cuda::LaunchContext launch(out);
  constexpr int kThreads = 256;
  WICK_CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(impl_->kernel),
                                   dim3(launch.blocks_for(n, kThreads)), dim3(kThreads),
                                   params.data(), 0, launch.stream()));
}

}  // namespace wick::jit
