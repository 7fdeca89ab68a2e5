// The C++ half of the twin table (tests/python/test_layer_twins.py): every layer that exists both
// as a C++ module (nn/layers/) and a Python one (python/wick/nn/modules/) is built here from a row
// of the table below, given the state_dict and inputs the Python twin was given, and run forward
// and backward; the Python test then requires the same outputs, gradients and state_dict keys.
//
//   layer_twins CASE IN.safetensors OUT.safetensors
//
// IN holds "state.<key>" (the Python layer's state_dict), "input0", "input1", ... and the metadata
// "seed" (set before building and before forward, for the random layers), "train" ("1" or "0") and
// "dtype" ("float64" or "float32", the parameters' dtype). OUT holds "output", "grad.input<i>" for
// each floating input, "grad.<name>" for each parameter, "state.<key>" (the state_dict after
// forward: running statistics move in training), "init.<key>" (the state_dict as built under the
// seed, before loading) and the metadata "keys", this layer's state_dict keys one a line. The
// gradients are those of output.sum().
//
// A row's case id names the layer and the arguments the Python row passes; the two spell the same
// constructor call, one in each language, so a row added here needs its twin there.
#include <cstdio>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/generator.h"
#include "nn/layers.h"
#include "nn/serialization.h"

using namespace wick;
using Inputs = std::vector<Tensor>;

namespace {

struct Row {
  using Build = std::function<std::shared_ptr<nn::Module>()>;
  using Forward = std::function<Tensor(nn::Module&, const Inputs&)>;
  Row(Build b, Forward f = nullptr) : build(std::move(b)), forward(std::move(f)) {}  // NOLINT
  Build build;
  // Forward for a layer whose call is not Module::forward(input); null for the others.
  Forward forward;
};

template <class M, class... Args>
std::function<std::shared_ptr<nn::Module>()> make(Args... args) {
  return [=] { return std::make_shared<M>(args...); };
}

nn::RNNOptions rnn_options(int64_t input, int64_t hidden, int64_t layers, bool bias,
                           bool batch_first, bool bidirectional,
                           std::string nonlinearity = "tanh") {
  nn::RNNOptions o;
  o.input_size = input;
  o.hidden_size = hidden;
  o.num_layers = layers;
  o.bias = bias;
  o.batch_first = batch_first;
  o.bidirectional = bidirectional;
  o.nonlinearity = std::move(nonlinearity);
  return o;
}

template <class M>
Row two_inputs(std::function<std::shared_ptr<nn::Module>()> build) {
  return {build, [](nn::Module& m, const Inputs& in) {
            return static_cast<M&>(m).forward(in.at(0), in.at(1));
          }};
}

const std::map<std::string, Row>& table() {
  using P = Pair2;
  static const std::map<std::string, Row>
      rows =
          {
              // linear
              {"Linear", {make<nn::Linear>(5, 3)}},
              {"Linear_nobias", {make<nn::Linear>(5, 3, false)}},
              {"Identity", {make<nn::Identity>()}},
              {"Flatten", {make<nn::Flatten>()}},
              {"Flatten_0_2", {make<nn::Flatten>(0, 2)}},
              // conv
              {"Conv1d", {make<nn::Conv1d>(4, 6, 3)}},
              {"Conv1d_s2_p1_d2_g2", {make<nn::Conv1d>(4, 6, 3, 2, 1, 2, 2)}},
              {"Conv1d_nobias", {make<nn::Conv1d>(4, 6, 3, 1, 0, 1, 1, false)}},
              {"Conv2d", {make<nn::Conv2d>(3, 4, P(3))}},
              {"Conv2d_k23_s2_p1", {make<nn::Conv2d>(3, 4, P(2, 3), P(2), P(1))}},
              {"Conv2d_d2_g2_nobias", {make<nn::Conv2d>(4, 6, P(3), P(1), P(2), P(2), 2, false)}},
              {"ConvTranspose2d", {make<nn::ConvTranspose2d>(3, 4, P(3))}},
              {"ConvTranspose2d_s2_p1_op1_g2",
               {make<nn::ConvTranspose2d>(4, 6, P(3), P(2), P(1), P(1), 2, true, P(1))}},
              {"ConvTranspose2d_d2_nobias",
               {make<nn::ConvTranspose2d>(3, 4, P(2), P(1), P(0), P(0), 1, false, P(2))}},
              {"Unfold", {make<nn::Unfold>(P(2, 3), P(1), P(1), P(2))}},
              {"Fold", {make<nn::Fold>(P(4, 5), P(2), P(1), P(0), P(1))}},
              // pooling
              {"MaxPool1d", {make<nn::MaxPool1d>(3)}},
              {"MaxPool1d_s1_p1_d2_ceil", {make<nn::MaxPool1d>(3, 1, 1, 2, true)}},
              {"MaxPool2d", {make<nn::MaxPool2d>(P(2))}},
              {"MaxPool2d_k3_s2_p1_ceil", {make<nn::MaxPool2d>(P(3), P(2), P(1), P(1), true)}},
              {"AvgPool1d", {make<nn::AvgPool1d>(3)}},
              {"AvgPool1d_s2_p1_exclude", {make<nn::AvgPool1d>(3, 2, 1, true, false)}},
              {"AvgPool2d", {make<nn::AvgPool2d>(P(2))}},
              {"AvgPool2d_k3_s2_p1_ceil_exclude",
               {make<nn::AvgPool2d>(P(3), P(2), P(1), true, false)}},
              {"AdaptiveAvgPool1d", {make<nn::AdaptiveAvgPool1d>(3)}},
              {"AdaptiveAvgPool2d", {make<nn::AdaptiveAvgPool2d>(P(3, 2))}},
              {"AdaptiveMaxPool2d", {make<nn::AdaptiveMaxPool2d>(P(3, 2))}},
              // normalization
              {"BatchNorm1d", {make<nn::BatchNorm1d>(4)}},
              {"BatchNorm1d_3d_noaffine", {make<nn::BatchNorm1d>(4, 1e-3, 0.3, false)}},
              {"BatchNorm2d", {make<nn::BatchNorm2d>(3)}},
              {"BatchNorm2d_nostats", {make<nn::BatchNorm2d>(3, 1e-5, 0.1, true, false)}},
              {"InstanceNorm2d", {make<nn::InstanceNorm2d>(3)}},
              {"InstanceNorm2d_affine_stats", {make<nn::InstanceNorm2d>(3, 1e-5, 0.2, true, true)}},
              {"GroupNorm", {make<nn::GroupNorm>(2, 4)}},
              {"GroupNorm_noaffine", {make<nn::GroupNorm>(4, 4, 1e-3, false)}},
              {"LayerNorm", {make<nn::LayerNorm>(Shape{5})}},
              {"LayerNorm_2d_noaffine", {make<nn::LayerNorm>(Shape{3, 5}, 1e-3, false)}},
              // dropout (same seed, same mask)
              {"Dropout", {make<nn::Dropout>(0.3)}},
              {"Dropout2d", {make<nn::Dropout2d>(0.4)}},
              // activation
              {"ReLU", {make<nn::ReLU>()}},
              {"GELU", {make<nn::GELU>()}},
              {"GELU_tanh", {make<nn::GELU>("tanh")}},
              {"SiLU", {make<nn::SiLU>()}},
              {"Tanh", {make<nn::Tanh>()}},
              {"Sigmoid", {make<nn::Sigmoid>()}},
              {"Softmax", {make<nn::Softmax>(1)}},
              {"LogSoftmax", {make<nn::LogSoftmax>(-1)}},
              // distance
              {"CosineSimilarity", two_inputs<nn::CosineSimilarity>(make<nn::CosineSimilarity>())},
              {"CosineSimilarity_dim0",
               two_inputs<nn::CosineSimilarity>(make<nn::CosineSimilarity>(0, 1e-6))},
              {"PairwiseDistance", two_inputs<nn::PairwiseDistance>(make<nn::PairwiseDistance>())},
              {"PairwiseDistance_p1_keepdim",
               two_inputs<nn::PairwiseDistance>(make<nn::PairwiseDistance>(1.0, 1e-4, true))},
              // embedding
              {"Embedding", {make<nn::Embedding>(10, 4)}},
              {"Embedding_padding", {make<nn::Embedding>(10, 4, std::optional<int64_t>(2))}},
              {"EmbeddingBag", {make<nn::EmbeddingBag>(10, 4)}},
              {"EmbeddingBag_sum_padding", {make<nn::EmbeddingBag>(10, 4, "sum", false, 2)}},
              {"EmbeddingBag_max_offsets",
               {make<nn::EmbeddingBag>(10, 4, "max"),
                [](nn::Module& m,
                   const Inputs&
                       in) { return static_cast<nn::EmbeddingBag&>(m).forward(in.at(0), in.at(1)); }}},
              // resample
              {"Upsample_nearest",
               {make<nn::Upsample>(std::vector<int64_t>{}, std::vector<double>{2.0})}},
              {"Upsample_bilinear_size",
               {make<nn::Upsample>(std::vector<int64_t>{5, 7}, std::vector<double>{}, "bilinear")}},
              {"Upsample_bilinear_align",
               {make<nn::Upsample>(std::vector<int64_t>{}, std::vector<double>{2.0}, "bilinear",
                                   std::optional<bool>(true))}},
              {"PixelShuffle", {make<nn::PixelShuffle>(2)}},
              {"ZeroPad2d", {make<nn::ZeroPad2d>(std::vector<int64_t>{1, 2, 0, 1})}},
              {"ConstantPad2d", {make<nn::ConstantPad2d>(std::vector<int64_t>{2, 1, 1, 0}, 0.5)}},
              {"ReflectionPad2d", {make<nn::ReflectionPad2d>(std::vector<int64_t>{2, 1, 1, 2})}},
              {"ReplicationPad2d", {make<nn::ReplicationPad2d>(std::vector<int64_t>{2, 1, 1, 2})}},
              // recurrent
              {"RNN", {[] {
                 return std::make_shared<nn::RNN>(rnn_options(3, 4, 1, true, false, false));
               }}},
              {"RNN_relu_2layers_bidir_batchfirst", {[] {
                 return std::make_shared<nn::RNN>(rnn_options(3, 4, 2, true, true, true, "relu"));
               }}},
              {"LSTM", {[] {
                 return std::make_shared<nn::LSTM>(rnn_options(3, 4, 1, true, false, false));
               }}},
              {"LSTM_2layers_bidir_nobias", {[] {
                 return std::make_shared<nn::LSTM>(rnn_options(3, 4, 2, false, false, true));
               }}},
              {"GRU", {[] {
                 return std::make_shared<nn::GRU>(rnn_options(3, 4, 1, true, false, false));
               }}},
              {"GRU_2layers_batchfirst",
               {[] { return std::make_shared<nn::GRU>(rnn_options(3, 4, 2, true, true, false)); }}},
              {"RNNCell", {make<nn::RNNCell>(3, 4)}},
              {"RNNCell_relu_nobias", {make<nn::RNNCell>(3, 4, false, "relu")}},
              {"LSTMCell", {make<nn::LSTMCell>(3, 4)}},
              {"GRUCell", {make<nn::GRUCell>(3, 4)}},
              // attention
              {"MultiheadAttention", {make<nn::MultiheadAttention>(8, 2)}},
              {"MultiheadAttention_kv_zero_batchfirst",
               {make<nn::MultiheadAttention>(8, 2, 0.0, true, true, true, 0, 0, true)}},
              {"MultiheadAttention_kdim_vdim",
               {make<nn::MultiheadAttention>(8, 2, 0.0, true, false, false, 6, 5),
                [](nn::Module& m, const Inputs& in) {
                  return static_cast<nn::MultiheadAttention&>(m)
                      .forward(in.at(0), in.at(1), in.at(2))
                      .first;
                }}},
              // transformer
              {"TransformerEncoderLayer", {make<nn::TransformerEncoderLayer>(8, 2, 16, 0.0)}},
              {"TransformerEncoderLayer_gelu_normfirst_batchfirst",
               {make<nn::TransformerEncoderLayer>(8, 2, 16, 0.0, std::string("gelu"),
                                                  1e-4, true, true)}},
              {"TransformerEncoder", {[] {
                 return std::make_shared<nn::TransformerEncoder>(
                     nn::TransformerEncoderLayer(8, 2, 16, 0.0), 2,
                     std::make_shared<nn::LayerNorm>(Shape{8}));
               }}},
              {"TransformerDecoderLayer",
               {make<nn::TransformerDecoderLayer>(8, 2, 16, 0.0),
                [](nn::Module& m, const Inputs& in) {
                  return static_cast<nn::TransformerDecoderLayer&>(m).forward(in.at(0), in.at(1));
                }}},
              {"TransformerDecoder",
               {[] {
                  return std::make_shared<nn::TransformerDecoder>(
                      nn::TransformerDecoderLayer(8, 2, 16, 0.0, std::string("gelu"), 1e-5, false,
                                                  true),
                      2);
                },
                [](nn::Module& m, const Inputs& in) {
                  return static_cast<nn::TransformerDecoder&>(m).forward(in.at(0), in.at(1));
                }}},
              {"Transformer",
               {make<nn::Transformer>(8, 2, 1, 1, 16, 0.0),
                [](nn::Module& m,
                   const Inputs&
                       in) { return static_cast<nn::Transformer&>(m).forward(in.at(0), in.at(1)); }}},
          };
  return rows;
}

int run(const std::string& name, const std::string& in_path, const std::string& out_path) {
  auto row = table().find(name);
  if (row == table().end()) {
    std::fprintf(stderr, "layer_twins: no row %s\n", name.c_str());
    return 2;
  }
  SafetensorsFile in = load_safetensors(in_path);
  const uint64_t seed = std::stoull(in.metadata.at("seed"));
  const DType dtype = in.metadata.at("dtype") == "float64" ? kFloat64 : kFloat32;
  // Built under the seed the Python twin was built under: the same draws, the same weights.
  manual_seed(seed);
  std::shared_ptr<nn::Module> layer = row->second.build();
  layer->to(dtype);
  StateDict out;
  for (const auto& [key, t] : layer->state_dict()) out["init." + key] = t.detach().clone();
  StateDict state;
  Inputs inputs;
  for (const auto& [key, t] : in.tensors) {
    if (key.rfind("state.", 0) == 0) state[key.substr(6)] = t;
  }
  for (size_t i = 0; in.tensors.count("input" + std::to_string(i)); ++i) {
    Tensor t = in.tensors.at("input" + std::to_string(i));
    if (t.is_floating_point()) t.requires_grad_(true);
    inputs.push_back(t);
  }
  layer->load_state_dict(state);
  layer->train(in.metadata.at("train") == "1");
  manual_seed(seed);

  Tensor output =
      row->second.forward ? row->second.forward(*layer, inputs) : layer->forward(inputs.at(0));
  output.sum().backward();

  out["output"] = output.detach();
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].grad().defined()) out["grad.input" + std::to_string(i)] = inputs[i].grad();
  }
  for (const auto& [key, p] : layer->named_parameters()) {
    if (p.grad().defined()) out["grad." + key] = p.grad();
  }
  std::string keys;
  for (const auto& [key, t] : layer->state_dict()) {
    keys += key + "\n";
    out["state." + key] = t.detach();
  }
  save_safetensors(out_path, out, {{"keys", keys}});
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "--list") {
    for (const auto& [name, row] : table()) std::printf("%s\n", name.c_str());
    return 0;
  }
  if (argc != 4) {
    std::fprintf(stderr, "usage: layer_twins CASE IN.safetensors OUT.safetensors | --list\n");
    return 2;
  }
  try {
    return run(argv[1], argv[2], argv[3]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "layer_twins %s: %s\n", argv[1], e.what());
    return 1;
  }
}
