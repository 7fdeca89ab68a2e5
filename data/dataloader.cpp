#include "data/dataloader.h"

#include "cuda/api.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <sstream>
#include <utility>

#include "autograd/grad_mode.h"
#include "core/error.h"

namespace wick::data {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// One row of LoaderStats::str(): the columns of kHeader.
constexpr const char* kRowFormat = "  %-8s %10.4f %10.4f %9lld %9lld %9lld %6lld\n";
constexpr const char* kHeader =
    "             wait (s)   work (s)     built delivered   samples   peak\n";

void format_row(std::ostringstream& os, const char* name, const LoaderCounters& c) {
  char line[160];
  std::snprintf(
      line, sizeof(line), kRowFormat, name, c.wait_seconds, c.work_seconds,
      static_cast<long long>(c.batches_produced), static_cast<long long>(c.batches_delivered),
      static_cast<long long>(c.samples_produced), static_cast<long long>(c.peak_queue_depth));
  os << line;
}

}  // namespace

std::string LoaderStats::str() const {
  std::ostringstream os;
  os << "DataLoader: epoch " << current_epoch << ", " << queue_depth << " batches waiting\n"
     << kHeader;
  format_row(os, "epoch", epoch);
  format_row(os, "total", total);
  return os.str();
}

DataLoader::DataLoader(std::shared_ptr<Dataset> dataset, DataLoaderOptions options)
    : dataset_(std::move(dataset)), options_(std::move(options)) {
  const char* op = "DataLoader";
  check_value(dataset_ != nullptr, op, "expected a dataset; got a null pointer");
  check_value(options_.batch_size >= 1, op, "batch_size must be at least 1; got ",
              options_.batch_size);
  check_value(options_.num_workers >= 0, op, "num_workers must be non-negative; got ",
              options_.num_workers);
  check_value(options_.prefetch_factor >= 1, op, "prefetch_factor must be at least 1; got ",
              options_.prefetch_factor);
  check_value(!(options_.shuffle && options_.sampler), op,
              "shuffle and a custom sampler exclude each other; got both");
  if (options_.sampler) {
    sampler_ = options_.sampler;
  } else if (options_.shuffle) {
    sampler_ = std::make_shared<RandomSampler>(dataset_->size(), options_.seed);
  } else {
    sampler_ = std::make_shared<SequentialSampler>(dataset_->size());
  }
}

DataLoader::~DataLoader() { stop_workers(); }

int64_t DataLoader::size() const {
  int64_t n = sampler_->size(), b = options_.batch_size;
  return options_.drop_last ? n / b : (n + b - 1) / b;
}

void DataLoader::set_epoch(int64_t epoch) {
  check_value(epoch >= 0, "DataLoader", "epoch must be non-negative; got ", epoch);
  next_epoch_ = epoch;
}

LoaderStats DataLoader::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  LoaderStats s;
  s.epoch = epoch_counters_;
  s.total = total_counters_;
  s.queue_depth = static_cast<int64_t>(ready_.size());
  s.current_epoch = epoch_;
  return s;
}

DataLoader::Iterator DataLoader::begin() {
  stop_workers();  // an epoch left early: its workers stop after the batch they are building
  ++run_;
  std::vector<int64_t> order = sampler_->indices(next_epoch_);
  check_value(static_cast<int64_t>(order.size()) == sampler_->size(), "DataLoader",
              "the sampler's size() is ", sampler_->size(), " but it gave ", order.size(),
              " indices for epoch ", next_epoch_);
  for (size_t i = 0; i < order.size(); ++i) {
    check_index(order[i] >= 0 && order[i] < dataset_->size(), "DataLoader",
                "the sampler gave index ", order[i], " at position ", i, " of epoch ", next_epoch_,
                ", but the dataset has ", dataset_->size(), " examples");
  }
  order_ = std::move(order);
  num_batches_ = size();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    epoch_ = next_epoch_++;
    next_task_ = 0;
    next_delivery_ = 0;
    ready_.clear();
    stop_ = false;
    epoch_counters_ = LoaderCounters();
  }
  try {
    for (int64_t w = 0; w < options_.num_workers && num_batches_ > 0; ++w) {
      workers_.emplace_back([this] { worker_loop(); });
    }
  } catch (...) {  // std::system_error: the system would not start another thread
    stop_workers();
    throw;
  }
  Iterator it(this, run_);
  it.done_ = !next_batch(it.batch_);
  return it;
}

DataLoader::Iterator DataLoader::end() { return Iterator(this, run_); }

DataLoader::Iterator& DataLoader::Iterator::operator++() {
  check_state(loader_ != nullptr && loader_->run_ == run_, "DataLoader",
              "this iterator belongs to an epoch that has ended: begin() has started another");
  done_ = !loader_->next_batch(batch_);
  return *this;
}

int64_t DataLoader::batch_length(int64_t number) const {
  int64_t first = number * options_.batch_size;
  return std::min(options_.batch_size, static_cast<int64_t>(order_.size()) - first);
}

DataLoader::Result DataLoader::build_batch(int64_t number) const {
  Result result;
  try {
    int64_t first = number * options_.batch_size, last = first + batch_length(number);
    std::vector<Example> examples;
    examples.reserve(last - first);
    for (int64_t i = first; i < last; ++i) {
      int64_t index = order_[i];
      examples.push_back(dataset_->get_seeded(index, SampleSeed{options_.seed, epoch_, index}));
    }
    result.batch = options_.collate ? options_.collate(examples) : default_collate(examples);
    if (options_.pin_memory && cuda::is_available()) {  // Note [pin_memory]
      result.batch.input = cuda::pin_memory(result.batch.input);
      result.batch.target = cuda::pin_memory(result.batch.target);
    }
  } catch (...) {
    result.error = std::current_exception();  // Note [worker exceptions]
  }
  return result;
}

// Note [one OpenMP thread per worker]
// wick's CPU kernels parallelise large loops with OpenMP. A worker thread that entered a parallel
// region would start its own team of OMP_NUM_THREADS threads, so N workers would run N teams on
// top of the training thread's team and oversubscribe the cores. Parallelism in a loader comes
// from the workers themselves, so each one limits OpenMP to itself (the setting is per thread);
// PyTorch does the same with torch.set_num_threads(1) in its worker processes.
void DataLoader::worker_loop() {
  NoGradGuard no_grad;
  omp_set_num_threads(1);
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    work_ready_.wait(lock, [this] {
      return stop_ || next_task_ >= num_batches_ || next_task_ < next_delivery_ + window();
    });
    if (stop_ || next_task_ >= num_batches_) return;
    int64_t number = next_task_++;
    lock.unlock();
    Clock::time_point start = Clock::now();
    Result result = build_batch(number);
    double seconds = seconds_since(start);
    lock.lock();
    ready_.emplace(number, std::move(result));
    for (LoaderCounters* c : {&epoch_counters_, &total_counters_}) {
      c->work_seconds += seconds;
      c->batches_produced += 1;
      c->samples_produced += batch_length(number);
      c->peak_queue_depth = std::max(c->peak_queue_depth, static_cast<int64_t>(ready_.size()));
    }
    batch_ready_.notify_one();  // only the consumer waits on it
  }
}

bool DataLoader::next_batch(Batch& out) {
  if (next_delivery_ >= num_batches_) {  // only the consumer writes next_delivery_
    stop_workers();
    return false;
  }
  Clock::time_point start = Clock::now();
  Result result;
  if (options_.num_workers == 0) {
    NoGradGuard no_grad;
    result = build_batch(next_delivery_);
    double seconds = seconds_since(start);
    std::lock_guard<std::mutex> lock(mutex_);
    ++next_delivery_;
    for (LoaderCounters* c : {&epoch_counters_, &total_counters_}) {
      c->wait_seconds += seconds;
      c->work_seconds += seconds;
      c->batches_produced += 1;
      c->batches_delivered += 1;
      c->samples_produced += batch_length(next_delivery_ - 1);
    }
  } else {
    std::unique_lock<std::mutex> lock(mutex_);
    batch_ready_.wait(lock, [this] { return ready_.count(next_delivery_) > 0; });
    double seconds = seconds_since(start);
    auto it = ready_.find(next_delivery_);
    result = std::move(it->second);
    ready_.erase(it);
    ++next_delivery_;
    for (LoaderCounters* c : {&epoch_counters_, &total_counters_}) {
      c->wait_seconds += seconds;
      c->batches_delivered += 1;
    }
    lock.unlock();
    work_ready_.notify_all();  // the window moved on by one batch
  }
  if (result.error) std::rethrow_exception(result.error);
  out = std::move(result.batch);
  return true;
}

void DataLoader::stop_workers() noexcept {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  work_ready_.notify_all();
  for (std::thread& t : workers_) t.join();
  workers_.clear();
}

}  // namespace wick::data
