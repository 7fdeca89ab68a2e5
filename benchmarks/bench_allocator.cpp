// What caching buys: the cost of one allocation plus free.
//  - The caching allocator on the simulated device (a cached block: no device call at all), next
//    to the TensorFlow-style BFC allocator and to malloc/free of the same size.
//  - With a GPU: wick's CUDA allocator next to cudaMalloc/cudaFree, which synchronize the device
//    and cost microseconds to milliseconds.
// Each benchmark is repeated and the table at the end gives medians in nanoseconds. The target
// for the simulated device is at most 200 ns per cached allocation plus free.
//
//   ./build/benchmarks/bench_allocator
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#ifdef WICK_BENCH_CUDA
#include <cuda_runtime.h>
#endif

#include "benchmarks/side_by_side.h"
#include "core/memory/bfc_allocator.h"
#include "core/memory/caching_allocator.h"
#include "core/memory/device_allocator.h"
#include "core/memory/simulated_device.h"
#include "cuda/api.h"
#include "wick.h"

namespace {

using namespace wick::memory;

constexpr size_t kCapacity = size_t{8} << 30;
const int64_t kSizes[] = {512, 64 << 10, 4 << 20};

void BM_caching_alloc_free(benchmark::State& state) {
  SimulatedDevice device(kCapacity, SimulatedDevice::Backing::Virtual);
  CachingAllocator allocator(&device);
  size_t size = static_cast<size_t>(state.range(0));
  allocator.free(allocator.malloc(size, kDefaultStream));  // warm: the segment is now cached
  for (auto _ : state) {
    void* p = allocator.malloc(size, kDefaultStream);
    benchmark::DoNotOptimize(p);
    allocator.free(p);
  }
}

// The same through core's Allocator interface, as Storage calls it (current-stream lookup too).
void BM_device_allocator_alloc_free(benchmark::State& state) {
  SimulatedDevice device(kCapacity, SimulatedDevice::Backing::Virtual);
  DeviceAllocator allocator(&device, std::make_unique<CachingAllocator>(&device));
  size_t size = static_cast<size_t>(state.range(0));
  allocator.deallocate(allocator.allocate(size), size);
  for (auto _ : state) {
    void* p = allocator.allocate(size);
    benchmark::DoNotOptimize(p);
    allocator.deallocate(p, size);
  }
}

void BM_bfc_alloc_free(benchmark::State& state) {
  SimulatedDevice device(kCapacity, SimulatedDevice::Backing::Virtual);
  BfcOptions options;
  options.memory_fraction = 0.5;
  BfcAllocator allocator(&device, options);
  size_t size = static_cast<size_t>(state.range(0));
  for (auto _ : state) {
    void* p = allocator.malloc(size, kDefaultStream);
    benchmark::DoNotOptimize(p);
    allocator.free(p);
  }
}

void BM_malloc_free(benchmark::State& state) {
  size_t size = static_cast<size_t>(state.range(0));
  for (auto _ : state) {
    void* p = std::malloc(size);
    benchmark::DoNotOptimize(p);
    std::free(p);
  }
}

#ifdef WICK_BENCH_CUDA
void BM_cuda_caching_alloc_free(benchmark::State& state) {
  if (!wick::cuda::is_available()) {
    state.SkipWithError("no CUDA device");
    return;
  }
  wick::Allocator* allocator = wick::get_allocator(wick::kCUDA);
  size_t size = static_cast<size_t>(state.range(0));
  allocator->deallocate(allocator->allocate(size), size);
  for (auto _ : state) {
    void* p = allocator->allocate(size);
    benchmark::DoNotOptimize(p);
    allocator->deallocate(p, size);
  }
}

void BM_cudaMalloc_cudaFree(benchmark::State& state) {
  if (!wick::cuda::is_available()) {
    state.SkipWithError("no CUDA device");
    return;
  }
  size_t size = static_cast<size_t>(state.range(0));
  for (auto _ : state) {
    void* p = nullptr;
    if (cudaMalloc(&p, size) != cudaSuccess || cudaFree(p) != cudaSuccess) {
      state.SkipWithError("cudaMalloc failed");
      return;
    }
  }
}
#endif

template <class F>
void register_sizes(const char* name, F f) {
  auto* b = benchmark::RegisterBenchmark(name, f);
  for (int64_t s : kSizes) b->Arg(s);
  b->Repetitions(7)->ReportAggregatesOnly(true)->Unit(benchmark::kNanosecond);
}

}  // namespace

int main(int argc, char** argv) {
  register_sizes("caching", BM_caching_alloc_free);
  register_sizes("caching_via_allocator", BM_device_allocator_alloc_free);
  register_sizes("bfc", BM_bfc_alloc_free);
  register_sizes("malloc", BM_malloc_free);
#ifdef WICK_BENCH_CUDA
  register_sizes("cuda_caching", BM_cuda_caching_alloc_free);
  register_sizes("cudaMalloc", BM_cudaMalloc_cudaFree);
#endif
  benchmark::Initialize(&argc, argv);
  wick::bench::CollectingReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);

  std::printf("\nmedian ns per allocation + free\n%-10s", "size");
  const char* names[] = {"caching", "caching_via_allocator", "bfc",
                         "malloc",  "cuda_caching",          "cudaMalloc"};
  for (const char* n : names) std::printf(" %22s", n);
  std::printf("\n");
  double worst_cached = 0;
  for (int64_t s : kSizes) {
    std::printf("%-10lld", static_cast<long long>(s));
    for (const char* n : names) {
      double sec = reporter.seconds(std::string(n) + "/" + std::to_string(s) + "/repeats:7_median");
      if (sec > 0) {
        std::printf(" %22.1f", sec * 1e9);
      } else {
        std::printf(" %22s", "-");
      }
      if (std::string(n) == "caching") worst_cached = std::max(worst_cached, sec * 1e9);
    }
    std::printf("\n");
  }
  std::printf(
      "cached alloc+free on the simulated device: %.1f ns at worst (target <= 200 ns): %s\n",
      worst_cached, worst_cached <= 200 ? "ok" : "SLOWER THAN TARGET");
  return 0;
}
