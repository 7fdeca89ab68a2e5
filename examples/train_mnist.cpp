// Trains an MLP or the classic CNN on MNIST digits and reports test accuracy each epoch.
//
//   ./build/examples/train_mnist --model cnn --epochs 3
//
// By default it reads the 10,000-digit subset committed in assets/mnist (8,000 training and
// 2,000 test digits); --data DIR reads the official MNIST files (train-images-idx3-ubyte[.gz],
// ...) from DIR instead. Every epoch appends a row to the metrics CSV and redraws an SVG chart of
// the training curves next to it; --save writes a training checkpoint after every epoch and
// --resume continues from one, giving the same results as an uninterrupted run.
//
// Data-parallel training: mpirun starts N copies, each one rank; --ddp wraps the model in
// DistributedDataParallel and gives each rank its shard of every epoch (--batch-size is per rank):
//
//   mpirun -np 2 ./build/examples/train_mnist --ddp            # as root: add --allow-run-as-root
//   mpirun -np 2 ./build/examples/train_mnist --ddp --timeline runs/ddp_step.json
#include <memory>

#include "data/data.h"
#include "examples/common/cli.h"
#include "examples/common/trainer.h"
#include "examples/mnist_models.h"
#include "nn/optim.h"
#include "wick.h"

using namespace wick;

namespace {

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

}  // namespace

int main(int argc, char** argv) try {
  examples::Flags flags("train_mnist", "Train an MLP or a CNN on MNIST digits with wick.");
  flags.add("model", "cnn", "mlp (784-256-10) or cnn (the classic two-conv network)")
      .add("optimizer", "adam", "adam, adamw or sgd (momentum 0.9)")
      .add("data", "assets/mnist", "folder with MNIST IDX files (raw or .gz)");
  examples::add_training_flags(flags, {"3", "64", "0.001", "runs/mnist_metrics.csv"});
  if (!examples::parse_training_flags(flags, argc, argv)) return 0;
  examples::Trainer trainer("train_mnist", flags);

  manual_seed(static_cast<uint64_t>(flags.integer("seed")));
  std::shared_ptr<nn::Module> model = examples::make_mnist_model(flags.str("model"));
  if (trainer.device().is_cuda()) model->to(trainer.device());
  std::unique_ptr<optim::Optimizer> optimizer =
      make_optimizer(flags.str("optimizer"), *model, flags.real("lr"));

  data::Transform normalize = data::Normalize({0.1307}, {0.3081});
  auto train_set = std::make_shared<data::MNIST>(flags.str("data"), true, normalize);
  auto test_set = std::make_shared<data::MNIST>(flags.str("data"), false, normalize);
  data::DataLoader train_loader(train_set, trainer.train_loader_options(train_set->size()));
  data::DataLoader test_loader(test_set, trainer.test_loader_options(500));
  examples::require_batches("train_mnist", "the training set in " + flags.str("data"),
                            train_set->size(), flags.integer("batch-size"), train_loader.size());
  examples::require_batches("train_mnist", "the test set in " + flags.str("data"), test_set->size(),
                            500, test_loader.size());
  std::printf("MNIST digits from %s\n", flags.str("data").c_str());
  trainer.fit(model, *optimizer, nullptr, train_loader, test_loader, flags.str("model"));
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 2;
}
