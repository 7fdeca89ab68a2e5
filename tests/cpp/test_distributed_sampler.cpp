// DistributedSampler: disjoint equal shards that cover the dataset, PyTorch's padding and
// drop_last counts, and a new shuffle per epoch. No processes needed: a sampler only needs to
// know its rank and the number of replicas.
#include <algorithm>
#include <set>

#include "data/distributed_sampler.h"
#include "data/sampler.h"
#include "tests/cpp/test_util.h"

namespace wick::data {
namespace {

std::vector<std::vector<int64_t>> shards(int64_t n, int64_t replicas, bool shuffle, bool drop_last,
                                         int64_t epoch = 0) {
  std::vector<std::vector<int64_t>> out;
  for (int64_t r = 0; r < replicas; ++r) {
    out.push_back(DistributedSampler(n, replicas, r, shuffle, 7, drop_last).indices(epoch));
  }
  return out;
}

TEST(DistributedSampler, ShardsAreDisjointEqualAndCoverTheDataset) {
  for (bool shuffle : {false, true}) {
    auto s = shards(12, 3, shuffle, false);
    std::multiset<int64_t> seen;
    for (const auto& shard : s) {
      EXPECT_EQ(shard.size(), 4u);
      seen.insert(shard.begin(), shard.end());
    }
    std::multiset<int64_t> expected;
    for (int64_t i = 0; i < 12; ++i) expected.insert(i);
    EXPECT_EQ(seen, expected);
  }
  // Without shuffling, rank r takes r, r + n, r + 2n, ... (PyTorch's order).
  EXPECT_EQ(shards(12, 3, false, false)[1], (std::vector<int64_t>{1, 4, 7, 10}));
}

TEST(DistributedSampler, PadsByRepeatingTheFirstIndices) {
  // 10 indices on 4 replicas: ceil(10 / 4) = 3 each, 12 in total; 0 and 1 are used twice.
  auto s = shards(10, 4, false, false);
  EXPECT_EQ(s[0], (std::vector<int64_t>{0, 4, 8}));
  EXPECT_EQ(s[1], (std::vector<int64_t>{1, 5, 9}));
  EXPECT_EQ(s[2], (std::vector<int64_t>{2, 6, 0}));
  EXPECT_EQ(s[3], (std::vector<int64_t>{3, 7, 1}));
  EXPECT_EQ(DistributedSampler(10, 4, 0).size(), 3);
  // Padding longer than the dataset repeats it more than once.
  EXPECT_EQ(shards(2, 5, false, false)[4], (std::vector<int64_t>{0}));
  EXPECT_EQ(shards(2, 5, false, false)[3], (std::vector<int64_t>{1}));
}

TEST(DistributedSampler, DropLastCutsTheTail) {
  auto s = shards(10, 4, false, true);  // floor(10 / 4) = 2 each; 8 and 9 are dropped
  EXPECT_EQ(s[0], (std::vector<int64_t>{0, 4}));
  EXPECT_EQ(s[3], (std::vector<int64_t>{3, 7}));
  EXPECT_EQ(DistributedSampler(10, 4, 3, true, 0, true).size(), 2);
}

TEST(DistributedSampler, EveryEpochReshufflesTheSameWayOnEveryRank) {
  auto epoch0 = shards(100, 2, true, false, 0), epoch1 = shards(100, 2, true, false, 1);
  EXPECT_NE(epoch0[0], epoch1[0]);
  EXPECT_EQ(epoch0, shards(100, 2, true, false, 0));  // reproducible from (seed, epoch)
  // Rank 0's shard interleaves with rank 1's in one shared permutation.
  std::vector<int64_t> permutation = random_permutation(100, 7, 1);
  for (size_t i = 0; i < 50; ++i) EXPECT_EQ(epoch1[1][i], permutation[2 * i + 1]);
  // set_epoch overrides the epoch the loader passes (Note [set_epoch]).
  DistributedSampler sampler(100, 2, 0, true, 7);
  sampler.set_epoch(1);
  EXPECT_EQ(sampler.indices(0), epoch1[0]);
}

TEST(DistributedSampler, BadArgumentsAreClearErrors) {
  EXPECT_THROW(DistributedSampler(10, 0, 0), std::invalid_argument);
  EXPECT_THROW(DistributedSampler(10, 2, 2), std::out_of_range);
  EXPECT_THROW(DistributedSampler(-1, 2, 0), std::invalid_argument);
}

}  // namespace
}  // namespace wick::data
