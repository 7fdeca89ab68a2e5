// The CUDA source of fused chains (jit/fused_cuda.h), tested without a GPU: the generated text,
// its refusals, and - in a CUDA build - NVRTC compiling it to PTX, which needs no device. Running
// the kernels is tests/gpu/test_gpu_jit.cpp's.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "core/op_table.h"
#include "jit/fused_cpu.h"
#include "jit/fused_cuda.h"

using namespace wick;
using jit::FusedStep;
using jit::OperandAccess;

namespace {

// Every fusible op once, each applied to the previous step's result (and input 1 for binary
// ops): one kernel that instantiates every functor NVRTC must compile.
std::vector<FusedStep> every_fusible_op() {
  std::vector<FusedStep> steps;
  for (int k = 0; k < kNumOps; ++k) {
    const auto op = static_cast<OpKey>(k);
    if (!jit::fusible_op(op)) continue;
    FusedStep s;
    s.op = op;
    s.a = steps.empty() ? 0 : -static_cast<int>(steps.size());  // the previous step
    s.b = 1;
    steps.push_back(s);
  }
  return steps;
}

bool compiles_here() { return jit::cuda_fusion_available(); }

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(FusedCudaSource, ReadsEachInputAsItsAccessSays) {
  FusedStep add{OpKey::add, 0, 1, {}};
  FusedStep mul{OpKey::mul, -1, 2, {}};
  const std::string src = jit::fused_cuda_source(
      {add, mul}, {OperandAccess::Contiguous, OperandAccess::Scalar, OperandAccess::Strided});
  std::cout << src.substr(src.find("extern \"C\""));
  EXPECT_NE(src.find("const float x0 = in0[i];"), std::string::npos);
  EXPECT_NE(src.find("const float x1 = in1[0];"), std::string::npos);
  EXPECT_NE(src.find("const float x2 = in2[wick_fused_offset(i, l2)];"), std::string::npos);
  EXPECT_NE(src.find("const wick_fused_layout l2"), std::string::npos);
  EXPECT_EQ(src.find("wick_fused_layout l0"), std::string::npos);  // only strided inputs get one
  EXPECT_NE(src.find("float s0 = float(wick::scalar::add_fn()(x0, x1));"), std::string::npos);
  EXPECT_NE(src.find("float s1 = float(wick::scalar::mul_fn()(s0, x2));"), std::string::npos);
  EXPECT_NE(src.find("asm volatile(\"\" : \"+f\"(s0));"), std::string::npos);  // no FMA across
  EXPECT_EQ(src.find("\"+f\"(s1)"), std::string::npos);  // the last step is stored at once
  EXPECT_NE(src.find("out[i] = s1;"), std::string::npos);
}

TEST(FusedCudaSource, PassesAttributesBitForBit) {
  FusedStep clamp{OpKey::clamp, 0, 0, {}};
  clamp.attrs.min = 0.1;
  FusedStep leaky{OpKey::leaky_relu, -1, 0, {}};
  leaky.attrs.negative_slope = 0.2;
  const std::string src = jit::fused_cuda_source({clamp, leaky}, {OperandAccess::Contiguous});
  // 0.1 and an infinite upper bound, exactly; no decimal rounding of the attributes.
  EXPECT_NE(src.find("__longlong_as_double(0x3fb999999999999aLL)"), std::string::npos);
  EXPECT_NE(src.find("__longlong_as_double(0x7ff0000000000000LL)"), std::string::npos);
  EXPECT_NE(src.find("__longlong_as_double(0x3fc999999999999aLL)"), std::string::npos);
  EXPECT_NE(src.find("wick::scalar::leaky_relu_fn()(s0, a1)"), std::string::npos);
}

TEST(FusedCudaSource, RefusesStepsItCannotCompile) {
  const std::vector<OperandAccess> one{OperandAccess::Contiguous};
  std::string e = error_of([&] { jit::fused_cuda_source({{OpKey::eq, 0, 0, {}}}, one); });
  EXPECT_NE(e.find("eq cannot run in a fused kernel"), std::string::npos) << e;
  e = error_of([&] { jit::fused_cuda_source({{OpKey::add, 0, 3, {}}}, one); });
  EXPECT_NE(e.find("reads input 3 of 1"), std::string::npos) << e;
  e = error_of([&] { jit::fused_cuda_source({{OpKey::relu, -1, 0, {}}}, one); });
  EXPECT_NE(e.find("reads the result of step 0, which does not come before it"), std::string::npos)
      << e;
  e = error_of([&] { jit::fused_cuda_source({}, one); });
  EXPECT_NE(e.find("at least one step"), std::string::npos) << e;
}

TEST(FusedCudaSource, OperandAccessFollowsTheShapes) {
  const Shape out{4, 3};
  EXPECT_EQ(jit::operand_access({4, 3}, {3, 1}, out), OperandAccess::Contiguous);
  EXPECT_EQ(jit::operand_access({1}, {1}, out), OperandAccess::Scalar);
  EXPECT_EQ(jit::operand_access({}, {}, out), OperandAccess::Scalar);
  EXPECT_EQ(jit::operand_access({3}, {1}, out), OperandAccess::Strided);        // a bias row
  EXPECT_EQ(jit::operand_access({4, 3}, {1, 4}, out), OperandAccess::Strided);  // transposed
}

TEST(FusedCudaSource, EveryFusibleOpCompilesWithNvrtc) {
  if (!compiles_here()) GTEST_SKIP() << "a build without CUDA has no NVRTC";
  const std::vector<FusedStep> steps = every_fusible_op();
  ASSERT_GT(steps.size(), 40u);
  const std::string src = jit::fused_cuda_source(
      steps, {OperandAccess::Strided, OperandAccess::Contiguous, OperandAccess::Scalar});
  for (const FusedStep& s : steps) {
    EXPECT_NE(src.find(std::string("wick::scalar::") + op_name(s.op) + "_fn()"), std::string::npos)
        << op_name(s.op);
  }
  const std::string ptx = jit::nvrtc_compile(src, "compute_90");
  EXPECT_NE(ptx.find(".entry wick_fused"), std::string::npos);
  const std::string cubin = jit::nvrtc_compile(src, "sm_80");  // what a device gets: machine code
  ASSERT_GT(cubin.size(), 4u);
  EXPECT_EQ(std::memcmp(cubin.data(),
                        "\x7f"
                        "ELF",
                        4),
            0);
}

TEST(FusedCudaSource, NvrtcErrorsCarryTheCompilerLog) {
  if (!compiles_here()) GTEST_SKIP() << "a build without CUDA has no NVRTC";
  const std::string e =
      error_of([] { jit::nvrtc_compile("int f() { return undeclared; }", "compute_90"); });
  EXPECT_NE(e.find("did not compile for compute_90"), std::string::npos) << e;
  EXPECT_NE(e.find("undeclared"), std::string::npos) << e;  // the log names the problem
}
