// Process-wide defaults: the default floating dtype every factory, Python-style float scalar and
// new layer follows (set_default_dtype), and the print options Tensor::str() follows.
#include "tests/cpp/test_util.h"

namespace wick {
namespace {

// Restores float32 and the default print options whatever a test does.
class Defaults : public ::testing::Test {
 protected:
  void TearDown() override {
    set_default_dtype(kFloat32);
    set_print_options(PrintOptions{});
  }
};

TEST_F(Defaults, FactoriesFollowTheDefaultDtype) {
  EXPECT_EQ(get_default_dtype(), kFloat32);
  EXPECT_EQ(zeros({2}).dtype(), kFloat32);
  set_default_dtype(kFloat64);
  EXPECT_EQ(get_default_dtype(), kFloat64);
  EXPECT_EQ(zeros({2}).dtype(), kFloat64);
  EXPECT_EQ(ones({2}).dtype(), kFloat64);
  EXPECT_EQ(empty({2}).dtype(), kFloat64);
  EXPECT_EQ(rand({2}).dtype(), kFloat64);
  EXPECT_EQ(randn({2}).dtype(), kFloat64);
  EXPECT_EQ(linspace(0, 1, 3).dtype(), kFloat64);
  EXPECT_EQ(eye(2).dtype(), kFloat64);
  EXPECT_EQ(full({2}, 1.5).dtype(), kFloat64);
  EXPECT_EQ(full({2}, 1).dtype(), kInt64);  // integers keep int64
  EXPECT_EQ(arange(0.0, 1.0, 0.5).dtype(), kFloat64);
  EXPECT_EQ(arange(3).dtype(), kInt64);
  EXPECT_EQ(tensor({1.5, 2.5}).dtype(), kFloat64);
  EXPECT_EQ(tensor({{1.0, 2.0}}).dtype(), kFloat64);
  EXPECT_EQ((arange(3) * 2.5).dtype(), kFloat64);     // a float scalar with an integer tensor
  EXPECT_EQ(zeros({2}, kFloat32).dtype(), kFloat32);  // an explicit dtype still wins
  nn::Linear layer(2, 3);
  for (const Tensor& p : layer.parameters()) EXPECT_EQ(p.dtype(), kFloat64);
  set_default_dtype(kFloat32);
  EXPECT_EQ(zeros({2}).dtype(), kFloat32);
}

TEST_F(Defaults, OnlyFloat32AndFloat64CanBeTheDefault) {
  for (DType bad : {kInt64, kInt32, kBool, kUInt8, kFloat16, kBFloat16}) {
    EXPECT_THROW(set_default_dtype(bad), TypeError) << dtype_name(bad);
  }
  EXPECT_EQ(get_default_dtype(), kFloat32);
  try {
    set_default_dtype(kInt64);
  } catch (const TypeError& e) {
    EXPECT_NE(std::string(e.what()).find("set_default_dtype"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("int64"), std::string::npos);
  }
}

TEST_F(Defaults, PrintShowsDtypeUnlessItIsTheDefault) {
  EXPECT_EQ(tensor({1.5}).str(), "tensor([1.5000])");
  set_default_dtype(kFloat64);
  EXPECT_EQ(tensor({1.5}).str(), "tensor([1.5000])");
  EXPECT_EQ(tensor({1.5}, kFloat32).str(), "tensor([1.5000], dtype=float32)");
}

TEST_F(Defaults, PrintOptionsTakeEffect) {
  PrintOptions o;
  o.precision = 2;
  set_print_options(o);
  EXPECT_EQ(tensor({1.0 / 3, 2.0}).str(), "tensor([0.33, 2.00])");
  o.sci_mode = true;
  set_print_options(o);
  EXPECT_EQ(tensor({1.5}).str(), "tensor([1.50e+00])");
  o = PrintOptions{};
  o.threshold = 4;
  o.edgeitems = 1;
  set_print_options(o);
  EXPECT_EQ(arange(6).str(), "tensor([0,  ..., 5])");
  EXPECT_EQ(get_print_options().threshold, 4);
  o.linewidth = 0;
  EXPECT_THROW(set_print_options(o), std::invalid_argument);
  EXPECT_EQ(get_print_options().linewidth, 80);  // a rejected set changes nothing
}

}  // namespace
}  // namespace wick
