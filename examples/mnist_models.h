// The two MNIST models of the examples and benchmarks.
//   mlp: flatten, 784 -> 256, ReLU, 256 -> 10
//   cnn: the classic network - conv 1->32 3x3, ReLU, conv 32->64 3x3, ReLU, max-pool 2,
//        dropout 0.25, flatten, 9216 -> 128, ReLU, 128 -> 10
#pragma once

#include <memory>
#include <stdexcept>
#include <string>

#include "nn/containers.h"
#include "nn/layers.h"

namespace wick::examples {

inline std::shared_ptr<nn::Module> make_mnist_model(const std::string& name) {
  using std::make_shared;
  if (name == "mlp") {
    return make_shared<nn::Sequential>(std::vector<std::shared_ptr<nn::Module>>{
        make_shared<nn::Flatten>(), make_shared<nn::Linear>(784, 256), make_shared<nn::ReLU>(),
        make_shared<nn::Linear>(256, 10)});
  }
  if (name == "cnn") {
    return make_shared<nn::Sequential>(std::vector<std::shared_ptr<nn::Module>>{
        make_shared<nn::Conv2d>(1, 32, 3), make_shared<nn::ReLU>(),
        make_shared<nn::Conv2d>(32, 64, 3), make_shared<nn::ReLU>(), make_shared<nn::MaxPool2d>(2),
        make_shared<nn::Dropout>(0.25), make_shared<nn::Flatten>(),
        make_shared<nn::Linear>(9216, 128), make_shared<nn::ReLU>(),
        make_shared<nn::Linear>(128, 10)});
  }
  throw std::invalid_argument("[mnist] --model must be mlp or cnn; got '" + name + "'");
}

}  // namespace wick::examples
