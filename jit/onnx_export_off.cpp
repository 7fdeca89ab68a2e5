// wick built without ONNX export (libonnx-dev and libprotobuf-dev were not found): the entry
// points of jit/onnx_export.h say so.
#include "core/error.h"
#include "jit/onnx_export.h"

namespace wick::jit {

namespace {
[[noreturn]] void unavailable() {
  throw std::runtime_error(
      "[wick.onnx.export] this build of wick has no ONNX exporter: libonnx-dev and "
      "libprotobuf-dev were not found when it was built (scripts/setup.sh installs them; then "
      "rebuild)");
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
