// nn::KerasModel: Keras's compile / fit / evaluate / predict around any nn::Module - the C++ twin
// of wick.keras.Model (python/wick/keras/), with the callbacks of nn/callbacks.h.
//
//   nn::KerasModel model(net);
//   model.compile("adam", "cross_entropy", {"accuracy"});
//   nn::History history = model.fit(train_loader, /*epochs=*/3, /*validation_data=*/test_loader,
//                                   {std::make_shared<nn::EarlyStopping>("val_loss", 2)});
//   nn::Logs test = model.evaluate(test_loader);  // {"accuracy": 0.97, "loss": 0.09}
//
// Each training step is the loop one writes by hand - module.train(), output = module(input),
// loss = loss(output, target), optimizer.zero_grad(), loss.backward(), optimizer.step() - so fit
// gives exactly the parameters of that loop over the same batches. Logged values are averages
// over the epoch's examples ("loss", each metric, and "val_" + each for the validation data);
// evaluation runs under NoGradGuard in eval mode. Progress lines are Keras's:
//
//   Epoch 1/3
//   125/125 - 61s - accuracy: 0.9166 - loss: 0.2714 - val_accuracy: 0.9655 - val_loss: 0.1107
//
// redrawn as a bar on a terminal (verbose 1), one line per epoch in a log (or with verbose 2).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "nn/module.h"
#include "nn/optim.h"

namespace wick::nn {

// One epoch's (or one evaluation's) values by name: "loss", "accuracy", "val_loss", ...
using Logs = std::map<std::string, double>;

// The (input, target) batches fit, evaluate and predict iterate, once per epoch: a view of any
// range with size() whose elements have .input and .target - data::DataLoader is one (nn/ does
// not include data/, so the loader is taken by its shape) - which must outlive the view; or two
// tensors cut in order into batches of batch_size along their first dim.
class Batches {
 public:
  using Visit = std::function<void(const Tensor& input, const Tensor& target)>;

  template <class Range, class = std::enable_if_t<!std::is_same_v<std::decay_t<Range>, Batches>>,
            class = decltype(std::declval<Range&>().size(),
                             std::declval<Range&>().begin()->input)>
  Batches(Range& range)  // NOLINT: implicit, so fit(loader) reads as in Keras
      : size_([&range] { return static_cast<int64_t>(range.size()); }),
        each_([&range](const Visit& visit) {
          for (auto& batch : range) visit(batch.input, batch.target);
        }) {}
  Batches(Tensor inputs, Tensor targets, int64_t batch_size = 32);

  int64_t size() const { return size_(); }  // batches per epoch
  void for_each(const Visit& visit) const { each_(visit); }

 private:
  std::function<int64_t()> size_;
  std::function<void(const Visit&)> each_;
};

// A loss by name - cross_entropy, nll, mse, l1, bce_with_logits, or Keras's long names - or any
// function (output, target) -> one-element Tensor.
struct Loss {
  using Fn = std::function<Tensor(const Tensor& output, const Tensor& target)>;
  // Implicit, so that compile("adam", "cross_entropy") reads as in Keras.
  Loss(const char* name) : Loss(std::string(name)) {}  // NOLINT
  Loss(const std::string& name);                       // NOLINT
  template <class F, class = std::enable_if_t<
                         std::is_invocable_r_v<Tensor, F&, const Tensor&, const Tensor&>>>
  Loss(F fn) : fn(std::move(fn)) {}  // NOLINT
  Fn fn;
};

// A metric by name - accuracy (or acc), mse, mae - or a named function (output, target) ->
// value for one batch; fit averages it over the epoch's examples.
struct Metric {
  using Fn = std::function<double(const Tensor& output, const Tensor& target)>;
  Metric(const char* name) : Metric(std::string(name)) {}  // NOLINT: {"accuracy"}
  Metric(const std::string& name);                         // NOLINT
  Metric(std::string name, Fn fn) : name(std::move(name)), fn(std::move(fn)) {}
  std::string name;
  Fn fn;
};

// What fit returns: history["val_loss"][i] is epoch[i]'s validation loss (epochs count from 0).
struct History {
  std::vector<int64_t> epoch;
  std::map<std::string, std::vector<double>> history;
};

class KerasModel;

// The hooks fit calls, in the order the callbacks are given. `epoch` counts from 0, as in Keras;
// on_epoch_end may add to the logs (LearningRateScheduler adds "learning_rate"), and setting
// model.stop_training ends training after the current epoch.
class Callback {
 public:
  virtual ~Callback() = default;
  virtual void on_train_begin(KerasModel& /*model*/) {}
  virtual void on_epoch_begin(KerasModel& /*model*/, int64_t /*epoch*/) {}
  virtual void on_batch_end(KerasModel& /*model*/, int64_t /*batch*/, const Logs& /*logs*/) {}
  virtual void on_epoch_end(KerasModel& /*model*/, int64_t /*epoch*/, Logs& /*logs*/) {}
  virtual void on_train_end(KerasModel& /*model*/, const Logs& /*logs*/) {}
};

class KerasModel {
 public:
  explicit KerasModel(std::shared_ptr<Module> module);

  // optimizer: "adam", "adamw" (their default rates) or "sgd" (lr 0.01, as Keras), made over
  // the module's parameters; or an optimizer built by the caller over them.
  void compile(const std::string& optimizer, Loss loss, std::vector<Metric> metrics = {});
  void compile(std::shared_ptr<optim::Optimizer> optimizer, Loss loss,
               std::vector<Metric> metrics = {});

  // Trains for `epochs` epochs (fewer if a callback stops it). verbose: 0 silent, 1 a progress
  // bar on a terminal (one line per epoch otherwise), 2 one line per epoch.
  History fit(const Batches& train, int64_t epochs = 1,
              const std::optional<Batches>& validation_data = std::nullopt,
              const std::vector<std::shared_ptr<Callback>>& callbacks = {}, int verbose = 1);
  Logs evaluate(const Batches& data, int verbose = 1);
  // The module's outputs, concatenated along the first dim; needs no compile().
  Tensor predict(const Batches& data);
  Tensor predict(const Tensor& inputs, int64_t batch_size = 32);

  Module& module() { return *module_; }
  optim::Optimizer& optimizer();
  const std::vector<Metric>& metrics() const { return metrics_; }
  bool stop_training = false;

 private:
  void require_compiled(const char* method) const;
  Logs run_batch(const Tensor& input, const Tensor& target, bool train);
  Logs evaluate_batches(const char* where, const Batches& data, int verbose);

  std::shared_ptr<Module> module_;
  std::shared_ptr<optim::Optimizer> optimizer_;
  Loss::Fn loss_;
  std::vector<Metric> metrics_;
};

}  // namespace wick::nn
