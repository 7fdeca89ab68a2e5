#include "nn/layers/transformer.h"

#include <limits>

#include "core/generator.h"
#include "core/ops.h"
#include "nn/init.h"

namespace wick::nn {

namespace {

TransformerEncoderLayer::Activation activation_named(const char* layer, const std::string& name) {
  if (name == "relu") return [](const Tensor& x) { return relu(x); };
  if (name == "gelu") return [](const Tensor& x) { return gelu(x); };
  throw std::runtime_error(std::string("[") + layer + "] activation should be relu/gelu, not " +
                           name);
}

// A new layer with `self`'s configuration (args), parameter values and training mode. It draws
// no random numbers, as copy.deepcopy draws none in Python: the constructor's initialisation is
// overwritten, so its draws are given back to the generator, and the random sequence after a
// TransformerEncoder is the same in C++, wick.nn and PyTorch.
template <class Layer, class... Args>
std::shared_ptr<Layer> copy_without_drawing(const Layer& self, Args&&... args) {
  PhiloxState before = default_generator().state();
  auto copy = std::make_shared<Layer>(std::forward<Args>(args)...);
  default_generator().set_state(before);
  StateDict state = self.state_dict();
  for (auto& [name, tensor] : state) tensor = tensor.detach().clone();
  copy->load_state_dict(state);
  copy->train(self.is_training());
  return copy;
}

Tensor feed_forward(Linear& linear1, Dropout& dropout, Linear& linear2,
                    const TransformerEncoderLayer::Activation& activation, const Tensor& x) {
  return linear2(dropout(activation(linear1(x))));
}

}  // namespace

TransformerEncoderLayer::TransformerEncoderLayer(int64_t d_model, int64_t nhead,
                                                 int64_t dim_feedforward, double dropout_p,
                                                 const std::string& activation,
                                                 double layer_norm_eps, bool batch_first,
                                                 bool norm_first)
    : TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout_p,
                              activation_named("TransformerEncoderLayer", activation),
                              layer_norm_eps, batch_first, norm_first) {}

TransformerEncoderLayer::TransformerEncoderLayer(int64_t d_model, int64_t nhead,
                                                 int64_t dim_feedforward, double dropout_p,
                                                 Activation activation, double layer_norm_eps,
                                                 bool batch_first, bool norm_first)
    : Module("TransformerEncoderLayer"), config_{d_model,     nhead,          dim_feedforward,
                                                 dropout_p,   layer_norm_eps, std::move(activation),
                                                 batch_first, norm_first} {
  check_value(static_cast<bool>(config_.activation), "TransformerEncoderLayer",
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
  auto feed_forward_block = [&](const Tensor& x) {
    return (*dropout2)(feed_forward(*linear1, *dropout, *linear2, config_.activation, x));
  };
  Tensor x = src;
  if (config_.norm_first) {
    x = x + self_attention((*norm1)(x));
    return x + feed_forward_block((*norm2)(x));
  }
  x = (*norm1)(x + self_attention(x));
  return (*norm2)(x + feed_forward_block(x));
}

std::shared_ptr<TransformerEncoderLayer> TransformerEncoderLayer::clone() const {
  const TransformerLayerConfig& c = config_;
  return copy_without_drawing(*this, c.d_model, c.nhead, c.dim_feedforward, c.dropout, c.activation,
                              c.layer_norm_eps, c.batch_first, c.norm_first);
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

TransformerDecoderLayer::TransformerDecoderLayer(int64_t d_model, int64_t nhead,
                                                 int64_t dim_feedforward, double dropout_p,
                                                 const std::string& activation,
                                                 double layer_norm_eps, bool batch_first,
                                                 bool norm_first)
    : TransformerDecoderLayer(d_model, nhead, dim_feedforward, dropout_p,
                              activation_named("TransformerDecoderLayer", activation),
                              layer_norm_eps, batch_first, norm_first) {}

TransformerDecoderLayer::TransformerDecoderLayer(int64_t d_model, int64_t nhead,
                                                 int64_t dim_feedforward, double dropout_p,
                                                 Activation activation, double layer_norm_eps,
                                                 bool batch_first, bool norm_first)
    : Module("TransformerDecoderLayer"), config_{d_model,     nhead,          dim_feedforward,
                                                 dropout_p,   layer_norm_eps, std::move(activation),
                                                 batch_first, norm_first} {
  check_value(static_cast<bool>(config_.activation), "TransformerDecoderLayer",
              "activation must be a function");
  auto attention = [&] {
    return std::make_shared<MultiheadAttention>(d_model, nhead, dropout_p, true, false, false, 0, 0,
                                                batch_first);
  };
  auto norm = [&] { return std::make_shared<LayerNorm>(Shape{d_model}, layer_norm_eps); };
  // Registered in PyTorch's order, so state dicts list their keys the same way.
  self_attn = register_module("self_attn", attention());
  multihead_attn = register_module("multihead_attn", attention());
  linear1 = register_module("linear1", std::make_shared<Linear>(d_model, dim_feedforward));
  dropout = register_module("dropout", std::make_shared<Dropout>(dropout_p));
  linear2 = register_module("linear2", std::make_shared<Linear>(dim_feedforward, d_model));
  norm1 = register_module("norm1", norm());
  norm2 = register_module("norm2", norm());
  norm3 = register_module("norm3", norm());
  dropout1 = register_module("dropout1", std::make_shared<Dropout>(dropout_p));
  dropout2 = register_module("dropout2", std::make_shared<Dropout>(dropout_p));
  dropout3 = register_module("dropout3", std::make_shared<Dropout>(dropout_p));
}

Tensor TransformerDecoderLayer::forward(const Tensor& tgt, const Tensor& memory,
                                        const Tensor& tgt_mask, const Tensor& memory_mask,
                                        const Tensor& tgt_key_padding_mask,
                                        const Tensor& memory_key_padding_mask) {
  auto self_attention = [&](const Tensor& x) {
    return (*dropout1)(
        self_attn->forward(x, x, x, tgt_key_padding_mask, /*need_weights=*/false, tgt_mask).first);
  };
  auto memory_attention = [&](const Tensor& x) {
    return (*dropout2)(multihead_attn
                           ->forward(x, memory, memory, memory_key_padding_mask,
                                     /*need_weights=*/false, memory_mask)
                           .first);
  };
  auto feed_forward_block = [&](const Tensor& x) {
    return (*dropout3)(feed_forward(*linear1, *dropout, *linear2, config_.activation, x));
  };
  Tensor x = tgt;
  if (config_.norm_first) {
    x = x + self_attention((*norm1)(x));
    x = x + memory_attention((*norm2)(x));
    return x + feed_forward_block((*norm3)(x));
  }
  x = (*norm1)(x + self_attention(x));
  x = (*norm2)(x + memory_attention(x));
  return (*norm3)(x + feed_forward_block(x));
}

std::shared_ptr<TransformerDecoderLayer> TransformerDecoderLayer::clone() const {
  const TransformerLayerConfig& c = config_;
  return copy_without_drawing(*this, c.d_model, c.nhead, c.dim_feedforward, c.dropout, c.activation,
                              c.layer_norm_eps, c.batch_first, c.norm_first);
}

TransformerDecoder::TransformerDecoder(const TransformerDecoderLayer& decoder_layer,
                                       int64_t num_layers, std::shared_ptr<LayerNorm> final_norm)
    : Module("TransformerDecoder") {
  check_value(num_layers >= 0, "TransformerDecoder", "num_layers must be non-negative; got ",
              num_layers);
  layers = register_module("layers", std::make_shared<ModuleList>());
  for (int64_t i = 0; i < num_layers; ++i) layers->push_back(decoder_layer.clone());
  if (final_norm) norm = register_module("norm", final_norm);
}

Tensor TransformerDecoder::forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask,
                                   const Tensor& memory_mask, const Tensor& tgt_key_padding_mask,
                                   const Tensor& memory_key_padding_mask) {
  Tensor x = tgt;
  for (const auto& layer : *layers) {
    x = std::static_pointer_cast<TransformerDecoderLayer>(layer)->forward(
        x, memory, tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask);
  }
  return norm ? (*norm)(x) : x;
}

Transformer::Transformer(int64_t d_model, int64_t nhead, int64_t num_encoder_layers,
                         int64_t num_decoder_layers, int64_t dim_feedforward, double dropout_p,
                         const std::string& activation, double layer_norm_eps, bool batch_first,
                         bool norm_first)
    : Module("Transformer"), d_model_(d_model), batch_first_(batch_first) {
  auto norm = [&] { return std::make_shared<LayerNorm>(Shape{d_model}, layer_norm_eps); };
  encoder = register_module(
      "encoder", std::make_shared<TransformerEncoder>(
                     TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout_p, activation,
                                             layer_norm_eps, batch_first, norm_first),
                     num_encoder_layers, norm()));
  decoder = register_module(
      "decoder", std::make_shared<TransformerDecoder>(
                     TransformerDecoderLayer(d_model, nhead, dim_feedforward, dropout_p, activation,
                                             layer_norm_eps, batch_first, norm_first),
                     num_decoder_layers, norm()));
  for (Tensor& p : parameters()) {
    if (p.dim() > 1) init::xavier_uniform_(p);
  }
}

Tensor Transformer::forward(const Tensor& src, const Tensor& tgt, const Tensor& src_mask,
                            const Tensor& tgt_mask, const Tensor& memory_mask,
                            const Tensor& src_key_padding_mask, const Tensor& tgt_key_padding_mask,
                            const Tensor& memory_key_padding_mask) {
  const int64_t batch_dim = batch_first_ ? 0 : 1;
  check_value(src.dim() != 3 || src.size(batch_dim) == tgt.size(batch_dim), "Transformer",
              "the batch number of src and tgt must be equal; got ", src.size(batch_dim), " and ",
              tgt.size(batch_dim));
  check_value(src.size(-1) == d_model_ && tgt.size(-1) == d_model_, "Transformer",
              "the feature number of src and tgt must be equal to d_model (", d_model_, "); got ",
              src.size(-1), " and ", tgt.size(-1));
  Tensor memory = encoder->forward(src, src_mask, src_key_padding_mask);
  return decoder->forward(tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask,
                          memory_key_padding_mask);
}

Tensor generate_square_subsequent_mask(int64_t sz, const TensorOptions& options) {
  check_value(sz >= 0, "generate_square_subsequent_mask", "sz must be non-negative; got ", sz);
  TensorOptions index = TensorOptions(kInt64).with_device(options.device);
  Tensor above = gt(arange(sz, index).unsqueeze(0), arange(sz, index).unsqueeze(1));
  return zeros(Shape{sz, sz}, options)
      .masked_fill(above, Scalar(-std::numeric_limits<double>::infinity()));
}

}  // namespace wick::nn
