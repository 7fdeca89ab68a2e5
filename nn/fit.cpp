#include "nn/fit.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "core/error.h"
#include "core/grad_mode.h"
#include "core/ops.h"
#include "nn/functional.h"

namespace wick::nn {

namespace {

const char* const kLossNames =
    "cross_entropy, sparse_categorical_crossentropy, nll, mse, mean_squared_error, l1, mae, "
    "mean_absolute_error, bce_with_logits";
const char* const kMetricNames = "accuracy, acc, mse, mean_squared_error, mae, mean_absolute_error";

// Classes: argmax of the scores against class indices (or against the argmax of one-hot or
// probability targets). One output per example: a logit, so a score > 0 predicts 1.
double accuracy(const Tensor& output, const Tensor& target) {
  Tensor predicted, expected = target;
  if (output.dim() >= 2 && output.size(1) > 1) {
    predicted = output.argmax(1);
    if (target.dim() == output.dim()) expected = target.argmax(1);
  } else {
    predicted = (output.reshape({-1}) > 0).to(kInt64);
    expected = (target.reshape({-1}) > 0.5).to(kInt64);
  }
  int64_t n = std::max<int64_t>(expected.numel(), 1);
  return static_cast<double>((predicted == expected).sum().item<int64_t>()) / n;
}

double mean_squared_error(const Tensor& output, const Tensor& target) {
  Tensor error = output - target.to(output.dtype());
  return (error * error).mean().item<double>();
}

double mean_absolute_error(const Tensor& output, const Tensor& target) {
  return (output - target.to(output.dtype())).abs().mean().item<double>();
}

int64_t examples_in(const Tensor& target) { return target.dim() > 0 ? target.size(0) : 1; }

std::string format_value(double value) {
  char text[32];
  bool small = value != 0 && std::fabs(value) < 1e-3;  // Keras's rule: never show 0.0000
  std::snprintf(text, sizeof(text), small ? "%.4e" : "%.4f", value);
  return text;
}

std::string format_seconds(double seconds) {
  char text[32];
  if (seconds >= 1) {
    std::snprintf(text, sizeof(text), "%.0fs", seconds);
  } else {
    std::snprintf(text, sizeof(text), "%.0fms", seconds * 1000);
  }
  return text;
}

// Keras's progress line (python/wick/keras/progress.py has the same rules): a bar redrawn at most
// every 0.1 s on a terminal with verbose 1; otherwise only the final line of each epoch.
class Progbar {
 public:
  Progbar(int64_t target, int verbose, std::vector<std::string> order)
      : target_(target), dynamic_(verbose == 1 && isatty(1)), order_(std::move(order)) {}

  void update(int64_t current, const Logs& logs) {
    auto now = Clock::now();
    if (!dynamic_ || seconds(last_draw_, now) < 0.1) return;
    last_draw_ = now;
    double elapsed = seconds(start_, now);
    std::string eta =
        current > 0
            ? " - ETA: " + format_seconds(elapsed / double(current) * double(target_ - current))
            : "";
    std::printf("\r%s%s%s\033[K", bar(current).c_str(), eta.c_str(), values(logs).c_str());
    std::fflush(stdout);
  }

  void finish(int64_t current, const Logs& logs) {
    std::string elapsed = format_seconds(seconds(start_, Clock::now()));
    if (dynamic_) {
      std::printf("\r%s - %s%s\033[K\n", bar(current).c_str(), elapsed.c_str(),
                  values(logs).c_str());
    } else {
      std::printf("%lld/%lld - %s%s\n", static_cast<long long>(current),
                  static_cast<long long>(target_), elapsed.c_str(), values(logs).c_str());
    }
    std::fflush(stdout);
  }

 private:
  using Clock = std::chrono::steady_clock;
  static double seconds(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
  }

  std::string bar(int64_t current) const {
    const int64_t width = 30;
    int64_t filled = width * current / std::max<int64_t>(target_, 1);
    std::string arrow = current < target_ && filled < width ? ">" : "";
    std::string drawn = std::string(filled - static_cast<int64_t>(arrow.size()), '=') + arrow;
    return std::to_string(current) + "/" + std::to_string(target_) + " [" + drawn +
           std::string(width - static_cast<int64_t>(drawn.size()), '.') + "]";
  }

  // The loss, then the metrics in compile order, then their validation twins, then the rest.
  std::string values(const Logs& logs) const {
    std::string text;
    std::vector<std::string> keys;
    for (const std::string& k : order_) {
      if (logs.count(k)) keys.push_back(k);
    }
    for (const auto& [k, v] : logs) {
      if (std::find(order_.begin(), order_.end(), k) == order_.end()) keys.push_back(k);
    }
    for (const std::string& k : keys) text += " - " + k + ": " + format_value(logs.at(k));
    return text;
  }

  int64_t target_;
  bool dynamic_;
  std::vector<std::string> order_;
  Clock::time_point start_ = Clock::now(), last_draw_{};
};

// Example-weighted sums of batch values, for the epoch's averages.
struct Means {
  Logs sums;
  int64_t count = 0;
  void add(const Logs& values, int64_t n) {
    for (const auto& [k, v] : values) sums[k] += v * double(n);
    count += n;
  }
  Logs result() const {
    Logs out;
    for (const auto& [k, s] : sums) out[k] = s / double(std::max<int64_t>(count, 1));
    return out;
  }
};

// Restores the module's train/eval mode on leaving evaluate or predict, even by an exception.
struct EvalMode {
  Module& module;
  bool was_training;
  explicit EvalMode(Module& m) : module(m), was_training(m.is_training()) { m.eval(); }
  ~EvalMode() { module.train(was_training); }
};

std::optional<Device> device_of(const Module& module) {
  for (const Tensor& p : module.parameters()) return p.device();
  return std::nullopt;
}

}  // namespace

Batches::Batches(Tensor inputs, Tensor targets, int64_t batch_size) {
  check_value(batch_size >= 1, "Batches", "batch_size must be >= 1; got ", batch_size);
  check_value(inputs.dim() > 0 && targets.dim() > 0 && inputs.size(0) == targets.size(0), "Batches",
              "inputs and targets need the same number of examples (first dim); got ",
              inputs.shape(), " and ", targets.shape());
  int64_t n = inputs.size(0);
  size_ = [n, batch_size] { return (n + batch_size - 1) / batch_size; };
  each_ = [inputs, targets, n, batch_size](const Visit& visit) {
    for (int64_t start = 0; start < n; start += batch_size) {
      int64_t length = std::min(batch_size, n - start);
      visit(inputs.narrow(0, start, length), targets.narrow(0, start, length));
    }
  };
}

Loss::Loss(const std::string& name) {
  if (name == "cross_entropy" || name == "sparse_categorical_crossentropy") {
    fn = [](const Tensor& o, const Tensor& t) { return F::cross_entropy(o, t); };
  } else if (name == "nll") {
    fn = [](const Tensor& o, const Tensor& t) { return F::nll_loss(o, t); };
  } else if (name == "mse" || name == "mean_squared_error") {
    fn = [](const Tensor& o, const Tensor& t) { return F::mse_loss(o, t); };
  } else if (name == "l1" || name == "mae" || name == "mean_absolute_error") {
    fn = [](const Tensor& o, const Tensor& t) { return F::l1_loss(o, t); };
  } else if (name == "bce_with_logits") {
    fn = [](const Tensor& o, const Tensor& t) { return F::binary_cross_entropy_with_logits(o, t); };
  } else {
    throw_value_error("KerasModel.compile", "unknown loss '", name, "'; expected one of ",
                      kLossNames, " or a function (output, target) -> Tensor");
  }
}

Metric::Metric(const std::string& metric) : name(metric) {
  if (metric == "accuracy" || metric == "acc") {
    fn = accuracy;
  } else if (metric == "mse" || metric == "mean_squared_error") {
    fn = mean_squared_error;
  } else if (metric == "mae" || metric == "mean_absolute_error") {
    fn = mean_absolute_error;
  } else {
    throw_value_error("KerasModel.compile", "unknown metric '", metric, "'; expected one of ",
                      kMetricNames, " or Metric(name, function)");
  }
}

KerasModel::KerasModel(std::shared_ptr<Module> module) : module_(std::move(module)) {
  check_value(module_ != nullptr, "KerasModel", "the module is null");
}

void KerasModel::compile(const std::string& optimizer, Loss loss, std::vector<Metric> metrics) {
  std::shared_ptr<optim::Optimizer> made;
  if (optimizer == "adam") {
    made = std::make_shared<optim::Adam>(module_->parameters(), optim::AdamOptions{});
  } else if (optimizer == "adamw") {
    made = std::make_shared<optim::AdamW>(module_->parameters());
  } else if (optimizer == "sgd") {
    made = std::make_shared<optim::SGD>(module_->parameters(), optim::SGDOptions{});
  } else {
    throw_value_error("KerasModel.compile", "unknown optimizer '", optimizer,
                      "'; expected adam, adamw, sgd or an optimizer over the module's parameters");
  }
  compile(std::move(made), std::move(loss), std::move(metrics));
}

void KerasModel::compile(std::shared_ptr<optim::Optimizer> optimizer, Loss loss,
                         std::vector<Metric> metrics) {
  check_value(optimizer != nullptr, "KerasModel.compile", "the optimizer is null");
  check_value(static_cast<bool>(loss.fn), "KerasModel.compile", "the loss function is empty");
  for (size_t i = 0; i < metrics.size(); ++i) {
    check_value(
        static_cast<bool>(metrics[i].fn) && !metrics[i].name.empty() && metrics[i].name != "loss",
        "KerasModel.compile", "metric ", i, " needs a function and a name other than ",
        "'loss'; got '", metrics[i].name, "'");
    for (size_t j = 0; j < i; ++j) {
      check_value(metrics[j].name != metrics[i].name, "KerasModel.compile",
                  "two metrics are named '", metrics[i].name, "'");
    }
  }
  optimizer_ = std::move(optimizer);
  loss_ = std::move(loss.fn);
  metrics_ = std::move(metrics);
}

optim::Optimizer& KerasModel::optimizer() {
  require_compiled("optimizer");
  return *optimizer_;
}

void KerasModel::require_compiled(const char* method) const {
  check_state(optimizer_ != nullptr, (std::string("KerasModel.") + method).c_str(),
              "the model must be compiled before ", method,
              "(): call compile(optimizer, loss, metrics) first");
}

Logs KerasModel::run_batch(const Tensor& input, const Tensor& target, bool train) {
  Tensor output = (*module_)(input);
  Tensor loss = loss_(output, target);
  check_value(loss.defined() && loss.numel() == 1, train ? "KerasModel.fit" : "KerasModel.evaluate",
              "the loss must be a one-element Tensor; got shape ",
              loss.defined() ? loss.shape() : Shape{}, " (a loss with reduction none?)");
  if (train) {
    optimizer_->zero_grad();
    loss.backward();
    optimizer_->step();
  }
  Logs values{{"loss", loss.item<double>()}};
  NoGradGuard no_grad;
  Tensor detached = output.detach();
  for (const Metric& m : metrics_) values[m.name] = m.fn(detached, target);
  return values;
}

History KerasModel::fit(const Batches& train, int64_t epochs,
                        const std::optional<Batches>& validation_data,
                        const std::vector<std::shared_ptr<Callback>>& callbacks, int verbose) {
  require_compiled("fit");
  check_value(epochs >= 1, "KerasModel.fit", "epochs must be >= 1; got ", epochs);
  check_value(verbose >= 0 && verbose <= 2, "KerasModel.fit", "verbose must be 0, 1 or 2; got ",
              verbose);
  for (size_t i = 0; i < callbacks.size(); ++i) {
    check_value(callbacks[i] != nullptr, "KerasModel.fit", "callback ", i, " is null");
  }
  std::vector<std::string> order{"loss"};
  for (const Metric& m : metrics_) order.push_back(m.name);
  for (size_t i = 0, n = order.size(); i < n; ++i) order.push_back("val_" + order[i]);
  std::optional<Device> device = device_of(*module_);
  History history;
  Logs logs;
  stop_training = false;
  for (auto& c : callbacks) c->on_train_begin(*this);
  for (int64_t epoch = 0; epoch < epochs && !stop_training; ++epoch) {
    for (auto& c : callbacks) c->on_epoch_begin(*this, epoch);
    std::optional<Progbar> bar;
    if (verbose) {
      std::printf("Epoch %lld/%lld\n", static_cast<long long>(epoch + 1),
                  static_cast<long long>(epochs));
      bar.emplace(train.size(), verbose, order);
    }
    module_->train();
    Means means;
    int64_t step = 0;
    train.for_each([&](const Tensor& input, const Tensor& target) {
      Tensor x = device ? input.to(*device) : input, y = device ? target.to(*device) : target;
      means.add(run_batch(x, y, /*train=*/true), examples_in(y));
      Logs running = means.result();
      for (auto& c : callbacks) c->on_batch_end(*this, step, running);
      ++step;
      if (bar) bar->update(step, running);
    });
    check_value(means.count > 0, "KerasModel.fit", "the training data yielded no batches in epoch ",
                epoch + 1);
    logs = means.result();
    if (validation_data) {
      for (const auto& [k, v] : evaluate_batches("KerasModel.fit", *validation_data, 0)) {
        logs["val_" + k] = v;
      }
    }
    for (auto& c : callbacks) c->on_epoch_end(*this, epoch, logs);
    history.epoch.push_back(epoch);
    for (const auto& [k, v] : logs) history.history[k].push_back(v);
    if (bar) bar->finish(step, logs);
  }
  for (auto& c : callbacks) c->on_train_end(*this, logs);
  return history;
}

Logs KerasModel::evaluate_batches(const char* where, const Batches& data, int verbose) {
  EvalMode eval(*module_);
  NoGradGuard no_grad;
  std::optional<Device> device = device_of(*module_);
  std::vector<std::string> order{"loss"};
  for (const Metric& m : metrics_) order.push_back(m.name);
  std::optional<Progbar> bar;
  if (verbose) bar.emplace(data.size(), verbose, order);
  Means means;
  int64_t step = 0;
  data.for_each([&](const Tensor& input, const Tensor& target) {
    Tensor x = device ? input.to(*device) : input, y = device ? target.to(*device) : target;
    means.add(run_batch(x, y, /*train=*/false), examples_in(y));
    if (bar) bar->update(++step, means.result());
  });
  check_value(means.count > 0, where, "the evaluation data yielded no batches");
  Logs result = means.result();
  if (bar) bar->finish(step, result);
  return result;
}

Logs KerasModel::evaluate(const Batches& data, int verbose) {
  require_compiled("evaluate");
  check_value(verbose >= 0 && verbose <= 2, "KerasModel.evaluate",
              "verbose must be 0, 1 or 2; got ", verbose);
  return evaluate_batches("KerasModel.evaluate", data, verbose);
}

Tensor KerasModel::predict(const Batches& data) {
  EvalMode eval(*module_);
  NoGradGuard no_grad;
  std::optional<Device> device = device_of(*module_);
  std::vector<Tensor> outputs;
  data.for_each([&](const Tensor& input, const Tensor&) {
    outputs.push_back((*module_)(device ? input.to(*device) : input));
  });
  check_value(!outputs.empty(), "KerasModel.predict", "the data yielded no batches");
  return cat(outputs, 0);
}

Tensor KerasModel::predict(const Tensor& inputs, int64_t batch_size) {
  check_value(inputs.dim() > 0, "KerasModel.predict", "inputs need a batch dim; got a 0-d tensor");
  return predict(Batches(inputs, inputs, batch_size));
}

}  // namespace wick::nn
