// Trains a small character-level language model on The Devil's Dictionary (assets/text) and
// prints, each epoch, the training and validation loss, the perplexity and a generated sample: a
// decoder-only Transformer (causal self-attention) by default, or an LSTM (--model lstm).
//
//   ./build/examples/train_charlm                  # Transformer, 3 epochs
//   ./build/examples/train_charlm --model lstm
//
// The C++ twin of examples/train_charlm.py: the same flags, model, data order and optimizer,
// drawing its random numbers in the same order from the same generator, so one --seed gives the
// same weights, the same batches and the same first-epoch loss in both languages
// (tests/python/test_charlm_twins.py checks it). The validation loss is set beside a unigram
// baseline (predicting every character from its frequency in the training text); every epoch
// appends a row to the metrics CSV and redraws an SVG chart of the curves next to it.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/ops/composite_shape.h"
#include "core/ops/composite_stats.h"
#include "examples/common/cli.h"
#include "nn/clip_grad.h"
#include "nn/functional.h"
#include "nn/layers/recurrent.h"
#include "nn/layers/transformer.h"
#include "nn/optim.h"
#include "wick.h"

using namespace wick;
using Clock = std::chrono::steady_clock;

namespace {

// Token and position embeddings, pre-norm Transformer encoder layers under a causal mask, a final
// layer norm and a linear read-out to the vocabulary. Built in the order of the Python class, so
// the initialisers draw the same random numbers.
class TransformerLM : public nn::Module {
 public:
  TransformerLM(int64_t vocab, int64_t context, int64_t d_model, int64_t heads, int64_t layers)
      : Module("TransformerLM") {
    token = register_module("token", std::make_shared<nn::Embedding>(vocab, d_model));
    position = register_module("position", std::make_shared<nn::Embedding>(context, d_model));
    nn::TransformerEncoderLayer layer(d_model, heads, 4 * d_model, /*dropout=*/0.0, "gelu",
                                      /*layer_norm_eps=*/1e-5, /*batch_first=*/true,
                                      /*norm_first=*/true);
    blocks = register_module("blocks", std::make_shared<nn::TransformerEncoder>(layer, layers));
    norm = register_module("norm", std::make_shared<nn::LayerNorm>(Shape{d_model}));
    head = register_module("head", std::make_shared<nn::Linear>(d_model, vocab));
  }

  Tensor forward(const Tensor& tokens) override {
    int64_t steps = tokens.size(1);
    TensorOptions on_device;
    on_device.device = tokens.device();
    Tensor x = (*token)(tokens) + (*position)(arange(steps, on_device));
    // -inf above the diagonal: position t attends to positions <= t only.
    Tensor causal = triu(full({steps, steps}, -INFINITY, on_device), 1);
    return (*head)((*norm)(blocks->forward(x, causal)));
  }

  std::shared_ptr<nn::Embedding> token, position;
  std::shared_ptr<nn::TransformerEncoder> blocks;
  std::shared_ptr<nn::LayerNorm> norm;
  std::shared_ptr<nn::Linear> head;
};

// Token embeddings, a multi-layer LSTM and a linear read-out to the vocabulary.
class LstmLM : public nn::Module {
 public:
  LstmLM(int64_t vocab, int64_t d_model, int64_t layers) : Module("LstmLM") {
    token = register_module("token", std::make_shared<nn::Embedding>(vocab, d_model));
    nn::RNNOptions options;
    options.input_size = options.hidden_size = d_model;
    options.num_layers = layers;
    options.batch_first = true;
    lstm = register_module("lstm", std::make_shared<nn::LSTM>(options));
    head = register_module("head", std::make_shared<nn::Linear>(d_model, vocab));
  }

  Tensor forward(const Tensor& tokens) override {
    return (*head)(lstm->forward_full((*token)(tokens)).output);
  }

  std::shared_ptr<nn::Embedding> token;
  std::shared_ptr<nn::LSTM> lstm;
  std::shared_ptr<nn::Linear> head;
};

struct Corpus {
  std::string vocab;  // the distinct characters, sorted; a token is an index into it
  Tensor train, val;  // int64 token sequences
};

Corpus load_text(const std::string& path, double holdout = 0.1) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw std::invalid_argument("[train_charlm] cannot read --text " + path);
  std::stringstream buffer;
  buffer << file.rdbuf();
  std::string text = buffer.str();
  std::set<char> distinct(text.begin(), text.end());
  for (char c : distinct) {
    if (static_cast<unsigned char>(c) > 127) {
      throw std::invalid_argument("[train_charlm] " + path + " is not ASCII text");
    }
  }
  Corpus corpus;
  corpus.vocab.assign(distinct.begin(), distinct.end());
  std::map<char, int64_t> index;
  for (size_t i = 0; i < corpus.vocab.size(); ++i) index[corpus.vocab[i]] = int64_t(i);
  std::vector<int64_t> tokens;
  tokens.reserve(text.size());
  for (char c : text) tokens.push_back(index[c]);
  Tensor data = tensor(tokens);
  auto split = static_cast<int64_t>(double(text.size()) * (1 - holdout));
  corpus.train = data.slice(0, 0, split);
  corpus.val = data.slice(0, split, data.numel());
  return corpus;
}

// The loss of predicting each validation character by its training frequency (add-one).
double unigram_loss(const Tensor& train, const Tensor& val, int64_t vocab_size) {
  Tensor counts = bincount(train, Tensor(), vocab_size).to(DType::Float64) + 1.0;
  Tensor log_p = (counts / counts.sum()).log();
  return -take(log_p, val).mean().item<double>();
}

// `batch` windows of context + 1 characters at random starts: inputs and next-character targets.
std::pair<Tensor, Tensor> random_batch(const Tensor& data, int64_t batch, int64_t context) {
  Tensor starts = randint(0, data.numel() - context - 1, {batch});
  Tensor windows = take(data, starts.unsqueeze(1) + arange(context + 1).unsqueeze(0));
  return {windows.slice(1, 0, context), windows.slice(1, 1, context + 1)};
}

// The mean loss over evenly spaced windows covering the data once (the same every epoch).
double evaluate(nn::Module& model, const Tensor& data, int64_t batch, int64_t context,
                Device device) {
  model.eval();
  NoGradGuard no_grad;
  Tensor starts = arange(0, data.numel() - context - 1, context);
  Tensor offsets = arange(context + 1).unsqueeze(0);
  nn::F::CrossEntropyOptions sum;
  sum.reduction = nn::F::Reduction::Sum;
  double total = 0;
  int64_t count = 0;
  for (int64_t i = 0; i < starts.numel(); i += batch) {
    Tensor rows = starts.slice(0, i, std::min(i + batch, starts.numel())).unsqueeze(1);
    Tensor windows = take(data, rows + offsets).to(device);
    Tensor logits = model(windows.slice(1, 0, context));
    Tensor targets = windows.slice(1, 1, context + 1);
    total += nn::F::cross_entropy(logits.reshape({-1, logits.size(-1)}), targets.reshape({-1}), sum)
                 .item<double>();
    count += targets.numel();
  }
  model.train();
  return total / double(count);
}

std::string generate(nn::Module& model, const std::string& vocab, int64_t context, int64_t length,
                     double temperature, Device device) {
  std::vector<int64_t> tokens = {int64_t(vocab.find('\n'))};
  model.eval();
  NoGradGuard no_grad;
  std::string out;
  for (int64_t i = 0; i < length; ++i) {
    size_t from = tokens.size() > size_t(context) ? tokens.size() - size_t(context) : 0;
    std::vector<int64_t> window(tokens.begin() + int64_t(from), tokens.end());
    Tensor input = tensor(window, {1, int64_t(window.size())}).to(device);
    Tensor logits = model(input).select(0, 0).select(0, -1) / temperature;
    Tensor probs = logits.softmax(-1).cpu();
    tokens.push_back(multinomial(probs, 1).item<int64_t>());
    out += vocab[size_t(tokens.back())];
  }
  model.train();
  return out;
}

std::string indent_lines(std::string text) {
  for (size_t at = text.find('\n'); at != std::string::npos; at = text.find('\n', at + 11)) {
    text.replace(at, 1, "\n          ");
  }
  return text;
}

}  // namespace

int main(int argc, char** argv) try {
  const char* program = "train_charlm";
  examples::Flags flags(program,
                        "Train a character-level language model on The Devil's Dictionary with "
                        "wick, from C++.");
  flags.add("model", "transformer", "transformer or lstm")
      .add("epochs", "3", "epochs to train")
      .add("steps", "150", "training steps per epoch")
      .add("batch-size", "32", "sequences per batch")
      .add("context", "64", "characters per sequence")
      .add("d-model", "96", "embedding width")
      .add("heads", "4", "attention heads")
      .add("layers", "2", "Transformer or LSTM layers")
      .add("lr", "0.003", "AdamW learning rate (cosine schedule to zero)")
      .add("seed", "0", "seed for initialisation, batches and sampling")
      .add("sample", "240", "characters generated per epoch")
      .add("temperature", "0.8", "sampling temperature")
      .add("text", "assets/text/devils_dictionary.txt", "an ASCII text file to learn")
      .add("device", "cpu", "cpu or cuda")
      .add("metrics", "runs/charlm_metrics_cpp.csv",
           "per-epoch metrics CSV (a .svg chart is written next to it)");
  if (!flags.parse(argc, argv)) return 0;
  std::string model_name = flags.str("model");
  if (model_name != "transformer" && model_name != "lstm") {
    throw std::invalid_argument("[train_charlm] --model must be transformer or lstm; got '" +
                                model_name + "'");
  }
  int64_t epochs = flags.integer("epochs", 1), steps = flags.integer("steps", 1);
  int64_t batch_size = flags.integer("batch-size", 1), context = flags.integer("context", 1);
  int64_t d_model = flags.integer("d-model", 1), layers = flags.integer("layers", 1);
  Device device(flags.str("device"));

  manual_seed(uint64_t(flags.integer("seed", 0)));
  Corpus corpus = load_text(flags.str("text"));
  auto vocab_size = int64_t(corpus.vocab.size());
  if (corpus.val.numel() <= context + 1) {
    throw std::invalid_argument("[train_charlm] " + flags.str("text") +
                                " is too short for --context " + std::to_string(context));
  }
  std::shared_ptr<nn::Module> model;
  if (model_name == "transformer") {
    model = std::make_shared<TransformerLM>(vocab_size, context, d_model, flags.integer("heads", 1),
                                            layers);
  } else {
    model = std::make_shared<LstmLM>(vocab_size, d_model, layers);
  }
  model->to(device);
  optim::AdamOptions adamw;
  adamw.lr = flags.real("lr", 0.0);
  adamw.weight_decay = 0.01;
  optim::AdamW optimizer(model->parameters(), adamw);
  optim::CosineAnnealingLR schedule(optimizer, epochs * steps);
  double baseline = unigram_loss(corpus.train, corpus.val, vocab_size);
  std::printf(
      "%s\n%lld parameters; %lld training and %lld validation characters, vocabulary %lld; "
      "unigram baseline loss %.4f\n",
      model->repr().c_str(), static_cast<long long>(model->num_parameters()),
      static_cast<long long>(corpus.train.numel()), static_cast<long long>(corpus.val.numel()),
      static_cast<long long>(vocab_size), baseline);

  std::string metrics_path = flags.str("metrics");
  std::string chart = std::filesystem::path(metrics_path).replace_extension(".svg").string();
  examples::CsvWriter metrics(metrics_path, {"epoch", "train_loss", "val_loss", "val_perplexity",
                                             "unigram_loss", "tokens_per_second", "seconds"});
  std::vector<examples::Series> curves = {
      {"training loss", {}, {}}, {"validation loss", {}, {}}, {"unigram baseline", {}, {}}};
  auto start = Clock::now();
  double tokens_seen = 0, train_seconds = 0, val_loss = 0;
  for (int64_t epoch = 1; epoch <= epochs; ++epoch) {
    examples::ProgressBar bar("epoch " + std::to_string(epoch) + "/" + std::to_string(epochs),
                              steps);
    auto epoch_start = Clock::now();
    double running = 0;
    char status[64];
    for (int64_t step = 1; step <= steps; ++step) {
      auto [inputs, targets] = random_batch(corpus.train, batch_size, context);
      Tensor logits = (*model)(inputs.to(device));
      Tensor loss =
          nn::F::cross_entropy(logits.reshape({-1, vocab_size}), targets.to(device).reshape({-1}));
      optimizer.zero_grad();
      loss.backward();
      nn::utils::clip_grad_norm_(model->parameters(), 1.0);
      optimizer.step();
      schedule.step();
      running += loss.item<double>();
      std::snprintf(status, sizeof status, "loss %.4f", running / double(step));
      bar.update(step, status);
    }
    double seconds = std::chrono::duration<double>(Clock::now() - epoch_start).count();
    double train_loss = running / double(steps);
    std::snprintf(status, sizeof status, "loss %.4f", train_loss);
    bar.finish(status);
    double tokens = double(steps * batch_size * context);
    tokens_seen += tokens, train_seconds += seconds;
    val_loss = evaluate(*model, corpus.val, 64, context, device);
    std::printf("  validation: loss %.4f  perplexity %.2f  (unigram %.4f; %.0f tokens/s)\n",
                val_loss, std::exp(val_loss), baseline, tokens / seconds);
    std::string sample = generate(*model, corpus.vocab, context, flags.integer("sample", 0),
                                  flags.real("temperature", 1e-6), device);
    std::printf("  sample: %s\n", indent_lines(sample).c_str());
    std::fflush(stdout);
    metrics.row({double(epoch), train_loss, val_loss, std::exp(val_loss), baseline,
                 tokens / seconds, seconds});
    for (auto [series, value] : {std::pair{0, train_loss}, {1, val_loss}, {2, baseline}}) {
      curves[size_t(series)].x.push_back(double(epoch));
      curves[size_t(series)].y.push_back(value);
    }
    examples::write_svg_chart(chart, model_name + " on The Devil's Dictionary", {curves},
                              {"loss (nats per character)"}, "epoch");
  }
  std::printf(
      "summary: %s, %lld epochs, validation loss %.4f (unigram %.4f), %.0f tokens/s, %.1f s\n",
      model_name.c_str(), static_cast<long long>(epochs), val_loss, baseline,
      tokens_seen / train_seconds, std::chrono::duration<double>(Clock::now() - start).count());
  std::printf("metrics: %s  chart: %s\n", metrics_path.c_str(), chart.c_str());
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return examples::exit_status(e);
}
