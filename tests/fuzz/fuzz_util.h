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
#include <filesystem>
#include <fstream>
#include <new>
#include <string>

namespace wick::fuzz {

// A per-process scratch directory (under $TMPDIR, or /dev/shm when it exists: the harnesses write
// a file per input, and memory is faster than a disk for a million of them), removed at exit.
class ScratchDir {
 public:
  ScratchDir() {
    const char* tmp = std::getenv("TMPDIR");
    std::string base = tmp != nullptr ? tmp : (access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
    path_ = base + "/wick_fuzz_" + std::to_string(getpid());
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline const std::string& scratch_dir() {
  static const ScratchDir dir;
  return dir.path();
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
