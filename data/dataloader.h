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
// Note [independent epochs]
// Each begin() starts an epoch with its own state - the order, the batches in flight, the
// workers - owned by the iterators it returns (shared by their copies) rather than by the loader.
// So, as in PyTorch, any number of iterators of one loader may run at once, on any threads, and
// each sees a full epoch; begin() on one thread cannot pull batches out from under an iteration
// on another (two threads iterating one loader used to crash). Each begin() takes the next epoch
// number under the loader's lock, so concurrent epochs get different shuffles. The workers of an
// epoch are joined when it ends or when its last iterator is destroyed (a loop left with break
// stops them there); a worker finishes the batch it is building first. The epoch holds the
// dataset and a copy of the options, so it may outlive the loader. Workers run with grad mode off
// (NoGradGuard) and one OpenMP thread each (Note [one OpenMP thread per worker]); the dataset,
// its transforms and the collate function run on the workers and must be safe to call
// concurrently. Copies of one iterator share its epoch: incrementing them from several threads is
// safe and hands each batch to exactly one of them.
//
// Note [loader timeout]
// options.timeout > 0 (with workers) bounds how long one increment waits for its batch, as
// PyTorch's DataLoader(timeout=...) does: past it, operator++ throws std::runtime_error
// "[DataLoader] timed out after N seconds" instead of blocking forever on a stuck dataset. The
// epoch stays where it was, so a later increment waits for the same batch again.
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

#include <cstdint>
#include <exception>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "data/collate.h"
#include "data/dataset.h"
#include "data/loader_timeline.h"
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
  double timeout = 0;                // seconds to wait for a worker's batch; 0: no limit
  std::shared_ptr<LoaderTimeline> timeline;  // where each batch's time went (loader_timeline.h)
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
  class Epoch;   // one begin()'s order, batches in flight and workers (dataloader.cpp)
  struct State;  // what the loader and its epochs share: counters, the next epoch number

 public:
  class Iterator;

  // Checks the options as PyTorch's DataLoader does (std::invalid_argument naming the option).
  DataLoader(std::shared_ptr<Dataset> dataset, DataLoaderOptions options = {});
  ~DataLoader();
  DataLoader(const DataLoader&) = delete;
  DataLoader& operator=(const DataLoader&) = delete;

  // Starts the next epoch and returns an iterator at its first batch (Note [independent epochs]).
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
    // Moves to the next batch: may wait for it (up to options.timeout), and rethrows a worker's
    // exception.
    Iterator& operator++();
    bool operator==(const Iterator& other) const { return done_ == other.done_; }
    bool operator!=(const Iterator& other) const { return done_ != other.done_; }

   private:
    friend class DataLoader;
    std::shared_ptr<Epoch> epoch_;  // null for end()
    bool done_ = true;
    Batch batch_;
  };

 private:
  std::shared_ptr<Dataset> dataset_;
  DataLoaderOptions options_;
  std::shared_ptr<Sampler> sampler_;
  std::shared_ptr<State> state_;
};

}  // namespace wick::data
