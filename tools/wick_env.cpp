// wick_env: what this build of wick was compiled with, what this machine has, and whether they
// agree (envreport/report.h). PyTorch's `python -m torch.utils.collect_env`, with a verdict.
//
//   wick_env                                    # this machine
//   wick_env --assume cuda_driver_version=12040 --assume gpus=sm_75   # what if
//
// Exits 0 when no check fails, 1 when one does, 2 on a bad argument.
#include <cstring>
#include <iostream>

#include "envreport/report.h"

int main(int argc, char** argv) {
  wick::env::Facts facts = wick::env::gather();
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::cout << "usage: wick_env [--assume KEY=VALUE]...\n";
      return 0;
    }
    if (arg != "--assume" || i + 1 == argc) {
      std::cerr << "wick_env: unknown argument '" << arg
                << "' (usage: wick_env [--assume KEY=VALUE]...)\n";
      return 2;
    }
    try {
      wick::env::assume(facts, argv[++i]);
    } catch (const std::invalid_argument& e) {
      std::cerr << "wick_env: " << e.what() << "\n";
      return 2;
    }
  }
  std::vector<wick::env::Check> checks = wick::env::check_environment(facts);
  std::cout << wick::env::format_report(facts, checks);
  for (const auto& c : checks)
    if (c.verdict == wick::env::Verdict::fail) return 1;
  return 0;
}
