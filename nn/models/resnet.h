// Residual networks (He et al., 2016) in C++, the twins of wick.models (python/wick/models/):
// torchvision's ImageNet ResNet-18/34/50, with its submodule names, so its state_dict keys are
// torchvision's (conv1, bn1, layer1.0.conv1, layer2.0.downsample.0, ..., fc), and the CIFAR
// ResNet-20/32/56 of the paper's section 4.2 (three stages of 16/32/64 channels, parameter-free
// "option A" shortcuts: a stride-2 subsample padded with zero channels).
#pragma once

#include <memory>
#include <vector>

#include "nn/containers.h"
#include "nn/layers.h"

namespace wick::models {

// Two 3x3 convolutions with batch norm; `downsample` (may be null) maps the input to the
// output's shape for the residual sum.
class BasicBlock : public nn::Module {
 public:
  static constexpr int64_t kExpansion = 1;
  BasicBlock(int64_t inplanes, int64_t planes, int64_t stride = 1,
             std::shared_ptr<nn::Module> downsample = nullptr);
  Tensor forward(const Tensor& x) override;

  std::shared_ptr<nn::Conv2d> conv1, conv2;
  std::shared_ptr<nn::BatchNorm2d> bn1, bn2;
  std::shared_ptr<nn::Module> downsample;
};

// 1x1 to `planes`, 3x3 carrying the stride (torchvision's "V1.5"), 1x1 to planes * 4.
class Bottleneck : public nn::Module {
 public:
  static constexpr int64_t kExpansion = 4;
  Bottleneck(int64_t inplanes, int64_t planes, int64_t stride = 1,
             std::shared_ptr<nn::Module> downsample = nullptr);
  Tensor forward(const Tensor& x) override;

  std::shared_ptr<nn::Conv2d> conv1, conv2, conv3;
  std::shared_ptr<nn::BatchNorm2d> bn1, bn2, bn3;
  std::shared_ptr<nn::Module> downsample;
};

enum class BlockKind { Basic, Bottleneck };

// torchvision.models.ResNet: a 7x7 stride-2 stem and max pool, four stages of `layers[i]` blocks
// at 64/128/256/512 planes, global average pooling and a linear classifier. Convolutions are
// He-normal (fan_out), batch norms 1 and 0, as torchvision initialises them.
class ResNet : public nn::Module {
 public:
  ResNet(BlockKind block, const std::vector<int64_t>& layers, int64_t num_classes = 1000,
         bool zero_init_residual = false, int64_t in_channels = 3);
  Tensor forward(const Tensor& x) override;

  std::shared_ptr<nn::Conv2d> conv1;
  std::shared_ptr<nn::BatchNorm2d> bn1;
  std::shared_ptr<nn::MaxPool2d> maxpool;
  std::shared_ptr<nn::Sequential> layer1, layer2, layer3, layer4;
  std::shared_ptr<nn::AdaptiveAvgPool2d> avgpool;
  std::shared_ptr<nn::Linear> fc;
};

std::shared_ptr<ResNet> resnet18(int64_t num_classes = 1000, int64_t in_channels = 3);
std::shared_ptr<ResNet> resnet34(int64_t num_classes = 1000, int64_t in_channels = 3);
std::shared_ptr<ResNet> resnet50(int64_t num_classes = 1000, int64_t in_channels = 3);

// The option-A shortcut: x[:, :, ::stride, ::stride] with extra_channels zero channels around it
// (half before, half after). No parameters.
class ZeroPadShortcut : public nn::Module {
 public:
  ZeroPadShortcut(int64_t stride, int64_t extra_channels);
  Tensor forward(const Tensor& x) override;

 private:
  int64_t stride_, extra_channels_;
};

// 6n + 2 layers for 32x32 inputs, n = blocks_per_stage: ResNet-20, -32, -56 for n = 3, 5, 9.
class CifarResNet : public nn::Module {
 public:
  explicit CifarResNet(int64_t blocks_per_stage, int64_t num_classes = 10, int64_t in_channels = 3);
  Tensor forward(const Tensor& x) override;

  std::shared_ptr<nn::Conv2d> conv1;
  std::shared_ptr<nn::BatchNorm2d> bn1;
  std::shared_ptr<nn::Sequential> layer1, layer2, layer3;
  std::shared_ptr<nn::AdaptiveAvgPool2d> avgpool;
  std::shared_ptr<nn::Linear> fc;
};

std::shared_ptr<CifarResNet> resnet20(int64_t num_classes = 10, int64_t in_channels = 3);
std::shared_ptr<CifarResNet> resnet32(int64_t num_classes = 10, int64_t in_channels = 3);
std::shared_ptr<CifarResNet> resnet56(int64_t num_classes = 10, int64_t in_channels = 3);

}  // namespace wick::models
