// Lab 11, step 5: the sim device's kernel for `where`.
//
// fallback_lab.build_kernel() compiles this file into a shared library linked against libwick and
// loads it into the running Python process, as torch.utils.cpp_extension.load builds the kernels
// of an out-of-tree PrivateUse1 backend; lab11_set_where_kernel then puts the kernel in the
// (where, sim) cell of the kernel table, where TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) would put
// it in PyTorch. sim's memory is host memory, so the kernel reads and writes data_ptr() directly,
// as a CUDA kernel would on device memory, without the launch.
#include <cstdio>
#include <exception>

#include "core/dispatch.h"
#include "core/dtype.h"
#include "core/ops.h"
#include "lab.h"

namespace {

using namespace wick;

// out[i] = cond[i] ? a[i] : b[i]. The front function (where() in core/ops/elementwise.cpp) has
// checked the arguments, converted a and b to out's dtype and allocated out, contiguous, in the
// broadcast shape. cond, a and b may still be smaller (they broadcast) or strided views.
void sim_where(const Tensor& cond, const Tensor& a, const Tensor& b, Tensor& out) {
  // TODO(11): sim_where: expand cond, a, b to out.shape(), .contiguous(); loop in visit_dtype
  throw lab::NotImplemented(
      "sim_where: expand cond, a, b to out.shape(), .contiguous(); loop in visit_dtype");
}

}  // namespace

// Called by fallback_lab.use_my_where_kernel() through ctypes. enable = 1 registers sim_where for
// (where, sim); enable = 0 empties the cell, and where falls back again. Returns 0; 1 with the
// hint of a gap not yet written in `message`; 2 with any other error. No C++ exception may
// cross into ctypes, hence the catches.
extern "C" int lab11_set_where_kernel(int enable, char* message, int size) {
  KernelRegistry& registry = kernel_registry();
  try {
    if (!enable) {
      registry.remove(OpKey::where, kPrivateUse1);
      return 0;
    }
    registry.add<WhereKernel>(OpKey::where, kPrivateUse1, sim_where);
    // One tiny call now, so that a gap not yet written shows here, not in the middle of a test.
    Tensor t = ones({2}, kPrivateUse1);
    where(gt(t, Scalar(0)), t, t);
    return 0;
  } catch (const lab::NotImplemented& e) {
    registry.remove(OpKey::where, kPrivateUse1);
    std::snprintf(message, size, "%s", e.what());
    return 1;
  } catch (const std::exception& e) {
    registry.remove(OpKey::where, kPrivateUse1);
    std::snprintf(message, size, "%s", e.what());
    return 2;
  }
}
