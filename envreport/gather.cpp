// Collecting the facts of envreport/report.h: compile-time macros for the build, and for the
// machine the CUDA runtime and driver, the loaded cuDNN and NCCL, MPI's library string, CPUID,
// OpenMP and - when the process has it loaded or it is installed - OpenBLAS's chosen kernel.
#include <cpuid.h>
#include <dlfcn.h>
#include <omp.h>

#include <Eigen/Core>
#include <fstream>
#include <thread>

#include "cuda/api.h"
#include "cuda/build_info.h"
#include "distributed/backends.h"
#include "envreport/report.h"

namespace wick::env {
namespace {

std::vector<std::string> compiled_features() {
  std::vector<std::string> f;
#ifdef __AVX2__
  f.push_back("avx2");
#endif
#ifdef __FMA__
  f.push_back("fma");
#endif
#ifdef __F16C__
  f.push_back("f16c");
#endif
#ifdef __AVX512F__
  f.push_back("avx512f");
#endif
#ifdef __AVX512BF16__
  f.push_back("avx512bf16");
#endif
#ifdef __AVX512VNNI__
  f.push_back("avx512vnni");
#endif
#ifdef __AMX_TILE__
  f.push_back("amx_tile");
#endif
  return f;
}

// CPUID leaves 1 and 7 (Intel SDM vol. 2A, "CPUID"). AVX-512 and AMX also need the OS to save
// their registers (XCR0), which is what makes them usable rather than merely present.
std::vector<std::string> machine_features() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  std::vector<std::string> f;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
  bool osxsave = c & (1u << 27);
  unsigned long long xcr0 = 0;
  if (osxsave) {
    unsigned lo = 0, hi = 0;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    xcr0 = (static_cast<unsigned long long>(hi) << 32) | lo;
  }
  bool avx_os = (xcr0 & 0x6) == 0x6, avx512_os = (xcr0 & 0xe6) == 0xe6;
  bool amx_os = (xcr0 & 0x60000) == 0x60000;
  bool fma = c & (1u << 12), f16c = c & (1u << 29);
  unsigned b7 = 0, c7 = 0, d7 = 0, a71 = 0, unused = 0;
  __get_cpuid_count(7, 0, &a, &b7, &c7, &d7);
  __get_cpuid_count(7, 1, &a71, &unused, &unused, &unused);
  if (avx_os && (b7 & (1u << 5))) f.push_back("avx2");
  if (avx_os && fma) f.push_back("fma");
  if (avx_os && f16c) f.push_back("f16c");
  if (avx512_os && (b7 & (1u << 16))) f.push_back("avx512f");
  if (avx512_os && (a71 & (1u << 5))) f.push_back("avx512bf16");
  if (avx512_os && (c7 & (1u << 11))) f.push_back("avx512vnni");
  if (amx_os && (d7 & (1u << 24))) f.push_back("amx_tile");
  return f;
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      return colon == std::string::npos ? line : line.substr(colon + 2);
    }
  }
  return "unknown";
}

// OpenBLAS is not wick's BLAS (its float32 GEMM is core/cpu/gemm.cpp, float64 goes through
// Eigen), but it is NumPy's and Debian PyTorch's - the references wick's benchmarks compare
// with - and on an unrecognised processor it falls back to a slow kernel.
std::string openblas_core() {
  void* lib = dlopen("libopenblas.so.0", RTLD_LAZY | RTLD_NOLOAD);
  if (lib == nullptr) lib = dlopen("libopenblas.so.0", RTLD_LAZY);
  if (lib == nullptr) return "";
  using CoreName = char* (*)();
  auto fn = reinterpret_cast<CoreName>(dlsym(lib, "openblas_get_corename"));
  std::string core = fn != nullptr ? fn() : "";
  dlclose(lib);
  return core;
}

}  // namespace

Facts gather() {
  Facts f;
  f.wick_version = WICK_VERSION_STRING;
  f.build_type = WICK_BUILD_TYPE_STRING;
  f.compiler = "GCC-compatible " __VERSION__;
  f.cxx_flags = WICK_CXX_FLAGS_STRING;
  f.cpu_features_compiled = compiled_features();
  f.eigen_version = std::to_string(EIGEN_WORLD_VERSION) + "." +
                    std::to_string(EIGEN_MAJOR_VERSION) + "." + std::to_string(EIGEN_MINOR_VERSION);
  cuda::BuildInfo built = cuda::build_info();
  f.cuda_built = cuda::is_built();
  f.cuda_toolkit_version = built.toolkit_version;
  f.cuda_architectures = built.architectures;
  f.cudnn_header_version = built.cudnn_header_version;
  f.nccl_header_version = distributed::detail::nccl_header_version_code();
  if (f.cuda_built) {
    f.cuda_runtime_version = cuda::runtime_version();
    f.cuda_driver_version = cuda::driver_version();
    f.cudnn_runtime_version = cuda::cudnn_version();
    f.cudnn_cudart_version = cuda::cudnn_cudart_version();
    for (int i = 0; i < cuda::device_count(); ++i) {
      cuda::DeviceProperties p = cuda::get_device_properties(i);
      f.gpus.push_back({p.name, p.major, p.minor, static_cast<long long>(p.total_memory)});
    }
  }
  f.nccl_runtime_version = distributed::detail::nccl_runtime_version_code();
  f.mpi_library = distributed::detail::mpi_library_version();
  f.cpu_model = cpu_model();
  f.logical_cores = static_cast<int>(std::thread::hardware_concurrency());
  f.omp_max_threads = omp_get_max_threads();
  f.cpu_features = machine_features();
  f.openblas_core = openblas_core();
  return f;
}

}  // namespace wick::env
