// int8 inference (core/ops/quantized.h): the int8 dtype, quantize / dequantize, and the int8
// GEMM behind quantized_linear and quantized_conv2d, every backend this machine has checked for
// exactly the bytes of a naive integer reference (Note [int8 GEMM] in core/cpu/gemm_int8.h).
#include <cstdlib>
#include <random>
#include <sstream>
#include <vector>

#include "core/cpu/gemm_int8.h"
#include "tests/cpp/test_util.h"

namespace wick {
namespace {

using cpu::Int8Backend;

std::vector<Int8Backend> available_backends() {
  unsetenv("WICK_INT8_GEMM");  // the tests choose the backend themselves
  std::vector<Int8Backend> all;
  for (Int8Backend b : {Int8Backend::kPortable, Int8Backend::kAvx512Vnni, Int8Backend::kAmx}) {
    if (cpu::int8_backend_available(b)) all.push_back(b);
  }
  return all;
}

// Restores automatic selection when a test ends, whatever it forced.
struct ForceBackend {
  explicit ForceBackend(Int8Backend b) { cpu::set_int8_backend(b); }
  ~ForceBackend() { cpu::set_int8_backend(std::nullopt); }
};

template <class T>
std::vector<T> random_bytes(size_t n, int lo, int hi, std::mt19937& rng) {
  std::uniform_int_distribution<int> d(lo, hi);
  std::vector<T> v(n);
  for (T& x : v) x = static_cast<T>(d(rng));
  return v;
}

std::vector<float> random_floats(size_t n, float lo, float hi, std::mt19937& rng) {
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// The requantization of one exact accumulator (the library's reference definition).
uint8_t reference_requantize(int64_t acc, const std::vector<float>& weight_scale,
                             const std::vector<float>& bias, int64_t o, const QuantizedParams& p) {
  std::vector<float> m(weight_scale.size());
  for (size_t i = 0; i < m.size(); ++i) m[i] = static_cast<float>(p.input_scale) * weight_scale[i];
  cpu::Requantization rq{m.data(),
                         bias.empty() ? nullptr : bias.data(),
                         0,
                         static_cast<float>(p.output_scale),
                         static_cast<int32_t>(p.output_zero_point),
                         p.relu};
  return cpu::requantize(static_cast<int32_t>(acc), 0, o, rq);
}

// An output scale that spreads the outputs over the uint8 range for accumulators of this size.
double output_scale_for(int64_t depth, double input_scale) {
  // y has a standard deviation near input_scale * 0.0175 * sqrt(depth) * 75 * 74 (the weight
  // scales, the spread of x - zero point and of w); 1/40 of it per step.
  return input_scale * 2.5 * std::sqrt(static_cast<double>(depth));
}

TEST(Int8DType, NamesSizesAndPromotion) {
  EXPECT_STREQ(dtype_name(kInt8), "int8");
  EXPECT_EQ(element_size(kInt8), 1u);
  EXPECT_EQ(dtype_from_name("test", "int8"), kInt8);
  EXPECT_TRUE(is_integral(kInt8));
  EXPECT_FALSE(is_floating(kInt8));
  EXPECT_EQ(promote_types(kInt8, kBool), kInt8);
  EXPECT_EQ(promote_types(kInt8, kUInt8), kInt32);  // int16 in PyTorch, which wick lacks
  EXPECT_EQ(promote_types(kInt8, kInt64), kInt64);
  EXPECT_EQ(promote_types(kInt8, kFloat16), kFloat16);
  EXPECT_EQ((ones({2}, kInt8) + ones({2}, kInt8)).dtype(), kInt8);
}

TEST(Int8DType, CastsCreationAndComparison) {
  Tensor t = tensor(std::vector<int8_t>{-128, -1, 0, 127}, Shape{4});
  EXPECT_EQ(t.dtype(), kInt8);
  EXPECT_EQ(t.to(kFloat32).to_vector<float>(), (std::vector<float>{-128, -1, 0, 127}));
  EXPECT_EQ(t.to(kUInt8).to_vector<uint8_t>(), (std::vector<uint8_t>{128, 255, 0, 127}));
  EXPECT_EQ(t.to(kInt64).to_vector<int64_t>(), (std::vector<int64_t>{-128, -1, 0, 127}));
  // Integers wrap as a C cast does; floats truncate toward zero and saturate (Note in dtype.h).
  Tensor wide = tensor(std::vector<int64_t>{200, -129, 5}, Shape{3});
  EXPECT_EQ(wide.to(kInt8).to_vector<int8_t>(), (std::vector<int8_t>{-56, 127, 5}));
  Tensor f = tensor(std::vector<float>{-3.7f, 2.9f, 300.0f, -300.0f}, Shape{4});
  EXPECT_EQ(f.to(kInt8).to_vector<int8_t>(), (std::vector<int8_t>{-3, 2, 127, -128}));
  EXPECT_EQ(full({2, 2}, -5, kInt8).to_vector<int8_t>(), (std::vector<int8_t>(4, -5)));
  EXPECT_EQ(zeros({3}, kInt8).to_vector<int8_t>(), (std::vector<int8_t>(3, 0)));
  EXPECT_TRUE(equal(t, t.clone()));
  EXPECT_EQ((t < 0).to_vector<uint8_t>(), (std::vector<uint8_t>{1, 1, 0, 0}));
  std::ostringstream os;
  os << t;
  EXPECT_NE(os.str().find("dtype=int8"), std::string::npos) << os.str();
}

TEST(Quantize, RoundsHalfToEvenAndSaturates) {
  Tensor x =
      tensor(std::vector<float>{0.25f, 0.75f, 1.25f, -0.25f, 100.0f, -100.0f, 0.0f}, Shape{7});
  // x / 0.5 = 0.5, 1.5, 2.5, -0.5, 200, -200, 0 -> 0, 2, 2, -0 ...
  EXPECT_EQ(quantize_per_tensor(x, 0.5, 10).to_vector<uint8_t>(),
            (std::vector<uint8_t>{10, 12, 12, 10, 210, 0, 10}));
  EXPECT_EQ(quantize_per_tensor(x, 0.5, 0, kInt8).to_vector<int8_t>(),
            (std::vector<int8_t>{0, 2, 2, 0, 127, -128, 0}));
  Tensor q = tensor(std::vector<uint8_t>{0, 10, 255}, Shape{3});
  EXPECT_EQ(dequantize(q, 0.5, 10).to_vector<float>(), (std::vector<float>{-5.0f, 0.0f, 122.5f}));
  Tensor s = tensor(std::vector<int8_t>{-128, 0, 127}, Shape{3});
  EXPECT_EQ(dequantize(s, 0.25, -1).to_vector<float>(),
            (std::vector<float>{-31.75f, 0.25f, 32.0f}));
}

TEST(Quantize, RequantizationIsTheDocumentedFloat32Formula) {
  std::vector<float> ws{0.5f}, bias{0.25f};
  QuantizedParams p;
  p.input_scale = 1.0, p.output_scale = 1.0, p.output_zero_point = 100;
  // y = acc * 0.5 + 0.25: acc = 3 -> 1.75 -> 2; acc = 1 -> 0.75 -> 1; acc = 4 -> 2.25 -> 2
  EXPECT_EQ(reference_requantize(3, ws, bias, 0, p), 102);
  EXPECT_EQ(reference_requantize(1, ws, bias, 0, p), 101);
  EXPECT_EQ(reference_requantize(-1000, ws, bias, 0, p), 0);  // saturates low
  EXPECT_EQ(reference_requantize(1000, ws, bias, 0, p), 255);
  p.relu = true;
  EXPECT_EQ(reference_requantize(-7, ws, bias, 0, p), 100);  // relu clamps at the zero point
  // Ties go to even: y = 2.5 and 3.5 with no bias.
  p.relu = false;
  EXPECT_EQ(reference_requantize(5, ws, {}, 0, p), 102);
  EXPECT_EQ(reference_requantize(7, ws, {}, 0, p), 104);
}

// Every backend against the naive integer product, over shapes that are not multiples of any
// tile (rows, columns and depth 1 included) and the extreme zero points.
TEST(Int8Gemm, EveryBackendMatchesTheNaiveProductExactly) {
  std::mt19937 rng(7);
  struct Case {
    int64_t m, n, k;
  };
  const Case cases[] = {{1, 1, 1},      {1, 10, 7},     {3, 5, 1},      {17, 33, 65},
                        {64, 10, 128},  {50, 9, 300},   {2, 70, 63},    {97, 40, 5},
                        {130, 48, 129}, {33, 17, 1000}, {64, 128, 4100}};  // fc1-like: many AMX
                                                                           // steps, a partial one
  for (Int8Backend backend : available_backends()) {
    ForceBackend force(backend);
    for (const Case& c : cases) {
      for (int64_t zp : {0, 128, 255}) {
        SCOPED_TRACE(std::string(cpu::int8_backend_name(backend)) + " m=" + std::to_string(c.m) +
                     " n=" + std::to_string(c.n) + " k=" + std::to_string(c.k) +
                     " zp=" + std::to_string(zp));
        auto x = random_bytes<uint8_t>(c.m * c.k, 0, 255, rng);
        auto w = random_bytes<int8_t>(c.n * c.k, -128, 127, rng);
        auto ws = random_floats(c.n, 0.005f, 0.03f, rng);
        auto bias = random_floats(c.n, -2.0f, 2.0f, rng);
        QuantizedParams p;
        p.input_scale = 0.05, p.input_zero_point = zp;
        p.output_scale = output_scale_for(c.k, p.input_scale);
        p.output_zero_point = 100 + zp / 4;
        p.relu = zp == 128;
        Tensor out = quantized_linear(tensor(x, Shape{c.m, c.k}), tensor(w, Shape{c.n, c.k}),
                                      tensor(ws, Shape{c.n}), tensor(bias, Shape{c.n}), p);
        ASSERT_EQ(out.shape(), (Shape{c.m, c.n}));
        std::vector<uint8_t> got = out.to_vector<uint8_t>();
        int spread = 0;
        for (int64_t i = 0; i < c.m; ++i) {
          for (int64_t o = 0; o < c.n; ++o) {
            int64_t acc = 0;
            for (int64_t k = 0; k < c.k; ++k) {
              acc += (int64_t(x[i * c.k + k]) - zp) * int64_t(w[o * c.k + k]);
            }
            const uint8_t want = reference_requantize(acc, ws, bias, o, p);
            spread += want != 0 && want != 255;
            ASSERT_EQ(int(got[i * c.n + o]), int(want)) << "at [" << i << ", " << o << "]";
          }
        }
        if (c.m * c.n >= 16) {  // one output may saturate by chance; a whole block must not
          EXPECT_GT(spread, 0) << "every output saturated: the case tests nothing";
        }
      }
    }
  }
}

struct ConvCase {
  int64_t n, c, h, w, o, kh, kw;
  Pair2 stride, padding, dilation;
  int64_t groups;
};

// A naive integer convolution (padding reads as the zero point, contributing 0), requantized.
std::vector<uint8_t> naive_conv(const ConvCase& c, const std::vector<uint8_t>& x,
                                const std::vector<int8_t>& w, const std::vector<float>& ws,
                                const std::vector<float>& bias, const QuantizedParams& p,
                                int64_t oh, int64_t ow) {
  std::vector<uint8_t> out(c.n * c.o * oh * ow);
  const int64_t gi = c.c / c.groups, go = c.o / c.groups;
  for (int64_t n = 0; n < c.n; ++n)
    for (int64_t o = 0; o < c.o; ++o)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t xx = 0; xx < ow; ++xx) {
          int64_t acc = 0;
          for (int64_t ci = 0; ci < gi; ++ci)
            for (int64_t a = 0; a < c.kh; ++a)
              for (int64_t b = 0; b < c.kw; ++b) {
                const int64_t iy = y * c.stride.h - c.padding.h + a * c.dilation.h;
                const int64_t ix = xx * c.stride.w - c.padding.w + b * c.dilation.w;
                const bool inside = iy >= 0 && iy < c.h && ix >= 0 && ix < c.w;
                const int64_t ch = (o / go) * gi + ci;
                const int64_t v =
                    inside ? x[((n * c.c + ch) * c.h + iy) * c.w + ix] : p.input_zero_point;
                acc += (v - p.input_zero_point) * w[((o * gi + ci) * c.kh + a) * c.kw + b];
              }
          out[((n * c.o + o) * oh + y) * ow + xx] = reference_requantize(acc, ws, bias, o, p);
        }
  return out;
}

TEST(QuantizedConv2d, EveryBackendMatchesANaiveIntegerConvolution) {
  std::mt19937 rng(11);
  const ConvCase cases[] = {
      {2, 1, 8, 8, 4, 3, 3, 1, 0, 1, 1},              // the MNIST CNN's first layer, smaller
      {3, 5, 9, 7, 6, 3, 3, 2, 1, 1, 1},              // strided, padded, odd sizes
      {1, 4, 11, 10, 8, 3, 2, {1, 2}, {2, 1}, 2, 1},  // dilated, rectangular kernel
      {2, 6, 7, 7, 9, 3, 3, 1, 1, 1, 3},              // grouped
      {4, 4, 6, 5, 4, 3, 3, 1, 1, 1, 4},              // depthwise
      {2, 16, 5, 5, 20, 1, 1, 1, 0, 1, 1},            // 1x1
      {1, 3, 1, 1, 2, 1, 1, 1, 0, 1, 1},              // one pixel
      {3, 32, 12, 12, 64, 3, 3, 1, 0, 1, 1},          // the second CNN layer's shape, smaller
  };
  for (Int8Backend backend : available_backends()) {
    ForceBackend force(backend);
    for (const ConvCase& c : cases) {
      for (int64_t zp : {0, 128, 255}) {
        SCOPED_TRACE(std::string(cpu::int8_backend_name(backend)) + " c=" + std::to_string(c.c) +
                     " o=" + std::to_string(c.o) + " groups=" + std::to_string(c.groups) +
                     " zp=" + std::to_string(zp));
        const int64_t k = c.c / c.groups * c.kh * c.kw;
        auto x = random_bytes<uint8_t>(c.n * c.c * c.h * c.w, 0, 255, rng);
        auto w = random_bytes<int8_t>(c.o * k, -128, 127, rng);
        auto ws = random_floats(c.o, 0.005f, 0.03f, rng);
        auto bias = random_floats(c.o, -2.0f, 2.0f, rng);
        QuantizedParams p;
        p.input_scale = 0.05, p.input_zero_point = zp;
        p.output_scale = output_scale_for(k, p.input_scale);
        p.output_zero_point = 90;
        p.relu = zp == 255;
        Tensor out = quantized_conv2d(
            tensor(x, Shape{c.n, c.c, c.h, c.w}), tensor(w, Shape{c.o, c.c / c.groups, c.kh, c.kw}),
            tensor(ws, Shape{c.o}), zp == 0 ? Tensor() : tensor(bias, Shape{c.o}), c.stride,
            c.padding, c.dilation, c.groups, p);
        const int64_t oh = out.size(2), ow = out.size(3);
        EXPECT_EQ(oh, (c.h + 2 * c.padding.h - c.dilation.h * (c.kh - 1) - 1) / c.stride.h + 1);
        EXPECT_EQ(ow, (c.w + 2 * c.padding.w - c.dilation.w * (c.kw - 1) - 1) / c.stride.w + 1);
        std::vector<uint8_t> want =
            naive_conv(c, x, w, ws, zp == 0 ? std::vector<float>{} : bias, p, oh, ow);
        std::vector<uint8_t> got = out.to_vector<uint8_t>();
        ASSERT_EQ(got.size(), want.size());
        for (size_t i = 0; i < got.size(); ++i) {
          ASSERT_EQ(int(got[i]), int(want[i])) << "at flat index " << i;
        }
      }
    }
  }
}

TEST(QuantizedConv2d, UnbatchedInputAndUint8MaxPool) {
  std::mt19937 rng(3);
  auto x = random_bytes<uint8_t>(2 * 6 * 6, 0, 255, rng);
  auto w = random_bytes<int8_t>(3 * 2 * 9, -128, 127, rng);
  QuantizedParams p;
  p.input_scale = 0.1, p.input_zero_point = 7, p.output_scale = 2.0, p.output_zero_point = 5;
  Tensor ws = full({3}, 0.01, kFloat32);
  Tensor batched = quantized_conv2d(tensor(x, Shape{1, 2, 6, 6}), tensor(w, Shape{3, 2, 3, 3}), ws,
                                    Tensor(), 1, 1, 1, 1, p);
  Tensor single = quantized_conv2d(tensor(x, Shape{2, 6, 6}), tensor(w, Shape{3, 2, 3, 3}), ws,
                                   Tensor(), 1, 1, 1, 1, p);
  EXPECT_EQ(single.shape(), (Shape{3, 6, 6}));
  EXPECT_TRUE(equal(single, batched.squeeze(0)));
  // Pooling bytes is pooling the dequantized values: max commutes with a monotone map.
  Tensor pooled = max_pool2d(batched, 2);
  EXPECT_EQ(pooled.dtype(), kUInt8);
  Tensor via_float = max_pool2d(dequantize(batched, 2.0, 5), 2);
  EXPECT_TRUE(equal(dequantize(pooled, 2.0, 5), via_float));
}

TEST(QuantizedOps, BadInputsRaiseNamingTheOp) {
  Tensor x = zeros({2, 4}, kUInt8), w = zeros({3, 4}, kInt8), ws = full({3}, 0.1, kFloat32);
  QuantizedParams p;
  auto expect_message = [](auto&& call, const char* needle) {
    try {
      call();
      ADD_FAILURE() << "no exception; expected one mentioning " << needle;
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  EXPECT_THROW(quantized_linear(x.to(kFloat32), w, ws, Tensor(), p), TypeError);
  EXPECT_THROW(quantized_linear(x, w.to(kUInt8), ws, Tensor(), p), TypeError);
  EXPECT_THROW(quantized_linear(x, w, ws.to(kFloat64), Tensor(), p), TypeError);
  EXPECT_THROW(quantized_linear(x, zeros({3, 5}, kInt8), ws, Tensor(), p), std::invalid_argument);
  EXPECT_THROW(quantized_linear(x, w, full({2}, 0.1, kFloat32), Tensor(), p),
               std::invalid_argument);
  EXPECT_THROW(quantized_linear(x, w, ws, zeros({4}), p), std::invalid_argument);
  EXPECT_THROW(quantized_linear(x, w, ws, zeros({3}, kFloat64), p), TypeError);
  expect_message([&] { quantized_linear(x.to(kFloat32), w, ws, Tensor(), p); }, "quantized_linear");
  QuantizedParams bad = p;
  bad.input_scale = 0.0;
  EXPECT_THROW(quantized_linear(x, w, ws, Tensor(), bad), std::invalid_argument);
  bad = p, bad.output_scale = -1.0;
  EXPECT_THROW(quantized_linear(x, w, ws, Tensor(), bad), std::invalid_argument);
  bad = p, bad.input_zero_point = 256;
  expect_message([&] { quantized_linear(x, w, ws, Tensor(), bad); }, "input_zero_point");
  bad = p, bad.output_zero_point = -1;
  EXPECT_THROW(quantized_linear(x, w, ws, Tensor(), bad), std::invalid_argument);
  EXPECT_THROW(quantized_linear(x, w, full({3}, -0.1, kFloat32), Tensor(), p),
               std::invalid_argument);

  Tensor img = zeros({1, 4, 5, 5}, kUInt8), cw = zeros({6, 2, 3, 3}, kInt8);
  Tensor cs = full({6}, 0.1, kFloat32);
  EXPECT_NO_THROW(quantized_conv2d(img, cw, cs, Tensor(), 1, 0, 1, 2, p));
  EXPECT_THROW(quantized_conv2d(img, cw, cs, Tensor(), 1, 0, 1, 1, p), std::invalid_argument);
  EXPECT_THROW(quantized_conv2d(img, cw, cs, Tensor(), 0, 0, 1, 2, p), std::invalid_argument);
  EXPECT_THROW(quantized_conv2d(img, cw, full({5}, 0.1, kFloat32), Tensor(), 1, 0, 1, 2, p),
               std::invalid_argument);
  EXPECT_THROW(quantized_conv2d(img.to(kInt8), cw, cs, Tensor(), 1, 0, 1, 2, p), TypeError);
  EXPECT_THROW(quantized_conv2d(zeros({1, 4, 2, 2}, kUInt8), cw, cs, Tensor(), 1, 0, 1, 2, p),
               std::invalid_argument);

  EXPECT_THROW(quantize_per_tensor(zeros({2}), 0.0, 0), std::invalid_argument);
  EXPECT_THROW(quantize_per_tensor(zeros({2}), 0.1, 300), std::invalid_argument);
  EXPECT_THROW(quantize_per_tensor(zeros({2}), 0.1, 128, kInt8), std::invalid_argument);
  EXPECT_THROW(quantize_per_tensor(zeros({2}), 0.1, 0, kInt32), TypeError);
  EXPECT_THROW(quantize_per_tensor(zeros({2}, kFloat64), 0.1, 0), TypeError);
  EXPECT_THROW(dequantize(zeros({2}), 0.1, 0), TypeError);
  EXPECT_THROW(max_pool2d(zeros({1, 1, 4, 4}, kInt8), 2), TypeError);
}

TEST(Int8Gemm, BackendSelection) {
  unsetenv("WICK_INT8_GEMM");
  EXPECT_TRUE(cpu::int8_backend_available(Int8Backend::kPortable));
  {
    ForceBackend force(Int8Backend::kPortable);
    EXPECT_EQ(cpu::int8_backend(), Int8Backend::kPortable);
  }
  setenv("WICK_INT8_GEMM", "portable", 1);
  EXPECT_EQ(cpu::int8_backend(), Int8Backend::kPortable);
  setenv("WICK_INT8_GEMM", "sse2", 1);
  EXPECT_THROW(cpu::int8_backend(), std::invalid_argument);
  unsetenv("WICK_INT8_GEMM");
  // Automatic selection takes the fastest kernel the machine has.
  Int8Backend best = cpu::int8_backend_available(Int8Backend::kAmx) ? Int8Backend::kAmx
                     : cpu::int8_backend_available(Int8Backend::kAvx512Vnni)
                         ? Int8Backend::kAvx512Vnni
                         : Int8Backend::kPortable;
  EXPECT_EQ(cpu::int8_backend(), best);
  EXPECT_THROW(cpu::int8_backend_from_name("test", "fast"), std::invalid_argument);
}

}  // namespace
}  // namespace wick
