// The op table and backend registration, from C++: every row is complete and has a CPU kernel,
// a CUDA build registers a CUDA kernel for every row, a kernel of the wrong signature is refused,
// and a backend added from outside core (here, from this test) gets its own device type, name,
// allocator and kernel column without a line of core changing.
#include "core/backend.h"
#include "core/dispatch.h"
#include "core/op_table.h"
#include "cuda/api.h"
#include "test_util.h"

namespace wick {
namespace {

using testing::expect_error;

TEST(OpTable, EveryRowIsCompleteAndHasACpuKernel) {
  const auto& table = op_table();
  ASSERT_EQ(static_cast<int>(table.size()), kNumOps);
  std::set<std::string> names;
  for (size_t i = 0; i < table.size(); ++i) {
    const OpInfo& op = table[i];
    EXPECT_EQ(static_cast<size_t>(op.key), i) << op.name;
    EXPECT_TRUE(names.insert(op.name).second) << "duplicate name " << op.name;
    EXPECT_EQ(find_op(op.name), &op);
    EXPECT_STREQ(op_name(op.key), op.name);
    EXPECT_TRUE(kernel_registry().has(op.key, kCPU)) << op.name << " has no CPU kernel";
    EXPECT_EQ(op.differentiable, op.backward[0] != '\0') << op.name;
    if (std::string(op.family) == "unary") {
      EXPECT_EQ(op.differentiable, op.unary_grad != nullptr) << op.name;
      EXPECT_EQ(*op.kernel, typeid(UnaryKernel));
    }
  }
  EXPECT_EQ(find_op("no_such_op"), nullptr);
  EXPECT_TRUE(missing_kernels(kCPU).empty());
}

TEST(OpTable, CudaBuildsRegisterEveryOp) {
  if (!cuda::is_built()) GTEST_SKIP() << "a CPU-only build";
  EXPECT_EQ(missing_kernels(kCUDA), std::vector<std::string>{});
}

TEST(OpTable, AttributesAreTyped) {
  const OpInfo* clamp = find_op("clamp");
  ASSERT_NE(clamp, nullptr);
  ASSERT_EQ(clamp->attrs.size(), 2u);
  EXPECT_EQ(clamp->attrs[0].name, "min");
  EXPECT_EQ(clamp->attrs[0].type, "float");
  const OpInfo* conv = find_op("conv2d");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->attrs.back().name, "groups");
  EXPECT_EQ(conv->inputs, (std::vector<std::string>{"input", "weight", "bias"}));
  EXPECT_EQ(find_op("exp")->saves, Saves::Output);
  EXPECT_EQ(find_op("exp")->autocast, AutocastPolicy::Float32);
}

TEST(OpTable, TheFormerlyPythonOnlyOpsAreInTheCppApi) {
  Tensor x = tensor({-2.0f, 0.5f, 4.0f});
  testing::expect_close(square(x), {4, 0.25, 16}, Shape{3});
  testing::expect_close(reciprocal(x), {-0.5, 2, 0.25}, Shape{3});
  Tensor tiny = tensor({1e-8f});
  EXPECT_EQ(log1p(tiny).item<float>(), 1e-8f);  // log(1 + 1e-8f) would be 0
  EXPECT_NEAR(expm1(tiny).item<float>(), 1e-8f, 1e-15);
  EXPECT_NEAR(erf(tensor({0.5})).item<double>(), 0.5204998778130465, 1e-7);
  Tensor m = tensor({1.0f, -3.0f, 2.0f, 0.0f}).reshape(Shape{2, 2});
  testing::expect_close(amax(m, {1}), {1, 2}, Shape{2});
  testing::expect_close(amin(m), {-3}, Shape{});
  EXPECT_TRUE(any(m).item<bool>());
  EXPECT_FALSE(all(m).item<bool>());
  testing::expect_close(norm(m), {std::sqrt(14.0)}, Shape{});
  testing::expect_close(norm(m, 1.0, {0}), {3, 3}, Shape{2});
  EXPECT_TRUE(equal(m, m.clone()));
  EXPECT_TRUE(allclose(m, m + 1e-9));
  testing::expect_close(mm(m, m), {-5, -3, 2, -6}, Shape{2, 2});
}

void not_a_unary_kernel(const Tensor&, const Tensor&, Tensor&) {}

TEST(OpTable, AKernelOfTheWrongSignatureIsRefused) {
  KernelRegistry registry;
  expect_error<std::runtime_error>(
      [&] { registry.add<BinaryKernel>(OpKey::exp, kCPU, not_a_unary_kernel); },
      "registered with another signature");
}

// A backend from outside core: host memory, a kernel for neg only.
class HostMemory final : public Allocator {
 public:
  void* allocate(size_t nbytes) override { return cpu_allocator()->allocate(nbytes); }
  void deallocate(void* p, size_t nbytes) override { cpu_allocator()->deallocate(p, nbytes); }
  Device device() const override { return Device(kPrivateUse1, 0); }
  const char* name() const override { return "test host memory"; }
  AllocatorStats stats() const override { return {}; }
  void reset_peak() override {}
};

void test_neg(const Tensor&, Tensor&, const UnaryAttrs&) {}

TEST(OpTable, ABackendRegistersWithoutEditingCore) {
  // The slot holds the sim device (sim/); the test's backend replaces it, and the test puts it
  // back so later tests in this process still see sim.
  const Backend* sim = find_backend(kPrivateUse1);
  ASSERT_NE(sim, nullptr);
  Backend saved = *sim;
  Backend backend;
  backend.type = kPrivateUse1;
  backend.name = "testdev";
  backend.register_kernels = [](KernelRegistry& r) {
    r.add<UnaryKernel>(OpKey::neg, kPrivateUse1, test_neg);
  };
  backend.allocator = []() -> Allocator* {
    static HostMemory memory;
    return &memory;
  };
  EXPECT_TRUE(register_backend(backend));
  EXPECT_EQ(Device("testdev:1").type, kPrivateUse1);
  EXPECT_EQ(Device("testdev:1").str(), "testdev:1");
  EXPECT_STREQ(device_type_name(kPrivateUse1), "testdev");
  EXPECT_TRUE(kernel_registry().has(OpKey::neg, kPrivateUse1));
  std::vector<std::string> missing = missing_kernels(kPrivateUse1);
  EXPECT_EQ(static_cast<int>(missing.size()), kNumOps - 1);
  EXPECT_EQ(std::count(missing.begin(), missing.end(), "neg"), 0);
  EXPECT_STREQ(get_allocator(kPrivateUse1)->name(), "test host memory");
  Tensor t = empty(Shape{4}, TensorOptions(kFloat32).with_device(Device(kPrivateUse1)));
  EXPECT_EQ(t.device(), Device(kPrivateUse1));
  expect_error<std::invalid_argument>([] { Device("nodev:0"); }, "expected 'cpu'");
  register_backend(saved);
  EXPECT_STREQ(device_type_name(kPrivateUse1), "sim");
}

}  // namespace
}  // namespace wick
