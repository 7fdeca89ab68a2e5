// Trains an MLP or the classic CNN on MNIST digits and reports test accuracy each epoch.
//
//   ./build/examples/train_mnist --model cnn --epochs 3
//
// By default it reads the 10,000-digit subset committed in assets/mnist (8,000 training and
// 2,000 test digits); --data DIR reads the official MNIST files (train-images-idx3-ubyte[.gz],
// ...) from DIR instead. Every epoch appends a row to the metrics CSV and redraws an SVG chart of
// the training curves next to it; --save writes a training checkpoint after every epoch and
// --resume continues from one, giving the same results as an uninterrupted run.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>

#include <omp.h>

#include "data/data.h"
#include "examples/common/cli.h"
#include "examples/mnist_models.h"
#include "nn/checkpoint.h"
#include "nn/functional.h"
#include "nn/grad_scaler.h"
#include "nn/lr_scheduler.h"
#include "nn/optim.h"
#include "wick.h"

using namespace wick;
using Clock = std::chrono::steady_clock;

namespace {

struct EpochResult {
  double loss = 0, accuracy = 0, samples_per_second = 0, seconds = 0, wait_seconds = 0;
};

std::unique_ptr<optim::Optimizer> make_optimizer(const std::string& name, nn::Module& model,
                                                 double lr) {
  if (name == "adam")
    return std::make_unique<optim::Adam>(model.parameters(), optim::AdamOptions{lr});
  if (name == "adamw") {
    optim::AdamOptions o = optim::AdamW::default_options();
    o.lr = lr;
    return std::make_unique<optim::AdamW>(model.parameters(), o);
  }
  if (name == "sgd") {
    optim::SGDOptions o;
    o.lr = lr;
    o.momentum = 0.9;
    return std::make_unique<optim::SGD>(model.parameters(), o);
  }
  throw std::invalid_argument("[train_mnist] --optimizer must be adam, adamw or sgd; got '" + name +
                              "'");
}

// Mixed precision (--amp): the autocast dtype, and a loss scaler that is active for float16
// (bfloat16 has float32's range and needs none).
struct Precision {
  bool autocast = false;
  DType dtype = kBFloat16;
  amp::GradScaler scaler{amp::GradScalerOptions{65536.0, 2.0, 0.5, 2000, false}};
};

EpochResult train_epoch(nn::Module& model, optim::Optimizer& optimizer, data::DataLoader& loader,
                        Precision& precision, int64_t epoch, int64_t epochs,
                        std::vector<examples::Series>& curve, int64_t& global_step) {
  model.train();
  examples::ProgressBar bar("epoch " + std::to_string(epoch) + "/" + std::to_string(epochs),
                            loader.size());
  auto start = Clock::now();
  double loss_sum = 0;
  int64_t correct = 0, seen = 0, batches = 0;
  char status[128];
  for (data::Batch& batch : loader) {
    Tensor logits, loss;
    {
      AutocastGuard autocast(batch.input.device().type, precision.dtype, precision.autocast);
      logits = model(batch.input);
      loss = nn::F::cross_entropy(logits, batch.target);
    }
    optimizer.zero_grad();
    precision.scaler.scale(loss).backward();
    precision.scaler.step(optimizer);
    precision.scaler.update();
    ++global_step;
    double batch_loss = loss.item<double>();
    int64_t n = batch.target.size(0);
    loss_sum += batch_loss * n;
    correct += (logits.argmax(1) == batch.target).sum().item<int64_t>();
    seen += n;
    curve[0].x.push_back(static_cast<double>(global_step));
    curve[0].y.push_back(batch_loss);
    double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    std::snprintf(status, sizeof(status), "loss %.4f  acc %5.1f%%  %6.0f samples/s",
                  loss_sum / seen, 100.0 * correct / seen, seen / seconds);
    bar.update(++batches, status);
  }
  EpochResult r;
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  r.loss = loss_sum / seen;
  r.accuracy = static_cast<double>(correct) / seen;
  r.samples_per_second = seen / r.seconds;
  r.wait_seconds = loader.stats().epoch.wait_seconds;
  std::snprintf(status, sizeof(status), "loss %.4f  acc %5.1f%%  %6.0f samples/s", r.loss,
                100 * r.accuracy, r.samples_per_second);
  bar.finish(status);
  return r;
}

EpochResult evaluate(nn::Module& model, data::DataLoader& loader) {
  NoGradGuard no_grad;
  model.eval();
  double loss_sum = 0;
  int64_t correct = 0, seen = 0;
  for (data::Batch& batch : loader) {
    Tensor logits = model(batch.input);
    nn::F::CrossEntropyOptions sum;
    sum.reduction = nn::F::Reduction::Sum;
    loss_sum += nn::F::cross_entropy(logits, batch.target, sum).item<double>();
    correct += (logits.argmax(1) == batch.target).sum().item<int64_t>();
    seen += batch.target.size(0);
  }
  return {loss_sum / seen, static_cast<double>(correct) / seen, 0, 0, 0};
}

}  // namespace

int main(int argc, char** argv) try {
  examples::Flags flags("train_mnist", "Train an MLP or a CNN on MNIST digits with wick.");
  flags.add("model", "cnn", "mlp (784-256-10) or cnn (the classic two-conv network)")
      .add("epochs", "3", "epochs to train")
      .add("batch-size", "64", "examples per batch")
      .add("lr", "0.001", "learning rate")
      .add("optimizer", "adam", "adam, adamw or sgd (momentum 0.9)")
      .add("workers", "2", "data-loader worker threads (0: load in the training thread)")
      .add("seed", "0", "seed for initialisation, shuffling and dropout")
      .add("data", "assets/mnist", "folder with MNIST IDX files (raw or .gz)")
      .add("save", "", "write a training checkpoint here after every epoch")
      .add("resume", "", "continue from this training checkpoint")
      .add("metrics", "runs/mnist_metrics.csv",
           "per-epoch metrics CSV (a .svg chart is written next to it)")
      .add("threads", "0", "OpenMP threads for the kernels (0: all cores)")
      .add("amp", "none", "mixed precision: none, bf16 or fp16 (fp16 adds dynamic loss scaling)")
      .add("json", "0",
           "1: end with one JSON line of results (for benchmarks/mnist_vs_pytorch.py)");
  if (!flags.parse(argc, argv)) return 0;
  if (flags.integer("threads") > 0) omp_set_num_threads(static_cast<int>(flags.integer("threads")));

  const int64_t epochs = flags.integer("epochs"), batch_size = flags.integer("batch-size");
  const uint64_t seed = static_cast<uint64_t>(flags.integer("seed"));
  check_value(epochs > 0 && batch_size > 0, "train_mnist",
              "--epochs and --batch-size must be positive");
  manual_seed(seed);
  std::shared_ptr<nn::Module> model = examples::make_mnist_model(flags.str("model"));
  std::unique_ptr<optim::Optimizer> optimizer =
      make_optimizer(flags.str("optimizer"), *model, flags.real("lr"));

  data::Transform normalize = data::Normalize({0.1307}, {0.3081});
  auto train_set = std::make_shared<data::MNIST>(flags.str("data"), true, normalize);
  auto test_set = std::make_shared<data::MNIST>(flags.str("data"), false, normalize);
  data::DataLoaderOptions train_options;
  train_options.batch_size = batch_size;
  train_options.shuffle = true;
  train_options.num_workers = flags.integer("workers");
  train_options.seed = seed;
  data::DataLoader train_loader(train_set, train_options);
  data::DataLoaderOptions test_options = train_options;
  test_options.shuffle = false;
  test_options.batch_size = 500;
  data::DataLoader test_loader(test_set, test_options);

  Precision precision;
  const std::string amp_mode = flags.str("amp");
  check_value(amp_mode == "none" || amp_mode == "bf16" || amp_mode == "fp16", "train_mnist",
              "--amp must be none, bf16 or fp16; got '", amp_mode, "'");
  precision.autocast = amp_mode != "none";
  precision.dtype = amp_mode == "fp16" ? kFloat16 : kBFloat16;
  if (amp_mode == "fp16") precision.scaler = amp::GradScaler();

  nn::TrainingState state;
  if (flags.has("resume")) {
    state = nn::load_checkpoint(flags.str("resume"), *model, *optimizer, nullptr);
    if (!state.extra.empty() && precision.scaler.is_enabled()) {
      precision.scaler.load_state_dict(state.extra);
    }
    std::printf("resumed from %s after epoch %lld\n", flags.str("resume").c_str(),
                static_cast<long long>(state.epoch));
  }
  std::printf("%s\n%lld parameters; %lld training and %lld test digits from %s; %lld workers\n",
              model->repr().c_str(), static_cast<long long>(model->num_parameters()),
              static_cast<long long>(train_set->size()), static_cast<long long>(test_set->size()),
              flags.str("data").c_str(), static_cast<long long>(train_options.num_workers));

  std::string metrics_path = flags.str("metrics");
  examples::CsvWriter csv(metrics_path, {"epoch", "train_loss", "train_accuracy", "test_loss",
                                         "test_accuracy", "samples_per_second", "seconds",
                                         "loader_wait_seconds", "loss_scale", "skipped_steps"});
  std::vector<examples::Series> loss_curve = {{"training loss (per batch)", {}, {}}};
  std::vector<examples::Series> accuracy_curve = {{"train accuracy", {}, {}},
                                                  {"test accuracy", {}, {}}};
  double baseline_rss = examples::current_rss_mib();
  double training_peak_rss = 0, training_peak_tensors = 0;
  auto start = Clock::now();
  double total_samples = 0, total_wait = 0, total_train_seconds = 0;
  EpochResult test{};
  for (int64_t epoch = state.epoch + 1; epoch <= epochs; ++epoch) {
    train_loader.set_epoch(epoch - 1);  // the shuffle order depends only on (seed, epoch)
    EpochResult train = train_epoch(*model, *optimizer, train_loader, precision, epoch, epochs,
                                    loss_curve, state.global_step);
    if (training_peak_rss == 0) {  // memory of training alone, before evaluation's big batches
      training_peak_rss = examples::peak_rss_mib();
      training_peak_tensors = cpu_allocator()->stats().peak_allocated_bytes / 1048576.0;
    }
    test = evaluate(*model, test_loader);
    std::printf("  test: loss %.4f  accuracy %.2f%%  (loader wait %.2f s of %.2f s)\n", test.loss,
                100 * test.accuracy, train.wait_seconds, train.seconds);
    csv.row({double(epoch), train.loss, train.accuracy, test.loss, test.accuracy,
             train.samples_per_second, train.seconds, train.wait_seconds,
             precision.scaler.is_enabled() ? precision.scaler.get_scale() : 1.0,
             double(precision.scaler.skipped_steps())});
    accuracy_curve[0].x.push_back(double(epoch)),
        accuracy_curve[0].y.push_back(100 * train.accuracy);
    accuracy_curve[1].x.push_back(double(epoch)),
        accuracy_curve[1].y.push_back(100 * test.accuracy);
    std::string chart = std::filesystem::path(metrics_path).replace_extension(".svg").string();
    examples::write_svg_chart(chart, "train_mnist --model " + flags.str("model"),
                              {loss_curve, accuracy_curve}, {"loss", "accuracy (%)"},
                              "step / epoch");
    total_samples += train.samples_per_second * train.seconds;
    total_wait += train.wait_seconds;
    total_train_seconds += train.seconds;
    state.epoch = epoch;
    if (flags.has("save")) {
      state.info["command"] = flags.command_line();
      if (precision.scaler.is_enabled()) state.extra = precision.scaler.state_dict();
      nn::save_checkpoint(flags.str("save"), *model, *optimizer, nullptr, state);
    }
  }
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  AllocatorStats memory = cpu_allocator()->stats();
  std::printf(
      "summary: %s, %lld epochs, test accuracy %.2f%%, %.1f s (%.0f training samples/s, loader "
      "wait %.2f s), peak tensor memory %.1f MiB\n",
      flags.str("model").c_str(), static_cast<long long>(epochs), 100 * test.accuracy, seconds,
      total_train_seconds > 0 ? total_samples / total_train_seconds : 0.0, total_wait,
      memory.peak_allocated_bytes / 1048576.0);
  std::printf("metrics: %s (chart: %s)\n", metrics_path.c_str(),
              std::filesystem::path(metrics_path).replace_extension(".svg").c_str());
  if (flags.integer("json") != 0) {
    std::printf(
        "{\"framework\": \"wick\", \"model\": \"%s\", \"samples_per_second\": %.1f, "
        "\"threads\": %d, \"peak_rss_mib\": %.1f, \"rss_growth_mib\": %.1f, "
        "\"peak_tensor_mib\": %.1f, \"test_accuracy\": %.4f}\n",
        flags.str("model").c_str(),
        total_train_seconds > 0 ? total_samples / total_train_seconds : 0.0, omp_get_max_threads(),
        training_peak_rss, training_peak_rss - baseline_rss, training_peak_tensors, test.accuracy);
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 2;
}
