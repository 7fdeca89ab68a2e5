// Runs a ResNet from C++ on weights trained elsewhere: a state_dict saved as safetensors - from
// wick (wick.save(model.state_dict(), f)) or from PyTorch/torchvision (safetensors.torch, or
// wick.save of the torch tensors' values) - loads into wick::models, whose names are torchvision's,
// and the images in a second safetensors file (tensor "input", [N, C, H, W] float32) are
// classified. Prints the top class of each image and, with --json 1, the logits as one JSON line.
//
//   ./build/examples/classify_resnet --weights resnet18.safetensors --input images.safetensors
//
// tests/python/test_models.py runs it on torchvision's ResNet-18 weights and compares the logits
// with torchvision's.
#include <cstdio>

#include "examples/common/cli.h"
#include "nn/models/resnet.h"
#include "nn/serialization.h"
#include "wick.h"

using namespace wick;

int main(int argc, char** argv) try {
  examples::Flags flags("classify_resnet",
                        "Classify images with a ResNet whose weights come from a safetensors "
                        "state_dict (torchvision's names).");
  flags.add("model", "resnet18", "resnet18, resnet34, resnet50 (ImageNet) or resnet20 (CIFAR)")
      .add("weights", "", "the state_dict, as a safetensors file")
      .add("input", "", "a safetensors file whose tensor \"input\" holds the images")
      .add("classes", "1000", "the number of classes the weights were trained for")
      .add("json", "0", "1: also print the logits as one JSON line");
  if (!flags.parse(argc, argv)) return 0;
  check_value(flags.has("weights") && flags.has("input"), "classify_resnet",
              "--weights and --input are required");
  const std::string name = flags.str("model");
  const int64_t classes = flags.integer("classes", 1);
  std::shared_ptr<nn::Module> model;
  if (name == "resnet18") model = models::resnet18(classes);
  if (name == "resnet34") model = models::resnet34(classes);
  if (name == "resnet50") model = models::resnet50(classes);
  if (name == "resnet20") model = models::resnet20(classes);
  check_value(model != nullptr, "classify_resnet",
              "--model must be resnet18, resnet34, resnet50 or resnet20; got '", name, "'");
  model->load_state_dict(load_safetensors(flags.str("weights")).tensors);  // strict: names match
  model->eval();

  StateDict images = load_safetensors(flags.str("input")).tensors;
  check_value(images.count("input") == 1, "classify_resnet", flags.str("input"),
              " has no tensor named \"input\"");
  NoGradGuard no_grad;
  Tensor logits = (*model)(images.at("input").to(kFloat32));
  Tensor top = logits.argmax(1);
  for (int64_t i = 0; i < logits.size(0); ++i) {
    std::printf("image %lld: class %lld\n", static_cast<long long>(i),
                static_cast<long long>(top.select(0, i).item<int64_t>()));
  }
  if (flags.integer("json") != 0) {
    std::vector<float> values = logits.contiguous().to_vector<float>();
    std::printf("{\"shape\": [%lld, %lld], \"logits\": [", static_cast<long long>(logits.size(0)),
                static_cast<long long>(logits.size(1)));
    for (size_t i = 0; i < values.size(); ++i) std::printf("%s%.9g", i ? ", " : "", values[i]);
    std::printf("]}\n");
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return examples::exit_status(e);
}
