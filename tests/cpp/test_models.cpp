// wick::models: torchvision's ResNet-18/34/50 have its parameter counts and state_dict keys (the
// Python twin, tests/python/test_models.py, loads torchvision's weights and compares logits);
// the CIFAR ResNets have the paper's depth, size and parameter-free shortcuts, and learn.
#include "nn/functional.h"
#include "nn/models/resnet.h"
#include "nn/optim.h"
#include "tests/cpp/test_util.h"

namespace wick::models {
namespace {

int64_t count(const nn::Module& model) {
  int64_t total = 0;
  for (const Tensor& p : model.parameters()) total += p.numel();
  return total;
}

TEST(Models, ImageNetResNetsHaveTorchvisionsSizeAndNames) {
  // torchvision.models.resnet18/34/50(weights=None): 11,689,512 / 21,797,672 / 25,557,032.
  EXPECT_EQ(count(*resnet18()), 11689512);
  EXPECT_EQ(count(*resnet34()), 21797672);
  auto r50 = resnet50();
  EXPECT_EQ(count(*r50), 25557032);
  StateDict state = r50->state_dict();
  for (const char* key : {"conv1.weight", "bn1.running_mean", "bn1.num_batches_tracked",
                          "layer1.0.downsample.0.weight", "layer1.0.downsample.1.bias",
                          "layer4.2.conv3.weight", "layer4.2.bn3.running_var", "fc.weight"}) {
    EXPECT_TRUE(state.count(key)) << key;
  }
  EXPECT_EQ(state.size(), 320u);  // len(torchvision.models.resnet50().state_dict())
  EXPECT_EQ(resnet18()->state_dict().size(), 122u);
}

TEST(Models, ImageNetResNetForwardShapesAndInChannels) {
  auto model = resnet18(/*num_classes=*/5, /*in_channels=*/1);
  model->eval();
  Tensor out = (*model)(randn({2, 1, 64, 64}));
  EXPECT_EQ(out.shape(), (Shape{2, 5}));
}

TEST(Models, CifarResNetsHaveThePapersDepthAndSize) {
  struct Case {
    std::shared_ptr<CifarResNet> model;
    int64_t depth, params;
  };
  for (const Case& c :
       {Case{resnet20(), 20, 269722}, Case{resnet32(), 32, 464154}, Case{resnet56(), 56, 853018}}) {
    int64_t weighted = 0;
    for (auto& [name, module] : c.model->named_modules()) {
      if (dynamic_cast<nn::Conv2d*>(module) || dynamic_cast<nn::Linear*>(module)) ++weighted;
    }
    EXPECT_EQ(weighted, c.depth);
    EXPECT_EQ(count(*c.model), c.params);
  }
}

TEST(Models, ZeroPadShortcutSubsamplesAndPadsChannels) {
  Tensor x = randn({2, 16, 8, 8});
  Tensor y = ZeroPadShortcut(2, 16)(x);
  EXPECT_EQ(y.shape(), (Shape{2, 32, 4, 4}));
  testing::expect_close(y.slice(1, 8, 24), x.slice(2, 0, 8, 2).slice(3, 0, 8, 2), 0, 0);
  EXPECT_EQ(y.slice(1, 0, 8).abs().sum().item<double>(), 0.0);
  EXPECT_EQ(y.slice(1, 24, 32).abs().sum().item<double>(), 0.0);
}

TEST(Models, CifarResNetLearnsASmallBatch) {
  manual_seed(0);
  auto model = resnet20(/*num_classes=*/4, /*in_channels=*/1);
  Tensor x = randn({16, 1, 32, 32}), y = randint(0, 4, {16});
  optim::SGD opt(model->parameters(), optim::SGDOptions{0.05, 0.9});
  double first = 0, last = 0;
  for (int step = 0; step < 15; ++step) {
    Tensor loss = nn::functional::cross_entropy((*model)(x), y);
    opt.zero_grad();
    loss.backward();
    opt.step();
    (step == 0 ? first : last) = loss.item<double>();
  }
  EXPECT_LT(last, 0.5 * first);
}

// With one seed, wick::models and wick.models draw the same weights: the sums below are the
// Python model's (tests/python/test_models.py checks the same numbers), so a train_resnet written
// twice starts from one network.
TEST(Models, SameSeedSameWeightsAsThePythonTwin) {
  manual_seed(0);
  auto model = resnet20();
  double sum = 0, squares = 0;
  for (const Tensor& p : model->parameters()) {
    Tensor d = p.to(kFloat64);
    sum += d.sum().item<double>();
    squares += (d * d).sum().item<double>();
  }
  // Tolerances allow for a last-bit difference in a transcendental function across builds; a
  // different draw would move these sums by whole units.
  EXPECT_NEAR(sum, 699.0178180569837, 1e-6);
  EXPECT_NEAR(squares, 1955.0462610848028, 1e-6);
  EXPECT_NEAR(model->conv1->weight.to(kFloat64).sum().item<double>(), -1.9191569947870448, 1e-9);
}

TEST(Models, BadArgumentsNameTheModel) {
  testing::expect_error<std::invalid_argument>([] { CifarResNet(0); }, "CifarResNet");
  testing::expect_error<std::invalid_argument>(
      [] {
        ResNet(BlockKind::Basic, {2, 2, 2});
      },
      "layers must list 4 stage depths; got 3");
}

}  // namespace
}  // namespace wick::models
