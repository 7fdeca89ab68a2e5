// Core: dtypes and promotion, 16-bit conversions, shapes, devices, creation, RNG, printing.
#include <omp.h>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>

#include "core/memory/host_cache.h"
#include "tests/cpp/test_util.h"

namespace wick {
namespace {

using testing::expect_close;

TEST(DType, SizesAndNames) {
  EXPECT_EQ(element_size(kFloat32), 4u);
  EXPECT_EQ(element_size(kFloat16), 2u);
  EXPECT_EQ(element_size(kBFloat16), 2u);
  EXPECT_EQ(element_size(kInt64), 8u);
  EXPECT_EQ(element_size(kBool), 1u);
  EXPECT_STREQ(dtype_name(kBFloat16), "bfloat16");
  EXPECT_EQ(dtype_from_name("test", "float64"), kFloat64);
  EXPECT_THROW(dtype_from_name("test", "complex64"), TypeError);
}

TEST(DType, PromotionFollowsPyTorch) {
  // Pairs checked against torch.promote_types.
  EXPECT_EQ(promote_types(kBool, kBool), kBool);
  EXPECT_EQ(promote_types(kBool, kUInt8), kUInt8);
  EXPECT_EQ(promote_types(kUInt8, kInt32), kInt32);
  EXPECT_EQ(promote_types(kInt32, kInt64), kInt64);
  EXPECT_EQ(promote_types(kInt64, kFloat16), kFloat16);
  EXPECT_EQ(promote_types(kInt64, kBFloat16), kBFloat16);
  EXPECT_EQ(promote_types(kFloat16, kBFloat16), kFloat32);
  EXPECT_EQ(promote_types(kFloat16, kFloat32), kFloat32);
  EXPECT_EQ(promote_types(kFloat32, kFloat64), kFloat64);
  EXPECT_EQ(promote_types(kBool, kFloat64), kFloat64);
  for (int a = 0; a < kNumDTypes; ++a) {
    for (int b = 0; b < kNumDTypes; ++b) {
      EXPECT_EQ(promote_types(DType(a), DType(b)), promote_types(DType(b), DType(a)));
    }
  }
  EXPECT_EQ(promote_with_scalar(kInt64, ScalarKind::Floating), kFloat32);
  EXPECT_EQ(promote_with_scalar(kFloat16, ScalarKind::Floating), kFloat16);
  EXPECT_EQ(promote_with_scalar(kBool, ScalarKind::Integer), kInt64);
  EXPECT_EQ(promote_with_scalar(kInt32, ScalarKind::Integer), kInt32);
}

TEST(DType, ScalarOpsPromoteLikePyTorch) {
  EXPECT_EQ((tensor({1, 2}) * 2.5).dtype(), kFloat32);
  EXPECT_EQ((tensor({1, 2}) * 2).dtype(), kInt64);
  EXPECT_EQ((ones({2}, kFloat16) * 2.5).dtype(), kFloat16);
  EXPECT_EQ((ones({2}, kInt32) + ones({2}, kFloat64)).dtype(), kFloat64);
  EXPECT_EQ((tensor({1, 2}) / tensor({2, 2})).dtype(), kFloat32);  // true division
}

TEST(Half, RoundTripAndRounding) {
  // Exact values survive; these bit patterns are IEEE binary16.
  EXPECT_EQ(Half(1.0f).bits, 0x3c00);
  EXPECT_EQ(Half(-2.0f).bits, 0xc000);
  EXPECT_EQ(Half(65504.0f).bits, 0x7bff);            // largest finite half
  EXPECT_EQ(Half(65520.0f).bits, 0x7c00);            // rounds to infinity
  EXPECT_EQ(Half(5.9604645e-8f).bits, 0x0001);       // smallest subnormal
  EXPECT_EQ(Half(1.0f + 1.0f / 2048).bits, 0x3c00);  // a tie rounds to even (down)
  EXPECT_EQ(Half(1.0f + 3.0f / 2048).bits, 0x3c02);  // a tie rounds to even (up)
  EXPECT_TRUE(std::isnan(float(Half(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(float(Half::from_bits(0x3555)), 0.333251953125f);
  for (uint32_t b = 0; b < 0x7c00; b += 7) {  // every finite half converts back to itself
    EXPECT_EQ(Half(float(Half::from_bits(static_cast<uint16_t>(b)))).bits, b);
  }
}

// Note [hardware half conversion]: the portable conversions give F16C's bits for every input.
TEST(Half, PortableConversionMatchesTheHardware) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    uint16_t bits = static_cast<uint16_t>(h);
    float portable = half_bits_to_float_portable(bits), used = half_bits_to_float(bits);
    ASSERT_EQ(float_bits(portable), float_bits(used)) << "half bits " << h;
  }
  std::mt19937 gen(3);
  for (int i = 0; i < 200000; ++i) {
    // Random bit patterns cover every exponent, NaNs and subnormals included.
    uint32_t x = static_cast<uint32_t>(gen());
    float f = bits_float(x);
    ASSERT_EQ(float_to_half_bits_portable(f), float_to_half_bits(f)) << "float bits " << x;
  }
  for (uint32_t x = 0x33000000u; x < 0x33800000u; x += 0x101) {  // around the subnormal edge
    ASSERT_EQ(float_to_half_bits_portable(bits_float(x)), float_to_half_bits(bits_float(x)));
  }
}

TEST(BFloat16, RoundTripAndRounding) {
  EXPECT_EQ(BFloat16(1.0f).bits, 0x3f80);
  EXPECT_EQ(float(BFloat16(3.140625f)), 3.140625f);
  EXPECT_EQ(BFloat16(1.0f + 1.0f / 256).bits, 0x3f80);  // tie to even
  EXPECT_EQ(BFloat16(1.0f + 3.0f / 256).bits, 0x3f82);
  EXPECT_TRUE(std::isnan(float(BFloat16(std::numeric_limits<float>::quiet_NaN()))));
}

TEST(Shape, BroadcastAndStrides) {
  EXPECT_EQ(broadcast_shapes("t", Shape{3, 1}, Shape{4}), (Shape{3, 4}));
  EXPECT_EQ(broadcast_shapes("t", Shape{}, Shape{2, 3}), (Shape{2, 3}));
  EXPECT_EQ(broadcast_shapes("t", Shape{5, 1, 7}, Shape{6, 1}), (Shape{5, 6, 7}));
  EXPECT_THROW(broadcast_shapes("t", Shape{3}, Shape{4}), std::invalid_argument);
  EXPECT_EQ(contiguous_strides(Shape{2, 3, 4}), (Strides{12, 4, 1}));
  EXPECT_TRUE(is_contiguous(Shape{2, 1, 3}, Strides{3, 99, 1}));
  EXPECT_EQ(to_string(Shape{3}), "(3,)");
  EXPECT_EQ(wrap_dim("t", -1, 3), 2);
  EXPECT_THROW(wrap_dim("t", 3, 3), std::out_of_range);
  EXPECT_THROW(Shape(std::vector<int64_t>(kMaxDims + 1, 1)), std::invalid_argument);
}

TEST(Device, Parsing) {
  EXPECT_EQ(Device("cpu"), Device(kCPU));
  EXPECT_EQ(Device("cuda:1"), Device(kCUDA, 1));
  EXPECT_EQ(Device("cuda:1").str(), "cuda:1");
  EXPECT_THROW(Device("tpu"), std::invalid_argument);
  EXPECT_THROW(Device("cuda:x"), std::invalid_argument);
}

TEST(Creation, Factories) {
  expect_close(zeros({2, 2}), {0, 0, 0, 0}, {2, 2});
  expect_close(ones({3}, kFloat64), {1, 1, 1}, {3});
  Tensor f = full({2}, 7);
  EXPECT_EQ(f.dtype(), kInt64);  // inferred from the value, as torch.full does
  expect_close(f, {7, 7}, {2});
  EXPECT_EQ(full({2}, 1.5).dtype(), kFloat32);
  expect_close(arange(5), {0, 1, 2, 3, 4}, {5});
  EXPECT_EQ(arange(5).dtype(), kInt64);
  expect_close(arange(1, 2, 0.25), {1, 1.25, 1.5, 1.75}, {4});
  expect_close(arange(5, 0, -2), {5, 3, 1}, {3});
  expect_close(linspace(-1, 1, 5), {-1, -0.5, 0, 0.5, 1}, {5});
  expect_close(eye(2, 3), {1, 0, 0, 0, 1, 0}, {2, 3});
  expect_close(tensor({{1., 2.}, {3., 4.}}), {1, 2, 3, 4}, {2, 2});
  EXPECT_EQ(tensor({1, 2, 3}).dtype(), kInt64);
  EXPECT_EQ(tensor({true, false}).dtype(), kBool);
  expect_close(tensor(std::vector<float>{1, 2, 3, 4, 5, 6}, Shape{2, 3}), {1, 2, 3, 4, 5, 6},
               {2, 3});
  Tensor like = zeros_like(ones({2, 3}, kFloat64));
  EXPECT_EQ(like.dtype(), kFloat64);
  EXPECT_EQ(like.shape(), (Shape{2, 3}));
  expect_close(full_like(like, 3), {3, 3, 3, 3, 3, 3}, {2, 3});
  EXPECT_EQ(randint_like(like, 0, 5).dtype(), kFloat64);
  EXPECT_TRUE(ones({2}, TensorOptions().with_requires_grad()).requires_grad());
  EXPECT_EQ(empty({0, 3}).numel(), 0);
}

TEST(Random, SeededAndReproducible) {
  manual_seed(123);
  Tensor a = rand({1000});
  Tensor b = randn({1000});
  manual_seed(123);
  expect_close(rand({1000}), a, 0, 0);
  expect_close(randn({1000}), b, 0, 0);
  // Uniform values lie in [0, 1) with the right mean; normal values have mean 0, variance 1.
  Tensor u = rand({200000}, kFloat64);
  EXPECT_GE(u.min().item<double>(), 0.0);
  EXPECT_LT(u.max().item<double>(), 1.0);
  EXPECT_NEAR(u.mean().item<double>(), 0.5, 0.005);
  Tensor n = randn({200000}, kFloat64);
  EXPECT_NEAR(n.mean().item<double>(), 0.0, 0.01);
  EXPECT_NEAR(n.var().item<double>(), 1.0, 0.02);
  Tensor r = randint(3, 7, {10000});
  EXPECT_EQ(r.min().item<int64_t>(), 3);
  EXPECT_EQ(r.max().item<int64_t>(), 6);
  // A private generator does not disturb the default one.
  manual_seed(5);
  Tensor x = rand({4});
  manual_seed(5);
  Generator other(99);
  rand({4}, {}, other);
  expect_close(rand({4}), x, 0, 0);
}

// In float16 and bfloat16 a draw just below the upper bound rounds up to it (about one in 2**9
// for bfloat16); the bound is checked after rounding, so [a, b) holds in every dtype.
TEST(Random, HalfPrecisionNeverReachesTheUpperBound) {
  manual_seed(7);
  for (DType dtype : {kBFloat16, kFloat16}) {
    Tensor u = rand({1 << 20}, dtype).to(kFloat32);
    EXPECT_LT(u.max().item<float>(), 1.0f) << dtype;
    EXPECT_GE(u.min().item<float>(), 0.0f) << dtype;
  }
}

TEST(Random, IndependentOfThreadCount) {
  manual_seed(7);
  Tensor many = randn({100000});  // large enough to run on every thread
  manual_seed(7);
  int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  Tensor one = randn({100000});
  omp_set_num_threads(threads);
  expect_close(many, one, 0, 0);
}

TEST(Tensor, ItemAndToVector) {
  EXPECT_EQ(tensor({3.5}).item<double>(), 3.5);
  EXPECT_EQ(tensor({3}).item<int64_t>(), 3);
  EXPECT_EQ(ones({2, 2}).to_vector<float>(), std::vector<float>(4, 1.0f));
  EXPECT_EQ(arange(6).reshape({2, 3}).t().to_vector<int64_t>(),
            (std::vector<int64_t>{0, 3, 1, 4, 2, 5}));
}

TEST(Tensor, CastsBetweenDTypes) {
  Tensor x = tensor({-1.5, 0.0, 2.7});
  expect_close(x.to(kInt64), {-1, 0, 2}, {3});
  expect_close(x.to(kBool), {1, 0, 1}, {3});
  expect_close(x.to(kFloat16), {-1.5, 0, 2.69921875}, {3}, 0, 0);
  expect_close(x.to(kBFloat16), {-1.5, 0, 2.703125}, {3}, 0, 0);
  expect_close(tensor({true, false}).to(kFloat32), {1, 0}, {2});
  EXPECT_TRUE(x.to(kFloat32).is_same(x));  // no copy when nothing changes
}

TEST(Print, LooksLikePyTorch) {
  EXPECT_EQ(tensor({{1., 2.}, {3., 4.}}).str(), "tensor([[1., 2.],\n        [3., 4.]])");
  EXPECT_EQ(tensor({1.5, -2.25}).str(), "tensor([ 1.5000, -2.2500])");
  EXPECT_EQ(tensor({1, 2}).str(), "tensor([1, 2])");
  EXPECT_EQ(tensor({true, false}).str(), "tensor([ True, False])");
  EXPECT_EQ(ones({2}, kFloat64).str(), "tensor([1., 1.], dtype=float64)");
  EXPECT_EQ(tensor({1e-5, 1.0}).str(), "tensor([1.0000e-05, 1.0000e+00])");
  EXPECT_EQ(zeros({0, 3}).str(), "tensor([], size=(0, 3))");
  EXPECT_EQ(tensor({2.5}).reshape({}).str(), "tensor(2.5000)");
  Tensor leaf = ones({2}).requires_grad_();
  EXPECT_EQ(leaf.str(), "tensor([1., 1.], requires_grad=True)");
  EXPECT_EQ((leaf * 2).str(), "tensor([2., 2.], grad_fn=<MulBackward>)");
  std::ostringstream os;
  os << arange(2000);
  EXPECT_EQ(os.str(), "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])");
}

TEST(Allocator, CountsBytes) {
  Allocator* cpu = cpu_allocator();
  int64_t before = cpu->stats().allocated_bytes;
  {
    Tensor t = empty({256});
    EXPECT_EQ(cpu->stats().allocated_bytes, before + 1024);
  }
  EXPECT_EQ(cpu->stats().allocated_bytes, before);
}

// Note [host block cache]: a freed large block serves the next request of its size class.
// The sanitizer run turns the cache off (WICK_HOST_CACHE_MB=0) so that ASan sees every free;
// these tests turn it on for themselves.
class CacheOn {
 public:
  CacheOn() : limit_(memory::host_cache_stats().limit_bytes) {
    memory::set_host_cache_limit(size_t{64} << 20);
  }
  ~CacheOn() { memory::set_host_cache_limit(static_cast<size_t>(limit_)); }

 private:
  int64_t limit_;
};

TEST(HostCache, ReusesABlockOfTheSameClass) {
  using namespace memory;
  CacheOn on;
  const HostCacheStats before = host_cache_stats();
  const size_t size = (size_t{1} << 20) + 100;  // class 1.25 MiB
  EXPECT_EQ(host_block_size(size), size_t{5} << 18);
  EXPECT_EQ(host_block_size(kHostCacheMin - 1), kHostCacheMin - 1);  // small: not rounded
  const size_t huge = (size_t{1} << 62) + 1;  // its class would be 5 * 2^60: no rounding
  EXPECT_EQ(host_block_size(huge), huge);
  EXPECT_EQ(host_try_acquire(huge), nullptr);  // refused without asking the system
  void* a = host_acquire(size);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 64, 0u);
  host_release(a, size);
  EXPECT_EQ(host_cache_stats().cached_bytes, before.cached_bytes + (int64_t{5} << 18));
  void* b = host_acquire((size_t{5} << 18) - 7);  // another size in the same class
  EXPECT_EQ(b, a);
  EXPECT_EQ(host_cache_stats().hits, before.hits + 1);
  EXPECT_EQ(host_cache_stats().cached_bytes, before.cached_bytes);
  host_release(b, (size_t{5} << 18) - 7);
}

TEST(HostCache, LimitGivesBlocksBack) {
  using namespace memory;
  CacheOn on;
  void* a = host_acquire(size_t{1} << 20);
  void* b = host_acquire(size_t{2} << 20);
  host_release(a, size_t{1} << 20);
  host_release(b, size_t{2} << 20);
  set_host_cache_limit(size_t{1} << 20);  // trims the largest blocks first
  EXPECT_LE(host_cache_stats().cached_bytes, int64_t{1} << 20);
  const int64_t given_back = host_cache_stats().given_back;
  void* c = host_acquire(size_t{4} << 20);
  host_release(c, size_t{4} << 20);  // over the limit: freed at once
  EXPECT_EQ(host_cache_stats().given_back, given_back + 1);
  empty_host_cache();
  EXPECT_EQ(host_cache_stats().cached_bytes, 0);
}

TEST(HostCache, TensorsReuseBlocksAndCountBytesAsAsked) {
  CacheOn on;
  Allocator* cpu = cpu_allocator();
  const int64_t before = cpu->stats().allocated_bytes;
  const void* first = nullptr;
  {
    Tensor t = full({300000}, 1.0f);  // 1.2 MB
    first = t.data<float>();
    EXPECT_EQ(cpu->stats().allocated_bytes, before + 1200000);
  }
  Tensor u = zeros({300001});  // same class: the same block, and zeros really zeroes it
  EXPECT_EQ(u.data<float>(), first);
  EXPECT_EQ(u.sum().item<float>(), 0.0f);
}

TEST(Dispatch, EveryOpHasACpuKernel) {
  EXPECT_TRUE(missing_kernels(kCPU).empty());
  EXPECT_STREQ(op_name(OpKey::log_softmax), "log_softmax");
}

}  // namespace
}  // namespace wick
