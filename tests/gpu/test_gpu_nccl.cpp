// The NCCL backend on one GPU: a one-process group (world size 1 - NCCL cannot place two ranks on
// one GPU), its collectives on CUDA tensors, DDP over it, and its argument errors. Skipped without
// a CUDA device. Several ranks: `mpirun -np <GPUs> wick_gpu_nccl_tests` on a machine with that
// many GPUs runs the same checks with every rank on its own GPU.
#include <cstdlib>

#include "distributed/distributed.h"
#include "tests/gpu/gpu_test_util.h"
#include "wick.h"

namespace wick {
namespace {

namespace dist = distributed;

class NcclTest : public gpu_testing::GpuTest {
 protected:
  static void TearDownTestSuite() {
    if (dist::is_initialized()) dist::destroy_process_group();
  }
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped()) return;
    if (!dist::is_initialized()) {
      dist::InitOptions options;
      options.timeout = dist::Seconds(60);
      // Under mpirun: every rank, one GPU each; alone: a one-process group.
      if (!dist::is_launched_by_mpi()) options.world_size = 1;
      dist::init_process_group("nccl", options);
    }
  }
  Device gpu() const { return dist::default_group().device(); }
  std::vector<double> host(const Tensor& t) {
    return t.to(Device(kCPU), kFloat64).to_vector<double>();
  }
};

TEST_F(NcclTest, GroupIsOnThisRanksGpu) {
  EXPECT_EQ(dist::default_group().backend(), "nccl");
  EXPECT_TRUE(gpu().is_cuda());
  EXPECT_EQ(gpu().index, dist::default_group().local_rank());
}

TEST_F(NcclTest, AllReduceBroadcastGatherScatter) {
  const int n = dist::get_world_size(), rank = dist::get_rank();
  Tensor x = full({1000}, rank + 1.0, TensorOptions(kFloat32).with_device(gpu()));
  dist::all_reduce(x);
  EXPECT_EQ(host(x), std::vector<double>(1000, n * (n + 1) / 2.0));
  Tensor m = full({8}, rank + 1.0, TensorOptions(kFloat32).with_device(gpu()));
  dist::all_reduce(m, dist::ReduceOp::Max);
  EXPECT_EQ(host(m), std::vector<double>(8, n));
  Tensor a = full({8}, rank + 1.0, TensorOptions(kFloat16).with_device(gpu()));
  dist::all_reduce(a, dist::ReduceOp::Avg);  // ncclAvg, float16
  EXPECT_EQ(host(a), std::vector<double>(8, (n + 1) / 2.0));
  Tensor b = full({4}, 10.0 * (rank + 1), TensorOptions(kFloat32).with_device(gpu()));
  dist::broadcast(b, n - 1);
  EXPECT_EQ(host(b), std::vector<double>(4, 10.0 * n));
  Tensor mine = full({2}, double(rank), TensorOptions(kFloat32).with_device(gpu()));
  Tensor all = zeros({2 * n}, TensorOptions(kFloat32).with_device(gpu()));
  dist::all_gather(all, mine);
  for (int r = 0; r < n; ++r) EXPECT_EQ(host(all)[2 * r], r);
  Tensor in = ones({2 * n}, TensorOptions(kFloat32).with_device(gpu()));
  Tensor out = zeros({2}, TensorOptions(kFloat32).with_device(gpu()));
  dist::reduce_scatter(out, in);
  EXPECT_EQ(host(out), std::vector<double>(2, n));
  dist::barrier();
}

TEST_F(NcclTest, AsyncWorkOverlapsAndCompletes) {
  Tensor x = ones({1 << 20}, TensorOptions(kFloat32).with_device(gpu()));
  auto work = dist::all_reduce(x, dist::ReduceOp::Sum, /*async_op=*/true);
  work->wait();
  EXPECT_TRUE(work->is_completed());
  EXPECT_EQ(host(x.narrow(0, 0, 4)), std::vector<double>(4, dist::get_world_size()));
}

TEST_F(NcclTest, DdpOnTheGpuAveragesGradients) {
  manual_seed(3);
  auto model = std::make_shared<nn::Linear>(4, 2);
  model->to(gpu());
  dist::DistributedDataParallel ddp(model);
  Tensor x = full({3, 4}, dist::get_rank() + 1.0, TensorOptions(kFloat32).with_device(gpu()));
  ddp(x).sum().backward();
  // d(sum)/d(bias) = 3 rows on every rank, so the mean is 3 whatever the world size.
  EXPECT_EQ(host(model->bias.grad()), std::vector<double>(2, 3.0));
  EXPECT_EQ(ddp.reducer().stats().iterations, 1);
}

TEST_F(NcclTest, CpuTensorsAreRefused) {
  try {
    dist::all_reduce(zeros({2}));
    FAIL() << "a CPU tensor was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("use the mpi backend for CPU tensors"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace wick
