#include "jit/fused_cpu.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/cpu/loops.h"
#include "core/error.h"
#include "core/op_table.h"
#include "core/ops/scalar_math.h"

namespace wick::jit {

namespace {

constexpr int64_t kBlock = 2048;

// Applies one step to a block: out[i] = op(a[i]) or op(a[i], b[i]).
void apply(const FusedStep& s, const float* a, const float* b, float* out, int64_t n) {
  switch (s.op) {
#define WICK_FUSED_UNARY(name, ...)                                                     \
  case OpKey::name:                                                                     \
    for (int64_t i = 0; i < n; ++i) out[i] = float(scalar::name##_fn()(a[i], s.attrs)); \
    return;
    WICK_UNARY_OPS(WICK_FUSED_UNARY)
#undef WICK_FUSED_UNARY
#define WICK_FUSED_BINARY(name, ...)                                                 \
  case OpKey::name:                                                                  \
    for (int64_t i = 0; i < n; ++i) out[i] = float(scalar::name##_fn()(a[i], b[i])); \
    return;
    WICK_BINARY_OPS(WICK_FUSED_BINARY)
#undef WICK_FUSED_BINARY
    default:
      break;
  }
  check_state(false, "jit.run_fused", op_name(s.op), " cannot run in a fused loop");
}

using Operand = FusedLoop::Operand;

// Gathers elements [begin, begin + n) (flat, in the output's order) of a strided operand, a run
// of the innermost dimension at a time (a bias row is a copy, a broadcast column a fill).
void gather(const Operand& op, int64_t begin, int64_t n, float* out) {
  int64_t dims = op.shape.size();
  int64_t index[kMaxDims] = {};
  int64_t rest = begin, offset = 0;
  for (int64_t d = dims - 1; d >= 0; --d) {
    index[d] = rest % op.shape[d];
    rest /= op.shape[d];
    offset += index[d] * op.strides[d];
  }
  const int64_t last = dims - 1, inner = op.shape[last], stride = op.strides[last];
  for (int64_t i = 0; i < n;) {
    int64_t run = std::min(inner - index[last], n - i);
    const float* src = op.data + offset;
    if (stride == 1) {
      std::memcpy(out + i, src, static_cast<size_t>(run) * sizeof(float));
    } else if (stride == 0) {
      std::fill(out + i, out + i + run, *src);
    } else {
      for (int64_t j = 0; j < run; ++j) out[i + j] = src[j * stride];
    }
    i += run;
    offset += run * stride;
    index[last] += run;
    for (int64_t d = last; d > 0 && index[d] == op.shape[d]; --d) {  // carry outwards
      offset -= index[d] * op.strides[d];
      index[d] = 0;
      offset += op.strides[d - 1];
      ++index[d - 1];
    }
  }
}

}  // namespace

bool fusible_op(OpKey op) {
  const OpInfo& info = op_info(op);
  std::string family = info.family;
  if (family == "unary") return info.dtype != DTypeRule::Bool;
  if (family == "binary") return info.dtype != DTypeRule::Compare;
  return false;
}

Strides broadcast_strides(const Tensor& input, const Shape& out) {
  Strides strides;
  strides.resize(out.size(), 0);
  const int64_t lead = out.size() - input.dim();
  for (int64_t d = 0; d < input.dim(); ++d) {
    strides[lead + d] = input.size(d) == 1 ? 0 : input.strides()[d];
  }
  return strides;
}

FusedLoop::FusedLoop(const std::vector<FusedStep>& steps, const std::vector<const Tensor*>& inputs,
                     Tensor& out)
    : steps_(steps), out_(out.data<float>()), numel_(out.numel()) {
  check_state(out.dtype() == kFloat32 && out.is_contiguous(), "jit.run_fused",
              "the output must be contiguous float32; got ", dtype_name(out.dtype()));
  for (const FusedStep& s : steps_) {
    check_state(fusible_op(s.op), "jit.run_fused", op_name(s.op), " cannot run in a fused loop");
  }
  for (size_t k = 0; k < inputs.size(); ++k) {
    const Tensor& t = *inputs[k];
    check_state(t.dtype() == kFloat32, "jit.run_fused", "input ", k, " is ", dtype_name(t.dtype()),
                ", not float32");
    Operand o{t.data<float>(), false, t.numel() == 1, out.shape(),
              broadcast_strides(t, out.shape())};
    o.contiguous = t.numel() == numel_ && t.is_contiguous() && t.shape() == out.shape();
    operands_.push_back(o);
  }
}

void FusedLoop::run(int64_t begin, int64_t end) const {
  const size_t num_inputs = operands_.size(), num_steps = steps_.size();
  // One scratch block per input that is not read in place, and one per step.
  thread_local std::vector<float> scratch;
  thread_local std::vector<const float*> in;
  if (scratch.size() < (num_inputs + num_steps) * kBlock)
    scratch.resize((num_inputs + num_steps) * kBlock);
  in.resize(num_inputs);
  for (int64_t at = begin; at < end; at += kBlock) {
    const int64_t len = std::min(kBlock, end - at);
    for (size_t k = 0; k < num_inputs; ++k) {
      const Operand& op = operands_[k];
      float* buf = scratch.data() + k * kBlock;
      if (op.contiguous) {
        in[k] = op.data + at;
      } else if (op.scalar) {
        std::fill(buf, buf + len, op.data[0]);
        in[k] = buf;
      } else {
        gather(op, at, len, buf);
        in[k] = buf;
      }
    }
    auto operand = [&](int r) -> const float* {
      return r >= 0 ? in[static_cast<size_t>(r)]
                    : scratch.data() + (num_inputs + static_cast<size_t>(-1 - r)) * kBlock;
    };
    for (size_t s = 0; s < num_steps; ++s) {
      const FusedStep& step = steps_[s];
      // The last step writes straight into the output (in place when it is also an input:
      // element i is read before it is written).
      float* result = s + 1 == num_steps ? out_ + at : scratch.data() + (num_inputs + s) * kBlock;
      apply(step, operand(step.a), operand(step.b), result, len);
    }
  }
}

void FusedLoop::run_parallel() const {
  const int64_t blocks = (numel_ + kBlock - 1) / kBlock;
  cpu::parallel_for(
      blocks, 1, [&](int64_t b0, int64_t b1) { run(b0 * kBlock, std::min(numel_, b1 * kBlock)); });
}

void run_fused(const Node& node, Tensor* const* args) {
  const size_t num_inputs = node.params.size() - 1;
  std::vector<const Tensor*> inputs(args, args + num_inputs);
  FusedLoop(node.steps, inputs, *args[num_inputs]).run_parallel();
}

}  // namespace wick::jit
