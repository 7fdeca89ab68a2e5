#include "nn/transformer.h"

#include <limits>

#include "core/generator.h"
#include "core/ops.h"
#include "nn/functional.h"

namespace wick::nn {

namespace {

TransformerEncoderLayer::Activation activation_named(const std::string& name) {
  if (name == "relu") return [](const Tensor& x) { return relu(x); };
  if (name == "gelu") return [](const Tensor& x) { return gelu(x); };
  throw std::runtime_error("[TransformerEncoderLayer] activation should be relu/gelu, not " + name);
}

}  // namespace

TransformerEncoderLayer::TransformerEncoderLayer(int64_t d_model, int64_t nhead,
                                                 int64_t dim_feedforward, double dropout_p,
                                                 const std::string& activation,
                                                 double layer_norm_eps, bool batch_first,
                                                 bool norm_first)
    : TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout_p,
                              activation_named(activation), layer_norm_eps, batch_first,
                              norm_first) {}

TransformerEncoderLayer::TransformerEncoderLayer(int64_t d_model, int64_t nhead,
                                                 int64_t dim_feedforward, double dropout_p,
                                                 Activation activation, double layer_norm_eps,
                                                 bool batch_first, bool norm_first)
    : Module("TransformerEncoderLayer"),
      d_model_(d_model),
      nhead_(nhead),
      dim_feedforward_(dim_feedforward),
      dropout_p_(dropout_p),
      layer_norm_eps_(layer_norm_eps),
      activation_(std::move(activation)),
      batch_first_(batch_first),
      norm_first_(norm_first) {
  check_value(static_cast<bool>(activation_), "TransformerEncoderLayer",
              "activation must be a function");
  // Registered in PyTorch's order, so state dicts list their keys the same way.
  self_attn = register_module(
      "self_attn", std::make_shared<MultiheadAttention>(d_model, nhead, dropout_p, true, false,
                                                        false, 0, 0, batch_first));
  linear1 = register_module("linear1", std::make_shared<Linear>(d_model, dim_feedforward));
  dropout = register_module("dropout", std::make_shared<Dropout>(dropout_p));
  linear2 = register_module("linear2", std::make_shared<Linear>(dim_feedforward, d_model));
  norm1 = register_module("norm1", std::make_shared<LayerNorm>(Shape{d_model}, layer_norm_eps));
  norm2 = register_module("norm2", std::make_shared<LayerNorm>(Shape{d_model}, layer_norm_eps));
  dropout1 = register_module("dropout1", std::make_shared<Dropout>(dropout_p));
  dropout2 = register_module("dropout2", std::make_shared<Dropout>(dropout_p));
}

Tensor TransformerEncoderLayer::forward(const Tensor& src, const Tensor& src_mask,
                                        const Tensor& src_key_padding_mask) {
  auto self_attention = [&](const Tensor& x) {
    return (*dropout1)(
        self_attn->forward(x, x, x, src_key_padding_mask, /*need_weights=*/false, src_mask).first);
  };
  auto feed_forward = [&](const Tensor& x) {
    return (*dropout2)((*linear2)((*dropout)(activation_((*linear1)(x)))));
  };
  Tensor x = src;
  if (norm_first_) {
    x = x + self_attention((*norm1)(x));
    return x + feed_forward((*norm2)(x));
  }
  x = (*norm1)(x + self_attention(x));
  return (*norm2)(x + feed_forward(x));
}

std::shared_ptr<TransformerEncoderLayer> TransformerEncoderLayer::clone() const {
  // A copy draws no random numbers, as copy.deepcopy draws none in Python: the constructor's
  // initialisation is overwritten below, so its draws are given back to the generator, and the
  // random sequence after a TransformerEncoder is the same in C++, wick.nn and PyTorch.
  PhiloxState before = default_generator().state();
  auto copy = std::make_shared<TransformerEncoderLayer>(d_model_, nhead_, dim_feedforward_,
                                                        dropout_p_, activation_, layer_norm_eps_,
                                                        batch_first_, norm_first_);
  default_generator().set_state(before);
  StateDict state = state_dict();
  for (auto& [name, tensor] : state) tensor = tensor.detach().clone();
  copy->load_state_dict(state);
  copy->train(is_training());
  return copy;
}

TransformerEncoder::TransformerEncoder(const TransformerEncoderLayer& encoder_layer,
                                       int64_t num_layers, std::shared_ptr<LayerNorm> final_norm)
    : Module("TransformerEncoder") {
  check_value(num_layers >= 0, "TransformerEncoder", "num_layers must be non-negative; got ",
              num_layers);
  layers = register_module("layers", std::make_shared<ModuleList>());
  for (int64_t i = 0; i < num_layers; ++i) layers->push_back(encoder_layer.clone());
  if (final_norm) norm = register_module("norm", final_norm);
}

Tensor TransformerEncoder::forward(const Tensor& src, const Tensor& mask,
                                   const Tensor& src_key_padding_mask) {
  Tensor x = src;
  for (const auto& layer : *layers) {
    x = std::static_pointer_cast<TransformerEncoderLayer>(layer)->forward(x, mask,
                                                                          src_key_padding_mask);
  }
  return norm ? (*norm)(x) : x;
}

Tensor generate_square_subsequent_mask(int64_t sz, const TensorOptions& options) {
  check_value(sz >= 0, "generate_square_subsequent_mask", "sz must be non-negative; got ", sz);
  TensorOptions index = TensorOptions(kInt64).with_device(options.device);
  Tensor above = gt(arange(sz, index).unsqueeze(0), arange(sz, index).unsqueeze(1));
  return zeros(Shape{sz, sz}, options)
      .masked_fill(above, Scalar(-std::numeric_limits<double>::infinity()));
}

}  // namespace wick::nn
