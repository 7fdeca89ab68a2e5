// Matrix products: the packed GEMM against a naive triple loop over sizes that exercise every edge
// tile, strides and alpha/beta; matmul's 1-D, 2-D and broadcast batched forms; bmm; linear.
#include <tuple>
#include <vector>

#include <omp.h>

#include "core/cpu/gemm.h"
#include "tests/cpp/test_util.h"

namespace wick {
namespace {

using testing::expect_close;

// C = alpha * A @ B + beta * C with A, B, C given by (row stride, col stride).
void naive_gemm(int64_t m, int64_t n, int64_t k, double alpha, const float* a, int64_t rsa,
                int64_t csa, const float* b, int64_t rsb, int64_t csb, double beta,
                std::vector<double>& c) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0;
      for (int64_t p = 0; p < k; ++p) acc += double(a[i * rsa + p * csa]) * b[p * rsb + j * csb];
      c[i * n + j] = alpha * acc + beta * c[i * n + j];
    }
  }
}

TEST(Gemm, PackedMatchesNaiveOnEdgeSizes) {
  Generator g(3);
  for (int64_t m : {1, 5, 12, 13, 70, 200}) {
    for (int64_t n : {1, 7, 32, 33, 100}) {
      for (int64_t k : {1, 17, 385, 800}) {
        for (int transposed = 0; transposed < 4; ++transposed) {
          const bool transpose_a = transposed & 1, transpose_b = transposed & 2;
          Tensor a = transpose_a ? rand({k, m}, {}, g).t() : rand({m, k}, {}, g);
          // A transposed B packs column by column (Note [reused packing buffers] and pack_b).
          Tensor b = transpose_b ? rand({n, k}, {}, g).t() : rand({k, n}, {}, g);
          Tensor c0 = rand({m, n}, {}, g);
          std::vector<double> expected = c0.to(kFloat64).to_vector<double>();
          naive_gemm(m, n, k, 0.5, a.data<float>(), a.stride(0), a.stride(1), b.data<float>(),
                     b.stride(0), b.stride(1), 2.0, expected);
          Tensor c = c0.clone();
          cpu::gemm_packed(m, n, k, 0.5f, {a.data_ptr(), a.stride(0), a.stride(1)},
                           {b.data_ptr(), b.stride(0), b.stride(1)}, 2.0f, {c.data_ptr(), n, 1});
          SCOPED_TRACE(::testing::Message() << m << "x" << n << "x" << k << " transposed A "
                                            << transpose_a << " transposed B " << transpose_b);
          expect_close(c, expected, {m, n}, 1e-4, 1e-5);
        }
      }
    }
  }
}

TEST(Gemm, PrepackedAGivesTheSameProducts) {
  // Both tile heights (16 and 64 rows take the short one, 13 too; 12 and 200 the long one), a
  // depth past one KC block, and one packing used for several B and C.
  Generator g(5);
  for (int64_t m : {1, 12, 13, 16, 64, 200}) {
    for (int64_t k : {9, 400}) {
      for (bool transpose_a : {false, true}) {
        Tensor a = transpose_a ? rand({k, m}, {}, g).t() : rand({m, k}, {}, g);
        cpu::PackedA packed(m, k, {a.data_ptr(), a.stride(0), a.stride(1)});
        for (int64_t n : {1, 33, 70}) {
          Tensor b = rand({k, n}, {}, g), c0 = rand({m, n}, {}, g);
          Tensor expected = c0.clone(), c = c0.clone();
          cpu::gemm_packed(m, n, k, 0.5f, {a.data_ptr(), a.stride(0), a.stride(1)},
                           {b.data_ptr(), n, 1}, 2.0f, {expected.data_ptr(), n, 1});
          cpu::gemm_prepacked(packed, n, 0.5f, {b.data_ptr(), n, 1}, 2.0f, {c.data_ptr(), n, 1});
          SCOPED_TRACE(::testing::Message()
                       << m << "x" << n << "x" << k << " transposed A " << transpose_a);
          EXPECT_EQ(c.to_vector<float>(), expected.to_vector<float>());  // the same sums
        }
      }
    }
  }
}

TEST(Gemm, FewRowsSplitTheColumnsBetweenThreads) {
  // Note [few rows: threads split the columns]: few row panels and many column panels, with B
  // plain and transposed (the 16 x 16 register transpose in pack_b, and its ragged edges), a
  // ragged last column panel, more column panels than one buffer block holds (n = 9000), and
  // team sizes 1-3, each against the naive product.
  Generator g(7);
  const int saved = omp_get_max_threads();
  for (int threads : {1, 2, 3}) {
    omp_set_num_threads(threads);
    for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{49, 512, 400},
                           {13, 300, 17},
                           {5, 9000, 33},
                           {1, 256, 130}}) {
      for (bool transpose_b : {false, true}) {
        Tensor a = rand({m, k}, {}, g);
        Tensor b = transpose_b ? rand({n, k}, {}, g).t() : rand({k, n}, {}, g);
        std::vector<double> expected(static_cast<size_t>(m * n), 0.0);
        naive_gemm(m, n, k, 1.0, a.data<float>(), k, 1, b.data<float>(), b.stride(0), b.stride(1),
                   0.0, expected);
        Tensor c = full({m, n}, std::nan(""));
        cpu::gemm_packed(m, n, k, 1.0f, {a.data_ptr(), k, 1},
                         {b.data_ptr(), b.stride(0), b.stride(1)}, 0.0f, {c.data_ptr(), n, 1});
        SCOPED_TRACE(::testing::Message() << threads << " threads, " << m << "x" << n << "x" << k
                                          << " transposed B " << transpose_b);
        expect_close(c, expected, {m, n}, 1e-4, 1e-5);
      }
    }
  }
  omp_set_num_threads(saved);
}

TEST(Gemm, BetaZeroIgnoresGarbageInC) {
  Tensor a = ones({3, 4}), b = ones({4, 5});
  Tensor c = full({3, 5}, std::nan(""));
  cpu::gemm_packed(3, 5, 4, 1.0f, {a.data_ptr(), 4, 1}, {b.data_ptr(), 5, 1}, 0.0f,
                   {c.data_ptr(), 5, 1});
  expect_close(c, std::vector<double>(15, 4.0), {3, 5});
}

TEST(Gemm, EigenAgreesForDoubles) {
  Tensor a = randn({37, 29}, kFloat64), b = randn({29, 41}, kFloat64);
  Tensor c = zeros({37, 41}, kFloat64);
  cpu::gemm_eigen<double>(37, 41, 29, 1.0, {a.data_ptr(), 29, 1}, {b.data_ptr(), 41, 1}, 0.0,
                          {c.data_ptr(), 41, 1});
  expect_close(c, matmul(a, b), 1e-12, 1e-12);
}

TEST(Matmul, ShapesOfEveryForm) {
  Tensor v = tensor({1., 2., 3.});
  Tensor m = arange(6).reshape({3, 2}).to(kFloat32);  // [[0, 1], [2, 3], [4, 5]]
  expect_close(matmul(v, v), {14}, {});
  expect_close(matmul(v, m), {16, 22}, {2});
  expect_close(matmul(m.t(), v), {16, 22}, {2});
  expect_close(matmul(m.t(), m), {20, 26, 26, 35}, {2, 2});
  // Batched with broadcasting: (2, 1, 3, 2) @ (4, 2, 1) -> (2, 4, 3, 1)
  Tensor a = randn({2, 1, 3, 2}, kFloat64), b = randn({4, 2, 1}, kFloat64);
  Tensor out = matmul(a, b);
  ASSERT_EQ(out.shape(), (Shape{2, 4, 3, 1}));
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 4; ++j) {
      expect_close(out[i][j], matmul(a[i][0], b[j]), 1e-12, 1e-12);
    }
  }
  // A batch of rows times one matrix, and a vector times a batch.
  expect_close(matmul(a, m.t().to(kFloat64)).select(0, 1), matmul(a[1], m.t().to(kFloat64)), 1e-12,
               1e-12);
  EXPECT_EQ(matmul(v.to(kFloat64), randn({5, 3, 4}, kFloat64)).shape(), (Shape{5, 4}));
}

TEST(Matmul, AllDTypes) {
  Tensor a = tensor({{1., 2.}, {3., 4.}}), b = tensor({{5., 6.}, {7., 8.}});
  std::vector<double> expected = {19, 22, 43, 50};
  for (DType dtype : {kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kInt32}) {
    SCOPED_TRACE(dtype_name(dtype));
    Tensor c = matmul(a.to(dtype), b.to(dtype));
    EXPECT_EQ(c.dtype(), dtype);
    expect_close(c, expected, {2, 2});
  }
}

TEST(Matmul, BmmAndLinear) {
  Tensor a = randn({3, 4, 5}, kFloat64), b = randn({3, 5, 2}, kFloat64);
  Tensor c = bmm(a, b);
  for (int i = 0; i < 3; ++i) expect_close(c[i], matmul(a[i], b[i]), 1e-12, 1e-12);
  Tensor x = randn({6, 5}), w = randn({3, 5}), bias = randn({3});
  expect_close(linear(x, w, bias), matmul(x, w.t()) + bias, 1e-5, 1e-5);
  expect_close(linear(x, w), matmul(x, w.t()), 1e-5, 1e-5);
  EXPECT_EQ(linear(randn({2, 4, 5}), w).shape(), (Shape{2, 4, 3}));
}

}  // namespace
}  // namespace wick
