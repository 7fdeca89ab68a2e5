// wick built without ONNX export (libonnx-dev and libprotobuf-dev were not found): the entry
// points of jit/onnx_export.h say so.
#include "core/error.h"
#include "jit/onnx_export.h"

namespace wick::jit {

namespace {
[[noreturn]] void unavailable() {
  throw std::runtime_error(
      "wick was built without ONNX export (install libonnx-dev and libprotobuf-dev: "
      "scripts/setup.sh)");
}
}  // namespace

bool onnx_export_available() { return false; }

void export_onnx(const TracedFunction&, const std::vector<Tensor>&, const NamedTensors&,
                 const std::string&, const OnnxExportOptions&, const OpLocator&) {
  unavailable();
}

void export_onnx(nn::Module&, const std::vector<Tensor>&, const std::string&,
                 const OnnxExportOptions&) {
  unavailable();
}

}  // namespace wick::jit
