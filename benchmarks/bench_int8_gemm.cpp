// int8 GEMM throughput (Note [int8 GEMM] in core/cpu/gemm_int8.h): each backend this processor
// has (portable, AVX-512 VNNI, AMX), next to wick's fp32 GEMM and OpenBLAS's sgemm, in one run
// with the same thread count, at the MNIST CNN's shapes and at squares:
//   conv2  M = 64 * 24 * 24 output pixels, K = 32 * 3 * 3, N = 64 output channels
//   fc1    M = 64 images, K = 9216, N = 128
// An int8 "operation" is a multiply or an add, as a FLOP is, so GOPS and GFLOP/s compare
// directly. The int8 figure includes packing the activations and the fused requantization to
// uint8 (the weight is packed once, as a layer would); the fp32 figure is the bare product.
//
//   ./build/benchmarks/bench_int8_gemm      (add --benchmark_min_time=2 for steadier figures)
#include <cblas.h>
#include <omp.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "benchmarks/side_by_side.h"
#include "core/cpu/gemm.h"
#include "core/cpu/gemm_int8.h"
#include "wick.h"

namespace {

using wick::Tensor;
using wick::cpu::Int8Backend;

struct Shape3 {
  const char* name;
  int64_t m, k, n;
};

void run_int8(benchmark::State& state, Int8Backend backend, Shape3 s) {
  // C[o, c]: o over the N weight rows, c over the M columns (pixels or images).
  Tensor x = wick::randint(0, 256, {s.m, s.k}).to(wick::kUInt8);
  Tensor w = wick::randint(-128, 128, {s.n, s.k}).to(wick::kInt8);
  std::vector<uint8_t> out(s.m * s.n);
  std::vector<float> multiplier(s.n, 1e-4f), bias(s.n, 0.5f);
  wick::cpu::PackedInt8Weight packed_w(s.n, s.k, w.data<int8_t>(), s.k, backend);
  std::vector<uint8_t> packed_x(wick::cpu::int8_panels(s.m) * wick::cpu::kInt8Panel *
                                packed_w.padded_depth());
  const wick::cpu::Requantization rq{multiplier.data(), bias.data(), 128, 0.05f, 10, true};
  for (auto _ : state) {
    wick::cpu::pack_int8_rows(s.m, s.k, x.data<uint8_t>(), s.k, packed_w.padded_depth(),
                              packed_x.data());
    wick::cpu::gemm_u8s8_requantize(packed_w, s.m, packed_x.data(), out.data(), 1, s.n, rq);
    benchmark::ClobberMemory();
  }
  state.counters["GOPS"] = benchmark::Counter(2.0 * s.m * s.n * s.k / 1e9,
                                              benchmark::Counter::kIsIterationInvariantRate);
}

void run_fp32(benchmark::State& state, bool openblas, Shape3 s) {
  Tensor a = wick::rand({s.m, s.k}), b = wick::rand({s.k, s.n}), c = wick::zeros({s.m, s.n});
  const float* pa = a.data<float>();
  const float* pb = b.data<float>();
  float* pc = c.data<float>();
  for (auto _ : state) {
    if (openblas) {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s.m, s.n, s.k, 1.0f, pa, s.k, pb, s.n,
                  0.0f, pc, s.n);
    } else {
      wick::cpu::gemm_packed(s.m, s.n, s.k, 1.0f, {pa, s.k, 1}, {pb, s.n, 1}, 0.0f, {pc, s.n, 1});
    }
    benchmark::ClobberMemory();
  }
  state.counters["GOPS"] = benchmark::Counter(2.0 * s.m * s.n * s.k / 1e9,
                                              benchmark::Counter::kIsIterationInvariantRate);
}

// As in bench_gemm.cpp: Debian's OpenBLAS falls back to its SSE3 kernel on processors it does not
// recognise; give it the AVX-512 (or AVX2) kernel instead, and run again so it reads the setting.
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
  execv("/proc/self/exe", argv);
}

}  // namespace

int main(int argc, char** argv) {
  use_openblas_kernel(argv);
  const char* coretype = std::getenv("OPENBLAS_CORETYPE");
  std::printf("OpenBLAS core %s (%s)\n", openblas_get_corename(),
              coretype ? ("OPENBLAS_CORETYPE=" + std::string(coretype)).c_str()
                       : "detected by OpenBLAS itself");
  benchmark::Initialize(&argc, argv);
  const int threads = omp_get_max_threads();
  openblas_set_num_threads(threads);
  const Shape3 shapes[] = {{"conv2", 36864, 288, 64},
                           {"fc1", 64, 9216, 128},
                           {"512", 512, 512, 512},
                           {"1024", 1024, 1024, 1024},
                           {"2048", 2048, 2048, 2048}};
  std::vector<Int8Backend> backends;
  for (Int8Backend b : {Int8Backend::kPortable, Int8Backend::kAvx512Vnni, Int8Backend::kAmx}) {
    if (wick::cpu::int8_backend_available(b)) backends.push_back(b);
  }
  auto register_one = [](const std::string& name, auto fn) {
    benchmark::RegisterBenchmark(name.c_str(), fn)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime()
        ->Repetitions(3)
        ->ReportAggregatesOnly(true);
  };
  for (const Shape3& s : shapes) {  // interleaved by shape: every kernel sees the same machine
    for (Int8Backend b : backends) {
      // The scalar kernel is the reference, not a contender: only the small shapes.
      if (b == Int8Backend::kPortable && s.m * s.n * s.k > (int64_t(1) << 28)) continue;
      register_one(std::string("int8/") + wick::cpu::int8_backend_name(b) + "/" + s.name,
                   [b, s](benchmark::State& st) { run_int8(st, b, s); });
    }
    register_one(std::string("fp32/wick/") + s.name,
                 [s](benchmark::State& st) { run_fp32(st, false, s); });
    register_one(std::string("fp32/openblas/") + s.name,
                 [s](benchmark::State& st) { run_fp32(st, true, s); });
  }
  wick::bench::CollectingReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);

  auto gops = [&](const std::string& name) {
    return reporter.counter(name + "/repeats:3/real_time_median", "GOPS");
  };
  std::printf("\nint8 and fp32 GEMM, %d threads, GOPS = GFLOP/s (median of 3; - not run)\n",
              threads);
  std::printf("%-6s %6s %6s %6s", "shape", "M", "K", "N");
  for (Int8Backend b : backends) std::printf(" %12s", wick::cpu::int8_backend_name(b));
  std::printf(" %10s %10s %14s\n", "fp32 wick", "OpenBLAS", "best int8/wick");
  for (const Shape3& s : shapes) {
    std::printf("%-6s %6lld %6lld %6lld", s.name, static_cast<long long>(s.m),
                static_cast<long long>(s.k), static_cast<long long>(s.n));
    double best = 0;
    for (Int8Backend b : backends) {
      double g = gops(std::string("int8/") + wick::cpu::int8_backend_name(b) + "/" + s.name);
      best = std::max(best, g);
      if (g > 0) {
        std::printf(" %12.1f", g);
      } else {
        std::printf(" %12s", "-");
      }
    }
    const double w = gops(std::string("fp32/wick/") + s.name);
    const double o = gops(std::string("fp32/openblas/") + s.name);
    std::printf(" %10.1f %10.1f %13.1fx\n", w, o, w > 0 ? best / w : 0.0);
  }
  benchmark::Shutdown();
}
