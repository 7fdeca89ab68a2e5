// Distances (nn/layers/distance.h): float64 gradcheck and the module's output shape.
#include "nn/layers/distance.h"
#include "tests/cpp/test_util.h"

namespace wick::nn {
namespace {

namespace F = functional;
using wick::testing::input;

// The modules' parameters are float32, as PyTorch's.
Tensor x32(const Shape& shape, uint64_t seed = 1) {
  return input(shape, seed).detach().to(kFloat32);
}

TEST(Distance, Gradcheck) {
  EXPECT_TRUE(gradcheck([](const TensorList& t) { return F::cosine_similarity(t[0], t[1]); },
                        {input({3, 4}), input({3, 4}, 2)}));
  EXPECT_TRUE(gradcheck([](const TensorList& t) { return F::pairwise_distance(t[0], t[1]); },
                        {input({3, 4}), input({1, 4}, 2)}));
}

TEST(Distance, ModuleOutputShape) {
  EXPECT_EQ(CosineSimilarity().forward(x32({3, 4}), x32({3, 4}, 2)).shape(), (Shape{3}));
}

}  // namespace
}  // namespace wick::nn
