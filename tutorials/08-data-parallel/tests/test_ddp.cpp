// Lab 08's graded tests, run on 2 MPI ranks: the ring all-reduce against MPI_Allreduce (result
// and speed), the bucket assignment, and the bucketed, overlapped gradient averaging against a
// plain all-reduce after backward, with one step's timeline. Rank 0 prints.
#include <cmath>
#include <cstdio>
#include <random>
#include <sstream>

#include "core/ops.h"
#include "ddp_lab.h"
#include "distributed/process_group.h"
#include "lab.h"

using namespace lab08;
namespace dist = wick::distributed;

static MPI_Comm comm() {
  static MPI_Comm c = [] {
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    return dup;
  }();
  return c;
}

LAB_TEST(ring_matches_mpi_allreduce,
         "ring_all_reduce sums like MPI_Allreduce (uneven chunks too)") {
  int rank = dist::get_rank();
  for (int64_t n : {1, 2, 7, 1000, 100003}) {
    std::vector<float> mine(n), ref(n);
    std::mt19937 rng(unsigned(rank * 1000 + n));
    for (int64_t i = 0; i < n; ++i) mine[i] = float(int(rng() % 100));
    MPI_Allreduce(mine.data(), ref.data(), int(n), MPI_FLOAT, MPI_SUM, comm());
    ring_all_reduce(mine.data(), n, comm());
    for (int64_t i = 0; i < n; ++i) LAB_CHECK_EQ(mine[i], ref[i]);
  }
}

LAB_TEST(ring_speed, "ring_all_reduce of 16 MiB: time and bus bandwidth next to MPI's") {
  const int64_t n = 4 << 20;
  std::vector<float> a(n, 1.0f), b(n, 1.0f);
  auto time = [&](auto&& f) {
    double best = 1e30;
    for (int r = 0; r < 3; ++r) {
      MPI_Barrier(comm());
      double t0 = MPI_Wtime();
      f();
      best = std::min(best, MPI_Wtime() - t0);
    }
    return best;
  };
  double ring = time([&] { ring_all_reduce(a.data(), n, comm()); });
  double mpi =
      time([&] { MPI_Allreduce(MPI_IN_PLACE, b.data(), int(n), MPI_FLOAT, MPI_SUM, comm()); });
  int world = dist::get_world_size();
  double factor = 2.0 * (world - 1) / world;  // nccl-tests' busbw = algbw * 2(n-1)/n
  auto busbw = [&](double s) { return double(n) * 4 / s / 1e9 * factor; };
  char line[200];
  std::snprintf(line, sizeof line,
                "ring %.2f ms (bus %.2f GB/s), MPI_Allreduce %.2f ms (bus %.2f GB/s)", ring * 1e3,
                busbw(ring), mpi * 1e3, busbw(mpi));
  lab::figure("all-reduce of 16 MiB on " + std::to_string(world) + " ranks", line);
  LAB_CHECK(a[0] == std::pow(float(world), 3.0f));  // summed three times
}

LAB_TEST(buckets_reverse_order, "assign_buckets: reverse order, first bucket small, never split") {
  std::vector<size_t> bytes = {400, 100, 300, 300, 200, 600, 50};
  auto b = assign_buckets(bytes, 700, 250);
  std::vector<std::vector<size_t>> want = {{6, 5}, {4, 3, 2}, {1, 0}};
  LAB_CHECK(b == want);
  auto one = assign_buckets(bytes, 1 << 20, 1 << 20);
  LAB_CHECK(one.size() == 1 && one[0].size() == bytes.size() && one[0].front() == 6);
}

// A 6-layer MLP; each rank feeds its own batch.
struct Model {
  std::vector<wick::Tensor> params;
  explicit Model(int width) {
    wick::manual_seed(42);  // the same initial weights on every rank
    for (int l = 0; l < 6; ++l)
      params.push_back((wick::randn({width, width}) * (1.0 / std::sqrt(width))).requires_grad_());
  }
  wick::Tensor loss(const wick::Tensor& x) const {
    wick::Tensor h = x;
    for (const wick::Tensor& w : params) h = h.matmul(w).tanh();
    return (h * h).sum();
  }
};

LAB_TEST(bucketed_grads_are_the_mean, "GradBucketer: every .grad is the mean over ranks") {
  const int width = 128;
  Model a(width), b(width);
  GradBucketer bucketer(a.params, 2 * width * width * 4, width * width * 4);
  wick::manual_seed(uint64_t(100 + dist::get_rank()));  // different data per rank
  wick::Tensor x = wick::randn({32, width});
  bucketer.start_step();
  a.loss(x).backward();
  bucketer.finish();
  b.loss(x).backward();  // the reference: plain backward, then one all-reduce per gradient
  for (size_t i = 0; i < b.params.size(); ++i) {
    wick::Tensor g = b.params[i].grad();
    dist::all_reduce(g);
    g.div_(dist::get_world_size());
    const float* got = a.params[i].grad().data<float>();
    const float* want = g.data<float>();
    for (int64_t e = 0; e < g.numel(); ++e)
      LAB_CHECK(std::abs(got[e] - want[e]) <= 1e-5f * (1 + std::abs(want[e])));
  }
  LAB_CHECK_EQ(bucketer.buckets.size(), 4u);  // 1 + 2 + 2 + 1 layers
}

LAB_TEST(overlap_and_timeline, "buckets launch during backward; one step's timeline") {
  const int width = 384;
  Model m(width);
  GradBucketer bucketer(m.params, 2 * width * width * 4, width * width * 4);
  wick::manual_seed(uint64_t(7 + dist::get_rank()));
  wick::Tensor x = wick::randn({256, width});
  wick::Tensor loss = m.loss(x);
  bucketer.start_step();
  loss.backward();
  double backward_done = bucketer.ms_since_start();
  bucketer.finish();
  double step_done = bucketer.ms_since_start();
  std::ostringstream t;
  t << "\n    backward ends at " << backward_done << " ms, gradients averaged at " << step_done
    << " ms";
  for (size_t b = 0; b < bucketer.buckets.size(); ++b) {
    const BucketTimes& bt = bucketer.times[b];
    t << "\n    bucket " << b << " (" << bucketer.buckets[b].size() << " params, "
      << bucketer.flat[b].nbytes() / 1024 << " KiB): ready " << bt.ready_ms << " ms, launched "
      << bt.launched_ms << " ms, finished by " << bt.done_ms << " ms";
  }
  // A picture of the two lanes, one character per step/40 of time.
  auto bar = [&](double from, double to, char c) {
    std::string s(40, ' ');
    for (int i = 0; i < 40; ++i) {
      double at = step_done * (i + 0.5) / 40;
      if (at >= from && at <= to) s[i] = c;
    }
    return s;
  };
  t << "\n    compute |" << bar(0, backward_done, '=') << "|";
  for (size_t b = 0; b < bucketer.buckets.size(); ++b)
    t << "\n    comm  " << b << " |"
      << bar(bucketer.times[b].launched_ms, bucketer.times[b].done_ms, char('0' + b)) << "|";
  lab::figure("one step's timeline (rank 0)", t.str());
  LAB_CHECK(bucketer.times[0].launched_ms < backward_done);  // overlapped with backward
  LAB_CHECK(bucketer.times[0].launched_ms <= bucketer.times.back().launched_ms);
}

int main(int argc, char** argv) {
  dist::init_process_group("mpi");
  if (dist::get_rank() != 0) std::freopen("/dev/null", "w", stdout);
  int failed = lab::run_all(argc, argv);
  int any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, comm());
  dist::destroy_process_group();
  return any == 0 ? 0 : 1;
}
