// Reading data files whole (gunzipping them when they are gzip streams) and turning their bytes
// into tensors. Shared by the dataset readers (MNIST, CIFAR-10); every failure is a
// std::runtime_error whose message starts with the caller's op name and names the file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace wick::data {

// The bytes of `path`. A file that starts with the gzip magic bytes (1f 8b) is decompressed,
// whatever its name; a corrupt or truncated gzip stream is an error, not a short result.
std::vector<uint8_t> read_file(const std::string& path, const char* op);

bool file_exists(const std::string& path);  // a regular file (not a directory) is there

// The big-endian unsigned 32-bit number at `p` (IDX headers are big-endian).
uint32_t read_be32(const uint8_t* p);

// A new float32 tensor of `shape` holding pixels[i] / 255, i.e. 8-bit grey levels in [0, 1].
Tensor image_from_bytes(const uint8_t* pixels, const Shape& shape);

}  // namespace wick::data
