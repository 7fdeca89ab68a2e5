// Op overhead and memory throughput.
//  - The cost of one tiny op from C++ (a 4-element add): dispatch, allocation and bookkeeping,
//    since the arithmetic itself is a few nanoseconds.
//  - add, mul and exp on 16M floats next to memcpy of the same bytes: an elementwise op is
//    memory-bound, so memcpy's bandwidth is the ceiling it should approach.
//
//   ./build/benchmarks/bench_ops
#include <omp.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "benchmarks/side_by_side.h"
#include "wick.h"

namespace {

using wick::Tensor;

constexpr int64_t kBig = 16 << 20;  // 16M floats = 64 MiB per tensor

void BM_add_4_elements(benchmark::State& state) {
  Tensor a = wick::ones({4}), b = wick::ones({4});
  for (auto _ : state) {
    Tensor c = wick::add(a, b);
    benchmark::DoNotOptimize(c.data_ptr());
  }
}

void BM_add_4_elements_in_place(benchmark::State& state) {
  Tensor a = wick::ones({4}), b = wick::ones({4});
  for (auto _ : state) a.add_(b);
}

void BM_memcpy(benchmark::State& state) {
  Tensor src = wick::ones({kBig}), dst = wick::empty({kBig});
  char* d = static_cast<char*>(dst.data_ptr());
  const char* s = static_cast<const char*>(src.data_ptr());
  int64_t n = src.nbytes();
  for (auto _ : state) {
    // One memcpy per thread over its own half, the same split the elementwise kernels use.
#pragma omp parallel
    {
      int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
      std::memcpy(d + n * t / nt, s + n * t / nt, n * (t + 1) / nt - n * t / nt);
    }
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * 2 * src.nbytes());  // read + write
}

// STREAM's "copy" kernel: a plain loop, for a second view of the bandwidth ceiling (glibc's
// memcpy switches strategies with size and is not always the fastest copy on a given machine).
void BM_stream_copy(benchmark::State& state) {
  Tensor src = wick::ones({kBig}), dst = wick::empty({kBig});
  float* d = dst.data<float>();
  const float* s = src.data<float>();
  for (auto _ : state) {
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < kBig; ++i) d[i] = s[i];
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * 2 * src.nbytes());
}

// `bytes_per_element` counts every read and write the op must make.
template <class Op>
void run_op(benchmark::State& state, Op op, int bytes_per_element) {
  Tensor a = wick::rand({kBig}), b = wick::rand({kBig});
  for (auto _ : state) {
    Tensor c = op(a, b);
    benchmark::DoNotOptimize(c.data_ptr());
  }
  state.SetBytesProcessed(state.iterations() * bytes_per_element * kBig);
}

void BM_add(benchmark::State& s) {
  run_op(
      s, [](Tensor& a, Tensor& b) { return a + b; }, 12);
}
void BM_add_in_place(benchmark::State& s) {
  run_op(
      s, [](Tensor& a, Tensor& b) { return a.add_(b); }, 12);
}
void BM_mul(benchmark::State& s) {
  run_op(
      s, [](Tensor& a, Tensor& b) { return a * b; }, 12);
}
void BM_exp(benchmark::State& s) {
  run_op(
      s, [](Tensor& a, Tensor&) { return a.exp(); }, 8);
}

}  // namespace

BENCHMARK(BM_add_4_elements);
BENCHMARK(BM_add_4_elements_in_place);
BENCHMARK(BM_memcpy)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_stream_copy)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_add)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_add_in_place)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_mul)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_exp)->Unit(benchmark::kMillisecond)->UseRealTime();

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  wick::bench::CollectingReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  auto gbps = [&](const char* name) {
    return reporter.counter(std::string(name) + "/real_time", "bytes_per_second") / 1e9;
  };
  double copy = gbps("BM_memcpy");
  std::printf(
      "\nper-op cost from C++, 4-element float add: %.0f ns (out of place), %.0f ns "
      "(in place)\n",
      reporter.seconds("BM_add_4_elements") * 1e9,
      reporter.seconds("BM_add_4_elements_in_place") * 1e9);
  std::printf("\n16M float32 elements, %d threads: bytes each op must move / time\n",
              omp_get_max_threads());
  std::printf("%-22s %8s %12s\n", "op", "GB/s", "vs memcpy");
  for (const char* name :
       {"BM_memcpy", "BM_stream_copy", "BM_add", "BM_add_in_place", "BM_mul", "BM_exp"}) {
    double g = gbps(name);
    std::printf("%-22s %8.1f %11.0f%%\n", name + 3, g, copy > 0 ? 100 * g / copy : 0.0);
  }
  std::printf(
      "(out-of-place ops also fault in a fresh 64 MiB output each call; in-place ones "
      "do not)\n");
  benchmark::Shutdown();
}
