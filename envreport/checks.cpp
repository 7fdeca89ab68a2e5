// Verdicts on an environment's facts (envreport/report.h), their text form, and what-if
// overrides.
//
// Note [environment checks]
// Each check compares two versions or capabilities that must agree, in the order a user meets
// the failures (PyTorch's collect_env lists the same facts, leaving the verdict to the reader):
// - driver vs runtime: the driver's CUDA version (cudaDriverGetVersion) must be at least the
//   runtime's major version. Within a major version, CUDA's minor-version compatibility lets a
//   12.8 runtime run on a 12.0 driver, except for PTX compiled by the newer toolkit, which the
//   older driver cannot JIT: a warning.
// - GPU code: a GPU of compute capability X.Y runs SASS built for X.y with y <= Y, else JIT-
//   compiles PTX built for a virtual architecture <= X.Y (slow first launch: a warning), else
//   wick has no code for it: "no kernel image is available" at the first launch.
// - cuDNN: the library's major version must be the headers' (descriptors and enums differ), and
//   it must be built for the runtime's CUDA major version (cuda/cudnn_conv.cpp refuses both).
// - NCCL: the loaded library's major version must be the headers'; an older minor version lacks
//   features (bfloat16, ncclAvg before 2.10).
// - CPU: every instruction set the compiler was allowed to emit (-march=native) must be on this
//   processor, or the first such instruction dies with SIGILL.
// - threads: OpenMP threads beyond the logical cores oversubscribe them.
#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "envreport/report.h"

namespace wick::env {
namespace {

bool has(const std::vector<std::string>& list, const std::string& x) {
  return std::find(list.begin(), list.end(), x) != list.end();
}

Check make(std::string name, Verdict v, std::string detail, std::string hint = "") {
  return {std::move(name), v, std::move(detail), std::move(hint)};
}

struct Arch {
  int number = 0;  // 90 for sm_90
  bool sass = true, ptx = true;
};

// CMake's CUDA_ARCHITECTURES: "80" means SASS and PTX for sm_80, "80-real" SASS only,
// "80-virtual" PTX only; "90a" is arch-specific SASS that runs on 9.0 alone.
std::vector<Arch> parse_architectures(const std::string& text) {
  std::vector<Arch> out;
  std::string item;
  std::stringstream in(text);
  while (std::getline(in, item, item.find(';') != std::string::npos ? ';' : ',')) {
    if (item.empty()) continue;
    Arch a;
    try {
      a.number = std::stoi(item);
    } catch (const std::exception&) {
      continue;  // "native", "all": nothing to check against
    }
    if (item.find("-real") != std::string::npos) a.ptx = false;
    if (item.find("-virtual") != std::string::npos) a.sass = false;
    out.push_back(a);
  }
  return out;
}

Check check_gpu(size_t index, const Gpu& gpu, const std::vector<Arch>& archs) {
  int cc = gpu.major * 10 + gpu.minor;
  std::string name = "gpu " + std::to_string(index) + " code";
  std::string what = gpu.name + " (sm_" + std::to_string(cc) + ")";
  for (const Arch& a : archs)
    if (a.sass && a.number / 10 == gpu.major && a.number <= cc)
      return make(name, Verdict::ok, what + " runs SASS built for sm_" + std::to_string(a.number));
  int best_ptx = 0;
  for (const Arch& a : archs)
    if (a.ptx && a.number <= cc) best_ptx = std::max(best_ptx, a.number);
  if (best_ptx > 0)
    return make(name, Verdict::warn,
                what + " has no SASS in this build; the driver JIT-compiles PTX for compute_" +
                    std::to_string(best_ptx),
                "the first launch of each kernel is slow; add " + std::to_string(cc) +
                    " to WICK_CUDA_ARCHS and rebuild");
  std::string list;
  for (const Arch& a : archs) list += (list.empty() ? "" : ", ") + std::to_string(a.number);
  return make(name, Verdict::fail,
              what + " has no code in this build (architectures: " +
                  (list.empty() ? std::string("none") : list) + ")",
              "rebuild with -DWICK_CUDA_ARCHS=" + std::to_string(cc) +
                  ": kernels would fail with 'no kernel image is available'");
}

}  // namespace

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::ok:
      return "ok";
    case Verdict::info:
      return "info";
    case Verdict::warn:
      return "warn";
    case Verdict::fail:
      return "FAIL";
  }
  return "?";
}

std::string cuda_version_string(int v) {
  return v <= 0 ? "none" : std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

std::string triple_version_string(int v, int major_unit, int minor_unit) {
  if (v <= 0) return "none";
  return std::to_string(v / major_unit) + "." + std::to_string(v % major_unit / minor_unit) + "." +
         std::to_string(v % minor_unit);
}

std::vector<Check> check_environment(const Facts& f) {
  std::vector<Check> checks;
  if (!f.cuda_built) {
    checks.push_back(make("cuda", Verdict::info, "wick was built without CUDA: CPU only"));
  } else if (f.cuda_driver_version == 0) {
    checks.push_back(make("driver vs runtime", Verdict::info,
                          "no NVIDIA driver on this machine: CUDA is unavailable, CPU only"));
  } else {
    int driver_major = f.cuda_driver_version / 1000, runtime = f.cuda_runtime_version;
    std::string detail = "driver supports CUDA " + cuda_version_string(f.cuda_driver_version) +
                         ", wick's runtime is CUDA " + cuda_version_string(runtime);
    if (driver_major < runtime / 1000)
      checks.push_back(make("driver vs runtime", Verdict::fail, detail,
                            "update the NVIDIA driver to one for CUDA " +
                                cuda_version_string(runtime) +
                                " (nvidia-smi shows its CUDA version)"));
    else if (f.cuda_driver_version < runtime)
      checks.push_back(
          make("driver vs runtime", Verdict::warn, detail + " (minor-version compatibility)",
               "runs, but PTX from the newer toolkit cannot be JIT-compiled; update the driver"));
    else
      checks.push_back(make("driver vs runtime", Verdict::ok, detail));
  }
  if (f.cuda_built && f.cudnn_header_version > 0) {
    int built = f.cudnn_header_version, loaded = f.cudnn_runtime_version;
    std::string detail = "built with cuDNN " + triple_version_string(built, 10000, 100) +
                         ", loaded cuDNN " + triple_version_string(loaded, 10000, 100);
    if (loaded / 10000 != built / 10000)
      checks.push_back(make("cudnn", Verdict::fail, detail,
                            "install cuDNN " + std::to_string(built / 10000) +
                                " or rebuild wick against the installed one"));
    else if (f.cudnn_cudart_version / 1000 != f.cuda_runtime_version / 1000)
      checks.push_back(make(
          "cudnn", Verdict::fail,
          detail + ", built for CUDA " + cuda_version_string(f.cudnn_cudart_version) +
              " but the runtime is CUDA " + cuda_version_string(f.cuda_runtime_version),
          "install the cuDNN build for CUDA " + std::to_string(f.cuda_runtime_version / 1000)));
    else if (loaded < built)
      checks.push_back(make("cudnn", Verdict::warn, detail + " (older minor version)",
                            "works for what wick calls; update cuDNN for its fixes"));
    else
      checks.push_back(make("cudnn", Verdict::ok, detail));
  }
  if (f.nccl_header_version > 0) {
    std::string detail =
        "built with NCCL " + triple_version_string(f.nccl_header_version, 10000, 100) +
        ", loaded NCCL " + triple_version_string(f.nccl_runtime_version, 10000, 100);
    if (f.nccl_runtime_version / 10000 != f.nccl_header_version / 10000)
      checks.push_back(make("nccl", Verdict::fail, detail, "install NCCL 2, as the headers were"));
    else if (f.nccl_runtime_version < f.nccl_header_version)
      checks.push_back(make("nccl", Verdict::warn, detail + " (older)",
                            "bfloat16 and ncclAvg need NCCL 2.10; update NCCL"));
    else
      checks.push_back(make("nccl", Verdict::ok, detail));
  }
  std::vector<Arch> archs = parse_architectures(f.cuda_architectures);
  for (size_t i = 0; i < f.gpus.size(); ++i) checks.push_back(check_gpu(i, f.gpus[i], archs));
  std::string missing;
  for (const std::string& feature : f.cpu_features_compiled)
    if (!has(f.cpu_features, feature)) missing += (missing.empty() ? "" : ", ") + feature;
  if (!missing.empty())
    checks.push_back(make("cpu instructions", Verdict::fail,
                          "the build may use " + missing + ", which this processor lacks",
                          "expect SIGILL; rebuild on this machine or with -DWICK_NATIVE=OFF"));
  else
    checks.push_back(
        make("cpu instructions", Verdict::ok, "every instruction set the build uses is present"));
  if (f.logical_cores > 0 && f.omp_max_threads > f.logical_cores)
    checks.push_back(
        make("threads", Verdict::warn,
             std::to_string(f.omp_max_threads) + " OpenMP threads on " +
                 std::to_string(f.logical_cores) + " logical cores",
             "oversubscribed: set OMP_NUM_THREADS (or wick.set_num_threads) to at most " +
                 std::to_string(f.logical_cores)));
  else
    checks.push_back(make("threads", Verdict::ok,
                          std::to_string(f.omp_max_threads) + " OpenMP threads on " +
                              std::to_string(f.logical_cores) + " logical cores"));
  return checks;
}

}  // namespace wick::env
