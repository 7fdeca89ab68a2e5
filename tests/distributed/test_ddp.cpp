// DistributedDataParallel against one process: the replicas start equal, training on shards
// equals training on the whole batch, no_sync accumulates, unused parameters are named or
// handled, and the counters and the timeline record what happened.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/distributed/dist_test_util.h"

namespace wick {
namespace {

using namespace dist_test;
namespace dist = distributed;
using DDP = dist::DistributedDataParallel;

Tensor mse(nn::Module& model, const Batch& b) { return nn::F::mse_loss(model(b.x), b.y); }

// Trains `steps` SGD steps with momentum; `model` sees `batch` each step.
void train(nn::Module& model, const std::vector<Tensor>& params, const Batch& batch, int steps) {
  optim::SGDOptions o;
  o.lr = 0.1, o.momentum = 0.9;
  optim::SGD optimizer(params, o);
  for (int step = 0; step < steps; ++step) {
    Tensor loss = mse(model, batch);
    optimizer.zero_grad();
    loss.backward();
    optimizer.step();
  }
}

TEST(DDP, MatchesOneProcessOnTheWholeBatch) {
  const int64_t per_rank = 4;
  const int steps = 4;
  Batch all = global_batch(per_rank * world(), 11);
  auto reference = make_mlp(100);
  train(*reference, reference->parameters(), all, steps);

  for (bool one_bucket_per_parameter : {false, true}) {
    // Each rank initialises differently; construction copies rank 0's (seed 100) to all.
    auto local = make_mlp(100 + rank());
    dist::DDPOptions options;
    if (one_bucket_per_parameter) options.first_bucket_cap_mb = options.bucket_cap_mb = 1e-9;
    auto ddp = std::make_shared<DDP>(local, nullptr, options);
    train(*ddp, ddp->parameters(), shard(all, rank(), per_rank), steps);
    expect_same_parameters(*local, *reference, 1e-5);

    const dist::ReducerStats& stats = ddp->reducer().stats();
    size_t buckets = one_bucket_per_parameter ? 4 : 1;
    EXPECT_EQ(ddp->reducer().bucket_indices().size(), buckets);
    EXPECT_EQ(stats.iterations, steps);
    EXPECT_EQ(stats.buckets_launched, static_cast<int64_t>(steps * buckets));
    int64_t bytes = 0;
    for (const Tensor& p : local->parameters()) bytes += static_cast<int64_t>(p.nbytes());
    EXPECT_EQ(stats.bytes_reduced, steps * bytes);
    EXPECT_GE(stats.comm_wait_seconds, 0.0);
  }
}

TEST(DDP, ConstructionBroadcastsParametersAndBuffersFromRankZero) {
  auto make = [](uint64_t seed) {
    manual_seed(seed);
    return std::make_shared<nn::Sequential>(std::vector<std::shared_ptr<nn::Module>>{
        std::make_shared<nn::Linear>(6, 8), std::make_shared<nn::BatchNorm1d>(8),
        std::make_shared<nn::Linear>(8, 3)});
  };
  auto local = make(40 + rank());
  {
    NoGradGuard no_grad;
    for (auto& [name, buffer] : local->named_buffers()) buffer.fill_(rank() + 2.0);
  }
  DDP ddp(local);
  auto rank0 = make(40);
  expect_same_parameters(*local, *rank0, 0.0);
  for (auto& [name, buffer] : local->named_buffers()) {
    EXPECT_EQ(values(buffer), filled(buffer.numel(), 2.0)) << name;
  }
  // Training forwards update batch-norm statistics from each rank's own data; the next forward
  // starts from rank 0's again (broadcast_buffers).
  ddp(randn({4, 6}) + double(rank()));
  local->eval();
  ddp(randn({4, 6}));
  Tensor mean = local->named_buffers()[0].second;
  Tensor gathered = zeros({world() * mean.numel()});
  dist::all_gather(gathered, mean.contiguous());
  for (int r = 1; r < world(); ++r) {
    expect_close(gathered.narrow(0, r * mean.numel(), mean.numel()), mean, 0.0, "running_mean");
  }
}

TEST(DDP, DifferentModelsOnDifferentRanksAreRefused) {
  manual_seed(1);
  auto local = std::make_shared<nn::Linear>(6, rank() == 0 ? 8 : 9);
  try {
    DDP ddp(local);
    FAIL() << "mismatched replicas were accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("every rank must hold the same parameters"),
              std::string::npos)
        << e.what();
  }
}

TEST(DDP, NoSyncAccumulatesLocallyThenReducesTheSum) {
  const int64_t per_rank = 8;
  Batch all = global_batch(per_rank * world(), 21);
  auto micro = [&](int r, int k) {  // rank r's k-th micro-batch: 4 rows
    return Batch{all.x.narrow(0, r * per_rank + 4 * k, 4),
                 all.y.narrow(0, r * per_rank + 4 * k, 4)};
  };
  auto local = make_mlp(7);
  DDP ddp(local);
  {
    auto guard = ddp.no_sync();
    mse(ddp, micro(rank(), 0)).backward();
  }
  // Under no_sync nothing was reduced: the gradients are this rank's own.
  auto alone = make_mlp(7);
  mse(*alone, micro(rank(), 0)).backward();
  for (size_t i = 0; i < alone->parameters().size(); ++i) {
    expect_close(local->parameters()[i].grad(), alone->parameters()[i].grad(), 1e-6, "local grad");
  }
  EXPECT_EQ(ddp.reducer().stats().buckets_launched, 0);
  EXPECT_EQ(ddp.reducer().stats().local_backwards, 1);

  mse(ddp, micro(rank(), 1)).backward();  // synchronised: reduces the accumulated sum
  auto reference = make_mlp(7);
  Tensor total = zeros({});
  for (int r = 0; r < world(); ++r)
    total = total + mse(*reference, micro(r, 0)) + mse(*reference, micro(r, 1));
  (total / double(world())).backward();
  for (size_t i = 0; i < reference->parameters().size(); ++i) {
    expect_close(local->parameters()[i].grad(), reference->parameters()[i].grad(), 1e-5,
                 "accumulated grad");
  }
}

// Three heads: `always` is used everywhere, `rank0` only on rank 0, `never` nowhere.
struct Heads : nn::Module {
  std::shared_ptr<nn::Linear> always, rank0, never;
  bool use_rank0;
  explicit Heads(bool use_rank0_head) : Module("Heads"), use_rank0(use_rank0_head) {
    manual_seed(3);
    always = register_module("always", std::make_shared<nn::Linear>(6, 3));
    rank0 = register_module("rank0", std::make_shared<nn::Linear>(6, 3));
    never = register_module("never", std::make_shared<nn::Linear>(6, 3));
  }
  Tensor forward(const Tensor& x) override {
    Tensor y = (*always)(x);
    return use_rank0 ? y + (*rank0)(x) : y;
  }
};

TEST(DDP, UnusedParametersAreNamedInTheError) {
  auto local = std::make_shared<Heads>(/*use_rank0_head=*/false);
  DDP ddp(local);
  Batch b = global_batch(4, 5);
  mse(ddp, b).backward();  // the bucket holding the unused heads never completes
  try {
    ddp(b.x);
    FAIL() << "a second forward after an unfinished reduction was accepted";
  } catch (const std::runtime_error& e) {
    std::string message = e.what();
    for (const char* expected : {"rank0.weight", "rank0.bias", "never.weight", "never.bias",
                                 "find_unused_parameters", "prior iteration"}) {
      EXPECT_NE(message.find(expected), std::string::npos) << expected << " not in: " << message;
    }
    EXPECT_EQ(message.find("always.weight"), std::string::npos) << message;
  }
}

TEST(DDP, FindUnusedParametersReducesWhatAnyRankUsed) {
  Batch all = global_batch(4 * world(), 8);
  auto local = std::make_shared<Heads>(/*use_rank0_head=*/rank() == 0);
  dist::DDPOptions options;
  options.find_unused_parameters = true;
  DDP ddp(local, nullptr, options);
  for (int step = 0; step < 2; ++step) {  // the second forward finds the first one finished
    local->zero_grad();
    mse(ddp, shard(all, rank(), 4)).backward();
  }
  // One process: rank 0's loss uses the rank0 head, the others' do not.
  auto reference = std::make_shared<Heads>(true);
  Tensor total = zeros({});
  for (int r = 0; r < world(); ++r) {
    reference->use_rank0 = r == 0;
    total = total + mse(*reference, shard(all, r, 4));
  }
  (total / double(world())).backward();
  for (const char* name : {"always.weight", "always.bias", "rank0.weight", "rank0.bias"}) {
    Tensor mine, expected;
    for (auto& [n, p] : local->named_parameters()) {
      if (n == name) mine = p.grad();
    }
    for (auto& [n, p] : reference->named_parameters()) {
      if (n == name) expected = p.grad();
    }
    ASSERT_TRUE(mine.defined()) << name;
    expect_close(mine, expected, 1e-5, name);
  }
  EXPECT_FALSE(local->never->weight.grad().defined());  // no rank used it: left untouched
  EXPECT_FALSE(local->never->bias.grad().defined());
}

TEST(DDP, TimelineShowsEveryBucketOnEveryRank) {
  auto local = make_mlp(9);
  dist::DDPOptions options;
  options.first_bucket_cap_mb = options.bucket_cap_mb = 1e-9;  // a bucket per parameter
  DDP ddp(local, nullptr, options);
  dist::Timeline timeline;
  ddp.reducer().set_timeline(&timeline);
  Batch b = shard(global_batch(4 * world(), 2), rank(), 4);
  timeline.start(dist::default_group());
  Tensor loss;
  {
    auto forward = timeline.scope(dist::Lane::Compute, "forward");
    loss = mse(ddp, b);
  }
  {
    auto backward = timeline.scope(dist::Lane::Compute, "backward");
    loss.backward();
  }
  timeline.stop();
  ddp.reducer().set_timeline(nullptr);
  auto ranks = timeline.gather(dist::default_group());
  ASSERT_EQ(ranks.size(), static_cast<size_t>(world()));
  for (const auto& events : ranks) {
    int buckets = 0, marks = 0, spans = 0;
    for (const dist::TimelineEvent& e : events) {
      if (e.lane == dist::Lane::Communication) buckets++;
      if (e.name.rfind("grad ", 0) == 0) marks++;
      if (e.name == "forward" || e.name == "backward") spans++;
      EXPECT_GE(e.end_us, e.start_us);
    }
    EXPECT_EQ(buckets, 4);
    EXPECT_EQ(marks, 4);
    EXPECT_EQ(spans, 2);
  }
  if (rank() == 0) {
    std::filesystem::path dir = std::filesystem::temp_directory_path() / "wick_timeline_test";
    dist::write_chrome_trace((dir / "step.json").string(), ranks);
    dist::write_timeline_svg((dir / "step.svg").string(), ranks, "test");
    std::stringstream json, svg;
    json << std::ifstream(dir / "step.json").rdbuf();
    svg << std::ifstream(dir / "step.svg").rdbuf();
    EXPECT_NE(json.str().find("\"traceEvents\""), std::string::npos);
    EXPECT_NE(json.str().find("all-reduce bucket 3"), std::string::npos);
    EXPECT_NE(svg.str().find("<svg"), std::string::npos);
    std::filesystem::remove_all(dir);
  }
}

}  // namespace
}  // namespace wick
