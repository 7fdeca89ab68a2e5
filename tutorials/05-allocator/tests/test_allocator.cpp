// Lab 05's graded tests: each rule and step of the caching allocator on its own, then one
// training-like trace replayed under your allocator, wick's PyTorch-style policy and TensorFlow's
// BFC, with a picture of reserved against allocated memory.
#include <sys/resource.h>

#include <cstdlib>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <memory>
#include <random>
#include <sstream>
#include <unordered_map>

#include "core/memory/policy.h"
#include "core/memory/simulated_device.h"
#include "lab.h"
#include "student_allocator.h"
#include "svg_chart.h"

using namespace lab05;
using wick::memory::kAggregate;
using wick::memory::SimulatedDevice;

constexpr size_t KiB = 1024, MiB = 1024 * 1024;

LAB_TEST(round_size_rule, "round_size: multiples of 512 B, at least 512") {
  LAB_CHECK_EQ(round_size(1), 512u);
  LAB_CHECK_EQ(round_size(512), 512u);
  LAB_CHECK_EQ(round_size(513), 1024u);
  LAB_CHECK_EQ(round_size(1000000), 1000448u);
}

LAB_TEST(segment_size_rule, "segment_size: 2 MiB small, 20 MiB mid-size, 2 MiB multiples above") {
  LAB_CHECK_EQ(segment_size(4 * KiB), 2 * MiB);
  LAB_CHECK_EQ(segment_size(1 * MiB), 2 * MiB);
  LAB_CHECK_EQ(segment_size(5 * MiB), 20 * MiB);
  LAB_CHECK_EQ(segment_size(10 * MiB), 10 * MiB);
  LAB_CHECK_EQ(segment_size(11 * MiB), 12 * MiB);
}

LAB_TEST(should_split_rule, "should_split: small remainder >= 512 B, large remainder > 1 MiB") {
  Block small_block, large_block;
  small_block.small = true, small_block.size = 2 * MiB;
  large_block.small = false, large_block.size = 20 * MiB;
  LAB_CHECK(should_split(&small_block, 2 * MiB - 512));
  LAB_CHECK(!should_split(&small_block, 2 * MiB));
  LAB_CHECK(should_split(&large_block, size_t(1.5 * MiB)));    // 18.5 MiB stays cached
  LAB_CHECK(!should_split(&large_block, size_t(19.5 * MiB)));  // 0.5 MiB: handed out whole
  LAB_CHECK(!should_split(&large_block, 19 * MiB));            // exactly 1 MiB: not split
}

LAB_TEST(best_fit, "find_free_block: the smallest free block that fits, taken out of the pool") {
  SimulatedDevice device(64 * MiB);
  StudentAllocator a(&device);
  Pool pool;
  Block b1, b2, b3;
  b1.size = 1024, b2.size = 4096, b3.size = 2048;
  b1.ptr = reinterpret_cast<char*>(0x1000), b2.ptr = b1.ptr + 0x10000, b3.ptr = b1.ptr + 0x20000;
  pool.insert(&b1), pool.insert(&b2), pool.insert(&b3);
  LAB_CHECK(a.find_free_block(pool, 1536) == &b3);
  LAB_CHECK_EQ(pool.size(), 2u);
  LAB_CHECK(a.find_free_block(pool, 8192) == nullptr);
  LAB_CHECK(a.find_free_block(pool, 1024) == &b1);
}

LAB_TEST(split_and_reuse, "malloc splits a segment and serves the next request from its rest") {
  SimulatedDevice device(256 * MiB);
  StudentAllocator a(&device);
  void* p = a.malloc(size_t(1.5 * MiB), 0);
  auto s = a.stats();
  LAB_CHECK_EQ(s.reserved_bytes[kAggregate].current, int64_t(20 * MiB));
  LAB_CHECK_EQ(s.allocated_bytes[kAggregate].current, int64_t(1.5 * MiB));
  LAB_CHECK_EQ(a.large_pool().size(), 1u);  // the 18.5 MiB remainder
  LAB_CHECK_EQ((*a.large_pool().begin())->size, size_t(18.5 * MiB));
  void* q = a.malloc(3 * MiB, 0);
  LAB_CHECK(static_cast<char*>(q) == static_cast<char*>(p) + size_t(1.5 * MiB));
  LAB_CHECK_EQ(a.stats().num_device_alloc, 1);
  a.free(p), a.free(q);
}

LAB_TEST(coalesce_on_free, "free merges a block with its free neighbours; empty_cache returns it") {
  SimulatedDevice device(64 * MiB);
  StudentAllocator a(&device);
  void* x = a.malloc(100 * KiB, 0);
  void* y = a.malloc(100 * KiB, 0);
  void* z = a.malloc(100 * KiB, 0);
  LAB_CHECK_EQ(a.stats().num_device_alloc, 1);  // one 2 MiB small segment
  a.free(y);
  a.free(x);  // x and y merge into one 200 KiB block
  bool merged = false;
  for (const Block* b : a.small_pool()) merged |= b->size == 200 * KiB && b->prev == nullptr;
  LAB_CHECK(merged);
  a.free(z);  // now the whole segment is one free block
  LAB_CHECK_EQ(a.small_pool().size(), 1u);
  LAB_CHECK_EQ((*a.small_pool().begin())->size, 2 * MiB);
  a.empty_cache();
  LAB_CHECK_EQ(a.stats().reserved_bytes[kAggregate].current, int64_t(0));
  LAB_CHECK_EQ(device.bytes_in_use(), int64_t(0));
}

LAB_TEST(pools_are_separate, "small blocks never serve large requests, and the reverse") {
  SimulatedDevice device(256 * MiB);
  StudentAllocator a(&device);
  a.free(a.malloc(512 * KiB, 0));
  void* big = a.malloc(2 * MiB, 0);  // cannot come from the cached 2 MiB small segment
  LAB_CHECK_EQ(a.stats().num_device_alloc, 2);
  a.free(big);
  a.free(a.malloc(4 * KiB, 0));  // nor a small one from the cached 20 MiB large segment
  LAB_CHECK_EQ(a.stats().num_device_alloc, 2);  // (it reuses the small segment)
  a.empty_cache();
  LAB_CHECK_EQ(a.stats().segment[kAggregate].current, int64_t(0));
}

// ---- the replay ----

struct Event {
  bool alloc;
  uint64_t id, size;
};

// A model whose activations change size from step to step (variable sequence lengths), the
// workload where caching allocators fragment (a smaller tools/alloc_replay --synthetic).
static std::vector<Event> training_trace(int steps) {
  std::vector<Event> events;
  std::mt19937_64 rng(7);
  uint64_t next = 1;
  auto alloc = [&](uint64_t size) {
    events.push_back({true, next, size});
    return std::make_pair(next++, size);
  };
  auto release = [&](std::pair<uint64_t, uint64_t> b) {
    events.push_back({false, b.first, b.second});
  };
  const uint64_t hidden = 512;
  for (int l = 0; l < 6; ++l)
    for (uint64_t size : {4 * hidden * hidden * 4, 4 * hidden * 4, 3 * hidden * 4})
      for (int k = 0; k < 3; ++k) alloc(size);  // weight, two Adam moments (kept)
  for (int step = 0; step < steps; ++step) {
    uint64_t tokens = 8 * (64 + rng() % 449);
    std::vector<std::pair<uint64_t, uint64_t>> saved;
    for (int l = 0; l < 6; ++l) {
      auto scratch = alloc(tokens * hidden * 4 * 4);
      saved.push_back(alloc(tokens * hidden * 4));
      saved.push_back(alloc(tokens * 4));
      release(scratch);
    }
    while (!saved.empty()) {
      auto grad = alloc(saved.back().second);
      release(saved.back());
      saved.pop_back();
      release(grad);
    }
  }
  return events;
}

struct Replay {
  std::string policy;
  int64_t mallocs = 0, peak_reserved = 0, peak_allocated = 0;
  std::vector<double> reserved, allocated;  // MiB after each event
};

static Replay replay(wick::memory::AllocatorPolicy& policy, const std::vector<Event>& events) {
  Replay r;
  r.policy = policy.name();
  std::unordered_map<uint64_t, void*> live;
  for (const Event& e : events) {
    if (e.alloc) {
      live[e.id] = policy.malloc(e.size, 0);
    } else {
      policy.free(live.at(e.id));
      live.erase(e.id);
    }
    auto s = policy.stats();
    r.reserved.push_back(double(s.reserved_bytes[kAggregate].current) / MiB);
    r.allocated.push_back(double(s.allocated_bytes[kAggregate].current) / MiB);
  }
  auto s = policy.stats();
  r.mallocs = s.num_device_alloc;
  r.peak_reserved = s.reserved_bytes[kAggregate].peak;
  r.peak_allocated = s.allocated_bytes[kAggregate].peak;
  return r;
}

LAB_TEST(host_size_class_rule, "host_size_class: four classes per power of two") {
  LAB_CHECK_EQ(host_size_class(1 * MiB), 1 * MiB);
  LAB_CHECK_EQ(host_size_class(1 * MiB + 1), 1 * MiB + 256 * KiB);
  LAB_CHECK_EQ(host_size_class(3 * MiB - 1), 3 * MiB);
  LAB_CHECK_EQ(host_size_class(7 * MiB), 7 * MiB);
  LAB_CHECK_EQ(host_size_class(7 * MiB + 1), 8 * MiB);
}

LAB_TEST(host_cache_reuse, "HostBlockCache: its class again, last freed first, within its limit") {
  HostBlockCache cache(4 * MiB);
  void* a = cache.acquire(1 * MiB + 10);
  void* b = cache.acquire(1 * MiB + 20);
  LAB_CHECK(reinterpret_cast<uintptr_t>(a) % 64 == 0);
  cache.release(a, 1 * MiB + 10);
  cache.release(b, 1 * MiB + 20);
  LAB_CHECK_EQ(cache.cached_bytes(), 2 * (1 * MiB + 256 * KiB));
  void* c = cache.acquire(1 * MiB + 200 * KiB);  // the same class
  LAB_CHECK(c == b);                             // the last one freed
  LAB_CHECK_EQ(cache.hits(), 1u);
  void* big = cache.acquire(2 * MiB);
  cache.release(big, 2 * MiB);  // 1.25 + 2 MiB would still fit: kept
  LAB_CHECK_EQ(cache.cached_bytes(), 1 * MiB + 256 * KiB + 2 * MiB);
  cache.release(c, 1 * MiB + 200 * KiB);  // 4.5 MiB would not: given back
  LAB_CHECK_EQ(cache.cached_bytes(), 1 * MiB + 256 * KiB + 2 * MiB);
}

// Writes every byte, in a way the compiler may not drop (it removes a malloc, memset and free
// that nothing reads).
static void touch(void* p, size_t size, int value) {
  std::memset(p, value, size);
  asm volatile("" : : "r"(p) : "memory");
}

static long minor_faults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

// What the cache is for: 40 MiB is above glibc's largest mmap threshold (32 MiB), so malloc maps
// every such block afresh and the kernel faults in (and zeroes) each of its pages on first touch.
LAB_TEST(host_cache_saves_page_faults, "20 x 40 MiB buffers: page faults, malloc vs the cache") {
  constexpr size_t kSize = 40 * MiB;
  constexpr int kRounds = 20;
  long start = minor_faults();
  for (int i = 0; i < kRounds; ++i) {
    void* p = std::malloc(kSize);
    touch(p, kSize, i);
    std::free(p);
  }
  const long with_malloc = minor_faults() - start;
  HostBlockCache cache(64 * MiB);
  start = minor_faults();
  for (int i = 0; i < kRounds; ++i) {
    void* p = cache.acquire(kSize);
    touch(p, kSize, i);
    cache.release(p, kSize);
  }
  const long with_cache = minor_faults() - start;
  std::cout << "  minor page faults for " << kRounds << " x 40 MiB: malloc " << with_malloc
            << ", HostBlockCache " << with_cache << "\n";
  LAB_CHECK(with_cache * 10 < with_malloc);  // one block's pages, against every round's
}

LAB_TEST(replay_matches_pytorch_rules, "one trace: yours vs PyTorch's rules vs TensorFlow's BFC") {
  std::vector<Event> events = training_trace(30);
  const size_t capacity = size_t(16) << 30;
  std::vector<Replay> runs;
  {
    SimulatedDevice device(capacity, SimulatedDevice::Backing::Virtual);
    StudentAllocator mine(&device);
    runs.push_back(replay(mine, events));
  }
  for (const char* name : {"caching", "bfc_growth", "bfc", "no_caching"}) {
    SimulatedDevice device(capacity, SimulatedDevice::Backing::Virtual);
    auto policy = wick::memory::make_policy(name, &device);
    runs.push_back(replay(*policy, events));
  }
  std::ostringstream table;
  table
      << "\n    policy        device mallocs   peak reserved   peak allocated   reserved/allocated";
  for (const Replay& r : runs) {
    table << "\n    " << std::left << std::setw(12) << r.policy << std::right << std::setw(16)
          << r.mallocs << std::setw(12) << std::fixed << std::setprecision(1)
          << double(r.peak_reserved) / MiB << " MiB" << std::setw(13)
          << double(r.peak_allocated) / MiB << " MiB" << std::setw(14) << std::setprecision(2)
          << double(r.peak_reserved) / double(r.peak_allocated);
  }
  lab::figure("policy comparison (" + std::to_string(events.size()) + " events, 30 steps)",
              table.str());
  const char* out = std::getenv("LAB_OUT");
  std::string svg = std::string(out ? out : ".") + "/05_reserved_vs_allocated.svg";
  std::vector<double> x(events.size());
  for (size_t i = 0; i < x.size(); ++i) x[i] = double(i);
  lab::write_chart(svg, "Lab 05: one training trace, reserved vs allocated", "event", "MiB",
                   {{"reserved, your allocator", "#d62728", x, runs[0].reserved},
                    {"reserved, BFC with growth (TensorFlow)", "#2ca02c", x, runs[2].reserved},
                    {"allocated (tensors)", "#1f77b4", x, runs[0].allocated}});
  lab::figure("chart", svg);
  // Same rules, same trace: the same device mallocs and peak as wick's PyTorch-style allocator.
  LAB_CHECK_EQ(runs[0].mallocs, runs[1].mallocs);
  LAB_CHECK_EQ(runs[0].peak_reserved, runs[1].peak_reserved);
  LAB_CHECK_EQ(runs[0].peak_allocated, runs[1].peak_allocated);
  LAB_CHECK(runs[0].mallocs < runs[4].mallocs / 10);  // caching: far fewer device mallocs
}

LAB_MAIN()
