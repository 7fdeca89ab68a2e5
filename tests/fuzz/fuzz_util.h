// Shared by the libFuzzer harnesses (tests/fuzz/*.cpp): the parsers under test read files, so each
// input is written to a scratch file first, and a clean error is the expected outcome for most
// inputs. Anything else - a crash, a sanitizer report, a leak, std::bad_alloc from trusting a
// size field, a timeout - is a finding.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <new>
#include <string>

namespace wick::fuzz {

// A per-process scratch directory (under $TMPDIR, or /dev/shm when it exists: the harnesses write
// a file per input, and memory is faster than a disk for a million of them).
inline const std::string& scratch_dir() {
  static const std::string dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string base = tmp != nullptr ? tmp : (access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
    std::string d = base + "/wick_fuzz_" + std::to_string(getpid());
    std::string cmd = "mkdir -p '" + d + "'";
    if (std::system(cmd.c_str()) != 0) std::abort();
    std::atexit([] {
      std::string rm = "rm -rf '" + scratch_dir() + "'";
      if (std::system(rm.c_str()) != 0) std::perror("rm");
    });
    return d;
  }();
  return dir;
}

inline void write_file(const std::string& path, const uint8_t* data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  if (!out) std::abort();
}

// Runs `f`; a std::exception is a clean rejection, except std::bad_alloc: a parser that tries to
// allocate what a corrupt size field claims has trusted the file, so that is reported as a crash.
template <class F>
void expect_clean(F&& f) {
  try {
    f();
  } catch (const std::bad_alloc& e) {
    std::fprintf(stderr, "finding: std::bad_alloc (a size from the input was trusted): %s\n",
                 e.what());
    std::abort();
  } catch (const std::exception&) {
  }
}

}  // namespace wick::fuzz
