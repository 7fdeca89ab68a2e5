// The environment report's verdicts (envreport/), each mismatch injected into the facts of a
// machine where everything agrees.
#include <gtest/gtest.h>

#include "envreport/report.h"

namespace {

using wick::env::Check;
using wick::env::Facts;
using wick::env::Verdict;

Facts healthy() {
  Facts f;
  f.cuda_built = true;
  f.cuda_toolkit_version = f.cuda_runtime_version = 13000;
  f.cuda_driver_version = 13000;
  f.cuda_architectures = "80,90";
  f.cudnn_header_version = f.cudnn_runtime_version = 91900;
  f.cudnn_cudart_version = 13000;
  f.nccl_header_version = f.nccl_runtime_version = 22304;
  f.gpus = {{"H200", 9, 0, 141LL << 30}};
  f.cpu_features_compiled = {"avx2", "fma"};
  f.cpu_features = {"avx2", "fma", "f16c"};
  f.logical_cores = 16;
  f.omp_max_threads = 16;
  return f;
}

const Check& find(const std::vector<Check>& checks, const std::string& name) {
  for (const Check& c : checks)
    if (c.name == name) return c;
  throw std::runtime_error("no check named " + name);
}

Check run(const std::vector<std::string>& assumptions, const std::string& name) {
  Facts f = healthy();
  for (const std::string& a : assumptions) wick::env::assume(f, a);
  static std::vector<Check> checks;
  checks = wick::env::check_environment(f);
  return find(checks, name);
}

TEST(Env, HealthyMachinePassesEveryCheck) {
  for (const Check& c : wick::env::check_environment(healthy()))
    EXPECT_EQ(c.verdict, Verdict::ok) << c.name << ": " << c.detail;
}

TEST(Env, OldDriverFailsAndNamesBothVersions) {
  Check c = run({"cuda_driver_version=12040"}, "driver vs runtime");
  EXPECT_EQ(c.verdict, Verdict::fail);
  EXPECT_NE(c.detail.find("12.4"), std::string::npos) << c.detail;
  EXPECT_NE(c.detail.find("13.0"), std::string::npos) << c.detail;
  EXPECT_NE(c.hint.find("driver"), std::string::npos);
  // an older minor version of the same major runs (minor-version compatibility), with a warning
  Check minor =
      run({"cuda_runtime_version=13020", "cuda_driver_version=13000", "cudnn_cudart_version=13020"},
          "driver vs runtime");
  EXPECT_EQ(minor.verdict, Verdict::warn);
  EXPECT_EQ(run({"cuda_driver_version=0"}, "driver vs runtime").verdict, Verdict::info);
}

TEST(Env, CudnnOfAnotherMajorOrBuiltForAnotherCudaFails) {
  Check major = run({"cudnn_runtime_version=80906"}, "cudnn");
  EXPECT_EQ(major.verdict, Verdict::fail);
  EXPECT_NE(major.detail.find("8.9.6"), std::string::npos) << major.detail;
  Check cuda = run({"cudnn_cudart_version=12080"}, "cudnn");
  EXPECT_EQ(cuda.verdict, Verdict::fail);
  EXPECT_NE(cuda.detail.find("built for CUDA 12.8"), std::string::npos) << cuda.detail;
  EXPECT_EQ(run({"cudnn_runtime_version=91000"}, "cudnn").verdict, Verdict::warn);
}

TEST(Env, GpuWithoutCodeFailsAndPtxOnlyWarns) {
  Check old = run({"gpus=sm_75"}, "gpu 0 code");
  EXPECT_EQ(old.verdict, Verdict::fail);
  EXPECT_NE(old.hint.find("WICK_CUDA_ARCHS=75"), std::string::npos) << old.hint;
  EXPECT_EQ(run({"gpus=sm_86"}, "gpu 0 code").verdict, Verdict::ok);  // sm_80 SASS runs on 8.6
  Check newer = run({"gpus=sm_100"}, "gpu 0 code");  // no SASS for 10.x: JIT from compute_90
  EXPECT_EQ(newer.verdict, Verdict::warn);
  EXPECT_NE(newer.detail.find("compute_90"), std::string::npos) << newer.detail;
  EXPECT_EQ(run({"gpus=sm_100", "cuda_architectures=80-real,90-real"}, "gpu 0 code").verdict,
            Verdict::fail);
  EXPECT_EQ(run({"gpus=sm_90,sm_75"}, "gpu 1 code").verdict, Verdict::fail);
}

TEST(Env, NcclAndCpuAndThreads) {
  EXPECT_EQ(run({"nccl_runtime_version=22003"}, "nccl").verdict, Verdict::warn);
  EXPECT_EQ(run({"nccl_runtime_version=30000"}, "nccl").verdict, Verdict::fail);
  Check cpu = run({"cpu_features_compiled=avx2,avx512f"}, "cpu instructions");
  EXPECT_EQ(cpu.verdict, Verdict::fail);
  EXPECT_NE(cpu.detail.find("avx512f"), std::string::npos);
  EXPECT_EQ(run({"omp_max_threads=64"}, "threads").verdict, Verdict::warn);
  EXPECT_EQ(run({"cuda_built=0"}, "cuda").verdict, Verdict::info);
}

TEST(Env, AssumeRejectsUnknownKeysAndBadValues) {
  Facts f = healthy();
  EXPECT_THROW(wick::env::assume(f, "driver=1"), std::invalid_argument);
  EXPECT_THROW(wick::env::assume(f, "cuda_driver_version=12.4"), std::invalid_argument);
  EXPECT_THROW(wick::env::assume(f, "cuda_driver_version=-1"), std::invalid_argument);
  EXPECT_THROW(wick::env::assume(f, "gpus=sm_x"), std::invalid_argument);
  EXPECT_THROW(wick::env::assume(f, "no_equals_sign"), std::invalid_argument);
}

TEST(Env, GatherDescribesThisProcess) {
  Facts f = wick::env::gather();
  EXPECT_EQ(f.wick_version, "0.1.0");
  EXPECT_GT(f.logical_cores, 0);
  EXPECT_GT(f.omp_max_threads, 0);
  std::string text = wick::env::format_report(f, wick::env::check_environment(f));
  EXPECT_NE(text.find("[ok] cpu instructions"), std::string::npos) << text;
}

}  // namespace
