// The environment report behind `wick_env` and `python -m wick.utils.collect_env`: what this
// build was compiled with and what this machine has, then a verdict per compatibility check with
// a one-line hint (Note [environment checks] in envreport/checks.cpp). The facts are plain data, so
// a test (or a curious student) can ask what wick would say about another machine:
// check_environment() is a pure function of them.
#pragma once
#include <map>
#include <string>
#include <vector>

namespace wick::env {

struct Gpu {
  std::string name;
  int major = 0, minor = 0;  // compute capability
  long long memory_bytes = 0;
};

struct Facts {
  // the build
  std::string wick_version, build_type, compiler, cxx_flags;
  bool cuda_built = false;
  int cuda_toolkit_version = 0;                    // 13000 = 13.0
  std::string cuda_architectures;                  // "80,90", "90-real", "80-virtual" ...
  int cudnn_header_version = 0;                    // 91900 = 9.19.0
  int nccl_header_version = 0;                     // 22304 = 2.23.4
  std::vector<std::string> cpu_features_compiled;  // instruction sets the compiler may emit
  std::string eigen_version;
  // the machine
  int cuda_runtime_version = 0, cuda_driver_version = 0;  // 0: none
  int cudnn_runtime_version = 0, cudnn_cudart_version = 0;
  int nccl_runtime_version = 0;
  std::string mpi_library;
  std::vector<Gpu> gpus;
  std::string cpu_model;
  int logical_cores = 0, omp_max_threads = 0;
  std::vector<std::string> cpu_features;  // avx2, fma, f16c, avx512f, avx512bf16, amx_tile ...
  std::string openblas_core;              // the kernel OpenBLAS picked ("" if not loaded)
};

enum class Verdict { ok, info, warn, fail };
const char* verdict_name(Verdict v);

struct Check {
  std::string name;  // "driver vs runtime", "gpu 0 code", ...
  Verdict verdict = Verdict::ok;
  std::string detail;  // what was compared, with the values
  std::string hint;    // one line: what to do (empty when ok)
};

Facts gather();  // this build, this process, this machine
std::vector<Check> check_environment(const Facts& facts);

// "13.0" from 13000 (CUDA), "9.19.0" from 91900 (cuDNN), "2.23.4" from 22304 (NCCL).
std::string cuda_version_string(int v);
std::string triple_version_string(int v, int major_unit, int minor_unit);

// Overrides facts from "key=value" strings (for what-if reports and tests): the scalar fields by
// name, gpus as "sm_90,sm_75", the feature lists as "avx2,fma". Throws std::invalid_argument
// naming an unknown key or a bad value.
void assume(Facts& facts, const std::string& key_equals_value);

// The report as text: facts, then one line per check.
std::string format_report(const Facts& facts, const std::vector<Check>& checks);
// The facts as flat key -> value strings (the Python binding builds its dict from these).
std::map<std::string, std::string> to_map(const Facts& facts);

}  // namespace wick::env
