#include "nn/models/resnet.h"

#include "core/ops.h"
#include "nn/init.h"
#include "nn/layers/resample.h"

namespace wick::models {

namespace {

std::shared_ptr<nn::Conv2d> conv3x3(int64_t in, int64_t out, int64_t stride = 1) {
  return std::make_shared<nn::Conv2d>(in, out, 3, stride, 1, 1, 1, /*bias=*/false);
}

std::shared_ptr<nn::Conv2d> conv1x1(int64_t in, int64_t out, int64_t stride = 1) {
  return std::make_shared<nn::Conv2d>(in, out, 1, stride, 0, 1, 1, /*bias=*/false);
}

std::shared_ptr<nn::BatchNorm2d> norm(int64_t channels) {
  return std::make_shared<nn::BatchNorm2d>(channels);
}

// torchvision's initialisation: He-normal (fan_out, ReLU gain) convolutions, batch norms at
// weight 1 and bias 0; with zero_init_residual each block's last norm starts at 0, so every
// block starts as the identity.
void initialise(nn::Module& model, bool zero_init_residual) {
  for (auto& [name, module] : model.named_modules()) {
    if (auto* conv = dynamic_cast<nn::Conv2d*>(module)) {
      nn::init::kaiming_normal_(conv->weight, 0.0, nn::init::FanMode::FanOut, "relu");
    } else if (auto* bn = dynamic_cast<nn::BatchNorm2d*>(module)) {
      nn::init::constant_(bn->weight, 1.0);
      nn::init::constant_(bn->bias, 0.0);
    }
  }
  if (!zero_init_residual) return;
  for (auto& [name, module] : model.named_modules()) {
    if (auto* block = dynamic_cast<Bottleneck*>(module)) nn::init::constant_(block->bn3->weight, 0);
    if (auto* block = dynamic_cast<BasicBlock*>(module)) nn::init::constant_(block->bn2->weight, 0);
  }
}

// relu(bn(x) + residual): in training one fused kernel each way (BatchNorm::forward_relu); in
// evaluation the separate ops, the graph that tracing, conv+BN folding and ONNX export expect.
Tensor bn_relu(nn::BatchNorm2d& bn, const Tensor& x, const Tensor& residual = Tensor()) {
  if (bn.is_training()) return bn.forward_relu(x, residual);
  Tensor out = bn(x);
  return relu(residual.defined() ? out + residual : out);
}

}  // namespace

BasicBlock::BasicBlock(int64_t inplanes, int64_t planes, int64_t stride,
                       std::shared_ptr<nn::Module> shortcut)
    : Module("BasicBlock") {
  conv1 = register_module("conv1", conv3x3(inplanes, planes, stride));
  bn1 = register_module("bn1", norm(planes));
  conv2 = register_module("conv2", conv3x3(planes, planes));
  bn2 = register_module("bn2", norm(planes));
  if (shortcut) downsample = register_module("downsample", shortcut);
}

Tensor BasicBlock::forward(const Tensor& x) {
  Tensor identity = downsample ? (*downsample)(x) : x;
  Tensor out = bn_relu(*bn1, (*conv1)(x));
  return bn_relu(*bn2, (*conv2)(out), identity);
}

Bottleneck::Bottleneck(int64_t inplanes, int64_t planes, int64_t stride,
                       std::shared_ptr<nn::Module> shortcut)
    : Module("Bottleneck") {
  conv1 = register_module("conv1", conv1x1(inplanes, planes));
  bn1 = register_module("bn1", norm(planes));
  conv2 = register_module("conv2", conv3x3(planes, planes, stride));
  bn2 = register_module("bn2", norm(planes));
  conv3 = register_module("conv3", conv1x1(planes, planes * kExpansion));
  bn3 = register_module("bn3", norm(planes * kExpansion));
  if (shortcut) downsample = register_module("downsample", shortcut);
}

Tensor Bottleneck::forward(const Tensor& x) {
  Tensor identity = downsample ? (*downsample)(x) : x;
  Tensor out = bn_relu(*bn1, (*conv1)(x));
  out = bn_relu(*bn2, (*conv2)(out));
  return bn_relu(*bn3, (*conv3)(out), identity);
}

ResNet::ResNet(BlockKind block, const std::vector<int64_t>& layers, int64_t num_classes,
               bool zero_init_residual, int64_t in_channels)
    : Module("ResNet") {
  check_value(layers.size() == 4, "ResNet", "layers must list 4 stage depths; got ", layers.size());
  const int64_t expansion =
      block == BlockKind::Basic ? BasicBlock::kExpansion : Bottleneck::kExpansion;
  int64_t inplanes = 64;
  // One stage: its first block takes the stride and, when the shape changes, a 1x1 projection.
  auto make_layer = [&](int64_t planes, int64_t blocks, int64_t stride) {
    check_value(blocks >= 1, "ResNet", "every stage needs at least one block; got ", blocks);
    auto stage = std::make_shared<nn::Sequential>();
    for (int64_t i = 0; i < blocks; ++i) {
      int64_t s = i == 0 ? stride : 1;
      std::shared_ptr<nn::Module> shortcut;
      if (i == 0 && (s != 1 || inplanes != planes * expansion)) {
        shortcut = std::make_shared<nn::Sequential>(std::vector<std::shared_ptr<nn::Module>>{
            conv1x1(inplanes, planes * expansion, s), norm(planes * expansion)});
      }
      if (block == BlockKind::Basic) {
        stage->push_back(std::make_shared<BasicBlock>(inplanes, planes, s, shortcut));
      } else {
        stage->push_back(std::make_shared<Bottleneck>(inplanes, planes, s, shortcut));
      }
      inplanes = planes * expansion;
    }
    return stage;
  };
  conv1 = register_module("conv1", std::make_shared<nn::Conv2d>(in_channels, 64, 7, 2, 3, 1, 1,
                                                                /*bias=*/false));
  bn1 = register_module("bn1", norm(64));
  maxpool = register_module("maxpool", std::make_shared<nn::MaxPool2d>(3, 2, 1));
  layer1 = register_module("layer1", make_layer(64, layers[0], 1));
  layer2 = register_module("layer2", make_layer(128, layers[1], 2));
  layer3 = register_module("layer3", make_layer(256, layers[2], 2));
  layer4 = register_module("layer4", make_layer(512, layers[3], 2));
  avgpool = register_module("avgpool", std::make_shared<nn::AdaptiveAvgPool2d>(1));
  fc = register_module("fc", std::make_shared<nn::Linear>(512 * expansion, num_classes));
  initialise(*this, zero_init_residual);
}

Tensor ResNet::forward(const Tensor& input) {
  Tensor x = (*maxpool)(bn_relu(*bn1, (*conv1)(input)));
  x = (*layer4)((*layer3)((*layer2)((*layer1)(x))));
  return (*fc)((*avgpool)(x).flatten(1));
}

std::shared_ptr<ResNet> resnet18(int64_t num_classes, int64_t in_channels) {
  return std::make_shared<ResNet>(BlockKind::Basic, std::vector<int64_t>{2, 2, 2, 2}, num_classes,
                                  false, in_channels);
}

std::shared_ptr<ResNet> resnet34(int64_t num_classes, int64_t in_channels) {
  return std::make_shared<ResNet>(BlockKind::Basic, std::vector<int64_t>{3, 4, 6, 3}, num_classes,
                                  false, in_channels);
}

std::shared_ptr<ResNet> resnet50(int64_t num_classes, int64_t in_channels) {
  return std::make_shared<ResNet>(BlockKind::Bottleneck, std::vector<int64_t>{3, 4, 6, 3},
                                  num_classes, false, in_channels);
}

ZeroPadShortcut::ZeroPadShortcut(int64_t stride, int64_t extra_channels)
    : Module("ZeroPadShortcut"), stride_(stride), extra_channels_(extra_channels) {}

Tensor ZeroPadShortcut::forward(const Tensor& x) {
  Tensor sub = x.slice(2, 0, x.size(2), stride_).slice(3, 0, x.size(3), stride_);
  int64_t before = extra_channels_ / 2;
  return nn::functional::pad(sub, {0, 0, 0, 0, before, extra_channels_ - before});
}

CifarResNet::CifarResNet(int64_t blocks_per_stage, int64_t num_classes, int64_t in_channels)
    : Module("CifarResNet") {
  check_value(blocks_per_stage >= 1, "CifarResNet", "blocks_per_stage must be at least 1; got ",
              blocks_per_stage);
  conv1 = register_module("conv1", conv3x3(in_channels, 16));
  bn1 = register_module("bn1", norm(16));
  int64_t inplanes = 16;
  auto make_stage = [&](int64_t planes, int64_t stride) {
    auto stage = std::make_shared<nn::Sequential>();
    for (int64_t i = 0; i < blocks_per_stage; ++i) {
      int64_t s = i == 0 ? stride : 1;
      std::shared_ptr<nn::Module> shortcut;
      if (s != 1 || inplanes != planes) {
        shortcut = std::make_shared<ZeroPadShortcut>(s, planes - inplanes);
      }
      stage->push_back(std::make_shared<BasicBlock>(inplanes, planes, s, shortcut));
      inplanes = planes;
    }
    return stage;
  };
  layer1 = register_module("layer1", make_stage(16, 1));
  layer2 = register_module("layer2", make_stage(32, 2));
  layer3 = register_module("layer3", make_stage(64, 2));
  avgpool = register_module("avgpool", std::make_shared<nn::AdaptiveAvgPool2d>(1));
  fc = register_module("fc", std::make_shared<nn::Linear>(64, num_classes));
  initialise(*this, false);
}

Tensor CifarResNet::forward(const Tensor& input) {
  Tensor x = bn_relu(*bn1, (*conv1)(input));
  x = (*layer3)((*layer2)((*layer1)(x)));
  return (*fc)((*avgpool)(x).flatten(1));
}

std::shared_ptr<CifarResNet> resnet20(int64_t num_classes, int64_t in_channels) {
  return std::make_shared<CifarResNet>(3, num_classes, in_channels);
}

std::shared_ptr<CifarResNet> resnet32(int64_t num_classes, int64_t in_channels) {
  return std::make_shared<CifarResNet>(5, num_classes, in_channels);
}

std::shared_ptr<CifarResNet> resnet56(int64_t num_classes, int64_t in_channels) {
  return std::make_shared<CifarResNet>(9, num_classes, in_channels);
}

}  // namespace wick::models
