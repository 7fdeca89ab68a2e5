// The collectives of the MPI process group, checked with values every rank can predict
// (PyTorch's simple_reduce_tests: rank r contributes r + 1).
#include "tests/distributed/dist_test_util.h"

namespace wick {
namespace {

using namespace dist_test;
namespace dist = distributed;

TEST(Collectives, GroupKnowsItsRanks) {
  dist::ProcessGroup& g = dist::default_group();
  EXPECT_EQ(g.backend(), "mpi");
  EXPECT_GE(g.size(), 2);
  EXPECT_LT(g.rank(), g.size());
  EXPECT_EQ(g.local_size(), g.size());  // one machine
  EXPECT_EQ(g.device(), Device(kCPU));
}

TEST(Collectives, AllReduceSumMaxMinAvg) {
  const int n = world();
  const double r1 = rank() + 1;
  Tensor sum = full({5}, r1), max = full({2, 3}, r1), min = full({3}, r1), avg = full({4}, r1);
  dist::all_reduce(sum);
  dist::all_reduce(max, dist::ReduceOp::Max);
  dist::all_reduce(min, dist::ReduceOp::Min);
  dist::all_reduce(avg, dist::ReduceOp::Avg);
  EXPECT_EQ(values(sum), filled(5, n * (n + 1) / 2.0));
  EXPECT_EQ(values(max), filled(6, n));
  EXPECT_EQ(values(min), filled(3, 1.0));
  EXPECT_EQ(values(avg), filled(4, (n + 1) / 2.0));
}

TEST(Collectives, AllReduceIntegersAndBools) {
  const int n = world();
  Tensor ints = full({3}, int64_t{rank() + 1}, TensorOptions(kInt64));
  dist::all_reduce(ints);
  EXPECT_EQ(ints.to_vector<int64_t>(), std::vector<int64_t>(3, n * (n + 1) / 2));
  Tensor flags = tensor({rank() == 0, false});  // any(): max over ranks
  dist::all_reduce(flags, dist::ReduceOp::Max);
  EXPECT_EQ(values(flags), (std::vector<double>{1, 0}));
}

TEST(Collectives, AsyncWorkCompletes) {
  Tensor x = full({1000}, 1.0);
  std::shared_ptr<dist::Work> work = dist::all_reduce(x, dist::ReduceOp::Sum, /*async_op=*/true);
  work->wait();
  EXPECT_TRUE(work->is_completed());
  EXPECT_EQ(work->op(), "all_reduce");
  EXPECT_GE(work->completed_at(), work->started_at());
  EXPECT_DOUBLE_EQ(x[999].item<double>(), world());
}

TEST(Collectives, BroadcastFromNonZeroRoot) {
  const int root = world() - 1;
  Tensor x = full({2, 2}, 10.0 * (rank() + 1));
  dist::broadcast(x, root);
  EXPECT_EQ(values(x), filled(4, 10.0 * (root + 1)));
  // float16 moves as 16-bit words: broadcast needs no arithmetic.
  Tensor h = full({3}, rank() == root ? 1.5 : 0.0, TensorOptions(kFloat16));
  dist::broadcast(h, root);
  EXPECT_EQ(values(h), filled(3, 1.5));
}

TEST(Collectives, AllGatherKeepsRankOrder) {
  Tensor mine = full({2}, double(rank()));
  Tensor all = zeros({2 * world()});
  dist::all_gather(all, mine);
  for (int r = 0; r < world(); ++r) {
    EXPECT_EQ(all[2 * r].item<double>(), r);
    EXPECT_EQ(all[2 * r + 1].item<double>(), r);
  }
  // In place: the input is this rank's slot of the output.
  Tensor out = zeros({world(), 3});
  out[rank()].fill_(rank() + 7.0);
  dist::all_gather(out, out[rank()]);
  for (int r = 0; r < world(); ++r) EXPECT_EQ(out[r][2].item<double>(), r + 7.0);
}

TEST(Collectives, ReduceScatterGivesEachRankItsChunk) {
  // Every rank contributes [0, 1, ..., 2n - 1] * (rank + 1); rank r keeps chunk r of the sum.
  const int n = world();
  Tensor input = arange(2 * n, TensorOptions(kFloat32)) * double(rank() + 1);
  Tensor output = zeros({2});
  dist::reduce_scatter(output, input);
  double ranks_sum = n * (n + 1) / 2.0;
  EXPECT_DOUBLE_EQ(output[0].item<double>(), 2 * rank() * ranks_sum);
  EXPECT_DOUBLE_EQ(output[1].item<double>(), (2 * rank() + 1) * ranks_sum);
  Tensor mean = zeros({2});
  dist::reduce_scatter(mean, input, dist::ReduceOp::Avg);
  EXPECT_NEAR(mean[1].item<double>(), (2 * rank() + 1) * ranks_sum / n, 1e-5);
}

TEST(Collectives, Barrier) {
  dist::barrier();
  std::shared_ptr<dist::Work> work = dist::barrier(/*async_op=*/true);
  work->wait();
  EXPECT_TRUE(work->is_completed());
}

TEST(Collectives, BadArgumentsAreClearErrors) {
  // Every rank throws before launching anything, so the ranks stay in step.
  Tensor t = zeros({4, 4}).t();
  try {
    dist::all_reduce(t);
    FAIL() << "a non-contiguous tensor was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("[all_reduce] the tensor must be contiguous"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(dist::all_reduce(zeros({2}, TensorOptions(kFloat16))), TypeError);
  EXPECT_THROW(dist::all_reduce(zeros({2}, TensorOptions(kInt64)), dist::ReduceOp::Avg), TypeError);
  EXPECT_THROW(dist::broadcast(zeros({2}), world()), std::out_of_range);
  EXPECT_THROW(dist::all_gather(zeros({3}), zeros({2})), std::invalid_argument);
  EXPECT_THROW(dist::init_process_group("mpi"), std::runtime_error);  // already initialised
  EXPECT_THROW(dist::init_process_group("gloo"), std::invalid_argument);
}

}  // namespace
}  // namespace wick
