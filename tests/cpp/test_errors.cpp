// Bad input raises a clear exception of the documented type, naming the op and the values.
#include "tests/cpp/test_util.h"

namespace wick {
namespace {

using testing::expect_error;

TEST(Errors, ShapeMismatch) {
  expect_error<std::invalid_argument>(
      [] {
        ones({2, 3}) + ones({4});
      },
      "[add] shapes (2, 3) and (4,) cannot be broadcast together");
  expect_error<std::invalid_argument>(
      [] {
        matmul(ones({2, 3}), ones({4, 5}));
      },
      "[matmul] inner dimensions differ: (2, 3) @ (4, 5)");
  expect_error<std::invalid_argument>(
      [] {
        bmm(ones({2, 3, 4}), ones({3, 4, 5}));
      },
      "[bmm] batch sizes differ");
  expect_error<std::invalid_argument>(
      [] {
        cat({ones({2, 3}), ones({2, 4})});
      },
      "[cat] sizes must match except in dimension 0");
  expect_error<std::invalid_argument>(
      [] {
        linear(ones({2, 3}), ones({4, 5}));
      },
      "[linear] input of shape (2, 3) does not match weight");
  expect_error<std::invalid_argument>(
      [] {
        ones({2}).expand({3, 3});
      },
      "[expand] cannot expand shape (2,) to (3, 3)");
  expect_error<std::invalid_argument>(
      [] {
        ones({2, 3}).add_(ones({4, 2, 3}));
      },
      "[add_] the result of shape (4, 2, 3) does not fit");
  expect_error<std::invalid_argument>(
      [] {
        stack({ones({2}), ones({3})});
      },
      "[stack] all tensors must have one shape");
}

TEST(Errors, DTypeMismatch) {
  expect_error<TypeError>(
      [] {
        matmul(ones({2, 2}), ones({2, 2}, kFloat64));
      },
      "[matmul] expected both operands to have one dtype; got float32 and float64");
  expect_error<TypeError>([] { where(ones({2}), ones({2}), ones({2})); },
                          "[where] condition must be a bool tensor; got float32");
  expect_error<TypeError>(
      [] {
        tensor({1, 2}).add_(tensor({1.5, 2.5}));
      },
      "[add_] the result type float32 cannot be stored in a tensor of dtype int64");
  expect_error<TypeError>([] { ones({2}).index_select(0, ones({1})); },
                          "[index_select] index must be an integer tensor; got float32");
  expect_error<TypeError>(
      [] {
        tensor({1, 2}).requires_grad_();
      },
      "only floating-point tensors can require gradients");
  expect_error<TypeError>([] { -tensor({true}); }, "[neg] negating a bool tensor");
  expect_error<TypeError>([] { rand({2}, kInt64); }, "[rand] expected a floating-point dtype");
}

TEST(Errors, BadDim) {
  expect_error<std::out_of_range>(
      [] {
        ones({2, 3}).sum({2});
      },
      "[sum] dimension out of range (expected to be in [-2, 1]); got 2");
  expect_error<std::out_of_range>(
      [] {
        ones({2, 3}).softmax(-3);
      },
      "[softmax] dimension out of range");
  expect_error<std::out_of_range>(
      [] {
        ones({2, 3}).transpose(0, 5);
      },
      "[transpose] dimension out");
  expect_error<std::invalid_argument>(
      [] {
        ones({2, 3}).sum({1, -1});
      },
      "[sum] dimension -1 appears more than once");
  expect_error<std::invalid_argument>(
      [] {
        ones({2, 3}).permute({0, 0});
      },
      "[permute] dimension 0 is repeated");
}

TEST(Errors, OutOfRangeIndex) {
  expect_error<std::out_of_range>(
      [] {
        ones({2, 3}).select(1, 3);
      },
      "[select] index 3 is out of range for dimension 1 with size 3");
  expect_error<std::out_of_range>(
      [] {
        ones({4, 2}).index_select(0, tensor({1, 4}));
      },
      "[index_select] index 4 is out of bounds for dimension 0 with size 4");
  expect_error<std::out_of_range>(
      [] {
        ones({2, 2}).gather(1, tensor({0, -3}).reshape({2, 1}));
      },
      "[gather] index -3 is out of bounds");
  expect_error<std::out_of_range>([] { zeros({3}).scatter_add(0, tensor({5}), ones({1})); },
                                  "[scatter_add] index 5 is out of bounds");
  expect_error<std::out_of_range>(
      [] {
        one_hot(tensor({0, 3}), 3);
      },
      "[one_hot] class value 3 is out of range for num_classes=3");
  expect_error<std::runtime_error>([] { ones({5}).narrow(0, 3, 3); },
                                   "[narrow] start (3) + length (3) exceeds dimension size (5)");
  expect_error<std::out_of_range>([] { ones({0}).max(0); },
                                  "[max] cannot reduce over dimension 0 of size 0");
  expect_error<std::out_of_range>([] { ones({0}).max(); }, "[max] cannot reduce an empty tensor");
  expect_error<std::out_of_range>(
      [] { ones({2}).as_strided({3}, {1}, 0); },
      "[as_strided] shape (3,) with strides (1,) and offset 0 reaches outside");
}

TEST(Errors, WrongNumelInReshape) {
  expect_error<std::invalid_argument>(
      [] {
        ones({2, 3}).reshape({4, 2});
      },
      "[reshape] shape (4, 2) is invalid for input of size 6");
  expect_error<std::invalid_argument>(
      [] {
        ones({2, 3}).reshape({-1, 4});
      },
      "[reshape] shape (-1, 4) is invalid for input of size 6");
  expect_error<std::invalid_argument>(
      [] {
        ones({2, 3}).view({-1, -1});
      },
      "[view] only one dimension can be -1");
  expect_error<std::invalid_argument>(
      [] {
        ones({2, 3}).t().view({6});
      },
      "[view] a tensor of shape (3, 2) and strides (1, 3) cannot be viewed");
  expect_error<std::invalid_argument>(
      [] {
        tensor(std::vector<float>{1, 2, 3}, Shape{2, 2});
      },
      "[tensor] shape (2, 2) holds 4 elements but 3 values");
}

TEST(Errors, BackwardTwiceWithoutRetainGraph) {
  Tensor x = ones({2}).requires_grad_();
  Tensor y = (x * x).sum();
  y.backward();
  expect_error<std::runtime_error>(
      [&] { y.backward(); },
      "[backward] trying to backward through the graph a second time (the tensors saved by "
      "MulBackward have already been freed)");
}

TEST(Errors, OtherMisuse) {
  expect_error<std::invalid_argument>([] { Tensor() + ones({1}); },
                                      "[add] got an undefined tensor");
  expect_error<std::invalid_argument>([] { ones({2}).item(); },
                                      "[item] only a tensor with one element");
  expect_error<std::invalid_argument>([] { randint(5, 5, {2}); }, "[randint] low must be less");
  expect_error<std::invalid_argument>([] { arange(0, 5, -1); },
                                      "[arange] upper bound and step sign");
  expect_error<std::invalid_argument>([] { empty({2, -1}); }, "[empty] negative dimension");
  expect_error<std::invalid_argument>(
      [] {
        ones({2}).expand({2, 2}).add_(1.0);
      },
      "cannot write in place into a tensor whose elements share memory");
  expect_error<std::invalid_argument>([] { gelu(ones({1}), "fast"); },
                                      "[gelu] approximate must be 'none' or 'tanh'; got 'fast'");
  expect_error<std::runtime_error>([] { ones({1}).register_hook(nullptr); },
                                   "cannot register a hook on a tensor that does not require grad");
  expect_error<std::invalid_argument>(
      [] {
        Shape s = Shape::filled(kMaxDims, 1);
        s.push_back(1);
      },
      "at most 8 dimensions");
}

}  // namespace
}  // namespace wick
