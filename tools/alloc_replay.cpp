// alloc_replay: runs one allocation trace under every allocator policy on a simulated device and
// prints device mallocs, peak reserved memory and fragmentation side by side (Note [allocator
// policies] in core/memory/policy.h).
//
//   alloc_replay TRACE.jsonl [--capacity GIB] [--policies caching,bfc] [--conf WICK_ALLOC_CONF]
//   alloc_replay --synthetic TRACE.jsonl [--steps N]   writes a training-like trace to try it on
//
// Record a trace from any program with wick::cuda::start_memory_trace(path) (on a GPU), or with
// DeviceAllocator::start_trace on the simulated device.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/memory/trace.h"
#include "examples/common/cli.h"

using namespace wick::memory;
using wick::examples::exit_status;
using wick::examples::parse_integer;
using wick::examples::parse_real;

namespace {

// A model whose activations change size from step to step (variable sequence lengths), the
// workload where caching allocators fragment: parameters and optimizer state once, then per step
// activations allocated layer by layer and freed in reverse while gradients are made.
void write_synthetic(const std::string& path, int steps) {
  FILE* out = std::fopen(path.c_str(), "w");
  if (out == nullptr) throw std::runtime_error("cannot open " + path);
  std::mt19937_64 rng(7);
  uint64_t next_ptr = 1, t = 0;
  auto alloc = [&](uint64_t size) {
    uint64_t ptr = next_ptr++;
    std::fprintf(out,
                 "{\"event\":\"alloc\",\"ptr\":%llu,\"size\":%llu,\"stream\":0,\"t_us\":%llu}\n",
                 static_cast<unsigned long long>(ptr), static_cast<unsigned long long>(size),
                 static_cast<unsigned long long>(t++));
    return std::make_pair(ptr, size);
  };
  auto release = [&](std::pair<uint64_t, uint64_t> block) {
    std::fprintf(
        out, "{\"event\":\"free\",\"ptr\":%llu,\"size\":%llu,\"stream\":0,\"t_us\":%llu}\n",
        static_cast<unsigned long long>(block.first), static_cast<unsigned long long>(block.second),
        static_cast<unsigned long long>(t++));
  };
  const int layers = 12;
  const uint64_t hidden = 1024, vocab = 32000;
  std::vector<std::pair<uint64_t, uint64_t>> persistent;
  for (int l = 0; l < layers; ++l) {
    for (uint64_t size : {4 * hidden * hidden * 4, 4 * hidden * 4, 8 * hidden * hidden * 4}) {
      persistent.push_back(alloc(size));                              // weight
      for (int k = 0; k < 2; ++k) persistent.push_back(alloc(size));  // Adam moments
    }
  }
  persistent.push_back(alloc(vocab * hidden * 4));
  for (int step = 0; step < steps; ++step) {
    uint64_t tokens = 8 * (64 + rng() % 449);  // batch 8, sequence 64..512
    std::vector<std::pair<uint64_t, uint64_t>> saved;
    for (int l = 0; l < layers; ++l) {
      auto scratch = alloc(tokens * hidden * 4 * 4);
      saved.push_back(alloc(tokens * hidden * 4));
      saved.push_back(alloc(tokens * hidden * 4 * 4));
      saved.push_back(alloc(tokens * 512 * 4 / 8));  // attention scores, a small block
      release(scratch);
    }
    auto logits = alloc(tokens * vocab * 4 / 8);
    release(logits);
    std::vector<std::pair<uint64_t, uint64_t>> grads;
    for (auto it = saved.rbegin(); it != saved.rend(); ++it) {
      auto grad = alloc(it->second);
      release(*it);
      release(grad);
    }
  }
  for (auto& block : persistent) release(block);
  std::fclose(out);
}

constexpr const char* kProgram = "alloc_replay";

// The policy names in a comma-separated list; empty names and an empty list are mistakes.
std::vector<std::string> split_policies(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, ',');) parts.push_back(part);
  bool empty_name = text.empty() || text.back() == ',';
  for (const std::string& part : parts) empty_name = empty_name || part.empty();
  if (empty_name) {
    throw std::invalid_argument(std::string("[") + kProgram +
                                "] --policies expects a comma-separated list of policy names "
                                "(caching, no_caching, bfc, bfc_growth); got '" +
                                text + "'");
  }
  for (const std::string& part : parts) check_policy_name(part, "alloc_replay --policies");
  return parts;
}

// One line on stderr saying what was wrong and how to call the tool; exit status 2.
int usage(const std::string& why) {
  std::fprintf(stderr,
               "alloc_replay: [%s] %s; usage: alloc_replay TRACE.jsonl [--capacity GIB] "
               "[--policies a,b,...] [--conf WICK_ALLOC_CONF] | --synthetic TRACE.jsonl "
               "[--steps N]\n",
               kProgram, why.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    std::string trace, conf, synthetic;
    // Capacities in [1 MiB, 1 TiB]: a simulated device beyond any real one (1e30 GiB would
    // overflow size_t when converted to bytes) or below one segment is a typo.
    double capacity_gib = 80;
    int64_t steps = 50;
    std::vector<std::string> policies = {"caching", "no_caching", "bfc", "bfc_growth"};
    for (int i = 1; i < argc; ++i) {
      std::string arg = argv[i];
      bool has_value = i + 1 < argc;
      if (arg == "--capacity" && has_value) {
        capacity_gib = parse_real(kProgram, "capacity", argv[++i], 1e-3, 1024);
      } else if (arg == "--policies" && has_value) {
        policies = split_policies(argv[++i]);
      } else if (arg == "--conf" && has_value) {
        conf = argv[++i];
      } else if (arg == "--synthetic" && has_value) {
        synthetic = argv[++i];
      } else if (arg == "--steps" && has_value) {
        steps = parse_integer(kProgram, "steps", argv[++i], 0, 1000000);
      } else if (!arg.empty() && arg[0] != '-' && trace.empty()) {
        trace = arg;
      } else {
        return usage("unknown argument or missing value: '" + arg + "'");
      }
    }
    if (!synthetic.empty()) {
      write_synthetic(synthetic, static_cast<int>(steps));
      std::printf("wrote a synthetic trace of %lld training steps to %s\n",
                  static_cast<long long>(steps), synthetic.c_str());
      return 0;
    }
    if (trace.empty()) return usage("expected a trace file");
    AllocatorConfig config = AllocatorConfig::parse(conf);  // bad settings fail before the trace
    std::vector<TraceEvent> events = read_trace(trace);
    auto capacity = static_cast<size_t>(capacity_gib * 1073741824.0);
    std::printf("%s: %zu events, simulated device of %.1f GiB%s%s\n\n", trace.c_str(),
                events.size(), capacity_gib,
                conf.empty() ? "" : ", WICK_ALLOC_CONF=", conf.c_str());
    std::vector<ReplayResult> results;
    for (const std::string& policy : policies) {
      results.push_back(replay(events, policy, capacity, config));
    }
    std::printf("%s", format_replay_table(results).c_str());
    std::printf(
        "\nfragmentation: at the program's peak, the share of free reserved memory outside the\n"
        "largest free block ((free - largest) / free, TensorFlow's measure).\n");
    for (const ReplayResult& r : results) {
      if (r.out_of_memory) std::printf("%s: %s\n", r.policy.c_str(), r.error.c_str());
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "alloc_replay: %s\n", e.what());
    return exit_status(e);
  }
}
