// Helpers shared by the C++ tests.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "wick.h"

namespace wick::testing {

// A path inside the repository (WICK_SOURCE_DIR is set by tests/CMakeLists.txt).
inline std::string source_path(const std::string& relative) {
  return std::string(WICK_SOURCE_DIR) + "/" + relative;
}

// Expects `actual` to have `shape` and values within atol + rtol * |expected| of `expected`.
inline void expect_close(const Tensor& actual, const std::vector<double>& expected,
                         const Shape& shape, double atol = 1e-5, double rtol = 1.3e-6) {
  ASSERT_EQ(actual.shape(), shape);
  std::vector<double> got = actual.to(kFloat64).to_vector<double>();
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(expected[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << "element " << i;
    } else if (std::isinf(expected[i])) {
      EXPECT_EQ(got[i], expected[i]) << "element " << i;
    } else {
      EXPECT_NEAR(got[i], expected[i], atol + rtol * std::fabs(expected[i])) << "element " << i;
    }
  }
}

inline void expect_close(const Tensor& actual, const Tensor& expected, double atol = 1e-5,
                         double rtol = 1.3e-6) {
  expect_close(actual, expected.to(kFloat64).to_vector<double>(), expected.shape(), atol, rtol);
}

// Expects the values of `actual` in order, whatever its shape.
inline void expect_values(const Tensor& actual, const std::vector<double>& expected) {
  expect_close(actual.reshape({-1}), expected, Shape{int64_t(expected.size())});
}

// Runs `fn` and expects an exception of type E whose message contains `fragment`.
template <class E, class Fn>
void expect_error(Fn&& fn, const std::string& fragment) {
  try {
    fn();
  } catch (const E& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos)
        << "message was: " << e.what();
    return;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw a different exception type: " << e.what();
    return;
  }
  ADD_FAILURE() << "did not throw; expected a message containing '" << fragment << "'";
}

// A float64 tensor of `shape` with values from a fixed seed, requiring grad.
inline Tensor input(const Shape& shape, uint64_t seed = 1) {
  Generator g(seed);
  return randn(shape, kFloat64, g).requires_grad_();
}

// A float64 tensor of `shape` laid out non-contiguously, requiring grad: built with its dims
// reversed and permuted back (2-D and up), or as every other element of a longer vector (1-D).
inline Tensor noncontiguous_input(const Shape& shape, uint64_t seed = 1) {
  Generator g(seed);
  Tensor t;
  if (shape.size() >= 2) {
    Shape flipped;
    DimList order;
    for (int64_t d = shape.size() - 1; d >= 0; --d) {
      flipped.push_back(shape[d]);
      order.push_back(d);
    }
    t = randn(flipped, kFloat64, g).permute(order);
  } else if (shape.size() == 1) {
    t = randn(Shape{2 * shape[0]}, kFloat64, g).slice(0, 0, 2 * shape[0], 2);
  } else {
    t = randn(shape, kFloat64, g);
  }
  return t.detach().requires_grad_();
}

}  // namespace wick::testing
