// The CUDA runtime layer and the caching allocator on a real device: devices, streams and
// events, PyTorch's allocator test cases (test_cuda.py) with cudaMalloc behind them, the memory
// API, traces, and the pinned allocator.
#include <cstdio>

#include "core/memory/trace.h"
#include "tests/gpu/gpu_test_util.h"

namespace wick {
namespace {

using gpu_testing::gpu;
using gpu_testing::GpuTest;

constexpr int64_t MiB = 1 << 20;

TEST_F(GpuTest, DevicesAndProperties) {
  EXPECT_GE(cuda::device_count(), 1);
  cuda::DeviceProperties p = cuda::get_device_properties(0);
  EXPECT_FALSE(p.name.empty());
  EXPECT_EQ(cuda::get_device_name(0), p.name);
  EXPECT_GE(p.major, 7);
  EXPECT_GT(p.total_memory, 0);
  EXPECT_GT(cuda::runtime_version(), 0);
  EXPECT_GE(cuda::driver_version(), cuda::runtime_version());
  EXPECT_GE(cuda::cudnn_version(), 90000);
  EXPECT_THROW(cuda::get_device_properties(cuda::device_count()), std::out_of_range);
  {
    cuda::DeviceGuard guard(0);
    EXPECT_EQ(cuda::current_device(), 0);
  }
  std::printf("[ info ] %s, compute capability %d.%d, %.1f GiB, CUDA runtime %d, cuDNN %d\n",
              p.name.c_str(), p.major, p.minor, p.total_memory / 1073741824.0,
              cuda::runtime_version(), cuda::cudnn_version());
}

TEST_F(GpuTest, StreamsAndEvents) {
  cuda::Stream side = cuda::Stream::create();
  EXPECT_NE(side, cuda::Stream::default_stream());
  Tensor x = ones({1024, 1024}, gpu());  // filled on the default stream
  cuda::Event filled;
  filled.record();
  cuda::Event start(true), stop(true);
  {
    cuda::StreamGuard guard(side);
    EXPECT_EQ(cuda::Stream::current(), side);
    filled.wait(side);  // the side stream reads x only after the fill
    start.record();
    cuda::spin(1000000);  // ~0.5 ms of a busy stream
    Tensor y = x * 2;     // queued on the side stream
    stop.record();
    cuda::record_stream(y, side);
    EXPECT_FALSE(side.query() && !stop.query());
    side.synchronize();
    EXPECT_TRUE(side.query());
    testing::expect_close(y.sum().cpu(), full({}, 2.0 * 1024 * 1024), 0, 0);
  }
  EXPECT_EQ(cuda::Stream::current(), cuda::Stream::default_stream());
  EXPECT_GT(start.elapsed_ms(stop), 0.0f);
  // The default stream can wait for an event on another stream without the host waiting.
  cuda::Event done;
  {
    cuda::StreamGuard guard(side);
    cuda::spin(1000000);
    done.record();
  }
  done.wait(cuda::Stream::default_stream());
  cuda::synchronize();
  EXPECT_TRUE(done.query());
}

// test_memory_stats: a 256-float tensor adds exactly 1024 allocated bytes. On a fresh stream no
// cached block can serve it, so it also adds exactly one 2 MiB segment.
TEST_F(GpuTest, AllocatorStatsOfA256FloatTensor) {
  cuda::empty_cache();
  cuda::StreamGuard guard(cuda::Stream::create());
  auto before = cuda::memory_stats();
  {
    Tensor x = randn({256}, gpu());
    auto after = cuda::memory_stats();
    EXPECT_EQ(after["active_bytes.all.current"] - before["active_bytes.all.current"], 1024);
    EXPECT_EQ(after["allocated_bytes.all.current"] - before["allocated_bytes.all.current"], 1024);
    EXPECT_EQ(after["reserved_bytes.all.current"] - before["reserved_bytes.all.current"], 2 * MiB);
    EXPECT_EQ(after["segment.small_pool.current"] - before["segment.small_pool.current"], 1);
    EXPECT_EQ(cuda::memory_allocated(), after["allocated_bytes.all.current"]);
    EXPECT_GE(cuda::max_memory_allocated(), cuda::memory_allocated());
  }
  auto end = cuda::memory_stats();
  EXPECT_EQ(end["active_bytes.all.current"], before["active_bytes.all.current"]);
  EXPECT_EQ(end["active_bytes.all.freed"] - before["active_bytes.all.freed"], 1024);
  cuda::empty_cache();
  EXPECT_EQ(cuda::memory_stats()["reserved_bytes.all.current"],
            before["reserved_bytes.all.current"]);
  cuda::reset_peak_memory_stats();
  EXPECT_EQ(cuda::max_memory_allocated(), cuda::memory_allocated());
  std::string summary = cuda::memory_summary();
  EXPECT_NE(summary.find("device ID 0"), std::string::npos) << summary;
  EXPECT_NE(summary.find("GPU reserved memory"), std::string::npos);
}

// test_out_of_memory and test_out_of_memory_retry.
TEST_F(GpuTest, OutOfMemoryIsAnErrorAndTheCacheIsRetried) {
  Tensor keep = ones({4}, gpu());
  testing::expect_error<OutOfMemoryError>([] { empty({int64_t{1} << 45}, gpu()); },
                                          "Tried to allocate 131072.00 GiB");
  testing::expect_error<OutOfMemoryError>([] { empty({int64_t{1} << 58}, gpu()); },
                                          "more than 1EB");
  testing::expect_close((keep * 3).cpu(), full({4}, 3.0), 0, 0);  // the device still works

  cuda::empty_cache();
  size_t free_bytes =
      static_cast<size_t>(cuda::get_device_properties().total_memory - cuda::memory_reserved());
  int64_t half = static_cast<int64_t>(free_bytes * 0.45) / 4 * 4;
  int64_t retries = cuda::memory_stats()["num_alloc_retries"];
  {
    Tensor a = empty({half / 4}, gpu());
    Tensor b = empty({half / 4}, gpu());
  }
  // Both halves are cached; a block bigger than either needs the cache freed first.
  Tensor c = empty({half * 3 / 2 / 4}, gpu());
  EXPECT_EQ(cuda::memory_stats()["num_alloc_retries"], retries + 1);
}

TEST_F(GpuTest, MemoryFractionCapsTheAllocator) {
  cuda::empty_cache();
  int64_t total = cuda::get_device_properties().total_memory;
  EXPECT_THROW(cuda::set_per_process_memory_fraction(-0.1), std::invalid_argument);
  EXPECT_THROW(cuda::set_per_process_memory_fraction(2.0), std::invalid_argument);
  Tensor small = ones({1}, gpu());  // keeps a segment reserved, as in PyTorch's test
  cuda::set_per_process_memory_fraction(0.5);
  {
    int64_t ok = static_cast<int64_t>(total * 0.499) - cuda::memory_reserved();
    Tensor a = empty({ok}, TensorOptions(kUInt8).with_device(gpu()));
  }
  cuda::empty_cache();
  testing::expect_error<OutOfMemoryError>(
      [&] { empty({total / 2}, TensorOptions(kUInt8).with_device(gpu())); }, "out of memory");
  cuda::set_per_process_memory_fraction(1.0);
}

// test_record_stream: memory used on another stream is not reused before that stream is done.
TEST_F(GpuTest, RecordStreamProtectsABlockUntilTheStreamIsDone) {
  cuda::Stream side = cuda::Stream::create();
  void* ptr;
  {
    Tensor x;
    {
      cuda::StreamGuard guard(side);
      x = ones({MiB / 4}, gpu());  // made on the side stream
      ptr = x.data_ptr();
      side.synchronize();
    }
    cuda::spin(200000000);  // the default stream is busy for ~0.1 s...
    Tensor y = x * 2;       // ...then reads x
    cuda::record_stream(x, cuda::Stream::default_stream());
  }  // x freed now: its block waits for an event on the default stream
  {
    cuda::StreamGuard guard(side);
    Tensor z = empty({MiB / 4}, gpu());
    EXPECT_NE(z.data_ptr(), ptr) << "allocation re-used too soon";
  }
  cuda::synchronize();
  {
    cuda::StreamGuard guard(side);
    Tensor z = empty({MiB / 4}, gpu());
    EXPECT_EQ(z.data_ptr(), ptr) << "allocation not re-used";
  }
}

TEST_F(GpuTest, RecordsATraceThatReplays) {
  std::string path = ::testing::TempDir() + "wick_gpu_trace.jsonl";
  cuda::start_memory_trace(path);
  for (int i = 0; i < 5; ++i) {
    Tensor a = randn({256, 256}, gpu());
    Tensor b = matmul(a, a) + 1;
  }
  cuda::stop_memory_trace();
  std::vector<memory::TraceEvent> events = memory::read_trace(path);
  EXPECT_GE(events.size(), 20u);
  for (const char* policy : {"caching", "no_caching", "bfc", "bfc_growth"}) {
    memory::ReplayResult r = memory::replay(events, policy, size_t{80} << 30);
    EXPECT_FALSE(r.out_of_memory) << policy << ": " << r.error;
  }
  std::remove(path.c_str());
}

}  // namespace
}  // namespace wick
