// Lab 06's graded tests: each GEMM step is checked against a double-precision reference, then
// timed at 512 x 512 x 512 on one core next to wick's packed GEMM and OpenBLAS, and placed on a
// roofline of this processor (peak FMA throughput and memory bandwidth, measured here).
#include <cblas.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <random>
#include <sstream>
#include <vector>

#include "core/cpu/gemm.h"
#include "lab.h"
#include "my_gemm.h"
#include "svg_chart.h"

using namespace lab06;

static std::vector<float> random_matrix(int rows, int cols, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> v(size_t(rows) * cols);
  for (float& x : v) x = u(rng);
  return v;
}

static void check_gemm(
    const std::function<void(int, int, int, const float*, const float*, float*)>& f) {
  for (auto [m, n, k] : {std::tuple{1, 1, 1}, {7, 5, 3}, {67, 45, 53}, {130, 300, 270}}) {
    auto A = random_matrix(m, k, 1), B = random_matrix(k, n, 2);
    std::vector<float> C(size_t(m) * n, 42.0f);  // garbage: C must be overwritten
    f(m, n, k, A.data(), B.data(), C.data());
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        double ref = 0;
        for (int p = 0; p < k; ++p) ref += double(A[size_t(i) * k + p]) * B[size_t(p) * n + j];
        if (std::abs(C[size_t(i) * n + j] - ref) > 1e-4 * (1 + std::sqrt(double(k)))) {
          std::ostringstream s;
          s << m << "x" << n << "x" << k << ": C[" << i << "][" << j
            << "] = " << C[size_t(i) * n + j] << ", expected " << ref;
          throw lab::Failure(s.str());
        }
      }
  }
}

LAB_TEST(naive_correct, "gemm_naive computes A @ B") { check_gemm(gemm_naive); }
LAB_TEST(blocked_correct, "gemm_blocked computes A @ B (ragged tiles too)") {
  check_gemm(gemm_blocked);
}

LAB_TEST(pack_a_layout, "pack_a: MR-row panels, kk-major inside, zero padding") {
  int mc = MR + 2, kc = 3;
  auto A = random_matrix(mc, 5, 3);
  std::vector<float> p(size_t(2 * MR) * kc, -1);
  pack_a(mc, kc, A.data(), 5, p.data());
  for (int panel = 0; panel < 2; ++panel)
    for (int kk = 0; kk < kc; ++kk)
      for (int r = 0; r < MR; ++r) {
        int row = panel * MR + r;
        LAB_CHECK_EQ(p[size_t(panel) * MR * kc + kk * MR + r], row < mc ? A[row * 5 + kk] : 0.0f);
      }
}

LAB_TEST(pack_b_layout, "pack_b: NR-column panels, kk-major inside, zero padding") {
  int kc = 3, nc = NR + 5;
  auto B = random_matrix(kc, nc + 1, 4);
  std::vector<float> p(size_t(2 * NR) * kc, -1);
  pack_b(kc, nc, B.data(), nc + 1, p.data());
  for (int panel = 0; panel < 2; ++panel)
    for (int kk = 0; kk < kc; ++kk)
      for (int c = 0; c < NR; ++c) {
        int col = panel * NR + c;
        LAB_CHECK_EQ(p[size_t(panel) * NR * kc + kk * NR + c],
                     col < nc ? B[kk * (nc + 1) + col] : 0.0f);
      }
}

LAB_TEST(micro_kernel_correct, "kernel_micro equals kernel_scalar on one panel pair") {
  int kc = 37;
  auto a = random_matrix(kc, MR, 5), b = random_matrix(kc, NR, 6);
  std::vector<float> t1(MR * NR), t2(MR * NR, 7.0f);
  kernel_scalar(kc, a.data(), b.data(), t1.data());
  kernel_micro(kc, a.data(), b.data(), t2.data());
  for (int i = 0; i < MR * NR; ++i) LAB_CHECK(std::abs(t1[i] - t2[i]) < 1e-4);
}

LAB_TEST(packed_correct, "gemm_packed computes A @ B with either kernel") {
  check_gemm([](int m, int n, int k, const float* A, const float* B, float* C) {
    gemm_packed(m, n, k, A, B, C, false);
  });
  check_gemm([](int m, int n, int k, const float* A, const float* B, float* C) {
    gemm_packed(m, n, k, A, B, C, true);
  });
}

// Best time of `reps` runs, in seconds.
static double best_seconds(const std::function<void()>& f, int reps) {
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

// Peak single-core FMA throughput: 12 independent vector FMA chains in registers, no memory.
constexpr int kLanes = NR / 2;  // floats per vector register: 8 (AVX2) or 16 (AVX-512)
typedef float vec __attribute__((vector_size(kLanes * 4)));
__attribute__((noinline)) static float fma_chains(long iters, float seed) {
  vec x = vec{} + seed, y = vec{} + (1 - seed);
  vec a0 = x, a1 = y, a2 = x, a3 = y, a4 = x, a5 = y, a6 = x, a7 = y, a8 = x, a9 = y, a10 = x,
      a11 = y;
  for (long i = 0; i < iters; ++i) {
    a0 = a0 * x + y, a1 = a1 * x + y, a2 = a2 * x + y, a3 = a3 * x + y;
    a4 = a4 * x + y, a5 = a5 * x + y, a6 = a6 * x + y, a7 = a7 * x + y;
    a8 = a8 * x + y, a9 = a9 * x + y, a10 = a10 * x + y, a11 = a11 * x + y;
  }
  vec sum = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 + a10 + a11;
  return sum[0];
}

static double measure_peak_gflops() {
  const long iters = 20000000;
  volatile float sink = 0;
  double s = best_seconds([&] { sink = fma_chains(iters, 1.0001f); }, 2);
  (void)sink;
  return 2.0 * kLanes * 12 * iters / s / 1e9;
}

// Memory read bandwidth: summing a 256 MiB array with vector partial sums.
static double measure_bandwidth_gbs() {
  std::vector<float> big(64 << 20, 1.0f);
  volatile float sink = 0;
  double s = best_seconds(
      [&] {
        float sum = 0;
#pragma omp simd reduction(+ : sum)
        for (size_t i = 0; i < big.size(); ++i) sum += big[i];
        sink = sum;
      },
      2);
  (void)sink;
  return double(big.size()) * 4 / s / 1e9;
}

LAB_TEST(speed_and_roofline, "GFLOP/s of each step vs wick and OpenBLAS (1 core), roofline") {
  const int n = 512;
  const double flops = 2.0 * n * n * n;
  auto A = random_matrix(n, n, 7), B = random_matrix(n, n, 8);
  std::vector<float> C(size_t(n) * n);
  struct Row {
    std::string name;
    double gflops;
  };
  std::vector<Row> rows;
  auto time = [&](const std::string& name, const std::function<void()>& f, int reps) {
    rows.push_back({name, flops / best_seconds(f, reps) / 1e9});
  };
  time(
      "naive", [&] { gemm_naive(n, n, n, A.data(), B.data(), C.data()); }, 1);
  time(
      "blocked", [&] { gemm_blocked(n, n, n, A.data(), B.data(), C.data()); }, 2);
  time(
      "packed", [&] { gemm_packed(n, n, n, A.data(), B.data(), C.data(), false); }, 2);
  time(
      "micro-kernel", [&] { gemm_packed(n, n, n, A.data(), B.data(), C.data(), true); }, 3);
  time(
      "wick gemm_packed",
      [&] {
        wick::cpu::gemm_packed(n, n, n, 1.0f, {A.data(), n, 1}, {B.data(), n, 1}, 0.0f,
                               {C.data(), n, 1});
      },
      3);
  time(
      std::string("OpenBLAS (") + openblas_get_corename() + ")",
      [&] {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, A.data(), n, B.data(),
                    n, 0.0f, C.data(), n);
      },
      3);
  double peak = measure_peak_gflops(), bw = measure_bandwidth_gbs();
  std::ostringstream table;
  for (const Row& r : rows) {
    char line[160];
    std::snprintf(line, sizeof line, "\n    %-26s %7.2f GFLOP/s  %5.1f%% of OpenBLAS",
                  r.name.c_str(), r.gflops, 100 * r.gflops / rows.back().gflops);
    table << line;
  }
  lab::figure("sgemm 512x512x512, one core" +
                  std::string(std::getenv("OPENBLAS_CORETYPE")
                                  ? " (OPENBLAS_CORETYPE=" +
                                        std::string(std::getenv("OPENBLAS_CORETYPE")) + ")"
                                  : ""),
              table.str());
  lab::figure("roofline: peak FMA (GFLOP/s, one core)", peak);
  lab::figure("roofline: memory read bandwidth (GB/s)", bw);
  // The roofline: attainable = min(peak, intensity * bandwidth). A 512^3 GEMM does 2n^3 flops on
  // 3 n^2 floats: n/6 = 85 flop/byte at best, far right of the ridge - compute bound.
  std::vector<double> xs, ys;
  for (double ai = 0.03; ai <= 1000; ai *= 1.2)
    xs.push_back(ai), ys.push_back(std::min(peak, ai * bw));
  std::vector<lab::Series> series = {{"roof: min(peak, intensity x bandwidth)", "black", xs, ys}};
  const char* colors[] = {"#d62728", "#ff7f0e", "#bcbd22", "#2ca02c", "#17becf", "#1f77b4"};
  for (size_t i = 0; i < rows.size(); ++i)
    series.push_back({rows[i].name, colors[i % 6], {n / 6.0}, {rows[i].gflops}, true});
  const char* out = std::getenv("LAB_OUT");
  std::string svg = std::string(out ? out : ".") + "/06_roofline.svg";
  lab::write_chart(svg, "Lab 06: roofline of one core, sgemm 512^3",
                   "arithmetic intensity (flop/byte)", "GFLOP/s", series, true);
  lab::figure("chart", svg);
  LAB_CHECK(rows[3].gflops > 3 * rows[0].gflops);  // the micro-kernel beats naive many times over
  LAB_CHECK(rows[3].gflops > 0.2 * rows.back().gflops);
}

LAB_MAIN()
