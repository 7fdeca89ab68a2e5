// wick's ring all-reduce (distributed/ring_all_reduce.h) against MPI's own, at every size that
// stresses the chunking: fewer elements than ranks, sizes not divisible by the world size, one
// element, none; each reduce op; and as the group's algorithm under DDP.
#include "distributed/ring_all_reduce.h"
#include "tests/distributed/dist_test_util.h"

namespace wick {
namespace {

using namespace dist_test;
namespace dist = distributed;

// Rank-dependent values, the same on every run.
Tensor contribution(int64_t n, DType dtype) {
  manual_seed(1000 + static_cast<uint64_t>(rank()));
  Tensor t = randn({n}) * 10.0;
  return dtype == kInt64 ? t.to(kInt64) : t.to(dtype);
}

TEST(Ring, EqualsMpiAllReduceAtEverySize) {
  const int n = world();
  for (int64_t size : {int64_t{0}, int64_t{1}, int64_t{n - 1}, int64_t{n}, int64_t{2 * n + 1},
                       int64_t{1000}, int64_t{65537}}) {
    for (dist::ReduceOp op :
         {dist::ReduceOp::Sum, dist::ReduceOp::Avg, dist::ReduceOp::Max, dist::ReduceOp::Min}) {
      Tensor expected = contribution(size, kFloat64);
      Tensor ring = expected.clone();
      dist::all_reduce(expected, op);
      dist::ring_all_reduce(dist::default_group(), ring, op)->wait();
      SCOPED_TRACE(std::string("size ") + std::to_string(size) + " op " + dist::reduce_op_name(op));
      if (size > 0) {
        EXPECT_LE((ring - expected).abs().max().item<double>(), 1e-9);
      }
    }
  }
}

TEST(Ring, IntegersAndShapesAreKept) {
  Tensor expected = contribution(37, kInt64).reshape({37});
  Tensor ring = expected.clone().reshape({37});
  dist::all_reduce(expected);
  dist::ring_all_reduce(dist::default_group(), ring)->wait();
  EXPECT_EQ(ring.to_vector<int64_t>(), expected.to_vector<int64_t>());
  Tensor matrix = full({3, 5}, 1.0);
  dist::ring_all_reduce(dist::default_group(), matrix)->wait();
  EXPECT_EQ(matrix.shape(), Shape({3, 5}));
  EXPECT_EQ(values(matrix), filled(15, world()));
}

TEST(Ring, ManyInFlightAtOnce) {
  // Tags keep concurrent rings apart (as DDP's buckets launch them).
  std::vector<Tensor> tensors;
  std::vector<std::shared_ptr<dist::Work>> works;
  for (int i = 0; i < 8; ++i) {
    tensors.push_back(full({1000 + i * 7}, static_cast<double>(i + rank())));
    works.push_back(dist::ring_all_reduce(dist::default_group(), tensors.back()));
  }
  const int n = world();
  for (int i = 0; i < 8; ++i) {
    works[static_cast<size_t>(i)]->wait();
    EXPECT_DOUBLE_EQ(tensors[static_cast<size_t>(i)][0].item<double>(), n * i + n * (n - 1) / 2.0);
  }
}

TEST(Ring, BadInputIsRefused) {
  Tensor strided = zeros({4, 4}).t();
  EXPECT_THROW(dist::ring_all_reduce(dist::default_group(), strided), std::invalid_argument);
  Tensor ints = zeros({4}, TensorOptions(kInt64));
  EXPECT_THROW(dist::ring_all_reduce(dist::default_group(), ints, dist::ReduceOp::Avg), TypeError);
  EXPECT_THROW(dist::parse_all_reduce_algorithm("tree", "test"), std::invalid_argument);
}

TEST(Ring, DdpOnTheRingEqualsDdpOnMpi) {
  dist::ProcessGroup& group = dist::default_group();
  auto train = [&](dist::AllReduceAlgorithm algorithm) {
    group.set_all_reduce_algorithm(algorithm);
    auto model = make_mlp(5);
    auto ddp = std::make_shared<dist::DistributedDataParallel>(model);
    optim::SGDOptions o;
    o.lr = 0.1, o.momentum = 0.9;
    optim::SGD optimizer(ddp->parameters(), o);
    Batch global = global_batch(4 * world(), 3);
    for (int step = 0; step < 3; ++step) {
      Batch mine = shard(global, rank(), 4);
      Tensor loss = nn::F::mse_loss((*ddp)(mine.x), mine.y);
      optimizer.zero_grad();
      loss.backward();
      optimizer.step();
    }
    group.set_all_reduce_algorithm(dist::AllReduceAlgorithm::Native);
    return model->parameters();
  };
  auto native = train(dist::AllReduceAlgorithm::Native);
  auto ring = train(dist::AllReduceAlgorithm::Ring);
  for (size_t i = 0; i < native.size(); ++i) {
    EXPECT_LE((native[i] - ring[i]).abs().max().item<double>(), 1e-6) << "parameter " << i;
  }
}

}  // namespace
}  // namespace wick
