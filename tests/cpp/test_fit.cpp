// KerasModel (nn/fit.h) and its callbacks (nn/callbacks.h): fit converges and matches the
// hand-written loop exactly, each callback does what Keras's does, and bad arguments raise
// errors that name the method.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "core/generator.h"
#include "data/data.h"
#include "nn/callbacks.h"
#include "nn/containers.h"
#include "nn/fit.h"
#include "nn/functional.h"
#include "nn/layers.h"
#include "nn/serialization.h"
#include "tests/cpp/test_util.h"

namespace wick::nn {
namespace {

using wick::testing::expect_error;
namespace fs = std::filesystem;

// Two classes on either side of the line x0 + x1 = 0.
struct Separable {
  Tensor x, y;
  explicit Separable(int64_t n = 256, uint64_t seed = 3) {
    Generator g(seed);
    x = randn({n, 2}, {}, g);
    y = (x.select(1, 0) + x.select(1, 1) > 0).to(kInt64);
  }
};

std::shared_ptr<Sequential> make_net(uint64_t seed = 0) {
  manual_seed(seed);
  return std::make_shared<Sequential>(std::vector<std::shared_ptr<Module>>{
      std::make_shared<Linear>(2, 16), std::make_shared<ReLU>(), std::make_shared<Linear>(16, 2)});
}

// A folder of its own per test, removed at the end.
struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& name)
      : path(fs::temp_directory_path() / ("wick_fit_" + std::to_string(::getpid()) + "_" + name)) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

// Puts a scripted value into the logs at the end of each epoch (a metric whose course the test
// decides), and records the first weight then.
class Script : public Callback {
 public:
  explicit Script(std::vector<double> values) : values_(std::move(values)) {}
  void on_epoch_end(KerasModel& model, int64_t epoch, Logs& logs) override {
    logs["score"] = values_.at(epoch);
    weights.push_back(model.module().parameters()[0].clone());
  }
  std::vector<Tensor> weights;

 private:
  std::vector<double> values_;
};

TEST(Fit, ConvergesOnSeparableData) {
  Separable data;
  KerasModel model(make_net());
  model.compile("adam", "cross_entropy", {"accuracy"});
  History history = model.fit(Batches(data.x, data.y, 16), 20, Batches(data.x, data.y, 64), {}, 0);
  ASSERT_EQ(history.epoch.size(), 20u);
  EXPECT_EQ(history.epoch.front(), 0);
  for (const char* key : {"loss", "accuracy", "val_loss", "val_accuracy"}) {
    EXPECT_EQ(history.history[key].size(), 20u) << key;
  }
  EXPECT_LT(history.history["loss"].back(), history.history["loss"].front());
  Logs test = model.evaluate(Batches(data.x, data.y, 64), 0);
  EXPECT_GE(test.at("accuracy"), 0.95);
  EXPECT_DOUBLE_EQ(test.at("loss"), history.history["val_loss"].back());
  Tensor scores = model.predict(data.x, 50);
  EXPECT_EQ(scores.shape(), (Shape{256, 2}));
  EXPECT_TRUE(model.module().is_training());  // evaluate and predict restore the mode
}

TEST(Fit, OneEpochEqualsTheHandWrittenLoop) {
  Separable data(96);
  auto fitted = make_net(7), by_hand = make_net(7);
  KerasModel model(fitted);
  optim::SGDOptions sgd;
  sgd.lr = 0.1, sgd.momentum = 0.9;
  model.compile(std::make_shared<optim::SGD>(fitted->parameters(), sgd), "cross_entropy");
  History history = model.fit(Batches(data.x, data.y, 32), 1, std::nullopt, {}, 0);

  optim::SGD optimizer(by_hand->parameters(), sgd);
  double loss_sum = 0;
  for (int64_t start = 0; start < 96; start += 32) {
    Tensor loss =
        F::cross_entropy((*by_hand)(data.x.narrow(0, start, 32)), data.y.narrow(0, start, 32));
    optimizer.zero_grad();
    loss.backward();
    optimizer.step();
    loss_sum += loss.item<double>() * 32;
  }
  std::vector<Tensor> a = fitted->parameters(), b = by_hand->parameters();
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(equal(a[i], b[i])) << "parameter " << i;
  EXPECT_DOUBLE_EQ(history.history["loss"][0], loss_sum / 96);
}

TEST(Fit, TakesADataLoader) {
  Separable data;
  auto dataset = std::make_shared<data::TensorDataset>(data.x, data.y);
  data::DataLoaderOptions options;
  options.batch_size = 32, options.shuffle = true;
  data::DataLoader train(dataset, options);
  options.shuffle = false;
  data::DataLoader test(dataset, options);
  KerasModel model(make_net());
  model.compile("adam", "cross_entropy", {"accuracy", "acc"});
  History history = model.fit(train, 3, test, {}, 0);
  EXPECT_EQ(history.history["val_acc"], history.history["val_accuracy"]);
  EXPECT_EQ(model.predict(test).shape(), (Shape{256, 2}));
}

TEST(Fit, EarlyStoppingStopsAfterPatienceEpochsWithoutImprovement) {
  Separable data(64);
  KerasModel model(make_net());
  model.compile("sgd", "cross_entropy");
  // Best at epoch 2 (0.5); epochs 3 and 4 are no better by more than min_delta 0.05.
  auto script = std::make_shared<Script>(std::vector<double>{1.0, 0.8, 0.5, 0.46, 0.6, 0.1, 0.1});
  auto stop = std::make_shared<EarlyStopping>("score", 2, 0.05, "min", true);
  History history = model.fit(Batches(data.x, data.y, 32), 7, std::nullopt, {script, stop}, 0);
  EXPECT_EQ(history.epoch, (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(stop->stopped_epoch(), 4);
  EXPECT_EQ(stop->best_epoch(), 2);
  EXPECT_TRUE(equal(model.module().parameters()[0], script->weights[2]));  // restored
  EXPECT_FALSE(equal(script->weights[4], script->weights[2]));
}

TEST(Fit, EarlyStoppingModeAutoMaximizesAccuracy) {
  Separable data(64);
  KerasModel model(make_net());
  model.compile("sgd", "cross_entropy", {"accuracy"});
  auto stop = std::make_shared<EarlyStopping>("val_accuracy", 0);
  model.fit(Batches(data.x, data.y, 32), 3, Batches(data.x, data.y, 64), {stop}, 0);
  EXPECT_GE(stop->best(), 0.0);
  expect_error<std::invalid_argument>([] { EarlyStopping("loss", 1, 0, "lowest"); },
                                      "mode must be 'auto', 'min' or 'max'");
  expect_error<std::invalid_argument>([] { EarlyStopping("loss", -1); }, "patience must be >= 0");
}

TEST(Fit, ModelCheckpointSavesOnlyImprovements) {
  TempDir dir("checkpoint");
  Separable data(64);
  KerasModel model(make_net());
  model.compile("sgd", "cross_entropy");
  auto script = std::make_shared<Script>(std::vector<double>{0.9, 0.95, 0.7, 0.8});
  std::string pattern = (dir.path / "ckpt-{epoch:02d}-{score:.2f}.safetensors").string();
  auto best = std::make_shared<ModelCheckpoint>(pattern, "score", true);
  auto every = std::make_shared<ModelCheckpoint>((dir.path / "all-{epoch}.st").string(), "score");
  model.fit(Batches(data.x, data.y, 32), 4, std::nullopt, {script, best, every}, 0);
  EXPECT_TRUE(fs::exists(dir.path / "ckpt-01-0.90.safetensors"));
  EXPECT_FALSE(fs::exists(dir.path / "ckpt-02-0.95.safetensors"));
  EXPECT_TRUE(fs::exists(dir.path / "ckpt-03-0.70.safetensors"));
  EXPECT_FALSE(fs::exists(dir.path / "ckpt-04-0.80.safetensors"));
  for (int e = 1; e <= 4; ++e)
    EXPECT_TRUE(fs::exists(dir.path / ("all-" + std::to_string(e) + ".st")));
  // The file holds the weights of its epoch.
  StateDict saved = load_safetensors((dir.path / "ckpt-03-0.70.safetensors").string()).tensors;
  EXPECT_TRUE(equal(saved.at("0.weight"), script->weights[2]));

  ModelCheckpoint formats("run/{epoch:03d}_{loss:.1f}_{{x}}");
  EXPECT_EQ(formats.path_for(4, {{"loss", 0.25}}), "run/005_0.2_{x}");
  expect_error<std::invalid_argument>([&] { formats.path_for(0, {}); },
                                      "'loss' is neither epoch nor a log");
  expect_error<std::invalid_argument>([] { ModelCheckpoint("{epoch:s}").path_for(0, {}); },
                                      "is not d");
}

TEST(Fit, ModelCheckpointWritesATrainingCheckpoint) {
  TempDir dir("full");
  Separable data(64);
  auto net = make_net();
  KerasModel model(net);
  model.compile("adam", "cross_entropy");
  std::string path = (dir.path / "train.safetensors").string();
  model.fit(Batches(data.x, data.y, 32), 2, std::nullopt,
            {std::make_shared<ModelCheckpoint>(path, "loss", false, false)}, 0);
  auto other = make_net(9);
  optim::Adam adam(other->parameters(), optim::AdamOptions{});
  TrainingState state = load_checkpoint(path, *other, adam, nullptr);
  EXPECT_EQ(state.epoch, 2);
  EXPECT_TRUE(equal(other->parameters()[0], net->parameters()[0]));
}

TEST(Fit, CSVLoggerWritesKerasColumns) {
  TempDir dir("csv");
  Separable data(64);
  KerasModel model(make_net());
  model.compile("sgd", "cross_entropy", {"accuracy"});
  std::string path = (dir.path / "logs" / "log.csv").string();
  History history = model.fit(Batches(data.x, data.y, 32), 3, Batches(data.x, data.y, 64),
                              {std::make_shared<CSVLogger>(path)}, 0);
  std::ifstream in(path);
  std::string header, line;
  std::getline(in, header);
  EXPECT_EQ(header, "epoch,accuracy,loss,val_accuracy,val_loss");
  for (int e = 0; e < 3; ++e) {
    ASSERT_TRUE(std::getline(in, line));
    std::stringstream row(line);
    std::string cell;
    std::getline(row, cell, ',');
    EXPECT_EQ(cell, std::to_string(e));
    std::getline(row, cell, ',');
    EXPECT_EQ(std::stod(cell), history.history["accuracy"][e]);  // exact: shortest round trip
    std::getline(row, cell, ',');
    EXPECT_EQ(std::stod(cell), history.history["loss"][e]);
  }
  EXPECT_FALSE(std::getline(in, line));
}

TEST(Fit, LearningRateSchedules) {
  Separable data(64);
  KerasModel model(make_net());
  model.compile("sgd", "cross_entropy");
  auto halve = std::make_shared<LearningRateScheduler>(
      [](int64_t epoch, double lr) { return epoch == 0 ? 0.2 : lr / 2; });
  History history = model.fit(Batches(data.x, data.y, 32), 3, std::nullopt, {halve}, 0);
  EXPECT_EQ(history.history["learning_rate"], (std::vector<double>{0.2, 0.1, 0.05}));
  EXPECT_EQ(model.optimizer().param_groups()[0].options.at("lr"), 0.05);

  KerasModel stepped(make_net());
  auto sgd = std::make_shared<optim::SGD>(stepped.module().parameters(), optim::SGDOptions{});
  stepped.compile(sgd, "cross_entropy");
  auto step = std::make_shared<optim::StepLR>(*sgd, 2, 0.1);
  history = stepped.fit(Batches(data.x, data.y, 32), 4, std::nullopt,
                        {std::make_shared<LearningRateScheduler>(step)}, 0);
  std::vector<double> lr = history.history["learning_rate"];
  ASSERT_EQ(lr.size(), 4u);
  EXPECT_DOUBLE_EQ(lr[0], 0.01);
  EXPECT_DOUBLE_EQ(lr[1], 0.01);
  EXPECT_NEAR(lr[2], 0.001, 1e-12);
  EXPECT_NEAR(lr[3], 0.001, 1e-12);

  auto negative = std::make_shared<LearningRateScheduler>([](int64_t, double) { return -1.0; });
  expect_error<std::invalid_argument>(
      [&] { model.fit(Batches(data.x, data.y, 32), 1, std::nullopt, {negative}, 0); },
      "must be finite and >= 0");
}

TEST(Fit, CustomLossAndMetric) {
  Separable data(64);
  KerasModel model(make_net());
  int calls = 0;
  model.compile(
      "adam",
      [&](const Tensor& out, const Tensor& target) {
        ++calls;
        return F::cross_entropy(out, target);
      },
      {Metric("first_label", [](const Tensor&, const Tensor& t) { return t[0].item<double>(); })});
  History history = model.fit(Batches(data.x, data.y, 64), 2, std::nullopt, {}, 0);
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(history.history["first_label"][0], data.y[0].item<double>());
}

TEST(Fit, BadArguments) {
  Separable data(64);
  Batches batches(data.x, data.y, 32);
  KerasModel model(make_net());
  expect_error<std::runtime_error>([&] { model.fit(batches); },
                                   "[KerasModel.fit] the model must be compiled before fit()");
  expect_error<std::runtime_error>([&] { model.evaluate(batches); }, "compiled before evaluate()");
  expect_error<std::invalid_argument>([&] { model.compile("adam", "hinge"); },
                                      "unknown loss 'hinge'; expected one of cross_entropy");
  expect_error<std::invalid_argument>([&] { model.compile("adam", "mse", {"f1"}); },
                                      "unknown metric 'f1'");
  expect_error<std::invalid_argument>([&] { model.compile("rmsprop", "mse"); },
                                      "unknown optimizer 'rmsprop'; expected adam, adamw, sgd");
  expect_error<std::invalid_argument>(
      [&] {
        model.compile("adam", "mse", {"accuracy", "accuracy"});
      },
      "two metrics are named 'accuracy'");
  expect_error<std::invalid_argument>([] { KerasModel(nullptr); }, "the module is null");
  model.compile("adam", "cross_entropy");
  expect_error<std::invalid_argument>([&] { model.fit(batches, 0); }, "epochs must be >= 1; got 0");
  expect_error<std::invalid_argument>([&] { model.fit(batches, 1, std::nullopt, {nullptr}); },
                                      "callback 0 is null");
  expect_error<std::invalid_argument>([&] { Batches(data.x, data.y.narrow(0, 0, 10)); },
                                      "same number of examples");
  expect_error<std::invalid_argument>([&] { Batches(data.x, data.y, 0); },
                                      "batch_size must be >= 1");
  std::vector<data::Batch> nothing;
  expect_error<std::invalid_argument>([&] { model.fit(nothing, 1, std::nullopt, {}, 0); },
                                      "yielded no batches in epoch 1");
  model.compile("adam", [](const Tensor& o, const Tensor& t) {
    return F::cross_entropy(o, t, {-100, F::Reduction::None, 0.0});
  });
  expect_error<std::invalid_argument>([&] { model.fit(batches, 1, std::nullopt, {}, 0); },
                                      "the loss must be a one-element Tensor");
}

}  // namespace
}  // namespace wick::nn
