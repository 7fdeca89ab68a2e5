// wick._C: the extension module. It only calls each area's init function (bind_<area>.cpp), in
// dependency order: types first (dtype, device, errors), then the Tensor class, then everything
// that takes or returns tensors.
#include <omp.h>

#include "core/cpu/conv_direct.h"
#include "core/cpu/winograd_tiles.h"
#include "python/bind_common.h"

namespace wick::python {
void init_memory(py::module_& m);     // bind_memory.cpp: wick._C._memory, for wick.memory
void init_jit(py::module_& m);        // bind_jit.cpp: wick._C._jit, for wick.jit and wick.compile
void init_quantized(py::module_& m);  // bind_quantized.cpp: wick._C._quantized (int8)
void init_onnx(py::module_& m);       // bind_onnx.cpp: wick._C._onnx (ONNX export in C++)
}  // namespace wick::python

PYBIND11_MODULE(_C, m) {
  using namespace wick::python;
  m.doc() = "wick's C++ core: tensors, autograd, layers, optimizers and data loading";
  init_types(m);
  init_tensor(m);
  init_tensor_ops(m);
  init_shape_ops(m);
  init_indexing(m);
  init_creation(m);
  init_interop(m);
  init_autograd(m);
  init_nn(m);
  init_layers(m);  // these three extend _C._nn, made by init_nn
  init_losses(m);
  init_rnn(m);
  init_optim(m);
  init_data(m);
  init_distributed(m);
  init_amp(m);
  init_cuda(m);
  init_op_table(m);
  init_env(m);
  init_composites(m);  // after shape ops, so its Tensor methods see the class
  // default dtype, print options, Tensor.new_* and Tensor.type()
  init_defaults(m);
  init_attention(m);
  init_memory(m);
  init_jit(m);
  init_quantized(m);
  init_onnx(m);

  // Threads, small enough to live here.
  m.def("get_num_threads", []() { return omp_get_max_threads(); });
  m.def(
      "set_num_threads",
      [](int n) {
        wick::check_value(n > 0, "set_num_threads", "expected a positive number; got ", n);
        omp_set_num_threads(n);
      },
      py::arg("num"));

  py::module_ cpu = m.def_submodule("_cpu", "switches of the CPU kernels (wick.backends.cpu)");
  cpu.def("direct_conv_enabled", &wick::cpu::direct_conv_enabled);
  cpu.def("set_direct_conv_enabled", &wick::cpu::set_direct_conv_enabled, py::arg("enabled"));
  cpu.def("winograd_tiles_enabled", &wick::cpu::winograd_tiles_enabled);
  cpu.def("set_winograd_tiles_enabled", &wick::cpu::set_winograd_tiles_enabled, py::arg("enabled"));
  cpu.def("capability", []() {  // what -march gave the vector kernels, in PyTorch's words
#if defined(__AVX512F__)
    return "AVX512";
#elif defined(__AVX2__)
    return "AVX2";
#else
    return "DEFAULT";
#endif
  });

  install_one_line_type_errors(m);  // last: it covers everything bound above
}
