// Tests of the DataLoader under concurrency (Note [independent epochs], Note [loader timeout] in
// data/dataloader.h): iterators of one loader on several threads, threads sharing one iterator,
// and the timeout. Split from test_data.cpp, which holds the single-threaded loader tests; the
// small dataset and helpers below are this file's own copies of that file's.
//
// Nothing here synchronises by sleeping: the stuck dataset waits on a condition variable the test
// releases.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "data/data.h"
#include "tests/cpp/test_util.h"

namespace wick::data {
namespace {

using wick::testing::expect_error;

// Example i: input float [2] = {i, -i}, target int64 scalar i.
class RangeDataset : public Dataset {
 public:
  explicit RangeDataset(int64_t n) : n_(n) {}
  int64_t size() const override { return n_; }
  Example get(int64_t index) const override {
    check_example_index("RangeDataset", index, n_);
    double v = static_cast<double>(index);
    return {tensor({v, -v}), scalar_tensor(index, kInt64)};
  }

 private:
  int64_t n_;
};

DataLoaderOptions options(int64_t batch_size, int64_t workers, bool shuffle = false,
                          uint64_t seed = 0) {
  DataLoaderOptions o;
  o.batch_size = batch_size;
  o.num_workers = workers;
  o.shuffle = shuffle;
  o.seed = seed;
  return o;
}

// The targets of one whole epoch, sorted.
std::vector<int64_t> sorted_epoch(DataLoader& loader) {
  std::vector<int64_t> out;
  for (Batch& b : loader) {
    for (int64_t t : b.target.to_vector<int64_t>()) out.push_back(t);
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(DataLoader, IteratorsOfOneLoaderAreIndependent) {
  // As in PyTorch: a second begin() starts another epoch; the first iterator keeps its own.
  for (int64_t workers : {0, 1, 3}) {
    DataLoader loader(std::make_shared<RangeDataset>(8), options(2, workers));
    auto first = loader.begin();
    auto second = loader.begin();
    ++second;
    EXPECT_EQ(second->target.to_vector<int64_t>(), (std::vector<int64_t>{2, 3}));
    std::vector<int64_t> seen;
    for (; first != loader.end(); ++first) {
      for (int64_t t : first->target.to_vector<int64_t>()) seen.push_back(t);
    }
    EXPECT_EQ(seen, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7})) << workers << " workers";
    EXPECT_EQ(loader.stats().current_epoch, 1);
  }
  DataLoader loader(std::make_shared<RangeDataset>(2), options(1, 0));
  auto end = loader.end();
  expect_error<std::runtime_error>([&] { ++end; }, "end() iterator");
}

TEST(DataLoader, ThreadsIteratingOneLoaderEachGetAFullEpoch) {
  // Used to crash (SIGSEGV, SIGABRT) or hang: the epoch's state belonged to the loader.
  auto dataset = std::make_shared<RangeDataset>(60);
  for (int64_t workers : {0, 2}) {
    DataLoader loader(dataset, options(4, workers, /*shuffle=*/true, /*seed=*/3));
    constexpr int kThreads = 4, kRounds = 3;
    std::vector<std::vector<int64_t>> sorted(kThreads * kRounds);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int r = 0; r < kRounds; ++r) sorted[t * kRounds + r] = sorted_epoch(loader);
      });
    }
    for (std::thread& t : threads) t.join();
    std::vector<int64_t> all(60);
    for (int64_t i = 0; i < 60; ++i) all[i] = i;
    for (const auto& targets : sorted) EXPECT_EQ(targets, all) << workers << " workers";
    EXPECT_EQ(loader.stats().total.batches_delivered, kThreads * kRounds * 15);
    EXPECT_EQ(loader.stats().current_epoch >= 0, true);
  }
}

TEST(DataLoader, ThreadsSharingOneIteratorSplitTheEpoch) {
  // Copies of one iterator share its epoch: every batch goes to exactly one thread.
  DataLoader loader(std::make_shared<RangeDataset>(40), options(2, 2));
  auto it = loader.begin();
  std::vector<int64_t> first = it->target.to_vector<int64_t>();
  std::vector<std::vector<int64_t>> seen(3);
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&, t, copy = it]() mutable {
      while (++copy != loader.end()) {
        for (int64_t v : copy->target.to_vector<int64_t>()) seen[t].push_back(v);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  std::vector<int64_t> all = first;
  for (const auto& s : seen) all.insert(all.end(), s.begin(), s.end());
  std::sort(all.begin(), all.end());
  EXPECT_EQ(all, SequentialSampler(40).indices(0));
}

// A dataset whose example `slow` waits until released, as a stuck file read would.
class StuckDataset : public Dataset {
 public:
  explicit StuckDataset(int64_t slow) : slow_(slow) {}
  int64_t size() const override { return 4; }
  Example get(int64_t index) const override {
    if (index == slow_) {
      std::unique_lock<std::mutex> lock(mutex_);
      released_cv_.wait(lock, [this] { return released_; });
    }
    return {tensor({static_cast<double>(index)}), scalar_tensor(index, kInt64)};
  }
  void release() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      released_ = true;
    }
    released_cv_.notify_all();
  }

 private:
  int64_t slow_;
  mutable std::mutex mutex_;
  mutable std::condition_variable released_cv_;
  bool released_ = false;
};

TEST(DataLoader, TimeoutThrowsInsteadOfWaitingForever) {
  auto dataset = std::make_shared<StuckDataset>(/*slow=*/1);
  DataLoaderOptions o = options(1, 1);
  o.timeout = 0.05;
  DataLoader loader(dataset, o);
  auto it = loader.begin();
  EXPECT_EQ(it->target.item<int64_t>(), 0);
  expect_error<std::runtime_error>([&] { ++it; }, "[DataLoader] timed out after 0.05 seconds");
  dataset->release();  // the epoch stayed at batch 1: it arrives once built
  ++it;
  EXPECT_EQ(it->target.item<int64_t>(), 1);
  int64_t rest = 0;
  while (++it != loader.end()) ++rest;
  EXPECT_EQ(rest, 2);
}

}  // namespace
}  // namespace wick::data
