// The Reducer's buckets and launch order, and its use on a plain list of tensors.
#include "examples/mnist_models.h"
#include "tests/distributed/dist_test_util.h"

namespace wick {
namespace {

using namespace dist_test;
namespace dist = distributed;
using Buckets = std::vector<std::vector<size_t>>;

TEST(Buckets, ReverseOrderFirstBucketSmallOneKeyPerDtype) {
  const int64_t kib = 1024 / 4, mib = 1024 * kib;  // float32 elements per KiB and per MiB
  std::vector<Tensor> t = {
      empty({3 * mib / 4}),                       // 0: 0.75 MiB
      empty({mib / 2}),                           // 1: 0.5 MiB
      empty({kib / 2}, TensorOptions(kFloat64)),  // 2: 1 KiB of float64: a bucket of its own
      empty({10 * mib}),                          // 3: 10 MiB
      empty({20 * mib}),                          // 4: 20 MiB
      empty({kib}),                               // 5: 1 KiB
  };
  std::vector<size_t> reverse = {5, 4, 3, 2, 1, 0};
  // 5 and 4 reach the first limit (1 MiB) together; 3, 1 and 0 stay under the second (25 MiB).
  Buckets b = dist::compute_bucket_assignment_by_size(t, {1 << 20, 25 << 20}, reverse);
  EXPECT_EQ(b, (Buckets{{5, 4}, {3, 1, 0}, {2}}));
  // One limit for all: each bucket closes as soon as it reaches it; a tensor is never split.
  b = dist::compute_bucket_assignment_by_size(t, {5 << 20}, reverse);
  EXPECT_EQ(b, (Buckets{{5, 4}, {3}, {2}, {1, 0}}));
}

TEST(Buckets, MnistCnnHasTwoBucketsClassifierFirst) {
  auto cnn = examples::make_mnist_model("cnn");
  std::vector<std::string> names;
  for (auto& [name, p] : cnn->named_parameters()) names.push_back(name);
  auto reducer = dist::Reducer::create(cnn->parameters(), names, dist::default_group_ptr());
  // Parameters: 0.weight 0.bias 2.weight 2.bias 7.weight 7.bias 9.weight 9.bias. In reverse, the
  // fc1 weight (4.5 MiB) closes the 1 MiB first bucket; the convolutions fill the second.
  EXPECT_EQ(reducer->bucket_indices(), (Buckets{{7, 6, 5, 4}, {3, 2, 1, 0}}));
  EXPECT_EQ(reducer->bucket_bytes()[0], (10 + 1280 + 128 + 9216 * 128) * 4);
  std::string table = reducer->explain();
  EXPECT_NE(table.find("bucket 0: 4.51 MiB float32 cpu, 4 parameters: 9.bias, 9.weight, 7.bias, "
                       "7.weight"),
            std::string::npos)
      << table;
}

// `scale` is registered first but used last, so its gradient is ready first although its bucket
// is the last one.
struct ScaledMlp : nn::Module {
  Tensor scale;
  std::shared_ptr<nn::Linear> a, b;
  ScaledMlp() : Module("ScaledMlp") {
    manual_seed(4);
    scale = register_parameter("scale", ones({3}));
    a = register_module("a", std::make_shared<nn::Linear>(6, 8));
    b = register_module("b", std::make_shared<nn::Linear>(8, 3));
  }
  Tensor forward(const Tensor& x) override { return (*b)((*a)(x).tanh()) * scale; }
};

TEST(Reducer, BucketsLaunchInIndexOrderEvenWhenReadyOutOfOrder) {
  auto local = std::make_shared<ScaledMlp>();
  dist::DDPOptions options;
  options.first_bucket_cap_mb = options.bucket_cap_mb = 1e-9;  // a bucket per parameter
  dist::DistributedDataParallel ddp(local, nullptr, options);
  dist::Reducer& reducer = ddp.reducer();
  // Reverse parameter order: b.bias, b.weight, a.bias, a.weight, scale.
  EXPECT_EQ(reducer.bucket_indices(), (Buckets{{4}, {3}, {2}, {1}, {0}}));
  Batch batch = shard(global_batch(4 * world(), 6), rank(), 4);
  nn::F::mse_loss(ddp(batch.x), batch.y).backward();
  // scale's gradient came first, yet its bucket (4) launched last: Note [launch order].
  EXPECT_EQ(reducer.ready_order().front(), 0u);
  EXPECT_EQ(reducer.launch_order(), (std::vector<size_t>{0, 1, 2, 3, 4}));
  // The reduced gradients are the same on every rank.
  Tensor g = local->a->weight.grad().reshape({-1}).contiguous();
  Tensor all = zeros({world() * g.numel()});
  dist::all_gather(all, g);
  for (int r = 1; r < world(); ++r) expect_close(all.narrow(0, r * g.numel(), g.numel()), g, 0, "");
}

TEST(Reducer, WorksOnAPlainListOfTensors) {
  // What the Python package's DDP does: a reducer over tensors, prepared before each backward.
  Tensor w = zeros({3}).requires_grad_();
  auto reducer = dist::Reducer::create({w}, {"w"}, dist::default_group_ptr());
  Tensor x = full({3}, double(rank() + 1));
  Tensor loss = (w * x).sum();
  reducer->prepare_for_backward({loss});
  loss.backward();
  EXPECT_EQ(values(w.grad()), filled(3, (world() + 1) / 2.0));  // the mean of 1..n
  EXPECT_EQ(reducer->stats().iterations, 1);
  // Without prepare_for_backward the hooks stay quiet and the gradient stays local.
  w.set_grad(Tensor());
  (w * x).sum().backward();
  EXPECT_EQ(values(w.grad()), filled(3, rank() + 1.0));
}

TEST(Reducer, BadParametersAreClearErrors) {
  auto group = dist::default_group_ptr();
  Tensor plain = zeros({2});
  EXPECT_THROW(dist::Reducer::create({plain}, {"plain"}, group), std::invalid_argument);
  Tensor w = zeros({2}).requires_grad_();
  EXPECT_THROW(dist::Reducer::create({w, w}, {}, group), std::invalid_argument);
  EXPECT_THROW(dist::Reducer::create({}, {}, group), std::invalid_argument);
}

}  // namespace
}  // namespace wick
