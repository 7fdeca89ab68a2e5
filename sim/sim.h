// "sim": a second device that runs on the host, for studying what a new backend goes through
// (Note [the sim device] in sim/register.cpp). Tensors on "sim:0" live in memory served by the
// caching allocator over a simulated device (core/memory/), so its statistics are a GPU's; the
// device has kernels for part of the op table, and every other op runs through the CPU
// fallback (Note [operator fallback] in core/dispatch.h) - counted, timed, warned about once.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace wick::sim {

// The sim backend is registered while the library loads; a test that registers its own
// PrivateUse1 backend can put sim back with this.
void register_sim_backend();

// The op families the sim device has kernels for, and the ops it leaves to the fallback.
std::vector<std::string> ops_with_kernels();

// Gives the sim device a kernel for `op` (the CPU's, which runs in place on host memory: what
// porting the op would do), or takes it away so the op falls back again. Throws
// std::invalid_argument for an op not in the table.
void set_kernel(const std::string& op, bool enabled);

// Its allocator's statistics, as torch.cuda.memory_stats() names them (the caching allocator's:
// allocated and reserved bytes, peaks, segments, device mallocs).
std::map<std::string, int64_t> memory_stats();

}  // namespace wick::sim
