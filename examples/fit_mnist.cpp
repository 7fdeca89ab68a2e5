// The classic CNN on MNIST digits with the Keras-style loop of nn/fit.h: the training loop of
// examples/train_mnist.cpp (progress lines, validation each epoch, a metrics CSV) in a dozen lines.
//
//   ./build/examples/fit_mnist [EPOCHS]        (3 by default; run from the repository root)
//
// It reads the 10,000-digit subset in assets/mnist (8,000 training and 2,000 test digits).
#include "examples/common/cli.h"
#include "examples/mnist_models.h"
#include "wick.h"

using namespace wick;

int main(int argc, char** argv) try {
  int64_t epochs = argc > 1 ? examples::parse_integer("fit_mnist", "EPOCHS", argv[1], 1) : 3;
  manual_seed(0);
  data::Transform normalize = data::Normalize({0.1307}, {0.3081});
  data::DataLoaderOptions options;
  options.batch_size = 64, options.shuffle = true, options.num_workers = 2;
  data::DataLoader train(std::make_shared<data::MNIST>("assets/mnist", true, normalize), options);
  options.batch_size = 500, options.shuffle = false;
  data::DataLoader test(std::make_shared<data::MNIST>("assets/mnist", false, normalize), options);

  nn::KerasModel model(examples::make_mnist_model("cnn"));
  model.compile("adam", "cross_entropy", {"accuracy"});
  model.fit(train, epochs, test, {std::make_shared<nn::CSVLogger>("runs/fit_mnist.csv")});
  std::printf("test accuracy: %.2f%%\n", 100 * model.evaluate(test, 0).at("accuracy"));
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return examples::exit_status(e);
}
