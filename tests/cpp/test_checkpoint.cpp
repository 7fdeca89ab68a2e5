// Training checkpoints: resuming gives exactly the losses of an uninterrupted run, and a bad
// checkpoint raises a clear error and changes nothing.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>

#include <unistd.h>

#include "core/generator.h"
#include "nn/checkpoint.h"
#include "nn/containers.h"
#include "nn/functional.h"
#include "nn/layers.h"
#include "nn/serialization.h"
#include "tests/cpp/test_util.h"

namespace wick::nn {
namespace {

using wick::testing::expect_close;
using wick::testing::expect_error;
namespace fs = std::filesystem;

std::shared_ptr<Sequential> make_model(int64_t hidden = 16) {
  return std::make_shared<Sequential>(std::vector<std::shared_ptr<Module>>{
      std::make_shared<Linear>(6, hidden), std::make_shared<ReLU>(), std::make_shared<Dropout>(0.3),
      std::make_shared<Linear>(hidden, 3)});
}

// One "epoch": a few steps on fixed data; dropout draws from the default generator, so the run
// depends on the generator's state as well as the model's and the optimizer's.
std::vector<double> run_epoch(Module& model, optim::Optimizer& opt, optim::LRScheduler& sched) {
  Generator data(42);
  std::vector<double> losses;
  for (int step = 0; step < 5; ++step) {
    Tensor x = randn({8, 6}, {}, data);
    Tensor y = randint(0, 3, {8}, {}, data);
    Tensor loss = F::cross_entropy(model(x), y);
    opt.zero_grad();
    loss.backward();
    opt.step();
    losses.push_back(loss.item<double>());
  }
  sched.step();
  return losses;
}

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("wick_ckpt_" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

TEST(Checkpoint, ResumeGivesTheSameLossesAsAnUninterruptedRun) {
  TempDir dir;
  std::string file = (dir.path / "run.safetensors").string();
  std::vector<double> uninterrupted, resumed;
  {
    manual_seed(3);
    auto model = make_model();
    optim::Adam opt(model->parameters(), optim::AdamOptions{0.01});
    optim::StepLR sched(opt, 1, 0.5);
    run_epoch(*model, opt, sched);
    save_checkpoint(file, *model, opt, &sched, TrainingState{1, 5, {{"note", "epoch one"}}, {}});
    uninterrupted = run_epoch(*model, opt, sched);
  }
  {
    manual_seed(99);  // a different initialisation, overwritten by the checkpoint
    auto model = make_model();
    optim::Adam opt(model->parameters(), optim::AdamOptions{0.01});
    optim::StepLR sched(opt, 1, 0.5);
    rand({100});  // and a different generator position
    TrainingState state = load_checkpoint(file, *model, opt, &sched);
    EXPECT_EQ(state.epoch, 1);
    EXPECT_EQ(state.global_step, 5);
    EXPECT_EQ(state.info.at("note"), "epoch one");
    EXPECT_DOUBLE_EQ(opt.param_groups()[0].options["lr"], 0.005);
    resumed = run_epoch(*model, opt, sched);
  }
  ASSERT_EQ(resumed.size(), uninterrupted.size());
  for (size_t i = 0; i < resumed.size(); ++i) EXPECT_EQ(resumed[i], uninterrupted[i]) << i;
}

TEST(Checkpoint, BadCheckpointsChangeNothing) {
  TempDir dir;
  std::string good = (dir.path / "good.safetensors").string();
  auto model = make_model();
  optim::SGD opt(model->parameters(), optim::SGDOptions{0.1, 0.9});
  optim::StepLR sched(opt, 2);
  run_epoch(*model, opt, sched);
  save_checkpoint(good, *model, opt, &sched, {});

  auto other = make_model(/*hidden=*/8);  // another architecture
  optim::SGD other_opt(other->parameters(), optim::SGDOptions{0.1, 0.9});
  StateDict before = other->state_dict();
  expect_error<std::invalid_argument>([&] { load_checkpoint(good, *other, other_opt, nullptr); },
                                      "size mismatch for 0.bias");
  for (auto& [name, t] : other->state_dict()) expect_close(t, before.at(name), 0, 0);

  // Truncated: every prefix fails cleanly.
  std::ifstream in(good, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string cut = (dir.path / "cut.safetensors").string();
  for (size_t n : {size_t(0), size_t(7), bytes.size() / 2, bytes.size() - 1}) {
    std::ofstream(cut, std::ios::binary).write(bytes.data(), n);
    EXPECT_THROW(load_checkpoint(cut, *model, opt, &sched), std::invalid_argument) << n;
  }
  // A valid safetensors file that is not a training checkpoint.
  std::string plain = (dir.path / "plain.safetensors").string();
  save_safetensors(plain, model->state_dict());
  expect_error<std::invalid_argument>([&] { load_checkpoint(plain, *model, opt, &sched); },
                                      "not a wick training checkpoint");
  expect_error<std::runtime_error>(
      [&] { load_checkpoint((dir.path / "missing.safetensors").string(), *model, opt, &sched); },
      "missing.safetensors");
  // Optimizer state of the wrong shape is refused before anything is applied.
  StateDict state = opt.state_dict();
  state["state.0.momentum_buffer"] = zeros({2, 2});
  expect_error<std::invalid_argument>([&] { opt.load_state_dict(state); },
                                      "'state.0.momentum_buffer' has shape (2, 2)");
}

// A copy of checkpoint `from` at `to`, with `edit` applied to its tensors and metadata.
void rewrite(const std::string& from, const std::string& to,
             const std::function<void(SafetensorsFile&)>& edit) {
  SafetensorsFile file = load_safetensors(from);
  edit(file);
  save_safetensors(to, file.tensors, file.metadata);
}

bool same(const StateDict& a, const StateDict& b) {
  if (a.size() != b.size()) return false;
  for (const auto& [name, t] : a) {
    auto it = b.find(name);
    if (it == b.end() || it->second.shape() != t.shape() || !equal(it->second, t)) return false;
  }
  return true;
}

// The structure-aware fuzzer's crashes and the silent NaN resumes: a checkpoint with one optimizer
// entry missing or a hyperparameter out of the constructors' ranges is refused whole, and the
// model, optimizer, schedule and generator are exactly as before.
TEST(Checkpoint, OutOfRangeOrIncompleteStateIsRefusedAndChangesNothing) {
  TempDir dir;
  std::string good = (dir.path / "good.safetensors").string();
  std::string bad = (dir.path / "bad.safetensors").string();
  auto model = make_model();
  optim::Adam opt(model->parameters(), optim::AdamOptions{0.01});
  optim::StepLR sched(opt, 1, 0.5);
  run_epoch(*model, opt, sched);
  save_checkpoint(good, *model, opt, &sched, {});
  run_epoch(*model, opt, sched);  // move on, so a load would visibly change things

  auto scalar = [](double v) { return scalar_tensor(v, kFloat64); };
  struct Case {
    const char* fragment;
    std::function<void(SafetensorsFile&)> edit;
  };
  std::vector<Case> cases = {
      {"has no 'exp_avg_sq'",
       [](SafetensorsFile& f) { f.tensors.erase("optimizer.state.1.exp_avg_sq"); }},
      {"invalid learning rate nan",
       [&](SafetensorsFile& f) { f.tensors["optimizer.param_groups.0.lr"] = scalar(NAN); }},
      {"invalid learning rate -1",
       [&](SafetensorsFile& f) { f.tensors["optimizer.param_groups.0.lr"] = scalar(-1); }},
      {"'state.0.step' is -5",
       [&](SafetensorsFile& f) { f.tensors["optimizer.state.0.step"] = scalar(-5); }},
      {"betas must be in [0, 1); got (0.9, -1)",
       [&](SafetensorsFile& f) { f.tensors["optimizer.param_groups.0.beta2"] = scalar(-1); }},
      {"invalid epsilon -1",
       [&](SafetensorsFile& f) { f.tensors["optimizer.param_groups.0.eps"] = scalar(-1); }},
      {"'state.2.exp_avg' has shape (5,)",
       [](SafetensorsFile& f) { f.tensors["optimizer.state.2.exp_avg"] = zeros({5}); }},
      {"group 1 but the optimizer has 1",
       [&](SafetensorsFile& f) { f.tensors["optimizer.param_groups.1.lr"] = scalar(0.1); }},
      {"'last_epoch' must be an integer >= 0; got -3",
       [](SafetensorsFile& f) { f.tensors["scheduler.last_epoch"] = scalar_tensor(int64_t(-3)); }},
      {"invalid base learning rate inf",
       [](SafetensorsFile& f) { f.tensors["scheduler.base_lrs"] = tensor({INFINITY}); }},
      {"'rng.seed' must be one int64",
       [](SafetensorsFile& f) { f.tensors["rng.seed"] = tensor({1.5}); }},
      {"must not be negative", [](SafetensorsFile& f) { f.metadata["epoch"] = "-1"; }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.fragment);
    rewrite(good, bad, c.edit);
    StateDict model_before = model->state_dict(), opt_before = opt.state_dict();
    int64_t epoch_before = sched.last_epoch();
    PhiloxState rng_before = default_generator().state();
    expect_error<std::invalid_argument>([&] { load_checkpoint(bad, *model, opt, &sched); },
                                        c.fragment);
    EXPECT_TRUE(same(model->state_dict(), model_before));
    EXPECT_TRUE(same(opt.state_dict(), opt_before));
    EXPECT_EQ(sched.last_epoch(), epoch_before);
    EXPECT_EQ(default_generator().state().offset, rng_before.offset);
    EXPECT_EQ(default_generator().state().seed, rng_before.seed);
  }
  // And the untouched checkpoint still loads, and training goes on from it.
  load_checkpoint(good, *model, opt, &sched);
  EXPECT_EQ(sched.last_epoch(), 1);
  run_epoch(*model, opt, sched);
}

}  // namespace
}  // namespace wick::nn
