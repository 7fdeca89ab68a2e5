// Group, instance and vector normalization (nn/layers/normalization.h): float64 gradcheck, a
// hand-computed case, the running statistics, parameters and names, and bad input. Batch norm's
// kernels are tested in test_nn_ops.cpp, the BatchNorm and LayerNorm modules in
// test_nn_module.cpp.
#include "nn/layers/normalization.h"
#include "tests/cpp/test_util.h"

namespace wick::nn {
namespace {

namespace F = functional;
using wick::testing::expect_error;
using wick::testing::expect_values;
using wick::testing::input;
using wick::testing::noncontiguous_input;

TEST(Normalization, Gradcheck) {
  EXPECT_TRUE(gradcheck([](const TensorList& t) { return F::group_norm(t[0], 2, t[1], t[2]); },
                        {input({2, 4, 3}), input({4}, 2), input({4}, 3)}));
  EXPECT_TRUE(
      gradcheck([](const TensorList& t) { return F::instance_norm(t[0], {}, {}, t[1], t[2]); },
                {noncontiguous_input({2, 3, 4}), input({3}, 2), input({3}, 3)}));
  EXPECT_TRUE(gradcheck([](const TensorList& t) { return F::normalize(t[0]); }, {input({3, 4})}));
}

TEST(Normalization, GroupNormByHand) {
  expect_values(F::group_norm(tensor({{1., 3., 5., 7.}}).reshape({1, 2, 2}), 1).reshape({4}),
                {-1.3416394, -0.4472131, 0.4472131, 1.3416394});
}

TEST(Normalization, InstanceNormUpdatesRunningStatistics) {
  Tensor x = tensor({{1., 3.}, {2., 6.}}).reshape({1, 2, 2});
  Tensor mean = zeros({2}), var = ones({2});
  F::instance_norm(x, mean, var, {}, {}, true, 0.5);
  expect_values(mean, {1.0, 2.0});  // 0.5 * 0 + 0.5 * (2, 4)
  expect_values(var, {1.5, 4.5});   // 0.5 * 1 + 0.5 * unbiased (2, 8)
}

TEST(Normalization, ModulesHavePyTorchsParametersAndNames) {
  InstanceNorm2d in(3, 1e-5, 0.1, true, true);
  std::vector<std::string> names;
  for (auto& [name, t] : in.state_dict()) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"bias", "num_batches_tracked", "running_mean",
                                             "running_var", "weight"}));  // a sorted map
  GroupNorm gn(2, 4);
  expect_values(gn.weight, {1, 1, 1, 1});
}

TEST(Normalization, BadInputsNameTheFunctionAndValues) {
  expect_error<std::runtime_error>([] { F::group_norm(input({1, 6, 3}), 4); }, "num_groups=4");
  expect_error<std::invalid_argument>([] { GroupNorm(4, 6); }, "num_groups=4, num_channels=6");
}

}  // namespace
}  // namespace wick::nn
