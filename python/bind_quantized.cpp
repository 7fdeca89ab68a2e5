// wick._C._quantized: the int8 inference ops (core/ops/quantized.h) and the choice of int8 GEMM
// (Note [int8 GEMM] in core/cpu/gemm_int8.h), for the wick.quantization package.
#include <pybind11/stl.h>

#include "core/cpu/gemm_int8.h"
#include "core/ops/quantized.h"
#include "python/bind_common.h"

namespace wick::python {

namespace {

QuantizedParams requantization(double input_scale, int64_t input_zero_point, double output_scale,
                               int64_t output_zero_point, bool relu) {
  QuantizedParams p;
  p.input_scale = input_scale, p.input_zero_point = input_zero_point;
  p.output_scale = output_scale, p.output_zero_point = output_zero_point;
  p.relu = relu;
  return p;
}

}  // namespace

void init_quantized(py::module_& root) {
  py::module_ m = root.def_submodule(
      "_quantized",
      "int8 quantized ops: per-tensor affine uint8/int8 activations, per-channel "
      "symmetric int8 weights, requantizing linear and conv2d kernels");
  m.def(
      "quantize_per_tensor",
      [](const Tensor& input, double scale, int64_t zero_point, py::handle dtype) {
        return quantize_per_tensor(input, scale, zero_point, to_dtype(dtype));
      },
      py::arg("input"), py::arg("scale"), py::arg("zero_point"),
      py::arg("dtype") = dtype_object(kUInt8),
      "float32 -> uint8/int8: clamp(round_half_even(x / scale) + zero_point)");
  m.def("dequantize", &dequantize, py::arg("input"), py::arg("scale"), py::arg("zero_point"),
        "uint8/int8 -> float32: (q - zero_point) * scale");
  m.def(
      "linear",
      [](const Tensor& input, const Tensor& weight, const Tensor& weight_scale, py::handle bias,
         double input_scale, int64_t input_zero_point, double output_scale,
         int64_t output_zero_point, bool relu) {
        return quantized_linear(
            input, weight, weight_scale, optional_tensor(bias, "bias"),
            requantization(input_scale, input_zero_point, output_scale, output_zero_point, relu));
      },
      py::arg("input"), py::arg("weight"), py::arg("weight_scale"), py::arg("bias"),
      py::arg("input_scale"), py::arg("input_zero_point"), py::arg("output_scale"),
      py::arg("output_zero_point"), py::arg("relu") = false,
      "uint8 input [.., in] x int8 weight [out, in] -> uint8 [.., out], requantized");
  m.def(
      "conv2d",
      [](const Tensor& input, const Tensor& weight, const Tensor& weight_scale, py::handle bias,
         py::handle stride, py::handle padding, py::handle dilation, int64_t groups,
         double input_scale, int64_t input_zero_point, double output_scale,
         int64_t output_zero_point, bool relu) {
        return quantized_conv2d(
            input, weight, weight_scale, optional_tensor(bias, "bias"), to_pair(stride, "stride"),
            to_pair(padding, "padding"), to_pair(dilation, "dilation"), groups,
            requantization(input_scale, input_zero_point, output_scale, output_zero_point, relu));
      },
      py::arg("input"), py::arg("weight"), py::arg("weight_scale"), py::arg("bias"),
      py::arg("stride"), py::arg("padding"), py::arg("dilation"), py::arg("groups"),
      py::arg("input_scale"), py::arg("input_zero_point"), py::arg("output_scale"),
      py::arg("output_zero_point"), py::arg("relu") = false,
      "uint8 NCHW input x int8 weight [O, C/groups, kh, kw] -> uint8 NCHW, requantized");
  m.def(
      "gemm_backend", []() { return cpu::int8_backend_name(cpu::int8_backend()); },
      "the int8 GEMM the next quantized op runs: 'amx', 'avx512_vnni' or 'portable' "
      "($WICK_INT8_GEMM, read on every call, overrides set_gemm_backend)");
  m.def(
      "set_gemm_backend",
      [](std::optional<std::string> name) {
        if (!name) return cpu::set_int8_backend(std::nullopt);
        cpu::set_int8_backend(cpu::int8_backend_from_name("set_gemm_backend", *name));
      },
      py::arg("name"), "force 'portable', 'avx512_vnni' or 'amx'; None chooses the fastest");
  m.def(
      "gemm_backends",
      []() {
        std::vector<std::string> names;
        for (auto b :
             {cpu::Int8Backend::kPortable, cpu::Int8Backend::kAvx512Vnni, cpu::Int8Backend::kAmx}) {
          if (cpu::int8_backend_available(b)) names.push_back(cpu::int8_backend_name(b));
        }
        return names;
      },
      "the int8 GEMMs this machine can run");
}

}  // namespace wick::python
