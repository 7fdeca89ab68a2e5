// Trains the CIFAR-style ResNet-20/32/56 of He et al. 2016 and reports test accuracy each epoch:
// SGD with momentum and weight decay, a cosine learning-rate schedule, random crops (and, on
// CIFAR-10, horizontal flips).
//
//   ./build/examples/train_resnet --epochs 3                   # MNIST digits padded to 32 x 32
//   ./build/examples/train_resnet --data ~/cifar-10-batches-bin --epochs 30
//
// By default it trains on the 10,000-digit MNIST subset committed in assets/mnist, each digit
// padded from 28 x 28 to 32 x 32 and shifted by up to 2 pixels, so it runs on a fresh machine;
// --data DIR trains on the CIFAR-10 binary files in DIR instead (data_batch_1.bin ...). Digits are
// not flipped: a mirrored 2 is not a 2. examples/train_resnet.py is the same program in Python:
// with the same seed the two build the same weights, see the same batches and print the same
// losses. Everything else - progress, the metrics CSV and SVG chart, --save/--resume, --amp,
// --ddp, --device, --timeline - is train_mnist's (examples/common/trainer.h).
#include <cstdio>
#include <memory>

#include "data/data.h"
#include "examples/common/cli.h"
#include "examples/common/trainer.h"
#include "nn/models/resnet.h"
#include "nn/optim.h"
#include "wick.h"

using namespace wick;

namespace {

struct Images {
  std::string name;  // "MNIST digits" or "CIFAR-10 images"
  std::shared_ptr<data::Dataset> train, test;
  int64_t channels;
};

// MNIST: pad to 32 x 32, then (training only) a random 32 x 32 window of the digit padded by 2
// more - a shift of up to 2 pixels each way. CIFAR-10: the usual crop with padding 4 and a flip.
Images load_images(const std::string& dataset, const std::string& folder) {
  using data::Compose, data::Normalize, data::Pad, data::RandomCrop, data::RandomHorizontalFlip;
  if (dataset == "mnist") {
    data::Transform normalize = Normalize({0.1307}, {0.3081});
    data::Transform train = Compose({Pad(2), RandomCrop(32, 2), normalize});
    data::Transform test = Compose({Pad(2), normalize});
    return {"MNIST digits", std::make_shared<data::MNIST>(folder, true, train),
            std::make_shared<data::MNIST>(folder, false, test), 1};
  }
  data::Transform normalize = Normalize({0.4914, 0.4822, 0.4465}, {0.2470, 0.2435, 0.2616});
  data::Transform train = Compose({RandomCrop(32, 4), RandomHorizontalFlip(), normalize});
  return {"CIFAR-10 images", std::make_shared<data::CIFAR10>(folder, true, train),
          std::make_shared<data::CIFAR10>(folder, false, normalize), 3};
}

std::shared_ptr<nn::Module> make_resnet(const std::string& name, int64_t channels) {
  if (name == "resnet20") return models::resnet20(10, channels);
  if (name == "resnet32") return models::resnet32(10, channels);
  if (name == "resnet56") return models::resnet56(10, channels);
  throw std::invalid_argument(
      "[train_resnet] --model must be resnet20, resnet32 or resnet56; got '" + name + "'");
}

}  // namespace

int main(int argc, char** argv) try {
  examples::Flags flags("train_resnet",
                        "Train a CIFAR-style ResNet on MNIST or CIFAR-10 with wick.");
  flags.add("model", "resnet20", "resnet20, resnet32 or resnet56 (He et al. 2016, CIFAR layout)")
      .add("data", "",
           "folder with the CIFAR-10 binary files; empty: the MNIST digits in assets/mnist")
      .add("momentum", "0.9", "SGD momentum")
      .add("weight-decay", "0.0005", "SGD weight decay (L2)");
  examples::add_training_flags(flags, {"3", "64", "0.1", "runs/resnet_metrics.csv"});
  if (!examples::parse_training_flags(flags, argc, argv)) return 0;
  examples::Trainer trainer("train_resnet", flags);
  const std::string dataset = flags.has("data") ? "cifar10" : "mnist";
  const std::string folder = flags.has("data") ? flags.str("data") : "assets/mnist";
  const int64_t batch_size = flags.integer("batch-size");

  // The order of random draws - model, then the training and test loaders' seeds - is the Python
  // twin's, so the two start from the same weights and batches.
  Images images = load_images(dataset, folder);
  manual_seed(static_cast<uint64_t>(flags.integer("seed")));
  std::shared_ptr<nn::Module> model = make_resnet(flags.str("model"), images.channels);
  if (trainer.device().is_cuda()) model->to(trainer.device());
  optim::SGDOptions sgd;
  sgd.lr = flags.real("lr", 0);
  sgd.momentum = flags.real("momentum", 0);
  sgd.weight_decay = flags.real("weight-decay", 0);
  optim::SGD optimizer(model->parameters(), sgd);
  data::DataLoader train_loader(images.train, trainer.train_loader_options(images.train->size()));
  // Cosine over every step of the run, not per epoch: a short run still ends near zero.
  optim::CosineAnnealingLR schedule(
      optimizer, flags.integer("epochs") * trainer.optimizer_steps(train_loader.size()));
  data::DataLoader test_loader(images.test, trainer.test_loader_options(500));
  examples::require_batches("train_resnet", "the training set in " + folder, images.train->size(),
                            batch_size, train_loader.size());
  examples::require_batches("train_resnet", "the test set in " + folder, images.test->size(), 500,
                            test_loader.size());
  std::printf("%s from %s; SGD lr %g momentum %g weight decay %g, cosine over %lld epochs\n",
              images.name.c_str(), folder.c_str(), sgd.lr, sgd.momentum, sgd.weight_decay,
              static_cast<long long>(flags.integer("epochs")));
  trainer.fit(model, optimizer, &schedule, train_loader, test_loader, flags.str("model"));
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 2;
}
