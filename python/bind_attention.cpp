// wick._C._attention: scaled dot-product attention (core/ops/attention.h,
// nn/layers/attention.h) and the multi-head attention forward that wick.nn.MultiheadAttention
// calls. PyTorch's argument checks that raise AssertionError live in
// python/wick/nn/functional_attention.py, before these run.
#include <pybind11/stl.h>

#include "nn/layers/attention.h"
#include "python/bind_common.h"

namespace wick::python {

void init_attention(py::module_& root) {
  py::module_ m = root.def_submodule("_attention", "scaled dot-product and multi-head attention");
  namespace F = nn::functional;
  m.def(
      "scaled_dot_product_attention",
      [](const Tensor& q, const Tensor& k, const Tensor& v, py::handle attn_mask, double dropout_p,
         bool is_causal, std::optional<double> scale) {
        return F::scaled_dot_product_attention(q, k, v, optional_tensor(attn_mask, "attn_mask"),
                                               dropout_p, is_causal, scale);
      },
      py::arg("query"), py::arg("key"), py::arg("value"), py::arg("attn_mask") = py::none(),
      py::arg("dropout_p") = 0.0, py::arg("is_causal") = false, py::kw_only(),
      py::arg("scale") = py::none());
  m.def(
      "scaled_dot_product_attention_math",
      [](const Tensor& q, const Tensor& k, const Tensor& v, py::handle attn_mask, bool is_causal,
         std::optional<double> scale) {
        AttentionResult r = scaled_dot_product_attention_math(
            q, k, v, optional_tensor(attn_mask, "attn_mask"), is_causal, scale);
        return py::make_tuple(r.output, r.weights);
      },
      py::arg("query"), py::arg("key"), py::arg("value"), py::arg("attn_mask") = py::none(),
      py::arg("is_causal") = false, py::kw_only(), py::arg("scale") = py::none());
  m.def(
      "multi_head_attention_forward",
      [](const Tensor& query, const Tensor& key, const Tensor& value, int64_t num_heads,
         py::handle in_proj_weight, py::handle in_proj_bias, py::handle bias_k, py::handle bias_v,
         bool add_zero_attn, double dropout_p, const Tensor& out_proj_weight,
         py::handle out_proj_bias, bool training, py::handle key_padding_mask, bool need_weights,
         py::handle attn_mask, py::handle q_proj_weight, py::handle k_proj_weight,
         py::handle v_proj_weight, bool average_attn_weights) {
        F::MultiheadAttentionWeights w;
        w.in_proj_weight = optional_tensor(in_proj_weight, "in_proj_weight");
        w.in_proj_bias = optional_tensor(in_proj_bias, "in_proj_bias");
        w.bias_k = optional_tensor(bias_k, "bias_k");
        w.bias_v = optional_tensor(bias_v, "bias_v");
        w.add_zero_attn = add_zero_attn;
        w.out_proj_weight = out_proj_weight;
        w.out_proj_bias = optional_tensor(out_proj_bias, "out_proj_bias");
        w.q_proj_weight = optional_tensor(q_proj_weight, "q_proj_weight");
        w.k_proj_weight = optional_tensor(k_proj_weight, "k_proj_weight");
        w.v_proj_weight = optional_tensor(v_proj_weight, "v_proj_weight");
        auto [out, weights] = F::multi_head_attention_forward(
            query, key, value, num_heads, w, dropout_p, training,
            optional_tensor(key_padding_mask, "key_padding_mask"), need_weights,
            optional_tensor(attn_mask, "attn_mask"), average_attn_weights);
        return py::make_tuple(out, weights.defined() ? py::cast(weights) : py::none());
      },
      py::arg("query"), py::arg("key"), py::arg("value"), py::arg("num_heads"),
      py::arg("in_proj_weight"), py::arg("in_proj_bias"), py::arg("bias_k"), py::arg("bias_v"),
      py::arg("add_zero_attn"), py::arg("dropout_p"), py::arg("out_proj_weight"),
      py::arg("out_proj_bias"), py::arg("training") = true,
      py::arg("key_padding_mask") = py::none(), py::arg("need_weights") = true,
      py::arg("attn_mask") = py::none(), py::arg("q_proj_weight") = py::none(),
      py::arg("k_proj_weight") = py::none(), py::arg("v_proj_weight") = py::none(),
      py::arg("average_attn_weights") = true);
}

}  // namespace wick::python
