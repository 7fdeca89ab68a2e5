// PyTorch's Transformer family. nn.TransformerEncoderLayer: self-attention and a feed-forward
// block, each with a residual connection and layer norm (before or after).
// nn.TransformerDecoderLayer adds, between the two, attention from the target to the encoder's
// output (memory). nn.TransformerEncoder / nn.TransformerDecoder stack copies of one layer, with an
// optional final norm, and nn.Transformer joins an encoder and a decoder. Submodule names match
// PyTorch's, so state dicts load across: self_attn.in_proj_weight, linear1.weight,
// decoder.layers.0.norm3...
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "core/ops/factory.h"
#include "nn/containers.h"
#include "nn/layers/attention.h"
#include "nn/layers/dropout.h"
#include "nn/layers/linear.h"
#include "nn/layers/normalization.h"

namespace wick::nn {

// What a Transformer layer is built from, kept so that clone() builds an equal layer.
struct TransformerLayerConfig {
  int64_t d_model, nhead, dim_feedforward;
  double dropout, layer_norm_eps;
  std::function<Tensor(const Tensor&)> activation;
  bool batch_first, norm_first;
};

class TransformerEncoderLayer : public Module {
 public:
  using Activation = std::function<Tensor(const Tensor&)>;
  // activation: "relu" or "gelu".
  TransformerEncoderLayer(int64_t d_model, int64_t nhead, int64_t dim_feedforward = 2048,
                          double dropout = 0.1, const std::string& activation = "relu",
                          double layer_norm_eps = 1e-5, bool batch_first = false,
                          bool norm_first = false);
  // Any function of a tensor as the activation (PyTorch's callable).
  TransformerEncoderLayer(int64_t d_model, int64_t nhead, int64_t dim_feedforward, double dropout,
                          Activation activation, double layer_norm_eps = 1e-5,
                          bool batch_first = false, bool norm_first = false);

  // src [S, N, E] ([N, S, E] with batch_first, [S, E] unbatched); src_mask [S, S] or
  // [N * nhead, S, S]; src_key_padding_mask [N, S]. Masks as in MultiheadAttention.
  Tensor forward(const Tensor& src, const Tensor& src_mask,
                 const Tensor& src_key_padding_mask = Tensor());
  Tensor forward(const Tensor& src) override { return forward(src, Tensor(), Tensor()); }
  // A new layer with the same configuration, parameter values and training mode (a deep copy).
  std::shared_ptr<TransformerEncoderLayer> clone() const;

  std::shared_ptr<MultiheadAttention> self_attn;
  std::shared_ptr<Linear> linear1, linear2;
  std::shared_ptr<Dropout> dropout, dropout1, dropout2;
  std::shared_ptr<LayerNorm> norm1, norm2;

 private:
  TransformerLayerConfig config_;
};

class TransformerEncoder : public Module {
 public:
  // num_layers deep copies of `encoder_layer` (PyTorch copies too: the layers do not share
  // weights), then `norm` when given.
  TransformerEncoder(const TransformerEncoderLayer& encoder_layer, int64_t num_layers,
                     std::shared_ptr<LayerNorm> norm = nullptr);
  Tensor forward(const Tensor& src, const Tensor& mask,
                 const Tensor& src_key_padding_mask = Tensor());
  Tensor forward(const Tensor& src) override { return forward(src, Tensor(), Tensor()); }

  std::shared_ptr<ModuleList> layers;
  std::shared_ptr<LayerNorm> norm;  // null without a final norm
};

class TransformerDecoderLayer : public Module {
 public:
  using Activation = TransformerEncoderLayer::Activation;
  TransformerDecoderLayer(int64_t d_model, int64_t nhead, int64_t dim_feedforward = 2048,
                          double dropout = 0.1, const std::string& activation = "relu",
                          double layer_norm_eps = 1e-5, bool batch_first = false,
                          bool norm_first = false);
  TransformerDecoderLayer(int64_t d_model, int64_t nhead, int64_t dim_feedforward, double dropout,
                          Activation activation, double layer_norm_eps = 1e-5,
                          bool batch_first = false, bool norm_first = false);

  // tgt [T, N, E] and memory [S, N, E] ([N, T, E], [N, S, E] with batch_first); tgt_mask [T, T],
  // memory_mask [T, S]; the key padding masks [N, T] and [N, S]. Masks as in MultiheadAttention.
  Tensor forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask = Tensor(),
                 const Tensor& memory_mask = Tensor(),
                 const Tensor& tgt_key_padding_mask = Tensor(),
                 const Tensor& memory_key_padding_mask = Tensor());
  using Module::forward;  // a decoder layer has no single-input forward
  std::shared_ptr<TransformerDecoderLayer> clone() const;

  std::shared_ptr<MultiheadAttention> self_attn, multihead_attn;
  std::shared_ptr<Linear> linear1, linear2;
  std::shared_ptr<Dropout> dropout, dropout1, dropout2, dropout3;
  std::shared_ptr<LayerNorm> norm1, norm2, norm3;

 private:
  TransformerLayerConfig config_;
};

class TransformerDecoder : public Module {
 public:
  TransformerDecoder(const TransformerDecoderLayer& decoder_layer, int64_t num_layers,
                     std::shared_ptr<LayerNorm> norm = nullptr);
  Tensor forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask = Tensor(),
                 const Tensor& memory_mask = Tensor(),
                 const Tensor& tgt_key_padding_mask = Tensor(),
                 const Tensor& memory_key_padding_mask = Tensor());
  using Module::forward;

  std::shared_ptr<ModuleList> layers;
  std::shared_ptr<LayerNorm> norm;  // null without a final norm
};

// The encoder-decoder model of "Attention Is All You Need" (nn.Transformer): an encoder of
// num_encoder_layers and a decoder of num_decoder_layers, each with a final layer norm; every
// weight matrix is then re-drawn from Xavier-uniform, as PyTorch's _reset_parameters does.
class Transformer : public Module {
 public:
  Transformer(int64_t d_model = 512, int64_t nhead = 8, int64_t num_encoder_layers = 6,
              int64_t num_decoder_layers = 6, int64_t dim_feedforward = 2048, double dropout = 0.1,
              const std::string& activation = "relu", double layer_norm_eps = 1e-5,
              bool batch_first = false, bool norm_first = false);
  // src [S, N, E], tgt [T, N, E] ([N, S, E], [N, T, E] with batch_first); returns [T, N, E].
  Tensor forward(const Tensor& src, const Tensor& tgt, const Tensor& src_mask = Tensor(),
                 const Tensor& tgt_mask = Tensor(), const Tensor& memory_mask = Tensor(),
                 const Tensor& src_key_padding_mask = Tensor(),
                 const Tensor& tgt_key_padding_mask = Tensor(),
                 const Tensor& memory_key_padding_mask = Tensor());
  using Module::forward;

  std::shared_ptr<TransformerEncoder> encoder;
  std::shared_ptr<TransformerDecoder> decoder;

 private:
  int64_t d_model_;
  bool batch_first_;
};

// nn.Transformer.generate_square_subsequent_mask: [sz, sz] float, -inf above the diagonal and 0
// elsewhere, so position i attends to positions <= i.
Tensor generate_square_subsequent_mask(int64_t sz, const TensorOptions& options = {});

}  // namespace wick::nn
