// ONNX export's C++ twin (jit/onnx_export.h): a C++ MLP, CNN and ResNet-20 written as ONNX and
// read back with the ONNX project's protobuf classes and checked by its checker - the nodes, the
// initializers under their parameter names, the opset, the symbolic batch axis - and the errors.
// ONNX Runtime runs files from the same exporter in tests/python/test_onnx_export.py (the runtime
// has no C++ package here).
#include <gtest/gtest.h>
#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>

#include "core/ops/scan.h"
#include "jit/onnx_export.h"
#include "nn/containers.h"
#include "nn/layers.h"
#include "nn/layers/normalization.h"
#include "nn/models/resnet.h"
#include "wick.h"

using namespace wick;

namespace {

onnx::ModelProto read_model(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  onnx::ModelProto model;
  EXPECT_TRUE(model.ParseFromIstream(&file));
  return model;
}

std::vector<std::string> op_types(const onnx::GraphProto& g) {
  std::vector<std::string> ops;
  for (const auto& n : g.node()) ops.push_back(n.op_type());
  return ops;
}

std::string temp_path(const char* name) {
  return testing::TempDir() + "/wick_onnx_" + name + ".onnx";
}

}  // namespace

TEST(OnnxExport, MlpNodesInitializersAndBatchAxis) {
  manual_seed(0);
  auto mlp = std::make_shared<nn::Sequential>(std::vector<std::shared_ptr<nn::Module>>{
      std::make_shared<nn::Flatten>(), std::make_shared<nn::Linear>(784, 64),
      std::make_shared<nn::ReLU>(), std::make_shared<nn::Linear>(64, 10)});
  std::string path = temp_path("mlp");
  jit::export_onnx(*mlp, {randn({3, 1, 28, 28})}, path);
  EXPECT_TRUE(mlp->is_training());  // exported in eval mode, and put back

  onnx::ModelProto model = read_model(path);
  ASSERT_EQ(model.opset_import_size(), 1);
  EXPECT_GE(model.opset_import(0).version(), 17);
  const onnx::GraphProto& g = model.graph();
  std::vector<std::string> ops = op_types(g);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "MatMul"), 2);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "Relu"), 1);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "Add"), 2);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "Transpose"), 2);  // the weights, as PyTorch's

  std::set<std::string> names;
  for (const auto& t : g.initializer()) names.insert(t.name());
  for (const char* p : {"1.weight", "1.bias", "3.weight", "3.bias"})
    EXPECT_TRUE(names.count(p)) << p;
  for (const auto& t : g.initializer()) {
    if (t.name() != "1.weight") continue;
    ASSERT_EQ(t.dims_size(), 2);
    EXPECT_EQ(t.dims(0), 64);
    EXPECT_EQ(t.dims(1), 784);
    Tensor w = mlp->named_parameters()[0].second;
    ASSERT_EQ(t.raw_data().size(), static_cast<size_t>(w.nbytes()));
    EXPECT_EQ(std::memcmp(t.raw_data().data(), w.contiguous().data_ptr(), w.nbytes()), 0);
  }
  ASSERT_EQ(g.input_size(), 1);
  EXPECT_EQ(g.input(0).name(), "input");
  const auto& in_shape = g.input(0).type().tensor_type().shape();
  EXPECT_EQ(in_shape.dim(0).dim_param(), "batch");
  EXPECT_EQ(in_shape.dim(1).dim_value(), 1);
  ASSERT_EQ(g.output_size(), 1);
  EXPECT_EQ(g.output(0).type().tensor_type().shape().dim(0).dim_param(), "batch");
  EXPECT_EQ(g.output(0).type().tensor_type().shape().dim(1).dim_value(), 10);
  std::remove(path.c_str());
}

TEST(OnnxExport, CnnFoldsBatchNormAndKeepsFixedBatchWhenAsked) {
  manual_seed(0);
  auto cnn = std::make_shared<nn::Sequential>(std::vector<std::shared_ptr<nn::Module>>{
      std::make_shared<nn::Conv2d>(1, 8, 3, 1, 1), std::make_shared<nn::BatchNorm2d>(8),
      std::make_shared<nn::ReLU>(), std::make_shared<nn::MaxPool2d>(2),
      std::make_shared<nn::Flatten>(), std::make_shared<nn::Linear>(8 * 14 * 14, 10)});
  std::string path = temp_path("cnn");
  jit::OnnxExportOptions options;
  options.dynamic_batch = false;
  options.input_names = {"image"};
  options.output_names = {"logits"};
  jit::export_onnx(*cnn, {randn({2, 1, 28, 28})}, path, options);
  onnx::ModelProto model = read_model(path);
  std::vector<std::string> ops = op_types(model.graph());
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "Conv"), 1);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "BatchNormalization"), 0);  // folded
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "MaxPool"), 1);
  EXPECT_EQ(model.graph().input(0).name(), "image");
  EXPECT_EQ(model.graph().output(0).name(), "logits");
  EXPECT_EQ(model.graph().input(0).type().tensor_type().shape().dim(0).dim_value(), 2);

  options.constant_folding = false;  // batch norm stays, parameters by name
  jit::export_onnx(*cnn, {randn({2, 1, 28, 28})}, path, options);
  model = read_model(path);
  ops = op_types(model.graph());
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "BatchNormalization"), 1);
  std::set<std::string> names;
  for (const auto& t : model.graph().initializer()) names.insert(t.name());
  EXPECT_TRUE(names.count("1.running_mean"));
  EXPECT_TRUE(names.count("0.weight"));
  std::remove(path.c_str());
}

TEST(OnnxExport, BadInput) {
  auto relu = std::make_shared<nn::ReLU>();
  jit::OnnxExportOptions old;
  old.opset_version = 13;
  EXPECT_THROW(jit::export_onnx(*relu, {randn({2, 3})}, temp_path("old"), old),
               std::invalid_argument);
  EXPECT_THROW(jit::export_onnx(*relu, {randn({2, 3})}, "/no/such/folder/m.onnx"),
               std::invalid_argument);
  EXPECT_THROW(jit::export_onnx(*relu, {randn({2, 3}), randn({2, 3})}, temp_path("two")),
               std::invalid_argument);
}

TEST(OnnxExport, AnOpWithoutExportNameIsNamed) {
  auto fn = [](const std::vector<Tensor>& xs) { return std::vector<Tensor>{cumprod(xs[0], 1)}; };
  try {
    jit::export_onnx(fn, {randn({2, 3})}, {}, temp_path("cumprod"));
    FAIL() << "cumprod has no ONNX export";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("op 'cumprod'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("has no ONNX export"), std::string::npos) << e.what();
  }
}

TEST(OnnxExport, TwoInputsAndOutputsTakeNumberedNames) {
  auto fn = [](const std::vector<Tensor>& xs) {
    return std::vector<Tensor>{xs[0] + xs[1], xs[0] * xs[1]};
  };
  std::string path = temp_path("pair");
  jit::export_onnx(fn, {randn({2, 3}), randn({2, 3})}, {}, path);
  onnx::ModelProto model = read_model(path);
  const onnx::GraphProto& g = model.graph();
  EXPECT_EQ(g.name(), "wick");
  ASSERT_EQ(g.input_size(), 2);
  EXPECT_EQ(g.input(0).name(), "input0");
  EXPECT_EQ(g.input(1).name(), "input1");
  ASSERT_EQ(g.output_size(), 2);
  EXPECT_EQ(g.output(0).name(), "output0");
  EXPECT_EQ(g.output(1).name(), "output1");
  EXPECT_EQ(g.output(1).type().tensor_type().shape().dim(0).dim_param(), "batch");
  std::remove(path.c_str());
}

TEST(OnnxExport, ResNet20PassesOnnxCheckerWithOneConvPerLayer) {
  manual_seed(0);
  auto model = models::resnet20();
  std::string path = temp_path("resnet20");
  jit::export_onnx(*model, {randn({2, 3, 32, 32})}, path);
  onnx::ModelProto proto = read_model(path);
  EXPECT_NO_THROW(onnx::checker::check_model(proto));  // ONNX's own checker, opset 17
  EXPECT_EQ(proto.graph().name(), "wick_" + model->type_name());
  std::vector<std::string> ops = op_types(proto.graph());
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "Conv"), 19);  // batch norm folded into each
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "BatchNormalization"), 0);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "GlobalAveragePool"), 1);
  EXPECT_EQ(proto.graph().input(0).type().tensor_type().shape().dim(0).dim_param(), "batch");
  std::remove(path.c_str());
}

namespace {
// An op without an ONNX form (cumprod) two modules down, for the error's module path.
struct Cumulative : nn::Module {
  Cumulative() : Module("Cumulative") {}
  Tensor forward(const Tensor& x) override { return cumprod(x, 1); }
};
}  // namespace

TEST(OnnxExport, RefusalNamesTheModulePathAndWritesNothing) {
  auto inner = std::make_shared<nn::Sequential>(std::vector<std::shared_ptr<nn::Module>>{
      std::make_shared<nn::ReLU>(), std::make_shared<Cumulative>()});
  auto model = std::make_shared<nn::Sequential>(
      std::vector<std::shared_ptr<nn::Module>>{std::make_shared<nn::Linear>(4, 4), inner});
  std::string path = temp_path("refused");
  std::remove(path.c_str());
  try {
    jit::export_onnx(*model, {randn({2, 4})}, path);
    FAIL() << "cumprod has no ONNX export";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("op 'cumprod' has no ONNX export (in module '1.1')"),
              std::string::npos)
        << e.what();
  }
  std::ifstream written(path);
  EXPECT_FALSE(written.good());
  EXPECT_TRUE(model->is_training());  // put back after the failed export too
}
