// The small model, optimizer and schedule both checkpoint harnesses resume into, and the
// training step that follows a resume (the step is where bad optimizer state used to crash).
#pragma once

#include <memory>

#include "core/generator.h"
#include "core/ops.h"
#include "nn/checkpoint.h"
#include "nn/containers.h"
#include "nn/functional.h"
#include "nn/layers.h"

namespace wick::fuzz {

struct Training {
  std::shared_ptr<nn::Sequential> model;
  std::unique_ptr<optim::Optimizer> optimizer;
  std::unique_ptr<optim::StepLR> scheduler;

  // kind 0: SGD with momentum, 1: Adam, 2: AdamW; each has per-parameter state to resume.
  explicit Training(int kind) {
    manual_seed(1);
    model = std::make_shared<nn::Sequential>(std::vector<std::shared_ptr<nn::Module>>{
        std::make_shared<nn::Linear>(3, 4), std::make_shared<nn::ReLU>(),
        std::make_shared<nn::Linear>(4, 2)});
    if (kind == 0) {
      optim::SGDOptions o;
      o.lr = 0.1, o.momentum = 0.9;
      optimizer = std::make_unique<optim::SGD>(model->parameters(), o);
    } else if (kind == 1) {
      optimizer = std::make_unique<optim::Adam>(model->parameters(), optim::AdamOptions{0.01});
    } else {
      optimizer = std::make_unique<optim::AdamW>(model->parameters());
    }
    scheduler = std::make_unique<optim::StepLR>(*optimizer, 1, 0.5);
  }

  // One optimizer step on fixed data; returns the loss before the step.
  double step() {
    Generator data(7);
    Tensor x = randn({5, 3}, {}, data);
    Tensor y = randint(0, 2, {5}, {}, data);
    Tensor loss = nn::F::cross_entropy((*model)(x), y);
    optimizer->zero_grad();
    loss.backward();
    optimizer->step();
    scheduler->step();
    return loss.item<double>();
  }
};

}  // namespace wick::fuzz
