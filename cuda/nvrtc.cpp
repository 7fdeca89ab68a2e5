// The backend's hooks for kernels compiled at run time (Note [backend hooks for static graphs] in
// core/backend.h): NVRTC compiles CUDA C++ source, the runtime loads and launches the result.
// jit/ generates the source (Note [fused chains compiled at run time] in jit/fused_cuda.h).
#include <nvrtc.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>

#include "core/error.h"
#include "cuda/hooks.h"
#include "cuda/runtime.h"

namespace wick::cuda {

namespace {

void check_nvrtc(nvrtcResult result, const char* call) {
  check_state(result == NVRTC_SUCCESS, "cuda.nvrtc", call,
              " failed: ", nvrtcGetErrorString(result));
}

struct ProgramDeleter {
  void operator()(nvrtcProgram* p) const {
    nvrtcDestroyProgram(p);
    delete p;
  }
};

}  // namespace

// A cubin for "sm_XY", PTX for "compute_XY".
std::string compile_source(const std::string& source, const std::string& arch) {
  std::unique_ptr<nvrtcProgram, ProgramDeleter> program(new nvrtcProgram());
  check_nvrtc(
      nvrtcCreateProgram(program.get(), source.c_str(), "wick_runtime.cu", 0, nullptr, nullptr),
      "nvrtcCreateProgram");
  const std::string arch_option = "--gpu-architecture=" + arch;
  const char* options[] = {"--std=c++17", arch_option.c_str()};
  const nvrtcResult compiled = nvrtcCompileProgram(*program, 2, options);
  if (compiled != NVRTC_SUCCESS) {
    size_t log_size = 0;
    nvrtcGetProgramLogSize(*program, &log_size);
    std::string log(log_size, '\0');
    if (log_size > 0) nvrtcGetProgramLog(*program, log.data());
    check_state(false, "cuda.nvrtc", "a run-time kernel did not compile for ", arch, " (",
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

// One loaded kernel per (source, name, architecture), for the process's lifetime: jit/ rebuilds
// its graphs (retraces, recompiles) far more often than their fused chains change.
const void* load_kernel(const std::string& source, const char* name, int device) {
  int major = 0, minor = 0;
  WICK_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  WICK_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  const std::string arch = "sm_" + std::to_string(major * 10 + minor);
  static std::mutex mutex;
  static std::map<std::tuple<std::string, std::string, std::string>, cudaKernel_t> loaded;
  std::lock_guard<std::mutex> lock(mutex);
  auto key = std::make_tuple(source, std::string(name), arch);
  auto found = loaded.find(key);
  if (found != loaded.end()) return found->second;
  const std::string cubin = compile_source(source, arch);
  cudaLibrary_t library;
  WICK_CUDA_CHECK(
      cudaLibraryLoadData(&library, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  cudaKernel_t kernel;
  WICK_CUDA_CHECK(cudaLibraryGetKernel(&kernel, library, name));
  loaded.emplace(std::move(key), kernel);
  return kernel;
}

void launch_kernel(const void* kernel, int device, int64_t n, void** args) {
  LaunchContext launch(device);
  constexpr int kThreads = 256;
  WICK_CUDA_CHECK(cudaLaunchKernel(kernel, dim3(launch.blocks_for(n, kThreads)), dim3(kThreads),
                                   args, 0, launch.stream()));
}

}  // namespace wick::cuda
