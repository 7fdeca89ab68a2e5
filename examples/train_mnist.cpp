// Trains an MLP or the classic CNN on MNIST digits and reports test accuracy each epoch.
//
//   ./build/examples/train_mnist --model cnn --epochs 3
//
// By default it reads the 10,000-digit subset committed in assets/mnist (8,000 training and
// 2,000 test digits); --data DIR reads the official MNIST files (train-images-idx3-ubyte[.gz],
// ...) from DIR instead. Every epoch appends a row to the metrics CSV and redraws an SVG chart of
// the training curves next to it; --save writes a training checkpoint after every epoch and
// --resume continues from one, giving the same results as an uninterrupted run.
//
// Data-parallel training: mpirun starts N copies, each one rank; --ddp wraps the model in
// DistributedDataParallel and gives each rank its shard of every epoch (--batch-size is per rank):
//
//   mpirun -np 2 ./build/examples/train_mnist --ddp            # as root: add --allow-run-as-root
//   mpirun -np 2 ./build/examples/train_mnist --ddp --timeline runs/ddp_step.json
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>

#include <omp.h>

#include "data/data.h"
#include "distributed/distributed.h"
#include "examples/common/cli.h"
#include "examples/mnist_models.h"
#include "nn/checkpoint.h"
#include "nn/functional.h"
#include "nn/grad_scaler.h"
#include "nn/lr_scheduler.h"
#include "nn/optim.h"
#include "wick.h"

using namespace wick;
using Clock = std::chrono::steady_clock;

namespace {

struct EpochResult {
  double loss = 0, accuracy = 0, samples_per_second = 0, seconds = 0, wait_seconds = 0;
};

std::unique_ptr<optim::Optimizer> make_optimizer(const std::string& name, nn::Module& model,
                                                 double lr) {
  if (name == "adam")
    return std::make_unique<optim::Adam>(model.parameters(), optim::AdamOptions{lr});
  if (name == "adamw") {
    optim::AdamOptions o = optim::AdamW::default_options();
    o.lr = lr;
    return std::make_unique<optim::AdamW>(model.parameters(), o);
  }
  if (name == "sgd") {
    optim::SGDOptions o;
    o.lr = lr;
    o.momentum = 0.9;
    return std::make_unique<optim::SGD>(model.parameters(), o);
  }
  throw std::invalid_argument("[train_mnist] --optimizer must be adam, adamw or sgd; got '" + name +
                              "'");
}

// Mixed precision (--amp): the autocast dtype, and a loss scaler that is active for float16
// (bfloat16 has float32's range and needs none).
struct Precision {
  bool autocast = false;
  DType dtype = kBFloat16;
  amp::GradScaler scaler{amp::GradScalerOptions{65536.0, 2.0, 0.5, 2000, false}};
};

// ---- data-parallel training (--ddp) -------------------------------------------------------------
// Every rank runs this program on its own shard; DDP averages the gradients during backward, so
// the replicas stay equal. Only rank 0 prints (the others' stdout goes to /dev/null), evaluates
// and writes files.
struct Ddp {
  std::shared_ptr<distributed::DistributedDataParallel> model;  // null without --ddp
  int rank = 0, world = 1;
  Device device;  // where the group's tensors live: the CPU (mpi) or this rank's GPU (nccl)
  distributed::Timeline timeline;
  int64_t timeline_step = -1;  // --timeline: the global step to record
  std::string timeline_path;
  bool main() const { return rank == 0; }
};

// The flags parser wants a value after every flag; a bare "--ddp" means "--ddp mpi".
std::vector<std::string> expand_bare_ddp(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  for (size_t i = 0; i < args.size(); ++i) {
    bool bare = args[i] == "--ddp" && (i + 1 == args.size() || args[i + 1].rfind("--", 0) == 0);
    if (bare) args.insert(args.begin() + static_cast<std::ptrdiff_t>(i) + 1, "mpi");
  }
  return args;
}

void start_timeline(Ddp& ddp) {
  if (ddp.model) {
    ddp.timeline.start(distributed::default_group());  // a barrier, then t = 0 on every rank
  } else {
    ddp.timeline.start_local();
  }
}

// Collective under --ddp: every rank's events go to rank 0, which writes the trace and the SVG.
void finish_timeline(Ddp& ddp, int64_t step) {
  ddp.timeline.stop();
  std::vector<std::vector<distributed::TimelineEvent>> ranks =
      ddp.model ? ddp.timeline.gather(distributed::default_group())
                : std::vector<std::vector<distributed::TimelineEvent>>{ddp.timeline.events()};
  if (!ddp.main()) return;
  std::string svg = std::filesystem::path(ddp.timeline_path).replace_extension(".svg").string();
  distributed::write_chrome_trace(ddp.timeline_path, ranks);
  distributed::write_timeline_svg(
      svg, ranks,
      "train_mnist step " + std::to_string(step) + ", " + std::to_string(ddp.world) + " rank(s)");
  std::printf("\ntimeline of step %lld: %s (chrome://tracing, ui.perfetto.dev) and %s\n",
              static_cast<long long>(step), ddp.timeline_path.c_str(), svg.c_str());
}

EpochResult train_epoch(nn::Module& model, optim::Optimizer& optimizer, data::DataLoader& loader,
                        Precision& precision, int64_t epoch, int64_t epochs,
                        std::vector<examples::Series>& curve, int64_t& global_step, Ddp& ddp) {
  model.train();
  examples::ProgressBar bar("epoch " + std::to_string(epoch) + "/" + std::to_string(epochs),
                            loader.size());
  auto start = Clock::now();
  double loss_sum = 0;
  int64_t correct = 0, seen = 0, batches = 0;
  char status[128];
  for (data::Batch& batch : loader) {
    // --timeline records one step: forward, backward (with DDP's buckets), optimizer.
    distributed::Timeline* timeline =
        global_step + 1 == ddp.timeline_step ? &ddp.timeline : nullptr;
    if (timeline) start_timeline(ddp);
    Tensor input = batch.input.to(ddp.device), target = batch.target.to(ddp.device), logits, loss;
    {
      distributed::Timeline::Scope scope(timeline, distributed::Lane::Compute, "forward");
      AutocastGuard autocast(input.device().type, precision.dtype, precision.autocast);
      logits = model(input);
      loss = nn::F::cross_entropy(logits, target);
    }
    {
      distributed::Timeline::Scope scope(timeline, distributed::Lane::Compute, "backward");
      optimizer.zero_grad();
      precision.scaler.scale(loss).backward();
    }
    {
      distributed::Timeline::Scope scope(timeline, distributed::Lane::Compute, "optimizer step");
      precision.scaler.step(optimizer);
      precision.scaler.update();
    }
    ++global_step;
    if (timeline) finish_timeline(ddp, global_step);
    double batch_loss = loss.item<double>();
    int64_t n = target.size(0);
    loss_sum += batch_loss * n;
    correct += (logits.argmax(1) == target).sum().item<int64_t>();
    seen += n;
    // x in epochs, so the loss and the per-epoch accuracies share one axis in the chart
    curve[0].x.push_back(double(epoch - 1) + double(batches + 1) / double(loader.size()));
    curve[0].y.push_back(batch_loss);
    double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    std::snprintf(status, sizeof(status), "loss %.4f  acc %5.1f%%  %6.0f samples/s",
                  loss_sum / seen, 100.0 * correct / seen, ddp.world * seen / seconds);
    bar.update(++batches, status);
  }
  if (ddp.model) {  // the epoch's figures over all ranks' shards
    Tensor totals =
        tensor(std::vector<double>{loss_sum, double(correct), double(seen)}).to(ddp.device);
    distributed::all_reduce(totals);
    std::vector<double> sums = totals.cpu().to_vector<double>();
    loss_sum = sums[0];
    correct = static_cast<int64_t>(sums[1]);
    seen = static_cast<int64_t>(sums[2]);
  }
  EpochResult r;
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  r.loss = loss_sum / seen;
  r.accuracy = static_cast<double>(correct) / seen;
  r.samples_per_second = seen / r.seconds;
  r.wait_seconds = loader.stats().epoch.wait_seconds;
  std::snprintf(status, sizeof(status), "loss %.4f  acc %5.1f%%  %6.0f samples/s", r.loss,
                100 * r.accuracy, r.samples_per_second);
  bar.finish(status);
  return r;
}

EpochResult evaluate(nn::Module& model, data::DataLoader& loader, Device device) {
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

}  // namespace

int main(int argc, char** argv) try {
  examples::Flags flags("train_mnist", "Train an MLP or a CNN on MNIST digits with wick.");
  flags.add("model", "cnn", "mlp (784-256-10) or cnn (the classic two-conv network)")
      .add("epochs", "3", "epochs to train")
      .add("batch-size", "64", "examples per batch")
      .add("lr", "0.001", "learning rate")
      .add("optimizer", "adam", "adam, adamw or sgd (momentum 0.9)")
      .add("workers", "2", "data-loader worker threads (0: load in the training thread)")
      .add("seed", "0", "seed for initialisation, shuffling and dropout")
      .add("data", "assets/mnist", "folder with MNIST IDX files (raw or .gz)")
      .add("save", "", "write a training checkpoint here after every epoch")
      .add("resume", "", "continue from this training checkpoint")
      .add("metrics", "runs/mnist_metrics.csv",
           "per-epoch metrics CSV (a .svg chart is written next to it)")
      .add("threads", "0", "OpenMP threads for the kernels (0: all cores)")
      .add("device", "cpu", "cpu or cuda (with --ddp nccl, each rank uses its own GPU)")
      .add("amp", "none", "mixed precision: none, bf16 or fp16 (fp16 adds dynamic loss scaling)")
      .add("json", "0", "1: end with one JSON line of results (for benchmarks/mnist_vs_pytorch.py)")
      .add("ddp", "",
           "data-parallel training over the ranks mpirun starts: mpi (CPU) or nccl (one GPU per "
           "rank); a bare --ddp means mpi")
      .add("bucket-cap-mb", "25", "--ddp: gradient bucket size in MiB (the first bucket: 1 MiB)")
      .add("ddp-single-bucket", "0",
           "--ddp: 1 puts every gradient in one bucket, reduced after backward (no overlap)")
      .add("timeout", "30", "--ddp: seconds to wait for the other ranks before failing")
      .add("timeline", "",
           "write a Chrome trace of one training step here, and an SVG next to it (.svg)")
      .add("timeline-step", "10", "--timeline: the step to record (counted from 1)");
  std::vector<std::string> args = expand_bare_ddp(argc, argv);
  std::vector<char*> arg_pointers;
  for (std::string& a : args) arg_pointers.push_back(a.data());
  if (!flags.parse(static_cast<int>(arg_pointers.size()), arg_pointers.data())) return 0;

  Ddp ddp;
  ddp.device = Device(flags.str("device"));
  if (flags.has("ddp") && (flags.str("ddp") == "nccl") != ddp.device.is_cuda()) {
    // The backend decides where the gradients live: MPI reduces CPU tensors, NCCL GPU ones.
    throw std::invalid_argument("[train_mnist] --ddp " + flags.str("ddp") + " needs --device " +
                                (flags.str("ddp") == "nccl" ? "cuda" : "cpu") + "; got --device " +
                                flags.str("device"));
  }
  if (flags.has("ddp")) {
    distributed::InitOptions init;
    init.timeout = distributed::Seconds(flags.real("timeout"));
    distributed::init_process_group(flags.str("ddp"), init);
    ddp.rank = distributed::get_rank(), ddp.world = distributed::get_world_size();
    ddp.device = distributed::default_group().device();
    if (!ddp.main()) std::freopen("/dev/null", "w", stdout);
    // Ranks on one machine share its cores: by default each takes its share.
    int local = distributed::default_group().local_size();
    if (flags.integer("threads") == 0) {
      omp_set_num_threads(std::max(1, omp_get_num_procs() / local));
    }
  }
  if (flags.integer("threads") > 0) omp_set_num_threads(static_cast<int>(flags.integer("threads")));

  const int64_t epochs = flags.integer("epochs"), batch_size = flags.integer("batch-size");
  const uint64_t seed = static_cast<uint64_t>(flags.integer("seed"));
  check_value(epochs > 0 && batch_size > 0, "train_mnist",
              "--epochs and --batch-size must be positive");
  manual_seed(seed);
  std::shared_ptr<nn::Module> model = examples::make_mnist_model(flags.str("model"));
  if (ddp.device.is_cuda()) model->to(ddp.device);
  std::unique_ptr<optim::Optimizer> optimizer =
      make_optimizer(flags.str("optimizer"), *model, flags.real("lr"));

  data::Transform normalize = data::Normalize({0.1307}, {0.3081});
  auto train_set = std::make_shared<data::MNIST>(flags.str("data"), true, normalize);
  auto test_set = std::make_shared<data::MNIST>(flags.str("data"), false, normalize);
  data::DataLoaderOptions train_options;
  train_options.batch_size = batch_size;
  train_options.shuffle = true;
  train_options.num_workers = flags.integer("workers");
  train_options.seed = seed;
  train_options.pin_memory = ddp.device.is_cuda();  // Note [pin_memory] in data/dataloader.h
  if (flags.has("ddp")) {  // each rank its own shard of every epoch, reshuffled per epoch
    train_options.shuffle = false;
    train_options.sampler = std::make_shared<data::DistributedSampler>(
        train_set->size(), ddp.world, ddp.rank, /*shuffle=*/true, seed);
  }
  data::DataLoader train_loader(train_set, train_options);
  data::DataLoaderOptions test_options = train_options;
  test_options.sampler = nullptr;
  test_options.shuffle = false;
  test_options.batch_size = 500;
  data::DataLoader test_loader(test_set, test_options);
  examples::require_batches("train_mnist", "the training set in " + flags.str("data"),
                            static_cast<int64_t>(train_set->size()), batch_size,
                            static_cast<int64_t>(train_loader.size()));
  examples::require_batches("train_mnist", "the test set in " + flags.str("data"),
                            static_cast<int64_t>(test_set->size()), test_options.batch_size,
                            static_cast<int64_t>(test_loader.size()));

  Precision precision;
  const std::string amp_mode = flags.str("amp");
  check_value(amp_mode == "none" || amp_mode == "bf16" || amp_mode == "fp16", "train_mnist",
              "--amp must be none, bf16 or fp16; got '", amp_mode, "'");
  precision.autocast = amp_mode != "none";
  precision.dtype = amp_mode == "fp16" ? kFloat16 : kBFloat16;
  if (amp_mode == "fp16") precision.scaler = amp::GradScaler();

  nn::TrainingState state;
  if (flags.has("resume")) {
    state = nn::load_checkpoint(flags.str("resume"), *model, *optimizer, nullptr);
    if (!state.extra.empty() && precision.scaler.is_enabled()) {
      precision.scaler.load_state_dict(state.extra);
    }
    std::printf("resumed from %s after epoch %lld\n", flags.str("resume").c_str(),
                static_cast<long long>(state.epoch));
  }
  std::printf("%s\n%lld parameters; %lld training and %lld test digits from %s; %lld workers\n",
              model->repr().c_str(), static_cast<long long>(model->num_parameters()),
              static_cast<long long>(train_set->size()), static_cast<long long>(test_set->size()),
              flags.str("data").c_str(), static_cast<long long>(train_options.num_workers));
  if (flags.has("ddp")) {  // after resume: construction copies rank 0's state to every rank
    distributed::DDPOptions options;
    options.bucket_cap_mb = flags.real("bucket-cap-mb");
    options.single_bucket = flags.integer("ddp-single-bucket") != 0;
    ddp.model = std::make_shared<distributed::DistributedDataParallel>(model, nullptr, options);
    std::printf("DDP: %d ranks (%s backend), %lld examples per rank per batch, %d threads each\n%s",
                ddp.world, flags.str("ddp").c_str(), static_cast<long long>(batch_size),
                omp_get_max_threads(), ddp.model->reducer().explain().c_str());
  }
  if (flags.has("timeline")) {
    ddp.timeline_step = flags.integer("timeline-step");
    ddp.timeline_path = flags.str("timeline");
    if (ddp.model) ddp.model->reducer().set_timeline(&ddp.timeline);
  }
  nn::Module& trained = ddp.model ? static_cast<nn::Module&>(*ddp.model) : *model;

  std::string metrics_path = flags.str("metrics");
  std::optional<examples::CsvWriter> csv;  // rank 0 only
  if (ddp.main()) {
    csv.emplace(metrics_path,
                std::vector<std::string>{"epoch", "train_loss", "train_accuracy", "test_loss",
                                         "test_accuracy", "samples_per_second", "seconds",
                                         "loader_wait_seconds", "loss_scale", "skipped_steps"});
  }
  std::vector<examples::Series> loss_curve = {{"training loss (per batch)", {}, {}}};
  std::vector<examples::Series> accuracy_curve = {{"train accuracy", {}, {}},
                                                  {"test accuracy", {}, {}}};
  double baseline_rss = examples::current_rss_mib();
  double training_peak_rss = 0, training_peak_tensors = 0;
  auto start = Clock::now();
  double total_samples = 0, total_wait = 0, total_train_seconds = 0;
  EpochResult test{};
  for (int64_t epoch = state.epoch + 1; epoch <= epochs; ++epoch) {
    train_loader.set_epoch(epoch - 1);  // the shuffle order depends only on (seed, epoch)
    EpochResult train = train_epoch(trained, *optimizer, train_loader, precision, epoch, epochs,
                                    loss_curve, state.global_step, ddp);
    if (training_peak_rss == 0) {  // memory of training alone, before evaluation's big batches
      training_peak_rss = examples::peak_rss_mib();
      training_peak_tensors = cpu_allocator()->stats().peak_allocated_bytes / 1048576.0;
    }
    if (ddp.main()) test = evaluate(*model, test_loader, ddp.device);
    std::printf("  test: loss %.4f  accuracy %.2f%%  (loader wait %.2f s of %.2f s)\n", test.loss,
                100 * test.accuracy, train.wait_seconds, train.seconds);
    if (csv) {
      csv->row({double(epoch), train.loss, train.accuracy, test.loss, test.accuracy,
                train.samples_per_second, train.seconds, train.wait_seconds,
                precision.scaler.is_enabled() ? precision.scaler.get_scale() : 1.0,
                double(precision.scaler.skipped_steps())});
    }
    accuracy_curve[0].x.push_back(double(epoch)),
        accuracy_curve[0].y.push_back(100 * train.accuracy);
    accuracy_curve[1].x.push_back(double(epoch)),
        accuracy_curve[1].y.push_back(100 * test.accuracy);
    std::string chart = std::filesystem::path(metrics_path).replace_extension(".svg").string();
    if (ddp.main()) {
      examples::write_svg_chart(chart, "train_mnist --model " + flags.str("model"),
                                {loss_curve, accuracy_curve}, {"loss", "accuracy (%)"}, "epoch");
    }
    total_samples += train.samples_per_second * train.seconds;
    total_wait += train.wait_seconds;
    total_train_seconds += train.seconds;
    state.epoch = epoch;
    if (flags.has("save") && ddp.main()) {
      state.info["command"] = flags.command_line();
      if (precision.scaler.is_enabled()) state.extra = precision.scaler.state_dict();
      nn::save_checkpoint(flags.str("save"), *model, *optimizer, nullptr, state);
    }
  }
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  AllocatorStats memory = cpu_allocator()->stats();
  std::printf(
      "summary: %s, %lld epochs, test accuracy %.2f%%, %.1f s (%.0f training samples/s, loader "
      "wait %.2f s), peak tensor memory %.1f MiB\n",
      flags.str("model").c_str(), static_cast<long long>(epochs), 100 * test.accuracy, seconds,
      total_train_seconds > 0 ? total_samples / total_train_seconds : 0.0, total_wait,
      memory.peak_allocated_bytes / 1048576.0);
  std::printf("metrics: %s (chart: %s)\n", metrics_path.c_str(),
              std::filesystem::path(metrics_path).replace_extension(".svg").c_str());
  double comm_wait_share = 0;
  if (ddp.model) {  // Note [DDP counters]: how long rank 0 waited for communication
    const distributed::ReducerStats& s = ddp.model->reducer().stats();
    comm_wait_share = total_train_seconds > 0 ? s.comm_wait_seconds / total_train_seconds : 0.0;
    std::printf(
        "ddp: %d ranks, %lld all-reduces of %.1f MiB in all; rank 0 waited %.2f s for "
        "communication after backward, %.1f%% of its training time\n",
        ddp.world, static_cast<long long>(s.buckets_launched), s.bytes_reduced / 1048576.0,
        s.comm_wait_seconds, 100 * comm_wait_share);
  }
  if (flags.integer("json") != 0) {
    std::printf(
        "{\"framework\": \"wick\", \"model\": \"%s\", \"samples_per_second\": %.1f, "
        "\"threads\": %d, \"peak_rss_mib\": %.1f, \"rss_growth_mib\": %.1f, "
        "\"peak_tensor_mib\": %.1f, \"test_accuracy\": %.4f, \"world_size\": %d, "
        "\"comm_wait_share\": %.4f}\n",
        flags.str("model").c_str(),
        total_train_seconds > 0 ? total_samples / total_train_seconds : 0.0, omp_get_max_threads(),
        training_peak_rss, training_peak_rss - baseline_rss, training_peak_tensors, test.accuracy,
        ddp.world, comm_wait_share);
  }
  if (flags.has("ddp")) distributed::destroy_process_group();
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 2;
}
