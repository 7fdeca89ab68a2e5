// The classes of bad input that used to crash or silently give wrong answers: overflowing sizes
// (Note [checked sizes]), out-of-bounds indices (Note [index bounds]), partially overlapping
// in-place writes (Note [partial overlap]), gradients that no longer fit their leaf, concurrent
// accumulation into one leaf, and freeing a very deep graph (Note [iterative teardown]).
#include <atomic>
#include <limits>
#include <thread>

#include "autograd/meta.h"
#include "tests/cpp/test_util.h"

namespace wick {
namespace {

using testing::expect_error;

constexpr int64_t kBig = int64_t{1} << 62;

TEST(CheckedSizes, Helpers) {
  EXPECT_EQ(checked_mul("t", 3, 4), 12);
  EXPECT_EQ(checked_add("t", -3, 4), 1);
  expect_error<std::runtime_error>([] { checked_mul("op", kBig, 4); },
                                   "[op] integer multiplication overflow");
  expect_error<std::runtime_error>(
      [] { checked_add("op", std::numeric_limits<int64_t>::max(), 1); },
      "[op] integer addition overflow");
  // A zero anywhere makes the shape empty, however large the other dims.
  EXPECT_EQ(checked_numel("t", Shape{kBig, kBig, 0}), 0);
  expect_error<std::runtime_error>(
      [] {
        checked_numel("op", Shape{kBig, 4});
      },
      "too many elements");
  expect_error<std::invalid_argument>(
      [] {
        checked_numel("op", Shape{2, -1});
      },
      "negative dimension -1");
  expect_error<std::runtime_error>([] { checked_nbytes("op", Shape{kBig}, 8); },
                                   "Storage size calculation overflowed");
  EXPECT_EQ(checked_extent("t", Shape{2, 3}, Strides{3, 1}, 4), 10);
  EXPECT_EQ(checked_extent("t", Shape{0, 3}, Strides{3, 1}, 4), 4);
  expect_error<std::runtime_error>(
      [] { checked_extent("op", Shape{2}, Strides{kBig + (kBig - 1)}, 0); }, "overflowed");
}

TEST(CheckedSizes, AllocationsAndShapes) {
  // Each of these used to segfault or return a tensor with numel() == 0.
  expect_error<std::runtime_error>([] { empty({kBig, 4}); }, "[empty]");
  expect_error<std::runtime_error>([] { arange(kBig); }, "[arange]");
  expect_error<std::runtime_error>([] { arange(0.0, 1e20, 1.0); }, "[arange] too many elements");
  expect_error<std::runtime_error>([] { linspace(0, 1, kBig); }, "[linspace]");
  expect_error<std::runtime_error>([] { eye(int64_t{1} << 31); }, "[eye]");
  expect_error<std::runtime_error>([] { one_hot(tensor({1}), int64_t{1} << 61); }, "[one_hot]");
  expect_error<std::runtime_error>([] { ones({1}).expand({kBig, 4}); }, "[expand]");
  expect_error<std::runtime_error>(
      [] {
        ones({1}).expand({int64_t{1} << 31, int64_t{1} << 31}).contiguous();
      },
      "[contiguous]");
  expect_error<std::runtime_error>(
      [] {
        Tensor a = ones({1, 1}).expand({kBig, 1});
        Tensor b = ones({1, 1}).expand({1, kBig});
        add(a, b);
      },
      "[add]");
  expect_error<std::runtime_error>(
      [] {
        Tensor a = ones({1}).expand({std::numeric_limits<int64_t>::max()});
        cat({a, a});
      },
      "[cat] integer addition overflow");
  expect_error<std::runtime_error>([] { ones({3}).reshape({kBig, 4}); }, "[reshape]");
  expect_error<std::runtime_error>(
      [] {
        adaptive_avg_pool2d(ones({1, 1, 2, 2}), Pair2(int64_t{1} << 31));
      },
      "[adaptive_avg_pool2d]");
  expect_error<std::runtime_error>(
      [] {
        max_pool2d(ones({1, 1, 4, 4}), Pair2(kBig), 1, 0, 4);
      },
      "[max_pool2d] integer multiplication overflow");
}

TEST(CheckedSizes, ViewsStayInsideTheirStorage) {
  Tensor x = ones({3});
  expect_error<std::runtime_error>([&] { x.narrow(0, 1, std::numeric_limits<int64_t>::max()); },
                                   "[narrow] start (1) + length (9223372036854775807) exceeds");
  expect_error<std::out_of_range>([&] { x.narrow(0, 4, 0); }, "[narrow] start 4 is out of range");
  // It reaches element 2**62: refused, never wrapped around to alias element 0.
  expect_error<std::out_of_range>([&] { x.as_strided({2}, {kBig}, 0); }, "[as_strided]");
  expect_error<std::runtime_error>([&] { x.as_strided({2}, {kBig + (kBig - 1)}, 0); },
                                   "[as_strided] Storage size calculation overflowed");
  expect_error<std::out_of_range>([&] { x.as_strided({2}, {3}, 0); },
                                  "reaches outside the storage");
  // A huge step is one element, not an overflowed count.
  EXPECT_EQ(x.slice(0, 0, 3, std::numeric_limits<int64_t>::max()).numel(), 1);
  EXPECT_EQ(x.narrow(0, -1, 1).numel(), 1);
}

TEST(IndexBounds, NegativeOnlyWherePyTorchAcceptsThem) {
  Tensor x = arange(3.0);
  Tensor minus_one = tensor(std::vector<int64_t>{-1}, Shape{1});
  expect_error<std::out_of_range>([&] { x.index_select(0, minus_one); },
                                  "[index_select] index -1 is out of bounds");
  expect_error<std::out_of_range>([&] { x.gather(0, minus_one); }, "[gather] index -1");
  expect_error<std::out_of_range>([&] { x.scatter_add(0, minus_one, ones({1})); },
                                  "[scatter_add] index -1");
  expect_error<std::out_of_range>(
      [&] {
        nn::functional::embedding(minus_one, ones({3, 2}));
      },
      "[embedding] index out of range");
  expect_error<std::invalid_argument>(
      [&] {
        nn::functional::embedding(tensor({0}), ones({3, 2}), 5);
      },
      "[embedding] padding_idx 5 must be within num_embeddings (3)");
  // select() and advanced indexing do count from the end.
  EXPECT_EQ(x.select(0, -1).item<double>(), 2.0);
  EXPECT_EQ(index(x, {minus_one}).item<double>(), 2.0);
}

TEST(PartialOverlap, InPlaceAndCopy) {
  Tensor x = arange(4.0);
  expect_error<std::runtime_error>([&] { x.slice(0, 1, 4).add_(x.slice(0, 0, 3)); },
                                   "[add_] unsupported operation: some elements");
  Tensor m = arange(4.0).reshape({2, 2});
  expect_error<std::runtime_error>([&] { m.copy_(m.t()); }, "[copy_] unsupported operation");
  // Full overlap and disjoint halves are fine.
  x.add_(x);
  testing::expect_close(x, {0, 2, 4, 6}, Shape{4});
  x.slice(0, 0, 2).add_(x.slice(0, 2, 4));
  testing::expect_close(x, {4, 8, 4, 6}, Shape{4});
}

TEST(EmptyProducts, AreZeros) {
  testing::expect_close(matmul(ones({2, 0}), ones({0, 4})), std::vector<double>(8, 0.0),
                        Shape{2, 4});
  testing::expect_close(matmul(ones({3, 2, 0}), ones({3, 0, 1})), std::vector<double>(6, 0.0),
                        Shape{3, 2, 1});
  nn::Linear layer(0, 4);
  EXPECT_EQ(layer.forward(ones({2, 0})).shape(), (Shape{2, 4}));
}

TEST(IntegerPow, NegativeExponentRaises) {
  expect_error<std::runtime_error>([] { pow(tensor({2}), Scalar(int64_t{-1})); },
                                   "[pow] Integers to negative integer powers are not allowed");
  expect_error<std::runtime_error>([] { pow(tensor({2}), tensor({-1})); },
                                   "[pow] Integers to negative integer powers");
  testing::expect_close(pow(tensor({2}), 3), {8}, Shape{1});
}

TEST(PoolStride, ZeroRaisesDefaultIsKernel) {
  expect_error<std::invalid_argument>(
      [] {
        max_pool2d(ones({1, 1, 4, 4}), 2, 0);
      },
      "[max_pool2d] stride should not be zero");
  expect_error<std::invalid_argument>(
      [] {
        avg_pool2d(ones({1, 1, 4, 4}), 2, 0);
      },
      "[avg_pool2d] stride should not be zero");
  EXPECT_EQ(max_pool2d(ones({1, 1, 4, 4}), 2).shape(), (Shape{1, 1, 2, 2}));
}

TEST(AutogradSafety, DataOfAnotherShapeAfterTheGraphWasBuilt) {
  Tensor w = ones({3}).requires_grad_();
  Tensor loss = (w * 2.0).sum();
  w.set_data(ones({5}));
  expect_error<std::runtime_error>(
      [&] { loss.backward(); },
      "returned an invalid gradient at index 0 - got (3,) but expected "
      "shape compatible with (5,)");
  EXPECT_FALSE(w.grad().defined());
}

TEST(AutogradSafety, DeepGraphFreesWithoutRecursion) {
#if defined(__SANITIZE_THREAD__)
  // 110 s under TSan, and there is no second thread here for it to watch: the Release and ASan
  // runs of this test cover the teardown.
  GTEST_SKIP() << "single-threaded; run in the Release and ASan builds";
#endif
  // One million nodes: recursive destructors would need far more stack than a thread has.
  Tensor x = ones({1}).requires_grad_();
  Tensor y = x;
  for (int i = 0; i < 1000000; ++i) y = y + 1.0;
  y.backward();
  EXPECT_EQ(x.grad().item<double>(), 1.0);
  Tensor z = x;
  for (int i = 0; i < 1000000; ++i) z = z * 1.0;
  z = Tensor();  // freed without backward, saved tensors and all
  y = Tensor();
}

TEST(AutogradSafety, ConcurrentBackwardIntoOneLeafLosesNoUpdate) {
  Tensor w = zeros({4}).requires_grad_();
  constexpr int kThreads = 4, kCalls = 300;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      try {
        for (int i = 0; i < kCalls; ++i) (w * 1.0).sum().backward();
      } catch (...) {
        ++failures;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  testing::expect_close(w.grad(), std::vector<double>(4, kThreads * kCalls), Shape{4});
}

}  // namespace
}  // namespace wick
