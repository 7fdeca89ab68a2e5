// The environment report's text and flat forms, and what-if overrides (envreport/report.h).
#include <sstream>
#include <stdexcept>

#include "envreport/report.h"

namespace wick::env {
namespace {

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ",") + s;
  return out;
}

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

int parse_int(const std::string& key, const std::string& value) {
  size_t used = 0;
  int v = 0;
  try {
    v = std::stoi(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != value.size() || v < 0)
    throw std::invalid_argument("assume: " + key + " needs a non-negative integer, got '" + value +
                                "'");
  return v;
}

// "sm_90,sm_75" (or "90,75") -> GPUs named after their architecture.
std::vector<Gpu> parse_gpus(const std::string& value) {
  std::vector<Gpu> gpus;
  for (std::string item : split(value)) {
    std::string digits = item.rfind("sm_", 0) == 0 ? item.substr(3) : item;
    int cc = parse_int("gpus", digits);
    if (cc < 10) throw std::invalid_argument("assume: gpus wants sm_XY, got '" + item + "'");
    gpus.push_back({"assumed GPU", cc / 10, cc % 10, 0});
  }
  return gpus;
}

}  // namespace

void assume(Facts& f, const std::string& key_equals_value) {
  auto eq = key_equals_value.find('=');
  if (eq == std::string::npos)
    throw std::invalid_argument("assume: expected key=value, got '" + key_equals_value + "'");
  std::string key = key_equals_value.substr(0, eq), value = key_equals_value.substr(eq + 1);
  const std::pair<const char*, int*> ints[] = {{"cuda_toolkit_version", &f.cuda_toolkit_version},
                                               {"cuda_runtime_version", &f.cuda_runtime_version},
                                               {"cuda_driver_version", &f.cuda_driver_version},
                                               {"cudnn_header_version", &f.cudnn_header_version},
                                               {"cudnn_runtime_version", &f.cudnn_runtime_version},
                                               {"cudnn_cudart_version", &f.cudnn_cudart_version},
                                               {"nccl_header_version", &f.nccl_header_version},
                                               {"nccl_runtime_version", &f.nccl_runtime_version},
                                               {"logical_cores", &f.logical_cores},
                                               {"omp_max_threads", &f.omp_max_threads}};
  for (const auto& [name, field] : ints) {
    if (key == name) {
      *field = parse_int(key, value);
      return;
    }
  }
  if (key == "cuda_built") {
    if (value != "0" && value != "1")
      throw std::invalid_argument("assume: cuda_built is 0 or 1, got '" + value + "'");
    f.cuda_built = value == "1";
  } else if (key == "cuda_architectures") {
    f.cuda_architectures = value;
  } else if (key == "gpus") {
    f.gpus = parse_gpus(value);
  } else if (key == "cpu_features") {
    f.cpu_features = split(value);
  } else if (key == "cpu_features_compiled") {
    f.cpu_features_compiled = split(value);
  } else {
    throw std::invalid_argument("assume: unknown fact '" + key + "' (see envreport/report.h)");
  }
}

std::map<std::string, std::string> to_map(const Facts& f) {
  std::string gpus;
  for (const Gpu& g : f.gpus)
    gpus += (gpus.empty() ? "" : "; ") + g.name + " sm_" + std::to_string(g.major * 10 + g.minor) +
            " " + std::to_string(g.memory_bytes >> 20) + " MiB";
  return {{"wick_version", f.wick_version},
          {"build_type", f.build_type},
          {"compiler", f.compiler},
          {"cxx_flags", f.cxx_flags},
          {"cuda_built", f.cuda_built ? "yes" : "no"},
          {"cuda_toolkit_version", cuda_version_string(f.cuda_toolkit_version)},
          {"cuda_architectures", f.cuda_architectures.empty() ? "none" : f.cuda_architectures},
          {"cuda_runtime_version", cuda_version_string(f.cuda_runtime_version)},
          {"cuda_driver_version", cuda_version_string(f.cuda_driver_version)},
          {"cudnn_header_version", triple_version_string(f.cudnn_header_version, 10000, 100)},
          {"cudnn_runtime_version", triple_version_string(f.cudnn_runtime_version, 10000, 100)},
          {"cudnn_cudart_version", cuda_version_string(f.cudnn_cudart_version)},
          {"nccl_header_version", triple_version_string(f.nccl_header_version, 10000, 100)},
          {"nccl_runtime_version", triple_version_string(f.nccl_runtime_version, 10000, 100)},
          {"mpi_library", f.mpi_library.empty() ? "none" : f.mpi_library},
          {"gpus", gpus.empty() ? "none" : gpus},
          {"cpu_model", f.cpu_model},
          {"logical_cores", std::to_string(f.logical_cores)},
          {"omp_max_threads", std::to_string(f.omp_max_threads)},
          {"cpu_features", join(f.cpu_features)},
          {"cpu_features_compiled", join(f.cpu_features_compiled)},
          {"eigen_version", f.eigen_version},
          {"openblas_core", f.openblas_core.empty() ? "not loaded" : f.openblas_core}};
}

std::string format_report(const Facts& f, const std::vector<Check>& checks) {
  const std::pair<const char*, std::vector<const char*>> sections[] = {
      {"wick",
       {"wick_version", "build_type", "compiler", "cxx_flags", "cpu_features_compiled",
        "eigen_version"}},
      {"CUDA",
       {"cuda_built", "cuda_toolkit_version", "cuda_architectures", "cuda_runtime_version",
        "cuda_driver_version", "cudnn_header_version", "cudnn_runtime_version",
        "cudnn_cudart_version", "gpus"}},
      {"communication", {"nccl_header_version", "nccl_runtime_version", "mpi_library"}},
      {"CPU", {"cpu_model", "logical_cores", "omp_max_threads", "cpu_features", "openblas_core"}}};
  std::map<std::string, std::string> facts = to_map(f);
  std::ostringstream os;
  for (const auto& [title, keys] : sections) {
    os << title << "\n";
    for (const char* key : keys) os << "  " << key << ": " << facts[key] << "\n";
  }
  os << "checks\n";
  for (const Check& c : checks) {
    os << "  [" << verdict_name(c.verdict) << "] " << c.name << ": " << c.detail << "\n";
    if (!c.hint.empty()) os << "         hint: " << c.hint << "\n";
  }
  return os.str();
}

}  // namespace wick::env
