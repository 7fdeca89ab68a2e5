// Memory history and snapshots (core/memory/history.h, Note [memory history]): what each policy
// records, the owners, the bounded ring, the JSON, and that the history undone backwards from a
// snapshot gives back the allocator's own peak.
#include <nlohmann/json.hpp>
#include <thread>

#include "core/memory/bfc_allocator.h"
#include "core/memory/caching_allocator.h"
#include "core/memory/device_allocator.h"
#include "core/memory/history.h"
#include "core/memory/simulated_device.h"
#include "tests/cpp/test_util.h"

namespace wick::memory {
namespace {

constexpr size_t MiB = 1024 * 1024, GiB = 1024 * MiB;
using Action = HistoryEntry::Action;

struct Recording {
  explicit Recording(const std::string& policy_name, size_t max_entries = 1000)
      : device(GiB, SimulatedDevice::Backing::Virtual),
        policy(make_policy(policy_name, &device)),
        history(std::make_shared<MemoryHistory>(max_entries)) {
    policy->set_history(history);
  }
  SimulatedDevice device;
  std::unique_ptr<AllocatorPolicy> policy;
  std::shared_ptr<MemoryHistory> history;
};

std::vector<Action> actions(const MemoryHistory& h) {
  std::vector<Action> out;
  for (const HistoryEntry& e : h.entries()) out.push_back(e.action);
  return out;
}

TEST(MemoryHistory, CachingRecordsBlocksAndSegments) {
  Recording r("caching");
  void* p = r.policy->malloc(1000, kDefaultStream);
  r.policy->free(p);
  r.policy->empty_cache();
  std::vector<HistoryEntry> e = r.history->entries();
  ASSERT_EQ(actions(*r.history), (std::vector<Action>{Action::SegmentAlloc, Action::Alloc,
                                                      Action::Free, Action::SegmentFree}));
  EXPECT_EQ(e[0].size, 2 * MiB);  // a small-pool segment
  EXPECT_EQ(e[1].size, 1024u);    // the block, rounded as allocated_bytes counts it
  EXPECT_EQ(e[1].address, reinterpret_cast<uintptr_t>(p));
  EXPECT_EQ(e[0].address, e[3].address);
  for (size_t i = 1; i < e.size(); ++i) EXPECT_GE(e[i].time_us, e[i - 1].time_us);
}

TEST(MemoryHistory, OtherPoliciesRecordAndSnapshot) {
  Recording none("no_caching");
  void* a = none.policy->malloc(3000, kDefaultStream);
  EXPECT_EQ(actions(*none.history), (std::vector<Action>{Action::SegmentAlloc, Action::Alloc}));
  ASSERT_EQ(none.policy->snapshot().size(), 1u);
  none.policy->free(a);
  EXPECT_EQ(none.history->entries().back().action, Action::SegmentFree);

  Recording bfc("bfc_growth");
  void* b = bfc.policy->malloc(3000, kDefaultStream);
  EXPECT_EQ(actions(*bfc.history), (std::vector<Action>{Action::SegmentAlloc, Action::Alloc}));
  std::vector<SegmentInfo> segments = bfc.policy->snapshot();
  ASSERT_EQ(segments.size(), 1u);
  EXPECT_EQ(segments[0].size, 2 * MiB);  // allow_growth's first region
  ASSERT_EQ(segments[0].blocks.size(), 2u);
  EXPECT_TRUE(segments[0].blocks[0].allocated);
  EXPECT_EQ(segments[0].blocks[0].address, reinterpret_cast<uintptr_t>(b));
  bfc.policy->free(b);
}

TEST(MemoryHistory, OwnersComeFromScopes) {
  Recording r("caching");
  std::string previous = set_module_path("Net.conv1");
  {
    OwnerScope outer("Tensor.backward");
    OwnerScope inner("mul");  // a building block of the op called: the op called wins
    r.policy->free(r.policy->malloc(512, kDefaultStream));
    OwnerScope node("ConvolutionBackward", /*replace=*/true);
    r.policy->free(r.policy->malloc(512, kDefaultStream));
  }
  set_module_path(previous);
  r.policy->free(r.policy->malloc(512, kDefaultStream));
  std::vector<HistoryEntry> e = r.history->entries();
  std::vector<std::string> names = r.history->names();
  ASSERT_EQ(e.size(), 7u);  // a segment, then three allocs and frees
  EXPECT_EQ(names[e[1].op], "Tensor.backward");
  EXPECT_EQ(names[e[1].module], "Net.conv1");
  EXPECT_EQ(names[e[3].op], "ConvolutionBackward");
  EXPECT_EQ(names[e[5].op], "");
  EXPECT_EQ(names[e[5].module], "");
  EXPECT_EQ(current_op(), nullptr);
}

TEST(MemoryHistory, ScopesCostNothingWithoutAHistory) {
  ASSERT_FALSE(history_active());
  OwnerScope scope("exp");
  EXPECT_EQ(current_op(), nullptr);
}

TEST(MemoryHistory, RingKeepsTheNewestEntries) {
  Recording r("caching", /*max_entries=*/10);
  for (int i = 0; i < 15; ++i) r.policy->free(r.policy->malloc(512 * (i + 1), kDefaultStream));
  std::vector<HistoryEntry> e = r.history->entries();
  ASSERT_EQ(e.size(), 10u);
  EXPECT_EQ(r.history->recorded(), 31);  // one segment, then 15 allocs and frees
  EXPECT_EQ(r.history->dropped(), 21);
  EXPECT_EQ(e.back().action, Action::Free);
  EXPECT_EQ(e.back().size, 512u * 15);
  for (size_t i = 1; i < e.size(); ++i) EXPECT_GE(e[i].time_us, e[i - 1].time_us);
  EXPECT_THROW(MemoryHistory(0), std::invalid_argument);
}

// The curve a viewer draws: walk the history backwards from the allocated bytes of the snapshot.
TEST(MemoryHistory, SnapshotJsonUndoesToThePeak) {
  Recording r("caching");
  std::vector<void*> live;
  for (int i = 0; i < 20; ++i) live.push_back(r.policy->malloc((i % 5 + 1) * 300 * 1024, 0));
  for (int i = 0; i < 20; i += 2) r.policy->free(live[i]);
  auto json = nlohmann::json::parse(snapshot_to_json(take_snapshot(*r.policy)));
  EXPECT_EQ(json["policy"], "caching");
  EXPECT_EQ(json["max_entries"], 1000);
  int64_t allocated = 0, reserved = 0, blocks = 0;
  for (const auto& seg : json["segments"]) {
    reserved += seg["total_size"].get<int64_t>();
    allocated += seg["allocated_size"].get<int64_t>();
    for (const auto& b : seg["blocks"]) blocks += b["state"] == "active_allocated";
  }
  EXPECT_EQ(blocks, 10);
  int64_t peak_allocated = allocated, peak_reserved = reserved;
  const auto& trace = json["device_traces"][0];
  for (auto it = trace.rbegin(); it != trace.rend(); ++it) {
    int64_t size = (*it)["size"].get<int64_t>();
    std::string action = (*it)["action"];
    if (action == "alloc") allocated -= size;
    if (action == "free") allocated += size;
    if (action == "segment_alloc") reserved -= size;
    if (action == "segment_free") reserved += size;
    peak_allocated = std::max(peak_allocated, allocated);
    peak_reserved = std::max(peak_reserved, reserved);
  }
  EXPECT_EQ(allocated, 0);
  EXPECT_EQ(reserved, 0);
  DeviceStats s = r.policy->stats();
  EXPECT_EQ(peak_allocated, s.allocated_bytes[kAggregate].peak);
  EXPECT_EQ(peak_reserved, s.reserved_bytes[kAggregate].peak);
  EXPECT_EQ(json["stats"]["allocated_bytes.all.peak"], peak_allocated);
  for (int i = 1; i < 20; i += 2) r.policy->free(live[i]);
}

TEST(MemoryHistory, OutOfMemoryIsRecorded) {
  SimulatedDevice device(4 * MiB, SimulatedDevice::Backing::Virtual);
  CachingAllocator allocator(&device);
  auto history = std::make_shared<MemoryHistory>();
  allocator.set_history(history);
  EXPECT_THROW(allocator.malloc(64 * MiB, kDefaultStream), OutOfMemoryError);
  ASSERT_EQ(history->entries().size(), 1u);
  EXPECT_EQ(history->entries()[0].action, Action::Oom);
  EXPECT_EQ(history->entries()[0].size, 64 * MiB);
  allocator.set_history(nullptr);
  void* p = allocator.malloc(512, kDefaultStream);
  allocator.free(p);
  EXPECT_EQ(history->entries().size(), 1u);  // stopped
}

// Ops name their outputs (the elementwise front functions) and backward nodes their gradients.
TEST(MemoryHistory, OpsAndBackwardNodesOwnTheirMemory) {
  // The sim allocator is installed by the first sim tensor; whether this test made it or found
  // it, it leaves the slot as it was, for tests that register a PrivateUse1 backend of their own.
  Allocator* installed = set_allocator(kPrivateUse1, nullptr);
  set_allocator(kPrivateUse1, installed);
  auto* sim = dynamic_cast<DeviceAllocator*>(get_allocator(kPrivateUse1));
  ASSERT_NE(sim, nullptr);
  auto history = std::make_shared<MemoryHistory>();
  sim->policy().set_history(history);
  {
    Tensor x = ones({1000}, Device(kPrivateUse1));
    x.requires_grad_(true);
    Tensor y = exp(x);
    y.sum().backward();
  }
  sim->policy().set_history(nullptr);
  set_allocator(kPrivateUse1, installed);
  std::vector<std::string> names = history->names();
  bool exp_alloc = false, backward_alloc = false;
  for (const HistoryEntry& e : history->entries()) {
    if (e.action != Action::Alloc) continue;
    exp_alloc |= names[e.op] == "exp";
    backward_alloc |= names[e.op].find("Backward") != std::string::npos;
  }
  EXPECT_TRUE(exp_alloc);
  EXPECT_TRUE(backward_alloc);
}

TEST(MemoryHistory, ThreadsRecordEveryEntry) {
  Recording r("caching", 100000);
  auto work = [&] {
    for (int i = 0; i < 2000; ++i) r.policy->free(r.policy->malloc(512 + 512 * (i % 7), 0));
  };
  std::thread a(work), b(work);
  a.join(), b.join();
  int64_t allocs = 0, frees = 0;
  for (const HistoryEntry& e : r.history->entries()) {
    allocs += e.action == Action::Alloc;
    frees += e.action == Action::Free;
  }
  EXPECT_EQ(allocs, 4000);
  EXPECT_EQ(frees, 4000);
}

}  // namespace
}  // namespace wick::memory
