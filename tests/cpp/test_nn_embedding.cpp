// Bags of embeddings (nn/layers/embedding.h): float64 gradcheck in every mode, hand-computed
// bags, the module's padding row, and bad input. Embedding is tested in test_nn_module.cpp.
#include "nn/layers/embedding.h"
#include "tests/cpp/test_util.h"

namespace wick::nn {
namespace {

namespace F = functional;
using wick::testing::expect_error;
using wick::testing::expect_values;
using wick::testing::input;

TEST(EmbeddingBag, Gradcheck) {
  Tensor idx = tensor({1, 2, 0, 3, 3}), offsets = tensor({0, 2});
  for (const char* mode : {"sum", "mean", "max"}) {
    EXPECT_TRUE(
        gradcheck([&](const TensorList& t) { return F::embedding_bag(idx, t[0], offsets, mode); },
                  {input({4, 3})}))
        << mode;
  }
}

TEST(EmbeddingBag, SmallCasesByHand) {
  // Bags: [1, 2] and [3] of rows i -> (i, 10 i).
  Tensor w = tensor({{0., 0.}, {1., 10.}, {2., 20.}, {3., 30.}});
  Tensor bags = tensor({1, 2, 3}), offsets = tensor({0, 2});
  expect_values(F::embedding_bag(bags, w, offsets, "sum"), {3, 30, 3, 30});
  expect_values(F::embedding_bag(bags, w, offsets, "mean"), {1.5, 15, 3, 30});
  expect_values(F::embedding_bag(bags, w, offsets, "max", {}, false, 3), {2, 20, 0, 0});
}

TEST(EmbeddingBag, ModuleZeroesThePaddingRow) {
  EmbeddingBag bag(5, 3, "max", false, 1);
  expect_values(bag.weight.select(0, 1), {0, 0, 0});
  EXPECT_EQ(bag(tensor(std::vector<int64_t>{1, 2, 3, 4}, Shape{2, 2})).shape(), (Shape{2, 3}));
}

TEST(EmbeddingBag, BadIndexNamesTheFunctionAndValue) {
  expect_error<std::out_of_range>(
      [] {
        F::embedding_bag(tensor({1, 7}), input({3, 4}), tensor({0}));
      },
      "[embedding_bag] index out of range in self: 7");
}

}  // namespace
}  // namespace wick::nn
