// DataLoader: batches from a Dataset, one epoch per range-for loop, built ahead of time by worker
// threads.
//
//   auto train = std::make_shared<data::MNIST>("assets/mnist", /*train=*/true);
//   data::DataLoaderOptions options;
//   options.batch_size = 64;
//   options.shuffle = true;
//   options.num_workers = 2;
//   data::DataLoader loader(train, options);
//   for (int epoch = 0; epoch < 3; ++epoch) {
//     for (data::Batch& batch : loader) { ... }   // each loop is the next epoch, reshuffled
//     std::cout << loader.stats().str();          // how long training waited for data
//   }
//
// How it works (Note [in-order prefetch]): begin() asks the sampler for the epoch's order and cuts
// it into batches numbered 0, 1, 2, ... Workers take the lowest number nobody has taken yet, but
// only while it is less than `next batch to deliver + num_workers * prefetch_factor`: that window
// bounds the memory held in batches being built or waiting. A finished batch goes into a map keyed
// by its number; the consumer waits for exactly the number it needs next, so batches arrive in
// sampler order whichever worker finished first. Taking a batch moves the window on and wakes the
// workers. With num_workers = 0 the calling thread builds each batch when it is asked for.
//
// Threads: the workers of an epoch are started by begin() and joined when the epoch ends, when
// the next begin() starts (a loop left with break leaves workers parked; they are stopped then), or
// when the loader is destroyed. A worker finishes the batch it is building before it stops.
// Workers run with grad mode off (NoGradGuard) and with one OpenMP thread each (Note [one OpenMP
// thread per worker]). The dataset, its transforms and the collate function run on the workers and
// must be safe to call concurrently. One thread iterates a loader at a time.
//
// Note [worker exceptions]
// An exception thrown while building batch k (by the dataset, a transform or the collate
// function) is caught on the worker and stored as batch k's result. The consumer rethrows the
// original exception - same type, same message - when it reaches position k, so the batches
// before k are delivered normally and the error appears where it belongs. The loader stays usable:
// the next begin() starts a new epoch, and destroying it mid-epoch is safe.
//
// Note [pin_memory]
// With pin_memory, workers copy each finished batch into page-locked host memory (the CUDA
// backend's cached pinned allocator, cuda::pin_memory). The GPU's DMA engines read pinned memory
// directly, so the host-to-device copy of the batch can run asynchronously and at full PCIe
// speed, where pageable memory needs a staging copy first. Without a CUDA device (or in a build
// without CUDA) there is nothing to pin for, and the flag does nothing.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "data/collate.h"
#include "data/dataset.h"
#include "data/sampler.h"

namespace wick::data {

struct DataLoaderOptions {
  int64_t batch_size = 1;
  bool shuffle = false;              // a RandomSampler(dataset size, seed) unless `sampler` is set
  std::shared_ptr<Sampler> sampler;  // a custom order (cannot be combined with shuffle)
  int64_t num_workers = 0;           // 0: batches are built in the calling thread, when asked for
  int64_t prefetch_factor = 2;       // at most num_workers * prefetch_factor batches in flight
  bool drop_last = false;            // drop a last batch smaller than batch_size
  uint64_t seed = 0;                 // shuffles, transforms (Note [reproducible transforms])
  CollateFn collate;                 // empty: default_collate (stack inputs and targets)
  bool pin_memory = false;           // page-locked batches for fast GPU copies (Note [pin_memory])
};

// Note [loader counters]
// What a student measures: is training waiting for data? `wait_seconds` is the time the consuming
// thread spent blocked for its next batch (with num_workers = 0 that is all of the loading, since
// the consumer builds the batch itself); `work_seconds` is the time spent building batches, summed
// over workers. If wait stays near zero, loading keeps up with training; if it is a large share of
// the epoch's time, training is starved for data (more workers, or cheaper transforms, help). The
// queue depth is the number of batches built and not yet taken.
struct LoaderCounters {
  double wait_seconds = 0;
  double work_seconds = 0;
  int64_t batches_produced = 0;   // batches built, failed ones included
  int64_t batches_delivered = 0;  // batches handed to the consumer (or rethrown as errors)
  int64_t samples_produced = 0;   // examples in the batches built
  int64_t peak_queue_depth = 0;   // the most batches built and waiting at once
};

struct LoaderStats {
  LoaderCounters epoch;        // the current (or last) epoch; reset when begin() starts one
  LoaderCounters total;        // cumulative since the loader was made
  int64_t queue_depth = 0;     // batches built and waiting now
  int64_t current_epoch = -1;  // the epoch begin() last started; -1 before the first
  std::string str() const;     // a small table of the above
};

class DataLoader {
 public:
  class Iterator;

  DataLoader(std::shared_ptr<Dataset> dataset, DataLoaderOptions options = {});
  ~DataLoader();  // stops and joins the workers; never throws
  DataLoader(const DataLoader&) = delete;
  DataLoader& operator=(const DataLoader&) = delete;

  // Starts the next epoch (stopping an unfinished one) and returns an iterator at its first batch.
  // Iterators of an earlier begin() must not be used afterwards; incrementing one throws.
  Iterator begin();
  Iterator end();

  int64_t size() const;  // batches per epoch
  // The epoch the next begin() runs; it counts up by one per begin() from there (from 0 at first).
  void set_epoch(int64_t epoch);
  LoaderStats stats() const;
  bool pin_memory() const { return options_.pin_memory; }
  const DataLoaderOptions& options() const { return options_; }
  const Dataset& dataset() const { return *dataset_; }

  class Iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = Batch;
    using difference_type = std::ptrdiff_t;
    using pointer = Batch*;
    using reference = Batch&;

    Batch& operator*() { return batch_; }
    Batch* operator->() { return &batch_; }
    // Moves to the next batch: may wait for it, and rethrows a worker's exception.
    Iterator& operator++();
    bool operator==(const Iterator& other) const { return done_ == other.done_; }
    bool operator!=(const Iterator& other) const { return done_ != other.done_; }

   private:
    friend class DataLoader;
    Iterator(DataLoader* loader, int64_t run) : loader_(loader), run_(run) {}
    DataLoader* loader_ = nullptr;
    int64_t run_ = 0;  // which begin() this iterator came from
    bool done_ = true;
    Batch batch_;
  };

 private:
  // A built batch or the exception that building it threw.
  struct Result {
    Batch batch;
    std::exception_ptr error;
  };

  int64_t window() const { return options_.num_workers * options_.prefetch_factor; }
  int64_t batch_length(int64_t number) const;  // examples in batch `number`
  Result build_batch(int64_t number) const;
  bool next_batch(Batch& out);  // false at the end of the epoch
  void worker_loop();
  void stop_workers() noexcept;

  std::shared_ptr<Dataset> dataset_;
  DataLoaderOptions options_;
  std::shared_ptr<Sampler> sampler_;
  int64_t next_epoch_ = 0;
  int64_t run_ = 0;  // counts begin() calls, to catch stale iterators

  // The running epoch. order_, num_batches_ and epoch_ are written by begin() before the workers
  // start and only read while they run.
  std::vector<int64_t> order_;
  int64_t num_batches_ = 0;
  int64_t epoch_ = -1;

  // Shared with the workers, guarded by mutex_.
  mutable std::mutex mutex_;
  std::condition_variable work_ready_;   // workers: a batch entered the window, or stop
  std::condition_variable batch_ready_;  // consumer: a batch was built
  int64_t next_task_ = 0;                // the lowest batch number no worker has taken
  int64_t next_delivery_ = 0;            // the batch number the consumer takes next
  std::map<int64_t, Result> ready_;      // built batches waiting for the consumer
  bool stop_ = false;
  LoaderCounters epoch_counters_, total_counters_;
  std::vector<std::thread> workers_;
};

}  // namespace wick::data
