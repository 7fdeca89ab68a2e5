// The caching allocator on the simulated device: PyTorch's rules and test cases (design-facts.md
// sections 1 and 9), the other policies, traces, and a randomized stress test of the invariants.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <random>

#include "core/memory/bfc_allocator.h"
#include "core/memory/caching_allocator.h"
#include "core/memory/device_allocator.h"
#include "core/memory/simulated_device.h"
#include "core/memory/trace.h"
#include "tests/cpp/test_util.h"

namespace wick::memory {
namespace {

constexpr size_t KiB = 1024, MiB = 1024 * 1024, GiB = MiB * 1024;

using Backing = SimulatedDevice::Backing;

int64_t cur(const StatArray& s, StatType t = kAggregate) { return s[t].current; }

// A caching allocator over a virtual simulated device of `capacity` bytes.
struct Fixture {
  explicit Fixture(size_t capacity = 1 * GiB, AllocatorConfig config = AllocatorConfig())
      : device(capacity, Backing::Virtual), allocator(&device, std::move(config)) {}
  DeviceStats stats() const { return allocator.stats(); }
  SimulatedDevice device;
  CachingAllocator allocator;
};

// ---- sizes and pools -------------------------------------------------------------------------

TEST(CachingAllocator, RoundsToMultiplesOf512) {
  EXPECT_EQ(CachingAllocator::round_size(1), 512u);
  EXPECT_EQ(CachingAllocator::round_size(512), 512u);
  EXPECT_EQ(CachingAllocator::round_size(513), 1024u);
  EXPECT_EQ(CachingAllocator::round_size(1 * MiB), 1 * MiB);
  EXPECT_EQ(CachingAllocator::round_size(1 * MiB + 1), 1 * MiB + 512);
}

TEST(CachingAllocator, RoundupPowerOfTwoDivisions) {
  // PyTorch's documented example: 1200 B with 4 divisions of [1024, 2048) -> 1280.
  EXPECT_EQ(CachingAllocator::roundup_power2_next_division(1200, 4), 1280u);
  EXPECT_EQ(CachingAllocator::roundup_power2_next_division(1024, 4), 1024u);
  EXPECT_EQ(CachingAllocator::roundup_power2_next_division(1800, 4), 2048u);
  AllocatorConfig config = AllocatorConfig::parse("roundup_power2_divisions:4");
  // round_size applies divisions only above 512 * divisions (2048); below, 512 B rounding.
  EXPECT_EQ(CachingAllocator::round_size(1200, config), 1536u);
  EXPECT_EQ(CachingAllocator::round_size(5000, config), 5120u);  // [4096, 8192) in 1024 steps
  EXPECT_EQ(CachingAllocator::round_size(5 * MiB + 1, config), 6 * MiB);
}

TEST(CachingAllocator, SegmentSizes) {
  EXPECT_EQ(CachingAllocator::segment_size(CachingAllocator::round_size(4 * KiB)), 2 * MiB);
  EXPECT_EQ(CachingAllocator::segment_size(1 * MiB), 2 * MiB);  // <= 1 MiB: small pool
  EXPECT_EQ(CachingAllocator::segment_size(1 * MiB + 512), 20 * MiB);
  EXPECT_EQ(CachingAllocator::segment_size(5 * MiB), 20 * MiB);
  EXPECT_EQ(CachingAllocator::segment_size(10 * MiB), 10 * MiB);  // exactly 10 MiB: own size
  EXPECT_EQ(CachingAllocator::segment_size(11 * MiB), 12 * MiB);  // rounded to 2 MiB
}

TEST(CachingAllocator, PoolsAndSegmentsFromTheDevice) {
  Fixture f;
  void* small = f.allocator.malloc(4 * KiB, kDefaultStream);
  DeviceStats s = f.stats();
  EXPECT_EQ(cur(s.reserved_bytes, kSmallPool), int64_t(2 * MiB));
  EXPECT_EQ(cur(s.segment, kSmallPool), 1);
  EXPECT_EQ(cur(s.allocated_bytes, kSmallPool), int64_t(4 * KiB));
  void* big = f.allocator.malloc(11 * MiB, kDefaultStream);  // 12 MiB segment, used whole
  void* mid = f.allocator.malloc(5 * MiB, kDefaultStream);   // 20 MiB segment, split
  s = f.stats();
  EXPECT_EQ(cur(s.reserved_bytes, kLargePool), int64_t(20 * MiB + 12 * MiB));
  EXPECT_EQ(cur(s.segment), 3);
  EXPECT_EQ(s.num_device_alloc, 3);
  EXPECT_EQ(f.device.bytes_in_use(), int64_t(34 * MiB));
  // A second small block comes from the same 2 MiB segment.
  void* small2 = f.allocator.malloc(100, kDefaultStream);
  EXPECT_EQ(f.stats().num_device_alloc, 3);
  EXPECT_EQ(reinterpret_cast<char*>(small2), reinterpret_cast<char*>(small) + 4 * KiB);
  for (void* p : {small, mid, big, small2}) f.allocator.free(p);
  f.allocator.empty_cache();
  EXPECT_EQ(f.device.bytes_in_use(), 0);
}

// ---- split and coalesce ----------------------------------------------------------------------

TEST(CachingAllocator, LargeSplitLeavesInactiveSplitBlock) {
  Fixture f;
  void* a = f.allocator.malloc(MiB + MiB / 2, kDefaultStream);  // 1.5 MiB from a 20 MiB segment
  DeviceStats s = f.stats();
  EXPECT_EQ(cur(s.reserved_bytes), int64_t(20 * MiB));
  EXPECT_EQ(cur(s.allocated_bytes), int64_t(MiB + MiB / 2));
  EXPECT_EQ(cur(s.inactive_split), 1);
  EXPECT_EQ(cur(s.inactive_split_bytes), int64_t(18 * MiB + MiB / 2));
  f.allocator.free(a);
  s = f.stats();
  EXPECT_EQ(cur(s.inactive_split), 0);  // coalesced back into one unsplit block
  EXPECT_EQ(cur(s.inactive_split_bytes), 0);
}

TEST(CachingAllocator, LargeRemainderOfAtMost1MiBIsNotSplit) {
  Fixture f;
  void* a = f.allocator.malloc(19 * MiB + MiB / 2, kDefaultStream);  // 20 MiB segment, 0.5 left
  DeviceStats s = f.stats();
  EXPECT_EQ(cur(s.reserved_bytes), int64_t(20 * MiB));
  EXPECT_EQ(cur(s.allocated_bytes), int64_t(20 * MiB));  // handed out whole
  EXPECT_EQ(cur(s.requested_bytes), int64_t(19 * MiB + MiB / 2));
  EXPECT_EQ(cur(s.inactive_split), 0);
  f.allocator.free(a);
  // A cached 20 MiB block serves a 9 MiB request by splitting (remainder 11 MiB > 1 MiB).
  void* b = f.allocator.malloc(9 * MiB, kDefaultStream);
  EXPECT_EQ(b, a);
  EXPECT_EQ(cur(f.stats().inactive_split_bytes), int64_t(11 * MiB));
  f.allocator.free(b);
}

TEST(CachingAllocator, SmallPoolSplitsDownTo512Bytes) {
  Fixture f;
  void* a = f.allocator.malloc(2 * MiB - 512, kDefaultStream);  // > 1 MiB: large pool
  EXPECT_EQ(cur(f.stats().allocated_bytes, kLargePool), int64_t(2 * MiB - 512));
  void* b = f.allocator.malloc(MiB - 512, kDefaultStream);  // small pool, 2 MiB segment
  DeviceStats s = f.stats();
  EXPECT_EQ(cur(s.inactive_split_bytes, kSmallPool), int64_t(MiB + 512));
  void* c = f.allocator.malloc(MiB, kDefaultStream);  // leaves exactly 512 B: still split
  s = f.stats();
  EXPECT_EQ(cur(s.inactive_split_bytes, kSmallPool), 512);
  EXPECT_EQ(cur(s.segment, kSmallPool), 1);
  for (void* p : {a, b, c}) f.allocator.free(p);
}

TEST(CachingAllocator, FreeCoalescesNeighbours) {
  Fixture f;
  void* a = f.allocator.malloc(2 * MiB, kDefaultStream);
  void* b = f.allocator.malloc(2 * MiB, kDefaultStream);
  void* c = f.allocator.malloc(2 * MiB, kDefaultStream);
  EXPECT_EQ(f.stats().num_device_alloc, 1);  // all three from one 20 MiB segment
  f.allocator.free(b);
  EXPECT_EQ(cur(f.stats().inactive_split), 2);  // b's hole and the segment's tail
  f.allocator.free(a);                          // merges with b
  DeviceStats s = f.stats();
  EXPECT_EQ(cur(s.inactive_split), 2);
  EXPECT_EQ(cur(s.inactive_split_bytes), int64_t(4 * MiB + 14 * MiB));
  std::vector<SegmentInfo> segments = f.allocator.snapshot();
  ASSERT_EQ(segments.size(), 1u);
  ASSERT_EQ(segments[0].blocks.size(), 3u);
  EXPECT_EQ(segments[0].blocks[0].size, 4 * MiB);
  f.allocator.free(c);  // the whole segment is one free block again
  s = f.stats();
  EXPECT_EQ(cur(s.inactive_split), 0);
  EXPECT_EQ(f.allocator.snapshot()[0].blocks.size(), 1u);
  f.allocator.empty_cache();
  s = f.stats();
  EXPECT_EQ(cur(s.reserved_bytes), 0);
  EXPECT_EQ(s.num_device_free, 1);
}

TEST(CachingAllocator, BestFitTakesTheSmallestBlockThatFits) {
  Fixture f;
  void* big = f.allocator.malloc(12 * MiB, kDefaultStream);     // 12 MiB segment
  void* medium = f.allocator.malloc(10 * MiB, kDefaultStream);  // 10 MiB segment
  f.allocator.free(big);
  f.allocator.free(medium);
  void* p = f.allocator.malloc(10 * MiB, kDefaultStream);
  EXPECT_EQ(p, medium);
  f.allocator.free(p);
}

// ---- stats as PyTorch reports them -------------------------------------------------------------

TEST(CachingAllocator, A256FloatTensorAddsExactly1024BytesAndOneSegment) {
  SimulatedDevice device(64 * MiB, Backing::Host);
  DeviceAllocator allocator(&device, std::make_unique<CachingAllocator>(&device));
  Allocator* previous = set_allocator(kCPU, &allocator);
  auto& policy = static_cast<CachingAllocator&>(allocator.policy());
  std::map<std::string, int64_t> before, after;
  {
    before = stats_to_map(policy.stats());
    Tensor x = randn({256});
    after = stats_to_map(policy.stats());
    EXPECT_EQ(after["active_bytes.all.current"] - before["active_bytes.all.current"], 1024);
    EXPECT_EQ(after["allocated_bytes.all.current"] - before["allocated_bytes.all.current"], 1024);
    EXPECT_EQ(after["reserved_bytes.all.current"] - before["reserved_bytes.all.current"],
              int64_t(2 * MiB));
    EXPECT_EQ(after["segment.all.current"] - before["segment.all.current"], 1);
    EXPECT_EQ(allocator.stats().allocated_bytes, after["allocated_bytes.all.current"]);
  }
  policy.empty_cache();
  set_allocator(kCPU, previous);
  std::map<std::string, int64_t> end = stats_to_map(policy.stats());
  EXPECT_EQ(end["active_bytes.all.current"], before["active_bytes.all.current"]);
  EXPECT_EQ(end["active_bytes.all.freed"] - before["active_bytes.all.freed"], 1024);
  EXPECT_EQ(end["reserved_bytes.all.current"], 0);
  EXPECT_EQ(device.bytes_in_use(), 0);
}

TEST(CachingAllocator, MemoryStatsKeysAndPeaks) {
  Fixture f;
  void* a = f.allocator.malloc(3 * MiB, kDefaultStream);
  f.allocator.free(a);
  std::map<std::string, int64_t> m = stats_to_map(f.stats());
  for (const char* key :
       {"allocation.all.current", "segment.small_pool.peak", "active.large_pool.allocated",
        "inactive_split.all.freed", "allocated_bytes.all.peak", "reserved_bytes.all.current",
        "active_bytes.all.current", "inactive_split_bytes.all.current",
        "requested_bytes.all.current", "oversize_allocations.current", "oversize_segments.peak",
        "num_alloc_retries", "num_ooms", "num_sync_all_streams", "num_device_alloc",
        "num_device_free", "max_split_size"}) {
    EXPECT_EQ(m.count(key), 1u) << key;
  }
  EXPECT_EQ(m["allocated_bytes.all.peak"], int64_t(3 * MiB));
  EXPECT_EQ(m["allocated_bytes.all.allocated"], int64_t(3 * MiB));
  EXPECT_EQ(m["allocated_bytes.all.freed"], int64_t(3 * MiB));
  EXPECT_EQ(m["max_split_size"], -1);
  f.allocator.reset_peak_stats();
  EXPECT_EQ(f.stats().allocated_bytes[kAggregate].peak, 0);
  f.allocator.reset_accumulated_stats();
  EXPECT_EQ(f.stats().allocated_bytes[kAggregate].allocated, 0);
  EXPECT_EQ(f.stats().num_device_alloc, 0);
}

TEST(CachingAllocator, MemorySummaryTable) {
  Fixture f;
  void* a = f.allocator.malloc(3 * MiB, kDefaultStream);
  std::string summary = memory_summary(f.stats(), "device 0");
  EXPECT_NE(summary.find("CUDA OOMs: 0"), std::string::npos) << summary;
  EXPECT_NE(summary.find("Allocated memory"), std::string::npos);
  EXPECT_NE(summary.find("from large pool"), std::string::npos);
  EXPECT_NE(summary.find("GPU reserved memory"), std::string::npos);
  EXPECT_NE(summary.find("Non-releasable allocs"), std::string::npos);
  EXPECT_NE(summary.find("3072 KiB"), std::string::npos) << summary;  // 3 MiB < 768 MiB... in KiB
  std::istringstream lines(summary);
  for (std::string line; std::getline(lines, line);) EXPECT_EQ(line.size(), 77u) << line;
  std::string short_summary = memory_summary(f.stats(), "device 0", true);
  EXPECT_EQ(short_summary.find("from large pool"), std::string::npos);
  f.allocator.free(a);
}

// ---- out of memory ------------------------------------------------------------------------------

TEST(CachingAllocator, OutOfMemoryFreesTheCacheAndRetries) {
  Fixture f(100 * MiB);
  void* a = f.allocator.malloc(60 * MiB, kDefaultStream);
  f.allocator.free(a);  // cached: 60 MiB reserved, nothing allocated
  void* b = f.allocator.malloc(80 * MiB, kDefaultStream);
  DeviceStats s = f.stats();
  EXPECT_EQ(s.num_alloc_retries, 1);
  EXPECT_EQ(s.num_device_free, 1);
  EXPECT_EQ(cur(s.reserved_bytes), int64_t(80 * MiB));
  f.allocator.free(b);
}

TEST(CachingAllocator, OutOfMemoryRetryHalfAndHalf) {  // test_out_of_memory_retry
  Fixture f(1 * GiB);
  void* a = f.allocator.malloc(GiB / 2, kDefaultStream);
  EXPECT_THROW(f.allocator.malloc(GiB / 2 + 64 * MiB, kDefaultStream), OutOfMemoryError);
  f.allocator.free(a);
  void* b = f.allocator.malloc(GiB / 2 + 64 * MiB, kDefaultStream);
  EXPECT_NE(b, nullptr);
  f.allocator.free(b);
}

TEST(CachingAllocator, OutOfMemoryMessage) {
  Fixture f(100 * MiB);
  void* a = f.allocator.malloc(30 * MiB, kDefaultStream);
  testing::expect_error<OutOfMemoryError>(
      [&] { f.allocator.malloc(200 * MiB, kDefaultStream); },
      "out of memory. Tried to allocate 200.00 MiB. simulated device has a total capacity of "
      "100.00 MiB of which 70.00 MiB is free. Of the allocated memory 30.00 MiB is allocated by "
      "wick, and 0 bytes is reserved by wick but unallocated.");
  EXPECT_EQ(f.stats().num_ooms, 1);
  testing::expect_error<OutOfMemoryError>(
      [&] { f.allocator.malloc(size_t{800000000} * GiB, kDefaultStream); },
      "Tried to allocate 800000000.00 GiB");
  testing::expect_error<OutOfMemoryError>(
      [&] { f.allocator.malloc(size_t{1} << 61, kDefaultStream); },
      "Tried to allocate more than 1EB memory");
  // The allocator still works after an OOM.
  void* b = f.allocator.malloc(MiB, kDefaultStream);
  f.allocator.free(b);
  f.allocator.free(a);
}

TEST(CachingAllocator, MemoryFractionCapsReservedMemory) {  // test_set_per_process_memory_fraction
  Fixture f(1 * GiB);
  EXPECT_THROW(f.allocator.set_memory_fraction(-0.1), std::invalid_argument);
  EXPECT_THROW(f.allocator.set_memory_fraction(2.0), std::invalid_argument);
  void* small = f.allocator.malloc(1024, kDefaultStream);  // keeps a 2 MiB segment reserved
  f.allocator.set_memory_fraction(0.5);
  size_t ok = static_cast<size_t>(0.499 * GiB) - f.stats().reserved_bytes[kAggregate].peak;
  void* a = f.allocator.malloc(ok, kDefaultStream);
  f.allocator.free(a);
  f.allocator.empty_cache();
  testing::expect_error<OutOfMemoryError>([&] { f.allocator.malloc(GiB / 2, kDefaultStream); },
                                          "out of memory");
  f.allocator.free(small);
}

TEST(CachingAllocator, MaxSplitSizeKeepsOversizeBlocksWhole) {
  Fixture f(1 * GiB, AllocatorConfig::parse("max_split_size_mb:40"));
  void* big = f.allocator.malloc(50 * MiB, kDefaultStream);
  DeviceStats s = f.stats();
  EXPECT_EQ(s.oversize_allocations.current, 1);
  EXPECT_EQ(s.oversize_segments.current, 1);
  EXPECT_EQ(s.max_split_size, int64_t(40 * MiB));
  f.allocator.free(big);
  void* small = f.allocator.malloc(5 * MiB, kDefaultStream);  // must not carve the 50 MiB block
  EXPECT_NE(small, big);
  void* large = f.allocator.malloc(45 * MiB, kDefaultStream);  // 50 < 45 + 20: reused whole
  EXPECT_EQ(large, big);
  EXPECT_EQ(cur(f.stats().allocated_bytes), int64_t(50 * MiB + 5 * MiB));
  f.allocator.free(large);
  void* huge = f.allocator.malloc(90 * MiB, kDefaultStream);  // 50 MiB block too small: new one
  f.allocator.free(huge);
  void* other = f.allocator.malloc(41 * MiB, kDefaultStream);  // best fit: the 50 MiB block
  EXPECT_EQ(other, big);
  void* third = f.allocator.malloc(42 * MiB, kDefaultStream);  // 90 >= 42 + 20: not reused
  EXPECT_NE(third, huge);
  for (void* p : {small, other, third}) f.allocator.free(p);
}

TEST(CachingAllocator, OversizeBlocksAreReleasedFirstOnOutOfMemory) {
  Fixture f(250 * MiB, AllocatorConfig::parse("max_split_size_mb:40"));
  void* a = f.allocator.malloc(50 * MiB, kDefaultStream);
  void* b = f.allocator.malloc(130 * MiB, kDefaultStream);
  void* keep = f.allocator.malloc(5 * MiB, kDefaultStream);  // a live 20 MiB segment
  f.allocator.free(a);
  f.allocator.free(b);
  // 200 MiB reserved, so a new 100 MiB segment does not fit, and the cached 130 MiB block is too
  // big to hand out whole (130 >= 100 + 20). Before freeing everything, the allocator releases
  // the smallest oversize cached block that is at least as big as the request: the 130 MiB one.
  void* c = f.allocator.malloc(100 * MiB, kDefaultStream);
  DeviceStats s = f.stats();
  EXPECT_EQ(s.num_alloc_retries, 0);
  EXPECT_EQ(s.num_device_free, 1);
  EXPECT_EQ(cur(s.reserved_bytes), int64_t(50 * MiB + 20 * MiB + 100 * MiB));
  for (void* p : {c, keep}) f.allocator.free(p);
}

TEST(CachingAllocator, GarbageCollectionFreesOldSegmentsNearTheCap) {
  Fixture f(100 * MiB, AllocatorConfig::parse("garbage_collection_threshold:0.5"));
  f.allocator.set_memory_fraction(1.0);
  std::vector<void*> blocks;
  for (size_t mib : {12, 14, 16}) blocks.push_back(f.allocator.malloc(mib * MiB, kDefaultStream));
  for (void* p : blocks) f.allocator.free(p);  // 42 MiB cached, below the 50 MiB threshold
  EXPECT_EQ(f.stats().num_device_free, 0);
  void* a = f.allocator.malloc(18 * MiB, kDefaultStream);  // 60 MiB reserved: above threshold
  EXPECT_EQ(f.stats().num_device_free, 0);
  void* b = f.allocator.malloc(30 * MiB, kDefaultStream);  // needs a segment: collect first
  DeviceStats s = f.stats();
  EXPECT_GE(s.num_device_free, 1);
  EXPECT_EQ(s.num_alloc_retries, 0);
  EXPECT_LE(cur(s.reserved_bytes), int64_t(80 * MiB));
  for (void* p : {a, b}) f.allocator.free(p);
}

// ---- streams ------------------------------------------------------------------------------------

TEST(CachingAllocator, BlocksAreReusedOnlyOnTheirStream) {
  Fixture f;
  StreamId side = f.device.create_stream();
  void* a = f.allocator.malloc(MiB, kDefaultStream);
  f.allocator.free(a);
  void* b = f.allocator.malloc(MiB, side);
  EXPECT_NE(a, b);  // the cached block belongs to the default stream
  EXPECT_EQ(f.stats().num_device_alloc, 2);
  void* c = f.allocator.malloc(MiB, kDefaultStream);
  EXPECT_EQ(c, a);
  for (void* p : {b, c}) f.allocator.free(p);
}

TEST(CachingAllocator, RecordStreamDelaysReuseUntilTheEventCompletes) {  // test_record_stream
  Fixture f;
  StreamId side = f.device.create_stream();
  void* x = f.allocator.malloc(MiB, side);  // made on the side stream
  f.allocator.record_stream(x, kDefaultStream);
  f.device.enqueue_work(kDefaultStream);  // a kernel on the default stream still reads x
  f.allocator.free(x);
  DeviceStats s = f.stats();
  EXPECT_EQ(cur(s.allocated_bytes), 0);
  EXPECT_EQ(cur(s.active_bytes), int64_t(MiB));  // freed but waiting: still active
  EXPECT_EQ(f.device.num_events_recorded(), 1);
  void* y = f.allocator.malloc(MiB, side);
  EXPECT_NE(y, x) << "allocation reused while the default stream may still read it";
  f.device.finish_work(kDefaultStream);
  void* z = f.allocator.malloc(MiB, side);
  EXPECT_EQ(z, x) << "allocation not reused after the event completed";
  EXPECT_EQ(cur(f.stats().active_bytes), int64_t(2 * MiB));
  for (void* p : {y, z}) f.allocator.free(p);
}

TEST(CachingAllocator, RecordStreamOnTheAllocationStreamIsANoOp) {
  Fixture f;
  void* x = f.allocator.malloc(MiB, kDefaultStream);
  f.allocator.record_stream(x, kDefaultStream);
  f.device.enqueue_work(kDefaultStream);
  f.allocator.free(x);
  EXPECT_EQ(f.device.num_events_recorded(), 0);
  EXPECT_EQ(f.allocator.malloc(MiB, kDefaultStream), x);
  f.allocator.free(x);
  EXPECT_THROW(f.allocator.record_stream(x, kDefaultStream), std::runtime_error);
}

TEST(CachingAllocator, OutOfMemoryWaitsForPendingEvents) {  // test_..._record_stream_oom
  Fixture f(200 * MiB);
  StreamId side = f.device.create_stream();
  for (int i = 0; i < 20; ++i) {
    void* p = f.allocator.malloc(60 * MiB, side);
    f.allocator.record_stream(p, kDefaultStream);
    f.device.enqueue_work(kDefaultStream);  // the default stream stays busy
    f.allocator.free(p);
  }
  DeviceStats s = f.stats();
  EXPECT_GT(s.num_sync_all_streams, 0);
  EXPECT_EQ(s.num_ooms, 0);
  f.device.finish_all();
  f.allocator.empty_cache();
  EXPECT_EQ(f.device.bytes_in_use(), 0);
}

// ---- configuration
// -------------------------------------------------------------------------------

TEST(AllocatorConfig, ParsesPyTorchStyleOptions) {
  AllocatorConfig c = AllocatorConfig::parse(
      "max_split_size_mb:40,garbage_collection_threshold:0.5,"
      "roundup_power2_divisions:[64:8,256:4,1024:4,>:1],max_non_split_rounding_mb:30");
  EXPECT_EQ(c.max_split_size, 40 * MiB);
  EXPECT_DOUBLE_EQ(c.garbage_collection_threshold, 0.5);
  EXPECT_EQ(c.max_non_split_rounding_size, 30 * MiB);
  EXPECT_EQ(c.roundup_power2_divisions[0], 8u);  // the first key covers everything below it
  EXPECT_EQ(c.roundup_power2_divisions[6], 8u);  // [64 MiB, 128 MiB)
  EXPECT_EQ(c.roundup_power2_divisions[7], 0u);  // a gap between keys keeps the default
  EXPECT_EQ(c.roundup_power2_divisions[8], 4u);
  EXPECT_EQ(c.roundup_power2_divisions[10], 4u);
  EXPECT_EQ(c.roundup_power2_divisions[11], 1u);  // '>' covers the rest
  EXPECT_EQ(c.roundup_power2_divisions[15], 1u);
  EXPECT_EQ(c.divisions_for(100 * MiB), 8u);
  EXPECT_EQ(c.divisions_for(300 * MiB), 4u);
  EXPECT_EQ(AllocatorConfig::parse("roundup_power2_divisions:4").divisions_for(1), 4u);
  EXPECT_EQ(AllocatorConfig::parse("policy:bfc").policy, "bfc");
}

TEST(AllocatorConfig, RejectsBadOptions) {
  testing::expect_error<std::invalid_argument>(
      [] { AllocatorConfig::parse("max_split_size_mb:10"); }, "at least 20");
  testing::expect_error<std::invalid_argument>(
      [] { AllocatorConfig::parse("garbage_collection_threshold:1.5"); }, "between 0 and 1");
  testing::expect_error<std::invalid_argument>([] { AllocatorConfig::parse("expandable:1"); },
                                               "unknown option 'expandable'");
  testing::expect_error<std::invalid_argument>(
      [] { AllocatorConfig::parse("roundup_power2_divisions:3"); }, "power of two");
  testing::expect_error<std::invalid_argument>([] { AllocatorConfig::parse("policy:magic"); },
                                               "policy must be");
}

// ---- invariants under random use
// -----------------------------------------------------------------

// Recomputes every stat from a snapshot and checks the layout: blocks tile their segments with no
// gap or overlap, segments do not overlap, no two free neighbours are left unmerged.
void check_invariants(const CachingAllocator& allocator, const SimulatedDevice& device) {
  std::vector<SegmentInfo> segments = allocator.snapshot();
  DeviceStats s = allocator.stats();
  int64_t reserved = 0, allocated = 0, allocations = 0, active = 0, inactive = 0,
          inactive_bytes = 0;
  uintptr_t previous_end = 0;
  for (const SegmentInfo& seg : segments) {
    ASSERT_GE(seg.address, previous_end) << "segments overlap";
    previous_end = seg.address + seg.size;
    reserved += static_cast<int64_t>(seg.size);
    uintptr_t at = seg.address;
    for (size_t i = 0; i < seg.blocks.size(); ++i) {
      const BlockInfo& b = seg.blocks[i];
      ASSERT_EQ(b.address, at) << "blocks of a segment must tile it";
      ASSERT_EQ(b.size % kMinBlockSize, 0u);
      at += b.size;
      bool idle = !b.allocated && !b.pending_events;
      if (i > 0) {
        const BlockInfo& p = seg.blocks[i - 1];
        ASSERT_FALSE(idle && !p.allocated && !p.pending_events) << "free neighbours not merged";
      }
      if (b.allocated) allocated += static_cast<int64_t>(b.size), ++allocations;
      if (b.allocated || b.pending_events) ++active;
      if (idle && seg.blocks.size() > 1) ++inactive, inactive_bytes += b.size;
    }
    ASSERT_EQ(at, seg.address + seg.size);
  }
  ASSERT_EQ(cur(s.reserved_bytes), reserved);
  ASSERT_EQ(cur(s.segment), static_cast<int64_t>(segments.size()));
  ASSERT_EQ(cur(s.allocated_bytes), allocated);
  ASSERT_EQ(cur(s.allocation), allocations);
  ASSERT_EQ(cur(s.active), active);
  ASSERT_EQ(cur(s.inactive_split), inactive);
  ASSERT_EQ(cur(s.inactive_split_bytes), inactive_bytes);
  ASSERT_EQ(cur(s.reserved_bytes, kSmallPool) + cur(s.reserved_bytes, kLargePool), reserved);
  ASSERT_EQ(device.bytes_in_use(), reserved);
  ASSERT_EQ(s.num_device_alloc - s.num_device_free, static_cast<int64_t>(segments.size()));
}

TEST(CachingAllocator, RandomizedStressKeepsInvariants) {
  for (const char* conf : {"", "max_split_size_mb:24,roundup_power2_divisions:4"}) {
    SCOPED_TRACE(conf);
    Fixture f(512 * MiB, AllocatorConfig::parse(conf));
    std::vector<StreamId> streams = {kDefaultStream, f.device.create_stream(),
                                     f.device.create_stream()};
    std::mt19937_64 rng(42);
    std::vector<void*> live;
    for (int step = 0; step < 4000; ++step) {
      int action = static_cast<int>(rng() % 10);
      if (action < 5 || live.empty()) {
        // Log-uniform sizes from 1 B to 32 MiB, so both pools and every rule get exercised.
        double log_size = std::uniform_real_distribution<double>(0, 25)(rng);
        size_t size = static_cast<size_t>(std::exp2(log_size));
        StreamId stream = streams[rng() % streams.size()];
        try {
          live.push_back(f.allocator.malloc(size, stream));
        } catch (const OutOfMemoryError&) {
          // Legitimate when the live set is large; the invariants must hold anyway.
        }
      } else if (action < 9) {
        size_t i = rng() % live.size();
        if (rng() % 4 == 0) f.allocator.record_stream(live[i], streams[rng() % streams.size()]);
        if (rng() % 3 == 0) f.device.enqueue_work(streams[rng() % streams.size()]);
        f.allocator.free(live[i]);
        live[i] = live.back();
        live.pop_back();
      } else {
        f.device.finish_work(streams[rng() % streams.size()]);
      }
      if (step % 50 == 0) {
        check_invariants(f.allocator, f.device);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
    for (void* p : live) f.allocator.free(p);
    f.device.finish_all();
    f.allocator.empty_cache();
    check_invariants(f.allocator, f.device);
    DeviceStats s = f.stats();
    EXPECT_EQ(cur(s.reserved_bytes), 0);
    EXPECT_EQ(cur(s.active), 0);
    EXPECT_EQ(cur(s.requested_bytes), 0);
    EXPECT_EQ(f.device.bytes_in_use(), 0);
    EXPECT_EQ(s.num_device_alloc, s.num_device_free);
    EXPECT_EQ(s.allocated_bytes[kAggregate].allocated, s.allocated_bytes[kAggregate].freed);
  }
}

// ---- the other policies
// ---------------------------------------------------------------------------

TEST(AllocatorPolicies, NoCachingMallocsEveryTime) {
  SimulatedDevice device(GiB, Backing::Virtual);
  auto policy = make_policy("no_caching", &device);
  for (int i = 0; i < 5; ++i) policy->free(policy->malloc(1000, kDefaultStream));
  DeviceStats s = policy->stats();
  EXPECT_EQ(s.num_device_alloc, 5);
  EXPECT_EQ(s.num_device_free, 5);
  EXPECT_EQ(s.reserved_bytes[kAggregate].peak, 1000);
  EXPECT_THROW(policy->malloc(2 * GiB, kDefaultStream), OutOfMemoryError);
}

TEST(AllocatorPolicies, BfcBinsAndSplitRule) {
  EXPECT_EQ(BfcAllocator::bin_for_size(1), 0);
  EXPECT_EQ(BfcAllocator::bin_for_size(256), 0);
  EXPECT_EQ(BfcAllocator::bin_for_size(511), 0);
  EXPECT_EQ(BfcAllocator::bin_for_size(512), 1);
  EXPECT_EQ(BfcAllocator::bin_for_size(size_t{256} << 20), 20);
  EXPECT_EQ(BfcAllocator::bin_for_size(size_t{1} << 40), 20);  // the last bin takes the rest

  SimulatedDevice device(GiB, Backing::Virtual);
  BfcOptions options;
  options.memory_fraction = 0.5;
  BfcAllocator bfc(&device, options);
  EXPECT_EQ(bfc.memory_limit(), GiB / 2);
  void* a = bfc.malloc(100, kDefaultStream);  // rounded to 256; preallocates the whole limit
  EXPECT_EQ(device.bytes_in_use(), int64_t(GiB / 2));
  void* b = bfc.malloc(300, kDefaultStream);  // 512
  EXPECT_EQ(static_cast<char*>(b), static_cast<char*>(a) + 256);
  EXPECT_EQ(bfc.stats().allocated_bytes[kAggregate].current, 256 + 512);
  bfc.free(a);
  void* c = bfc.malloc(200, kDefaultStream);  // best fit: a's 256-byte hole
  EXPECT_EQ(c, a);
  bfc.free(b);
  bfc.free(c);  // coalesces back into one chunk
  EXPECT_EQ(bfc.largest_free_block(), GiB / 2);
  EXPECT_EQ(bfc.stats().num_device_alloc, 1);
  EXPECT_THROW(bfc.malloc(GiB, kDefaultStream), OutOfMemoryError);
}

TEST(AllocatorPolicies, BfcGrowthDoublesRegions) {
  SimulatedDevice device(GiB, Backing::Virtual);
  BfcOptions options;
  options.allow_growth = true;
  options.memory_fraction = 1.0;
  BfcAllocator bfc(&device, options);
  std::vector<void*> live;
  for (int i = 0; i < 6; ++i) live.push_back(bfc.malloc(MiB + MiB / 2, kDefaultStream));
  // Regions of 2, 4 and 8 MiB (each region twice the last) hold the six 1.5 MiB blocks.
  EXPECT_EQ(bfc.stats().num_device_alloc, 3);
  EXPECT_EQ(device.bytes_in_use(), int64_t(14 * MiB));
  for (void* p : live) bfc.free(p);
  bfc.empty_cache();
  EXPECT_EQ(device.bytes_in_use(), 0);
}

// ---- traces and replay ------------------------------------------------------------------------

TEST(AllocatorTrace, RecordAndReplayUnderEveryPolicy) {
  std::string path = ::testing::TempDir() + "wick_alloc_trace.jsonl";
  SimulatedDevice device(GiB, Backing::Host);
  DeviceAllocator allocator(&device, std::make_unique<CachingAllocator>(&device));
  allocator.start_trace(path);
  {
    // A small training-like loop: activations grow, then are freed in reverse.
    for (int step = 0; step < 3; ++step) {
      std::vector<void*> acts;
      for (int layer = 0; layer < 8; ++layer) acts.push_back(allocator.allocate((layer + 1) * MiB));
      for (auto it = acts.rbegin(); it != acts.rend(); ++it) allocator.deallocate(*it, 0);
    }
  }
  allocator.stop_trace();
  int64_t original_mallocs = allocator.policy().stats().num_device_alloc;

  std::vector<TraceEvent> events = read_trace(path);
  ASSERT_EQ(events.size(), 48u);
  EXPECT_EQ(events[0].kind, TraceEvent::Alloc);
  EXPECT_EQ(events[0].size, MiB);
  EXPECT_EQ(events.back().kind, TraceEvent::Free);

  std::vector<ReplayResult> results;
  for (const char* policy : {"caching", "no_caching", "bfc", "bfc_growth"}) {
    results.push_back(replay(events, policy, 4 * GiB));
    EXPECT_FALSE(results.back().out_of_memory) << policy << ": " << results.back().error;
    EXPECT_EQ(results.back().peak_requested, int64_t(36 * MiB));
  }
  EXPECT_EQ(results[0].device_mallocs, original_mallocs);
  EXPECT_EQ(results[1].device_mallocs, 24);  // one per allocation
  EXPECT_EQ(results[2].device_mallocs, 1);   // one preallocated region
  EXPECT_GE(results[0].peak_reserved, results[0].peak_allocated);
  std::string table = format_replay_table(results);
  EXPECT_NE(table.find("bfc_growth"), std::string::npos) << table;
  std::remove(path.c_str());

  testing::expect_error<std::invalid_argument>([] { read_trace("/nonexistent/trace.jsonl"); },
                                               "cannot open");
}

TEST(AllocatorTrace, RejectsCorruptValuesNamingFileAndLine) {
  // strtoull used to read a size of -5 as 2**64 - 5 and "big" as 0.
  std::string path = ::testing::TempDir() + "wick_bad_trace.jsonl";
  const std::string good = "{\"event\":\"alloc\",\"ptr\":1,\"size\":64,\"stream\":0}";
  const std::pair<std::string, std::string> cases[] = {
      {"{\"event\":\"alloc\",\"ptr\":2,\"size\":-5,\"stream\":0}", "\"size\" must be"},
      {"{\"event\":\"alloc\",\"ptr\":2,\"size\":\"big\",\"stream\":0}", "\"size\" must be"},
      {"{\"event\":\"alloc\",\"ptr\":2,\"size\":99999999999999999999999,\"stream\":0}",
       "\"size\" must be"},
      {"{\"event\":\"alloc\",\"ptr\":2,\"size\":18446744073709551615,\"stream\":0}",
       "\"size\" of 18446744073709551615 bytes is larger"},
      {"{\"event\":\"alloc\",\"ptr\":x,\"size\":5,\"stream\":0}", "\"ptr\" must be"},
      {"{\"event\":\"alloc\",\"ptr\":2,\"size\":5,\"stream\":-1}", "\"stream\" must be"},
      {"{\"event\":\"free\",\"ptr\":2,\"size\":5,\"t_us\":nan}", "\"t_us\" must be"},
  };
  for (const auto& [line, fragment] : cases) {
    {
      std::ofstream out(path);
      out << good << "\n" << line << "\n";
    }
    testing::expect_error<std::invalid_argument>([&] { read_trace(path); },
                                                 path + ":2: " + fragment);
  }
  std::remove(path.c_str());
}

TEST(AllocatorTrace, ReplayRefusesALiveTotalPastInt64) {
  // Each size is valid, their sum is not: found by tests/fuzz/fuzz_trace.cpp (signed overflow).
  std::vector<TraceEvent> events(2);
  events[0].ptr = 1, events[0].size = 4691236517119000000ull;
  events[1].ptr = 2, events[1].size = 4691236517119000000ull;
  testing::expect_error<std::invalid_argument>([&] { replay(events, "caching", 4 * GiB); },
                                               "event 1: the trace's live memory exceeds");
}

TEST(AllocatorConfig, RejectsSizesThatOverflowAsBytes) {
  // 2**44 MiB is 2**64 bytes; these used to wrap (or silently mean "no limit").
  testing::expect_error<std::invalid_argument>(
      [] { AllocatorConfig::parse("max_non_split_rounding_mb:17592186044416"); },
      "max_non_split_rounding_mb of 17592186044416 MiB overflows");
  testing::expect_error<std::invalid_argument>(
      [] { AllocatorConfig::parse("max_split_size_mb:18446744073709551615"); },
      "max_split_size_mb of 18446744073709551615 MiB overflows");
  testing::expect_error<std::invalid_argument>(
      [] { AllocatorConfig::parse("max_split_size_mb:99999999999999999999999"); },
      "fits 64 bits; got '99999999999999999999999'");
  testing::expect_error<std::invalid_argument>(
      [] { AllocatorConfig::parse("max_non_split_rounding_mb:-5"); }, "got '-5'");
  EXPECT_EQ(AllocatorConfig::parse("max_non_split_rounding_mb:17592186044415")
                .max_non_split_rounding_size,
            size_t{17592186044415} * MiB);
}

}  // namespace
}  // namespace wick::memory
