// Decoding PNG and JPEG files into tensors, with libpng and libjpeg-turbo (Debian's libpng-dev and
// libjpeg62-turbo-dev). Both are optional at build time: without them, decoding raises an error
// that says which library wick was built without, and has_png() / has_jpeg() say so up front.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace wick::data {

// How many channels the decoded image has: 1 (grey, PIL's "L") or 3 (PIL's "RGB"). Decoders
// convert whatever the file stores, as torchvision's default loader converts to RGB.
enum class ImageMode { kGray = 1, kRGB = 3 };

bool has_png();
bool has_jpeg();

// float32 [C, H, W] in [0, 1] from the bytes of a PNG or JPEG file (told apart by their magic
// bytes, not by the name). `name` is for error messages: a corrupt or truncated image raises
// std::runtime_error "[decode_image] <name>: <what the library said>".
Tensor decode_image(const std::vector<uint8_t>& bytes, ImageMode mode, const std::string& name);

}  // namespace wick::data
