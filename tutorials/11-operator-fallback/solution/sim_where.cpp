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
  // BEGIN SOLUTION: sim_where: expand cond, a, b to out.shape(), .contiguous(); loop in visit_dtype
  // The copies cost a pass over a broadcast or strided input only; a port that reads the strides
  // (lab 01's offset formula) saves them.
  Tensor c = cond.expand(out.shape()).contiguous();
  Tensor x = a.expand(out.shape()).contiguous();
  Tensor y = b.expand(out.shape()).contiguous();
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const bool* pc = static_cast<const bool*>(c.data_ptr());
    const T* px = static_cast<const T*>(x.data_ptr());
    const T* py = static_cast<const T*>(y.data_ptr());
    T* po = static_cast<T*>(out.data_ptr());
    const int64_t n = out.numel();
    for (int64_t i = 0; i < n; ++i) po[i] = pc[i] ? px[i] : py[i];
  });
  // END SOLUTION
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
