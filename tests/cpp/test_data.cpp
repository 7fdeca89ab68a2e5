// Tests of data/: samplers, the DataLoader (ordering with any worker count, drop_last, epochs,
// worker exceptions, early exit and destruction, counters), MNIST on the committed subset and on
// broken IDX files, CIFAR-10 on small files in the real format, and transforms.
//
// Nothing here synchronises by sleeping or asserts on durations: where a test needs workers to
// have reached a state, it waits for a counter that must get there.
#include <unistd.h>
#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "data/data.h"
#include "tests/cpp/test_util.h"

namespace wick::data {
namespace {

namespace fs = std::filesystem;
using wick::testing::expect_error;

// ---- helpers ----------------------------------------------------------------------------------

// Example i: input float [2] = {i, -i}, target int64 scalar i.
class RangeDataset : public Dataset {
 public:
  explicit RangeDataset(int64_t n, int64_t throw_at = -1) : n_(n), throw_at_(throw_at) {}
  int64_t size() const override { return n_; }
  Example get(int64_t index) const override {
    check_example_index("RangeDataset", index, n_);
    fetched_.fetch_add(1);
    if (index == throw_at_) throw std::out_of_range("[test] example " + std::to_string(index));
    double v = static_cast<double>(index);
    return {tensor({v, -v}), scalar_tensor(index, kInt64)};
  }
  int64_t fetched() const { return fetched_.load(); }

 private:
  int64_t n_, throw_at_;
  mutable std::atomic<int64_t> fetched_{0};
};

DataLoaderOptions options(int64_t batch_size, int64_t workers, bool shuffle = false,
                          uint64_t seed = 0) {
  DataLoaderOptions o;
  o.batch_size = batch_size;
  o.num_workers = workers;
  o.shuffle = shuffle;
  o.seed = seed;
  return o;
}

// Every batch of one epoch, flattened: targets, and inputs as float values.
struct Epoch {
  std::vector<int64_t> targets;
  std::vector<float> inputs;
  std::vector<int64_t> batch_sizes;
};

Epoch run_epoch(DataLoader& loader) {
  Epoch e;
  for (Batch& b : loader) {
    std::vector<int64_t> t = b.target.to_vector<int64_t>();
    std::vector<float> x = b.input.to(kFloat32).to_vector<float>();
    e.targets.insert(e.targets.end(), t.begin(), t.end());
    e.inputs.insert(e.inputs.end(), x.begin(), x.end());
    e.batch_sizes.push_back(b.input.size(0));
  }
  return e;
}

// A fresh empty directory for one test's files, removed when the test ends. The process id keeps
// test binaries of several build directories that run at once apart.
class TempDir {
 public:
  explicit TempDir(const std::string& name)
      : path_(fs::path(::testing::TempDir()) /
              ("wick_data_" + std::to_string(::getpid()) + "_" + name)) {
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

void write_bytes(const fs::path& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

std::vector<uint8_t> read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void put_be32(std::vector<uint8_t>& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<uint8_t>(v >> shift));
}

// IDX files as MNIST has them; pixel p of image i is (i * 7 + p) % 256.
std::vector<uint8_t> idx_images(uint32_t count, uint32_t rows = 28, uint32_t cols = 28,
                                uint32_t magic = 2051) {
  std::vector<uint8_t> out;
  put_be32(out, magic);
  put_be32(out, count);
  put_be32(out, rows);
  put_be32(out, cols);
  for (uint32_t i = 0; i < count; ++i) {
    for (uint32_t p = 0; p < rows * cols; ++p)
      out.push_back(static_cast<uint8_t>((i * 7 + p) % 256));
  }
  return out;
}

std::vector<uint8_t> idx_labels(const std::vector<uint8_t>& labels, uint32_t magic = 2049) {
  std::vector<uint8_t> out;
  put_be32(out, magic);
  put_be32(out, static_cast<uint32_t>(labels.size()));
  out.insert(out.end(), labels.begin(), labels.end());
  return out;
}

uint32_t crc32(const std::vector<uint8_t>& bytes) {
  uint32_t crc = 0xFFFFFFFFu;
  for (uint8_t b : bytes) {
    crc ^= b;
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

// A valid gzip file holding `data` in uncompressed ("stored") deflate blocks, so the tests need
// no zlib of their own.
std::vector<uint8_t> gzip_stored(const std::vector<uint8_t>& data) {
  std::vector<uint8_t> out = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};
  size_t pos = 0;
  do {
    size_t len = std::min<size_t>(data.size() - pos, 65535);
    bool last = pos + len == data.size();
    out.push_back(last ? 1 : 0);
    out.push_back(len & 0xFF);
    out.push_back(len >> 8);
    out.push_back(~len & 0xFF);
    out.push_back((~len >> 8) & 0xFF);
    out.insert(out.end(), data.begin() + pos, data.begin() + pos + len);
    pos += len;
  } while (pos < data.size());
  uint32_t crc = crc32(data), size = static_cast<uint32_t>(data.size());
  for (int k = 0; k < 4; ++k) out.push_back((crc >> (8 * k)) & 0xFF);
  for (int k = 0; k < 4; ++k) out.push_back((size >> (8 * k)) & 0xFF);
  return out;
}

std::string assets_mnist() { return wick::testing::source_path("assets/mnist"); }

// ---- samplers ---------------------------------------------------------------------------------

bool is_permutation_of_range(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

TEST(DataSampler, SequentialIsInOrderEveryEpoch) {
  SequentialSampler s(5);
  EXPECT_EQ(s.size(), 5);
  EXPECT_EQ(s.indices(0), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(s.indices(7), s.indices(0));
  EXPECT_TRUE(SequentialSampler(0).indices(0).empty());
  expect_error<std::invalid_argument>([] { SequentialSampler(-1); }, "non-negative");
}

TEST(DataSampler, RandomIsReproducibleFromSeedAndEpoch) {
  RandomSampler a(100, 42), b(100, 42), other_seed(100, 43);
  std::vector<int64_t> e0 = a.indices(0), e1 = a.indices(1);
  EXPECT_TRUE(is_permutation_of_range(e0));
  EXPECT_TRUE(is_permutation_of_range(e1));
  EXPECT_EQ(e0, b.indices(0));  // same (seed, epoch): same order, from any sampler object
  EXPECT_EQ(e1, b.indices(1));
  EXPECT_EQ(e0, a.indices(0));  // asking again changes nothing
  EXPECT_NE(e0, e1);            // a new permutation each epoch
  EXPECT_NE(e0, other_seed.indices(0));
  EXPECT_NE(e0, SequentialSampler(100).indices(0));
  EXPECT_EQ(random_permutation(1, 5, 0), (std::vector<int64_t>{0}));
  expect_error<std::invalid_argument>([&] { a.indices(-1); }, "epoch must be non-negative");
}

TEST(DataSampler, SubsetSamplers) {
  std::vector<int64_t> subset = {9, 3, 7, 1};
  SubsetSampler fixed(subset);
  EXPECT_EQ(fixed.indices(0), subset);
  EXPECT_EQ(fixed.indices(3), subset);
  SubsetRandomSampler shuffled(subset, 1);
  std::vector<int64_t> e0 = shuffled.indices(0);
  std::vector<int64_t> sorted = e0;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, (std::vector<int64_t>{1, 3, 7, 9}));
  EXPECT_EQ(e0, SubsetRandomSampler(subset, 1).indices(0));
  bool changed = false;  // 4! = 24 orders: some epoch among the next ten must differ
  for (int64_t e = 1; e <= 10; ++e) changed = changed || shuffled.indices(e) != e0;
  EXPECT_TRUE(changed);
}

// ---- DataLoader: order, sizes, epochs ----------------------------------------------------------

TEST(DataLoader, SameBatchesInSamplerOrderWithZeroOneAndThreeWorkers) {
  auto dataset = std::make_shared<RangeDataset>(37);
  std::vector<Epoch> reference;
  for (int64_t workers : {0, 1, 3}) {
    DataLoader loader(dataset, options(4, workers, /*shuffle=*/true, /*seed=*/7));
    EXPECT_EQ(loader.size(), 10);
    std::vector<Epoch> epochs = {run_epoch(loader), run_epoch(loader)};
    for (int64_t e = 0; e < 2; ++e) {
      EXPECT_EQ(epochs[e].targets, RandomSampler(37, 7).indices(e)) << workers << " workers";
      EXPECT_EQ(epochs[e].batch_sizes, (std::vector<int64_t>{4, 4, 4, 4, 4, 4, 4, 4, 4, 1}));
      for (size_t i = 0; i < epochs[e].targets.size(); ++i) {
        EXPECT_EQ(epochs[e].inputs[2 * i], static_cast<float>(epochs[e].targets[i]));
        EXPECT_EQ(epochs[e].inputs[2 * i + 1], -static_cast<float>(epochs[e].targets[i]));
      }
    }
    if (reference.empty()) reference = epochs;
    EXPECT_EQ(epochs[0].inputs, reference[0].inputs) << workers << " workers";
    EXPECT_EQ(epochs[1].inputs, reference[1].inputs) << workers << " workers";
  }
}

TEST(DataLoader, BatchShapesAndDtypes) {
  DataLoader loader(std::make_shared<RangeDataset>(6), options(4, 0));
  auto it = loader.begin();
  EXPECT_EQ(it->input.shape(), (Shape{4, 2}));
  EXPECT_EQ(it->input.dtype(), kFloat32);
  EXPECT_EQ(it->target.shape(), (Shape{4}));
  EXPECT_EQ(it->target.dtype(), kInt64);
}

TEST(DataLoader, DropLast) {
  auto dataset = std::make_shared<RangeDataset>(10);
  for (int64_t workers : {0, 2}) {
    DataLoaderOptions o = options(4, workers);
    DataLoader keep(dataset, o);
    EXPECT_EQ(keep.size(), 3);
    EXPECT_EQ(run_epoch(keep).batch_sizes, (std::vector<int64_t>{4, 4, 2}));
    o.drop_last = true;
    DataLoader drop(dataset, o);
    EXPECT_EQ(drop.size(), 2);
    Epoch e = run_epoch(drop);
    EXPECT_EQ(e.batch_sizes, (std::vector<int64_t>{4, 4}));
    EXPECT_EQ(e.targets, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  }
  DataLoaderOptions o = options(4, 2);
  o.drop_last = true;
  DataLoader too_small(std::make_shared<RangeDataset>(3), o);
  EXPECT_EQ(too_small.size(), 0);
  EXPECT_TRUE(run_epoch(too_small).targets.empty());
}

TEST(DataLoader, EachLoopIsTheNextEpochAndSetEpochReplays) {
  DataLoader loader(std::make_shared<RangeDataset>(20), options(5, 2, true, 11));
  Epoch e0 = run_epoch(loader);
  Epoch e1 = run_epoch(loader);
  EXPECT_EQ(loader.stats().current_epoch, 1);
  EXPECT_NE(e0.targets, e1.targets);
  loader.set_epoch(0);
  EXPECT_EQ(run_epoch(loader).targets, e0.targets);
  EXPECT_EQ(run_epoch(loader).targets, e1.targets);  // and it counts on from there
  expect_error<std::invalid_argument>([&] { loader.set_epoch(-2); }, "non-negative");
}

TEST(DataLoader, CustomSamplerAndCollate) {
  DataLoaderOptions o = options(2, 2);
  o.sampler = std::make_shared<SubsetSampler>(std::vector<int64_t>{5, 0, 3});
  o.collate = [](const std::vector<Example>& examples) {
    std::vector<Tensor> targets;
    for (const Example& e : examples) targets.push_back(e.target * 10);
    return Batch{Tensor(), stack(targets)};
  };
  DataLoader loader(std::make_shared<RangeDataset>(6), o);
  EXPECT_EQ(loader.size(), 2);
  std::vector<int64_t> seen;
  for (Batch& b : loader) {
    EXPECT_FALSE(b.input.defined());
    for (int64_t t : b.target.to_vector<int64_t>()) seen.push_back(t);
  }
  EXPECT_EQ(seen, (std::vector<int64_t>{50, 0, 30}));
}

TEST(DataLoader, RejectsBadOptions) {
  auto dataset = std::make_shared<RangeDataset>(4);
  expect_error<std::invalid_argument>([&] { DataLoader(nullptr, options(1, 0)); }, "null");
  expect_error<std::invalid_argument>([&] { DataLoader(dataset, options(0, 0)); },
                                      "batch_size must be at least 1; got 0");
  expect_error<std::invalid_argument>([&] { DataLoader(dataset, options(1, -1)); }, "num_workers");
  DataLoaderOptions o = options(1, 1);
  o.prefetch_factor = 0;
  expect_error<std::invalid_argument>([&] { DataLoader(dataset, o); }, "prefetch_factor");
  for (double bad : {-1.0, std::nan("")}) {
    o = options(1, 1);
    o.timeout = bad;
    expect_error<std::invalid_argument>([&] { DataLoader(dataset, o); },
                                        "timeout option should be non-negative");
  }
  o = options(1, 0, /*shuffle=*/true);
  o.sampler = std::make_shared<SequentialSampler>(4);
  expect_error<std::invalid_argument>([&] { DataLoader(dataset, o); }, "exclude each other");
  o = options(1, 2);
  o.sampler = std::make_shared<SubsetSampler>(std::vector<int64_t>{0, 4});
  DataLoader loader(dataset, o);
  expect_error<std::out_of_range>([&] { loader.begin(); }, "sampler gave index 4 at position 1");
}

TEST(DataLoader, PinMemoryIsStored) {
  DataLoaderOptions o = options(2, 0);
  o.pin_memory = true;
  DataLoader loader(std::make_shared<RangeDataset>(4), o);
  EXPECT_TRUE(loader.pin_memory());
  EXPECT_EQ(run_epoch(loader).targets.size(), 4u);
}

// ---- DataLoader: errors, early exit, shutdown -------------------------------------------------

TEST(DataLoader, WorkerExceptionIsRethrownAtItsBatch) {
  // Example 13 throws: batches 0-2 (examples 0-11) arrive, batch 3 rethrows, in sampler order.
  auto dataset = std::make_shared<RangeDataset>(20, /*throw_at=*/13);
  for (int64_t workers : {0, 1, 3}) {
    DataLoader loader(dataset, options(4, workers));
    for (int attempt = 0; attempt < 2; ++attempt) {  // the loader stays usable after the error
      std::vector<int64_t> seen;
      try {
        for (Batch& b : loader) {
          for (int64_t t : b.target.to_vector<int64_t>()) seen.push_back(t);
        }
        ADD_FAILURE() << "no exception with " << workers << " workers";
      } catch (const std::out_of_range& e) {  // the original type and message
        EXPECT_STREQ(e.what(), "[test] example 13");
      }
      EXPECT_EQ(seen, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
    }
    EXPECT_EQ(loader.stats().epoch.batches_delivered, 4);
  }  // and destroying it afterwards is clean
}

TEST(DataLoader, ContinuesPastAFailedBatchWhenCaught) {
  DataLoader loader(std::make_shared<RangeDataset>(12, 5), options(4, 2));
  auto it = loader.begin();
  EXPECT_EQ(it->target.to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_THROW(++it, std::out_of_range);
  ++it;  // the batch after the failed one
  EXPECT_EQ(it->target.to_vector<int64_t>(), (std::vector<int64_t>{8, 9, 10, 11}));
  ++it;
  EXPECT_TRUE(it == loader.end());
}

TEST(DataLoader, BreakMidEpochThenRunTheNextOne) {
  DataLoader loader(std::make_shared<RangeDataset>(40), options(4, 3, true, 5));
  int64_t taken = 0;
  for (Batch& b : loader) {
    (void)b;
    if (++taken == 2) break;  // workers are left with batches in flight
  }
  Epoch next = run_epoch(loader);  // leaving the loop stopped them; epoch 1 runs in full
  EXPECT_EQ(next.targets, RandomSampler(40, 5).indices(1));
  EXPECT_EQ(loader.stats().epoch.batches_delivered, 10);
}

TEST(DataLoader, DestroyingMidEpochStopsWorkers) {
  auto dataset = std::make_shared<RangeDataset>(1000);
  for (int64_t workers : {1, 3}) {
    {
      DataLoader loader(dataset, options(2, workers));
      auto it = loader.begin();
      ++it;
    }  // destroyed with workers parked on a full window: must not hang or terminate
    {
      DataLoader loader(dataset, options(2, workers));
      loader.begin();  // destroyed right after starting
    }
    DataLoader never_started(dataset, options(2, workers));
    DataLoader::Iterator kept;
    {
      DataLoader loader(std::make_shared<RangeDataset>(6), options(2, workers));
      kept = loader.begin();
    }  // the epoch holds what it needs: its iterator outlives the loader
    ++kept;
    EXPECT_EQ(kept->target.to_vector<int64_t>(), (std::vector<int64_t>{2, 3}));
  }
  EXPECT_LT(dataset->fetched(), 1000);  // the epochs really were cut short
}

TEST(DataLoader, PrefetchIsBounded) {
  // After the first batch is taken, workers may build exactly window = workers * prefetch more.
  auto dataset = std::make_shared<RangeDataset>(100);
  DataLoaderOptions o = options(2, 2);
  o.prefetch_factor = 3;
  DataLoader loader(dataset, o);
  auto it = loader.begin();
  while (loader.stats().epoch.batches_produced < 1 + 6) std::this_thread::yield();
  LoaderStats s = loader.stats();
  EXPECT_EQ(s.queue_depth, 6);
  EXPECT_EQ(s.epoch.peak_queue_depth, 6);
  EXPECT_EQ(dataset->fetched(), 2 * 7);  // nothing beyond the window was even started
  int64_t batches = 1;
  while (++it != loader.end()) ++batches;
  EXPECT_EQ(batches, 50);
  EXPECT_LE(loader.stats().total.peak_queue_depth, 6);
}

TEST(DataLoader, WorkersBuildBatchesWithoutGrad) {
  // A dataset whose examples come from a tensor that requires grad, as a careless one might.
  class GradDataset : public Dataset {
   public:
    int64_t size() const override { return 4; }
    Example get(int64_t index) const override {
      return {weight_ * static_cast<double>(index), scalar_tensor(index, kInt64)};
    }

   private:
    Tensor weight_ = ones(Shape{3}).requires_grad_();
  };
  for (int64_t workers : {0, 2}) {
    DataLoader loader(std::make_shared<GradDataset>(), options(2, workers));
    for (Batch& b : loader) EXPECT_FALSE(b.input.requires_grad()) << workers << " workers";
  }
}

TEST(DataLoader, CountersPerEpochAndCumulative) {
  DataLoader loader(std::make_shared<RangeDataset>(20), options(5, 2));
  LoaderStats before = loader.stats();
  EXPECT_EQ(before.current_epoch, -1);
  EXPECT_EQ(before.total.batches_produced, 0);
  run_epoch(loader);
  run_epoch(loader);
  LoaderStats s = loader.stats();
  EXPECT_EQ(s.current_epoch, 1);
  EXPECT_EQ(s.epoch.batches_produced, 4);  // reset when epoch 1 began
  EXPECT_EQ(s.epoch.batches_delivered, 4);
  EXPECT_EQ(s.epoch.samples_produced, 20);
  EXPECT_EQ(s.total.batches_produced, 8);
  EXPECT_EQ(s.total.batches_delivered, 8);
  EXPECT_EQ(s.total.samples_produced, 40);
  EXPECT_EQ(s.queue_depth, 0);
  EXPECT_GE(s.epoch.peak_queue_depth, 1);
  EXPECT_LE(s.epoch.peak_queue_depth, 4);
  EXPECT_GE(s.epoch.wait_seconds, 0.0);
  EXPECT_GT(s.epoch.work_seconds, 0.0);
  EXPECT_GE(s.total.wait_seconds, s.epoch.wait_seconds);
  EXPECT_GE(s.total.work_seconds, s.epoch.work_seconds);
  EXPECT_NE(s.str().find("epoch 1"), std::string::npos) << s.str();

  DataLoader inline_loader(std::make_shared<RangeDataset>(20), options(5, 0));
  run_epoch(inline_loader);
  LoaderStats t = inline_loader.stats();
  EXPECT_EQ(t.epoch.batches_produced, 4);
  EXPECT_EQ(t.epoch.peak_queue_depth, 0);  // nothing is built ahead without workers
  EXPECT_EQ(t.epoch.wait_seconds, t.epoch.work_seconds);
}

// ---- MNIST ------------------------------------------------------------------------------------

const MNIST& committed_mnist(bool train) {
  static const MNIST train_set(assets_mnist(), true), test_set(assets_mnist(), false);
  return train ? train_set : test_set;
}

std::vector<int64_t> histogram(const Tensor& labels) {
  std::vector<int64_t> counts(10, 0);
  for (int64_t label : labels.to_vector<int64_t>()) counts.at(label) += 1;
  return counts;
}

TEST(Mnist, CommittedSubsetLoads) {
  const MNIST& train = committed_mnist(true);
  const MNIST& test = committed_mnist(false);
  ASSERT_EQ(train.size(), 8000);
  ASSERT_EQ(test.size(), 2000);
  // The split's class counts, as assets/mnist/README.md records them.
  EXPECT_EQ(histogram(train.labels()),
            (std::vector<int64_t>{810, 880, 802, 822, 777, 680, 820, 845, 766, 798}));
  EXPECT_EQ(histogram(test.labels()),
            (std::vector<int64_t>{191, 247, 189, 210, 203, 183, 194, 225, 178, 180}));
  Example first = train.get(0);
  EXPECT_EQ(first.input.shape(), (Shape{1, 28, 28}));
  EXPECT_EQ(first.input.dtype(), kFloat32);
  EXPECT_EQ(first.target.shape(), Shape{});
  EXPECT_EQ(first.target.dtype(), kInt64);
  EXPECT_EQ(first.target.item<int64_t>(), 4);
  EXPECT_EQ(train.images().max().item<int64_t>(), 255);
  EXPECT_EQ(train.images().min().item<int64_t>(), 0);
  EXPECT_EQ(first.input.max().item<double>(), 1.0);
  EXPECT_EQ(first.input.min().item<double>(), 0.0);
  // MNIST's mean grey level is 0.1307 (the constant everyone normalises with).
  double mean = train.images().to(kFloat64).mean().item<double>() / 255.0;
  EXPECT_NEAR(mean, 0.1307, 0.005);
  expect_error<std::out_of_range>([&] { train.get(8000); }, "[mnist] index 8000 is out of range");
}

TEST(Mnist, LoadsThroughTheDataLoaderWithATransform) {
  auto test = std::make_shared<MNIST>(assets_mnist(), false,
                                      Compose({RandomCrop(28, 2), Normalize({0.1307}, {0.3081})}));
  DataLoaderOptions o = options(500, 2, true, 1);
  DataLoader loader(test, o);
  int64_t seen = 0;
  for (Batch& b : loader) {
    EXPECT_EQ(b.input.shape(), (Shape{500, 1, 28, 28}));
    seen += b.target.size(0);
  }
  EXPECT_EQ(seen, 2000);
}

// Writes MNIST test files into `dir` (raw) from the given bytes.
void write_mnist(const fs::path& dir, const std::vector<uint8_t>& images,
                 const std::vector<uint8_t>& labels) {
  write_bytes(dir / "t10k-images-idx3-ubyte", images);
  write_bytes(dir / "t10k-labels-idx1-ubyte", labels);
}

TEST(Mnist, RawAndGzipFilesGiveTheSameData) {
  TempDir raw_dir("mnist_raw"), gz_dir("mnist_gz");
  const fs::path &raw = raw_dir.path(), &gz = gz_dir.path();
  write_mnist(raw, idx_images(3), idx_labels({7, 0, 9}));
  write_bytes(gz / "t10k-images-idx3-ubyte.gz", gzip_stored(idx_images(3)));
  write_bytes(gz / "t10k-labels-idx1-ubyte.gz", gzip_stored(idx_labels({7, 0, 9})));
  MNIST a(raw.string(), false), b(gz.string(), false);
  ASSERT_EQ(a.size(), 3);
  ASSERT_EQ(b.size(), 3);
  EXPECT_EQ(a.labels().to_vector<int64_t>(), (std::vector<int64_t>{7, 0, 9}));
  EXPECT_EQ(a.images().to_vector<uint8_t>(), b.images().to_vector<uint8_t>());
  Example e = a.get(2);
  std::vector<float> pixels = e.input.to_vector<float>();
  EXPECT_EQ(pixels[5], static_cast<float>((2 * 7 + 5) % 256) / 255.0f);
  EXPECT_EQ(e.target.item<int64_t>(), 9);
}

TEST(Mnist, BadFilesAreClearErrors) {
  TempDir temp("mnist_bad");
  const fs::path& dir = temp.path();
  std::string root = dir.string();
  auto expect_mnist_error = [&](const std::string& fragment) {
    expect_error<std::runtime_error>([&] { MNIST(root, false); }, fragment);
  };
  expect_mnist_error("cannot find t10k-images-idx3-ubyte or t10k-images-idx3-ubyte.gz in");

  write_mnist(dir, idx_images(3, 28, 28, 1234), idx_labels({1, 2, 3}));
  expect_mnist_error("t10k-images-idx3-ubyte: bad magic number 1234; expected 2051");
  write_mnist(dir, idx_labels({1, 2, 3}), idx_images(3));  // swapped
  expect_mnist_error("bad magic number 2049; expected 2051 for an IDX image file (2049 is a label");

  std::vector<uint8_t> images = idx_images(3);
  write_mnist(dir, std::vector<uint8_t>(images.begin(), images.end() - 100), idx_labels({1, 2, 3}));
  expect_mnist_error("file is truncated: its header announces 3 images of 28 x 28, 2368 bytes");
  write_mnist(dir, std::vector<uint8_t>(images.begin(), images.begin() + 10), idx_labels({1}));
  expect_mnist_error("truncated inside its header (10 of 16 bytes)");
  write_mnist(dir, std::vector<uint8_t>(images.begin(), images.begin() + 2), idx_labels({1}));
  expect_mnist_error("too short for an IDX header");
  images.push_back(0);
  write_mnist(dir, images, idx_labels({1, 2, 3}));
  expect_mnist_error("file has 1 bytes after the 3 images of 28 x 28");

  write_mnist(dir, idx_images(2, 28, 27), idx_labels({1, 2}));
  expect_mnist_error("images are 28 x 27; MNIST images are 28 x 28");
  write_mnist(dir, idx_images(3), idx_labels({1, 12, 3}));
  expect_mnist_error("t10k-labels-idx1-ubyte: label 12 at index 1 is not a digit 0-9");
  std::vector<uint8_t> labels = idx_labels({1, 2, 3});
  labels.pop_back();
  write_mnist(dir, idx_images(3), labels);
  expect_mnist_error("its header announces 3 labels, 11 bytes in all, but the file has 10");
  write_mnist(dir, idx_images(3), idx_labels({1, 2}));
  expect_mnist_error("holds 3 images but");
}

TEST(Mnist, CorruptAndTruncatedGzipAreClearErrors) {
  std::vector<uint8_t> good = read_bytes(fs::path(assets_mnist()) / "t10k-labels-idx1-ubyte.gz");
  ASSERT_GT(good.size(), 100u);
  TempDir temp("mnist_gzip");
  const fs::path& dir = temp.path();
  std::string root = dir.string();
  write_bytes(dir / "t10k-images-idx3-ubyte", idx_images(2000));
  fs::path labels = dir / "t10k-labels-idx1-ubyte.gz";

  write_bytes(labels, good);
  EXPECT_EQ(MNIST(root, false).size(), 2000);  // the untouched file loads

  write_bytes(labels, std::vector<uint8_t>(good.begin(), good.begin() + good.size() / 2));
  expect_error<std::runtime_error>([&] { MNIST(root, false); },
                                   "t10k-labels-idx1-ubyte.gz is a truncated gzip file");
  std::vector<uint8_t> no_trailer(good.begin(), good.end() - 4);
  write_bytes(labels, no_trailer);
  expect_error<std::runtime_error>([&] { MNIST(root, false); }, "truncated gzip");

  std::vector<uint8_t> corrupt = good;
  corrupt[3] = 0xE0;  // reserved header flag bits
  write_bytes(labels, corrupt);
  expect_error<std::runtime_error>([&] { MNIST(root, false); },
                                   "t10k-labels-idx1-ubyte.gz is not a valid gzip file");
  corrupt = good;
  corrupt[corrupt.size() - 6] ^= 0xFF;  // the CRC-32 in the trailer
  write_bytes(labels, corrupt);
  expect_error<std::runtime_error>([&] { MNIST(root, false); }, "not a valid gzip file");
  for (size_t at : {good.size() / 3, good.size() / 2}) {  // the compressed data itself
    corrupt = good;
    for (size_t k = at; k < at + 16; ++k) corrupt[k] ^= 0x5A;
    write_bytes(labels, corrupt);
    expect_error<std::runtime_error>([&] { MNIST(root, false); }, "gzip file");
  }
}

// ---- CIFAR-10 ---------------------------------------------------------------------------------

// Record r of a file: label (file * 3 + r) % 10, pixel (c, y, x) = (label * 31 + c * 50 + y + x) %
// 256.
std::vector<uint8_t> cifar_file(int file, int records, int bad_label_at = -1) {
  std::vector<uint8_t> out;
  for (int r = 0; r < records; ++r) {
    int label = (file * 3 + r) % 10;
    out.push_back(r == bad_label_at ? 10 : static_cast<uint8_t>(label));
    for (int c = 0; c < 3; ++c) {
      for (int y = 0; y < 32; ++y) {
        for (int x = 0; x < 32; ++x) out.push_back((label * 31 + c * 50 + y + x) % 256);
      }
    }
  }
  return out;
}

TEST(Cifar10, ReadsTheBinaryFormat) {
  TempDir temp("cifar");
  const fs::path& root = temp.path();
  fs::path dir = root / "cifar-10-batches-bin";  // the archive's layout
  fs::create_directories(dir);
  for (int f = 1; f <= 5; ++f) {
    write_bytes(dir / ("data_batch_" + std::to_string(f) + ".bin"), cifar_file(f, 2));
  }
  write_bytes(dir / "test_batch.bin", cifar_file(0, 3));
  CIFAR10 train(root.string(), true), test(dir.string(), false);
  ASSERT_EQ(train.size(), 10);
  ASSERT_EQ(test.size(), 3);
  Example e = train.get(5);  // file 3, record 1: label 0
  EXPECT_EQ(e.target.item<int64_t>(), (3 * 3 + 1) % 10);
  EXPECT_EQ(e.input.shape(), (Shape{3, 32, 32}));
  EXPECT_EQ(e.input.dtype(), kFloat32);
  int64_t label = e.target.item<int64_t>();
  for (int c : {0, 2}) {
    for (int y : {0, 17}) {
      for (int x : {0, 31}) {
        float expected = static_cast<float>((label * 31 + c * 50 + y + x) % 256) / 255.0f;
        EXPECT_EQ(e.input[c][y][x].item<float>(), expected) << c << " " << y << " " << x;
      }
    }
  }
  EXPECT_EQ(test.labels().to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_STREQ(CIFAR10::class_name(9), "truck");
}

TEST(Cifar10, BadFilesAreClearErrors) {
  TempDir temp("cifar_bad");
  const fs::path& dir = temp.path();
  std::string root = dir.string();
  expect_error<std::runtime_error>([&] { CIFAR10(root, false); }, "cannot find test_batch.bin");
  std::vector<uint8_t> bytes = cifar_file(0, 2);
  bytes.resize(bytes.size() - 5);
  write_bytes(dir / "test_batch.bin", bytes);
  expect_error<std::runtime_error>([&] { CIFAR10(root, false); },
                                   "test_batch.bin: file has 6141 bytes, not a whole number of "
                                   "3073-byte records");
  write_bytes(dir / "test_batch.bin", cifar_file(0, 3, /*bad_label_at=*/2));
  expect_error<std::runtime_error>([&] { CIFAR10(root, false); },
                                   "label 10 of record 2 is not a class 0-9");
  write_bytes(dir / "data_batch_1.bin", cifar_file(1, 1));
  expect_error<std::runtime_error>([&] { CIFAR10(root, true); }, "data_batch_2.bin");
}

// ---- transforms -------------------------------------------------------------------------------

TEST(Transforms, NormalizePerChannel) {
  Generator g(0);
  Tensor x = tensor({{1.0, 3.0}, {6.0, 10.0}}).reshape({2, 1, 2});
  wick::testing::expect_close(Normalize({1, 2}, {2, 4})(x, g), {0, 1, 1, 2}, {2, 1, 2});
  wick::testing::expect_close(Normalize({1}, {0.5})(x, g), {0, 4, 10, 18}, {2, 1, 2});
  expect_error<std::invalid_argument>(
      [&] {
        Normalize({1, 2, 3}, {1, 1, 1})(x, g);
      },
      "expected 3 channels");
  expect_error<std::invalid_argument>([] { Normalize({1}, {0}); }, "std must be positive");
  expect_error<std::invalid_argument>([] { Normalize({1, 2}, {1}); }, "of one length");
}

TEST(Transforms, RandomCropTakesEveryWindowOfThePaddedImage) {
  Tensor x = arange(1, 10, 1, kFloat32).reshape({1, 3, 3});
  Tensor padded = zeros({1, 5, 5});
  padded.narrow(1, 1, 3).narrow(2, 1, 3).copy_(x);
  RandomCrop crop(3, 1);
  std::vector<int> hits(9, 0);
  for (uint64_t seed = 0; seed < 200; ++seed) {
    Generator g(seed);
    Tensor out = crop(x, g);
    ASSERT_EQ(out.shape(), (Shape{1, 3, 3}));
    int found = -1;
    for (int top = 0; top < 3 && found < 0; ++top) {
      for (int left = 0; left < 3 && found < 0; ++left) {
        Tensor window = padded.narrow(1, top, 3).narrow(2, left, 3);
        if (window.to_vector<float>() == out.to_vector<float>()) found = top * 3 + left;
      }
    }
    ASSERT_GE(found, 0) << "seed " << seed << " gave a crop that is no window";
    hits[found] += 1;
  }
  for (int h : hits) EXPECT_GT(h, 0);  // all 9 windows occur
  Generator g(0);
  EXPECT_EQ(RandomCrop(3)(x, g).to_vector<float>(), x.to_vector<float>());  // no padding: itself
  expect_error<std::invalid_argument>([&] { RandomCrop(6, 1)(x, g); }, "larger than the padded");
}

TEST(Transforms, PadSurroundsTheImageWithZeros) {
  Tensor x = arange(1, 7, 1, kFloat32).reshape({1, 2, 3});
  Generator g(0);
  Tensor out = Pad(2)(x, g);
  ASSERT_EQ(out.shape(), (Shape{1, 6, 7}));
  EXPECT_EQ(out.narrow(1, 2, 2).narrow(2, 2, 3).to_vector<float>(), x.to_vector<float>());
  EXPECT_EQ(out.abs().sum().item<float>(), x.sum().item<float>());  // everything else is zero
  EXPECT_EQ(Pad(0)(x, g).to_vector<float>(), x.to_vector<float>());
  expect_error<std::invalid_argument>([] { Pad(-1); }, "padding must be non-negative; got -1");
  expect_error<std::invalid_argument>([&] { Pad(1)(arange(3), g); }, "Pad");
}

TEST(Transforms, RandomHorizontalFlip) {
  Tensor x = tensor({{1.0, 2.0, 3.0}});
  Generator g(0);
  EXPECT_EQ(RandomHorizontalFlip(1.0)(x, g).to_vector<float>(), (std::vector<float>{3, 2, 1}));
  EXPECT_EQ(RandomHorizontalFlip(0.0)(x, g).to_vector<float>(), (std::vector<float>{1, 2, 3}));
  int flips = 0;
  for (uint64_t seed = 0; seed < 1000; ++seed) {
    Generator gs(seed);
    flips += RandomHorizontalFlip(0.5)(x, gs).to_vector<float>()[0] == 3.0f;
  }
  EXPECT_GT(flips, 430);
  EXPECT_LT(flips, 570);
  expect_error<std::invalid_argument>([] { RandomHorizontalFlip(1.5); }, "p must be in [0, 1]");
}

TEST(Transforms, ReproducibleAcrossWorkerCountsAndNewEachEpoch) {
  Generator g(3);
  Tensor images = rand({24, 2, 6, 6}, {}, g);
  Tensor labels = arange(24);
  Transform augment =
      Compose({RandomCrop(6, 2), RandomHorizontalFlip(0.5), Normalize({0.5}, {0.25})});
  auto dataset = std::make_shared<TensorDataset>(images, labels, augment);
  std::vector<Epoch> reference;
  for (int64_t workers : {0, 1, 3}) {
    DataLoader loader(dataset, options(5, workers, true, 9));
    std::vector<Epoch> epochs = {run_epoch(loader), run_epoch(loader)};
    if (reference.empty()) {
      reference = epochs;
      continue;
    }
    EXPECT_EQ(epochs[0].inputs, reference[0].inputs) << workers << " workers";
    EXPECT_EQ(epochs[1].inputs, reference[1].inputs) << workers << " workers";
  }
  // Epoch 1 augments the examples anew: most of the 24 come out differently than in epoch 0.
  auto example = [](const Epoch& e, int64_t i) {
    size_t at = std::find(e.targets.begin(), e.targets.end(), i) - e.targets.begin();
    return std::vector<float>(e.inputs.begin() + at * 72, e.inputs.begin() + (at + 1) * 72);
  };
  int changed = 0;
  for (int64_t i = 0; i < 24; ++i) changed += example(reference[0], i) != example(reference[1], i);
  EXPECT_GT(changed, 12);
  // Outside a loader, get(i) is the transform seeded with (0, 0, i): repeatable.
  EXPECT_EQ(dataset->get(3).input.to_vector<float>(), dataset->get(3).input.to_vector<float>());
}

}  // namespace
}  // namespace wick::data
