#include "data/dataloader.h"

#include "cuda/api.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>
#include <utility>

#include "core/error.h"
#include "core/grad_mode.h"

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

// Counters of the epoch begin() last started, kept after its iterators are gone.
struct EpochRecord {
  LoaderCounters counters;
  int64_t queue_depth = 0;
  int64_t epoch = -1;
};

struct DataLoader::State {
  std::mutex mutex;  // guards everything here and every epoch's shared fields
  LoaderCounters total;
  std::shared_ptr<EpochRecord> latest;
  int64_t next_epoch = 0;
};

// Note [in-order prefetch] and Note [independent epochs] in the header.
class DataLoader::Epoch {
 public:
  Epoch(std::shared_ptr<Dataset> dataset, const DataLoaderOptions& options,
        std::vector<int64_t> order, int64_t epoch, std::shared_ptr<State> state,
        std::shared_ptr<EpochRecord> record)
      : dataset_(std::move(dataset)),
        options_(options),
        order_(std::move(order)),
        epoch_(epoch),
        state_(std::move(state)),
        record_(std::move(record)) {
    int64_t n = static_cast<int64_t>(order_.size()), b = options_.batch_size;
    num_batches_ = options_.drop_last ? n / b : (n + b - 1) / b;
  }
  ~Epoch() { stop_workers(); }
  Epoch(const Epoch&) = delete;
  Epoch& operator=(const Epoch&) = delete;

  void start();
  bool next(Batch& out);  // false at the end of the epoch

 private:
  struct Result {  // a built batch or the exception that building it threw
    Batch batch;
    std::exception_ptr error;
  };

  int64_t window() const { return options_.num_workers * options_.prefetch_factor; }
  int64_t batch_length(int64_t number) const;
  Result build_batch(int64_t number) const;
  bool wait_for_batch(std::unique_lock<std::mutex>& lock);
  void worker_loop(int worker);
  void stop_workers() noexcept;
  void count(const std::function<void(LoaderCounters&)>& update);  // state_->mutex held

  // Written by the constructor, only read afterwards.
  const std::shared_ptr<Dataset> dataset_;
  const DataLoaderOptions options_;
  const std::vector<int64_t> order_;
  const int64_t epoch_;
  const std::shared_ptr<State> state_;
  const std::shared_ptr<EpochRecord> record_;
  int64_t num_batches_ = 0;

  std::mutex consumer_mutex_;  // one increment at a time (copies of an iterator share the epoch)
  // Guarded by state_->mutex.
  std::condition_variable work_ready_;   // workers: a batch entered the window, or stop
  std::condition_variable batch_ready_;  // consumer: a batch was built
  int64_t next_task_ = 0;                // the lowest batch number no worker has taken
  int64_t next_delivery_ = 0;            // the batch number the consumer takes next
  std::map<int64_t, Result> ready_;      // built batches waiting for the consumer
  bool stop_ = false;
  std::vector<std::thread> workers_;  // started by start(), joined by stop_workers()
};

DataLoader::DataLoader(std::shared_ptr<Dataset> dataset, DataLoaderOptions options)
    : dataset_(std::move(dataset)),
      options_(std::move(options)),
      state_(std::make_shared<State>()) {
  const char* op = "DataLoader";
  check_value(dataset_ != nullptr, op, "expected a dataset; got a null pointer");
  check_value(options_.batch_size >= 1, op, "batch_size must be at least 1; got ",
              options_.batch_size);
  check_value(options_.num_workers >= 0, op, "num_workers must be non-negative; got ",
              options_.num_workers);
  check_value(options_.prefetch_factor >= 1, op, "prefetch_factor must be at least 1; got ",
              options_.prefetch_factor);
  // !(x >= 0) rather than x < 0, so NaN is refused too.
  check_value(options_.timeout >= 0, op, "timeout option should be non-negative; got ",
              options_.timeout);
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

DataLoader::~DataLoader() = default;  // running epochs belong to their iterators

int64_t DataLoader::size() const {
  int64_t n = sampler_->size(), b = options_.batch_size;
  return options_.drop_last ? n / b : (n + b - 1) / b;
}

void DataLoader::set_epoch(int64_t epoch) {
  check_value(epoch >= 0, "DataLoader", "epoch must be non-negative; got ", epoch);
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->next_epoch = epoch;
}

LoaderStats DataLoader::stats() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  LoaderStats s;
  s.total = state_->total;
  if (state_->latest) {
    s.epoch = state_->latest->counters;
    s.queue_depth = state_->latest->queue_depth;
    s.current_epoch = state_->latest->epoch;
  }
  return s;
}

DataLoader::Iterator DataLoader::begin() {
  int64_t epoch;
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    epoch = state_->next_epoch++;
  }
  std::vector<int64_t> order = sampler_->indices(epoch);
  check_value(static_cast<int64_t>(order.size()) == sampler_->size(), "DataLoader",
              "the sampler's size() is ", sampler_->size(), " but it gave ", order.size(),
              " indices for epoch ", epoch);
  for (size_t i = 0; i < order.size(); ++i) {
    check_index(order[i] >= 0 && order[i] < dataset_->size(), "DataLoader",
                "the sampler gave index ", order[i], " at position ", i, " of epoch ", epoch,
                ", but the dataset has ", dataset_->size(), " examples");
  }
  auto record = std::make_shared<EpochRecord>();
  record->epoch = epoch;
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    state_->latest = record;
  }
  Iterator it;
  it.epoch_ = std::make_shared<Epoch>(dataset_, options_, std::move(order), epoch, state_, record);
  it.epoch_->start();
  it.done_ = !it.epoch_->next(it.batch_);
  return it;
}

DataLoader::Iterator DataLoader::end() { return Iterator(); }

DataLoader::Iterator& DataLoader::Iterator::operator++() {
  check_state(epoch_ != nullptr, "DataLoader", "cannot increment the end() iterator");
  done_ = !epoch_->next(batch_);
  return *this;
}

void DataLoader::Epoch::start() {
  try {
    std::lock_guard<std::mutex> lock(state_->mutex);  // workers wait for it before reading
    for (int64_t w = 0; w < options_.num_workers && num_batches_ > 0; ++w) {
      workers_.emplace_back([this, w] { worker_loop(static_cast<int>(w)); });
    }
  } catch (...) {  // std::system_error: the system would not start another thread
    stop_workers();
    throw;
  }
}

int64_t DataLoader::Epoch::batch_length(int64_t number) const {
  int64_t first = number * options_.batch_size;
  return std::min(options_.batch_size, static_cast<int64_t>(order_.size()) - first);
}

void DataLoader::Epoch::count(const std::function<void(LoaderCounters&)>& update) {
  update(state_->total);
  update(record_->counters);
  record_->queue_depth = static_cast<int64_t>(ready_.size());
}

DataLoader::Epoch::Result DataLoader::Epoch::build_batch(int64_t number) const {
  Result result;
  try {
    int64_t first = number * options_.batch_size, last = first + batch_length(number);
    std::vector<Example> examples;
    examples.reserve(last - first);
    LoaderSpan build("build batch");
    for (int64_t i = first; i < last; ++i) {
      int64_t index = order_[i];
      examples.push_back(dataset_->get_seeded(index, SampleSeed{options_.seed, epoch_, index}));
    }
    {
      LoaderSpan collate("collate");
      result.batch = options_.collate ? options_.collate(examples) : default_collate(examples);
    }
    if (options_.pin_memory && cuda::is_available()) {  // Note [pin_memory]
      LoaderSpan pin("pin memory");
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
void DataLoader::Epoch::worker_loop(int worker) {
  NoGradGuard no_grad;
  omp_set_num_threads(1);
  LoaderTimeline* timeline = options_.timeline.get();
  std::unique_lock<std::mutex> lock(state_->mutex);
  while (true) {
    work_ready_.wait(lock, [this] {
      return stop_ || next_task_ >= num_batches_ || next_task_ < next_delivery_ + window();
    });
    if (stop_ || next_task_ >= num_batches_) return;
    int64_t number = next_task_++;
    lock.unlock();
    Clock::time_point start = Clock::now();
    Result result;
    {
      LoaderTimelineScope recording(timeline, worker + 1, number);
      result = build_batch(number);
    }
    double seconds = seconds_since(start);
    lock.lock();
    ready_.emplace(number, std::move(result));
    int64_t length = batch_length(number), depth = static_cast<int64_t>(ready_.size());
    count([&](LoaderCounters& c) {
      c.work_seconds += seconds;
      c.batches_produced += 1;
      c.samples_produced += length;
      c.peak_queue_depth = std::max(c.peak_queue_depth, depth);
    });
    batch_ready_.notify_all();  // consumers (copies of one iterator may wait in several threads)
  }
}

// Waits until batch next_delivery_ is built; false if options.timeout passed first.
bool DataLoader::Epoch::wait_for_batch(std::unique_lock<std::mutex>& lock) {
  auto built = [this] { return ready_.count(next_delivery_) > 0; };
  if (options_.timeout <= 0 || std::isinf(options_.timeout)) {
    batch_ready_.wait(lock, built);
    return true;
  }
  return batch_ready_.wait_for(lock, std::chrono::duration<double>(options_.timeout), built);
}

bool DataLoader::Epoch::next(Batch& out) {
  std::lock_guard<std::mutex> consumer(consumer_mutex_);
  if (next_delivery_ >= num_batches_) {  // only a consumer (holding consumer_mutex_) writes it
    if (options_.timeline) LoaderTimelineScope::set_for_thread(nullptr, 0, -1);
    stop_workers();
    return false;
  }
  Clock::time_point start = Clock::now();
  Result result;
  LoaderTimeline* timeline = options_.timeline.get();
  if (options_.num_workers == 0) {
    NoGradGuard no_grad;
    {
      LoaderTimelineScope recording(timeline, 0, next_delivery_);
      result = build_batch(next_delivery_);
    }
    double seconds = seconds_since(start);
    int64_t length = batch_length(next_delivery_);
    std::lock_guard<std::mutex> lock(state_->mutex);
    ++next_delivery_;
    count([&](LoaderCounters& c) {
      c.wait_seconds += seconds;
      c.work_seconds += seconds;
      c.batches_produced += 1;
      c.batches_delivered += 1;
      c.samples_produced += length;
    });
  } else {
    std::unique_lock<std::mutex> lock(state_->mutex);
    check_state(wait_for_batch(lock), "DataLoader", "timed out after ", options_.timeout,
                " seconds waiting for batch ", next_delivery_, " of epoch ", epoch_);
    double seconds = seconds_since(start);
    if (timeline != nullptr) timeline->record("wait", next_delivery_, 0, start, Clock::now());
    auto it = ready_.find(next_delivery_);
    result = std::move(it->second);
    ready_.erase(it);
    ++next_delivery_;
    count([&](LoaderCounters& c) {
      c.wait_seconds += seconds;
      c.batches_delivered += 1;
    });
    lock.unlock();
    work_ready_.notify_all();  // the window moved on by one batch
  }
  // The training loop's own spans ("to device", "train step") count against this batch.
  if (timeline != nullptr) LoaderTimelineScope::set_for_thread(timeline, 0, next_delivery_ - 1);
  if (result.error) std::rethrow_exception(result.error);
  out = std::move(result.batch);
  return true;
}

void DataLoader::Epoch::stop_workers() noexcept {
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    stop_ = true;
  }
  work_ready_.notify_all();
  for (std::thread& t : workers_) t.join();
  workers_.clear();
}

}  // namespace wick::data
