// Code that several threads run at once, for the ThreadSanitizer build (wick_tsan_tests; the tests
// pass in the ordinary build too): independent graphs built and differentiated on their own
// threads, the shared default generator and CPU allocator, grad mode being per thread, and a data
// loader's workers beside training on the main thread.
#include <atomic>
#include <thread>
#include <vector>

#include "data/dataloader.h"
#include "data/dataset.h"
#include "tests/cpp/test_util.h"

namespace wick {
namespace {

// Runs `body(i)` on `n` threads at once and joins them.
template <class Body>
void on_threads(int n, Body body) {
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) threads.emplace_back(body, i);
  for (std::thread& t : threads) t.join();
}

TEST(Threads, IndependentGraphsBackwardOnTheirOwnThreads) {
  std::vector<double> grads(4);
  on_threads(4, [&](int i) {
    Tensor x = full({3, 5}, static_cast<double>(i + 1)).requires_grad_();
    Tensor y = (x * x).sum();  // dy/dx = 2x
    y.backward();
    grads[i] = x.grad().sum().item<double>();
  });
  for (int i = 0; i < 4; ++i) EXPECT_DOUBLE_EQ(grads[i], 2.0 * (i + 1) * 15) << i;
}

TEST(Threads, DefaultGeneratorAndAllocatorAreShared) {
  manual_seed(5);
  std::atomic<int64_t> drawn{0};
  on_threads(4, [&](int) {
    for (int k = 0; k < 50; ++k) {
      Tensor t = randn({64});  // draws from the one default generator, allocates, frees
      drawn += t.numel();
    }
  });
  EXPECT_EQ(drawn.load(), 4 * 50 * 64);
}

TEST(Threads, GradModeIsPerThread) {
  Tensor w = ones({2}).requires_grad_();
  std::atomic<bool> other_records{false};
  {
    NoGradGuard off;  // only this thread stops recording
    std::thread t([&] { other_records = (w * 2).requires_grad(); });
    t.join();
    EXPECT_FALSE((w * 2).requires_grad());
  }
  EXPECT_TRUE(other_records.load());
}

// A dataset whose examples are their index, for the loader test below.
class Indices : public data::Dataset {
 public:
  int64_t size() const override { return 64; }
  data::Example get(int64_t i) const override {
    return {full({4}, static_cast<double>(i)), scalar_tensor(i, kInt64)};
  }
};

TEST(Threads, LoaderWorkersBesideTrainingOnTheMainThread) {
  data::DataLoaderOptions options;
  options.batch_size = 8;
  options.num_workers = 3;
  data::DataLoader loader(std::make_shared<Indices>(), options);
  Tensor w = zeros({4}).requires_grad_();
  int64_t seen = 0;
  for (int epoch = 0; epoch < 2; ++epoch) {
    for (const data::Batch& batch : loader) {
      Tensor loss = (batch.input * w).sum();
      loss.backward();
      seen += batch.target.numel();
    }
  }
  EXPECT_EQ(seen, 2 * 64);
  // Each element of w collects the sum of every example's value, twice.
  testing::expect_close(w.grad(), std::vector<double>(4, 2.0 * (63 * 64 / 2)), Shape{4});
}

}  // namespace
}  // namespace wick
