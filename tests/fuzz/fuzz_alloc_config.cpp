// libFuzzer: WICK_ALLOC_CONF parsing on arbitrary text, then the parsed settings in use (the
// rounding a policy applies with them). Every input must parse or raise a clean error.
#include <string>

#include "core/memory/alloc_config.h"
#include "core/memory/policy.h"
#include "core/memory/simulated_device.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  wick::fuzz::expect_clean([&] {
    wick::memory::AllocatorConfig config = wick::memory::AllocatorConfig::parse(text);
    for (size_t s : {size_t{0}, size_t{1}, size_t{1} << 20, size_t{3} << 30, SIZE_MAX / 2}) {
      config.divisions_for(s);
    }
    // A few allocations under the parsed settings on a small simulated device.
    wick::memory::SimulatedDevice device(size_t{1} << 30,
                                         wick::memory::SimulatedDevice::Backing::Virtual);
    auto policy = wick::memory::make_policy(config.policy, &device, config);
    for (size_t s : {size_t{512}, size_t{1} << 20, size_t{25} << 20, size_t{3} << 20}) {
      wick::fuzz::expect_clean(
          [&] { policy->free(policy->malloc(s, wick::memory::kDefaultStream)); });
    }
  });
  return 0;
}
