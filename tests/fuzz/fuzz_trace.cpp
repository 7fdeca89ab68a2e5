// libFuzzer: allocation-trace reading (read_trace) on arbitrary bytes, then a replay of what was
// read under every policy on a small simulated device (as tools/alloc_replay does). Every input
// must be read and replayed or raise a clean error.
#include "core/memory/trace.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = wick::fuzz::scratch_dir() + "/trace.jsonl";
  wick::fuzz::write_file(path, data, size);
  wick::fuzz::expect_clean([&] {
    std::vector<wick::memory::TraceEvent> events = wick::memory::read_trace(path);
    for (const char* policy : {"caching", "no_caching", "bfc", "bfc_growth"}) {
      wick::fuzz::expect_clean([&] { wick::memory::replay(events, policy, size_t{1} << 30); });
    }
  });
  return 0;
}
