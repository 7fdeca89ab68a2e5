#include "examples/common/trainer.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <vector>

#include <omp.h>

#include "core/ops/factory.h"
#include "distributed/distributed.h"
#include "nn/checkpoint.h"
#include "nn/functional.h"
#include "nn/grad_scaler.h"
#include "wick.h"

namespace wick::examples {

using Clock = std::chrono::steady_clock;

namespace {

struct EpochResult {
  double loss = 0, accuracy = 0, samples_per_second = 0, seconds = 0, wait_seconds = 0;
};

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

struct Trainer::State {
  std::string program;
  const Flags* flags = nullptr;
  // Mixed precision (--amp): the autocast dtype, and a loss scaler that is active for float16
  // (bfloat16 has float32's range and needs none).
  bool autocast = false;
  DType autocast_dtype = kBFloat16;
  amp::GradScaler scaler{amp::GradScalerOptions{65536.0, 2.0, 0.5, 2000, false}};
  // Data-parallel training (--ddp): every rank runs the program on its own shard; DDP averages
  // the gradients during backward, so the replicas stay equal. Only rank 0 prints (the others'
  // stdout goes to /dev/null), evaluates and writes files.
  std::shared_ptr<distributed::DistributedDataParallel> ddp;  // null without --ddp
  bool distributed = false;
  int rank = 0, world = 1;
  Device device;  // the CPU (mpi) or this rank's GPU (nccl)
  distributed::Timeline timeline;
  int64_t timeline_step = -1;  // --timeline: the global step to record
  std::string timeline_path;
  std::shared_ptr<data::LoaderTimeline> loader_timeline;  // --loader-timeline, else null
  std::string loader_timeline_path;
  bool main() const { return rank == 0; }

  void start_timeline();
  void finish_timeline(int64_t step);
  void finish_loader_timeline(int64_t epoch);
  EpochResult train_epoch(nn::Module& model, optim::Optimizer& optimizer,
                          optim::LRScheduler* scheduler, data::DataLoader& loader, int64_t epoch,
                          int64_t epochs, std::vector<Series>& curve, int64_t& global_step);
  EpochResult evaluate(nn::Module& model, data::DataLoader& loader) const;
};

void add_training_flags(Flags& flags, const TrainingDefaults& defaults) {
  flags.add("epochs", defaults.epochs, "epochs to train")
      .add("batch-size", defaults.batch_size, "examples per batch (per rank under --ddp)")
      .add("lr", defaults.lr, "learning rate")
      .add("workers", "2", "data-loader worker threads (0: load in the training thread)")
      .add("seed", "0", "seed for initialisation, shuffling, augmentation and dropout")
      .add("save", "", "write a training checkpoint here after every epoch")
      .add("resume", "", "continue from this training checkpoint")
      .add("metrics", defaults.metrics,
           "per-epoch metrics CSV (a .svg chart is written next to it)")
      .add("threads", "0", "OpenMP threads for the kernels (0: all cores)")
      .add("device", "cpu", "cpu or cuda (with --ddp nccl, each rank uses its own GPU)")
      .add("amp", "none", "mixed precision: none, bf16 or fp16 (fp16 adds dynamic loss scaling)")
      .add("steps-per-epoch", "0", "train at most this many batches per epoch (0: all)")
      .add("accumulate", "1",
           "average the gradients of this many batches before each optimizer step (under --ddp "
           "the backward passes before the last skip the all-reduce: DDP's no_sync)")
      .add("stop-after-epoch", "0",
           "end after this epoch, as if interrupted, with the schedule still set for --epochs: "
           "--resume continues the same run (0: run all epochs)")
      .add("json", "0", "1: end with one JSON line of results (for the benchmarks)")
      .add("ddp", "",
           "data-parallel training over the ranks mpirun starts: mpi (CPU) or nccl (one GPU per "
           "rank); a bare --ddp means mpi")
      .add("bucket-cap-mb", "25", "--ddp: gradient bucket size in MiB (the first bucket: 1 MiB)")
      .add("ddp-single-bucket", "0",
           "--ddp: 1 puts every gradient in one bucket, reduced after backward (no overlap)")
      .add("timeout", "30", "--ddp: seconds to wait for the other ranks before failing")
      .add("timeline", "",
           "write a Chrome trace of one training step here, and an SVG next to it (.svg)")
      .add("timeline-step", "10", "--timeline: the step to record (counted from 1)")
      .add("loader-timeline", "",
           "write a Chrome trace of the first epoch's data loading here (where each batch's "
           "time went), and an SVG next to it");
}

bool parse_training_flags(Flags& flags, int argc, char** argv) {
  // The flags parser wants a value after every flag; a bare "--ddp" means "--ddp mpi".
  std::vector<std::string> args(argv, argv + argc);
  for (size_t i = 0; i < args.size(); ++i) {
    bool bare = args[i] == "--ddp" && (i + 1 == args.size() || args[i + 1].rfind("--", 0) == 0);
    if (bare) args.insert(args.begin() + static_cast<std::ptrdiff_t>(i) + 1, "mpi");
  }
  std::vector<char*> pointers;
  for (std::string& a : args) pointers.push_back(a.data());
  return flags.parse(static_cast<int>(pointers.size()), pointers.data());
}

Trainer::Trainer(std::string program, const Flags& flags) : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.program = std::move(program);
  s.flags = &flags;
  s.device = Device(flags.str("device"));
  if (flags.has("loader-timeline")) {
    s.loader_timeline = std::make_shared<data::LoaderTimeline>();
    s.loader_timeline_path = flags.str("loader-timeline");
  }
  const std::string ddp = flags.str("ddp");
  if (!ddp.empty() && (ddp == "nccl") != s.device.is_cuda()) {
    // The backend decides where the gradients live: MPI reduces CPU tensors, NCCL GPU ones.
    throw std::invalid_argument("[" + s.program + "] --ddp " + ddp + " needs --device " +
                                (ddp == "nccl" ? "cuda" : "cpu") + "; got --device " +
                                flags.str("device"));
  }
  const std::string amp_mode = flags.str("amp");
  check_value(amp_mode == "none" || amp_mode == "bf16" || amp_mode == "fp16", s.program.c_str(),
              "--amp must be none, bf16 or fp16; got '", amp_mode, "'");
  check_value(flags.integer("epochs") > 0 && flags.integer("batch-size") > 0, s.program.c_str(),
              "--epochs and --batch-size must be positive");
  check_value(flags.integer("accumulate") >= 1, s.program.c_str(),
              "--accumulate must be at least 1; got ", flags.integer("accumulate"));
  s.autocast = amp_mode != "none";
  s.autocast_dtype = amp_mode == "fp16" ? kFloat16 : kBFloat16;
  if (amp_mode == "fp16") s.scaler = amp::GradScaler();
  if (!ddp.empty()) {
    distributed::InitOptions init;
    init.timeout = distributed::Seconds(flags.real("timeout"));
    distributed::init_process_group(ddp, init);
    s.distributed = true;
    s.rank = distributed::get_rank(), s.world = distributed::get_world_size();
    s.device = distributed::default_group().device();
    if (!s.main()) std::freopen("/dev/null", "w", stdout);
    // Ranks on one machine share its cores: by default each takes its share.
    int local = distributed::default_group().local_size();
    if (flags.integer("threads") == 0) {
      omp_set_num_threads(std::max(1, omp_get_num_procs() / local));
    }
  }
  if (flags.integer("threads") > 0) omp_set_num_threads(static_cast<int>(flags.integer("threads")));
}

Trainer::~Trainer() {
  if (state_->distributed) distributed::destroy_process_group();
}

Device Trainer::device() const { return state_->device; }
int Trainer::rank() const { return state_->rank; }
int Trainer::world_size() const { return state_->world; }

namespace {
// The seed a Python DataLoader draws at construction (python/wick/utils/data/dataloader.py).
uint64_t draw_loader_seed() {
  return static_cast<uint64_t>(randint(0, int64_t(1) << 62, Shape{1}).item<int64_t>());
}
}  // namespace

data::DataLoaderOptions Trainer::train_loader_options(size_t dataset_size) const {
  const State& s = *state_;
  data::DataLoaderOptions options;
  options.batch_size = s.flags->integer("batch-size");
  options.num_workers = s.flags->integer("workers");
  options.pin_memory = s.device.is_cuda();  // Note [pin_memory] in data/dataloader.h
  options.seed = draw_loader_seed();
  options.shuffle = true;
  options.timeline = s.loader_timeline;
  if (s.distributed) {
    // Each rank its own shard of every epoch, reshuffled per epoch. Every rank draws the same
    // seed, and the shards interleave the permutation one process would use with that seed, so N
    // ranks with batch B see the digits one process sees with batch N * B.
    options.shuffle = false;
    options.sampler = std::make_shared<data::DistributedSampler>(
        static_cast<int64_t>(dataset_size), s.world, s.rank, /*shuffle=*/true, options.seed);
  }
  return options;
}

int64_t Trainer::optimizer_steps(int64_t batches) const {
  int64_t k = state_->flags->integer("accumulate");
  return (batches + k - 1) / k;
}

data::DataLoaderOptions Trainer::test_loader_options(int64_t batch_size) const {
  data::DataLoaderOptions options;
  options.batch_size = batch_size;
  options.num_workers = state_->flags->integer("workers");
  options.pin_memory = state_->device.is_cuda();
  options.seed = draw_loader_seed();
  return options;
}

void Trainer::State::start_timeline() {
  if (ddp) {
    timeline.start(distributed::default_group());  // a barrier, then t = 0 on every rank
  } else {
    timeline.start_local();
  }
}

// Collective under --ddp: every rank's events go to rank 0, which writes the trace and the SVG.
void Trainer::State::finish_timeline(int64_t step) {
  timeline.stop();
  std::vector<std::vector<distributed::TimelineEvent>> ranks =
      ddp ? timeline.gather(distributed::default_group())
          : std::vector<std::vector<distributed::TimelineEvent>>{timeline.events()};
  if (!main()) return;
  std::string svg = std::filesystem::path(timeline_path).replace_extension(".svg").string();
  distributed::write_chrome_trace(timeline_path, ranks);
  distributed::write_timeline_svg(
      svg, ranks,
      program + " step " + std::to_string(step) + ", " + std::to_string(world) + " rank(s)");
  std::printf("\ntimeline of step %lld: %s (chrome://tracing, ui.perfetto.dev) and %s\n",
              static_cast<long long>(step), timeline_path.c_str(), svg.c_str());
}

// --loader-timeline: the first epoch's spans, then recording stops (the loader keeps the
// timeline, so later epochs would otherwise add to it).
void Trainer::State::finish_loader_timeline(int64_t epoch) {
  if (!loader_timeline->recording()) return;
  loader_timeline->set_recording(false);
  if (!main()) return;
  std::string svg = std::filesystem::path(loader_timeline_path).replace_extension(".svg").string();
  loader_timeline->write_chrome_trace(loader_timeline_path);
  loader_timeline->write_svg(svg, program + ": data loading in epoch " + std::to_string(epoch) +
                                      ", " + std::to_string(flags->integer("workers")) +
                                      " workers");
  std::printf("\nloader timeline of epoch %lld: %s and %s\n  %s\n", static_cast<long long>(epoch),
              loader_timeline_path.c_str(), svg.c_str(), loader_timeline->summary().c_str());
}

EpochResult Trainer::State::train_epoch(nn::Module& model, optim::Optimizer& optimizer,
                                        optim::LRScheduler* scheduler, data::DataLoader& loader,
                                        int64_t epoch, int64_t epochs, std::vector<Series>& curve,
                                        int64_t& global_step) {
  model.train();
  int64_t steps = loader.size();
  if (flags->integer("steps-per-epoch", 0) > 0) {
    steps = std::min(steps, flags->integer("steps-per-epoch"));
  }
  ProgressBar bar("epoch " + std::to_string(epoch) + "/" + std::to_string(epochs), steps);
  // --accumulate K: batches [g*K, g*K + K) make one optimizer step; each one's loss is divided by
  // the group's size, so the summed gradients are the mean over the group's examples when the
  // batches are equal (the last group of an epoch may be shorter).
  const int64_t accumulate = flags->integer("accumulate");
  auto start = Clock::now();
  double loss_sum = 0;
  int64_t correct = 0, seen = 0, batches = 0;
  char status[128];
  for (data::Batch& batch : loader) {
    if (batches == steps) break;  // --steps-per-epoch
    // --timeline records one step: forward, backward (with DDP's buckets), optimizer.
    const int64_t position = batches % accumulate;  // in this batch's group
    const int64_t group = std::min(accumulate, steps - (batches - position));
    const bool steps_now = position + 1 == group;
    distributed::Timeline* recording =
        global_step + 1 == timeline_step && steps_now ? &timeline : nullptr;
    if (recording) start_timeline();
    Tensor input, target, logits, loss;
    {
      data::LoaderSpan span("to device");  // recorded only under --loader-timeline
      input = batch.input.to(device);
      target = batch.target.to(device);
    }
    {
      data::LoaderSpan step_span("train step");
      // DDP's no_sync() for every batch of a group but the last: the forward decides whether
      // its backward all-reduces, so the whole forward and backward are inside.
      std::optional<distributed::DistributedDataParallel::NoSyncGuard> no_sync;
      if (ddp && !steps_now) no_sync.emplace(ddp.get());
      {
        distributed::Timeline::Scope scope(recording, distributed::Lane::Compute, "forward");
        AutocastGuard guard(input.device().type, autocast_dtype, autocast);
        logits = model(input);
        loss = nn::F::cross_entropy(logits, target);
      }
      {
        distributed::Timeline::Scope scope(recording, distributed::Lane::Compute, "backward");
        if (position == 0) optimizer.zero_grad();
        scaler.scale(group > 1 ? loss / static_cast<double>(group) : loss).backward();
      }
      no_sync.reset();
      if (steps_now) {
        distributed::Timeline::Scope scope(recording, distributed::Lane::Compute, "optimizer step");
        scaler.step(optimizer);
        scaler.update();
        if (scheduler) scheduler->step();
      }
    }
    if (steps_now) ++global_step;
    if (recording) finish_timeline(global_step);
    double batch_loss = loss.item<double>();
    int64_t n = target.size(0);
    loss_sum += batch_loss * n;
    correct += (logits.argmax(1) == target).sum().item<int64_t>();
    seen += n;
    // x in epochs, so the loss and the per-epoch accuracies share one axis in the chart
    curve[0].x.push_back(double(epoch - 1) + double(batches + 1) / double(steps));
    curve[0].y.push_back(batch_loss);
    std::snprintf(status, sizeof(status), "loss %.4f  acc %5.1f%%  %6.0f samples/s",
                  loss_sum / seen, 100.0 * correct / seen, world * seen / seconds_since(start));
    bar.update(++batches, status);
  }
  if (ddp) {  // the epoch's figures over all ranks' shards
    Tensor totals = tensor(std::vector<double>{loss_sum, double(correct), double(seen)}).to(device);
    distributed::all_reduce(totals);
    std::vector<double> sums = totals.cpu().to_vector<double>();
    loss_sum = sums[0];
    correct = static_cast<int64_t>(sums[1]);
    seen = static_cast<int64_t>(sums[2]);
  }
  EpochResult r;
  r.seconds = seconds_since(start);
  r.loss = loss_sum / seen;
  r.accuracy = static_cast<double>(correct) / seen;
  r.samples_per_second = seen / r.seconds;
  r.wait_seconds = loader.stats().epoch.wait_seconds;
  std::snprintf(status, sizeof(status), "loss %.4f  acc %5.1f%%  %6.0f samples/s", r.loss,
                100 * r.accuracy, r.samples_per_second);
  bar.finish(status);
  return r;
}

EpochResult Trainer::State::evaluate(nn::Module& model, data::DataLoader& loader) const {
  NoGradGuard no_grad;
  model.eval();
  double loss_sum = 0;
  int64_t correct = 0, seen = 0;
  for (data::Batch& batch : loader) {
    Tensor input = batch.input.to(device), target = batch.target.to(device);
    Tensor logits = model(input);
    nn::F::CrossEntropyOptions sum;
    sum.reduction = nn::F::Reduction::Sum;
    loss_sum += nn::F::cross_entropy(logits, target, sum).item<double>();
    correct += (logits.argmax(1) == target).sum().item<int64_t>();
    seen += target.size(0);
  }
  return {loss_sum / seen, static_cast<double>(correct) / seen, 0, 0, 0};
}

void Trainer::fit(std::shared_ptr<nn::Module> model, optim::Optimizer& optimizer,
                  optim::LRScheduler* scheduler, data::DataLoader& train_loader,
                  data::DataLoader& test_loader, const std::string& model_name) {
  State& s = *state_;
  const Flags& flags = *s.flags;
  const int64_t epochs = flags.integer("epochs");
  nn::TrainingState state;
  if (flags.has("resume")) {
    state = nn::load_checkpoint(flags.str("resume"), *model, optimizer, scheduler);
    if (!state.extra.empty() && s.scaler.is_enabled()) s.scaler.load_state_dict(state.extra);
    std::printf("resumed from %s after epoch %lld\n", flags.str("resume").c_str(),
                static_cast<long long>(state.epoch));
  }
  std::printf("%s\n%lld parameters; %lld training and %lld test examples; %lld workers\n",
              model->repr().c_str(), static_cast<long long>(model->num_parameters()),
              static_cast<long long>(train_loader.dataset().size()),
              static_cast<long long>(test_loader.dataset().size()),
              static_cast<long long>(flags.integer("workers")));
  if (s.distributed) {  // after resume: construction copies rank 0's state to every rank
    distributed::DDPOptions options;
    options.bucket_cap_mb = flags.real("bucket-cap-mb");
    options.single_bucket = flags.integer("ddp-single-bucket") != 0;
    s.ddp = std::make_shared<distributed::DistributedDataParallel>(model, nullptr, options);
    std::printf("DDP: %d ranks (%s backend), %lld examples per rank per batch, %d threads each\n%s",
                s.world, flags.str("ddp").c_str(),
                static_cast<long long>(flags.integer("batch-size")), omp_get_max_threads(),
                s.ddp->reducer().explain().c_str());
  }
  if (flags.has("timeline")) {
    s.timeline_step = flags.integer("timeline-step");
    s.timeline_path = flags.str("timeline");
    if (s.ddp) s.ddp->reducer().set_timeline(&s.timeline);
  }
  nn::Module& trained = s.ddp ? static_cast<nn::Module&>(*s.ddp) : *model;

  const std::string metrics_path = flags.str("metrics");
  const std::string chart = std::filesystem::path(metrics_path).replace_extension(".svg").string();
  std::optional<CsvWriter> csv;  // rank 0 only
  if (s.main()) {
    csv.emplace(metrics_path, std::vector<std::string>{
                                  "epoch", "train_loss", "train_accuracy", "test_loss",
                                  "test_accuracy", "samples_per_second", "seconds",
                                  "loader_wait_seconds", "loss_scale", "skipped_steps", "lr"});
  }
  std::vector<Series> loss_curve = {{"training loss (per batch)", {}, {}}};
  std::vector<Series> accuracy_curve = {{"train accuracy", {}, {}}, {"test accuracy", {}, {}}};
  double baseline_rss = current_rss_mib();
  double training_peak_rss = 0, training_peak_tensors = 0;
  auto start = Clock::now();
  double total_samples = 0, total_wait = 0, total_train_seconds = 0;
  EpochResult test{};
  int64_t last_epoch = epochs;
  if (flags.integer("stop-after-epoch", 0) > 0) {
    last_epoch = std::min(epochs, flags.integer("stop-after-epoch"));
  }
  for (int64_t epoch = state.epoch + 1; epoch <= last_epoch; ++epoch) {
    train_loader.set_epoch(epoch - 1);  // the shuffle order depends only on (seed, epoch)
    double lr = optimizer.param_groups()[0].options.at("lr");
    if (s.loader_timeline) s.loader_timeline->clear();  // t = 0 at this epoch's start
    EpochResult train = s.train_epoch(trained, optimizer, scheduler, train_loader, epoch, epochs,
                                      loss_curve, state.global_step);
    if (s.loader_timeline) s.finish_loader_timeline(epoch);
    if (training_peak_rss == 0) {  // memory of training alone, before evaluation's big batches
      training_peak_rss = peak_rss_mib();
      training_peak_tensors = cpu_allocator()->stats().peak_allocated_bytes / 1048576.0;
    }
    if (s.main()) test = s.evaluate(*model, test_loader);
    std::printf("  test: loss %.4f  accuracy %.2f%%  (loader wait %.2f s of %.2f s)\n", test.loss,
                100 * test.accuracy, train.wait_seconds, train.seconds);
    if (csv) {
      csv->row({double(epoch), train.loss, train.accuracy, test.loss, test.accuracy,
                train.samples_per_second, train.seconds, train.wait_seconds,
                s.scaler.is_enabled() ? s.scaler.get_scale() : 1.0,
                double(s.scaler.skipped_steps()), lr});
    }
    accuracy_curve[0].x.push_back(double(epoch));
    accuracy_curve[0].y.push_back(100 * train.accuracy);
    accuracy_curve[1].x.push_back(double(epoch));
    accuracy_curve[1].y.push_back(100 * test.accuracy);
    if (s.main()) {
      write_svg_chart(chart, s.program + " --model " + model_name, {loss_curve, accuracy_curve},
                      {"loss", "accuracy (%)"}, "epoch");
    }
    total_samples += train.samples_per_second * train.seconds;
    total_wait += train.wait_seconds;
    total_train_seconds += train.seconds;
    state.epoch = epoch;
    if (flags.has("save") && s.main()) {
      state.info["command"] = flags.command_line();
      if (s.scaler.is_enabled()) state.extra = s.scaler.state_dict();
      nn::save_checkpoint(flags.str("save"), *model, optimizer, scheduler, state);
    }
  }
  double seconds = seconds_since(start);
  double samples_per_second = total_train_seconds > 0 ? total_samples / total_train_seconds : 0.0;
  std::printf(
      "summary: %s, %lld epochs, test accuracy %.2f%%, %.1f s (%.0f training samples/s, loader "
      "wait %.2f s), peak tensor memory %.1f MiB\n",
      model_name.c_str(), static_cast<long long>(epochs), 100 * test.accuracy, seconds,
      samples_per_second, total_wait, cpu_allocator()->stats().peak_allocated_bytes / 1048576.0);
  std::printf("metrics: %s (chart: %s)\n", metrics_path.c_str(), chart.c_str());
  double comm_wait_share = 0;
  if (s.ddp) {  // Note [DDP counters]: how long rank 0 waited for communication
    const distributed::ReducerStats& r = s.ddp->reducer().stats();
    comm_wait_share = total_train_seconds > 0 ? r.comm_wait_seconds / total_train_seconds : 0.0;
    std::printf(
        "ddp: %d ranks, %lld all-reduces of %.1f MiB in all; rank 0 waited %.2f s for "
        "communication after backward, %.1f%% of its training time\n",
        s.world, static_cast<long long>(r.buckets_launched), r.bytes_reduced / 1048576.0,
        r.comm_wait_seconds, 100 * comm_wait_share);
  }
  if (flags.integer("json") != 0) {
    std::printf(
        "{\"framework\": \"wick\", \"model\": \"%s\", \"samples_per_second\": %.1f, "
        "\"threads\": %d, \"peak_rss_mib\": %.1f, \"rss_growth_mib\": %.1f, "
        "\"peak_tensor_mib\": %.1f, \"test_accuracy\": %.4f, \"world_size\": %d, "
        "\"comm_wait_share\": %.4f}\n",
        model_name.c_str(), samples_per_second, omp_get_max_threads(), training_peak_rss,
        training_peak_rss - baseline_rss, training_peak_tensors, test.accuracy, s.world,
        comm_wait_share);
  }
}

}  // namespace wick::examples
