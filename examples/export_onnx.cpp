// Writes a wick model from C++ as an ONNX file (wick::jit::export_onnx, the exporter behind
// wick.onnx.export), so that ONNX Runtime, TensorRT or any ONNX consumer can run it. Also writes,
// beside it, a sample batch and wick's outputs on it (safetensors: "input", "output"), so whoever
// runs the file can check it gives the same numbers.
//
//   ./build/examples/export_onnx --model resnet20 --out /tmp/resnet20.onnx
//   ./build/examples/export_onnx --model cnn --weights cnn.safetensors --out cnn.onnx
//
// tests/python/test_onnx_export.py runs it for the MLP, the CNN, ResNet-20 and ResNet-18 and
// compares ONNX Runtime's outputs with wick's. Without --weights the model keeps its seeded random
// initialisation (nothing is downloaded).
#include <cstdio>
#include <map>

#include "examples/common/cli.h"
#include "examples/mnist_models.h"
#include "jit/onnx_export.h"
#include "nn/models/resnet.h"
#include "nn/serialization.h"
#include "wick.h"

using namespace wick;

namespace {

struct Choice {
  std::shared_ptr<nn::Module> model;
  Shape input;  // one sample
};

Choice make_model(const std::string& name) {
  if (name == "mlp" || name == "cnn") return {examples::make_mnist_model(name), {1, 28, 28}};
  if (name == "resnet20") return {models::resnet20(), {3, 32, 32}};
  if (name == "resnet18") return {models::resnet18(), {3, 224, 224}};
  throw std::invalid_argument(
      "[export_onnx] --model must be mlp, cnn, resnet20 or resnet18; got '" + name + "'");
}

}  // namespace

int main(int argc, char** argv) try {
  examples::Flags flags("export_onnx",
                        "Write a wick model as an ONNX file (opset 17, dynamic batch), with a "
                        "sample input and wick's output beside it.");
  flags.add("model", "resnet20", "mlp, cnn (MNIST), resnet20 (CIFAR) or resnet18 (ImageNet)")
      .add("weights", "", "a safetensors state_dict to load first (default: seeded random)")
      .add("out", "model.onnx", "the ONNX file to write")
      .add("batch", "2", "the sample batch (the exported batch axis takes any size)")
      .add("size", "0", "the image side for resnet18 (0: 224)")
      .add("fold", "1", "1: fold batch norm and constants into the weights; 0: keep them");
  if (!flags.parse(argc, argv)) return 0;
  manual_seed(0);
  Choice choice = make_model(flags.str("model"));
  if (flags.has("weights"))
    choice.model->load_state_dict(load_safetensors(flags.str("weights")).tensors);
  if (flags.str("model") == "resnet18" && flags.integer("size", 0) > 0) {
    int64_t side = flags.integer("size", 8);
    choice.input = {choice.input[0], side, side};
  }
  std::vector<int64_t> shape{flags.integer("batch", 1)};
  for (int64_t d : choice.input) shape.push_back(d);
  Tensor x = randn(Shape(shape));

  jit::OnnxExportOptions options;
  options.constant_folding = flags.integer("fold", 0, 1) != 0;
  const std::string path = flags.str("out");
  jit::export_onnx(*choice.model, {x}, path, options);

  choice.model->eval();
  NoGradGuard no_grad;
  Tensor y = (*choice.model)(x);
  std::string sample = path + ".sample.safetensors";
  save_safetensors(sample, StateDict{{"input", x}, {"output", y}});
  std::printf("wrote %s (%s, input [batch, %lld, %lld, %lld]) and %s\n", path.c_str(),
              flags.str("model").c_str(), static_cast<long long>(choice.input[0]),
              static_cast<long long>(choice.input[1]), static_cast<long long>(choice.input[2]),
              sample.c_str());
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return examples::exit_status(e);
}
