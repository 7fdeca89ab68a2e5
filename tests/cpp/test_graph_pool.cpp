// The graph pool (Note [graph pool] in core/memory/graph_pool.h) over the simulated device: what a
// CUDA Graph capture relies on, checked without a GPU.
#include <gtest/gtest.h>

#include <thread>

#include "core/memory/caching_allocator.h"
#include "core/memory/device_allocator.h"
#include "core/memory/simulated_device.h"

using namespace wick;
using namespace wick::memory;

namespace {

constexpr size_t MiB = 1 << 20;

struct PoolFixture : ::testing::Test {
  SimulatedDevice device{64 * MiB, SimulatedDevice::Backing::Virtual};
  DeviceAllocator allocator{&device, std::make_unique<CachingAllocator>(&device)};
  int64_t allocated() const { return allocator.stats().allocated_bytes; }
};

}  // namespace

TEST_F(PoolFixture, BlocksFreedDuringACaptureStayReservedAndAreReusedByTheCapture) {
  auto pool = allocator.begin_graph_pool();
  void* a = allocator.allocate(4096);
  allocator.deallocate(a, 4096);
  EXPECT_EQ(allocated(), 4096) << "a block freed during a capture must stay allocated";
  // The captured sequence's next buffer of a size that fits takes the freed one (stream order
  // makes that safe, as in eager), so the pool holds the sequence's peak, not its sum.
  void* b = allocator.allocate(1024);
  EXPECT_EQ(b, a);
  EXPECT_EQ(pool->reused(), 1);
  void* c = allocator.allocate(8192);  // larger than every unused block: a new one
  EXPECT_NE(c, a);
  EXPECT_EQ(pool->blocks(), 2);
  EXPECT_EQ(pool->bytes(), 4096 + 8192);
  allocator.end_graph_pool(*pool);
  EXPECT_FALSE(pool->capturing());

  // After the capture the graph still owns its blocks: freeing one keeps it reserved, and an
  // ordinary allocation does not get it.
  allocator.deallocate(b, 1024);
  void* d = allocator.allocate(1024);
  EXPECT_NE(d, a);
  allocator.deallocate(d, 1024);
  EXPECT_EQ(allocated(), 4096 + 8192);

  // Dropping the pool (with its graph) gives back the unused blocks; `c`, still in use, goes
  // back when its owner frees it.
  pool.reset();
  EXPECT_EQ(allocated(), 8192);
  allocator.deallocate(c, 8192);
  EXPECT_EQ(allocated(), 0);
}

TEST_F(PoolFixture, OtherThreadsDoNotAllocateFromACapturingPool) {
  auto pool = allocator.begin_graph_pool();
  void* a = allocator.allocate(4096);
  allocator.deallocate(a, 4096);
  void* other = nullptr;
  std::thread([&] { other = allocator.allocate(4096); }).join();
  EXPECT_NE(other, a) << "another thread was handed a block the graph replays into";
  EXPECT_EQ(pool->blocks(), 1);
  allocator.deallocate(other, 4096);
  allocator.end_graph_pool(*pool);
  pool.reset();
  EXPECT_EQ(allocated(), 0);
}

TEST_F(PoolFixture, ACaptureCannotNestOnOneThread) {
  auto pool = allocator.begin_graph_pool();
  EXPECT_THROW(allocator.begin_graph_pool(), std::runtime_error);
  allocator.end_graph_pool(*pool);
  auto next = allocator.begin_graph_pool();  // a new capture after the first ended is fine
  allocator.end_graph_pool(*next);
}

TEST_F(PoolFixture, WithoutAPoolFreedBlocksAreReusedAtOnce) {
  // The contrast the pool exists for: eager code gets a freed block back on its next allocation.
  void* a = allocator.allocate(4096);
  allocator.deallocate(a, 4096);
  void* b = allocator.allocate(4096);
  EXPECT_EQ(b, a);
  allocator.deallocate(b, 4096);
  EXPECT_EQ(allocated(), 0);
}
