// fp32 GEMM throughput: wick's packed kernel, Eigen, and the OpenBLAS sgemm that Debian's NumPy
// loads (libopenblas, the same shared library), measured in one run with the same thread count.
//
//   ./build/benchmarks/bench_gemm            (add --benchmark_min_time=2 for steadier figures)
#include <cblas.h>
#include <omp.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "benchmarks/side_by_side.h"
#include "core/cpu/gemm.h"
#include "wick.h"

namespace {

using wick::Tensor;

enum class Impl { Wick, Eigen, OpenBLAS };

void run_gemm(benchmark::State& state, Impl impl, int64_t n) {
  Tensor a = wick::rand({n, n}), b = wick::rand({n, n}), c = wick::zeros({n, n});
  const float* pa = a.data<float>();
  const float* pb = b.data<float>();
  float* pc = c.data<float>();
  for (auto _ : state) {
    switch (impl) {
      case Impl::Wick:
        wick::cpu::gemm_packed(n, n, n, 1.0f, {pa, n, 1}, {pb, n, 1}, 0.0f, {pc, n, 1});
        break;
      case Impl::Eigen:
        wick::cpu::gemm_eigen<float>(n, n, n, 1.0f, {pa, n, 1}, {pb, n, 1}, 0.0f, {pc, n, 1});
        break;
      case Impl::OpenBLAS:
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, pa, n, pb, n, 0.0f,
                    pc, n);
        break;
    }
    benchmark::ClobberMemory();
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * n * n * n / 1e9, benchmark::Counter::kIsIterationInvariantRate);
}

// Debian's OpenBLAS picks its kernel by CPU detection, which on a processor it does not recognise
// falls back to the SSE3 "Prescott" kernel: a reference running at a sixth of its speed. A
// fallback on a machine with AVX-512 or AVX2 is replaced by that kernel before anything is
// measured; OpenBLAS reads OPENBLAS_CORETYPE only when it loads, so the program sets it and runs
// itself again. A kernel the detection did recognise is kept.
void use_openblas_kernel(char** argv) {
  if (std::getenv("OPENBLAS_CORETYPE") != nullptr) return;
  const std::string core = openblas_get_corename();
  const bool fallback = core == "Prescott" || core == "Core2" || core == "Penryn" ||
                        core == "Nehalem" || core == "Atom" || core == "Dunnington";
  const char* kernel = __builtin_cpu_supports("avx512f") ? "SkylakeX"
                       : !__builtin_cpu_supports("avx2") ? nullptr
                       : __builtin_cpu_is("amd")         ? "Zen"
                                                         : "Haswell";
  if (!fallback || kernel == nullptr) return;
  setenv("OPENBLAS_CORETYPE", kernel, 1);
  execv("/proc/self/exe", argv);  // returns only on failure: then measure as we are
}

}  // namespace

int main(int argc, char** argv) {
  use_openblas_kernel(argv);
  const char* coretype = std::getenv("OPENBLAS_CORETYPE");
  std::printf("OpenBLAS core %s (%s)\n", openblas_get_corename(),
              coretype ? ("OPENBLAS_CORETYPE=" + std::string(coretype)).c_str()
                       : "detected by OpenBLAS itself");
  benchmark::Initialize(&argc, argv);
  int threads = omp_get_max_threads();
  openblas_set_num_threads(threads);
  const int64_t sizes[] = {256, 512, 1024, 2048};
  const std::pair<Impl, const char*> impls[] = {
      {Impl::Wick, "wick"}, {Impl::Eigen, "eigen"}, {Impl::OpenBLAS, "openblas"}};
  // Interleaved by size, so the three see the same machine state.
  for (int64_t n : sizes) {
    for (auto [impl, name] : impls) {
      benchmark::RegisterBenchmark(("sgemm/" + std::string(name) + "/" + std::to_string(n)).c_str(),
                                   run_gemm, impl, n)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime()
          ->Repetitions(3)
          ->ReportAggregatesOnly(true);
    }
  }
  wick::bench::CollectingReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);

  std::printf(
      "\nfp32 GEMM, C = A @ B with square n x n matrices, %d threads, GFLOP/s (median of 3)\n",
      threads);
  std::printf("%6s %10s %10s %10s %16s\n", "n", "wick", "Eigen", "OpenBLAS", "wick/OpenBLAS");
  for (int64_t n : sizes) {
    auto gflops = [&](const char* name) {
      return reporter.counter(
          "sgemm/" + std::string(name) + "/" + std::to_string(n) + "/repeats:3/real_time_median",
          "GFLOP/s");
    };
    double w = gflops("wick"), e = gflops("eigen"), o = gflops("openblas");
    std::printf("%6lld %10.1f %10.1f %10.1f %15.0f%%\n", static_cast<long long>(n), w, e, o,
                o > 0 ? 100 * w / o : 0.0);
  }
  benchmark::Shutdown();
}
