// Saving and loading named tensors in the safetensors format, the checkpoint format of the Hugging
// Face and PyTorch ecosystem. A file is
//
//   8 bytes   N, the header length (unsigned, little-endian)
//   N bytes   a UTF-8 JSON object: {"__metadata__": {"k": "v", ...},
//                                   "name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [b,
//                                   e]},
//                                   ...}
//             padded with spaces to a multiple of 8 bytes
//   the rest  the data buffer: each tensor's bytes, row-major and little-endian, at [b, e) of it
//
// wick reads and writes the dtypes it has: F64, F32, F16, BF16, I64, I32, U8 and BOOL. Files
// written here load in Python with safetensors.torch.load_file, and files written there load here.
//
// Errors (every message starts "[save_safetensors] <path>: " or "[load_safetensors] <path>: ";
// bytes of the path or the file that are not UTF-8 are written as \xNN, never dropped):
//   wick::FileError         the file system said no: a missing file, a directory, no permission,
//                           a failed read, write, fsync or rename (it carries errno and the path,
//                           and Python sees OSError's subclass for that errno: FileNotFoundError,
//                           IsADirectoryError, PermissionError, ...)
//   std::invalid_argument   the file is not a valid safetensors file (truncated, bad JSON, offsets
//                           out of range, overlapping or leaving gaps, a shape that does not match
//                           its bytes, a duplicate name, ...), or save was given an undefined
//                           tensor
//   wick::TypeError         the file holds a dtype wick does not have (I8, U16, F8_E4M3, ...)
// A caller that only needs "did it load" can catch std::exception.
#pragma once

#include <map>
#include <stdexcept>
#include <string>

#include "nn/state_dict.h"

namespace wick {

// An operating-system error on a file: errno and the path travel with the message, so the
// Python binding can raise the OSError subclass Python itself would (python/bind_nn.cpp).
class FileError : public std::runtime_error {
 public:
  FileError(const std::string& message, int error_number, std::string path)
      : std::runtime_error(message), error_number_(error_number), path_(std::move(path)) {}
  int error_number() const { return error_number_; }
  const std::string& path() const { return path_; }

 private:
  int error_number_;
  std::string path_;
};

// `text` with every byte that is not part of a valid UTF-8 sequence written as \xNN, so that a
// message quoting a corrupt file or an odd path survives the trip to Python (whose strings must
// be UTF-8) instead of arriving empty.
std::string escape_non_utf8(const std::string& text);

// Writes `tensors` and `metadata` to `path`, replacing any file there only once the new one is
// complete on disk (see Note [atomic checkpoint writes]). Tensors may live on any device and have
// any layout; each is written from a contiguous CPU copy. Names are written in sorted order (the
// map's), and "__metadata__" is reserved by the format, so it cannot name a tensor.
void save_safetensors(const std::string& path, const StateDict& tensors,
                      const std::map<std::string, std::string>& metadata = {});

// What a safetensors file holds: its tensors (contiguous, on the CPU, not requiring grad) and its
// string-to-string metadata (empty when the file has none).
struct SafetensorsFile {
  StateDict tensors;
  std::map<std::string, std::string> metadata;
};

// Reads and validates a whole safetensors file. Nothing is trusted: the header length, the JSON and
// every offset are checked before any tensor memory is allocated, so a corrupt file raises an error
// (the list above) and never crashes or allocates more than the file's size.
SafetensorsFile load_safetensors(const std::string& path);

}  // namespace wick
